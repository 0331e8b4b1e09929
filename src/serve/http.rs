//! The HTTP mode: MCP Streamable HTTP over TLS, for an assistant on a phone or in a browser
//! (F13-R8), with sign-in beside it. Every request brings its own integration key as a bearer;
//! the server holds none. Nothing is served until an address is asked for.

mod client_address;
mod endpoint;
mod front;
mod guard;
mod in_session;
mod jsonrpc;
mod keys;
mod limits;
mod priming;
mod reaching;
pub use reaching::check_at_start;
mod refused;
mod sessions;
mod stateless;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum_server::accept::NoDelayAcceptor;
use axum_server::tls_rustls::RustlsConfig;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::tls;
use crate::access::consent::Seal;
use crate::access::sealing::SealError;
use crate::config::{self, CLIENT_DOCUMENT_ROOTS, ConsentMode, HttpSettings, TrustedProxies};
use crate::fingerprint::{Fingerprint, SpkiPin};
use crate::mcp::server::Common;
use crate::sign_in::{self, DocumentRoots, SignIn};
use crate::web::refusing::refusal;
use guard::Checks;
use keys::KeyServices;
use limits::{PeerAllowances, PeersAtOnce};
use refused::RefusedKeys;

/// How long a client has to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Sign-in requests (registration, discovery, the page, tokens) answered at once, over everyone,
/// once each has its body in hand: a pool of their own, so keyed requests never wait on sign-in.
const SIGN_IN_UNDER_WAY: usize = 64;

struct App {
    checks: Checks,
    /// Whose word about a request's client is believed (see `client_address`).
    proxies: TrustedProxies,
    sign_in: SignIn,
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
    SignIn(#[from] sign_in::SignInError),
    #[error("{CLIENT_DOCUMENT_ROOTS}: {0}")]
    DocumentRoots(#[source] tls::CertError),
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
    let document_roots = match &settings.sign_in.client_document_roots {
        Some(file) => Some(DocumentRoots {
            file: file.clone(),
            roots: tls::chain_in(file).map_err(StartError::DocumentRoots)?,
        }),
        None => None,
    };
    let sign_in = SignIn::new(
        &settings.state,
        &settings.sign_in,
        document_roots,
        settings.stack.clone(),
    )?;
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
        .route("/mcp", any(endpoint::mcp))
        .merge(sign_in::routes());
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
