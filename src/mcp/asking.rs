//! The person's own yes to an action, asked through their client (MCP elicitation) before
//! anything is sent. The offer proves a rehearsal happened, but the model chooses to pass it on;
//! a question the client puts to the person is the one yes the model cannot give.
//!
//! A session's client is asked while the call waits, for at most two minutes. From 2026-07-28 a
//! call cannot wait on the client, so it answers that the person's input is required, and the
//! client calls again with the answer and the sealed question the server handed out.

use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, PrimitiveSchemaDefinition,
};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::access::consent::{Consent, NoConsent, Unheard};
use crate::config::ConsentMode;

/// How long the person has to answer.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(120);
/// The one field of the question: whether the person agrees.
const AGREE: &str = "agree";
/// The name the question goes by among a 2026-07-28 call's input requests.
pub const QUESTION: &str = "consent";

/// What came of asking the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Accepted, with yes.
    Yes,
    /// Declined, or accepted with no.
    No,
    Cancelled,
    /// A reply that is not a verifiable answer to this very question: brought back with the
    /// question changed, lapsed or about something else, filed under another name, not an
    /// answer's shape, or an error from the client.
    Unmatched,
    /// Silence: nothing came back before the question lapsed, or the client went away.
    NoAnswer,
    /// The client did not declare that it can ask its person.
    CannotAsk,
}

/// Whether what came of asking is a yes to act on, under the settings' consent mode, for an
/// action that comes with an offer (`offered`) or one the core carries out with none. A no, a
/// cancel or a reply that is not to this question refuses whatever the mode; only silence, or a
/// client that cannot ask, leaves it to the mode, and silence never lets an action with no offer
/// through, since nothing then stands for the person's yes.
pub fn decide(mode: ConsentMode, asked: Asked, offered: bool) -> Result<Consent, NoConsent> {
    match (asked, mode, offered) {
        (Asked::Yes, _, _) => Ok(Consent::Asked),
        (Asked::No, _, _) => Err(NoConsent::Declined),
        (Asked::Cancelled, _, _) => Err(NoConsent::Cancelled),
        (Asked::Unmatched, _, _) => Err(NoConsent::Unmatched),
        (Asked::NoAnswer, ConsentMode::Offer, true) => Ok(Consent::Offer(Unheard::NoAnswer)),
        (Asked::NoAnswer, _, _) => Err(NoConsent::NoAnswer),
        (Asked::CannotAsk, ConsentMode::Ask, _) => Err(NoConsent::CannotAsk),
        (Asked::CannotAsk, ConsentMode::Offer | ConsentMode::Both, true) => {
            Ok(Consent::Offer(Unheard::CannotAsk))
        }
        (Asked::CannotAsk, ConsentMode::Offer | ConsentMode::Both, false) => Ok(Consent::Call),
    }
}

/// Whether a client declaring `capabilities` can put a form to its person.
pub fn can_ask(capabilities: Option<ClientCapabilities>) -> bool {
    capabilities
        .and_then(|capabilities| capabilities.elicitation)
        // A client that names neither kind of question means forms, as the protocol says.
        .is_some_and(|can| can.form.is_some() || can.url.is_none())
}

/// The question: `message`, and one yes/no field.
fn question(message: String, field_words: &str) -> ElicitRequestParams {
    let agree = PrimitiveSchemaDefinition::Boolean(
        rmcp::model::BooleanSchema::new()
            .title(field_words.to_owned())
            .with_default(false),
    );
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: ElicitationSchema::builder()
            .required_property(AGREE, agree)
            .build_unchecked(),
    }
}

/// Asks the person through a session's client, and waits for their answer: at most
/// [`ANSWER_WITHIN`], and no longer than the call itself is wanted.
pub async fn ask_now(
    peer: &Peer<RoleServer>,
    message: String,
    field_words: &str,
    cancelled: &CancellationToken,
) -> Asked {
    let asking =
        peer.create_elicitation_with_timeout(question(message, field_words), Some(ANSWER_WITHIN));
    tokio::select! {
        answered = asking => match answered {
            Ok(result) => answer(&result),
            Err(ServiceError::Timeout { .. } | ServiceError::TransportClosed) => {
                tracing::info!("the person did not answer the question in time");
                Asked::NoAnswer
            }
            Err(ServiceError::Cancelled { .. }) => Asked::Cancelled,
            Err(error) => {
                tracing::info!(%error, "the client's reply to the question is not an answer");
                Asked::Unmatched
            }
        },
        () = cancelled.cancelled() => Asked::Cancelled,
    }
}

/// The question as a 2026-07-28 input request, for the client to put and answer on its next call.
pub fn input_requests(message: String, field_words: &str) -> InputRequests {
    let request = ElicitRequest::new(question(message, field_words));
    InputRequests::from([(QUESTION.to_owned(), InputRequest::Elicitation(request))])
}

