//! One key's sessions. A session is made only with the permits it counts against, taken before
//! it is made (one of the server's and one of the key's), and it holds them exactly as long as
//! it is served: when its serving ends, for whatever reason (closed, idle too long, its key let
//! go), the permits go back. A client that walks away without closing its session leaves it
//! counted until it is idle too long, so a key with no permit left can have its own session that
//! has waited longest without a request closed for a new one, and its permits handed over; a
//! session with an answer or stream still open is never closed so.
//!
//! A session's reads are served in the request's own task once the session has begun
//! (`in_session`); such a call is counted as the session's, as one the library serves is.

use std::cell::RefCell;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::Stream;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::worker::WorkerTransport;
use tokio::sync::OwnedSemaphorePermit;

use crate::lock::lock;
use crate::mcp::reach::{SessionReach, SessionsBegun};

/// The library closes a session after its idle time without an event of its own, and a call
/// served here is none: so it is told that such a session is in use, at most this many times
/// an idle time.
const TOLD_EACH_IDLE_TIME: u32 = 8;
/// The library's number for a request's stream that no request has: closing it is an event of
/// the session's that changes nothing.
const NO_STREAM: u64 = u64::MAX;

/// The permits a session counts against: the server's cap and its key's. Held, never read.
pub struct Permits {
    _server: OwnedSemaphorePermit,
    _key: OwnedSemaphorePermit,
}

impl Permits {
    pub fn new(server: OwnedSemaphorePermit, key: OwnedSemaphorePermit) -> Permits {
        Permits {
            _server: server,
            _key: key,
        }
    }
}

tokio::task_local! {
    /// The permits the request that opens a session brings to it.
    static OPENING: RefCell<Option<Permits>>;
}

/// Runs `opening` (a request that may open a session) with the permits the session would hold;
/// if it opens none, they go back when it ends.
pub async fn with_permits<T>(permits: Permits, opening: impl Future<Output = T>) -> T {
    OPENING.scope(RefCell::new(Some(permits)), opening).await
}

/// Why no session was made.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    /// The request brought no permits (so the caps were not checked); no session is made.
    #[error("a session is opened only with its permits")]
    NoPermits,
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// What is kept of a session while it is served: its permits, and how it is in use.
struct Kept {
    permits: Permits,
    /// When a request last came to it, or its last answer or stream ended.
    touched: Instant,
    /// Its answers and streams still open.
    open: usize,
    /// How its client is reached, once the session has begun.
    reach: Option<SessionReach>,
    /// When the library was last told that the session is in use.
    library_told: Instant,
}

impl Kept {
    /// One more of its answers or streams open, as a request of it.
    fn opened(&mut self) {
        self.open += 1;
        self.touched = Instant::now();
    }
}

type Table = Arc<Mutex<HashMap<SessionId, Kept>>>;

pub struct KeySessions {
    inner: LocalSessionManager,
    kept: Table,
    /// How often, at most, the library is told that a session is in use; never when it closes
    /// no session for being idle.
    tell_the_library_every: Option<Duration>,
}

impl KeySessions {
    pub fn new(inner: LocalSessionManager) -> KeySessions {
        let tell_the_library_every = inner
            .session_config
            .keep_alive
            .map(|idle| idle / TOLD_EACH_IDLE_TIME);
        KeySessions {
            inner,
            kept: Table::default(),
            tell_the_library_every,
        }
    }

    /// Closes the key's session that has gone longest without a request, of those with no
    /// answer or stream open, and hands over the permits it held; `None` if every session is
    /// in use (or there is none). Its client's next request is not found (404), as for any
    /// session that has ended, and a client told so starts a new one.
    pub async fn close_longest_idle(&self) -> Option<Permits> {
        let (id, kept) = {
            let mut table = lock(&self.kept);
            let id = table
                .iter()
                .filter(|(_, kept)| kept.open == 0)
                .min_by_key(|(_, kept)| kept.touched)
                .map(|(id, _)| id.clone())?;
            table.remove_entry(&id)?
        };
        // Its permits are handed over now; the session ends on its own if this fails, and
        // what fails names the session, which no log line does.
        let _ = self.inner.close_session(&id).await;
        Some(kept.permits)
    }

