//! An action's way through: the rehearsal and the offer it hands out, why an offer is refused,
//! how the person's yes was had (or why there was none), and that the stack carried it out.

use crate::access::consent::{Consent, NoConsent, OfferRefused, Unheard};

pub fn rehearsed(rehearsal: &str, act: &str, offer: &str) -> String {
    format!(
        "The stack rehearsed this with {rehearsal} and wrote nothing; its report follows as data. Tell the person \
         what the report says. Only if they agree, call {act} with the offer {offer}; it acts with exactly the \
         arguments rehearsed, for this key only, within a few minutes. Otherwise do nothing."
    )
}

pub fn rehearsed_without_offer(rehearsal: &str, act: &str) -> String {
    format!(
        "The stack rehearsed this with {rehearsal} and wrote nothing, but gave no offer to act on, so {act} cannot \
         be called on it. Its report follows as data, between the boundary lines."
    )
}

pub fn rehearse_first(act: &str, rehearsal: &str) -> String {
    format!(
        "{act} takes the offer a rehearsal answers as the person's yes, and none was given, so nothing was sent to \
         the stack. Call {rehearsal} first, tell the person what it says, and call {act} with its offer only if \
         they agree."
    )
}

pub fn offer_refused(act: &str, rehearsal: &str, why: OfferRefused) -> String {
    let why = match why {
        OfferRefused::NotSealedHere => {
            "that is not an offer this server handed out (made up, changed, or from another server)"
        }
        OfferRefused::OtherKey => "that offer was handed out for another key",
        OfferRefused::OtherAction => "that offer was handed out for another action",
        OfferRefused::Expired => "that offer has expired",
        OfferRefused::Spent => "that offer was already acted on, and an offer acts once",
        OfferRefused::NotRecorded => {
            "this server could not record the offer as acted on, and an offer acts only once"
        }
    };
    format!(
        "{act} was refused before anything was sent to the stack: {why}. Call {rehearsal} again, tell the person \
         what it says, and call {act} with its new offer only if they agree."
    )
}

pub fn stale(act: &str, rehearsal: &str) -> String {
    format!(
        "The stack refused {act} and did nothing: what the offer was made on has moved since the rehearsal. What \
         moved follows as data. Call {rehearsal} again and ask the person again before acting."
    )
}

/// Said instead of asking the person, when the plan a fresh rehearsal reports is not the one the
/// offer was made on: they are never asked about a plan that has moved.
pub fn plan_moved(act: &str, rehearsal: &str) -> String {
    format!(
        "{act} was not sent to the stack, and the person was not asked: the plan has moved since the rehearsal. \
         The plan as it stands now follows as data. Call {rehearsal} again, tell the person what it says, and \
         call {act} with its new offer only if they agree."
    )
}

pub fn awaiting_person() -> &'static str {
    "Nothing was sent to the stack yet: the person is asked first, through their client."
}

/// How the person's yes was had, said first in the answer to an action.
pub fn consented(consent: Consent) -> &'static str {
    match consent {
        Consent::Asked => "The person agreed when asked through their client.",
        Consent::Offer(Unheard::CannotAsk) => {
            "The person could not be asked through their client, so the rehearsal's offer stood for their yes."
        }
        Consent::Offer(Unheard::NoAnswer) => {
            "The person was asked through their client and did not answer in time, so the rehearsal's offer stood \
             for their yes."
        }
        Consent::Call => {
            "The person could not be asked through their client, and this action has no rehearsal, so it was carried \
             out on the assistant's call alone, as this server's settings allow."
        }
    }
}

pub fn no_consent(act: &str, rehearsal: Option<&str>, why: NoConsent) -> String {
    let again = match rehearsal {
        Some(rehearsal) => format!(
            "Do not call {act} again unless the person asks for it; then call {rehearsal} first."
        ),
        None => format!("Do not call {act} again unless the person asks for it."),
    };
    match why {
        NoConsent::Declined => {
            let spent = if rehearsal.is_some() {
                " and the offer is spent"
            } else {
                ""
            };
            format!("The person said no to {act}, so nothing was sent to the stack{spent}. {again}")
        }
        NoConsent::Cancelled => {
            let spent = if rehearsal.is_some() {
                " and the offer is spent"
            } else {
                ""
            };
            format!(
                "The question about {act} was cancelled, so nothing was sent to the stack{spent}. {again}"
            )
        }
        NoConsent::Unmatched => format!(
            "{act} was not carried out: what came back is not the person's answer to the question this server \
             asked (it was changed, is about something else, or is not an answer), so it counts as a no. Nothing \
             was sent to the stack. {again}"
        ),
        NoConsent::AnswerSpent => format!(
            "{act} was not carried out again: the person's yes was for one time only and has been used. Nothing \
             was sent to the stack. {again}"
        ),
        NoConsent::NoAnswer => match rehearsal {
            Some(_) => format!(
                "{act} was not carried out: the person was asked through their client and did not answer in time, \
                 and this server acts only on their answer. Nothing was sent to the stack; call {act} again with \
                 the same offer when the person is there to answer."
            ),
            None => format!(
                "{act} was not carried out: the person was asked through their client and did not answer in time, \
                 and it has no rehearsal whose offer could stand for their yes. Nothing was sent to the stack; call \
                 {act} again when the person is there to answer."
            ),
        },
        NoConsent::CannotAsk => format!(
            "{act} was not carried out: this server acts only on the person's own answer (LEMONFIBER_CONSENT is \
             ask), and this client cannot put a question to them. Nothing was sent to the stack; use a client that \
             supports elicitation."
        ),
    }
}

pub fn acted(act: &str) -> String {
    format!("The stack carried out {act}; its answer follows as data, between the boundary lines.")
}
