//! `lemonfiber-mcp http`: MCP Streamable HTTP over TLS, for an assistant on a phone or in a
//! browser (F13-R8). Every request brings its own integration key as a bearer; the server holds
//! none. Nothing is served until an address is asked for.

mod body;
mod client_address;
mod guard;
mod in_session;
mod jsonrpc;
mod keys;
mod limits;
mod oauth;
mod priming;
mod reaching;
pub use oauth::grants;
mod refused;
mod sessions;
mod stateless;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum_server::accept::NoDelayAcceptor;
use axum_server::tls_rustls::RustlsConfig;
use serde_json::json;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::tls;
use crate::access::consent::Seal;
use crate::access::sealing::SealError;
use crate::config::{self, ConfigError, ConsentMode, HttpSettings, TlsMode, TrustedProxies};
use crate::fingerprint::{Fingerprint, SpkiPin};
use crate::mcp::audit;
use crate::mcp::server::Common;
use crate::serve::Fatal;
use guard::{Checks, refusal};
use keys::{Admission, KeyService, KeyServices, SessionsFull};
use limits::{PeerAllowances, PeersAtOnce};
use refused::RefusedKeys;

/// How long a client has to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client has to send a request's body, once its headers have come.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a request may take to be answered (a streamed answer may go on after).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
const SESSION_HEADER: &str = "mcp-session-id";
const CLOSE: HeaderValue = HeaderValue::from_static("close");
/// Sign-in requests (registration, discovery, the page, tokens) answered at once, over everyone,
/// once each has its body in hand: a pool of their own, so keyed requests never wait on sign-in.
const SIGN_IN_UNDER_WAY: usize = 64;
/// How long a stopping server waits for the certificate's keeper to withdraw what it put out
/// (an ACME DNS record), which the operator's hook may take a while to do.
const KEEPER_FINISHES_WITHIN: Duration = Duration::from_secs(30);

struct App {
    checks: Checks,
    /// Whose word about a request's client is believed (see `client_address`).
    proxies: TrustedProxies,
    sign_in: oauth::SignIn,
    keys: KeyServices,
    /// What stands for the person's yes, which the sign-in page tells them before they allow.
    consent: ConsentMode,
    peers: PeerAllowances,
    /// Requests that carry no key under way at once from each peer, counted from their headers
    /// to their answer, slow bodies and all.
    keyless: PeersAtOnce,
    /// Requests to `/mcp` under way at once, over everyone.
    under_way: Arc<Semaphore>,
    /// Sign-in requests being answered at once, over everyone (`SIGN_IN_UNDER_WAY`).
    signing_in: Arc<Semaphore>,
}

