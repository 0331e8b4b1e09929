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
use super::{Sent, SignIn, json_answer, oauth_error};
use crate::access::sealing::{Purpose, now};
use crate::answer::{handed_text, shows_as_written};
use crate::redact::Secrets;
use crate::serve::http::App;

const REGISTERED: Purpose = Purpose {
    prefix: "lfmcp-client1.",
    bound_to: b"lemonfiber-mcp registered client 1",
};
/// The most redirect URIs one client registers, and the longest each may be: a client id carries
/// them all, and travels in every sign-in's URL.
const REDIRECTS_MOST: usize = 4;
const REDIRECT_LONGEST: usize = 512;
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
pub async fn register(State(app): State<Arc<App>>, sent: Sent) -> Response {
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
    let Some(client_id) = app.sign_in.sealer.seal(&REGISTERED, &registered) else {
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

/// A client's redirect URIs, each one this server may send a person back to.
pub fn redirects_of(given: Option<&Value>) -> Result<Vec<String>, String> {
    let Some(given) = given
        .and_then(Value::as_array)
        .filter(|uris| !uris.is_empty())
    else {
        return Err("redirect_uris must list at least one redirect URI.".to_owned());
    };
    if given.len() > REDIRECTS_MOST {
        return Err(format!(
            "redirect_uris may list at most {REDIRECTS_MOST} redirect URIs."
        ));
    }
    given
        .iter()
        .map(|uri| {
            let uri = uri
                .as_str()
                .ok_or_else(|| "Each redirect URI must be text.".to_owned())?;
            redirect_allowed(uri).map(|()| uri.to_owned())
        })
        .collect()
}

/// A redirect URI a person may be sent back to: `https`, or `http` on this device's loopback for
/// a local client; whole, with no fragment, and not longer than a client id can carry. Nothing in
/// it may be hidden or dropped on the way to the browser: a URL parser drops tabs and line breaks
/// and trims spaces, and a bidirectional control shows the text in another order, so a URI that
/// holds one could show one place on the sign-in page and send the person to another.
fn redirect_allowed(uri: &str) -> Result<(), String> {
    if uri.len() > REDIRECT_LONGEST {
        return Err(format!(
            "A redirect URI may be at most {REDIRECT_LONGEST} characters."
        ));
    }
    if !shows_as_written(uri) || uri.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(
            "A redirect URI may hold no control, invisible, bidirectional or white-space characters: \
             they would make the sign-in page show another place than the one the person is sent to."
                .to_owned(),
        );
    }
    let parsed =
        url::Url::parse(uri).map_err(|_| "A redirect URI is not an absolute URL.".to_owned())?;
    if parsed.fragment().is_some() || !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("A redirect URI may carry no fragment, user name or password.".to_owned());
    }
    let loopback = match parsed.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    };
    match parsed.scheme() {
        "https" if parsed.host().is_some() => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(
            "A redirect URI must be https, or http on the loopback address (127.0.0.1, [::1] or localhost)."
                .to_owned(),
        ),
    }
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
    fn redirects_are_https_or_loopback_http_whole_and_short() {
        for allowed in [
            "https://assistant.example/callback",
            "http://127.0.0.1:33418/callback",
            "http://[::1]:8080/cb",
            "http://localhost/cb?x=1",
        ] {
            assert_eq!(redirect_allowed(allowed), Ok(()), "{allowed}");
        }
        for refused in [
            "http://assistant.example/callback",
            "https://assistant.example/cb#part",
            "https://user:pass@assistant.example/cb",
            "javascript:alert(1)",
            "/callback",
            "http://10.0.0.1/cb",
        ] {
            assert!(redirect_allowed(refused).is_err(), "{refused}");
        }
        // Issue 27, item 6: what a URL parser drops or a reader cannot see.
        for hidden in [
            "https://good.example\t/cb",
            "https://good.example/\r\ncb",
            "https://good.example/cb\n",
            " https://good.example/cb",
            "https://good.example/c b",
            "https://evil.example/\u{202e}elpmaxe.doog",
            "https://good.example\u{200b}.evil.example/cb",
            "https://good.example/cb\u{2066}",
            "https://good.example/cb\u{ad}",
        ] {
            let refused = redirect_allowed(hidden).expect_err(hidden);
            assert!(refused.contains("bidirectional"), "{refused}");
        }
        let long = format!("https://a.example/{}", "x".repeat(REDIRECT_LONGEST));
        assert!(redirect_allowed(&long).is_err());
        assert!(redirects_of(Some(&json!([]))).is_err());
        assert!(redirects_of(Some(&json!(vec!["https://a.example/1"; 5]))).is_err());
    }

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
