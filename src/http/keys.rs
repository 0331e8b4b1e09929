//! Each key's own MCP service in the HTTP mode: its sessions (bound to the key that opened them,
//! since no other key's requests reach them), its standing with the stack, and its limits. Kept
//! under the key's digest, for a bounded number of keys.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::by_digest::ByDigest;
use crate::config::Limits;
use crate::server::{LemonfiberServer, Via};
use crate::stack::credential::Key;
use crate::stack::{SetupError, Stack, StackAddress};
use crate::standing::Standings;

/// The most keys whose services are kept at once; past it, the one used longest ago is let go
/// and its sessions end.
const KEYS_KEPT: usize = 1024;
/// A session no request has touched for this long is closed.
const SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

pub struct KeyService {
    pub service: StreamableHttpService<LemonfiberServer, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    ends: CancellationToken,
    rate: Mutex<Bucket>,
    at_once: Arc<Semaphore>,
}

/// Requests a key may still make: refilled evenly over each minute.
struct Bucket {
    tokens: f64,
    refilled: Instant,
}

impl KeyService {
    /// Takes one request from the key's allowance, or says how many seconds until there is one.
    pub fn admit(&self, per_minute: u64) -> Result<(), u64> {
        let Ok(mut bucket) = self.rate.lock() else {
            return Err(1);
        };
        let per_second = per_minute as f64 / 60.0;
        let now = Instant::now();
        bucket.tokens = (bucket.tokens
            + now.duration_since(bucket.refilled).as_secs_f64() * per_second)
            .min(per_minute as f64);
        bucket.refilled = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / per_second).ceil().max(1.0) as u64)
        }
    }

    /// One of the requests the key may have under way at once, if one is free.
    pub fn under_way(&self) -> Option<OwnedSemaphorePermit> {
        self.at_once.clone().try_acquire_owned().ok()
    }

    pub async fn open_sessions(&self) -> usize {
        self.sessions.sessions.read().await.len()
    }

    pub async fn close_session(&self, id: &str) {
        let _ = self.sessions.close_session(&id.into()).await;
    }
}

/// What every key's service is made with, and each key's service, by digest.
pub struct KeyServices {
    by_digest: ByDigest<KeyService>,
    standings: Standings,
    stack: StackAddress,
    names: Vec<String>,
    job_wait: Duration,
    limits: Limits,
    ends: CancellationToken,
}

impl KeyServices {
    pub fn new(
        stack: StackAddress,
        names: Vec<String>,
        job_wait: Duration,
        limits: Limits,
        ends: CancellationToken,
    ) -> KeyServices {
        KeyServices {
            by_digest: ByDigest::new(KEYS_KEPT),
            standings: Standings::new(KEYS_KEPT),
            stack,
            names,
            job_wait,
            limits,
            ends,
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The key's service, made on its first request. The key goes to the stack in this key's
    /// requests only. A service let go to make room ends its sessions.
    pub fn of(&self, key: Key) -> Result<Arc<KeyService>, SetupError> {
        let digest = key.digest();
        let (service, evicted) = self
            .by_digest
            .get_or_make(digest, || self.make(digest, key))?;
        if let Some(evicted) = evicted {
            evicted.ends.cancel();
        }
        Ok(service)
    }

    fn make(&self, digest: [u8; 32], key: Key) -> Result<KeyService, SetupError> {
        let standing = self.standings.of(digest);
        let stack = Arc::new(Stack::new(&self.stack, key)?);
        let job_wait = self.job_wait;
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = Some(SESSION_IDLE);
        let sessions = Arc::new(sessions);
        let ends = self.ends.child_token();
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(self.names.clone())
            .with_cancellation_token(ends.clone());
        let service = StreamableHttpService::new(
            move || {
                Ok(LemonfiberServer::new(
                    stack.clone(),
                    standing.clone(),
                    job_wait,
                    Via::Http,
                ))
            },
            sessions.clone(),
            config,
        );
        let at_once = Arc::new(Semaphore::new(
            usize::try_from(self.limits.at_once).unwrap_or(usize::MAX),
        ));
        let rate = Mutex::new(Bucket {
            tokens: self.limits.per_minute as f64,
            refilled: Instant::now(),
        });
        Ok(KeyService {
            service,
            sessions,
            ends,
            rate,
            at_once,
        })
    }

    /// Sessions open now, over every key.
    pub async fn open_sessions(&self) -> usize {
        let mut open = 0;
        for service in self.by_digest.values() {
            open += service.open_sessions().await;
        }
        open
    }
}
