//! Running one tool: where the server stands, the offer, the arguments, then the stack, with an
//! audit line of what happened and how it was decided. Nothing reaches the stack for a refused
//! key, a tool this key is not offered, arguments the tool does not take, or an action without
//! a sealed offer that is the person's yes (F13-R4).

use std::time::Instant;

use rmcp::model::JsonObject;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use super::acting::Answered;
use super::caller::Caller;
use super::ran::{ARGUMENTS_REFUSED, Called, Ran, status_of};
use super::{LemonfiberServer, failure_name};
use crate::access::consent::Consent;
use crate::access::offer::Offer;
use crate::access::plan;
use crate::access::standing::{self, Position};
use crate::answer::outcome::{self, Answer, Handover};
use crate::catalogue::{Action, ArgumentProblem, OFFER_ARGUMENT, Operation, ToolSpec};
use crate::mcp::arguments;
use crate::mcp::audit;
use crate::stack::Failure;
use crate::stack::jobs;
use crate::stack::parameters::Parameters;

impl LemonfiberServer {
    /// Runs one tool and hands its answer over, with an audit line of what happened and how it
    /// was decided.
    pub(super) async fn call(
        &self,
        tool: &'static ToolSpec,
        given: Option<JsonObject>,
        event: &'static str,
        caller: &Caller,
    ) -> Called {
        let started = Instant::now();
        // The run's state (the stack's request, the answer, the question) is many kilobytes; on
        // the heap, the MCP library's tasks move a pointer to it rather than copying it each
        // time they are spawned and started.
        let ran = Box::pin(self.run(tool, given, caller)).await;
        audit::record(&audit::Entry {
            key_digest: &self.stack.key_digest(),
            scope: ran.scope.word(),
            client: caller.client,
            event,
            tool: tool.name,
            decision: ran.decision,
            status: ran.status,
            consent: ran.consent.map(Consent::word),
            took: started.elapsed(),
        });
        let narrowing = match tool.operation {
            Operation::Read(_) => tool.narrowing(ran.audience),
            _ => Vec::new(),
        };
        let decided = ran.decided_as();
        let framed = ran.answer.framed(&Handover {
            result_limit: self.common.conduct.result_limit,
            withheld: self.stack.withheld(),
            narrowing: &narrowing,
        });
        Called {
            framed,
            decided,
            pending: ran.pending,
        }
    }

    /// Runs one tool for the key's offer, or says why the key cannot be served.
    async fn run(
        &self,
        tool: &'static ToolSpec,
        given: Option<JsonObject>,
        caller: &Caller,
    ) -> Ran {
        let offer = match self.position(caller.reach.peer()).await {
            Position::Refused(_) => {
                return Ran::refused(outcome::key_refused(self.via), "key-refused");
            }
            Position::Unreachable(failure, _) => {
                return Ran::refused(outcome::failure(&failure, &[]), "stack-unreachable");
            }
            Position::Connected(offer) => offer,
        };
        let ran = self.run_offered(tool, given, &offer, caller).await;
        Ran {
            scope: offer.scope(),
            audience: offer.audience,
            ..ran
        }
    }

    async fn run_offered(
        &self,
        tool: &'static ToolSpec,
        given: Option<JsonObject>,
        offer: &Offer,
        caller: &Caller,
    ) -> Ran {
        if let Some(decided) = decided_before_the_arguments(tool, given.as_ref(), offer) {
            return decided;
        }
        let arguments = match arguments::check(tool.parameters_for(offer.audience), given) {
            Ok(arguments) => arguments,
            Err(problem) => return arguments_refused(tool, &problem),
        };
        match self
            .asked_of_the_stack(tool, &arguments, offer, caller)
            .await
        {
            Ok(answered) => self.came_to(tool, answered, offer, caller).await,
            Err(ended) => ended,
        }
    }

    /// What the stack answered the tool's operation. A call that ends before the stack answers
    /// it (an act the person did not agree to) ends with what it came to instead.
    async fn asked_of_the_stack(
        &self,
        tool: &'static ToolSpec,
        arguments: &Parameters,
        offer: &Offer,
        caller: &Caller,
    ) -> Result<Answered, Ran> {
        let reply = match tool.operation {
            Operation::Read(read) => self
                .stack
                .read(read, arguments)
                .await
                .map(|reply| (reply.status, outcome::answer(tool.name, reply))),
            Operation::Rehearse(action) => self.rehearse(tool, action, arguments).await,
            Operation::Act(action) => {
                return self
                    .consent_then_act(tool, action, arguments, offer, caller)
                    .await;
            }
            Operation::Job => {
                let job = arguments.text("job").unwrap_or_default();
                jobs::ask(&self.stack, &job)
                    .await
                    .map(|(status, state)| (status, outcome::job(&job, state, None)))
            }
            Operation::Connection => return Err(Ran::connected(offer)),
        };
        Ok(Answered {
            reply,
            consent: None,
        })
    }

