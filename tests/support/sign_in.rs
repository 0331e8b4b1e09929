//! A person signing in on the HTTP mode's page, as a browser without script does it (its forms,
//! its cookie), and a client exchanging what comes back: for the sign-in tests.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use base64::Engine as _;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::Digest as _;

use super::https::pinned_tls;

pub const REDIRECT: &str = "http://127.0.0.1:9/callback";
pub const VERIFIER: &str = "a-verifier-of-forty-three-or-more-characters-0123456789";

/// The S256 challenge of `verifier`.
pub fn challenge_of(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}

/// The server at `base` (`https://host:port`), pinned, never following a redirect: what comes
/// back to the client is read, not visited.
pub struct SignIn {
    pub http: reqwest::Client,
    pub base: String,
}

/// A sign-in page as shown: its status, its cookie, its HTML.
pub struct Shown {
    pub status: StatusCode,
    pub cookie: Option<String>,
    pub html: String,
}

impl Shown {
    /// The sealed form token the page's form carries.
    pub fn form(&self) -> String {
        let after = self
            .html
            .split("name=\"form\" value=\"")
            .nth(1)
            .unwrap_or_else(|| panic!("a form on the page: {}", self.html));
        after.split('"').next().expect("its value").to_owned()
    }
}

impl SignIn {
    pub fn new(base: &str, pin: &str) -> SignIn {
        SignIn::reaching(base, pin, None)
    }

    /// As `new`, reaching `name` at `address` whatever it resolves to.
    pub fn reaching(base: &str, pin: &str, name: Option<(&str, std::net::SocketAddr)>) -> SignIn {
        let mut builder = reqwest::Client::builder()
            .tls_backend_preconfigured(pinned_tls(pin))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        if let Some((name, address)) = name {
            builder = builder.resolve(name, address);
        }
        SignIn {
            http: builder.build().expect("an HTTPS client"),
            base: base.trim_end_matches('/').to_owned(),
        }
    }

    pub fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// Registers a client sending people back to `redirect`; its client id.
    pub async fn register(&self, redirect: &str) -> String {
        let answer = self
            .http
            .post(format!("{}/register", self.base))
            .json(&json!({"client_name": "Test assistant", "redirect_uris": [redirect]}))
            .send()
            .await
            .expect("registered");
        assert_eq!(answer.status(), StatusCode::CREATED);
        let answer: Value = answer.json().await.expect("JSON");
        answer["client_id"]
            .as_str()
            .expect("a client id")
            .to_owned()
    }

    /// The page a client's sign-in request opens.
    pub async fn open(&self, query: &[(&str, &str)]) -> Shown {
        let response = self
            .http
            .get(format!("{}/authorize", self.base))
            .query(query)
            .send()
            .await
            .expect("the page answers");
        shown(response).await
    }

    /// The page for `client`'s usual request: code, S256 of [`VERIFIER`], state `s1`.
    pub async fn open_for(&self, client: &str, redirect: &str) -> Shown {
        let challenge = challenge_of(VERIFIER);
        self.open(&[
            ("response_type", "code"),
            ("client_id", client),
            ("redirect_uri", redirect),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("state", "s1"),
            ("resource", &self.resource()),
        ])
        .await
    }

    /// Posts a form of the page, from this server's own page, with `cookie`.
    pub async fn post(&self, cookie: Option<&str>, fields: &[(&str, &str)]) -> reqwest::Response {
        self.post_from(cookie, fields, Some(&self.base)).await
    }

    pub async fn post_from(
        &self,
        cookie: Option<&str>,
        fields: &[(&str, &str)],
        origin: Option<&str>,
    ) -> reqwest::Response {
        let mut request = self
            .http
            .post(format!("{}/authorize", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(encoded(fields));
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send().await.expect("the page answers")
    }

    /// Gives `credential` on the first page: the page that follows.
    pub async fn give(&self, first: &Shown, credential: &str) -> Shown {
        let answer = self
            .post(
                first.cookie.as_deref(),
                &[("form", &first.form()), ("credential", credential)],
            )
            .await;
        let mut next = shown(answer).await;
        next.cookie = first.cookie.clone();
        next
    }

    /// Allows on the second page: where the browser is sent back to.
    pub async fn allow(&self, second: &Shown) -> url::Url {
        let answer = self
            .post(
                second.cookie.as_deref(),
                &[("form", &second.form()), ("decision", "allow")],
            )
            .await;
        assert_eq!(
            answer.status(),
            StatusCode::SEE_OTHER,
            "{}",
            answer.text().await.unwrap_or_default()
        );
        let location = answer.headers()["location"].to_str().expect("text");
        url::Url::parse(location).expect("a URL")
    }

    /// A code for `key`, signed in by a client registered for [`REDIRECT`]: the client id and the
    /// code.
    pub async fn code_for(&self, key: &str) -> (String, String) {
        let client = self.register(REDIRECT).await;
        let first = self.open_for(&client, REDIRECT).await;
        let second = self.give(&first, key).await;
        let back = self.allow(&second).await;
        let code = parameter(&back, "code").expect("a code");
        (client, code)
    }

    /// Asks the token endpoint.
    pub async fn token(&self, fields: &[(&str, &str)]) -> (StatusCode, Value) {
        let answer = self
            .http
            .post(format!("{}/token", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(encoded(fields))
            .send()
            .await
            .expect("the token endpoint answers");
        let status = answer.status();
        (status, answer.json().await.expect("JSON"))
    }

    /// Exchanges `code` as its client would.
    pub async fn exchange(&self, client: &str, code: &str) -> (StatusCode, Value) {
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("client_id", client),
        ])
        .await
    }

    /// An MCP `initialize` with `bearer`: the answer's status and its `WWW-Authenticate`.
    pub async fn initialize_with(
        &self,
        bearer: Option<&str>,
    ) -> (StatusCode, Option<String>, Value) {
        let mut request = self
            .http
            .post(self.resource())
            .header("accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}));
        if let Some(bearer) = bearer {
            request = request.bearer_auth(bearer);
        }
        let answer = request.send().await.expect("MCP answers");
        let status = answer.status();
        let challenge = answer
            .headers()
            .get("www-authenticate")
            .map(|value| value.to_str().expect("text").to_owned());
        let body = answer.text().await.unwrap_or_default();
        (
            status,
            challenge,
            serde_json::from_str(&body).unwrap_or(Value::String(body)),
        )
    }
}

async fn shown(response: reqwest::Response) -> Shown {
    let status = response.status();
    let cookie = response.headers().get("set-cookie").map(|value| {
        value
            .to_str()
            .expect("text")
            .split(';')
            .next()
            .expect("a cookie")
            .to_owned()
    });
    Shown {
        status,
        cookie,
        html: response.text().await.expect("the page reads"),
    }
}

/// `fields` as a form body.
fn encoded(fields: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish()
}

/// A query parameter of `url`.
pub fn parameter(url: &url::Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(given, _)| given == name)
        .map(|(_, value)| value.into_owned())
}
