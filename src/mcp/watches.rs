//! Live resources: a resource a client subscribed to is read again every so often (the contract
//! publishes no event stream), and the client told when its answer changed, by a digest of the
//! answer. A watch ends when the client unsubscribes or stops listening, when its session ends, or
//! when the stack refuses the key (or the read) for good. Each key holds a bounded number of
//! watches, and so does the server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ResourceUpdatedNotificationParam, ServerNotification};
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::access::standing::{self, SharedStanding};
use crate::catalogue::Read;
use crate::lock::lock;
use crate::stack::parameters::Parameters;
use crate::stack::{Body, Failure, Reply, Stack};

/// Watches one key may hold at once, over all its sessions.
pub const PER_KEY: usize = 16;
/// Watches the server holds at once, over every key.
pub const IN_ALL: usize = 1024;

/// How many watches each key holds, and all of them: shared by every session of the server.
#[derive(Debug, Default)]
pub struct WatchCount {
    held: Mutex<(usize, HashMap<[u8; 32], usize>)>,
}

/// One watch's place in the count, given back when the watch ends.
struct Counted {
    count: Arc<WatchCount>,
    key: [u8; 32],
}

impl WatchCount {
    /// How many more watches `key` may start now.
    pub fn room(&self, key: [u8; 32]) -> usize {
        let held = lock(&self.held);
        let (in_all, by_key) = &*held;
        let of_key = by_key.get(&key).copied().unwrap_or_default();
        PER_KEY
            .saturating_sub(of_key)
            .min(IN_ALL.saturating_sub(*in_all))
    }

    fn take(count: &Arc<WatchCount>, key: [u8; 32]) -> Option<Counted> {
        let mut held = lock(&count.held);
        let (in_all, by_key) = &mut *held;
        let of_key = by_key.entry(key).or_default();
        if *of_key >= PER_KEY || *in_all >= IN_ALL {
            return None;
        }
        *of_key += 1;
        *in_all += 1;
        Some(Counted {
            count: count.clone(),
            key,
        })
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut held = lock(&self.count.held);
        let (in_all, by_key) = &mut *held;
        *in_all = in_all.saturating_sub(1);
        if let Some(of_key) = by_key.get_mut(&self.key) {
            *of_key = of_key.saturating_sub(1);
            if *of_key == 0 {
                by_key.remove(&self.key);
            }
        }
    }
}

/// Why a watch was not started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotWatched {
    /// The key, or the server, holds as many watches as it may.
    TooMany,
}

/// How a watch tells its client: in a session (`notifications/resources/updated`), or on a
/// 2026-07-28 `subscriptions/listen` stream.
#[derive(Clone)]
pub enum Tell {
    Session(Peer<RoleServer>),
    Listening(SubscriptionSink),
}

impl Tell {
    /// What a session knows a watch by: its resource, and the stream it is told on, if any, so
    /// two streams of one session each hear of the same resource.
    fn watch_name(&self, uri: &str) -> String {
        match self {
            Tell::Session(_) => uri.to_owned(),
            Tell::Listening(sink) => format!("{uri} {:?}", sink.id()),
        }
    }

    /// Tells the client `uri` changed; false once the client can no longer be told.
    async fn updated(&self, uri: &str) -> bool {
        let update = ResourceUpdatedNotificationParam::new(uri);
        match self {
            Tell::Session(peer) => peer.notify_resource_updated(update).await.is_ok(),
            Tell::Listening(sink) => sink
                .send(ServerNotification::ResourceUpdatedNotification(
                    rmcp::model::ResourceUpdatedNotification::new(update),
                ))
                .await
                .is_ok(),
        }
    }
}

/// What one watch reads, for whom, and how often.
pub struct Watch {
    pub uri: String,
    pub read: Read,
    pub arguments: Parameters,
    pub stack: Arc<Stack>,
    pub standing: SharedStanding,
    pub every: Duration,
    pub tell: Tell,
}

/// One session's watches, by name (see [`Tell::watch_name`]); all of them end with the session.
#[derive(Debug, Default)]
pub struct Watches {
    by_name: Mutex<HashMap<String, CancellationToken>>,
    session: CancellationToken,
}

