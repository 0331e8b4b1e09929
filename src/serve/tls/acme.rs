//! `acme`: a certificate issued by an ACME authority (RFC 8555): a public one, for assistants
//! whose provider makes the connection, or one the operator runs. The account and the issued
//! certificate are kept in the state folder, so a restart neither registers again nor asks for a
//! certificate it has. Until the first is issued a stand-in of the server's own is served. It
//! renews when a third of the lifetime is left, tries again with a growing wait (or as long as the
//! authority asks), and a failed renewal never takes the working certificate out of service.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, Identifier, NewAccount, NewOrder,
    OrderStatus, RetryPolicy,
};
use tokio_util::sync::CancellationToken;

use super::inspect::{Lifetime, said};
use super::{
    CertError, Presented, Started, Swappable, chain_of, keep, key_of, read_text, servable,
    wait_until,
};
use crate::backoff::Backoff;
use crate::config::AcmeSettings;

mod answers;
mod connection;
use answers::Answers;
use connection::Connection;

pub(super) const ACCOUNT_FILE: &str = "acme-account.json";
/// The issued chain with its key and the directory that issued it, kept whole in one file so a
/// chain is never found beside another's key.
pub(super) const ISSUED_FILE: &str = "acme-issued.json";
/// The issued chain alone, for a client to trust as it is.
const CERTIFICATE_FILE: &str = "acme-certificate.pem";
/// The wait after a first failure; it doubles with each failure after, up to the longest.
const FIRST_WAIT: Duration = Duration::from_secs(10);
const LONGEST_WAIT: Duration = Duration::from_secs(6 * 3600);
/// How long an order may take to be validated and issued before it is given up.
const ORDER_TIME: Duration = Duration::from_secs(300);

