//! Acting once the person's yes is had: the act sent once and never again on its own, a stale
//! offer said as such, and a job the action started followed for a while.

use std::time::Instant;

use rmcp::model::ProgressNotificationParam;

use super::caller::Caller;
use super::consenting::Consented;
use super::ran::Ran;
use super::{LemonfiberServer, failure_name};
use crate::access::consent::Consent;
use crate::access::offer::Offer;
use crate::answer::outcome::{self, Answer};
use crate::answer::sentences;
use crate::catalogue::{Action, ToolSpec};
use crate::stack::jobs;
use crate::stack::parameters::Parameters;
use crate::stack::{Failure, Refusal, Reply};

/// What the stack answered a call, and how the person's yes to it was had, for an action.
pub(super) struct Answered {
    pub(super) reply: Result<(u16, Answer), Failure>,
    pub(super) consent: Option<Consent>,
}

impl LemonfiberServer {
    /// The person's yes, then the act: its answer says how the yes was had. Without a yes the
    /// call ends with why, and nothing is sent.
    pub(super) async fn consent_then_act(
        &self,
        tool: &ToolSpec,
        action: Action,
        arguments: &Parameters,
        offer: &Offer,
        caller: &Caller,
    ) -> Result<Answered, Ran> {
        let consented = self
            .consented(tool, action, arguments, offer, caller)
            .await?;
        let consent = consented.consent;
        let reply = self
            .act(tool, action, consented, caller)
            .await
            .map(|(status, answer)| match consent {
                Some(consent) => (status, answer.consented(consent)),
                None => (status, answer),
            });
        Ok(Answered { reply, consent })
    }

    /// Acts once, never again on its own: a stale offer is said as such, and a job the action
    /// started is followed for a while.
    async fn act(
        &self,
        tool: &ToolSpec,
        action: Action,
        consented: Consented,
        caller: &Caller,
    ) -> Result<(u16, Answer), Failure> {
        let Consented {
            body,
            idempotency_key,
            ..
        } = consented;
        let reply = match self
            .stack
            .act(action, body, idempotency_key.as_deref())
            .await
        {
            Ok(reply) => reply,
            Err(Failure::Refused(refusal)) if is_stale(action, &refusal) => {
                let rehearsal = action.rehearsal_tool().unwrap_or(tool.name);
                return Ok((
                    refusal.status,
                    outcome::stale(tool.name, rehearsal, &refusal),
                ));
            }
            Err(failure) => return Err(failure),
        };
        tracing::info!(
            tool = tool.name,
            status = reply.status,
            "the stack took the action"
        );
        let status = reply.status;
        Ok((status, self.follow(tool, reply, caller).await))
    }

    /// Follows the job an action started, if it did, for as long as the settings say: telling a
    /// caller that asked for progress each time it is still running, and stopping (the job goes
    /// on) when the caller cancels its request.
    async fn follow(&self, tool: &ToolSpec, reply: Reply, caller: &Caller) -> Answer {
        let Some(job) = jobs::started(&reply) else {
            return outcome::acted(tool.name, reply);
        };
        let started = Instant::now();
        let still_running = |looks: u32| {
            let progress = caller.progress.clone().map(|token| {
                let mut progress = ProgressNotificationParam::new(token, f64::from(looks));
                progress.message = Some(sentences::job_in_progress(
                    tool.name,
                    started.elapsed().as_secs(),
                ));
                progress
            });
            let reach = caller.reach.clone();
            async move {
                if let Some(progress) = progress {
                    reach.notify_progress(progress).await;
                }
            }
        };
        let followed = jobs::follow(
            &self.stack,
            &job,
            self.common.conduct.job_wait,
            &caller.cancelled,
            still_running,
        )
        .await;
        if caller.cancelled.is_cancelled() {
            tracing::info!(
                tool = tool.name,
                "the request was cancelled: the job is no longer followed, and goes on"
            );
        }
        match followed {
            Ok(state) => outcome::job(&job, state, Some((tool.name, started.elapsed()))),
            Err(failure) => {
                tracing::info!(
                    tool = tool.name,
                    failure = failure_name(&failure),
                    "the job could not be followed"
                );
                outcome::job_not_followed(tool.name, reply)
            }
        }
    }
}

/// Whether the stack refused an act because the offer was made on a state that has since moved.
fn is_stale(action: Action, refusal: &Refusal) -> bool {
    action.stale_offer().is_some_and(|stale| refusal.is(stale))
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    use crate::catalogue::{self, Operation};

    fn refusal(status: u16, code: &str) -> Refusal {
        Refusal {
            status,
            problem: json!({ "code": code }),
            retry_after_seconds: None,
        }
    }

    fn actions() -> impl Iterator<Item = Action> {
        catalogue::TOOLS
            .iter()
            .filter_map(|tool| match tool.operation {
                Operation::Act(action) => Some(action),
                _ => None,
            })
    }

    /// F13-R4: an act the stack refuses because its offer was made on a state that has since
    /// moved is said as stale, so the assistant rehearses again rather than retrying.
    #[test]
    fn a_stale_offer_is_known_by_the_code_and_status_its_action_declares() {
        let mut declared = 0;
        for action in actions() {
            let Some(stale) = action.stale_offer() else {
                continue;
            };
            declared += 1;
            assert!(is_stale(action, &refusal(stale.status, stale.code)));
        }
        assert!(declared > 0, "no action declares a stale offer");
    }

    /// Only the very refusal the action declares is stale: another code at the same status, or
    /// the same code at another, is the stack's refusal as it is.
    #[test]
    fn a_refusal_that_is_not_the_declared_one_is_not_stale() {
        for action in actions() {
            let Some(stale) = action.stale_offer() else {
                continue;
            };
            assert!(!is_stale(action, &refusal(stale.status, "something_else")));
            assert!(!is_stale(action, &refusal(stale.status + 1, stale.code)));
            assert!(!is_stale(
                action,
                &Refusal {
                    status: stale.status,
                    problem: json!({}),
                    retry_after_seconds: None,
                }
            ));
        }
    }

    /// An action that declares no stale offer has no refusal said as stale, whatever it is.
    #[test]
    fn an_action_without_a_stale_offer_is_never_stale() {
        let codes: Vec<_> = actions().filter_map(Action::stale_offer).collect();
        for action in actions().filter(|action| action.stale_offer().is_none()) {
            for code in &codes {
                assert!(!is_stale(action, &refusal(code.status, code.code)));
            }
        }
    }
}
