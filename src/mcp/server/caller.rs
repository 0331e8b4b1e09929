//! Who a call is for: the client, how it is told of progress, whether it has cancelled, and
//! whether and how its person can be asked.

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, InputResponses, ProgressToken, RequestMetaObject};
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use crate::mcp::asking;
use crate::mcp::audit;
use crate::mcp::reach::{Reach, SessionReach};
use crate::mcp::versions;

/// Who a call is for: the client, the progress token it gave (if any), whether it has cancelled
/// the request, and how its person can be asked.
pub struct Caller {
    pub(super) reach: Reach,
    pub(super) progress: Option<ProgressToken>,
    pub(super) cancelled: CancellationToken,
    /// Whether the client declared that it can put a question to its person.
    pub(super) can_ask: bool,
    /// Whether the request speaks 2026-07-28 or later, where a call cannot wait on the client.
    pub(super) stateless: bool,
    /// On 2026-07-28, the question handed out before (sealed) and the client's answers to it.
    pub(super) answer: Option<(String, InputResponses)>,
    /// Where the request came from, over HTTP.
    pub(super) client: Option<std::net::IpAddr>,
}

impl Caller {
    pub(super) fn of(context: &RequestContext<RoleServer>) -> Caller {
        Caller {
            reach: Reach::Peer(context.peer.clone()),
            progress: context.meta.get_progress_token(),
            cancelled: context.ct.clone(),
            can_ask: asking::can_ask(context.client_capabilities()),
            stateless: versions::stateless(context.protocol_version()),
            answer: None,
            client: context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|request| request.extensions.get::<audit::ClientAddress>())
                .map(|&audit::ClientAddress(address)| address),
        }
    }

    /// The caller of a stateless request the server serves itself, which says everything of
    /// itself in its `meta` and is reached by its own response.
    pub fn stateless(
        meta: &RequestMetaObject,
        client: Option<std::net::IpAddr>,
        reach: Reach,
        cancelled: CancellationToken,
    ) -> Caller {
        Caller {
            reach,
            progress: meta.get_progress_token(),
            cancelled,
            can_ask: asking::can_ask(meta.client_capabilities()),
            stateless: true,
            answer: None,
            client,
        }
    }

    /// The caller of a request of a session's that the server serves itself: the session's
    /// client, as the library's peer knows it, unless the request's `meta` says otherwise.
    pub fn in_session(
        reach: &SessionReach,
        meta: &RequestMetaObject,
        client: Option<std::net::IpAddr>,
        cancelled: CancellationToken,
    ) -> Caller {
        let declared = reach.peer.peer_info().map(|info| info.capabilities.clone());
        Caller {
            reach: Reach::Peer(reach.peer.clone()),
            progress: meta.get_progress_token(),
            cancelled,
            can_ask: asking::can_ask(meta.client_capabilities().or(declared)),
            stateless: false,
            answer: None,
            client,
        }
    }

    /// Whether this call puts a question: it can ask, and brings back no answer (2026-07-28).
    pub(super) fn puts_question(&self) -> bool {
        self.can_ask && !(self.stateless && self.answer.is_some())
    }

    /// The caller of a tool, with the answers its call brings back, if any.
    pub(super) fn calling(self, request: &mut CallToolRequestParams) -> Caller {
        let answer = request
            .request_state
            .take()
            .map(|question| (question, request.input_responses.take().unwrap_or_default()));
        Caller { answer, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;
    use tokio::sync::mpsc;

    fn caller(can_ask: bool, stateless: bool) -> Caller {
        let (response, _) = mpsc::channel(1);
        Caller {
            reach: Reach::Response(response),
            progress: None,
            cancelled: CancellationToken::new(),
            can_ask,
            stateless,
            answer: None,
            client: None,
        }
    }

    fn answered(caller: Caller) -> Caller {
        let mut request = CallToolRequestParams::new("cancel_download");
        request.request_state = Some("sealed question".to_owned());
        caller.calling(&mut request)
    }

    /// A client that cannot ask its person is never handed a question, whatever version it
    /// speaks: its call is decided by the settings' consent mode alone.
    #[test]
    fn a_caller_that_cannot_ask_never_puts_a_question() {
        assert!(!caller(false, false).puts_question());
        assert!(!caller(false, true).puts_question());
        assert!(!answered(caller(false, true)).puts_question());
    }

    /// On 2026-07-28 a call that brings back an answer is the second half of its question: it
    /// must not be asked again, or the person would be asked the same thing forever.
    #[test]
    fn a_stateless_call_that_brings_back_an_answer_puts_no_question_again() {
        assert!(caller(true, true).puts_question());
        assert!(!answered(caller(true, true)).puts_question());
    }

    /// Within a session the question is put while the call waits, so anything the request
    /// carries as an answer is no reason not to ask.
    #[test]
    fn a_caller_in_a_session_puts_its_question_even_with_an_answer_carried() {
        assert!(caller(true, false).puts_question());
        assert!(answered(caller(true, false)).puts_question());
    }

    #[test]
    fn calling_takes_the_sealed_question_and_its_answers_out_of_the_request() {
        let mut request = CallToolRequestParams::new("cancel_download");
        request.request_state = Some("sealed question".to_owned());
        let responses = InputResponses::from([("consent".to_owned(), json!({"agree": true}))]);
        request.input_responses = Some(responses.clone());
        let called = caller(true, true).calling(&mut request);
        assert_eq!(
            called.answer,
            Some(("sealed question".to_owned(), responses))
        );
        assert_eq!(request.request_state, None);
        assert_eq!(request.input_responses, None);
    }

    #[test]
    fn a_question_brought_back_without_answers_is_taken_with_none() {
        let mut request = CallToolRequestParams::new("cancel_download");
        request.request_state = Some("sealed question".to_owned());
        let called = caller(true, true).calling(&mut request);
        assert_eq!(
            called.answer,
            Some(("sealed question".to_owned(), InputResponses::new()))
        );
    }

    #[test]
    fn a_call_that_brings_back_no_question_carries_no_answer() {
        let mut request = CallToolRequestParams::new("cancel_download");
        request.input_responses = Some(InputResponses::new());
        let called = caller(true, true).calling(&mut request);
        assert_eq!(called.answer, None);
    }

    /// A stateless request says everything of itself in its `meta`: a client declaring it can
    /// put a form is asked, and never waited on.
    #[test]
    fn a_stateless_caller_asks_as_its_meta_declares() {
        let (response, _) = mpsc::channel(1);
        let mut meta = RequestMetaObject::default();
        let capabilities = serde_json::from_value(json!({ "elicitation": {} })).unwrap();
        meta.set_client_capabilities(capabilities);
        let declaring = Caller::stateless(
            &meta,
            None,
            Reach::Response(response.clone()),
            CancellationToken::new(),
        );
        assert!(declaring.can_ask);
        assert!(declaring.stateless);
        let silent = Caller::stateless(
            &RequestMetaObject::default(),
            None,
            Reach::Response(response),
            CancellationToken::new(),
        );
        assert!(!silent.can_ask);
        assert!(!silent.puts_question());
    }
}
