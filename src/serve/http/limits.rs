//! Allowances that refill over time: requests a minute for a key, and for each peer address its
//! requests and the keys it brings that the server has not yet seen accepted.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Instant;

/// How many peers' allowances are kept; past it, those back to full (idle) go first, then any.
/// A peer let go starts again with a full allowance: letting one go never holds anyone back.
const PEERS_KEPT: usize = 65_536;
/// How often a full table is swept for idle peers, at most.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// An allowance of `per_minute`, refilled evenly over each minute, up to a minute's worth.
#[derive(Debug, Clone, Copy)]
pub struct Bucket {
    tokens: f64,
    refilled: Instant,
}

impl Bucket {
    pub fn full(per_minute: u64) -> Bucket {
        Bucket {
            tokens: per_minute as f64,
            refilled: Instant::now(),
        }
    }

    fn refill(&mut self, per_minute: u64) {
        let now = Instant::now();
        let per_second = per_minute as f64 / 60.0;
        self.tokens = (self.tokens + now.duration_since(self.refilled).as_secs_f64() * per_second)
            .min(per_minute as f64);
        self.refilled = now;
    }

    /// Takes one, or says how many seconds until there is one.
    pub fn take(&mut self, per_minute: u64) -> Result<(), u64> {
        self.refill(per_minute);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            let per_second = per_minute as f64 / 60.0;
            Err(((1.0 - self.tokens) / per_second).ceil().max(1.0) as u64)
        }
    }

    fn is_full(&mut self, per_minute: u64) -> bool {
        self.refill(per_minute);
        self.tokens >= per_minute as f64
    }
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

/// Each peer's allowances: its requests, and the keys it brings that are new to the server.
pub struct PeerAllowances {
    peers: Mutex<Peers>,
    requests_per_minute: u64,
    new_keys_per_minute: u64,
}

struct Peers {
    allowances: HashMap<IpAddr, (Bucket, Bucket)>,
    swept: Instant,
}

impl PeerAllowances {
    pub fn new(requests_per_minute: u64, new_keys_per_minute: u64) -> PeerAllowances {
        PeerAllowances {
            peers: Mutex::new(Peers {
                allowances: HashMap::new(),
                swept: Instant::now(),
            }),
            requests_per_minute,
            new_keys_per_minute,
        }
    }

    fn take(&self, peer: IpAddr, new_key: bool) -> Result<(), u64> {
        let mut peers = crate::lock::lock(&self.peers);
        let peers = &mut *peers;
        if !peers.allowances.contains_key(&peer) && peers.allowances.len() >= PEERS_KEPT {
            if peers.swept.elapsed() >= SWEEP_EVERY {
                let (requests, new_keys) = (self.requests_per_minute, self.new_keys_per_minute);
                peers.allowances.retain(|_, (asked, brought)| {
                    !(asked.is_full(requests) && brought.is_full(new_keys))
                });
                peers.swept = Instant::now();
            }
            if peers.allowances.len() >= PEERS_KEPT
                && let Some(any) = peers.allowances.keys().next().copied()
            {
                peers.allowances.remove(&any);
            }
        }
        let (requests, new_keys) = peers.allowances.entry(peer).or_insert_with(|| {
            (
                Bucket::full(self.requests_per_minute),
                Bucket::full(self.new_keys_per_minute),
            )
        });
        if new_key {
            new_keys.take(self.new_keys_per_minute)
        } else {
            requests.take(self.requests_per_minute)
        }
    }

    /// One request from `peer`, or how many seconds until it may make one.
    pub fn request(&self, peer: IpAddr) -> Result<(), u64> {
        self.take(peer_of(peer), false)
    }

    /// One key from `peer` that the server has not seen accepted, or how many seconds until it
    /// may bring one.
    pub fn new_key(&self, peer: IpAddr) -> Result<(), u64> {
        self.take(peer_of(peer), true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_minute_then_says_how_long_to_wait() {
        let mut bucket = Bucket::full(3);
        assert!(bucket.take(3).is_ok());
        assert!(bucket.take(3).is_ok());
        assert!(bucket.take(3).is_ok());
        assert_eq!(bucket.take(3), Err(20));
    }

    #[test]
    fn a_full_table_of_busy_peers_never_turns_a_newcomer_away() {
        let allowances = PeerAllowances::new(10, 10);
        for n in 0..PEERS_KEPT as u32 {
            let peer = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + n));
            assert!(allowances.new_key(peer).is_ok());
        }
        let newcomer: IpAddr = "192.0.2.1".parse().expect("v4");
        assert!(allowances.request(newcomer).is_ok());
        assert!(allowances.peers.lock().expect("peers").allowances.len() <= PEERS_KEPT);
    }

    #[test]
    fn peers_are_counted_apart_and_ipv6_by_its_64() {
        let allowances = PeerAllowances::new(2, 1);
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