    fn touch(&self, id: &SessionId) {
        if let Some(kept) = lock(&self.kept).get_mut(id) {
            kept.touched = Instant::now();
        }
    }

    /// Where the key's sessions say they have begun.
    pub fn begun(&self) -> Arc<dyn SessionsBegun> {
        Arc::new(Begun(self.kept.clone()))
    }

    /// A call of the session `id` served here, once the session has begun: how its client is
    /// reached, and the session counted in use until the call's answer is dropped. `None` for
    /// a session that is not this key's or has not begun.
    pub async fn call_in(&self, id: &str) -> Option<(SessionReach, InUse)> {
        let id: SessionId = id.into();
        let (reach, tell_the_library) = {
            let mut table = lock(&self.kept);
            let kept = table.get_mut(&id)?;
            let reach = kept.reach.clone()?;
            kept.opened();
            (reach, self.library_due(kept))
        };
        if tell_the_library {
            self.tell_the_library(&id).await;
        }
        let in_use = InUse {
            kept: self.kept.clone(),
            id,
        };
        Some((reach, in_use))
    }

    /// Whether it is time to tell the library that the session `kept` is in use; if so, it is
    /// counted as told.
    fn library_due(&self, kept: &mut Kept) -> bool {
        let due = self
            .tell_the_library_every
            .is_some_and(|every| kept.library_told.elapsed() >= every);
        if due {
            kept.library_told = Instant::now();
        }
        due
    }

    /// Tells the library that the session `id` is in use.
    async fn tell_the_library(&self, id: &SessionId) {
        if let Some(session) = self.inner.sessions.read().await.get(id).cloned() {
            // The session's own task answers; the call does not wait for it.
            tokio::spawn(async move {
                let _ = session.close_request_wise_channel(NO_STREAM).await;
            });
        }
    }

    /// Counts an answer or stream of the session as open until the use is dropped.
    fn in_use(&self, id: &SessionId) -> InUse {
        if let Some(kept) = lock(&self.kept).get_mut(id) {
            kept.opened();
        }
        InUse {
            kept: self.kept.clone(),
            id: id.clone(),
        }
    }
}

/// An answer or stream of a session, open: the session is not closed for another meanwhile.
pub struct InUse {
    kept: Table,
    id: SessionId,
}

impl Drop for InUse {
    fn drop(&mut self) {
        if let Some(kept) = lock(&self.kept).get_mut(&self.id) {
            kept.open = kept.open.saturating_sub(1);
            kept.touched = Instant::now();
        }
    }
}

/// A session's stream, counted as open while it lasts.
struct Open<S> {
    stream: Pin<Box<S>>,
    _in_use: InUse,
}

impl<S: Stream> Stream for Open<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.get_mut().stream.as_mut().poll_next(context)
    }
}

fn open<S: Stream>(stream: S, in_use: InUse) -> Open<S> {
    Open {
        stream: Box::pin(stream),
        _in_use: in_use,
    }
}

/// A session's transport, served while the session is: once it ends, the session and its
/// permits, if still kept, go.
pub struct Held {
    transport: WorkerTransport<LocalSessionWorker>,
    kept: Table,
    id: SessionId,
}

impl Drop for Held {
    fn drop(&mut self) {
        lock(&self.kept).remove(&self.id);
    }
}

impl Transport<RoleServer> for Held {
    type Error = <WorkerTransport<LocalSessionWorker> as Transport<RoleServer>>::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleServer>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.transport.close()
    }
}

/// Where a key's sessions say they have begun: the table of what is kept of them, and not the
/// sessions themselves, which their handlers would otherwise keep from ending.
struct Begun(Table);

