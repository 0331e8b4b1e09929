//! How many calls the stdio server has under way at once. Each call may hold a connection to the
//! stack open until it is answered, and a client that sends thousands at once would have the
//! server open thousands; past the cap a call is answered at once with an error saying so,
//! rather than queued where the client cannot tell it is waiting.
//!
//! A call counts from when the server takes it up until its work is done, which a cancellation
//! does not cut short: work that goes on after its client stopped waiting still holds a stack
//! connection.
//!
//! A listening stream is let through uncounted, once the server has made ready to acknowledge
//! it (read the key's offer), which the protocol library asks of it before any handler runs. It
//! ends, answered, when stdin does: the library waits for every handler still running (5 s at
//! most) before the process can exit, and a listen would otherwise run until then.

use std::borrow::Cow;

use rmcp::model::{
    ClientRequest, ErrorCode, ProtocolVersion, ServerResult, SubscriptionsListenResult,
};
use rmcp::service::{NotificationContext, RequestContext, Service, ServiceRole};
use rmcp::{ErrorData as McpError, RoleServer};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::answer::sentences;
use crate::mcp::server::LemonfiberServer;
use crate::mcp::versions::this_server;

/// What a server does before a `subscriptions/listen` stream is acknowledged.
pub trait BeforeListening {
    fn before_listening(&self, peer: &rmcp::Peer<RoleServer>) -> impl Future<Output = ()> + Send;
}

impl BeforeListening for LemonfiberServer {
    async fn before_listening(&self, peer: &rmcp::Peer<RoleServer>) {
        LemonfiberServer::before_listening(self, peer).await;
    }
}

/// The JSON-RPC code of a call refused past the cap: one of those JSON-RPC leaves to the server.
const TOO_MANY_CALLS: ErrorCode = ErrorCode(-32000);

/// A server that takes at most `most` calls at once.
pub struct Capped<S> {
    inner: S,
    under_way: Semaphore,
    most: usize,
    /// Cancelled once stdin has ended.
    input_ended: CancellationToken,
}

impl<S> Capped<S> {
    pub fn new(inner: S, most: usize, input_ended: CancellationToken) -> Capped<S> {
        Capped {
            inner,
            under_way: Semaphore::new(most),
            most,
            input_ended,
        }
    }
}

/// Requests that are not counted: those that never reach the stack (a ping, the opening of the
/// session), and a subscription's listen, which lasts as long as the watch does and is held to
/// the watches' own limit.
fn is_counted(request: &ClientRequest) -> bool {
    !matches!(
        request,
        ClientRequest::PingRequest(_)
            | ClientRequest::InitializeRequest(_)
            | ClientRequest::DiscoverRequest(_)
            | ClientRequest::SubscriptionsListenRequest(_)
    )
}

impl<S: Service<RoleServer> + BeforeListening + Sync> Service<RoleServer> for Capped<S> {
    async fn handle_request(
        &self,
        request: <RoleServer as ServiceRole>::PeerReq,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, McpError> {
        if matches!(request, ClientRequest::SubscriptionsListenRequest(_)) {
            self.inner.before_listening(&context.peer).await;
            let id = context.id.clone();
            // Ended here, not in the handler: it may still be waiting to hear that its
            // acknowledgment went out, which no one tells it once stdin has ended.
            return tokio::select! {
                listened = self.inner.handle_request(request, context) => listened,
                () = self.input_ended.cancelled() => {
                    let mut ended = SubscriptionsListenResult::complete(id);
                    ended.meta.set_server_info(this_server());
                    Ok(ServerResult::SubscriptionsListenResult(ended))
                }
            };
        }
        if !is_counted(&request) {
            return self.inner.handle_request(request, context).await;
        }
        let Ok(_under_way) = self.under_way.try_acquire() else {
            return Err(McpError::new(
                TOO_MANY_CALLS,
                sentences::too_many_calls(self.most),
                None,
            ));
        };
        self.inner.handle_request(request, context).await
    }

    async fn handle_notification(
        &self,
        notification: <RoleServer as ServiceRole>::PeerNot,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.inner.handle_notification(notification, context).await
    }

    fn get_info(&self) -> <RoleServer as ServiceRole>::Info {
        self.inner.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }
}
