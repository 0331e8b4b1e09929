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
