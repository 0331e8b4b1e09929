//! The credential a request to the MCP endpoint brings as its bearer: an access token this server
//! issued, for this MCP URL, unexpired; or, unless the operator turned it off, an integration key
//! itself, for a client that can set a header. Either way what comes out is the person's key.
//! A request without one is told where to sign in (RFC 9728's `resource_metadata`).

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::tokens::{self, TokenRefused};
use super::{RESOURCE_METADATA_PATH, SCOPE, SignIn};
use crate::stack::credential::Key;
use crate::web::refusing::refusal;

/// A request without a credential this server takes: `401`, with the challenge that tells a
/// client how to get one.
#[derive(Debug)]
pub struct Refused {
    error: &'static str,
    description: String,
    challenge: String,
}

impl Refused {
    fn unauthorized(error: &'static str, description: &str, challenge: String) -> Refused {
        Refused {
            error,
            description: description.to_owned(),
            challenge,
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let mut response = refusal(StatusCode::UNAUTHORIZED, self.error, &self.description);
        if let Ok(challenge) = HeaderValue::from_str(&self.challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
        }
        response
    }
}

/// The person's key a request's bearer carries, for a request that reached this server at
/// `issuer` (`https://` and its `Host`). A refusal never repeats what was sent.
pub fn key_of(sign_in: &SignIn, headers: &HeaderMap, issuer: &str) -> Result<Key, Refused> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(Refused::unauthorized(
            "invalid_request",
            "Every request needs Authorization: Bearer with an access token from this server's sign-in, or an \
             integration key.",
            challenge(issuer, None),
        ));
    };
    let bearer = value
        .to_str()
        .ok()
        .and_then(|value| value.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, bearer)| bearer.trim());
    let invalid = |description: &str| {
        Refused::unauthorized(
            "invalid_token",
            description,
            challenge(issuer, Some("invalid_token")),
        )
    };
    match bearer {
        Some(token) if tokens::is_access_token(token) => {
            tokens::open_access(sign_in, token, &format!("{issuer}{}", super::MCP_PATH)).map_err(
                |refused| match refused {
                    TokenRefused::Expired => {
                        invalid("The access token has expired; refresh it, or sign in again.")
                    }
                    TokenRefused::Ended => invalid(
                        "This sign-in has ended (signed out, or ended by the operator); sign in again.",
                    ),
                    TokenRefused::OtherResource => {
                        invalid("The access token was issued for another resource than this MCP URL.")
                    }
                    TokenRefused::NotIssuedHere | TokenRefused::NotAKey => invalid(
                        "The access token is not one this server issued, or it was changed.",
                    ),
                },
            )
        }
        Some(key) if key.starts_with("lfk_") && !sign_in.raw_keys => Err(invalid(
            "This server takes only the access tokens its sign-in issues, not integration keys themselves; \
             connect through its sign-in.",
        )),
        Some(key) => Key::parse(key).map_err(|_| {
            invalid(
                "The bearer is neither an access token from this server's sign-in nor an integration key \
                 (lfk_ followed by lower-case hex).",
            )
        }),
        None => Err(invalid(
            "Authorization must be Bearer followed by an access token or an integration key.",
        )),
    }
}

/// The stack refused the key the request carries: it is never sent again, and a new one is
/// needed (F13-R9), which a client signing in gets by signing in again.
pub fn key_refused(issuer: &str) -> Refused {
    Refused::unauthorized(
        "invalid_token",
        "The stack refused this key: it is wrong, revoked, or unknown to the stack. It will not be sent to \
         the stack again; a new key is needed.",
        challenge(issuer, Some("invalid_token")),
    )
}

/// The `WWW-Authenticate` challenge: where the protected resource's metadata is, the scope, and
/// the error, if there is one.
fn challenge(issuer: &str, error: Option<&str>) -> String {
    let mut challenge = format!(
        "Bearer resource_metadata=\"{issuer}{RESOURCE_METADATA_PATH}{}\", scope=\"{SCOPE}\"",
        super::MCP_PATH
    );
    if let Some(error) = error {
        challenge.push_str(&format!(", error=\"{error}\""));
    }
    challenge
}
