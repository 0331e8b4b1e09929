//! Codes and tokens, each the person's key sealed with the client it was issued to, the resource
//! it is for (this server's MCP URL, RFC 8707) and its expiry, under a purpose of its own: a code
//! lives 60 seconds and is exchanged once, with its PKCE verifier and redirect URI; an access
//! token lives an hour; a refresh token lives 30 days, is used once, and is replaced by a new one
//! each time, and only while the stack still takes the key it carries.
//!
//! Every token carries the id of the grant it belongs to, and is taken only while that grant is
//! in force (see `grants`).
//!
//! `POST /token` (RFC 6749 §3.2): the `authorization_code` and `refresh_token` grants.
//! `POST /revoke` (RFC 7009): a client ending its grant.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::grants::{Granted, Grants, GrantsError};
use super::params::Params;
use super::{Front, SCOPE, Sent, SignIn, json_answer, oauth_error};
use crate::access::sealing::{NotUsed, Purpose, now};
use crate::access::standing::Verdict;
use crate::stack::credential::Key;

const CODE: Purpose = Purpose {
    prefix: "lfmcp-code1.",
    bound_to: b"lemonfiber-mcp authorization code 1",
};
const ACCESS: Purpose = Purpose {
    prefix: "lfmcp-at1.",
    bound_to: b"lemonfiber-mcp access token 1",
};
const REFRESH: Purpose = Purpose {
    prefix: "lfmcp-rt1.",
    bound_to: b"lemonfiber-mcp refresh token 1",
};
pub const CODE_LIFE: u64 = 60;
pub const ACCESS_LIFE: u64 = 60 * 60;
pub const REFRESH_LIFE: u64 = 30 * 24 * 60 * 60;

/// What a code seals: a grant, and what its exchange must show.
#[derive(Serialize, Deserialize)]
pub struct Code {
    pub grant: Grant,
    /// What the client calls itself, for the grant's record.
    #[serde(default)]
    pub n: Option<String>,
    /// The redirect URI the code was sent to.
    pub r: String,
    /// The PKCE challenge (S256) its verifier must answer.
    pub p: String,
}

/// What a token seals: the person's key, the client, the resource, and the expiry.
#[derive(Serialize, Deserialize)]
pub struct Grant {
    /// The integration key.
    pub k: String,
    /// The client it was issued to.
    pub c: String,
    /// The resource it is for: this server's MCP URL as the client reached it.
    pub a: String,
    /// When it expires, in seconds since the epoch.
    pub x: u64,
    /// The grant it belongs to (see `grants`); empty in tokens sealed before grants were kept.
    #[serde(default)]
    pub g: String,
}

/// Why an access token is not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRefused {
    NotIssuedHere,
    Expired,
    OtherResource,
    NotAKey,
    /// Its grant was ended: signed out, or ended by the operator.
    Ended,
}

pub fn is_access_token(bearer: &str) -> bool {
    bearer.starts_with(ACCESS.prefix)
}

/// The key an access token carries, if this server issued it for `resource`, it has not
/// expired, and its grant has not been ended.
pub fn open_access(sign_in: &SignIn, token: &str, resource: &str) -> Result<Key, TokenRefused> {
    let (grant, _): (Grant, _) = sign_in
        .sealer
        .open(&ACCESS, token)
        .ok_or(TokenRefused::NotIssuedHere)?;
    if grant.x <= now() {
        return Err(TokenRefused::Expired);
    }
    if grant.a != resource {
        return Err(TokenRefused::OtherResource);
    }
    // A token sealed before grants were kept has none, and lives out its hour.
    if !grant.g.is_empty() && !sign_in.grants.is_live(&grant.g) {
        return Err(TokenRefused::Ended);
    }
    Key::parse(&grant.k).map_err(|_| TokenRefused::NotAKey)
}

/// A code for `key`, to be exchanged by `client` from `redirect` with the verifier of
/// `challenge`, for `resource`.
pub fn seal_code(
    sign_in: &SignIn,
    key: &Key,
    client: (&str, Option<&str>),
    redirect: &str,
    challenge: &str,
    resource: &str,
) -> Option<String> {
    let (client, name) = client;
    let code = Code {
        grant: Grant {
            k: key.expose_for_keeping().to_owned(),
            c: client.to_owned(),
            a: resource.to_owned(),
            x: now() + CODE_LIFE,
            g: Grants::new_id()?,
        },
        n: name.map(str::to_owned),
        r: redirect.to_owned(),
        p: challenge.to_owned(),
    };
    sign_in.sealer.seal(&CODE, &code)
}

