//! The person's yes to an action: the offer a rehearsal answered, opened and spent; the plan
//! rehearsed again so the person is asked about what will happen; the person asked, in a
//! session while the call waits or on 2026-07-28 by handing the question out; and the answer
//! weighed as the settings' consent mode says (F13-R4).

use rmcp::model::InputRequiredResult;
use serde_json::Value;

use super::LemonfiberServer;
use super::caller::Caller;
use super::ran::{Ran, status_of};
use crate::access::consent::{self, AskedAbout, Consent, NoConsent, OfferRefused};
use crate::access::offer::Offer;
use crate::access::plan;
use crate::answer::outcome;
use crate::answer::sentences;
use crate::catalogue::{Action, OFFER_ARGUMENT, Operation, ToolSpec};
use crate::mcp::asking::{self, ANSWER_WITHIN, Asked};
use crate::mcp::question;
use crate::stack::Reply;
use crate::stack::parameters::Parameters;

/// What an act is sent with once the person's consent is checked.
pub(super) struct Consented {
    pub(super) body: serde_json::Map<String, Value>,
    /// `None` only where no randomness could be had for a fresh key: the act is then sent as
    /// every other client sends it, without one.
    pub(super) idempotency_key: Option<String>,
    /// How the person's yes was had, for an action that is rehearsed.
    pub(super) consent: Option<Consent>,
}

/// Where asking the person stands.
enum Asking {
    /// What came of asking, and the sealed question the answer was brought back on, if it was.
    Answered(Asked, Option<AskedAbout>),
    /// On 2026-07-28: the question, for the client to put and bring back answered.
    Pending(InputRequiredResult),
}

/// Why acting did not go ahead, and the call's answer: no yes (`no`), or, on 2026-07-28, the
/// question handed out first (`no` is `None`).
struct Refused {
    no: Option<NoConsent>,
    ran: Ran,
}

impl From<Refused> for Ran {
    fn from(refused: Refused) -> Ran {
        refused.ran
    }
}

impl LemonfiberServer {
    /// The body an act is sent with, its `Idempotency-Key`, and the person's yes. For an action
    /// that is rehearsed: the offer opened for this key and action; where the client can ask, the
    /// plan rehearsed again and, only if it has not moved, the person asked about it; the offer
    /// spent before anything is sent, with the sealed arguments, the stack's offer (the fresh one,
    /// made on the plan the person was asked about, where there is one) and `confirm`, under the
    /// offer's key. For an action with no rehearsal that disturbs the stack, the person is asked
    /// about the arguments as given, with no offer to stand for their yes. Otherwise the arguments
    /// as given, under a fresh key. Refused, it says why in the call's answer.
    pub(super) async fn consented(
        &self,
        tool: &ToolSpec,
        action: Action,
        arguments: &Parameters,
        offer: &Offer,
        caller: &Caller,
    ) -> Result<Consented, Ran> {
        let seal = &self.common.seal;
        let Some(rehearsal) = action.rehearsal_tool() else {
            let body = arguments.to_body();
            let consent = if action.disturbs() {
                let about = serde_json::to_string(&body).unwrap_or_default();
                let message = if caller.puts_question() {
                    Some(question::put(&self.stack, tool, action, &body, None, offer).await)
                } else {
                    None
                };
                let consent = self.agreed(tool, &about, message, caller, false).await?;
                Some(consent)
            } else {
                None
            };
            return Ok(Consented {
                body,
                idempotency_key: consent::fresh_idempotency_key(),
                consent,
            });
        };
        let offer_refused = |why| {
            Ran::refused(
                outcome::offer_refused(tool.name, rehearsal, why),
                offer_refusal_word(why),
            )
        };
        let sealed_offer = arguments.text(OFFER_ARGUMENT).unwrap_or_default();
        let opened = seal
            .open(&sealed_offer, &self.stack.key_digest(), tool.name)
            .map_err(offer_refused)?;
        let (message, fresh_offer) = if caller.can_ask {
            let fresh = self
                .rehearsed_again(tool, action, rehearsal, &opened, caller)
                .await?;
            let message = if caller.puts_question() {
                let arguments = &opened.arguments;
                let fresh = Some(&fresh);
                Some(question::put(&self.stack, tool, action, arguments, fresh, offer).await)
            } else {
                None
            };
            (message, outcome::stack_offer(&fresh))
        } else {
            (None, None)
        };
        let consent = self
            .agreed(tool, &sealed_offer, message, caller, true)
            .await
            .map_err(|refused| {
                // A no is final: the offer is spent, and acting takes a new rehearsal.
                if refused.no.is_some_and(NoConsent::is_final) {
                    let _ = seal.spend(&opened);
                }
                refused.ran
            })?;
        seal.spend(&opened).map_err(offer_refused)?;
        let idempotency_key = Some(opened.idempotency_key());
        let mut body = opened.arguments;
        let stack_offer = fresh_offer.unwrap_or(opened.stack_offer);
        body.insert(OFFER_ARGUMENT.to_owned(), Value::from(stack_offer));
        if let Some(confirm) = arguments.flag("confirm") {
            body.insert("confirm".to_owned(), Value::Bool(confirm));
        }
        Ok(Consented {
            body,
            idempotency_key,
            consent: Some(consent),
        })
    }

