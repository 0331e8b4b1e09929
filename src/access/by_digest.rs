//! What the server keeps for each key, kept under the key's SHA-256 digest (never the key), for a
//! bounded number of keys: past the bound, the one used longest ago is let go.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard};

use lru::LruCache;

type Entries<T> = LruCache<[u8; 32], Arc<T>>;

pub struct ByDigest<T> {
    entries: Mutex<Entries<T>>,
}

impl<T> ByDigest<T> {
    /// Keeps at most `limit` keys' values, and at least one's.
    pub fn new(limit: usize) -> ByDigest<T> {
        let limit = NonZeroUsize::new(limit).unwrap_or(NonZeroUsize::MIN);
        ByDigest {
            // Room is made as keys come rather than all at once, since most servers see few.
            entries: Mutex::new(LruCache::sparse(limit)),
        }
    }

    fn entries(&self) -> MutexGuard<'_, Entries<T>> {
        crate::lock::lock(&self.entries)
    }

    /// The value kept for `digest`, if any, now counted as just used.
    pub fn get(&self, digest: &[u8; 32]) -> Option<Arc<T>> {
        self.entries().get(digest).cloned()
    }

    /// Keeps `value` for `digest` (unless one is kept already, which is answered instead), and
    /// answers the value let go to make room, if one was.
    pub fn insert(&self, digest: [u8; 32], value: T) -> (Arc<T>, Option<Arc<T>>) {
        let mut entries = self.entries();
        if let Some(kept) = entries.get(&digest) {
            return (kept.clone(), None);
        }
        let value = Arc::new(value);
        // The digest is not kept (checked above), so whatever `push` hands back was let go.
        let evicted = entries
            .push(digest, value.clone())
            .map(|(_, evicted)| evicted);
        (value, evicted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_bounded_number_and_lets_the_oldest_go() {
        let kept = ByDigest::new(2);
        let (first, _) = kept.insert([1; 32], 1);
        let (again, _) = kept.insert([1; 32], 9);
        assert!(Arc::ptr_eq(&first, &again), "the value kept is answered");
        kept.insert([2; 32], 2);
        assert_eq!(kept.get(&[1; 32]).as_deref(), Some(&1));
        let (_, evicted) = kept.insert([3; 32], 3);
        assert_eq!(evicted.as_deref(), Some(&2), "the one used longest ago");
        assert_eq!(kept.get(&[2; 32]), None);
    }

    #[test]
    fn answering_a_value_kept_already_counts_as_using_it() {
        let kept = ByDigest::new(2);
        kept.insert([1; 32], 1);
        kept.insert([2; 32], 2);
        let (_, evicted) = kept.insert([1; 32], 9);
        assert!(
            evicted.is_none(),
            "nothing is let go for a value kept already"
        );
        let (_, evicted) = kept.insert([3; 32], 3);
        assert_eq!(evicted.as_deref(), Some(&2));
        assert_eq!(kept.get(&[1; 32]).as_deref(), Some(&1));
    }

    #[test]
    fn a_bound_of_nothing_still_keeps_one() {
        let kept = ByDigest::new(0);
        let (_, evicted) = kept.insert([1; 32], 1);
        assert!(evicted.is_none());
        assert_eq!(kept.get(&[1; 32]).as_deref(), Some(&1));
        let (_, evicted) = kept.insert([2; 32], 2);
        assert_eq!(evicted.as_deref(), Some(&1));
    }
}
