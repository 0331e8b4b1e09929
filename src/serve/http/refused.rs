//! Keys the stack refused, by digest, kept apart from what is kept for accepted keys so that
//! letting an accepted key's state go never forgets a refusal (F13-R9). A key the stack accepted
//! and later refused is remembered for the life of the process: only keys the stack made can get
//! there. A key refused the first time it was sent is remembered among the most recent
//! [`UNKNOWN_KEPT`] such keys, since anyone can make up keys without end.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

pub const UNKNOWN_KEPT: usize = 65_536;

#[derive(Default)]
pub struct RefusedKeys {
    revoked: Mutex<HashSet<[u8; 32]>>,
    unknown: Mutex<Unknown>,
}

#[derive(Default)]
struct Unknown {
    digests: HashSet<[u8; 32]>,
    order: VecDeque<[u8; 32]>,
}

impl RefusedKeys {
    pub fn contains(&self, digest: &[u8; 32]) -> bool {
        self.revoked
            .lock()
            .is_ok_and(|revoked| revoked.contains(digest))
            || self
                .unknown
                .lock()
                .is_ok_and(|unknown| unknown.digests.contains(digest))
    }

    /// A key the stack had accepted, and now refuses.
    pub fn revoked(&self, digest: [u8; 32]) {
        if let Ok(mut revoked) = self.revoked.lock() {
            revoked.insert(digest);
        }
    }

    /// A key the stack refused the first time it was sent.
    pub fn unknown(&self, digest: [u8; 32]) {
        let Ok(mut unknown) = self.unknown.lock() else {
            return;
        };
        if !unknown.digests.insert(digest) {
            return;
        }
        unknown.order.push_back(digest);
        if unknown.order.len() > UNKNOWN_KEPT
            && let Some(oldest) = unknown.order.pop_front()
        {
            unknown.digests.remove(&oldest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(n: usize) -> [u8; 32] {
        let mut digest = [0u8; 32];
        digest[..8].copy_from_slice(&(n as u64).to_le_bytes());
        digest
    }

    #[test]
    fn a_revoked_key_is_never_forgotten_and_unknown_ones_are_bounded() {
        let refused = RefusedKeys::default();
        refused.revoked(digest(usize::MAX));
        for n in 0..UNKNOWN_KEPT + 10 {
            refused.unknown(digest(n));
        }
        assert!(refused.contains(&digest(usize::MAX)));
        assert!(
            !refused.contains(&digest(0)),
            "the oldest unknown key went first"
        );
        assert!(refused.contains(&digest(UNKNOWN_KEPT + 9)));
        assert!(refused.contains(&digest(10)));
    }
}