/// `POST /token`.
pub async fn grant<F: Front>(State(front): State<Arc<F>>, sent: Sent) -> Response {
    let (asked, client) = match from_a_public_client(sent) {
        Ok(asked) => asked,
        Err((error, description)) => return refused(error, &description),
    };
    let client = client.as_str();
    match asked.get("grant_type") {
        Some("authorization_code") => exchange(front.sign_in(), &asked, client),
        Some("refresh_token") => refresh(front.as_ref(), &asked, client).await,
        Some(_) => refused(
            "unsupported_grant_type",
            "This server grants authorization_code and refresh_token only.",
        ),
        None => refused("invalid_request", "grant_type is missing."),
    }
}

/// The `authorization_code` grant: the code, once, within its minute, from its client and
/// redirect URI, with the verifier of its challenge.
fn exchange(sign_in: &SignIn, asked: &Params, client: &str) -> Response {
    let (Some(code), Some(redirect), Some(verifier)) = (
        asked.get("code"),
        asked.get("redirect_uri"),
        asked.get("code_verifier"),
    ) else {
        return refused(
            "invalid_request",
            "The authorization_code grant needs code, redirect_uri and code_verifier.",
        );
    };
    let Some((code, nonce)) = sign_in.sealer.open::<Code>(&CODE, code) else {
        return refused(
            "invalid_grant",
            "The code is not one this server issued, or it was changed.",
        );
    };
    if code.grant.x <= now() {
        return refused("invalid_grant", "The code has expired; sign in again.");
    }
    if code.grant.c != client {
        return refused("invalid_grant", "The code was issued to another client.");
    }
    if code.r != redirect {
        return refused(
            "invalid_grant",
            "redirect_uri is not the one the code was sent to.",
        );
    }
    if !answers(verifier, &code.p) {
        return refused(
            "invalid_grant",
            "code_verifier does not answer the code's challenge.",
        );
    }
    if let Some(refused) = other_resource(asked, &code.grant.a) {
        return refused;
    }
    match sign_in.codes_used.use_once(&nonce, code.grant.x) {
        Ok(()) => issue(sign_in, code.grant, Issued::SignedIn(code.n.as_deref())),
        Err(NotUsed::Already) => refused("invalid_grant", "The code was used already."),
        Err(NotUsed::NotRecorded) => unavailable(),
    }
}

/// The `refresh_token` grant: a refresh token, once, from its client, while the stack still takes
/// the key it carries; answered with a new pair.
async fn refresh(front: &impl Front, asked: &Params, client: &str) -> Response {
    let sign_in = front.sign_in();
    let Some(token) = asked.get("refresh_token") else {
        return refused(
            "invalid_request",
            "The refresh_token grant needs refresh_token.",
        );
    };
    let Some((grant, nonce)) = sign_in.sealer.open::<Grant>(&REFRESH, token) else {
        return refused(
            "invalid_grant",
            "The refresh token is not one this server issued, or it was changed.",
        );
    };
    if grant.x <= now() {
        return refused(
            "invalid_grant",
            "The refresh token has expired; sign in again.",
        );
    }
    if grant.c != client {
        return refused(
            "invalid_grant",
            "The refresh token was issued to another client.",
        );
    }
    if let Some(refused) = other_resource(asked, &grant.a) {
        return refused;
    }
    if sign_in.refreshes_used.was_used(&nonce, grant.x) {
        return refused("invalid_grant", "The refresh token was used already.");
    }
    let renewed = match sign_in.grants.get(&grant.g) {
        Some(granted) => Issued::Renewed(granted),
        None if grant.g.is_empty() => Issued::SignedIn(None),
        None => {
            return refused(
                "invalid_grant",
                "This sign-in has ended (signed out, or ended by the operator); sign in again.",
            );
        }
    };
    let Ok(key) = Key::parse(&grant.k) else {
        return refused("invalid_grant", "The refresh token carries no key.");
    };
    match still_taken(front, key).await {
        Standing::Taken => {}
        Standing::Refused => {
            return refused(
                "invalid_grant",
                "The stack refused the key this grant carries: it is wrong, revoked or unknown. Sign in \
                 again with a new key.",
            );
        }
        Standing::NotAsked => return unavailable(),
    }
    match sign_in.refreshes_used.use_once(&nonce, grant.x) {
        Ok(()) => issue(sign_in, grant, renewed),
        Err(NotUsed::Already) => refused("invalid_grant", "The refresh token was used already."),
        Err(NotUsed::NotRecorded) => unavailable(),
    }
}

enum Standing {
    Taken,
    Refused,
    NotAsked,
}

/// Whether the stack still takes `key`, asked now.
async fn still_taken(front: &impl Front, key: Key) -> Standing {
    match front.standing_of(key).await {
        Verdict::Accepted(_) => Standing::Taken,
        Verdict::Refused => Standing::Refused,
        Verdict::Throttled(_) | Verdict::Unreachable | Verdict::NotPinned => Standing::NotAsked,
    }
}

/// How a grant's tokens come to be handed out.
enum Issued<'a> {
    /// The person signed in now, through a client that calls itself this.
    SignedIn(Option<&'a str>),
    /// The client renewed a grant in force.
    Renewed(Granted),
}

