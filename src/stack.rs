//! The only door to the stack: the generated SDK over TLS that trusts exactly the pinned
//! certificate, with the integration key in its header (F13-R1).
//!
//! The one module the project's clippy rules let open a connection (see clippy.toml).

#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod bounded;
pub mod claim;
pub mod credential;
mod door;
pub mod envelope;
pub mod image;
pub mod jobs;
pub mod parameters;
pub mod path;
pub mod pin;
pub mod reach;
pub mod reply;
mod sdk;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use progenitor_client::Error;
use serde_json::Value;

use crate::catalogue::{Action, DRY_RUN_ARGUMENT, Read, RefusalCode};
use crate::fingerprint::Fingerprint;
use crate::redact::Secrets;
pub use bounded::AnswerLimits;
use credential::Key;
use door::Door;
pub use image::{IMAGE_LIMIT, PIXEL_LIMIT};
use parameters::Parameters;
use pin::PinVerifier;
pub use reply::{Body, File, Reply};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the stack is and how to know it: everything needed to reach it, none of it printable.
#[derive(Debug, Clone)]
pub struct StackAddress {
    /// `https://host:port`, with no path.
    pub base_url: String,
    /// The SHA-256 of the certificate the stack must show.
    pub pin: Fingerprint,
}

/// Why a request to the stack did not get an answer from it.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The stack showed a certificate other than the pinned one; nothing was sent.
    PinMismatch,
    /// No answer: refused, timed out, or the connection broke. Says which, never a secret.
    Unreachable(Unreachable),
    /// The stack answered with a refusal: its status and its Problem, as data.
    Refused(Refusal),
    /// The stack answered something the contract does not describe.
    Unexpected { status: Option<u16> },
    /// The stack's answer was longer than the limit, so reading it was abandoned.
    TooLarge { limit: u64 },
    /// Nothing was sent: the request would have gone to a path outside its operation's template.
    PathOutsideTemplate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreachable {
    TimedOut,
    NoConnection,
    Broken,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub status: u16,
    /// The Problem the stack answered with (the envelope's `data`), untrusted text.
    pub problem: Value,
    pub retry_after_seconds: Option<u64>,
}

impl Refusal {
    /// The Problem's code, to compare with the codes the server knows; never to be shown.
    pub fn code(&self) -> Option<&str> {
        self.problem.get("code").and_then(Value::as_str)
    }

    /// Whether this is the refusal the registry declares, by its status and code.
    pub fn is(&self, refusal: RefusalCode) -> bool {
        self.status == refusal.status && self.code() == Some(refusal.code)
    }
}

/// What `GET /api/capabilities` says this key may do.
#[derive(Debug, Clone, PartialEq)]
pub struct Capabilities {
    pub states: BTreeMap<String, CapabilityState>,
    pub scope: Scope,
}

/// Whose key it is, as the stack's capabilities say. A scope this server does not know is
/// offered nothing but the connection tool, never the operator's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The stack named no scope (its published capabilities carry none): what the key may use
    /// is what its capabilities say, in the operator's words.
    Unsaid,
    Operator,
    Read,
    Act,
    Member,
    /// A scope the web API this server speaks does not name.
    Unknown,
}

impl Scope {
    fn named(scope: Option<&str>) -> Scope {
        match scope {
            None => Scope::Unsaid,
            Some("operator") => Scope::Operator,
            Some("read") => Scope::Read,
            Some("act") => Scope::Act,
            Some("member") => Scope::Member,
            Some(_) => Scope::Unknown,
        }
    }