impl SessionsBegun for Begun {
    /// A session that has ended since is not kept again.
    fn begun(&self, session: &str, reach: SessionReach) {
        if let Some(kept) = lock(&self.0).get_mut(session) {
            kept.reach = Some(reach);
        }
    }
}

impl SessionManager for KeySessions {
    type Error = SessionsError;
    type Transport = Held;

    async fn create_session(&self) -> Result<(SessionId, Held), SessionsError> {
        let permits = OPENING
            .try_with(|permits| permits.borrow_mut().take())
            .ok()
            .flatten()
            .ok_or(SessionsError::NoPermits)?;
        let (id, transport) = self.inner.create_session().await?;
        let kept = Kept {
            permits,
            touched: Instant::now(),
            open: 0,
            reach: None,
            library_told: Instant::now(),
        };
        lock(&self.kept).insert(id.clone(), kept);
        let held = Held {
            transport,
            kept: self.kept.clone(),
            id: id.clone(),
        };
        Ok((id, held))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionsError> {
        let _in_use = self.in_use(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionsError> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionsError> {
        // No read of it is served here once it is closing, as the library serves none.
        if let Some(kept) = lock(&self.kept).get_mut(id) {
            kept.reach = None;
        }
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        let in_use = self.in_use(id);
        Ok(open(self.inner.create_stream(id, message).await?, in_use))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionsError> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        let in_use = self.in_use(id);
        Ok(open(self.inner.create_standalone_stream(id).await?, in_use))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        let in_use = self.in_use(id);
        Ok(open(self.inner.resume(id, last_event_id).await?, in_use))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use rmcp::model::ServerResult;
    use serde_json::json;
    use tokio::sync::Semaphore;

    use super::*;

    /// A session begun in the library, its handler answering `initialize` and then listening
    /// until the session ends, when what is kept of it goes.
    async fn opened(sessions: &KeySessions) -> SessionId {
        let permit = || Arc::new(Semaphore::new(1)).try_acquire_owned().unwrap();
        let permits = Permits::new(permit(), permit());
        let (id, mut held) = with_permits(permits, sessions.create_session())
            .await
            .unwrap();
        tokio::spawn(async move {
            if let Some(ClientJsonRpcMessage::Request(request)) = held.receive().await {
                let answer = ServerJsonRpcMessage::response(ServerResult::empty(()), request.id);
                held.send(answer).await.unwrap();
            }
            while held.receive().await.is_some() {}
        });
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}});
        let initialize = serde_json::from_value(initialize).unwrap();
        sessions.initialize_session(&id, initialize).await.unwrap();
        id
    }

    fn kept(sessions: &KeySessions, id: &SessionId) -> bool {
        lock(&sessions.kept).contains_key(id)
    }

    /// Issue 32: a session whose calls are all served here is no less in use: the library, which
    /// closes a session idle for its idle time, is told so and keeps it, while a session with no
    /// calls at all is closed.
    #[tokio::test]
    async fn the_library_keeps_a_session_whose_calls_are_served_here() {
        let idle = Duration::from_secs(2);
        let mut local = LocalSessionManager::default();
        local.session_config.keep_alive = Some(idle);
        let sessions = KeySessions::new(local);
        let (called, quiet) = (opened(&sessions).await, opened(&sessions).await);
        // Calls served here for twice the idle time, and more.
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let due = lock(&sessions.kept)
                .get_mut(&called)
                .is_some_and(|kept| sessions.library_due(kept));
            if due {
                sessions.tell_the_library(&called).await;
            }
        }
        assert!(kept(&sessions, &called), "a session in use is kept");
        assert!(!kept(&sessions, &quiet), "an idle session is closed");
        // Once its calls stop it is idle too, and closed in its turn.
        for _ in 0..100 {
            if !kept(&sessions, &called) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("a session idle for five times its idle time is still open");
    }
}
