//! Sign-in for assistants hosted by their provider (MCP authorization, OAuth 2.1). Such an
//! assistant takes no bearer key from the person, only OAuth, so the HTTP mode is its own small
//! authorization server: the person gives their integration key (or a key link) on this server's
//! own page, and the access and refresh tokens the provider is handed are that key sealed with
//! the client, this server's MCP URL and an expiry. Every request still carries the person's key
//! (F13-R8), the server keeps no credential of its own for the stack, and the provider holds
//! nothing that works against the stack or any other server.
//!
//! Nothing is kept per client: client ids, codes and tokens are sealed (see `access::sealing`),
//! so a restart or a replica sharing the state folder knows them all. What may be used once (a
//! form, a code, a refresh token) is remembered as used, until it expires; and each grant handed
//! out is recorded (nothing secret in it) so that the client or the operator can end it early.

mod authorize;
mod bearer;
mod client_document;
mod clients;
mod discovery;
pub mod grants;
mod page;
mod params;
mod tokens;

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::sync::OwnedSemaphorePermit;

use super::limits::PeerTurn;
use super::{App, refusing};
use crate::access::sealing::{SealError, Sealer, Used};
use crate::config::SignInSettings;
use crate::stack::StackAddress;
pub use bearer::{key_of, key_refused};
pub use client_document::DocumentsError;

/// The one scope there is: what the key itself may do, which the stack decides.
const SCOPE: &str = "lemonfiber";
/// The MCP endpoint, the resource every token is for.
const MCP_PATH: &str = "/mcp";
const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// What sign-in keeps: the sealer, the record of what was used once, and its settings.
pub struct SignIn {
    sealer: Sealer,
    forms_used: Used,
    codes_used: Used,
    refreshes_used: Used,
    grants: grants::Grants,
    raw_keys: bool,
    documents: client_document::Documents,
    /// The stack this server serves: a key link on the sign-in page must be for it, and is
    /// claimed there.
    stack: StackAddress,
}

/// Why sign-in could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error(transparent)]
    Seal(#[from] SealError),
    #[error(transparent)]
    Documents(#[from] DocumentsError),
}

impl SignIn {
    pub fn new(
        state: &Path,
        settings: &SignInSettings,
        stack: StackAddress,
    ) -> Result<SignIn, SignInError> {
        Ok(SignIn {
            sealer: Sealer::kept_in(state)?,
            forms_used: Used::in_folder(state.join("used-forms"))?,
            codes_used: Used::in_folder(state.join("used-codes"))?,
            refreshes_used: Used::in_folder(state.join("used-refresh-tokens"))?,
            grants: grants::Grants::in_state(state),
            raw_keys: settings.raw_keys,
            documents: client_document::Documents::new(settings)?,
            stack,
        })
    }
}

/// The routes of sign-in: discovery, registration, the page, and the token endpoint.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            RESOURCE_METADATA_PATH,
            get(discovery::resource).options(preflight),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(discovery::resource).options(preflight),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(discovery::authorization_server).options(preflight),
        )
        .route(
            "/.well-known/openid-configuration",
            get(discovery::authorization_server).options(preflight),
        )
        .route("/register", post(clients::register).options(preflight))
        .route("/authorize", get(authorize::ask).post(authorize::answered))
        .route("/token", post(tokens::grant).options(preflight))
        .route("/revoke", post(tokens::revoke).options(preflight))
}

/// Where a sign-in request came to: this server as the request names it (a served name, at the
/// port the client used), and who sent it. A request from a peer over its allowance, or with as
/// many requests without a key under way as it may, or naming no served name, goes no further.
pub struct Here {
    /// This server's origin as the client reaches it: the issuer, and the base of every URL
    /// sign-in hands out.
    issuer: String,
    peer: IpAddr,
    /// One of the requests without a key its peer may have under way, held from its head to its
    /// answer.
    _turn: Option<PeerTurn>,
    /// One of sign-in's requests answered at once over everyone, taken only once what is left to
    /// do is quick to finish (its body, if any, is in), so a slow body holds nothing others need.
    _answering: Option<OwnedSemaphorePermit>,
}

// A refusal is the answer itself, handed straight to the client: boxing it would only move it.
#[allow(clippy::result_large_err)]
impl Here {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.issuer)
    }

    /// The MCP endpoint's URL, which tokens are issued for (RFC 8707).
    fn resource(&self) -> String {
        self.url(MCP_PATH)
    }

    /// Where a request came to, from its head alone, with its peer's turn. Refused before its
    /// body is read, the connection closes after the answer, which says so.
    fn arrived(parts: &Parts, app: &App) -> Result<Here, Response> {
        let refused = |response| refusing::unread(&parts.headers, response);
        let peer = super::client_address::of(parts, &app.proxies);
        let Some(turn) = app.keyless.take(peer) else {
            return Err(refused(refusing::too_many_from_this_address()));
        };
        if let Err(seconds) = app.peers.request(peer) {
            return Err(refused(refusing::too_many(
                seconds,
                "Too many requests from this address; wait before the next.",
            )));
        }
        let host = app
            .checks
            .served_host(&parts.uri, &parts.headers)
            .map_err(|refusal| refused(refusal.into_response()))?;
        Ok(Here {
            issuer: app.checks.issuer(&host),
            peer,
            _turn: Some(turn),
            _answering: None,
        })
    }

    /// The same request, now among sign-in's requests answered at once, if there is room.
    fn answering(self, app: &App) -> Result<Here, Response> {
        let Ok(answering) = app.signing_in.clone().try_acquire_owned() else {
            return Err(refusing::too_many(
                1,
                "The server has too many sign-in requests under way; try again shortly.",
            ));
        };
        Ok(Here {
            _answering: Some(answering),
            ..self
        })
    }
}

/// For a request with no body to wait for: it is answered at once.
impl FromRequestParts<Arc<App>> for Here {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Here, Response> {
        Here::arrived(parts, app)?.answering(app)
    }
}

/// A sign-in request with a body: where it came to, and its body as read within sign-in's limits
/// of size and time (or why it was not), read while only its peer's turn is held.
pub struct Sent {
    pub here: Here,
    pub body: Result<bytes::Bytes, params::NotRead>,
}

impl FromRequest<Arc<App>> for Sent {
    type Rejection = Response;

    async fn from_request(request: Request, app: &Arc<App>) -> Result<Sent, Response> {
        let (parts, body) = request.into_parts();
        let here = Here::arrived(&parts, app)?;
        let body = params::body(body).await;
        // A body not read is refused at once, which takes no place among those answered.
        let here = match body {
            Ok(_) => here.answering(app)?,
            Err(_) => here,
        };
        Ok(Sent { here, body })
    }
}

/// The answer to a browser asking whether a client on another origin may call: it may, since
/// these endpoints take no cookie and a public client's calls carry nothing of the person's.
async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("content-type, authorization, mcp-protocol-version"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    open_to_every_origin(response)
}

/// Lets a browser-based client on any origin read the answer.
fn open_to_every_origin(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// A JSON answer from a sign-in endpoint, never cached, readable from any origin.
fn json_answer(status: StatusCode, body: &serde_json::Value) -> Response {
    for_any_client(
        (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response(),
    )
}

/// An OAuth error answer (RFC 6749 §5.2): the HTTP mode's JSON refusal, for any client.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    for_any_client(super::refusal(status, error, description))
}

/// An answer never cached, and readable by a browser-based client on any origin.
fn for_any_client(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    open_to_every_origin(response)
}
