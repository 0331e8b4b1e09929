//! How a call's client is reached while the call runs: through the MCP library's peer, for a
//! session or a request the library serves; or, for a stateless request the server serves itself
//! (`serve::http::stateless`), by the messages that go before its answer on the request's own
//! response. A session's reads the HTTP mode serves itself reach the client through the session's
//! peer all the same, which the session hands over when it begins ([`SessionsBegun`]).

use rmcp::model::{
    ProgressNotification, ProgressNotificationParam, ProtocolVersion, ServerJsonRpcMessage,
    ServerNotification,
};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

use super::notices::Notices;

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

/// How a session's client is reached by a call of the session's served outside the library: the
/// session's peer, and the notices its client asked for.
#[derive(Clone)]
pub struct SessionReach {
    pub(super) peer: Peer<RoleServer>,
    pub(super) notices: Notices,
}

impl SessionReach {
    /// The protocol version the session speaks, as it was agreed when it began.
    pub fn version(&self) -> Option<ProtocolVersion> {
        self.peer
            .peer_info()
            .map(|info| info.protocol_version.clone())
    }

    /// Whether the session's client asked for the server's notices: a call that tells one
    /// sends it on the call's own stream, which only the library keeps.
    pub fn hears_notices(&self) -> bool {
        self.notices.asked_for()
    }
}

/// Told of each session once its client has said it is initialized, with how it is reached, so
/// that the HTTP mode can serve the session's reads in the request's own task.
pub trait SessionsBegun: Send + Sync {
    fn begun(&self, session: &str, reach: SessionReach);
}
