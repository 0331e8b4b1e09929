//! The keys the HTTP mode serves. Nothing lasting is kept for a key until the stack has accepted
//! it (its capabilities read answered): before that there is one short check per key, shared by
//! every request that brings the key meanwhile, and a refusal is remembered apart. An accepted
//! key gets its own MCP service: its sessions (bound to it, since no other key's requests reach
//! them), its standing with the stack, and its limits. Kept under the key's digest, for a bounded
//! number of keys.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::{OnceCell, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::limits::Allowance;
use super::reaching::TurnedAway;
use super::refused::RefusedKeys;
use super::sessions::{InUse, KeySessions, Permits};
use crate::access::by_digest::ByDigest;
use crate::access::offer::Offer;
use crate::access::standing::{self, SharedStanding, Verdict};
use crate::answer::sentences::Via;
use crate::config::Limits;
use crate::lock::lock;
use crate::mcp::reach::SessionReach;
use crate::mcp::server::{Common, LemonfiberServer};
use crate::stack::credential::Key;
use crate::stack::{Stack, StackAddress};

/// The most accepted keys whose services are kept at once; past it, the one used longest ago is
/// let go and its sessions end.
const KEYS_KEPT: usize = 1024;
/// A session no request has touched for this long is closed.
const SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

pub struct KeyService {
    pub service: StreamableHttpService<LemonfiberServer, KeySessions>,
    stack: Arc<Stack>,
    common: Arc<Common>,
    sessions: Arc<KeySessions>,
    standing: SharedStanding,
    ends: CancellationToken,
    rate: Allowance,
    at_once: Arc<Semaphore>,
    session_permits: Arc<Semaphore>,
}

impl KeyService {
    /// A handler for one request this server serves itself, as the MCP library makes one for
    /// each request it serves.
    pub fn server(&self) -> LemonfiberServer {
        LemonfiberServer::new(
            self.stack.clone(),
            self.standing.clone(),
            self.common.clone(),
            Via::Http,
        )
    }

    /// Cancelled when the key's service ends, and every answer of its with it.
    pub fn ends(&self) -> &CancellationToken {
        &self.ends
    }

    /// Takes one request from the key's allowance, or says how many seconds until there is one.
    pub fn admit(&self) -> Result<(), u64> {
        self.rate.take()
    }

    /// One of the requests the key may have under way at once, if one is free.
    pub fn under_way(&self) -> Option<OwnedSemaphorePermit> {
        self.at_once.clone().try_acquire_owned().ok()
    }

    /// One of the sessions the key may hold, if one is free.
    pub fn session_permit(&self) -> Option<OwnedSemaphorePermit> {
        self.session_permits.clone().try_acquire_owned().ok()
    }

    /// A call of the session `id` served here: see [`KeySessions::call_in`].
    pub async fn call_in(&self, id: &str) -> Option<(SessionReach, InUse)> {
        self.sessions.call_in(id).await
    }

    pub async fn has_session(&self, id: &str) -> bool {
        self.sessions.has_session(&id.into()).await.unwrap_or(false)
    }

    /// Whether the stack has refused the key since it accepted it.
    async fn is_refused(&self) -> bool {
        self.standing.lock().await.is_refused()
    }

    /// Whether what the stack last said of the key is too old to open a session on (older than
    /// [`standing::CAPABILITIES_FRESH_FOR`]), or nothing was said.
    async fn needs_confirming(&self) -> bool {
        self.standing.lock().await.needs_reading()
    }

    /// What the key is offered, as the stack last said.
    pub async fn offer(&self) -> Option<Offer> {
        self.standing.lock().await.position().offer().cloned()
    }

    /// Asks the stack now what the key may do, and keeps its answer: `None` while it still
    /// takes the key, else what it said.
    async fn read_again(&self) -> Option<Admission> {
        if self.is_refused().await {
            return Some(Admission::Refused);
        }
        let read = self.stack.capabilities().await;
        let said = read.as_ref().err().map(Verdict::of_failure);
        self.standing.lock().await.record(read);
        said
    }
}

/// What became of a key brought to the server: its MCP service, once the stack has accepted it.
pub type Admission = Verdict<Arc<KeyService>>;

