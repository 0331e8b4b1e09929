//! How a client hears that what its key is offered changed, and that a resource it watches
//! changed: up to 2025-11-25 on its session, from 2026-07-28 on each `subscriptions/listen`
//! stream that asked, and on that stream only, so no client is told one change twice. A stream
//! is acknowledged with exactly what will be told on it.

use std::collections::HashSet;

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio_util::sync::CancellationToken;

use super::LemonfiberServer;
use crate::access::standing::Position;
use crate::answer::sentences;
use crate::catalogue::{self, Operation};
use crate::mcp::arguments;
use crate::mcp::notices::Severity;
use crate::mcp::versions;
use crate::mcp::watches::Tell;

/// Whether a session was opened by `initialize` at a version before 2026-07-28: only such a
/// session is told of changes outside a listening stream. A 2026-07-28 exchange never sends
/// `initialize`, and a client that sends `notifications/initialized` all the same has no
/// version recorded for its session.
fn opened_before_2026(version: Option<ProtocolVersion>) -> bool {
    version.is_some_and(|version| !versions::stateless(Some(version)))
}

impl LemonfiberServer {
    /// A session has begun: if it was opened before 2026-07-28, its client is told of changes
    /// from now on. From 2026-07-28 a client hears of them on a listening stream instead.
    pub(super) async fn session_began(&self, peer: Peer<RoleServer>) {
        let version = peer.peer_info().map(|info| info.protocol_version.clone());
        if !opened_before_2026(version) {
            return;
        }
        let changes = self.standing.lock().await.listen();
        self.tell_changes(peer, changes);
    }

    /// Tells a session's client, for as long as the session lasts, each time what the key is
    /// offered changes, however the server learned it: another session's call, a watch's read,
    /// or this session's own (F13-R9: a key refused in the background lists what a new session
    /// of it would, at once).
    fn tell_changes(&self, peer: Peer<RoleServer>, mut changes: broadcast::Receiver<()>) {
        let ends = self.session_ends.clone();
        let standing = self.standing.clone();
        let notices = self.notices.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = ends.cancelled() => return,
                    change = changes.recv() => match change {
                        Ok(()) | Err(RecvError::Lagged(_)) => {}
                        Err(RecvError::Closed) => return,
                    },
                }
                let refused = standing.lock().await.is_refused();
                if peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
                let _ = peer.notify_resource_list_changed().await;
                if refused {
                    let said = sentences::notice_key_refused();
                    notices.tell(&peer, Severity::Warning, said).await;
                } else {
                    let said = sentences::notice_offer_changed();
                    notices.tell(&peer, Severity::Info, said).await;
                }
            }
        });
    }

    /// Makes sure the key's offer has been read before a listening stream is acknowledged, so
    /// the acknowledgment can name the resources that will be watched.
    pub async fn before_listening(&self, peer: &Peer<RoleServer>) {
        let _ = self.position(Some(peer)).await;
    }

    /// What a listening stream is told: changes to the tools and resources this key is offered,
    /// and changes to the resources it names that will be watched. A resource is watched only
    /// when the key is offered its read now, the resource is one that read takes, and the key
    /// has room for another watch. The rest are left out of the acknowledgment rather than
    /// refused: the 2026-07-28 draft has it carry the part of the request the server agreed to
    /// honour, for the client to check against what it asked.
    pub(super) fn accepted_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let position = self
            .standing
            .try_lock()
            .ok()
            .map(|standing| standing.position());
        let offer = match &position {
            Some(Position::Connected(offer)) => Some(offer),
            _ => None,
        };
        let watchable = |uri: &String| {
            let Some(offer) = offer else { return false };
            catalogue::reads().any(|tool| {
                let (Operation::Read(_), Some(path_values)) =
                    (tool.operation, tool.match_resource(uri))
                else {
                    return false;
                };
                offer.admits(tool)
                    && arguments::check(tool.parameters_for(offer.audience), Some(path_values))
                        .is_ok()
            })
        };
        let room = self.common.watch_count.room(self.stack.key_digest());
        let mut named = HashSet::new();
        let mut filter = SubscriptionFilter::new();
        filter.tools_list_changed = Some(true);
        filter.resources_list_changed = Some(true);
        filter.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| watchable(uri) && named.insert(uri.as_str()))
                .take(room)
                .cloned()
                .collect()
        });
        filter
    }

    /// Watches the resources the stream's acknowledgment named, and tells it of each change to
    /// the key's offer, until the client stops listening.
    pub(super) async fn listening(
        &self,
        subscription: SubscriptionContext,
    ) -> Result<(), McpError> {
        let listening = CancellationToken::new();
        let _ends_its_watches = listening.clone().drop_guard();
        let uris = subscription
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        for uri in uris {
            let tell = Tell::Listening(subscription.sink().clone());
            let watch = self
                .watch_of(&uri, tell, subscription.request_context())
                .await;
            if let Err(error) =
                watch.and_then(|watch| self.start_watch(watch, Some(listening.clone())))
            {
                // Only when the offer or the watches changed between acknowledging and here.
                tracing::info!(error = %error.message, "a resource acknowledged on a listening stream is not watched");
            }
        }
        let mut changes = self.standing.lock().await.listen();
        loop {
            tokio::select! {
                () = subscription.cancelled() => return Ok(()),
                change = changes.recv() => match change {
                    Ok(()) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return Ok(()),
                },
            }
            let accepted = subscription.accepted();
            if accepted.tools_list_changed == Some(true) {
                let changed = ServerNotification::ToolListChangedNotification(Default::default());
                let _ = subscription.sink().send(changed).await;
            }
            if accepted.resources_list_changed == Some(true) {
                let changed =
                    ServerNotification::ResourceListChangedNotification(Default::default());
                let _ = subscription.sink().send(changed).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_session_opened_before_2026_07_28_is_told_outside_a_listening_stream() {
        assert!(opened_before_2026(Some(ProtocolVersion::V_2025_11_25)));
        assert!(opened_before_2026(Some(ProtocolVersion::V_2025_03_26)));
        assert!(!opened_before_2026(Some(ProtocolVersion::V_2026_07_28)));
        assert!(!opened_before_2026(None));
    }
}
