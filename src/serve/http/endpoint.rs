//! The MCP endpoint, `/mcp`: each request admitted (limits, the guard, its key, the key's own
//! limits) from its headers alone, then its body read within bounds, and answered by the key's
//! MCP service, or here for the calls the server serves itself (`stateless`, `in_session`),
//! holding its permits until its answer has been sent.

// A refusal is the answer itself, handed straight to the client: boxing it would only move it.
#![allow(clippy::result_large_err)]

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::OwnedSemaphorePermit;

use super::keys::{Admission, KeyService, SessionsFull};
use super::{App, client_address, guard, in_session, jsonrpc, priming, sessions, stateless};
use crate::mcp::audit;
use crate::sign_in;
use crate::stack::credential::Key;
use crate::web::body;
use crate::web::refusing::{
    after, closing, over_the_address_allowance, refusal, too_many, too_many_from_this_address,
    unread,
};

/// How long a client has to send a request's body, once its headers have come.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a request may take to be answered (a streamed answer may go on after).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
const SESSION_HEADER: &str = "mcp-session-id";

/// Every request to `/mcp`: limits that cost nothing first, then its headers, its key, the
/// key's own limits, its body, and only then MCP.
pub async fn mcp(State(app): State<Arc<App>>, request: Request) -> Response {
    // The body is not Sync, so only the head is looked at across the checks' waits.
    let (mut head, body) = request.into_parts();
    let client = client_address::of(&head, &app.proxies);
    // For the audit line of what the request calls.
    head.extensions.insert(audit::ClientAddress(client));
    // The checks' and MCP's states are kilobytes each; on the heap, the router moves a pointer
    // to them, not their bytes, each time it hands this request on.
    let admission = Box::pin(admitted(&app, client, &head)).await;
    let request = Request::from_parts(head, body);
    let (service, held) = match admission {
        Ok(admitted) => admitted,
        Err(NotAdmitted::UnsupportedVersion(requested)) => {
            // Its body is read before any key is, so it is a request anyone may send.
            let Some(_turn) = app.keyless.take(client) else {
                return unread(request.headers(), too_many_from_this_address());
            };
            return answer_unsupported_version(request, &requested).await;
        }
        Err(NotAdmitted::Refused(refused)) => return unread(request.headers(), refused),
    };
    match *request.method() {
        Method::POST => post(&app, &service, request, held).await,
        Method::DELETE => delete(&service, request).await,
        _ => {
            let primes = primes(&request, None);
            answered(&service, request, held, primes).await
        }
    }
}

/// Why a request to `/mcp` goes no further than its headers.
enum NotAdmitted {
    /// It names a protocol version this server does not speak: answered to its message's id.
    UnsupportedVersion(String),
    Refused(Response),
}

impl From<Response> for NotAdmitted {
    fn from(refused: Response) -> NotAdmitted {
        NotAdmitted::Refused(refused)
    }
}

/// The key's service a request is admitted to, with the permits it holds while under way; or why
/// not, decided from its headers alone: limits that cost nothing first, then the request's look,
/// its key, and the key's own limits.
async fn admitted(
    app: &App,
    client: IpAddr,
    request: &Parts,
) -> Result<(Arc<KeyService>, RequestPermits), NotAdmitted> {
    let everyone = a_place_among_everyone(app)?;
    within_the_address_allowance(app, client)?;
    let issuer = served_issuer(app, request)?;
    let key = sign_in::key_of(&app.sign_in, &request.headers, &issuer)
        .map_err(IntoResponse::into_response)?;
    let service = service_of(app, client, key, request, &issuer).await?;
    service.admit().map_err(|seconds| {
        too_many(
            seconds,
            "This key has made too many requests; wait before the next.",
        )
    })?;
    held_while_under_way(service, request, everyone).map_err(NotAdmitted::from)
}

/// One of the requests to `/mcp` under way at once over everyone.
fn a_place_among_everyone(app: &App) -> Result<OwnedSemaphorePermit, Response> {
    app.under_way.clone().try_acquire_owned().map_err(|_| {
        too_many(
            1,
            "The server has too many requests under way; try again shortly.",
        )
    })
}

/// Takes one request from its address's allowance.
fn within_the_address_allowance(app: &App, client: IpAddr) -> Result<(), Response> {
    app.peers
        .request(client)
        .map_err(over_the_address_allowance)
}

/// This server's origin as the request names it, once its look (Host, Origin, protocol version,
/// body size) has passed the guard.
fn served_issuer(app: &App, request: &Parts) -> Result<String, NotAdmitted> {
    match app.checks.check(&request.uri, &request.headers) {
        Ok(host) => Ok(app.checks.issuer(&host)),
        Err(refused) => Err(match refused.unsupported_version {
            Some(requested) => NotAdmitted::UnsupportedVersion(requested),
            None => refused.into_response().into(),
        }),
    }
}

