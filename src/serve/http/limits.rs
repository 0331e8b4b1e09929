//! Allowances that refill over time: requests a minute for a key, and for each peer address its
//! requests and the keys it brings that the server has not yet seen accepted. Each allows a
//! minute's worth at once and refills evenly over the minute. Besides, for each peer, how many of
//! the requests that carry no key it has under way at once (`at_once`).

mod at_once;
mod kept_peers;

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock, Reference};
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::{DefaultDirectRateLimiter, NotUntil, Quota, RateLimiter};

use crate::lock::lock;
pub use at_once::PeersAtOnce;
use kept_peers::KeptPeers;

/// How many peers' allowances are kept, of each kind; past it, those back to full (idle) go
/// first, then any. A peer let go starts again with a full allowance: letting one go never holds
/// anyone back.
const PEERS_KEPT: usize = 65_536;
/// How often a full table is swept for idle peers, at most.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// An allowance of so many requests a minute.
pub struct Allowance(DefaultDirectRateLimiter);

impl Allowance {
    pub fn full(per_minute: NonZeroU32) -> Allowance {
        Allowance(RateLimiter::direct(Quota::per_minute(per_minute)))
    }

    /// Takes one, or says how many seconds until there is one.
    pub fn take(&self) -> Result<(), u64> {
        self.0
            .check()
            .map_err(|not_until| seconds_until(&not_until, self.0.clock().now()))
    }
}

/// Whole seconds until one may be taken, rounded up and at least one, so that a client that
/// waits as long as it is told is not turned away again.
fn seconds_until<P: Reference>(not_until: &NotUntil<P>, now: P) -> u64 {
    let wait = not_until.wait_time_from(now);
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

/// The address a peer is counted under: an IPv4 address, or an IPv6 address's /64, since one
/// IPv6 host is usually given a whole /64 to pick from.
pub fn peer_of(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
        v4 => v4,
    }
}

/// One allowance for every peer, kept for a bounded number of peers.
struct PeerAllowance<C: Clock = DefaultClock> {
    limiter: RateLimiter<IpAddr, KeptPeers, C, NoOpMiddleware<C::Instant>>,
    kept: usize,
    swept: Mutex<C::Instant>,
}

impl<C: Clock> PeerAllowance<C> {
    fn new(per_minute: NonZeroU32, kept: usize, clock: C) -> PeerAllowance<C> {
        let swept = Mutex::new(clock.now());
        PeerAllowance {
            limiter: RateLimiter::new(Quota::per_minute(per_minute), KeptPeers::new(kept), clock),
            kept,
            swept,
        }
    }

    fn take(&self, peer: IpAddr) -> Result<(), u64> {
        if self.limiter.len() >= self.kept {
            self.sweep_when_due();
        }
        self.limiter
            .check_key(&peer)
            .map_err(|not_until| seconds_until(&not_until, self.limiter.clock().now()))
    }

    /// Lets idle peers go, so that a peer coming to a full table takes the place of an idle one
    /// rather than a busy one; at most every `SWEEP_EVERY`, since a sweep reads the whole table.
    fn sweep_when_due(&self) {
        let now = self.limiter.clock().now();
        let mut swept = lock(&self.swept);
        if now.duration_since(*swept) >= Nanos::from(SWEEP_EVERY) {
            self.limiter.retain_recent();
            *swept = now;
        }
    }
}

/// Each peer's allowances: its requests, and the keys it brings that are new to the server.
pub struct PeerAllowances {
    requests: PeerAllowance,
    new_keys: PeerAllowance,
}

impl PeerAllowances {
    pub fn new(requests_per_minute: NonZeroU32, new_keys_per_minute: NonZeroU32) -> PeerAllowances {
        PeerAllowances {
            requests: PeerAllowance::new(requests_per_minute, PEERS_KEPT, DefaultClock::default()),
            new_keys: PeerAllowance::new(new_keys_per_minute, PEERS_KEPT, DefaultClock::default()),
        }
    }

