//! `lemonfiber-mcp http`: MCP Streamable HTTP over TLS, for an assistant on a phone or in a
//! browser (F13-R8). Every request brings its own integration key as a bearer; the server holds
//! none. Nothing is served until an address is asked for.

mod guard;
mod keys;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum_server::accept::NoDelayAcceptor;
use axum_server::tls_rustls::RustlsConfig;
use futures::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::Fatal;
use crate::certs::{self, Fingerprint};
use crate::config::{self, HttpSettings};
use guard::{Checks, refusal};
use keys::KeyServices;

/// How long a client has to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request may take to be answered (a streamed answer may go on after).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
const SESSION_HEADER: &str = "mcp-session-id";

struct App {
    checks: Checks,
    keys: KeyServices,
}

/// A running HTTP mode: where it listens and the certificate it serves.
pub struct Serving {
    pub address: SocketAddr,
    pub fingerprint: Fingerprint,
    pub certificate_file: std::path::PathBuf,
    pub ends: CancellationToken,
    pub done: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Starts serving; answers once listening.
pub async fn serve(settings: HttpSettings) -> Result<Serving, String> {
    let certificate = certs::own_certificate(&settings.state, &settings.names)
        .map_err(|error| error.to_string())?;
    let listener = std::net::TcpListener::bind(settings.listen)
        .map_err(|error| format!("cannot listen on {}: {error}", settings.listen))?;
    listener
        .set_nonblocking(true)
        .map_err(|error| format!("cannot listen on {}: {error}", settings.listen))?;
    let address = listener
        .local_addr()
        .map_err(|error| format!("cannot listen on {}: {error}", settings.listen))?;
    let ends = CancellationToken::new();
    let app = Arc::new(App {
        checks: Checks::new(&settings.names, settings.origins, address.port()),
        keys: KeyServices::new(
            settings.stack,
            settings.names,
            settings.job_wait,
            settings.limits,
            ends.clone(),
        ),
    });
    let router = Router::new()
        .route("/health", get(health))
        .route("/mcp", any(mcp))
        .fallback(|| async {
            refusal(StatusCode::NOT_FOUND, "not_found", "MCP is served at /mcp.")
        })
        .with_state(app);
    let mut server =
        axum_server::from_tcp_rustls(listener, RustlsConfig::from_config(certificate.config))
            .map_err(|error| format!("cannot serve TLS: {error}"))?
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
    let done = tokio::spawn(server.handle(handle).serve(router.into_make_service()));
    Ok(Serving {
        address,
        fingerprint: certificate.fingerprint,
        certificate_file: certificate.certificate_file,
        ends,
        done,
    })
}

pub async fn run(listen: Option<SocketAddr>, print_json: bool) -> Result<(), Fatal> {
    let settings = config::http_settings(|name| std::env::var(name).ok(), listen)
        .map_err(|error| Fatal::Settings(error.to_string()))?;
    if let crate::stack::pin::Trust::Pinned(pin) = settings.stack.trust {
        pin.withhold_from_output();
    }
    let names = settings.names.clone();
    let serving = serve(settings).await.map_err(Fatal::Failed)?;
    let url = mcp_url(&names, serving.address);
    tracing::info!(url = %url, fingerprint = %serving.fingerprint, "serving MCP over HTTPS");
    tracing::info!("{}", who_can_check(&serving.fingerprint));
    if print_json {
        let line = json!({
            "mcp_url": url,
            "mcp_pin": serving.fingerprint.to_string(),
            "certificate_file": serving.certificate_file.display().to_string(),
        });
        println!("{line}");
    } else {
        println!("Serving MCP at {url}");
        println!("Certificate fingerprint (SHA-256): {}", serving.fingerprint);
        println!("{}", who_can_check(&serving.fingerprint));
    }
    let Serving { ends, done, .. } = serving;
    tokio::select! {
        () = crate::stop_requested() => {
            ends.cancel();
            Ok(())
        }
        served = done => match served {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(Fatal::Failed(format!("the HTTPS server stopped: {error}"))),
            Err(error) => Err(Fatal::Failed(format!("the HTTPS server stopped: {error}"))),
        },
    }
}

/// The URL a client uses: the address listened on when it is one of the served names, else the
/// first served name, at the bound port.
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
    format!("https://{host}:{}/mcp", address.port())
}

/// F13-R13: who can check the certificate this mode serves.
pub fn who_can_check(fingerprint: &Fingerprint) -> String {
    format!(
        "This server serves a certificate of its own. Only a client that pins its fingerprint ({fingerprint}) or \
         trusts the certificate file can check it, so only assistants that connect from your own devices can \
         reach it. An assistant whose provider makes the connection can reach it only with a publicly trusted \
         certificate."
    )
}

/// Says the server is up; nothing about any key.
async fn health() -> Response {
    let body = json!({ "status": "ok", "server": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION") });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn mcp(State(app): State<Arc<App>>, request: Request) -> Response {
    if let Err(refused) = app.checks.check(request.headers()) {
        return refused.into_response();
    }
    let key = match guard::bearer(request.headers()) {
        Ok(key) => key,
        Err(refused) => return refused.into_response(),
    };
    let service = match app.keys.of(key) {
        Ok(service) => service,
        Err(error) => {
            tracing::warn!(%error, "a key's service could not be made");
            return refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "The server cannot reach out to the stack.",
            );
        }
    };
    let limits = app.keys.limits();
    if let Err(seconds) = service.admit(limits.per_minute) {
        return too_many(
            seconds,
            "This key has made too many requests; wait before the next.",
        );
    }
    // The standing stream a session opens with GET lasts as long as the session; it is not a
    // request under way.
    let permit = if request.method() == Method::GET {
        None
    } else {
        match service.under_way() {
            Some(permit) => Some(permit),
            None => {
                return too_many(
                    1,
                    "This key has too many requests under way at once; wait for one to finish.",
                );
            }
        }
    };
    let opens_a_session =
        request.method() == Method::POST && !request.headers().contains_key(SESSION_HEADER);
    let method_was_delete = request.method() == Method::DELETE;
    let Ok(response) = tokio::time::timeout(REQUEST_TIMEOUT, service.service.handle(request)).await
    else {
        return refusal(
            StatusCode::GATEWAY_TIMEOUT,
            "timeout",
            "The request took too long to answer.",
        );
    };
    if opens_a_session
        && let Some(session) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
        && app.keys.open_sessions().await > usize::try_from(limits.sessions).unwrap_or(usize::MAX)
    {
        service.close_session(session).await;
        return too_many(
            30,
            "Too many sessions are open on this server; try again later.",
        );
    }
    let (mut parts, body) = response.into_parts();
    // A closed session is answered "no content", which every client takes as done.
    if method_was_delete && parts.status == StatusCode::ACCEPTED {
        parts.status = StatusCode::NO_CONTENT;
    }
    // The permit is held until the answer has been sent in full.
    let body = Body::new(body).into_data_stream().map(move |chunk| {
        let _held = &permit;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

fn too_many(seconds: u64, description: &str) -> Response {
    let mut response = refusal(
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_requests",
        description,
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}
