//! What the server keeps for each key, kept under the key's SHA-256 digest (never the key), for a
//! bounded number of keys: past the bound, the one used longest ago is let go.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

type Entries<T> = HashMap<[u8; 32], (Instant, Arc<T>)>;

pub struct ByDigest<T> {
    entries: Mutex<Entries<T>>,
    limit: usize,
}

impl<T> ByDigest<T> {
    pub fn new(limit: usize) -> ByDigest<T> {
        ByDigest {
            entries: Mutex::new(HashMap::new()),
            limit: limit.max(1),
        }
    }

    fn entries(&self) -> MutexGuard<'_, Entries<T>> {
        crate::lock::lock(&self.entries)
    }

    /// The value kept for `digest`, if any, now counted as just used.
    pub fn get(&self, digest: &[u8; 32]) -> Option<Arc<T>> {
        let mut entries = self.entries();
        let (used, value) = entries.get_mut(digest)?;
        *used = Instant::now();
        Some(value.clone())
    }

    /// Keeps `value` for `digest` (unless one is kept already, which is answered instead), and
    /// answers the value let go to make room, if one was.
    pub fn insert(&self, digest: [u8; 32], value: T) -> (Arc<T>, Option<Arc<T>>) {
        let mut entries = self.entries();
        if let Some((used, kept)) = entries.get_mut(&digest) {
            *used = Instant::now();
            return (kept.clone(), None);
        }
        let evicted = if entries.len() >= self.limit {
            let oldest = entries
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(digest, _)| *digest);
            oldest
                .and_then(|oldest| entries.remove(&oldest))
                .map(|(_, value)| value)
        } else {
            None
        };
        let value = Arc::new(value);
        entries.insert(digest, (Instant::now(), value.clone()));
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
}