    /// What a call the stack was asked came to: its answer with how the person's yes was had;
    /// or, failed, what the failure says and changes.
    async fn came_to(
        &self,
        tool: &ToolSpec,
        answered: Answered,
        offer: &Offer,
        caller: &Caller,
    ) -> Ran {
        match answered.reply {
            Ok((status, answer)) => Ran {
                consent: answered.consent,
                ..Ran::sent(answer, Some(status))
            },
            Err(Failure::PathOutsideTemplate) => Ran::refused(
                outcome::failure(&Failure::PathOutsideTemplate, &[]),
                "path-outside-template",
            ),
            Err(failure) => {
                let status = status_of(&failure);
                let narrowing = tool.narrowing(offer.audience);
                let said = self
                    .failed(tool, failure, &narrowing, caller.reach.peer())
                    .await;
                Ran::sent(said, status)
            }
        }
    }

    /// What a failed call says, and what it changes: a refused key is refused for good; a scope
    /// that does not reach means the capabilities are read again (and the client told).
    pub(super) async fn failed(
        &self,
        tool: &ToolSpec,
        failure: Failure,
        narrowing: &[&str],
        peer: Option<&Peer<RoleServer>>,
    ) -> Answer {
        tracing::info!(
            tool = tool.name,
            failure = failure_name(&failure),
            "the stack did not answer the tool"
        );
        if let Failure::Refused(refusal) = &failure {
            if standing::refuses_the_key(refusal) {
                self.standing.lock().await.refuse();
                return outcome::key_refused(self.via);
            }
            if standing::out_of_scope(refusal) {
                self.standing.lock().await.forget_capabilities();
                self.position(peer).await;
            }
        }
        outcome::failure(&failure, narrowing)
    }

    /// Rehearses, and seals the stack's offer with what was rehearsed, for this key and action.
    async fn rehearse(
        &self,
        tool: &ToolSpec,
        action: Action,
        arguments: &Parameters,
    ) -> Result<(u16, Answer), Failure> {
        let rehearsed = arguments.to_body();
        let reply = self.stack.rehearse(action, rehearsed.clone()).await?;
        let sealed = outcome::stack_offer(&reply).and_then(|stack_offer| {
            self.common.seal.seal(
                &self.stack.key_digest(),
                action.act_tool(),
                &rehearsed,
                &stack_offer,
                &plan::digest(&reply),
            )
        });
        let status = reply.status;
        Ok((
            status,
            outcome::rehearsed(tool.name, action.act_tool(), reply, sealed.as_deref()),
        ))
    }
}

/// What a call comes to before its arguments are even read, if it is decided then: the
/// connection tool answered by the server; a tool this key is not offered (F13-R3); an action
/// that takes an offer called with none, told to rehearse first (F13-R4).
fn decided_before_the_arguments(
    tool: &ToolSpec,
    given: Option<&JsonObject>,
    offer: &Offer,
) -> Option<Ran> {
    if tool.operation == Operation::Connection {
        return Some(Ran::connected(offer));
    }
    if !offer.admits(tool) {
        return Some(Ran::decided(
            outcome::not_offered(tool.name),
            audit::Decision::NotOffered,
        ));
    }
    if let Operation::Act(action) = tool.operation
        && let Some(rehearsal) = action.rehearsal_tool()
        && lacks_an_offer(given)
    {
        return Some(Ran::refused(
            outcome::rehearse_first(tool.name, rehearsal),
            "no-offer",
        ));
    }
    None
}

/// A call whose arguments the tool does not take, refused with what is wrong with them.
fn arguments_refused(tool: &ToolSpec, problem: &ArgumentProblem) -> Ran {
    Ran::refused(
        outcome::argument_refused(problem, tool.name),
        ARGUMENTS_REFUSED,
    )
}