/// Why a certificate could not be had from the authority this time. Names what the authority
/// said, never the account's key.
#[derive(Debug, thiserror::Error)]
pub enum AcmeError {
    #[error("the authority could not be asked to open the account: {0}")]
    Account(#[source] instant_acme::Error),
    #[error("the kept ACME account cannot be used: {0}")]
    KeptAccount(String),
    #[error("the authority did not take the order: {0}")]
    Order(#[source] instant_acme::Error),
    #[error("the authority offers no {0:?} challenge for {1}")]
    NoChallenge(instant_acme::ChallengeType, String),
    #[error("the authority holds {0} as {1:?}, which cannot be answered")]
    Authorization(String, AuthorizationStatus),
    #[error("the authority did not accept the answer for {0}: {1}")]
    NotValidated(String, String),
    #[error("the challenge answer could not be made: {0}")]
    Answer(#[source] CertError),
    #[error("cannot listen for HTTP-01 on {0}: {1}")]
    Listen(std::net::SocketAddr, #[source] std::io::Error),
    #[error("the DNS hook {hook} failed to {1} the record: {2}", hook = .0.display())]
    Hook(PathBuf, &'static str, String),
    #[error("the issued certificate cannot be served: {0}")]
    Issued(#[source] CertError),
    #[error("the server is stopping")]
    Stopping,
}

pub(super) fn start(
    settings: &AcmeSettings,
    state: &Path,
    names: &[String],
    ends: &CancellationToken,
) -> Result<Started, CertError> {
    let connection = Connection::new(settings.roots.as_deref())?;
    let directory = settings.directory.as_str();
    let kept = Issued::kept(state, directory, names).unwrap_or_else(|problem| {
        tracing::warn!(%problem, "the certificate issued before cannot be served; a new one is asked for");
        None
    });
    let (first, lifetime) = match kept {
        Some((presented, lifetime)) => (presented, Some(lifetime)),
        None => {
            tracing::warn!(
                %directory,
                "no certificate is issued yet: serving a stand-in of this server's own, which only a client pinning \
                 it can check, until the authority issues one"
            );
            (super::pinned::own_certificate(state, names)?, None)
        }
    };
    let resolver = Swappable::new(first.certified.clone());
    let issuing = Issuing {
        settings: settings.clone(),
        state: state.to_owned(),
        names: names.to_vec(),
        connection,
        resolver: resolver.clone(),
        account: None,
    };
    let keeper = tokio::spawn(issuing.keep_issued(lifetime, ends.clone()));
    Ok(Started {
        first,
        resolver,
        trust_file: state.join(CERTIFICATE_FILE),
        root_pem: None,
        root_fingerprint: None,
        keeper,
    })
}

/// A certificate as issued, kept for the next start.
#[derive(serde::Serialize, serde::Deserialize)]
struct Issued {
    directory: String,
    chain: String,
    key: String,
}

impl Issued {
    /// The chain and key as served, if they can be for `names` now.
    fn servable(&self, names: &[String], file: &Path) -> Result<(Presented, Lifetime), CertError> {
        let chain = chain_of(self.chain.as_bytes(), file)?;
        let key = key_of(self.key.as_bytes(), file)?;
        servable(chain, key, names, (file, file))
    }

    /// The certificate `directory` issued before, if one is kept; an error if it is kept but
    /// cannot be served.
    fn kept(
        state: &Path,
        directory: &str,
        names: &[String],
    ) -> Result<Option<(Presented, Lifetime)>, CertError> {
        let file = state.join(ISSUED_FILE);
        let text = match read_text(&file) {
            Ok(text) => text,
            Err(CertError::NotRead(_, error)) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(problem) => return Err(problem),
        };
        let issued: Issued =
            serde_json::from_str(&text).map_err(|_| CertError::NotOurs(file.clone()))?;
        if issued.directory != directory {
            return Ok(None);
        }
        issued.servable(names, &file).map(Some)
    }
}

/// The account as kept: the directory it belongs to, and its credentials.
#[derive(serde::Serialize, serde::Deserialize)]
struct KeptAccount {
    directory: String,
    credentials: AccountCredentials,
}

struct Issuing {
    settings: AcmeSettings,
    state: PathBuf,
    names: Vec<String>,
    connection: Connection,
    resolver: Arc<Swappable>,
    account: Option<Account>,
}

impl Issuing {
    /// Has a certificate issued whenever the one served (`serving`; `None`: the stand-in) is due
    /// for renewal, until `ends`.
    async fn keep_issued(mut self, serving: Option<Lifetime>, ends: CancellationToken) {
        let mut due = serving.map_or_else(SystemTime::now, |lifetime| lifetime.renew_at());
        let mut after_failure = Backoff::new(FIRST_WAIT, LONGEST_WAIT);
        while wait_until(due, &ends).await {
            match self.issue(&ends).await {
                Ok(lifetime) => {
                    after_failure.reset();
                    // An authority issuing only very short lives is not asked again at once.
                    due = lifetime.renew_at().max(SystemTime::now() + FIRST_WAIT);
                    tracing::info!(
                        until = %said(lifetime.not_after),
                        renews_at = %said(due),
                        "serving the certificate the ACME authority issued"
                    );
                }
                Err(AcmeError::Stopping) => return,
                Err(problem) => {
                    let asked = self.connection.take_retry_after();
                    let ours = after_failure.next_wait();
                    let wait = asked.map_or(ours, |asked| asked.max(ours));
                    due = SystemTime::now() + wait;
                    tracing::warn!(
                        %problem,
                        next_try_in_seconds = wait.as_secs(),
                        "no certificate from the ACME authority this time; the one in service stays"
                    );
                }
            }
        }
    }

    /// One order, from account to a certificate served and kept. The answers given are withdrawn
    /// however the order ends, the server stopping included.
    async fn issue(&mut self, ends: &CancellationToken) -> Result<Lifetime, AcmeError> {
        let account = self.account().await?;
        let identifiers: Vec<Identifier> =
            self.names.iter().cloned().map(Identifier::Dns).collect();
        let mut order = account
            .new_order(&NewOrder::new(&identifiers))
            .await
            .map_err(AcmeError::Order)?;
        let mut answers = Answers::open(&self.settings.challenge, &self.resolver).await?;
        let validated = tokio::select! {
            () = ends.cancelled() => Err(AcmeError::Stopping),
            validated = validate(&mut order, &mut answers) => validated,
        };
        answers.withdraw().await;
        validated?;
        let key = order.finalize().await.map_err(AcmeError::Order)?;
        let chain = order
            .poll_certificate(&retries())
            .await
            .map_err(AcmeError::Order)?;
        self.serve_and_keep(Issued {
            directory: self.settings.directory.to_string(),
            chain,
            key,
        })
    }

    /// The account kept in the state folder for this directory, or a new one kept there.
    async fn account(&mut self) -> Result<Account, AcmeError> {
        if let Some(account) = &self.account {
            return Ok(account.clone());
        }
        let file = self.state.join(ACCOUNT_FILE);
        let directory = self.settings.directory.to_string();
        let kept = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<KeptAccount>(&bytes).ok())
            .filter(|kept| kept.directory == directory);
        let builder = Account::builder_with_http(Box::new(self.connection.clone()));
        let account = match kept {
            Some(kept) => builder
                .from_credentials(kept.credentials)
                .await
                .map_err(AcmeError::Account)?,
            None => {
                let contact: Vec<&str> = self.settings.contact.iter().map(String::as_str).collect();
                let (account, credentials) = builder
                    .create(
                        &NewAccount {
                            contact: &contact,
                            terms_of_service_agreed: true,
                            only_return_existing: false,
                        },
                        directory.clone(),
                        None,
                    )
                    .await
                    .map_err(AcmeError::Account)?;
                let kept = serde_json::to_vec(&KeptAccount {
                    directory,
                    credentials,
                })
                .map_err(|error| AcmeError::KeptAccount(error.to_string()))?;
                keep(&self.state, ACCOUNT_FILE, &kept)
                    .map_err(|error| AcmeError::KeptAccount(error.to_string()))?;
                tracing::info!(file = %file.display(), "opened an account with the ACME authority");
                account
            }
        };
        self.account = Some(account.clone());
        Ok(account)
    }

    /// Serves what was issued, once it is known to be servable, and keeps it for the next start.
    fn serve_and_keep(&self, issued: Issued) -> Result<Lifetime, AcmeError> {
        let (presented, lifetime) = issued
            .servable(&self.names, Path::new("the issued certificate"))
            .map_err(AcmeError::Issued)?;
        self.resolver.swap(presented.certified);
        let kept = serde_json::to_vec(&issued)
            .map_err(|error| CertError::NotWritten(self.state.join(ISSUED_FILE), error.into()))
            .and_then(|whole| keep(&self.state, ISSUED_FILE, &whole))
            .and_then(|()| keep(&self.state, CERTIFICATE_FILE, issued.chain.as_bytes()));
        if let Err(problem) = kept {
            tracing::warn!(%problem, "the issued certificate is served but could not be kept for the next start");
        }
        Ok(lifetime)
    }
}

/// Answers each pending authorization of `order` and waits for the authority to validate them.
async fn validate(order: &mut instant_acme::Order, answers: &mut Answers) -> Result<(), AcmeError> {
    let mut authorizations = order.authorizations();
    while let Some(authorization) = authorizations.next().await {
        let mut authorization = authorization.map_err(AcmeError::Order)?;
        let name = authorization.identifier().to_string();
        match authorization.status {
            AuthorizationStatus::Valid => continue,
            AuthorizationStatus::Pending => {}
            other => return Err(AcmeError::Authorization(name, other)),
        }
        let kind = answers.kind();
        let mut challenge = authorization
            .challenge(kind.clone())
            .ok_or(AcmeError::NoChallenge(kind, name.clone()))?;
        let token = challenge.token.clone();
        answers
            .give(&name, &token, &challenge.key_authorization())
            .await?;
        challenge.set_ready().await.map_err(AcmeError::Order)?;
    }
    match order.poll_ready(&retries()).await {
        Ok(OrderStatus::Ready) => Ok(()),
        Ok(_) => Err(why_not_validated(order).await),
        Err(instant_acme::Error::Api(problem)) => Err(AcmeError::NotValidated(
            "the order".to_owned(),
            problem.to_string(),
        )),
        Err(other) => Err(AcmeError::Order(other)),
    }
}

/// What the authority said of the first answer it did not accept.
async fn why_not_validated(order: &mut instant_acme::Order) -> AcmeError {
    let mut authorizations = order.authorizations();
    while let Some(Ok(mut authorization)) = authorizations.next().await {
        let Ok(state) = authorization.refresh().await else {
            continue;
        };
        let name = state.identifier().to_string();
        if let Some(problem) = state
            .challenges
            .iter()
            .find_map(|challenge| challenge.error.as_ref())
        {
            return AcmeError::NotValidated(name, problem.to_string());
        }
    }
    AcmeError::NotValidated("the order".to_owned(), "no reason given".to_owned())
}

fn retries() -> RetryPolicy {
    RetryPolicy::new()
        .initial_delay(Duration::from_millis(250))
        .backoff(1.5)
        .timeout(ORDER_TIME)
}
