//! Keys the stack refused, by digest, kept apart from what is kept for accepted keys so that
//! letting an accepted key's state go never forgets a refusal (F13-R9). A key the stack accepted
//! and later refused is remembered for good, in the state folder too, so that a restart never
//! sends it to the stack again: only keys the stack made can get there. A key refused the first
//! time it was sent is remembered among the most recent [`UNKNOWN_KEPT`] such keys, in memory,
//! since anyone can make up keys without end.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub const UNKNOWN_KEPT: usize = 65_536;
/// The folder, in the state folder, of the digests of keys refused after being accepted.
const FOLDER: &str = "refused-keys";

#[derive(Default)]
pub struct RefusedKeys {
    revoked: Mutex<HashSet<[u8; 32]>>,
    unknown: Mutex<Unknown>,
    /// Where revoked keys' digests are kept, one empty file each, named by the digest.
    kept_in: Option<PathBuf>,
}

#[derive(Default)]
struct Unknown {
    digests: HashSet<[u8; 32]>,
    order: VecDeque<[u8; 32]>,
}

impl RefusedKeys {
    /// The refused keys kept in `state`, with those already there.
    pub fn kept_in(state: &Path) -> RefusedKeys {
        let folder = state.join(FOLDER);
        let revoked = std::fs::read_dir(&folder)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                hex::decode(name).ok()?.try_into().ok()
            })
            .collect();
        RefusedKeys {
            revoked: Mutex::new(revoked),
            unknown: Mutex::default(),
            kept_in: Some(folder),
        }
    }

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
        let new = self
            .revoked
            .lock()
            .is_ok_and(|mut revoked| revoked.insert(digest));
        if let (true, Some(folder)) = (new, &self.kept_in) {
            let kept = std::fs::create_dir_all(folder)
                .and_then(|()| std::fs::write(folder.join(hex::encode(digest)), b""));
            if let Err(error) = kept {
                tracing::warn!(%error, folder = %folder.display(), "a refused key could not be kept for after a restart");
            }
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

    #[test]
    fn a_revoked_key_is_still_refused_after_a_restart_and_an_unknown_one_is_not_kept() {
        let state = std::env::temp_dir().join(format!("lemonfiber-refused-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        let before = RefusedKeys::kept_in(&state);
        before.revoked(digest(1));
        before.unknown(digest(2));
        let after = RefusedKeys::kept_in(&state);
        assert!(after.contains(&digest(1)));
        assert!(!after.contains(&digest(2)));
        let _ = std::fs::remove_dir_all(&state);
    }
}