    /// The web API's word for it, where it said one the server knows.
    pub fn word(self) -> Option<&'static str> {
        match self {
            Scope::Operator => Some("operator"),
            Scope::Read => Some("read"),
            Scope::Act => Some("act"),
            Scope::Member => Some("member"),
            Scope::Unsaid | Scope::Unknown => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapabilityState {
    Available,
    Unconfigured,
    Unpermitted,
}

impl Capabilities {
    pub fn state_of(&self, path: &str) -> Option<CapabilityState> {
        self.states.get(path).copied()
    }

    fn from_envelope(envelope: &Value) -> Option<Capabilities> {
        if envelope.get("kind")?.as_str()? != "capabilities" {
            return None;
        }
        let data = envelope.get("data")?;
        let states = data
            .get("capabilities")?
            .as_object()?
            .iter()
            .filter_map(|(path, state)| {
                let state = match state.as_str()? {
                    "available" => CapabilityState::Available,
                    "unconfigured" => CapabilityState::Unconfigured,
                    "unpermitted" => CapabilityState::Unpermitted,
                    _ => return None,
                };
                Some((path.clone(), state))
            })
            .collect();
        let scope = Scope::named(data.get("scope").and_then(Value::as_str));
        Some(Capabilities { states, scope })
    }
}

/// Why the connection to the stack could not even be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("cannot prepare the connection to the stack: {0}")]
    Tls(#[source] rustls::Error),
    #[error("cannot prepare the connection to the stack: {0}")]
    Client(#[source] reqwest::Error),
}

pub struct Stack {
    client: sdk::Client,
    key_digest: [u8; 32],
    withheld: Secrets,
}

impl Stack {
    pub fn new(
        address: &StackAddress,
        key: Key,
        limits: AnswerLimits,
    ) -> Result<Stack, SetupError> {
        Ok(Stack {
            key_digest: key.digest(),
            withheld: key.withheld(),
            client: client(address, Some(key), limits)?,
        })
    }

    /// The SHA-256 of the key this stack is reached with.
    pub fn key_digest(&self) -> [u8; 32] {
        self.key_digest
    }

    /// The key and its hex part, to withhold from everything handed over for this key.
    pub fn withheld(&self) -> &Secrets {
        &self.withheld
    }

    pub async fn capabilities(&self) -> Result<Capabilities, Failure> {
        let response = self
            .client
            .read_capabilities()
            .send()
            .await
            .map_err(failure)?;
        let status = response.status().as_u16();
        let envelope = response.into_inner().into_value();
        Capabilities::from_envelope(&envelope).ok_or(Failure::Unexpected {
            status: Some(status),
        })
    }

    pub async fn read(&self, read: Read, arguments: &Parameters) -> Result<Reply, Failure> {
        sdk::send_read(&self.client, read, arguments)
            .await
            .map_err(failure)
    }

    /// Rehearses an action: the same request with `dry_run: true`, which writes nothing.
    pub async fn rehearse(
        &self,
        action: Action,
        mut body: serde_json::Map<String, Value>,
    ) -> Result<Reply, Failure> {
        body.insert(DRY_RUN_ARGUMENT.to_owned(), Value::Bool(true));
        sdk::send_action(&self.client, action, body, None)
            .await
            .map_err(failure)
    }

    /// Sends an action once (actions are never retried), under an `Idempotency-Key`: should the
    /// same request reach the stack again with it, the stack answers with its first answer and
    /// does not act again.
    pub async fn act(
        &self,
        action: Action,
        body: serde_json::Map<String, Value>,
        idempotency_key: Option<&str>,
    ) -> Result<Reply, Failure> {
        sdk::send_action(&self.client, action, body, idempotency_key)
            .await
            .map_err(failure)
    }

    /// Where a job stands: `202` running, `200` finished; a stopped or unknown job is a refusal
    /// (`500` or `404`). A job's identifier is put in the path only when it is a plain one.
    pub async fn job(&self, job: &str) -> Result<Reply, Failure> {
        if !path::is_plain_identifier(job) {
            return Err(Failure::PathOutsideTemplate);
        }
        let response = self
            .client
            .read_job()
            .job(job)
            .send()
            .await
            .map_err(failure)?;
        Reply::from_envelope(response).map_err(failure)
    }
}

/// The SDK client for the stack at `address`: TLS that trusts exactly its pinned certificate,
/// sending `key` (or none), reading within `limits`.
fn client(
    address: &StackAddress,
    key: Option<Key>,
    limits: AnswerLimits,
) -> Result<sdk::Client, SetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(PinVerifier::new(address.pin, &provider));
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(SetupError::Tls)?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let http = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .tcp_nodelay(true)
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(ANSWER_TIMEOUT)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        // A request is sent once: an act the stack may have taken is never sent again behind the
        // caller's back, and with nothing to resend, no request is copied in case it is.
        .retry(reqwest::retry::never().max_retries_per_request(0))
        .user_agent(concat!("lemonfiber-mcp/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(SetupError::Client)?;
    Ok(sdk::Client::new_with_client(
        &address.base_url,
        http,
        Door::new(key, limits),
    ))
}

fn failure(error: Error<Value>) -> Failure {
    match error {
        Error::ErrorResponse(response) => {
            let status = response.status().as_u16();
            let retry_after_seconds = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.trim().parse().ok());
            // Read by its status and code alone: whatever else the stack put in it, of whatever
            // shape, travels on as data.
            let problem = match response.into_inner() {
                Value::Object(mut envelope) => envelope.remove("data").unwrap_or(Value::Null),
                _ => Value::Null,
            };
            Failure::Refused(Refusal {
                status,
                problem,
                retry_after_seconds,
            })
        }
        Error::CommunicationError(error)
        | Error::ResponseBodyError(error)
        | Error::InvalidUpgrade(error) => {
            if let Some(too_large) = bounded::too_large(&error) {
                Failure::TooLarge {
                    limit: too_large.limit,
                }
            } else if pin::is_pin_mismatch(&error) {
                Failure::PinMismatch
            } else if error.is_timeout() {
                Failure::Unreachable(Unreachable::TimedOut)
            } else if error.is_connect() {
                Failure::Unreachable(Unreachable::NoConnection)
            } else {
                Failure::Unreachable(Unreachable::Broken)
            }
        }
        Error::UnexpectedResponse(response) => Failure::Unexpected {
            status: Some(response.status().as_u16()),
        },
        Error::Custom(why) if why == door::PATH_OUTSIDE_TEMPLATE => Failure::PathOutsideTemplate,
        Error::InvalidResponsePayload(..) | Error::InvalidRequest(_) | Error::Custom(_) => {
            Failure::Unexpected { status: None }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stack_on_a_closed_port() -> Stack {
        let address = StackAddress {
            base_url: "https://127.0.0.1:1".to_owned(),
            pin: Fingerprint::of_certificate(b"none"),
        };
        let key = Key::parse("lfk_00112233445566778899aabbccddeeff").expect("a key");
        let limits = AnswerLimits {
            wire: 1024,
            keep: 1024,
        };
        Stack::new(&address, key, limits).expect("a stack")
    }

    /// However a caller gets past the arguments check, the door sends nothing whose path
    /// escapes its template.
    #[tokio::test]
    async fn the_door_sends_nothing_outside_its_template() {
        let stack = stack_on_a_closed_port();
        for escaping in ["..", ".", "..\\credentials", "a\\..\\..\\capabilities"] {
            let sent = stack.client.read_held_by_id().id(escaping).send().await;
            assert!(
                matches!(
                    failure(sent.map(|_| ()).expect_err(escaping)),
                    Failure::PathOutsideTemplate
                ),
                "{escaping}"
            );
        }
        let plain = stack.client.read_held_by_id().id("ttl-1").send().await;
        assert!(
            matches!(
                failure(plain.map(|_| ()).expect_err("closed")),
                Failure::Unreachable(_)
            ),
            "a plain identifier is sent (and finds nothing at a closed port)"
        );
        assert_eq!(
            stack.job("../admin").await,
            Err(Failure::PathOutsideTemplate)
        );
        // What the URL parser would normalise into another identifier is refused as well.
        for normalised in [".\\0", "a\\..\\b", "./x"] {
            let mut given = serde_json::Map::new();
            given.insert("id".to_owned(), json!(normalised));
            let read = stack
                .read(Read::HeldById, &Parameters::unchecked(given))
                .await;
            assert_eq!(read, Err(Failure::PathOutsideTemplate), "{normalised}");
        }
    }

    #[test]
    fn an_answer_with_fields_the_contract_does_not_name_is_accepted() {
        let text = r#"{"api_version":1,"kind":"status","data":{"newer":{"x":1}},"served_by":"a newer core"}"#;
        let envelope = envelope::Envelope::read(text.as_bytes()).expect("accepted");
        let envelope = envelope.into_value();
        assert_eq!(envelope["data"]["newer"]["x"], 1);
        assert!(envelope.get("served_by").is_none(), "{envelope}");
    }

    #[test]
    fn capabilities_keep_the_states_they_know() {
        let envelope = json!({"api_version": 1, "kind": "capabilities", "data": {
            "capabilities": {"/api/status": "available", "/api/config": "unconfigured",
                             "/api/actions/restart": "unpermitted", "/api/future": "someday"},
            "scope": "read"}});
        let capabilities = Capabilities::from_envelope(&envelope).expect("capabilities");
        assert_eq!(
            capabilities.state_of("/api/status"),
            Some(CapabilityState::Available)
        );
        assert_eq!(
            capabilities.state_of("/api/config"),
            Some(CapabilityState::Unconfigured)
        );
        assert_eq!(
            capabilities.state_of("/api/actions/restart"),
            Some(CapabilityState::Unpermitted)
        );
        assert_eq!(capabilities.state_of("/api/future"), None);
        assert_eq!(capabilities.scope, Scope::Read);
        let unknown =
            json!({"kind": "capabilities", "data": {"capabilities": {}, "scope": "root"}});
        let unknown = Capabilities::from_envelope(&unknown).expect("capabilities");
        assert_eq!(unknown.scope, Scope::Unknown);
        assert!(Capabilities::from_envelope(&json!({"kind": "status", "data": {}})).is_none());
    }
}
