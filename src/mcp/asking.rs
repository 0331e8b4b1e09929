//! The person's own yes to an action, asked through their client (MCP elicitation) before
//! anything is sent. The offer proves a rehearsal happened, but the model chooses to pass it on;
//! a question the client puts to the person is the one yes the model cannot give.
//!
//! A session's client is asked while the call waits, for at most two minutes. From 2026-07-28 a
//! call cannot wait on the client, so it answers that the person's input is required, and the
//! client calls again with the answer and the sealed question the server handed out.

use std::time::Duration;

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, PrimitiveSchemaDefinition,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::access::consent::{Consent, NoConsent};
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
    /// No answer in time, or the client failed to put the question.
    NoAnswer,
    /// The client did not declare that it can ask its person.
    CannotAsk,
}

/// Whether what came of asking is a yes to act on, under the settings' consent mode. A no or a
/// cancelled question refuses whatever the mode.
pub fn decide(mode: ConsentMode, asked: Asked) -> Result<Consent, NoConsent> {
    match (asked, mode) {
        (Asked::Yes, _) => Ok(Consent::Asked),
        (Asked::No, _) => Err(NoConsent::Declined),
        (Asked::Cancelled, _) => Err(NoConsent::Cancelled),
        (Asked::NoAnswer, ConsentMode::Offer) => Ok(Consent::Offer),
        (Asked::NoAnswer, ConsentMode::Ask | ConsentMode::Both) => Err(NoConsent::NoAnswer),
        (Asked::CannotAsk, ConsentMode::Offer | ConsentMode::Both) => Ok(Consent::Offer),
        (Asked::CannotAsk, ConsentMode::Ask) => Err(NoConsent::CannotAsk),
    }
}

/// Whether the client this request came from declared that it can put a form to its person.
pub fn can_ask(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
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
            Err(error) => {
                tracing::info!(%error, "the client did not put the question to the person");
                Asked::NoAnswer
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

/// The person's answer among a 2026-07-28 call's input responses; anything that is not an
/// answer to the question is no answer.
pub fn answered(responses: Option<&rmcp::model::InputResponses>) -> Asked {
    responses
        .and_then(|responses| responses.get(QUESTION))
        .and_then(|response| serde_json::from_value::<ElicitResult>(response.clone()).ok())
        .map_or(Asked::NoAnswer, |result| answer(&result))
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

    #[test]
    fn only_a_yes_acts_and_a_no_or_a_cancel_never_whatever_the_mode() {
        for mode in [ConsentMode::Ask, ConsentMode::Offer, ConsentMode::Both] {
            assert_eq!(decide(mode, Asked::Yes), Ok(Consent::Asked));
            assert_eq!(decide(mode, Asked::No), Err(NoConsent::Declined));
            assert_eq!(decide(mode, Asked::Cancelled), Err(NoConsent::Cancelled));
        }
    }

    #[test]
    fn where_the_person_cannot_answer_the_mode_decides() {
        assert_eq!(
            decide(ConsentMode::Ask, Asked::CannotAsk),
            Err(NoConsent::CannotAsk)
        );
        assert_eq!(
            decide(ConsentMode::Ask, Asked::NoAnswer),
            Err(NoConsent::NoAnswer)
        );
        assert_eq!(
            decide(ConsentMode::Offer, Asked::CannotAsk),
            Ok(Consent::Offer)
        );
        assert_eq!(
            decide(ConsentMode::Offer, Asked::NoAnswer),
            Ok(Consent::Offer)
        );
        assert_eq!(
            decide(ConsentMode::Both, Asked::CannotAsk),
            Ok(Consent::Offer)
        );
        assert_eq!(
            decide(ConsentMode::Both, Asked::NoAnswer),
            Err(NoConsent::NoAnswer)
        );
    }

    #[test]
    fn an_accept_is_a_yes_only_with_the_field_set_to_true() {
        let responses = |response: Value| {
            let responses = rmcp::model::InputResponses::from([(QUESTION.to_owned(), response)]);
            answered(Some(&responses))
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
        assert_eq!(responses(json!({"agree": true})), Asked::NoAnswer);
        assert_eq!(answered(None), Asked::NoAnswer);
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
