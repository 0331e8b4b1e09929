//! Who may ask for a sign-in. A client registers dynamically (RFC 7591) and is handed a client id
//! that seals its name and redirect URIs, so nothing is kept and any replica, or the server after
//! a restart, knows it; registering again costs nothing. Or its client id is the https URL of its
//! metadata document, fetched when it asks (see `client_document`). Either way it is a public
//! client (no secret), and it is sent back only to a redirect URI it named, matched exactly.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::client_document::DocumentRefused;
use super::redirects::redirects_of;
use super::{Front, Sent, SignIn, json_answer, oauth_error};
use crate::access::sealing::{Purpose, now};
use crate::answer::handed_text;
use crate::redact::Secrets;

const REGISTERED: Purpose = Purpose {
    prefix: "lfmcp-client1.",
    bound_to: b"lemonfiber-mcp registered client 1",
};
/// The most characters of a client's name kept.
const NAME_LONGEST: usize = 80;

/// A client that may ask for a sign-in.
pub struct Client {
    pub id: String,
    /// What the client calls itself: its own words, shown as such.
    pub name: Option<String>,
    pub redirect_uris: Vec<String>,
    /// Where its metadata document was fetched from, for a client whose id is one.
    pub document_host: Option<String>,
}

/// What a registered client's id seals.
#[derive(Serialize, Deserialize)]
struct Registered {
    /// The client's name.
    n: Option<String>,
    /// Its redirect URIs.
    r: Vec<String>,
    /// When it registered, in seconds since the epoch.
    t: u64,
}

/// Why a client id names no client that may ask.
#[derive(Debug)]
pub enum ClientRefused {
    NotIssuedHere,
    Document(DocumentRefused),
}

/// `POST /register`: a client registers, and is handed its sealed id. (`Sent`: only from a peer
/// within its allowance, to a served name.)
pub async fn register<F: Front>(State(front): State<Arc<F>>, sent: Sent) -> Response {
    let bytes = match sent.body {
        Ok(bytes) => bytes,
        Err(not_read) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                &not_read.description(),
            );
        }
    };
    let Ok(Value::Object(asked)) = serde_json::from_slice::<Value>(&bytes) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "The registration is not a JSON object.",
        );
    };
    let redirect_uris = match redirects_of(asked.get("redirect_uris")) {
        Ok(uris) => uris,
        Err(why) => return oauth_error(StatusCode::BAD_REQUEST, "invalid_redirect_uri", &why),
    };
    let asked_grants = asked.get("grant_types").and_then(Value::as_array);
    if asked_grants.is_some_and(|grants| {
        !grants
            .iter()
            .any(|grant| grant.as_str() == Some("authorization_code"))
    }) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "This server grants authorization_code (and refresh_token) only.",
        );
    }
    let name = asked
        .get("client_name")
        .and_then(Value::as_str)
        .and_then(shown_name);
    let issued_at = now();
    let registered = Registered {
        n: name.clone(),
        r: redirect_uris.clone(),
        t: issued_at,
    };
    let Some(client_id) = front.sign_in().sealer.seal(&REGISTERED, &registered) else {
        return oauth_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "The client id could not be made; try again.",
        );
    };
    let mut answer = json!({
        "client_id": client_id,
        "client_id_issued_at": issued_at,
        "redirect_uris": redirect_uris,
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    });
    if let Some(name) = name {
        answer["client_name"] = Value::from(name);
    }
    json_answer(StatusCode::CREATED, &answer)
}

/// The client a client id names: one this server registered, or one whose metadata document is
/// at that URL.
pub async fn client(sign_in: &SignIn, id: &str) -> Result<Client, ClientRefused> {
    if is_document_url(id) {
        let document = sign_in
            .documents
            .fetch(id)
            .await
            .map_err(ClientRefused::Document)?;
        return Ok(Client {
            id: id.to_owned(),
            name: document.name.as_deref().and_then(shown_name),
            redirect_uris: document.redirect_uris,
            document_host: Some(document.host),
        });
    }
    let (registered, _): (Registered, _) = sign_in
        .sealer
        .open(&REGISTERED, id)
        .ok_or(ClientRefused::NotIssuedHere)?;
    Ok(Client {
        id: id.to_owned(),
        name: registered.n,
        redirect_uris: registered.r,
        document_host: None,
    })
}

/// Whether a client id is the URL of a metadata document rather than one this server issued.
pub fn is_document_url(id: &str) -> bool {
    id.starts_with("https://")
}

/// A client's name as the sign-in page may show it: its own words through the door the stack's
/// text goes through (nothing hidden, no secret), on one line, short.
fn shown_name(name: &str) -> Option<String> {
    let shown: String = handed_text(name, &Secrets::default())
        .chars()
        .filter(|&c| !c.is_control())
        .take(NAME_LONGEST)
        .collect();
    let shown = shown.trim();
    (!shown.is_empty()).then(|| shown.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_shown_without_hidden_characters_and_short() {
        assert_eq!(
            shown_name("Claude\u{202e}\u{200b}\n"),
            Some("Claude".to_owned())
        );
        assert_eq!(shown_name("\u{200b}"), None);
        assert_eq!(
            shown_name(&"n".repeat(500)).map(|name| name.len()),
            Some(NAME_LONGEST)
        );
    }
}
