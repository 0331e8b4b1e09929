//! Where a per-peer rate limiter keeps each peer's state: for a bounded number of peers, since
//! peer addresses cost an attacker little. A peer that comes to a full table takes the place of
//! any other, and the one let go starts again with a full allowance when it comes back, so
//! letting one go never holds anyone back.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use governor::nanos::Nanos;
use governor::state::StateStore;
use governor::state::keyed::ShrinkableKeyedStateStore;

use crate::lock::lock;

pub struct KeptPeers {
    /// Each peer's state as the limiter keeps it: when its allowance would be full again.
    states: Mutex<HashMap<IpAddr, Nanos>>,
    most: usize,
}

impl KeptPeers {
    pub fn new(most: usize) -> KeptPeers {
        KeptPeers {
            states: Mutex::new(HashMap::new()),
            most: most.max(1),
        }
    }
}

#[cfg(test)]
impl KeptPeers {
    /// The peers kept, in order.
    pub fn peers(&self) -> Vec<IpAddr> {
        let mut peers: Vec<IpAddr> = lock(&self.states).keys().copied().collect();
        peers.sort();
        peers
    }
}

impl StateStore for KeptPeers {
    type Key = IpAddr;

    fn measure_and_replace<T, F, E>(&self, peer: &IpAddr, decide: F) -> Result<T, E>
    where
        F: Fn(Option<Nanos>) -> Result<(T, Nanos), E>,
    {
        let mut states = lock(&self.states);
        let (outcome, state) = decide(states.get(peer).copied())?;
        if !states.contains_key(peer)
            && states.len() >= self.most
            && let Some(any) = states.keys().next().copied()
        {
            states.remove(&any);
        }
        states.insert(*peer, state);
        Ok(outcome)
    }
}

impl ShrinkableKeyedStateStore<IpAddr> for KeptPeers {
    fn retain_recent(&self, drop_below: Nanos) {
        lock(&self.states).retain(|_, full_again| *full_again > drop_below);
    }

    fn len(&self) -> usize {
        lock(&self.states).len()
    }

    fn is_empty(&self) -> bool {
        lock(&self.states).is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::time::Duration;

    use governor::clock::FakeRelativeClock;
    use governor::middleware::NoOpMiddleware;
    use governor::{Quota, RateLimiter};

    use super::*;

    type Limiter = RateLimiter<IpAddr, KeptPeers, FakeRelativeClock, NoOpMiddleware<Nanos>>;

    fn once_a_minute(most: usize) -> (Limiter, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        let quota = Quota::per_minute(NonZeroU32::MIN);
        (
            RateLimiter::new(quota, KeptPeers::new(most), clock.clone()),
            clock,
        )
    }

    fn peer(last: u8) -> IpAddr {
        IpAddr::from([192, 0, 2, last])
    }

    #[test]
    fn the_table_stays_bounded_and_a_peer_let_go_starts_again_full() {
        // A table of one, so which peer makes room is certain.
        let (limiter, _clock) = once_a_minute(1);
        assert!(limiter.check_key(&peer(1)).is_ok());
        assert!(limiter.check_key(&peer(1)).is_err(), "its minute is used");
        assert!(
            limiter.check_key(&peer(2)).is_ok(),
            "a full table turns no newcomer away"
        );
        assert_eq!(limiter.len(), 1);
        assert!(
            limiter.check_key(&peer(1)).is_ok(),
            "the peer let go starts again full"
        );
        assert_eq!(limiter.len(), 1);
    }

    #[test]
    fn peers_back_to_full_are_swept_and_busy_ones_kept() {
        let (limiter, clock) = once_a_minute(8);
        assert!(limiter.check_key(&peer(1)).is_ok());
        // The limiter lets a peer go once it has been back to full for as long as one request
        // takes to come back.
        clock.advance(Duration::from_secs(120));
        assert!(limiter.check_key(&peer(2)).is_ok());
        limiter.retain_recent();
        assert_eq!(limiter.len(), 1, "the idle peer is let go");
        assert!(
            limiter.check_key(&peer(2)).is_err(),
            "the busy one still counts"
        );
        assert!(limiter.check_key(&peer(1)).is_ok());
    }
}