/// A new access token and refresh token for `grant`'s key, client and resource, once the grant
/// is recorded as in force until the refresh token expires.
fn issue(sign_in: &SignIn, mut grant: Grant, issued: Issued<'_>) -> Response {
    let now = now();
    let Ok(key) = Key::parse(&grant.k) else {
        return refused("invalid_grant", "The grant carries no key.");
    };
    let granted = match issued {
        Issued::Renewed(granted) => Granted {
            renewed: now,
            expires: now + REFRESH_LIFE,
            ..granted
        },
        Issued::SignedIn(client) => {
            if grant.g.is_empty() {
                let Some(id) = Grants::new_id() else {
                    return unavailable();
                };
                grant.g = id;
            }
            Granted::new(grant.g.clone(), client, &key.digest(), now + REFRESH_LIFE)
        }
    };
    if !sign_in.grants.record(&granted) {
        return unavailable();
    }
    let access = Grant {
        x: now + ACCESS_LIFE,
        k: grant.k.clone(),
        c: grant.c.clone(),
        a: grant.a.clone(),
        g: grant.g.clone(),
    };
    let refresh = Grant {
        x: now + REFRESH_LIFE,
        ..grant
    };
    let (Some(access), Some(refresh)) = (
        sign_in.sealer.seal(&ACCESS, &access),
        sign_in.sealer.seal(&REFRESH, &refresh),
    ) else {
        return unavailable();
    };
    json_answer(
        StatusCode::OK,
        &json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ACCESS_LIFE,
            "refresh_token": refresh,
            "scope": SCOPE,
        }),
    )
}

/// `POST /revoke` (RFC 7009): a client signing out ends its grant, whichever of the grant's
/// tokens it sends, so neither is taken again. A token that is not one of this server's, or has
/// expired, is answered as revoked, as the RFC says; one issued to another client is refused.
pub async fn revoke<F: Front>(State(front): State<Arc<F>>, sent: Sent) -> Response {
    let sign_in = front.sign_in();
    let (asked, client) = match from_a_public_client(sent) {
        Ok(asked) => asked,
        Err((error, description)) => return refused(error, &description),
    };
    let Some(token) = asked.get("token") else {
        return refused("invalid_request", "token is missing.");
    };
    let opened = [&ACCESS, &REFRESH]
        .into_iter()
        .find_map(|purpose| sign_in.sealer.open::<Grant>(purpose, token));
    let Some((grant, nonce)) = opened else {
        return revoked();
    };
    if grant.c != *client {
        return refused(
            "invalid_client",
            "The token was issued to another client, which alone may revoke it.",
        );
    }
    if grant.g.is_empty() {
        // A token from before grants were kept: its refresh token is spent, and an access
        // token lives out its hour.
        let _ = sign_in.refreshes_used.use_once(&nonce, grant.x);
        return revoked();
    }
    match sign_in.grants.end(&grant.g) {
        Ok(_) => tracing::info!("a client signed out: its grant is ended"),
        Err(GrantsError::NoSuchGrant(..)) => {}
        Err(error) => {
            tracing::warn!(%error, "a grant could not be ended");
            return unavailable();
        }
    }
    revoked()
}

/// A request's form and the public client it names itself as; or the OAuth error and the
/// description that say what is missing.
fn from_a_public_client(sent: Sent) -> Result<(Params, String), (&'static str, String)> {
    let asked = sent
        .body
        .and_then(|bytes| Params::of(&bytes))
        .map_err(|not_read| ("invalid_request", not_read.description()))?;
    let client = asked.get("client_id").map(str::to_owned).ok_or((
        "invalid_client",
        "client_id is missing: this server's clients are public, and name themselves with it."
            .to_owned(),
    ))?;
    Ok((asked, client))
}

fn revoked() -> Response {
    json_answer(StatusCode::OK, &json!({}))
}

/// Whether a PKCE verifier (RFC 7636 §4.1: 43 to 128 unreserved characters) answers an S256
/// challenge.
fn answers(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~'));
    let digest = Sha256::digest(verifier.as_bytes());
    well_formed && base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest) == challenge
}

/// A `resource` asked for that is not the one the grant is for (RFC 8707 §2).
fn other_resource(asked: &Params, resource: &str) -> Option<Response> {
    asked
        .get("resource")
        .filter(|asked| *asked != resource)
        .map(|_| {
            refused(
                "invalid_target",
                "resource is not the MCP URL this grant is for.",
            )
        })
}

fn refused(error: &str, description: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, error, description)
}

fn unavailable() -> Response {
    oauth_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        "The stack could not be asked, or the grant could not be recorded; try again shortly.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verifier_answers_its_own_s256_challenge_only() {
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(answers(verifier, challenge));
        assert!(!answers(&verifier.replace('d', "e"), challenge));
        assert!(!answers("short", challenge));
    }
}
