//! What the operator is told in the log about reaching the stack: once at start, whether the
//! stack answers at its address with the pinned certificate; and, while it cannot be reached,
//! that requests are being turned away for it, at most one line an interval however many are.
//! Without these the HTTP mode would start silently against a wrong address or pin and answer
//! 503 with nothing in the log to say why.
//!
//! No line names a key, a pin or anything a client sent; only the stack's address, which the
//! operator configured and `stdio` logs too.

use std::time::{Duration, Instant};

use crate::lock::lock;
use crate::stack::reach::{Reached, reach};
use crate::stack::{Failure, StackAddress, Unreachable};

/// How often at most a request turned away for an unreachable stack is said in the log.
pub const TURNED_AWAY_SAID_EVERY: Duration = Duration::from_secs(30);

/// Checks the stack once and says what became of it: info when it answers as pinned, warn
/// otherwise. The server serves either way: the stack may come up later.
pub async fn check_at_start(address: StackAddress) {
    let stack = address.base_url.as_str();
    match reach(&address).await {
        Reached::Reached => tracing::info!(
            %stack,
            "the stack answers at its address, and its certificate matches the pin"
        ),
        Reached::PinMismatch => tracing::warn!(
            %stack,
            "the stack's certificate does not match the pin this server was given, so nothing will be sent to it; \
             requests will be answered 503 until the pin (LEMONFIBER_PIN) or the address is put right"
        ),
        Reached::Unreachable(why) => tracing::warn!(
            %stack,
            "the stack cannot be reached: {}; serving anyway, and requests will be answered 503 until it can be",
            unreachable(why)
        ),
    }
}

fn unreachable(why: Unreachable) -> &'static str {
    match why {
        Unreachable::NoConnection => {
            "nothing answered at its address (is the stack running, and is the address right?)"
        }
        Unreachable::TimedOut => "it did not answer in time",
        Unreachable::Broken => {
            "the connection broke before TLS was set up (is the address the stack's HTTPS port?)"
        }
    }
}

/// Why a key could not be checked with the stack, in the log's words; never the stack's.
fn because(failure: &Failure) -> String {
    match failure {
        Failure::PinMismatch => {
            "the stack's certificate does not match the pin this server was given".to_owned()
        }
        Failure::Unreachable(why) => unreachable(*why).to_owned(),
        Failure::Refused(refusal) => format!(
            "the stack would not say what the key may use (status {})",
            refusal.status
        ),
        Failure::Unexpected { .. } | Failure::TooLarge { .. } | Failure::PathOutsideTemplate => {
            "the stack answered something that is not its web API".to_owned()
        }
    }
}

/// Requests turned away because the stack could not be reached: the first said at once, the
/// rest counted and said with the next line once [`TURNED_AWAY_SAID_EVERY`] has passed.
pub struct TurnedAway {
    every: Duration,
    said: std::sync::Mutex<Said>,
}

struct Said {
    last: Option<Instant>,
    unsaid: u64,
}

impl TurnedAway {
    pub fn new() -> TurnedAway {
        TurnedAway::every(TURNED_AWAY_SAID_EVERY)
    }

    fn every(every: Duration) -> TurnedAway {
        TurnedAway {
            every,
            said: std::sync::Mutex::new(Said {
                last: None,
                unsaid: 0,
            }),
        }
    }

    /// One request turned away (answered 503) because of `failure`.
    pub fn one(&self, stack: &StackAddress, failure: &Failure) {
        if let Some(unsaid) = self.to_say(Instant::now()) {
            tracing::warn!(
                stack = %stack.base_url,
                "a request was answered 503 because the stack cannot be reached: {} \
                 ({unsaid} more answered so since the last such line; this is said at most every {} seconds)",
                because(failure),
                self.every.as_secs()
            );
        }
    }

    /// Whether a request turned away at `now` is said, with how many were not since the last
    /// line; `None` when it is only counted.
    fn to_say(&self, now: Instant) -> Option<u64> {
        let mut said = lock(&self.said);
        if said
            .last
            .is_some_and(|last| now.saturating_duration_since(last) < self.every)
        {
            said.unsaid += 1;
            return None;
        }
        said.last = Some(now);
        Some(std::mem::take(&mut said.unsaid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_turned_away_are_said_once_an_interval_with_how_many_were_not() {
        let turned_away = TurnedAway::every(Duration::from_secs(30));
        let start = Instant::now();
        assert_eq!(turned_away.to_say(start), Some(0));
        for seconds in [1, 10, 29] {
            assert_eq!(
                turned_away.to_say(start + Duration::from_secs(seconds)),
                None
            );
        }
        assert_eq!(turned_away.to_say(start + Duration::from_secs(30)), Some(3));
        assert_eq!(turned_away.to_say(start + Duration::from_secs(31)), None);
        assert_eq!(turned_away.to_say(start + Duration::from_secs(90)), Some(1));
        assert_eq!(
            turned_away.to_say(start + Duration::from_secs(200)),
            Some(0)
        );
    }
}
