//! One key's sessions. A session is made only with the permits it counts against, taken before
//! it is made (one of the server's and one of the key's), and it holds them exactly as long as
//! it is served: when its serving ends, for whatever reason (closed, idle too long, its key let
//! go), the permits go back.

use std::cell::RefCell;

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

pub struct KeySessions {
    inner: LocalSessionManager,
}

impl KeySessions {
    pub fn new(inner: LocalSessionManager) -> KeySessions {
        KeySessions { inner }
    }
}

/// A session's transport, holding its permits while it is served.
pub struct Held {
    transport: WorkerTransport<LocalSessionWorker>,
    _permits: Permits,
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
        Ok((
            id,
            Held {
                transport,
                _permits: permits,
            },
        ))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionsError> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionsError> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionsError> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionsError> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}
