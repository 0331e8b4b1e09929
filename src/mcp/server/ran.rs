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
