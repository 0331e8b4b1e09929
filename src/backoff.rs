//! The wait between tries that doubles each time a try leaves things as they were, up to a
//! longest: how a job the stack runs is asked after, and how an ACME authority that refused is
//! tried again. The loops that wait decide when they stop; this only says how long each wait is.

use std::time::Duration;

/// The waits before each next try: the first, then each twice the one before, never longer than
/// the longest once doubling has begun.
#[derive(Debug, Clone)]
pub struct Backoff {
    first: Duration,
    longest: Duration,
    next: Duration,
}

impl Backoff {
    pub const fn new(first: Duration, longest: Duration) -> Backoff {
        Backoff {
            first,
            longest,
            next: first,
        }
    }

    /// The wait before the next try; the one after it is twice as long, up to the longest.
    pub fn next_wait(&mut self) -> Duration {
        let wait = self.next;
        self.next = wait.saturating_mul(2).min(self.longest);
        wait
    }

    /// Back to the first wait, once a try has gone well.
    pub fn reset(&mut self) {
        self.next = self.first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_wait_doubles_up_to_the_longest_and_starts_again_when_reset() {
        let mut backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(2));
        let waits: Vec<u128> = (0..6).map(|_| backoff.next_wait().as_millis()).collect();
        assert_eq!(waits, [200, 400, 800, 1600, 2000, 2000]);
        backoff.reset();
        assert_eq!(backoff.next_wait(), Duration::from_millis(200));
        assert_eq!(backoff.next_wait(), Duration::from_millis(400));
    }

    #[test]
    fn a_longest_wait_near_the_largest_duration_never_overflows() {
        let mut backoff = Backoff::new(Duration::MAX / 3, Duration::MAX);
        assert_eq!(backoff.next_wait(), Duration::MAX / 3);
        assert_eq!(backoff.next_wait(), (Duration::MAX / 3) * 2);
        assert_eq!(backoff.next_wait(), Duration::MAX);
        assert_eq!(backoff.next_wait(), Duration::MAX);
    }
}