/// The key's service, once the stack has accepted the key: known already, or checked now if
/// its address may bring a key the server has not seen.
async fn service_of(
    app: &App,
    client: IpAddr,
    key: Key,
    request: &Parts,
    issuer: &str,
) -> Result<Arc<KeyService>, Response> {
    let opens = !request.headers.contains_key(SESSION_HEADER);
    let admission = match app.keys.known(&key, opens).await {
        Some(known) => known,
        None => {
            app.peers.new_key(client).map_err(|seconds| {
                too_many(
                    seconds,
                    "Too many keys this server has not seen from this address; wait before the next.",
                )
            })?;
            app.keys.check(key).await
        }
    };
    match admission {
        Admission::Accepted(service) => Ok(service),
        Admission::Refused => Err(sign_in::key_refused(issuer).into_response()),
        Admission::Throttled(seconds) => Err(too_many(
            seconds.unwrap_or(30),
            "The stack is turning requests from this key away for now; wait before the next.",
        )),
        Admission::NotPinned => Err(refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "stack_not_pinned",
            "The stack does not count this server's connection as pinned (ADMIT-11), so it will not take the \
             key over it. The operator should check the stack's address and pin this server was given.",
        )),
        Admission::Unreachable => Err(after(
            5,
            refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "stack_unreachable",
                "The stack could not be asked about this key: it did not answer, or its certificate is not \
                 the pinned one. Try again shortly.",
            ),
        )),
    }
}

/// The permits the request holds until its answer is sent: everyone's place and one of its
/// key's. The standing stream a session opens with GET lasts as long as the session: once its
/// key is checked it is no longer a request under way, and holds neither.
fn held_while_under_way(
    service: Arc<KeyService>,
    request: &Parts,
    everyone: OwnedSemaphorePermit,
) -> Result<(Arc<KeyService>, RequestPermits), Response> {
    if request.method == Method::GET {
        return Ok((service, (None, None)));
    }
    match service.under_way() {
        Some(this_key) => Ok((service, (Some(everyone), Some(this_key)))),
        None => Err(too_many(
            1,
            "This key has too many requests under way at once; wait for one to finish.",
        )),
    }
}

/// A request naming a protocol version this server does not speak, answered as JSON-RPC: to the
/// id its body gives, if it is a message with one.
async fn answer_unsupported_version(request: Request, requested: &str) -> Response {
    let id = match read_body(request.into_body()).await {
        Ok(bytes) => serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|message| message.get("id").cloned())
            .unwrap_or_default(),
        Err(refused) => return refused,
    };
    guard::unsupported_version(id, requested)
}

/// A request's whole body, within the cap and in time. A body refused is not read to its end,
/// so the connection closes after the refusal, which says so.
async fn read_body(body: Body) -> Result<bytes::Bytes, Response> {
    let most = usize::try_from(guard::BODY_LIMIT).unwrap_or(usize::MAX);
    let read = tokio::time::timeout(BODY_TIMEOUT, body::within(body, most));
    let refused = match read.await {
        Ok(Ok(bytes)) => return Ok(bytes),
        Ok(Err(body::NotRead::TooLarge)) => refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "The request body is larger than 4 MiB.",
        ),
        Ok(Err(body::NotRead::Malformed)) => refusal(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The request body could not be read: it is not framed as HTTP/1.1 frames a body (a chunk's size \
             is not a hexadecimal number, or the body ended before its end).",
        ),
        Err(_) => refusal(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            "The request body took too long to arrive.",
        ),
    };
    Err(closing(refused))
}

/// A POST: one JSON-RPC message, within the cap. A message MCP cannot read is answered as
/// JSON-RPC says, as one the server's own look refused would be.
async fn post(app: &App, service: &KeyService, request: Request, held: RequestPermits) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    let message = match jsonrpc::check(&bytes) {
        Ok(message) => message,
        Err(refused) => return refused.into_response(),
    };
    let client = parts
        .extensions
        .get::<audit::ClientAddress>()
        .map(|&audit::ClientAddress(address)| address);
    if message.calls_a_tool
        && let Some(call) = stateless::served_here(&parts.headers, &bytes)
    {
        let answering = stateless::answered(service.server(), call.ready(client), service.ends());
        return answered_here(answering, held).await;
    }
    if message.calls_a_tool
        && let Some(call) = in_session::served_here(&parts.headers, &bytes)
        && let Some((reach, in_use)) = service.call_in(&call.session).await
        && let Some(ready) = call.ready(&reach, client)
    {
        let server = service.server().in_session(&reach);
        let answering = stateless::answered(server, ready, service.ends());
        return answered_here(answering, (held, in_use)).await;
    }
    let request = Request::from_parts(parts, Body::from(bytes.clone()));
    let response = answered_post(app, service, request, held, &message).await;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && let Err(refused) = jsonrpc::as_mcp_reads_it(&bytes)
    {
        return refused.into_response();
    }
    response
}

