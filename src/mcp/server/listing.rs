//! Where the server stands for a key, and the tools listed for where it stands: read from the
//! stack when the capabilities are stale, and noted so a change in what is offered is told.

use rmcp::model::{ListToolsResult, Tool};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};

use super::{LemonfiberServer, failure_name};
use crate::access::offer;
use crate::access::standing::Position;
use crate::answer::sentences;
use crate::mcp::notices::Severity;
use crate::mcp::versions::name_the_server;
use crate::stack::Failure;

impl LemonfiberServer {
    /// The tools listed for this key, where the server stands for it now.
    pub(super) async fn tools_listed(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> ListToolsResult {
        let mut listed =
            ListToolsResult::with_all_items(listed(&self.position(Some(&context.peer)).await));
        name_the_server(&mut listed.meta, context);
        listed
    }

    /// Where the server stands for this key, reading the capabilities again when they are stale
    /// (never for a refused key). Tells the client when what it is offered has changed, which can
    /// only happen when they are read.
    pub(super) async fn position(&self, peer: Option<&Peer<RoleServer>>) -> Position {
        let mut standing = self.standing.lock().await;
        let read_now = standing.needs_reading();
        if read_now {
            let read = self.stack.capabilities().await;
            if let Err(failure) = &read {
                tracing::info!(
                    failure = failure_name(failure),
                    "the stack's capabilities could not be read"
                );
            }
            let unreachable = matches!(read, Err(Failure::Unreachable(_)));
            standing.record(read);
            if unreachable && let Some(peer) = peer {
                let said = sentences::notice_unreachable();
                self.notices.tell(peer, Severity::Warning, said).await;
            }
        }
        let position = standing.position();
        // Capabilities read before any session (as the HTTP mode's key check reads them) are
        // noted as offered the first time they are used, so a later change is told.
        if !read_now && standing.offer_noted() {
            return position;
        }
        let offered = listed(&position)
            .iter()
            .map(|tool| format!("{}\n{:?}", tool.name, tool.description))
            .collect();
        // A change is told to every session and listening stream of the key by `tell_changes`
        // and `listen`, from the standing's own word, wherever the change was learned.
        if standing.note_offered(offered) {
            tracing::info!("what this key is offered has changed");
        }
        position
    }
}

/// The tools listed in a position: what the key is offered, or, before the stack has ever
/// answered, the connection tool alone.
pub(super) fn listed(position: &Position) -> Vec<Tool> {
    match position.offered() {
        Some(offer) => offer.listed_tools(),
        None => offer::before_the_stack_answers(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::catalogue::{self, Operation};
    use crate::mcp::server::ran::tests::offer;
    use crate::stack::{Scope, Unreachable};

    fn names(position: &Position) -> Vec<String> {
        listed(position)
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }

    /// F13-R3: a key that may act is listed its reads, its rehearsals and its actions, and the
    /// connection tool (which is for before the stack answers) is not among them.
    #[test]
    fn a_connected_key_that_may_act_is_listed_its_reads_rehearsals_and_actions() {
        let listed = names(&Position::Connected(offer(Scope::Act)));
        assert!(!listed.contains(&"connection".to_owned()));
        for tool in catalogue::TOOLS {
            let expected = tool.operation != Operation::Connection;
            assert_eq!(
                listed.contains(&tool.name.to_owned()),
                expected,
                "{}",
                tool.name
            );
        }
    }

    /// F13-R3: a member key yields no technical tool, only those with household words.
    #[test]
    fn a_member_key_is_listed_only_tools_in_the_households_words() {
        let listed = names(&Position::Connected(offer(Scope::Member)));
        assert!(!listed.is_empty());
        for name in &listed {
            let tool = catalogue::find(name).unwrap();
            assert!(tool.household_words.is_some(), "{name} is technical");
        }
        let technical = catalogue::TOOLS
            .iter()
            .find(|tool| tool.household_words.is_none() && tool.operation != Operation::Connection)
            .unwrap();
        assert!(!listed.contains(&technical.name.to_owned()));
    }

    /// F13-R9: a refused key lists what a new session of it would, the connection tool alone,
    /// however much it was offered before it was refused.
    #[test]
    fn a_refused_key_is_listed_the_connection_tool_alone() {
        assert_eq!(
            names(&Position::Refused(Some(offer(Scope::Act)))),
            ["connection"]
        );
        assert_eq!(names(&Position::Refused(None)), ["connection"]);
    }

    /// A stack that stopped answering takes nothing away: the key keeps what it was last
    /// offered, and each tool says the stack is unreachable when called.
    #[test]
    fn an_unreachable_stack_keeps_what_the_key_was_last_offered() {
        let failure = Failure::Unreachable(Unreachable::NoConnection);
        let known = Position::Unreachable(failure.clone(), Some(offer(Scope::Act)));
        assert_eq!(
            names(&known),
            names(&Position::Connected(offer(Scope::Act)))
        );
        assert_eq!(names(&Position::Unreachable(failure, None)), ["connection"]);
    }

    /// A scope the server does not know fails closed, to the connection tool alone.
    #[test]
    fn a_key_of_a_scope_the_server_does_not_know_is_listed_the_connection_tool_alone() {
        assert_eq!(
            names(&Position::Connected(offer(Scope::Unknown))),
            ["connection"]
        );
    }
}