/// A running HTTP mode: where it listens and the certificate it serves.
pub struct Serving {
    pub address: SocketAddr,
    pub fingerprint: Fingerprint,
    /// The served certificate's public-key pin, for the clients that pin a key (curl, browsers).
    pub spki: SpkiPin,
    /// The private root's fingerprint, in the mode that has one.
    pub root_fingerprint: Option<Fingerprint>,
    /// The PEM a client trusts to check the server.
    pub trust_file: std::path::PathBuf,
    /// Who can check the certificate served (F13-R13).
    pub who_can_check: String,
    /// The task keeping the certificate current, to let it finish (withdraw an ACME answer)
    /// once `ends` is cancelled.
    pub certificate_keeper: tokio::task::JoinHandle<()>,
    pub ends: CancellationToken,
    pub done: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Why the HTTP mode could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Certificate(#[from] tls::CertError),
    #[error("cannot listen on {0}: {1}")]
    Listen(SocketAddr, #[source] std::io::Error),
    #[error(transparent)]
    Seal(#[from] SealError),
    #[error(transparent)]
    SignIn(#[from] oauth::SignInError),
    #[error("cannot serve TLS: {0}")]
    Tls(#[source] std::io::Error),
}

/// Starts serving; answers once listening.
pub async fn serve(settings: HttpSettings) -> Result<Serving, StartError> {
    let cannot_listen = |error| StartError::Listen(settings.listen, error);
    let listener = std::net::TcpListener::bind(settings.listen).map_err(cannot_listen)?;
    listener.set_nonblocking(true).map_err(cannot_listen)?;
    let address = listener.local_addr().map_err(cannot_listen)?;
    let seal = Seal::kept_in(&settings.state, settings.conduct.offer_life)?;
    let sign_in = oauth::SignIn::new(&settings.state, &settings.sign_in, settings.stack.clone())?;
    let consent = settings.conduct.consent;
    let common = Arc::new(Common::new(settings.conduct, seal));
    let ends = CancellationToken::new();
    // Clients check the proxy's certificate only when they come through one that is trusted.
    let behind = settings
        .public_url
        .as_ref()
        .filter(|_| !settings.proxies.blocks.is_empty())
        .map(config::PublicUrl::mcp);
    let certificate = tls::serve_certificate(
        &settings.tls,
        &settings.state,
        &settings.names,
        behind.as_deref(),
        &ends,
    )?;
    // Whatever fails from here on stops the certificate's keeper too.
    let stop_if_not_started = ends.clone().drop_guard();
    let limits = settings.limits;
    let mut ports = vec![address.port()];
    ports.extend(settings.public_port.filter(|&port| port != address.port()));
    let checks = Checks::new(
        &settings.names,
        settings.origins,
        &ports,
        settings.public_url.as_ref(),
    );
    let mcp_config = checks.mcp_service_config();
    let app = Arc::new(App {
        checks,
        proxies: settings.proxies,
        sign_in,
        keys: KeyServices::new(
            settings.stack,
            mcp_config,
            common,
            limits,
            ends.clone(),
            RefusedKeys::kept_in(&settings.state),
        ),
        consent,
        peers: PeerAllowances::new(limits.peer_per_minute, limits.peer_new_keys_per_minute),
        keyless: PeersAtOnce::new(limits.peer_at_once),
        under_way: Arc::new(Semaphore::new(limits.under_way.get())),
        signing_in: Arc::new(Semaphore::new(SIGN_IN_UNDER_WAY)),
    });
    let mut router = Router::new()
        .route("/health", get(health))
        .route("/mcp", any(mcp))
        .merge(oauth::routes());
    if let Some(root) = certificate.root_pem.clone() {
        router = router.route(
            "/root.pem",
            get(
                move |State(app): State<Arc<App>>, uri: Uri, headers: HeaderMap| {
                    root_pem(app, uri, headers, root.clone())
                },
            ),
        );
    }
    let router = router
        .fallback(|| async {
            refusal(StatusCode::NOT_FOUND, "not_found", "MCP is served at /mcp.")
        })
        .with_state(app);
    let mut server =
        axum_server::from_tcp_rustls(listener, RustlsConfig::from_config(certificate.config))
            .map_err(StartError::Tls)?
            .map(|acceptor| acceptor.acceptor(NoDelayAcceptor));
    server
        .http_builder()
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    let handle = axum_server::Handle::new();
    let stop = handle.clone();
    let cancelled = ends.clone();
    tokio::spawn(async move {
        cancelled.cancelled().await;
        stop.graceful_shutdown(Some(Duration::from_secs(5)));
    });
    let done = tokio::spawn(
        server
            .handle(handle)
            .serve(router.into_make_service_with_connect_info::<SocketAddr>()),
    );
    stop_if_not_started.disarm();
    Ok(Serving {
        address,
        fingerprint: certificate.fingerprint,
        spki: certificate.spki,
        root_fingerprint: certificate.root_fingerprint,
        trust_file: certificate.trust_file,
        who_can_check: certificate.who_can_check,
        certificate_keeper: certificate.keeper,
        ends,
        done,
    })
}

/// The HTTP mode, started: what `run` says it serves, and the server.
pub struct Started {
    /// The URL a client uses.
    pub url: String,
    pub tls_mode: &'static str,
    pub serving: Serving,
}

/// Starts the HTTP mode with the settings read through `lookup`: the environment, for `run`; the
/// benchmark's own, for the server it runs in its process to count allocations.
pub async fn start(
    lookup: impl Fn(&str) -> Option<String>,
    listen: Option<SocketAddr>,
) -> Result<Started, Fatal> {
    let settings = config::http_settings(lookup, listen)?;
    settings.stack.pin.withhold_from_output();
    audit::write_to(settings.conduct.audit.as_deref()).map_err(Fatal::AuditFile)?;
    let names = settings.names.clone();
    let public_port = settings.public_port;
    let public_url = settings.public_url.as_ref().map(config::PublicUrl::mcp);
    let tls_mode = settings.tls.name();
    let stack = settings.stack.clone();
    let serving = serve(settings).await?;
    tokio::spawn(reaching::check_at_start(stack));
    let reached_at = SocketAddr::new(
        serving.address.ip(),
        public_port.unwrap_or(serving.address.port()),
    );
    Ok(Started {
        url: public_url.unwrap_or_else(|| mcp_url(&names, reached_at)),
        tls_mode,
        serving,
    })
}

pub async fn run(listen: Option<SocketAddr>, print_json: bool) -> Result<(), Fatal> {
    let Started {
        url,
        tls_mode,
        serving,
    } = start(|name| std::env::var(name).ok(), listen).await?;
    let spki = serving.spki.to_base64();
    tracing::info!(
        url = %url,
        fingerprint = %serving.fingerprint.to_hex(),
        spki_sha256 = %spki,
        "serving MCP over HTTPS"
    );
    tracing::info!(mode = tls_mode, "{}", serving.who_can_check);
    if print_json {
        let line = json!({
            "mcp_url": url,
            "mcp_pin": serving.fingerprint.to_hex(),
            "spki_sha256": spki,
            "root_fingerprint": serving.root_fingerprint.map(Fingerprint::to_hex),
            "certificate_file": serving.trust_file.display().to_string(),
            "tls_mode": tls_mode,
        });
        println!("{line}");
    } else {
        print_for_a_person(&url, tls_mode, &serving);
    }
    let Serving {
        ends,
        done,
        certificate_keeper,
        ..
    } = serving;
    tokio::select! {
        () = crate::serve::stop_requested() => {
            ends.cancel();
            let _ = tokio::time::timeout(KEEPER_FINISHES_WITHIN, certificate_keeper).await;
            Ok(())
        }
        served = done => match served {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(Fatal::HttpsStopped(error)),
            Err(error) => Err(Fatal::HttpsAbandoned(error)),
        },
    }
}

/// What `run` says it serves, for the person who started it: in private-ca mode the root first,
/// since that is what a device checks and installs, and the leaf it issues changes every week.
fn print_for_a_person(url: &str, tls_mode: &str, serving: &Serving) {
    if let Some(root) = serving.root_fingerprint {
        println!(
            "Private root fingerprint (SHA-256): {}",
            root.to_colon_pairs()
        );
        println!(
            "  Install the root ({}, also served at /root.pem) on each device, after checking that the device \
             shows this fingerprint for it.",
            serving.trust_file.display()
        );
    }
    println!("Serving MCP at {url}");
    println!(
        "Certificate fingerprint (SHA-256): {}",
        serving.fingerprint.to_hex()
    );
    let spki = serving.spki.to_base64();
    println!(
        "Public key pin (SPKI SHA-256, base64): {spki}   (curl: --pinnedpubkey sha256//{spki})"
    );
    println!("  {}", how_long_the_pins_last(tls_mode));
    println!("{}", serving.who_can_check);
}

/// Whether a client may pin what is printed, in the mode `tls_mode` names.
fn how_long_the_pins_last(tls_mode: &str) -> &'static str {
    match tls_mode {
        "private-ca" => {
            "Both change every week, when the certificate is renewed: pin or install the root above instead."
        }
        "acme" => {
            "Both change at every renewal (each brings a new key): let clients trust the authority rather than pin \
             these."
        }
        "files" => {
            "Both change when your files are replaced (the public key pin only if the key is replaced too)."
        }
        _ => {
            "Both stay the same across restarts, until `lemonfiber-mcp certificate rotate` or a change of \
             LEMONFIBER_NAMES replaces the certificate."
        }
    }
}

/// The URL a client uses: the address listened on when it is one of the served names, else the
/// first served name, at the port it is reached at (named only when it is not HTTPS's own).
pub fn mcp_url(names: &[String], address: SocketAddr) -> String {
    let ip = address.ip().to_string();
    let host = if names.contains(&ip) {
        ip
    } else {
        names.first().cloned().unwrap_or(ip)
    };
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    match address.port() {
        443 => format!("https://{host}/mcp"),
        port => format!("https://{host}:{port}/mcp"),
    }
}

/// `lemonfiber-mcp certificate rotate`: a new certificate in place of the one kept in the state
/// folder, which a running server serves within seconds, connections already open keeping theirs.
pub fn rotate() -> Result<(), Fatal> {
    let set = |name: &str| std::env::var(name).ok();
    let names = config::served_names(&set)?;
    let state = config::state_folder(&set)?;
    let mode = config::tls_mode(&set)?;
    if mode != TlsMode::Pinned {
        return Err(ConfigError::RotateIsPinned(mode.name()).into());
    }
    // A certificate made where no pinned server serves from would be a fingerprint nothing
    // serves, and in a folder that did not exist, a fresh one nobody asked for.
    let refused = match tls::what_is_in(&state) {
        tls::Holds::PinnedCertificate => None,
        tls::Holds::NoFolder => Some(ConfigError::RotateNoState(state.clone())),
        tls::Holds::PrivateRoot => Some(ConfigError::RotateHoldsPrivateRoot(state.clone())),
        tls::Holds::Acme => Some(ConfigError::RotateHoldsAcme(state.clone())),
        tls::Holds::NoCertificate => Some(ConfigError::RotateNoCertificate(state.clone())),
    };
    if let Some(refused) = refused {
        return Err(refused.into());
    }
    let presented = tls::make_and_keep(&state, &names).map_err(StartError::from)?;
    println!(
        "New certificate fingerprint (SHA-256): {}",
        presented.fingerprint.to_hex()
    );
    println!(
        "New public key pin (SPKI SHA-256, base64): {}",
        presented.spki.to_base64()
    );
    println!(
        "Every client that pins the old fingerprint or public key must be given the new one: until then \
         it cannot connect."
    );
    Ok(())
}

/// The private root, for a household device to install; it is public, so no key is asked for,
/// but it is served only under a served name, as every request is.
async fn root_pem(app: Arc<App>, uri: Uri, headers: HeaderMap, root: Arc<str>) -> Response {
    if let Err(refused) = app.checks.served_host(&uri, &headers) {
        return refused.into_response();
    }
    (
        [(header::CONTENT_TYPE, "application/x-pem-file")],
        root.to_string(),
    )
        .into_response()
}

/// Says the server is up; nothing about any key. Served only under a served name, as every
/// request is: a page that answers any `Host` lets another site's name reach it (DNS rebinding).
async fn health(State(app): State<Arc<App>>, uri: Uri, headers: HeaderMap) -> Response {
    if let Err(refused) = app.checks.served_host(&uri, &headers) {
        return refused.into_response();
    }
    let body = json!({ "status": "ok", "server": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION") });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Every request to `/mcp`: limits that cost nothing first, then its headers, its key, the
/// key's own limits, its body, and only then MCP.
async fn mcp(State(app): State<Arc<App>>, request: Request) -> Response {
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
/// not, decided from its headers alone.
async fn admitted(
    app: &App,
    client: IpAddr,
    request: &http::request::Parts,
) -> Result<(Arc<KeyService>, Held), NotAdmitted> {
    let Ok(everyone) = app.under_way.clone().try_acquire_owned() else {
        return Err(too_many(
            1,
            "The server has too many requests under way; try again shortly.",
        )
        .into());
    };
    if let Err(seconds) = app.peers.request(client) {
        return Err(too_many(
            seconds,
            "Too many requests from this address; wait before the next.",
        )
        .into());
    }
    let issuer = match app.checks.check(&request.uri, &request.headers) {
        Ok(host) => app.checks.issuer(&host),
        Err(refused) => {
            return Err(match refused.unsupported_version {
                Some(requested) => NotAdmitted::UnsupportedVersion(requested),
                None => refused.into_response().into(),
            });
        }
    };
    let key = oauth::key_of(&app.sign_in, &request.headers, &issuer)
        .map_err(|refused| refused.into_response())?;
    let opens = !request.headers.contains_key(SESSION_HEADER);
    let admission = match app.keys.known(&key, opens).await {
        Some(known) => known,
        None => {
            if let Err(seconds) = app.peers.new_key(client) {
                return Err(too_many(
                    seconds,
                    "Too many keys this server has not seen from this address; wait before the next.",
                )
                .into());
            }
            app.keys.check(key).await
        }
    };
    let service = match admission {
        Admission::Accepted(service) => service,
        Admission::Refused => return Err(oauth::key_refused(&issuer).into_response().into()),
        Admission::Throttled(seconds) => {
            return Err(too_many(
                seconds.unwrap_or(30),
                "The stack is turning requests from this key away for now; wait before the next.",
            )
            .into());
        }
        Admission::NotPinned => {
            return Err(refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "stack_not_pinned",
                "The stack does not count this server's connection as pinned (ADMIT-11), so it will not take the \
                 key over it. The operator should check the stack's address and pin this server was given.",
            )
            .into());
        }
        Admission::Unreachable => {
            return Err(after(
                5,
                refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "stack_unreachable",
                    "The stack could not be asked about this key: it did not answer, or its certificate is not \
                     the pinned one. Try again shortly.",
                ),
            )
            .into());
        }
    };
    if let Err(seconds) = service.admit() {
        return Err(too_many(
            seconds,
            "This key has made too many requests; wait before the next.",
        )
        .into());
    }
    // The standing stream a session opens with GET lasts as long as the session: once its key
    // is checked it is no longer a request under way.
    if request.method == Method::GET {
        return Ok((service, (None, None)));
    }
    match service.under_way() {
        Some(this_key) => Ok((service, (Some(everyone), Some(this_key)))),
        None => Err(too_many(
            1,
            "This key has too many requests under way at once; wait for one to finish.",
        )
        .into()),
    }
}

/// A refusal sent before the request's body was read closes the connection, and says so: the
/// server drops what is left of the body, and a client that sent its next request on the same
/// connection would have it cut off unanswered.
fn unread(headers: &http::HeaderMap, mut refused: Response) -> Response {
    let has_body = headers.contains_key(header::CONTENT_LENGTH)
        || headers.contains_key(header::TRANSFER_ENCODING);
    if has_body {
        refused.headers_mut().insert(header::CONNECTION, CLOSE);
    }
    refused
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
    let mut refused = match read.await {
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
    refused.headers_mut().insert(header::CONNECTION, CLOSE);
    Err(refused)
}

/// A POST: one JSON-RPC message, within the cap. A message MCP cannot read is answered as
/// JSON-RPC says, as one the server's own look refused would be.
async fn post(app: &App, service: &KeyService, request: Request, held: Held) -> Response {
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
    held: Held,
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
type Held = (Option<OwnedSemaphorePermit>, Option<OwnedSemaphorePermit>);

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
async fn answered(service: &KeyService, request: Request, held: Held, primes: bool) -> Response {
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

/// The refusal of a request that carries no key from a peer with as many under way as it may.
fn too_many_from_this_address() -> Response {
    too_many(
        1,
        "Too many requests from this address are under way at once; wait for one to finish.",
    )
}

fn too_many(seconds: u64, description: &str) -> Response {
    after(
        seconds,
        refusal(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_requests",
            description,
        ),
    )
}

/// A refusal that says when to try again.
fn after(seconds: u64, mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}