    /// An opened offer's arguments rehearsed again (which writes nothing): the fresh report, if
    /// its plan is the one the offer was made on; else the call ends, no one asked.
    async fn rehearsed_again(
        &self,
        tool: &ToolSpec,
        action: Action,
        rehearsal: &str,
        opened: &consent::Opened,
        caller: &Caller,
    ) -> Result<Reply, Ran> {
        let fresh = match self.stack.rehearse(action, opened.arguments.clone()).await {
            Ok(fresh) => fresh,
            Err(failure) => {
                let status = status_of(&failure);
                let answer = self.failed(tool, failure, &[], caller.reach.peer()).await;
                return Err(Ran::sent(answer, status));
            }
        };
        if plan::digest(&fresh) == opened.plan {
            return Ok(fresh);
        }
        Err(Ran::refused(
            outcome::plan_moved(tool.name, rehearsal, fresh),
            "plan-moved",
        ))
    }

    /// The person's yes to acting with `tool` on `about` (the sealed offer, or the arguments of an
    /// action with no offer), as the settings' consent mode decides from what came of asking; a
    /// yes brought back on a sealed question is taken once.
    async fn agreed(
        &self,
        tool: &ToolSpec,
        about: &str,
        message: Option<String>,
        caller: &Caller,
        offered: bool,
    ) -> Result<Consent, Refused> {
        let (asked, answered) = match self.ask(tool, about, message, caller).await {
            Asking::Answered(asked, answered) => (asked, answered),
            Asking::Pending(question) => {
                return Err(Refused {
                    no: None,
                    ran: Ran::pending(question),
                });
            }
        };
        let refused = |no: NoConsent| {
            let rehearsal = match tool.operation {
                Operation::Act(action) => action.rehearsal_tool(),
                _ => None,
            };
            Refused {
                no: Some(no),
                ran: Ran::refused(outcome::no_consent(tool.name, rehearsal, no), no.word()),
            }
        };
        let consent =
            asking::decide(self.common.conduct.consent, asked, offered).map_err(refused)?;
        if let Some(answered) = answered {
            self.common.seal.spend_answer(&answered).map_err(refused)?;
        }
        Ok(consent)
    }

    /// Asks the person whether to act with `tool` on `about`, as the client can be asked: while
    /// the call waits in a session; on 2026-07-28 by handing the question out, and taking the
    /// answer the client brings back only with the question sealed for this key, action and
    /// subject.
    async fn ask(
        &self,
        tool: &ToolSpec,
        about: &str,
        message: Option<String>,
        caller: &Caller,
    ) -> Asking {
        if !caller.can_ask {
            return Asking::Answered(Asked::CannotAsk, None);
        }
        // Made whenever `puts_question` says the question is put, so never left empty here.
        let message = message.unwrap_or_default();
        let field = sentences::consent_field();
        // A caller that is not stateless is always one of the library's, reached by its peer.
        if !caller.stateless
            && let Some(peer) = caller.reach.peer()
        {
            let asked = asking::ask_now(peer, message, field, &caller.cancelled).await;
            return Asking::Answered(asked, None);
        }
        let key = self.stack.key_digest();
        let seal = &self.common.seal;
        match &caller.answer {
            Some((question, responses)) => match seal.asked(question, &key, tool.name, about) {
                Some(answered) => Asking::Answered(asking::answered(responses), Some(answered)),
                None => Asking::Answered(Asked::Unmatched, None),
            },
            None => match seal.question(&key, tool.name, about, ANSWER_WITHIN) {
                Some(question) => Asking::Pending(InputRequiredResult::new(
                    Some(asking::input_requests(message, field)),
                    Some(question),
                )),
                None => Asking::Answered(Asked::NoAnswer, None),
            },
        }
    }
}

/// The words the audit line gives an offer's refusal.
fn offer_refusal_word(why: OfferRefused) -> &'static str {
    match why {
        OfferRefused::NotSealedHere => "offer-not-sealed-here",
        OfferRefused::OtherKey => "offer-of-another-key",
        OfferRefused::OtherAction => "offer-of-another-action",
        OfferRefused::Expired => "offer-expired",
        OfferRefused::Spent => "offer-spent",
        OfferRefused::NotRecorded => "offer-not-recorded",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// F13-R4: each way an offer is refused has a word of its own in the audit line, so an
    /// operator reading it can tell a forged offer from one merely spent or expired; and the
    /// words are read by whoever watches the log, so they do not drift.
    #[test]
    fn an_offer_refusal_is_audited_in_the_words_the_log_has_always_used() {
        assert_eq!(
            offer_refusal_word(OfferRefused::NotSealedHere),
            "offer-not-sealed-here"
        );
        assert_eq!(
            offer_refusal_word(OfferRefused::OtherKey),
            "offer-of-another-key"
        );
        assert_eq!(
            offer_refusal_word(OfferRefused::OtherAction),
            "offer-of-another-action"
        );
        assert_eq!(offer_refusal_word(OfferRefused::Expired), "offer-expired");
        assert_eq!(offer_refusal_word(OfferRefused::Spent), "offer-spent");
        assert_eq!(
            offer_refusal_word(OfferRefused::NotRecorded),
            "offer-not-recorded"
        );
    }
}
