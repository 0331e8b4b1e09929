//! Sign-in for assistants hosted by their provider (MCP authorization, OAuth 2.1). Such an
//! assistant takes no bearer key from the person, only OAuth, so the HTTP mode is also a small
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
//!
//! Sign-in serves its routes within the HTTP mode and asks it for nothing but what [`Front`]
//! names, which the HTTP mode implements (`serve::http::front`).

mod authorize;
mod bearer;
mod client_document;
mod clients;
mod discovery;
pub mod grants;
mod page;
mod params;
mod redirects;
mod tokens;

use std::any::Any;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::access::offer::Offer;
use crate::access::sealing::{SealError, Sealer, Used};
use crate::access::standing::Verdict;
use crate::config::{ConsentMode, SignInSettings};
use crate::stack::StackAddress;
use crate::stack::credential::Key;
use crate::web::refusing::refusal;
pub use bearer::{key_of, key_refused};
pub use client_document::{DocumentRoots, DocumentsError};

/// The one scope there is: what the key itself may do, which the stack decides.
const SCOPE: &str = "lemonfiber";
/// The MCP endpoint, the resource every token is for.
const MCP_PATH: &str = "/mcp";
const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// All sign-in needs of the HTTP mode that serves it: where a request came to and the limits of
/// its peer, and what the stack says of a key. Sign-in knows nothing else of the HTTP mode.
// A refusal is the answer itself, handed straight to the client: boxing it would only move it.
#[allow(clippy::result_large_err)]
pub trait Front: Send + Sync + 'static {
    fn sign_in(&self) -> &SignIn;

    /// What stands for the person's yes, which the page tells them before they allow.
    fn consent(&self) -> ConsentMode;

    /// Where a request came to and who sent it, from its head alone, holding one of its peer's
    /// turns; or, for a peer over its allowances or a name not served, the answer that refuses it.
    fn arrived(&self, parts: &Parts) -> Result<Arrival, Response>;

    /// One of sign-in's requests answered at once over everyone, if one is free; else the answer
    /// that says to try again.
    fn answering(&self) -> Result<Hold, Response>;

    /// Takes one of `peer`'s allowance of things as dear to check as a key the server has not
    /// seen; `false` when none is left.
    fn take_a_new_key_turn(&self, peer: IpAddr) -> bool;

    /// What the stack says of `key` now (not from an answer kept a while), with what it offers an
    /// accepted key, if the stack said.
    fn standing_of(&self, key: Key) -> impl Future<Output = Verdict<Option<Offer>>> + Send;
}

/// What a request holds while it is answered (a turn, a place), let go when it is dropped.
pub type Hold = Box<dyn Any + Send + Sync>;

/// Where a sign-in request came to, as [`Front::arrived`] found it.
pub struct Arrival {
    /// This server's origin as the client reaches it.
    pub issuer: String,
    pub peer: IpAddr,
    pub turn: Hold,
}

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
    /// `document_roots`: see [`client_document::Documents::new`].
    pub fn new(
        state: &Path,
        settings: &SignInSettings,
        document_roots: Option<DocumentRoots>,
        stack: StackAddress,
    ) -> Result<SignIn, SignInError> {
        Ok(SignIn {
            sealer: Sealer::kept_in(state)?,
            forms_used: Used::in_folder(state.join("used-forms"))?,
            codes_used: Used::in_folder(state.join("used-codes"))?,
            refreshes_used: Used::in_folder(state.join("used-refresh-tokens"))?,
            grants: grants::Grants::in_state(state),
            raw_keys: settings.raw_keys,
            documents: client_document::Documents::new(settings, document_roots)?,
            stack,
        })
    }
}

/// The routes of sign-in: discovery, registration, the page, and the token endpoint.
pub fn routes<F: Front>() -> Router<Arc<F>> {
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
        .route("/register", post(clients::register::<F>).options(preflight))
        .route(
            "/authorize",
            get(authorize::ask::<F>).post(authorize::answered::<F>),
        )
        .route("/token", post(tokens::grant::<F>).options(preflight))
        .route("/revoke", post(tokens::revoke::<F>).options(preflight))
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
    _turn: Hold,
    /// One of sign-in's requests answered at once over everyone, taken only once what is left to
    /// do is quick to finish (its body, if any, is in), so a slow body holds nothing others need.
    _answering: Option<Hold>,
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
    fn arrived(parts: &Parts, front: &impl Front) -> Result<Here, Response> {
        let Arrival { issuer, peer, turn } = front.arrived(parts)?;
        Ok(Here {
            issuer,
            peer,
            _turn: turn,
            _answering: None,
        })
    }

    /// The same request, now among sign-in's requests answered at once, if there is room.
    fn answering(self, front: &impl Front) -> Result<Here, Response> {
        Ok(Here {
            _answering: Some(front.answering()?),
            ..self
        })
    }
}

/// For a request with no body to wait for: it is answered at once.
impl<F: Front> FromRequestParts<Arc<F>> for Here {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, front: &Arc<F>) -> Result<Here, Response> {
        Here::arrived(parts, front.as_ref())?.answering(front.as_ref())
    }
}

/// A sign-in request with a body: where it came to, and its body as read within sign-in's limits
/// of size and time (or why it was not), read while only its peer's turn is held.
pub struct Sent {
    pub here: Here,
    pub body: Result<bytes::Bytes, params::NotRead>,
}

impl<F: Front> FromRequest<Arc<F>> for Sent {
    type Rejection = Response;

    async fn from_request(request: Request, front: &Arc<F>) -> Result<Sent, Response> {
        let (parts, body) = request.into_parts();
        let here = Here::arrived(&parts, front.as_ref())?;
        let body = params::body(body).await;
        // A body not read is refused at once, which takes no place among those answered.
        let here = match body {
            Ok(_) => here.answering(front.as_ref())?,
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
    for_any_client(refusal(status, error, description))
}

/// An answer never cached, and readable by a browser-based client on any origin.
fn for_any_client(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    open_to_every_origin(response)
}