/// Every accepted key's service, the refused keys, and what a key's service is made with.
pub struct KeyServices {
    accepted: ByDigest<KeyService>,
    refused: RefusedKeys,
    checking: Mutex<HashMap<[u8; 32], Arc<OnceCell<Admission>>>>,
    sessions: Arc<Semaphore>,
    stack: StackAddress,
    /// What every key's MCP service is made with, but for the token that ends it.
    mcp_config: StreamableHttpServerConfig,
    common: Arc<Common>,
    limits: Limits,
    ends: CancellationToken,
    turned_away: TurnedAway,
}

impl KeyServices {
    pub fn new(
        stack: StackAddress,
        mcp_config: StreamableHttpServerConfig,
        common: Arc<Common>,
        limits: Limits,
        ends: CancellationToken,
        refused: RefusedKeys,
    ) -> KeyServices {
        KeyServices {
            accepted: ByDigest::new(KEYS_KEPT),
            refused,
            checking: Mutex::new(HashMap::new()),
            sessions: Arc::new(Semaphore::new(limits.sessions.get())),
            stack,
            mcp_config,
            common,
            limits,
            ends,
            turned_away: TurnedAway::new(),
        }
    }

    /// A key already known: its service, or its refusal. `None` for a key the server has not
    /// yet asked the stack about. A request that `opens` something (a session, or a request of a
    /// version with no sessions) is answered refused once the stack has refused the key, and
    /// asks the stack again when what it last said of the key is no longer fresh, so that a
    /// connector is sent back to sign in rather than shown tools that all fail (F13-R9).
    pub async fn known(&self, key: &Key, opens: bool) -> Option<Admission> {
        let digest = key.digest();
        if let Some(service) = self.accepted.get(&digest) {
            if opens
                && service.needs_confirming().await
                && let Some(Admission::Refused) = service.read_again().await
            {
                self.refused.revoked(digest);
                return Some(Admission::Refused);
            }
            // The stack refused a key it had accepted: remembered apart, so it stays refused
            // whatever is let go later. Meanwhile its open sessions go on, and every tool in them
            // says the key was refused (it is never sent again).
            if service.is_refused().await {
                self.refused.revoked(digest);
                if opens {
                    return Some(Admission::Refused);
                }
            }
            return Some(Admission::Accepted(service));
        }
        self.refused.contains(&digest).then_some(Admission::Refused)
    }

    /// What the stack says of `key` now, not from an answer up to 30 seconds old: for a decision
    /// that hands out a grant (a sign-in, a refresh).
    pub async fn now(&self, key: Key) -> Admission {
        match self.known(&key, true).await {
            Some(Admission::Accepted(service)) => match service.read_again().await {
                Some(Admission::Refused) => {
                    self.refused.revoked(key.digest());
                    Admission::Refused
                }
                Some(other) => other,
                None => Admission::Accepted(service),
            },
            Some(known) => known,
            None => self.check(key).await,
        }
    }

    /// Asks the stack about a key the server has not seen: once, however many requests bring
    /// it meanwhile. Only an accepted key is kept; a refused one is remembered as refused.
    pub async fn check(&self, key: Key) -> Admission {
        let digest = key.digest();
        let check = Forget {
            checking: &self.checking,
            digest,
            cell: lock(&self.checking).entry(digest).or_default().clone(),
        };
        check
            .cell
            .get_or_init(|| self.ask_the_stack(key))
            .await
            .clone()
    }

    async fn ask_the_stack(&self, key: Key) -> Admission {
        let digest = key.digest();
        let stack = match Stack::new(&self.stack, key, self.common.conduct.answers) {
            Ok(stack) => stack,
            Err(error) => {
                tracing::warn!(%error, "a key's connection to the stack could not be made");
                return Admission::Unreachable;
            }
        };
        match stack.capabilities().await {
            Ok(capabilities) => {
                let service = self.make(stack, standing::shared(Some(capabilities)));
                let (service, evicted) = self.accepted.insert(digest, service);
                if let Some(evicted) = evicted {
                    evicted.ends.cancel();
                }
                Admission::Accepted(service)
            }
            Err(failure) => {
                let checked = Verdict::of_failure(&failure);
                match checked {
                    Admission::Refused => self.refused.unknown(digest),
                    Admission::NotPinned => tracing::warn!(
                        "the stack does not count this server's connection as pinned (ADMIT-11); check the stack's address and pin"
                    ),
                    Admission::Unreachable => self.turned_away.one(&self.stack, &failure),
                    _ => {}
                }
                checked
            }
        }
    }

