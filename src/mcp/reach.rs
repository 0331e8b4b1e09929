//! How a call's client is reached while the call runs: through the MCP library's peer, for a
//! session or a request the library serves; or, for a stateless request the server serves itself
//! (`serve::http::stateless`), by the messages that go before its answer on the request's own
//! response.

use rmcp::model::{
    ProgressNotification, ProgressNotificationParam, ServerJsonRpcMessage, ServerNotification,
};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

#[derive(Clone)]
pub enum Reach {
    Peer(Peer<RoleServer>),
    /// A stateless request's response, which carries its progress before its answer. Such a
    /// request cannot be asked a question while it waits, nor told a notice.
    Response(mpsc::Sender<ServerJsonRpcMessage>),
}

impl Reach {
    /// The library's peer, through which a session's client can be asked and told.
    pub fn peer(&self) -> Option<&Peer<RoleServer>> {
        match self {
            Reach::Peer(peer) => Some(peer),
            Reach::Response(_) => None,
        }
    }

    /// Tells the client how far the call has come. A client gone is no reason to stop the call.
    pub async fn notify_progress(&self, progress: ProgressNotificationParam) {
        match self {
            Reach::Peer(peer) => {
                let _ = peer.notify_progress(progress).await;
            }
            Reach::Response(response) => {
                let progress = ProgressNotification::new(progress);
                let told = ServerNotification::ProgressNotification(progress);
                let _ = response
                    .send(ServerJsonRpcMessage::notification(told))
                    .await;
            }
        }
    }
}
