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