    fn make(&self, stack: Stack, standing: SharedStanding) -> KeyService {
        let stack = Arc::new(stack);
        let for_service = stack.clone();
        let mut local = LocalSessionManager::default();
        local.session_config.keep_alive = Some(SESSION_IDLE);
        let sessions = Arc::new(KeySessions::new(local));
        let ends = self.ends.child_token();
        let config = self
            .mcp_config
            .clone()
            .with_cancellation_token(ends.clone());
        let common = self.common.clone();
        let for_sessions = standing.clone();
        let begun = sessions.begun();
        let service = StreamableHttpService::new(
            move || {
                let server = LemonfiberServer::new(
                    stack.clone(),
                    for_sessions.clone(),
                    common.clone(),
                    Via::Http,
                );
                Ok(server.telling(begun.clone()))
            },
            sessions.clone(),
            config,
        );
        KeyService {
            service,
            stack: for_service,
            common: self.common.clone(),
            sessions,
            standing,
            ends,
            rate: Allowance::full(self.limits.per_minute),
            at_once: Arc::new(Semaphore::new(self.limits.at_once.get())),
            session_permits: Arc::new(Semaphore::new(self.limits.key_sessions.get())),
        }
    }

    /// The permits a new session of `service` would hold: free ones if both the server's cap
    /// and the key's leave one; else those of the key's own session that has gone longest
    /// without a request, which is closed for it, so that sessions a client walked away from
    /// never lock its key out. `Err` says which cap is full when every session of the key is in
    /// use (or it has none).
    pub async fn session_permits(&self, service: &KeyService) -> Result<Permits, SessionsFull> {
        let full = match service.session_permit() {
            Some(key) => match self.sessions.clone().try_acquire_owned() {
                Ok(server) => return Ok(Permits::new(server, key)),
                Err(_) => SessionsFull::Server,
            },
            None => SessionsFull::Key,
        };
        service.sessions.close_longest_idle().await.ok_or(full)
    }
}

/// Lets a key's check go once its requests are done with it, answered or abandoned, so that a
/// check is never kept beyond the requests waiting on it.
struct Forget<'a> {
    checking: &'a Mutex<HashMap<[u8; 32], Arc<OnceCell<Admission>>>>,
    digest: [u8; 32],
    cell: Arc<OnceCell<Admission>>,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        let mut checking = lock(self.checking);
        // An answered check is done with; an abandoned one goes with the last request holding
        // it (held by the map and by that request alone).
        let done = |kept: &Arc<OnceCell<Admission>>| {
            Arc::ptr_eq(kept, &self.cell) && (kept.initialized() || Arc::strong_count(kept) <= 2)
        };
        if checking.get(&self.digest).is_some_and(done) {
            checking.remove(&self.digest);
        }
    }
}

/// Which cap left no room for another session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionsFull {
    Server,
    Key,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::consent::Seal;
    use crate::config::Conduct;
    use crate::fingerprint::Fingerprint;

    /// A stack that takes the connection and never answers, so a key's check hangs.
    fn silent_stack() -> (std::net::TcpListener, StackAddress) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let address = StackAddress {
            base_url: format!("https://127.0.0.1:{port}"),
            pin: Fingerprint::of_certificate(b"none"),
        };
        (listener, address)
    }

    #[tokio::test]
    async fn a_check_abandoned_by_every_request_waiting_on_it_is_not_kept() {
        let (_listener, address) = silent_stack();
        let conduct = Conduct::default_conduct();
        let seal = Seal::made_now(conduct.offer_life).expect("a seal");
        let services = KeyServices::new(
            address,
            StreamableHttpServerConfig::default(),
            Arc::new(Common::new(conduct, seal)),
            Limits::DEFAULT,
            CancellationToken::new(),
            RefusedKeys::default(),
        );
        let key = Key::parse("lfk_00112233445566778899aabbccddeeff").expect("a key");
        let waiting = futures::future::join(
            tokio::time::timeout(Duration::from_millis(200), services.check(key.clone())),
            tokio::time::timeout(Duration::from_millis(300), services.check(key.clone())),
        )
        .await;
        assert!(
            waiting.0.is_err() && waiting.1.is_err(),
            "the stack never answered"
        );
        assert!(
            lock(&services.checking).is_empty(),
            "nothing is kept for the key"
        );
        assert!(services.known(&key, true).await.is_none());
    }
}