/// Whether an act tool was called with no offer at all (left out, null or blank): the one thing
/// the server asks of an action before anything else. An offer of the wrong type is left to the
/// argument check, which says so.
fn lacks_an_offer(given: Option<&JsonObject>) -> bool {
    match given.and_then(|given| given.get(OFFER_ARGUMENT)) {
        None | Some(Value::Null) => true,
        Some(Value::String(offer)) => offer.trim().is_empty(),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    use crate::catalogue::{self, Fault};
    use crate::mcp::audit::Decision;
    use crate::mcp::server::ran::tests::{framed, offer};
    use crate::stack::Scope;

    fn given(value: Value) -> JsonObject {
        let mut given = JsonObject::new();
        given.insert(OFFER_ARGUMENT.to_owned(), value);
        given
    }

    fn tool_where(operation: impl Fn(&ToolSpec) -> bool) -> &'static ToolSpec {
        catalogue::TOOLS
            .iter()
            .find(|tool| operation(tool))
            .unwrap()
    }

    fn rehearsed_act() -> &'static ToolSpec {
        tool_where(
            |tool| matches!(tool.operation, Operation::Act(action) if action.rehearsal_tool().is_some()),
        )
    }

    /// F13-R4: an action called without rehearsing is refused by the server, whether the offer
    /// is left out, null or blank.
    #[test]
    fn an_offer_left_out_null_or_blank_is_no_offer() {
        assert!(lacks_an_offer(None));
        assert!(lacks_an_offer(Some(&JsonObject::new())));
        assert!(lacks_an_offer(Some(&given(Value::Null))));
        assert!(lacks_an_offer(Some(&given(json!("")))));
        assert!(lacks_an_offer(Some(&given(json!("  \n")))));
    }

    /// An offer of the wrong type is still an offer here: the argument check says what is
    /// wrong with it, rather than the server telling the assistant to rehearse.
    #[test]
    fn an_offer_of_any_kind_or_text_is_left_to_the_argument_check() {
        assert!(!lacks_an_offer(Some(&given(json!("sealed")))));
        assert!(!lacks_an_offer(Some(&given(json!(42)))));
        assert!(!lacks_an_offer(Some(&given(json!({ "offer": "sealed" })))));
    }

    /// F13-R4: an action that takes an offer, called with none, is refused before the stack is
    /// asked, with the word `no-offer`, and told which rehearsal to call first.
    #[test]
    fn an_action_called_without_an_offer_is_refused_and_told_to_rehearse_first() {
        let act = rehearsed_act();
        let Operation::Act(action) = act.operation else {
            unreachable!()
        };
        let rehearsal = action.rehearsal_tool().unwrap();
        let ran = decided_before_the_arguments(act, None, &offer(Scope::Act)).unwrap();
        assert_eq!(ran.decision, Decision::RefusedBeforeStack("no-offer"));
        let framed = framed(ran.answer);
        assert!(framed.is_error);
        assert!(framed.sentence.contains(rehearsal), "{}", framed.sentence);
    }

    /// With an offer given, the action goes on to its arguments and the person's yes.
    #[test]
    fn an_action_called_with_an_offer_is_not_decided_before_its_arguments() {
        let act = rehearsed_act();
        let with_offer = given(json!("sealed"));
        assert!(decided_before_the_arguments(act, Some(&with_offer), &offer(Scope::Act)).is_none());
    }

    /// An action the core carries out with no offer is not asked for one.
    #[test]
    fn an_action_with_no_rehearsal_is_not_asked_for_an_offer() {
        let act = tool_where(
            |tool| matches!(tool.operation, Operation::Act(action) if action.rehearsal_tool().is_none()),
        );
        assert!(decided_before_the_arguments(act, None, &offer(Scope::Act)).is_none());
    }

    /// F13-R3: a tool the key is not offered is refused as not offered, before anything about
    /// its offer or arguments is said: a member key calling a technical action learns only
    /// that it is not offered.
    #[test]
    fn a_tool_the_key_is_not_offered_is_refused_as_not_offered_before_anything_else() {
        let member = offer(Scope::Member);
        let technical_act = tool_where(|tool| {
            tool.household_words.is_none()
                && matches!(tool.operation, Operation::Act(action) if action.rehearsal_tool().is_some())
        });
        let ran = decided_before_the_arguments(technical_act, None, &member).unwrap();
        assert_eq!(ran.decision, Decision::NotOffered);
        assert!(framed(ran.answer).sentence.contains(technical_act.name));
    }

    /// The connection tool is answered by the server, whatever the key is offered.
    #[test]
    fn the_connection_tool_is_answered_before_its_arguments() {
        let connection = tool_where(|tool| tool.operation == Operation::Connection);
        let ran = decided_before_the_arguments(connection, None, &offer(Scope::Read)).unwrap();
        assert_eq!(ran.decision, Decision::AnsweredByServer);
    }

    #[test]
    fn a_read_the_key_is_offered_goes_on_to_its_arguments() {
        let read = tool_where(|tool| matches!(tool.operation, Operation::Read(_)));
        assert!(decided_before_the_arguments(read, None, &offer(Scope::Act)).is_none());
    }

    /// A resource read answers a call refused for its arguments as invalid params, by this very
    /// word: the two must agree.
    #[test]
    fn arguments_a_tool_does_not_take_are_refused_with_the_word_resource_errors_know() {
        let read = tool_where(|tool| matches!(tool.operation, Operation::Read(_)));
        let problem = ArgumentProblem {
            name: "limit".to_owned(),
            fault: Fault::NotOffered,
        };
        let ran = arguments_refused(read, &problem);
        assert_eq!(
            ran.decision,
            Decision::RefusedBeforeStack(ARGUMENTS_REFUSED)
        );
        assert_eq!(ran.status, None);
        assert!(framed(ran.answer).sentence.contains("limit"));
    }
}