impl Drop for Watches {
    fn drop(&mut self) {
        self.session.cancel();
    }
}

impl Watches {
    /// Starts watching, unless this session already watches the resource (which is not counted
    /// twice). The watch ends with `until` too, when given: a listening stream's end.
    pub fn start(
        &self,
        watch: Watch,
        count: &Arc<WatchCount>,
        until: Option<CancellationToken>,
    ) -> Result<(), NotWatched> {
        let name = watch.tell.watch_name(&watch.uri);
        let mut by_name = lock(&self.by_name);
        // Watches that ended on their own (their stream closed, the key refused) are let go.
        by_name.retain(|_, ended| !ended.is_cancelled());
        if by_name.contains_key(&name) {
            return Ok(());
        }
        let counted =
            WatchCount::take(count, watch.stack.key_digest()).ok_or(NotWatched::TooMany)?;
        let ended = self.session.child_token();
        by_name.insert(name, ended.clone());
        tokio::spawn(async move {
            let _counted = counted;
            let until = until.unwrap_or_default();
            tokio::select! {
                () = watching(watch) => {}
                () = ended.cancelled() => {}
                () = until.cancelled() => {}
            }
            ended.cancel();
        });
        Ok(())
    }

    /// Stops watching `uri` for the session (`resources/unsubscribe`).
    pub fn stop(&self, uri: &str) {
        if let Some(ended) = lock(&self.by_name).remove(uri) {
            ended.cancel();
        }
    }
}

/// Reads the resource every so often, and tells the client each time its answer differs from
/// the last one read; returns when the watch can go on no longer.
async fn watching(watch: Watch) {
    let mut last = None;
    loop {
        if watch.standing.lock().await.is_refused() {
            return;
        }
        match watch.stack.read(watch.read, &watch.arguments).await {
            Ok(reply) => {
                let now = digest(&reply);
                if last.is_some_and(|last| last != now) && !watch.tell.updated(&watch.uri).await {
                    return;
                }
                last = Some(now);
            }
            Err(Failure::Refused(refusal)) if standing::refuses_the_key(&refusal) => {
                watch.standing.lock().await.refuse();
                tracing::info!("the stack refused the key: its watches end");
                return;
            }
            Err(Failure::Refused(refusal)) if standing::out_of_scope(&refusal) => {
                watch.standing.lock().await.forget_capabilities();
                tracing::info!("the key may no longer read a watched resource: the watch ends");
                return;
            }
            // Not answered this time (unreachable, throttled, too large): the next look tells.
            Err(_) => {}
        }
        tokio::time::sleep(watch.every).await;
    }
}

/// What an answer is, to tell when it changes.
fn digest(reply: &Reply) -> [u8; 32] {
    let mut digest = Sha256::new();
    digest.update(reply.status.to_be_bytes());
    match &reply.body {
        Body::Envelope(envelope) => digest.update(envelope.value().to_string()),
        Body::Lines(lines) => {
            for line in lines {
                digest.update(line.to_string());
                digest.update(b"\n");
            }
        }
        Body::File(file) => digest.update(file.sha256),
    }
    digest.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_at_most_its_share_and_gets_it_back_when_its_watches_end() {
        let count = Arc::new(WatchCount::default());
        let held: Vec<Counted> = (0..PER_KEY)
            .map(|_| WatchCount::take(&count, [1; 32]).expect("within the key's share"))
            .collect();
        assert!(WatchCount::take(&count, [1; 32]).is_none(), "one too many");
        assert!(
            WatchCount::take(&count, [2; 32]).is_some(),
            "another key has its own share"
        );
        drop(held);
        assert!(WatchCount::take(&count, [1; 32]).is_some());
    }

    #[test]
    fn the_server_holds_at_most_its_share_over_every_key() {
        let count = Arc::new(WatchCount::default());
        let held: Vec<Counted> = (0..IN_ALL)
            .map(|at| {
                let key = [u8::try_from(at / PER_KEY).expect("few keys"); 32];
                WatchCount::take(&count, key).expect("within the server's share")
            })
            .collect();
        assert!(WatchCount::take(&count, [250; 32]).is_none());
        drop(held);
        assert!(WatchCount::take(&count, [250; 32]).is_some());
    }
}