/// The person's answer among a 2026-07-28 call's input responses, brought back with the
/// question it answers: anything but an answer to the question, under its name, is not one.
pub fn answered(responses: &rmcp::model::InputResponses) -> Asked {
    responses
        .get(QUESTION)
        .and_then(|response| serde_json::from_value::<ElicitResult>(response.clone()).ok())
        .map_or(Asked::Unmatched, |result| answer(&result))
}

fn answer(result: &ElicitResult) -> Asked {
    match result.action {
        ElicitationAction::Accept => {
            let agreed = result
                .content
                .as_ref()
                .and_then(|content| content.get(AGREE))
                .and_then(Value::as_bool);
            if agreed == Some(true) {
                Asked::Yes
            } else {
                Asked::No
            }
        }
        ElicitationAction::Decline => Asked::No,
        ElicitationAction::Cancel => Asked::Cancelled,
        // An action the protocol may add later is not a yes.
        _ => Asked::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// F13-R4: whatever the mode and whether or not there is an offer, only the person's yes to
    /// this very question acts; a no, a cancel or a reply that is not to the question never does.
    #[test]
    fn only_a_yes_acts_and_a_no_a_cancel_or_a_foreign_reply_never_whatever_the_mode() {
        for mode in [ConsentMode::Ask, ConsentMode::Offer, ConsentMode::Both] {
            for offered in [true, false] {
                assert_eq!(decide(mode, Asked::Yes, offered), Ok(Consent::Asked));
                assert_eq!(decide(mode, Asked::No, offered), Err(NoConsent::Declined));
                assert_eq!(
                    decide(mode, Asked::Cancelled, offered),
                    Err(NoConsent::Cancelled)
                );
                assert_eq!(
                    decide(mode, Asked::Unmatched, offered),
                    Err(NoConsent::Unmatched)
                );
            }
        }
    }

    #[test]
    fn where_the_person_is_not_heard_from_the_mode_decides() {
        use ConsentMode::{Ask, Both, Offer};
        let cases = [
            (Ask, Asked::CannotAsk, true, Err(NoConsent::CannotAsk)),
            (Ask, Asked::NoAnswer, true, Err(NoConsent::NoAnswer)),
            (
                Offer,
                Asked::CannotAsk,
                true,
                Ok(Consent::Offer(Unheard::CannotAsk)),
            ),
            (
                Offer,
                Asked::NoAnswer,
                true,
                Ok(Consent::Offer(Unheard::NoAnswer)),
            ),
            (
                Both,
                Asked::CannotAsk,
                true,
                Ok(Consent::Offer(Unheard::CannotAsk)),
            ),
            (Both, Asked::NoAnswer, true, Err(NoConsent::NoAnswer)),
            (Ask, Asked::CannotAsk, false, Err(NoConsent::CannotAsk)),
            (Offer, Asked::CannotAsk, false, Ok(Consent::Call)),
            (Both, Asked::CannotAsk, false, Ok(Consent::Call)),
        ];
        for (mode, asked, offered, decided) in cases {
            assert_eq!(
                decide(mode, asked, offered),
                decided,
                "{mode:?} {asked:?} {offered}"
            );
        }
        for mode in [Ask, Offer, Both] {
            assert_eq!(
                decide(mode, Asked::NoAnswer, false),
                Err(NoConsent::NoAnswer),
                "silence never stands for a yes to an action with no offer"
            );
        }
    }

    #[test]
    fn an_accept_is_a_yes_only_with_the_field_set_to_true() {
        let responses = |response: Value| {
            let responses = rmcp::model::InputResponses::from([(QUESTION.to_owned(), response)]);
            answered(&responses)
        };
        assert_eq!(
            responses(json!({"action": "accept", "content": {"agree": true}})),
            Asked::Yes
        );
        for no in [
            json!({"action": "accept", "content": {"agree": false}}),
            json!({"action": "accept", "content": {"agree": "true"}}),
            json!({"action": "accept"}),
            json!({"action": "decline"}),
        ] {
            assert_eq!(responses(no.clone()), Asked::No, "{no}");
        }
        assert_eq!(responses(json!({"action": "cancel"})), Asked::Cancelled);
        assert_eq!(responses(json!({"agree": true})), Asked::Unmatched);
        let elsewhere = rmcp::model::InputResponses::from([(
            "another".to_owned(),
            json!({"action": "decline"}),
        )]);
        assert_eq!(answered(&elsewhere), Asked::Unmatched);
        assert_eq!(
            answered(&rmcp::model::InputResponses::new()),
            Asked::Unmatched
        );
    }

    #[test]
    fn the_question_is_one_yes_or_no_field() {
        let requests = input_requests("Restart?".to_owned(), "I agree");
        let wire = serde_json::to_value(&requests).expect("serializes");
        assert_eq!(wire[QUESTION]["method"], "elicitation/create");
        let schema = &wire[QUESTION]["params"]["requestedSchema"];
        assert_eq!(schema["properties"][AGREE]["type"], "boolean");
        assert_eq!(schema["required"], json!([AGREE]));
        assert_eq!(wire[QUESTION]["params"]["message"], "Restart?");
    }
}
