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