    /// One request from `peer`, or how many seconds until it may make one.
    pub fn request(&self, peer: IpAddr) -> Result<(), u64> {
        self.requests.take(peer_of(peer))
    }

    /// One key from `peer` that the server has not seen accepted, or how many seconds until it
    /// may bring one.
    pub fn new_key(&self, peer: IpAddr) -> Result<(), u64> {
        self.new_keys.take(peer_of(peer))
    }
}

#[cfg(test)]
mod tests {
    use governor::clock::FakeRelativeClock;

    use super::*;

    fn per_minute(count: u32) -> NonZeroU32 {
        NonZeroU32::new(count).expect("not zero")
    }

    #[test]
    fn an_allowance_allows_its_minute_then_says_how_long_to_wait() {
        let allowance = Allowance::full(per_minute(3));
        assert!(allowance.take().is_ok());
        assert!(allowance.take().is_ok());
        assert!(allowance.take().is_ok());
        assert_eq!(allowance.take(), Err(20));
    }

    #[test]
    fn the_wait_is_rounded_up_to_whole_seconds() {
        let clock = FakeRelativeClock::default();
        let allowance = PeerAllowance::new(per_minute(7), 8, clock.clone());
        let peer: IpAddr = "192.0.2.1".parse().expect("v4");
        for _ in 0..7 {
            assert!(allowance.take(peer).is_ok());
        }
        assert_eq!(allowance.take(peer), Err(9), "one comes back every 8.57 s");
        clock.advance(Duration::from_millis(8_000));
        assert_eq!(
            allowance.take(peer),
            Err(1),
            "less than a second is still one"
        );
        clock.advance(Duration::from_millis(600));
        assert!(allowance.take(peer).is_ok());
    }

    #[test]
    fn a_full_table_of_busy_peers_never_turns_a_newcomer_away() {
        let allowances = PeerAllowances::new(per_minute(10), per_minute(10));
        for n in 0..PEERS_KEPT as u32 {
            let peer = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + n));
            assert!(allowances.new_key(peer).is_ok());
        }
        let newcomer: IpAddr = "192.0.2.1".parse().expect("v4");
        assert!(allowances.new_key(newcomer).is_ok());
        assert!(allowances.request(newcomer).is_ok());
        assert!(allowances.new_keys.limiter.len() <= PEERS_KEPT);
    }

    #[test]
    fn a_newcomer_to_a_full_table_takes_an_idle_peers_place_before_a_busy_ones() {
        let clock = FakeRelativeClock::default();
        let allowance = PeerAllowance::new(per_minute(1), 2, clock.clone());
        let (idle, busy, newcomer): (IpAddr, IpAddr, IpAddr) = (
            "192.0.2.1".parse().expect("v4"),
            "192.0.2.2".parse().expect("v4"),
            "192.0.2.3".parse().expect("v4"),
        );
        assert!(allowance.take(idle).is_ok());
        clock.advance(Duration::from_secs(120));
        assert!(allowance.take(busy).is_ok());
        assert!(allowance.take(newcomer).is_ok());
        assert!(
            allowance.take(busy).is_err(),
            "the busy peer is still counted"
        );
        let kept = allowance.limiter.into_state_store();
        assert_eq!(kept.peers(), vec![busy, newcomer]);
    }

    #[test]
    fn peers_are_counted_apart_and_ipv6_by_its_64() {
        let allowances = PeerAllowances::new(per_minute(2), per_minute(1));
        let one: IpAddr = "127.0.0.1".parse().expect("v4");
        let two: IpAddr = "127.0.0.2".parse().expect("v4");
        assert!(allowances.request(one).is_ok());
        assert!(allowances.request(one).is_ok());
        assert!(allowances.request(one).is_err());
        assert!(allowances.request(two).is_ok(), "another peer has its own");
        assert!(allowances.new_key(one).is_ok());
        assert!(allowances.new_key(one).is_err());
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().expect("v6");
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().expect("v6");
        assert_eq!(peer_of(a), peer_of(b));
        assert!(allowances.new_key(a).is_ok());
        assert!(allowances.new_key(b).is_err(), "one /64, one allowance");
    }
}
