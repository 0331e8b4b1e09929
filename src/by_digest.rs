//! What the server keeps for each key, kept under the key's SHA-256 digest (never the key), for a
//! bounded number of keys: past the bound, the one used longest ago is let go.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
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

    /// The value kept for `digest`, made by `make` if there is none; also the value let go to make
    /// room, if one was.
    pub fn get_or_make<E>(
        &self,
        digest: [u8; 32],
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<(Arc<T>, Option<Arc<T>>), E> {
        let mut entries = match self.entries.lock() {
            Ok(entries) => entries,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some((used, value)) = entries.get_mut(&digest) {
            *used = Instant::now();
            return Ok((value.clone(), None));
        }
        let value = Arc::new(make()?);
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
        entries.insert(digest, (Instant::now(), value.clone()));
        Ok((value, evicted))
    }

    pub fn values(&self) -> Vec<Arc<T>> {
        match self.entries.lock() {
            Ok(entries) => entries.values().map(|(_, value)| value.clone()).collect(),
            Err(poisoned) => poisoned
                .into_inner()
                .values()
                .map(|(_, value)| value.clone())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_bounded_number_and_lets_the_oldest_go() {
        let kept = ByDigest::new(2);
        let made = |value| move || Ok::<_, ()>(value);
        let (first, _) = kept.get_or_make([1; 32], made(1)).expect("made");
        let (again, _) = kept.get_or_make([1; 32], made(9)).expect("kept");
        assert!(Arc::ptr_eq(&first, &again));
        kept.get_or_make([2; 32], made(2)).expect("made");
        let (_, evicted) = kept.get_or_make([3; 32], made(3)).expect("made");
        assert_eq!(evicted.as_deref(), Some(&1), "the one used longest ago");
        assert_eq!(kept.values().len(), 2);
    }
}
