//! What one call came to: the answer, how it was decided and what its audit line says of it.

use rmcp::model::InputRequiredResult;

use crate::access::consent::Consent;
use crate::access::offer::Offer;
use crate::answer::outcome::{self, Answer};
use crate::catalogue::Audience;
use crate::mcp::audit::Decision;
use crate::stack::{Failure, Scope};

/// The audit's word for a call refused for its arguments, which a resource read also answers as
/// invalid params.
pub(super) const ARGUMENTS_REFUSED: &str = "arguments";

/// How a call was decided, beside the answer it framed.
#[derive(Clone, Copy)]
pub(super) struct Decided {
    pub(super) decision: Decision,
    pub(super) status: Option<u16>,
}

/// What one call came to: the answer, and what the audit line says of it.
pub(super) struct Ran {
    pub(super) answer: Answer,
    pub(super) decision: Decision,
    pub(super) status: Option<u16>,
    pub(super) scope: Scope,
    pub(super) audience: Audience,
    pub(super) consent: Option<Consent>,
    /// The person's answer, required before the call can go on (2026-07-28).
    pub(super) pending: Option<InputRequiredResult>,
}

/// What one call came to, as the handler hands it over.
pub(super) struct Called {
    pub(super) framed: outcome::Framed,
    pub(super) decided: Decided,
    pub(super) pending: Option<InputRequiredResult>,
}

impl Ran {
    pub(super) fn refused(answer: Answer, why: &'static str) -> Ran {
        Ran::decided(answer, Decision::RefusedBeforeStack(why))
    }

    pub(super) fn decided(answer: Answer, decision: Decision) -> Ran {
        Ran {
            answer,
            decision,
            status: None,
            scope: Scope::Unsaid,
            audience: Audience::Operator,
            consent: None,
            pending: None,
        }
    }

    /// A call waiting for the person's answer, which the client brings back in its next call.
    pub(super) fn pending(question: InputRequiredResult) -> Ran {
        Ran {
            pending: Some(question),
            ..Ran::decided(outcome::awaiting_person(), Decision::AwaitingPerson)
        }
    }

    /// The connection tool, answered from what the server knows.
    pub(super) fn connected(offer: &Offer) -> Ran {
        Ran::decided(
            outcome::connected(offer.scope()),
            Decision::AnsweredByServer,
        )
    }

    pub(super) fn sent(answer: Answer, status: Option<u16>) -> Ran {
        Ran {
            status,
            ..Ran::decided(answer, Decision::Sent)
        }
    }

    /// How this call was decided, for what it is answered with beside its framed answer.
    pub(super) fn decided_as(&self) -> Decided {
        Decided {
            decision: self.decision,
            status: self.status,
        }
    }
}

/// The HTTP status the stack answered a failed call with, where it answered one.
pub(super) fn status_of(failure: &Failure) -> Option<u16> {
    match failure {
        Failure::Refused(refusal) => Some(refusal.status),
        Failure::Unexpected { status } => *status,
        _ => None,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    use std::sync::Arc;

    use serde_json::json;

    use crate::answer::outcome::Handover;
    use crate::answer::sentences;
    use crate::catalogue;
    use crate::redact::Secrets;
    use crate::stack::{Capabilities, CapabilityState, Refusal, Unreachable};

    /// An offer of every tool in the catalogue, as a key of `scope` whose stack says each is
    /// available.
    pub(in crate::mcp::server) fn offer(scope: Scope) -> Offer {
        let states = catalogue::TOOLS
            .iter()
            .map(|tool| (tool.capability.to_owned(), CapabilityState::Available))
            .collect();
        Offer::new(Arc::new(Capabilities { states, scope }))
    }

    pub(in crate::mcp::server) fn framed(answer: Answer) -> outcome::Framed {
        answer.framed(&Handover {
            result_limit: 64 * 1024,
            withheld: &Secrets::default(),
            narrowing: &[],
        })
    }

    fn refusal(status: u16) -> Refusal {
        Refusal {
            status,
            problem: json!({ "code": "conflict" }),
            retry_after_seconds: None,
        }
    }

    /// F13-R4: a call refused before the stack is asked says so in its audit line, with the
    /// server's word for why and no status, since nothing was sent.
    #[test]
    fn a_call_refused_before_the_stack_is_audited_with_its_word_and_no_status() {
        let ran = Ran::refused(outcome::not_offered("read_health"), "no-offer");
        assert_eq!(ran.decision, Decision::RefusedBeforeStack("no-offer"));
        assert_eq!(ran.status, None);
        assert_eq!(ran.consent, None);
        assert!(ran.pending.is_none());
        assert!(framed(ran.answer).is_error);
    }

    /// Until the run knows the key's offer, a call is audited as of no scope said and in the
    /// operator's words: never in a member's, which would claim what the stack did not say.
    #[test]
    fn a_decided_call_is_of_no_scope_said_until_its_offer_is_known() {
        let ran = Ran::decided(outcome::not_offered("read_health"), Decision::NotOffered);
        assert_eq!(ran.decision, Decision::NotOffered);
        assert_eq!(ran.scope, Scope::Unsaid);
        assert_eq!(ran.audience, Audience::Operator);
        assert_eq!(ran.status, None);
    }

    /// On 2026-07-28 the person is asked through their client first: nothing is sent, the
    /// question goes back with the call, and the answer says nothing was sent yet.
    #[test]
    fn a_pending_call_carries_its_question_and_says_nothing_was_sent_yet() {
        let question = rmcp::model::InputRequiredResult::new(None, Some("sealed".to_owned()));
        let ran = Ran::pending(question);
        assert_eq!(ran.decision, Decision::AwaitingPerson);
        assert_eq!(ran.status, None);
        assert_eq!(
            ran.pending.and_then(|question| question.request_state),
            Some("sealed".to_owned())
        );
        assert!(
            framed(ran.answer)
                .sentence
                .contains(sentences::awaiting_person())
        );
    }

    /// The connection tool is answered by the server from the key's scope, and is no error.
    #[test]
    fn the_connection_tool_is_answered_by_the_server_with_the_keys_scope() {
        let ran = Ran::connected(&offer(Scope::Act));
        assert_eq!(ran.decision, Decision::AnsweredByServer);
        assert_eq!(ran.status, None);
        let framed = framed(ran.answer);
        assert!(!framed.is_error);
        assert_eq!(framed.sentence, sentences::connected(Scope::Act));
    }

    /// The audit line's status is the stack's own, and only where it answered one.
    #[test]
    fn a_failure_has_a_status_only_where_the_stack_answered_one() {
        assert_eq!(status_of(&Failure::Refused(refusal(409))), Some(409));
        assert_eq!(
            status_of(&Failure::Unexpected { status: Some(502) }),
            Some(502)
        );
        assert_eq!(status_of(&Failure::Unexpected { status: None }), None);
        assert_eq!(status_of(&Failure::PinMismatch), None);
        assert_eq!(
            status_of(&Failure::Unreachable(Unreachable::TimedOut)),
            None
        );
        assert_eq!(status_of(&Failure::TooLarge { limit: 1 }), None);
        assert_eq!(status_of(&Failure::PathOutsideTemplate), None);
    }
}
