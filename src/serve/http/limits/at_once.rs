//! How many requests each peer has under way at once, for the requests anyone may send without a
//! key: one address holding many slow requests open would otherwise hold what everyone needs. A
//! peer is kept only while it has a request under way, so the table is never larger than what is
//! under way.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use super::peer_of;
use crate::lock::lock;

type Counts = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// Each peer's requests under way, up to a most for every peer.
pub struct PeersAtOnce {
    counts: Counts,
    most: usize,
}

/// One of a peer's requests under way: the peer has room for another once it is dropped.
pub struct PeerTurn {
    counts: Counts,
    peer: IpAddr,
}

impl PeersAtOnce {
    pub fn new(most: NonZeroUsize) -> PeersAtOnce {
        PeersAtOnce {
            counts: Counts::default(),
            most: most.get(),
        }
    }

    /// A turn for one more request from `address`, if its peer has fewer than the most under way.
    pub fn take(&self, address: IpAddr) -> Option<PeerTurn> {
        let peer = peer_of(address);
        let mut counts = lock(&self.counts);
        let under_way = counts.entry(peer).or_default();
        if *under_way >= self.most {
            return None;
        }
        *under_way += 1;
        Some(PeerTurn {
            counts: self.counts.clone(),
            peer,
        })
    }
}

impl Drop for PeerTurn {
    fn drop(&mut self) {
        let mut counts = lock(&self.counts);
        if let Some(under_way) = counts.get_mut(&self.peer) {
            *under_way = under_way.saturating_sub(1);
            if *under_way == 0 {
                counts.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn a_peer_has_its_most_under_way_and_room_again_as_each_ends() {
        let peers = PeersAtOnce::new(NonZeroUsize::new(2).expect("not zero"));
        let first = peers.take(address("192.0.2.1")).expect("room");
        let _second = peers.take(address("192.0.2.1")).expect("room");
        assert!(peers.take(address("192.0.2.1")).is_none(), "its most");
        assert!(
            peers.take(address("192.0.2.2")).is_some(),
            "another peer has its own"
        );
        drop(first);
        assert!(peers.take(address("192.0.2.1")).is_some(), "room again");
    }

    #[test]
    fn an_ipv6_peer_counts_by_its_64_and_a_peer_with_nothing_under_way_is_not_kept() {
        let peers = PeersAtOnce::new(NonZeroUsize::MIN);
        let turn = peers.take(address("2001:db8:1:2::1")).expect("room");
        assert!(peers.take(address("2001:db8:1:2:ffff::9")).is_none());
        drop(turn);
        assert!(lock(&peers.counts).is_empty());
    }
}
