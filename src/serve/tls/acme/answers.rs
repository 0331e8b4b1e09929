//! Answering the authority's challenges while an order is pending, in the way the operator chose,
//! and withdrawing every answer once the order is settled:
//! - TLS-ALPN-01 (RFC 8737): the serving listener presents a certificate bearing the answer to a
//!   handshake that offers `acme-tls/1` for the name;
//! - HTTP-01: a plain HTTP listener, opened for the order alone, serves the answer at
//!   `/.well-known/acme-challenge/<token>` and nothing else;
//! - DNS-01: the operator's hook sets the TXT record (`<hook> set <name> <value>`) and clears it
//!   after (`<hook> clear <name> <value>`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use instant_acme::{ChallengeType, KeyAuthorization};
use rcgen::{CertificateParams, CustomExtension};
use rustls::sign::CertifiedKey;
use tokio_util::sync::CancellationToken;

use super::AcmeError;
use crate::config::AcmeChallenge;
use crate::lock::lock;
use crate::serve::tls::{CertError, Swappable, new_key};

/// The longest an operator's DNS hook may take, waiting for the record to be seen included.
const HOOK_TIME: Duration = Duration::from_secs(300);

/// The answers given for one order.
pub struct Answers {
    way: Way,
    /// Names (and, for DNS-01, values) answered, to withdraw.
    given: Vec<(String, String)>,
}

enum Way {
    TlsAlpn(Arc<Swappable>),
    Http {
        tokens: Arc<Mutex<HashMap<String, String>>>,
        closes: CancellationToken,
    },
    Dns(PathBuf),
}

impl Answers {
    /// Ready to answer in the way `challenge` says: for HTTP-01, listening now.
    pub async fn open(
        challenge: &AcmeChallenge,
        resolver: &Arc<Swappable>,
    ) -> Result<Answers, AcmeError> {
        let way = match challenge {
            AcmeChallenge::TlsAlpn => Way::TlsAlpn(resolver.clone()),
            AcmeChallenge::Dns(hook) => Way::Dns(hook.clone()),
            AcmeChallenge::Http(address) => {
                let tokens = Arc::new(Mutex::new(HashMap::new()));
                let closes = CancellationToken::new();
                listen_for_http(*address, tokens.clone(), closes.clone()).await?;
                Way::Http { tokens, closes }
            }
        };
        Ok(Answers {
            way,
            given: Vec::new(),
        })
    }

    /// The kind of challenge these answers are for.
    pub fn kind(&self) -> ChallengeType {
        match self.way {
            Way::TlsAlpn(_) => ChallengeType::TlsAlpn01,
            Way::Http { .. } => ChallengeType::Http01,
            Way::Dns(_) => ChallengeType::Dns01,
        }
    }

    /// Answers the challenge of `token` for `name`.
    pub async fn give(
        &mut self,
        name: &str,
        token: &str,
        answer: &KeyAuthorization,
    ) -> Result<(), AcmeError> {
        match &self.way {
            Way::TlsAlpn(resolver) => {
                resolver.answer_challenge(name, alpn_certificate(name, answer)?);
                self.given.push((name.to_owned(), String::new()));
            }
            Way::Http { tokens, .. } => {
                lock(tokens).insert(token.to_owned(), answer.as_str().to_owned());
            }
            Way::Dns(hook) => {
                let record = format!("_acme-challenge.{}", name.trim_start_matches("*."));
                let value = answer.dns_value();
                // Recorded first: a hook that fails half-way may have set it.
                self.given.push((record.clone(), value.clone()));
                run_hook(hook, "set", &record, &value).await?;
            }
        }
        Ok(())
    }

    /// Withdraws every answer given, and closes the HTTP-01 listener.
    pub async fn withdraw(self) {
        match &self.way {
            Way::TlsAlpn(resolver) => {
                for (name, _) in &self.given {
                    resolver.withdraw_challenge(name);
                }
            }
            Way::Http { closes, .. } => closes.cancel(),
            Way::Dns(hook) => {
                for (record, value) in &self.given {
                    if let Err(problem) = run_hook(hook, "clear", record, value).await {
                        tracing::warn!(%problem, "the DNS-01 record could not be cleared; clear it by hand");
                    }
                }
            }
        }
    }
}

/// The certificate that answers a TLS-ALPN-01 look for `name`: its only name `name`, and the
/// digest of the answer in the critical acmeIdentifier extension.
fn alpn_certificate(name: &str, answer: &KeyAuthorization) -> Result<Arc<CertifiedKey>, AcmeError> {
    let (key_pair, key) = new_key().map_err(AcmeError::Answer)?;
    let mut params = CertificateParams::new(vec![name.to_owned()])
        .map_err(|error| AcmeError::Answer(CertError::BadNames(error)))?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .custom_extensions
        .push(CustomExtension::new_acme_identifier(
            answer.digest().as_ref(),
        ));
    let certificate = params
        .self_signed(&key_pair)
        .map_err(|error| AcmeError::Answer(CertError::NotSigned(error)))?;
    // Built without rustls's own look at the certificate, which refuses the critical extension
    // that is the whole point of this one.
    let signing = rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|error| AcmeError::Answer(CertError::Unusable(error)))?;
    Ok(Arc::new(CertifiedKey::new(
        vec![certificate.der().clone()],
        signing,
    )))
}

/// Serves HTTP-01 answers at `address` until `closes`.
async fn listen_for_http(
    address: SocketAddr,
    tokens: Arc<Mutex<HashMap<String, String>>>,
    closes: CancellationToken,
) -> Result<(), AcmeError> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|error| AcmeError::Listen(address, error))?;
    let answers = axum::Router::new()
        .route("/.well-known/acme-challenge/{token}", get(http_answer))
        .with_state(tokens);
    tokio::spawn(async move {
        let served = axum::serve(listener, answers)
            .with_graceful_shutdown(async move { closes.cancelled().await })
            .await;
        if let Err(error) = served {
            tracing::warn!(%error, "the HTTP-01 listener stopped");
        }
    });
    Ok(())
}

async fn http_answer(
    State(tokens): State<Arc<Mutex<HashMap<String, String>>>>,
    Path(token): Path<String>,
) -> Result<String, StatusCode> {
    lock(&tokens)
        .get(&token)
        .cloned()
        .ok_or(StatusCode::NOT_FOUND)
}

/// Runs the operator's DNS hook; its output goes to the log stream, never to stdout.
async fn run_hook(
    hook: &PathBuf,
    what: &'static str,
    record: &str,
    value: &str,
) -> Result<(), AcmeError> {
    let mut command = tokio::process::Command::new(hook);
    command
        .args([what, record, value])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true);
    let ran = tokio::time::timeout(HOOK_TIME, command.status()).await;
    match ran {
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(AcmeError::Hook(hook.clone(), what, status.to_string())),
        Ok(Err(error)) => Err(AcmeError::Hook(hook.clone(), what, error.to_string())),
        Err(_) => Err(AcmeError::Hook(
            hook.clone(),
            what,
            format!("it did not finish within {} seconds", HOOK_TIME.as_secs()),
        )),
    }
}