/// The answer to a call the server serves itself, within the time an answer may take, holding
/// `held` until it has been sent.
async fn answered_here(
    answering: impl Future<Output = Option<Response>>,
    held: impl Send + Unpin + 'static,
) -> Response {
    match tokio::time::timeout(REQUEST_TIMEOUT, answering).await {
        Ok(Some(response)) => holding(response, held),
        Ok(None) => ending(),
        Err(_) => timed_out(),
    }
}

/// MCP's answer to a message, which opens a session only with the permits it would hold.
async fn answered_post(
    app: &App,
    service: &KeyService,
    request: Request,
    held: RequestPermits,
    message: &jsonrpc::Message,
) -> Response {
    let primes = primes(&request, message.initialize_asks.as_deref());
    // As the MCP library reads it: a session header that is not text names no session.
    let names_a_session = request
        .headers()
        .get(SESSION_HEADER)
        .is_some_and(|value| value.to_str().is_ok());
    let opens_a_session = message.initializes() && !names_a_session;
    if !opens_a_session {
        return answered(service, request, held, primes).await;
    }
    let permits = match app.keys.session_permits(service).await {
        Ok(permits) => permits,
        Err(SessionsFull::Server) => {
            return too_many(
                30,
                "Too many sessions are open on this server; try again later.",
            );
        }
        Err(SessionsFull::Key) => {
            return too_many(
                30,
                "This key has as many sessions open as it may, each with a request or stream still open; \
                 close one (DELETE) or try again later.",
            );
        }
    };
    sessions::with_permits(permits, answered(service, request, held, primes)).await
}

/// A DELETE ends a session of this key's; any other session, this key's or not, is not found.
async fn delete(service: &KeyService, request: Request) -> Response {
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    match session {
        Some(session) if service.has_session(&session).await => {}
        Some(_) => {
            return refusal(
                StatusCode::NOT_FOUND,
                "session_not_found",
                "No session of this key has that identifier.",
            );
        }
        None => {
            return refusal(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "A DELETE names the session to end in Mcp-Session-Id.",
            );
        }
    }
    let primes = primes(&request, None);
    let mut response = answered(service, request, (None, None), primes).await;
    // A closed session is answered "no content", which every client takes as done.
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// The permits a request holds until its answer has been sent in full: everyone's and its key's.
type RequestPermits = (Option<OwnedSemaphorePermit>, Option<OwnedSemaphorePermit>);

/// Whether the request's client expects the SSE priming event (see `priming`).
fn primes(request: &Request, initialize_asks: Option<&str>) -> bool {
    let header = request
        .headers()
        .get(guard::PROTOCOL_VERSION_HEADER)
        .and_then(|version| version.to_str().ok());
    priming::expected(header, initialize_asks)
}

/// MCP's answer to the request, within the time an answer may take; without the SSE priming
/// event for a client that does not expect it.
async fn answered(
    service: &KeyService,
    request: Request,
    held: RequestPermits,
    primes: bool,
) -> Response {
    let handled = Box::pin(service.service.handle(request));
    let Ok(response) = tokio::time::timeout(REQUEST_TIMEOUT, handled).await else {
        return timed_out();
    };
    let streamed = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|kind| kind.as_bytes().starts_with(b"text/event-stream"));
    let response = holding(response.map(Body::new), held);
    if streamed && !primes {
        let (parts, body) = response.into_parts();
        let events = priming::without_priming(body.into_data_stream());
        return Response::from_parts(parts, Body::from_stream(events));
    }
    response
}

/// `response`, holding what the request holds (its permits) until its body has been sent in full.
fn holding(response: Response, held: impl Send + Unpin + 'static) -> Response {
    response.map(|body| Body::new(Holding { body, _held: held }))
}

fn timed_out() -> Response {
    refusal(
        StatusCode::GATEWAY_TIMEOUT,
        "timeout",
        "The request took too long to answer.",
    )
}

/// The answer to a request under way when the server stops serving its key.
fn ending() -> Response {
    refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        "shutting_down",
        "The server stopped serving this key before the request was answered; try again.",
    )
}

/// An answer's body, holding the request's permits until it has been sent in full. It keeps the
/// body's length, so an answer of known length is sent with it rather than in chunks.
struct Holding<T> {
    body: Body,
    _held: T,
}

impl<T: Unpin> http_body::Body for Holding<T> {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, axum::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
