//! The limits the HTTP mode keeps for each key, each peer and in all, and their settings.

use std::num::{NonZeroU32, NonZeroUsize};

use super::values::at_least_one;
use super::{
    AT_ONCE, ConfigError, KEY_SESSIONS, PEER_AT_ONCE, PEER_NEW_KEYS, PEER_RATE, RATE, SESSIONS,
    UNDER_WAY,
};

/// The limits the HTTP mode keeps for each key, each peer, and in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests a minute one key may make.
    pub per_minute: NonZeroU32,
    /// Requests one key may have under way at once.
    pub at_once: NonZeroUsize,
    /// Sessions open at once, over every key.
    pub sessions: NonZeroUsize,
    /// Sessions one key may hold open at once.
    pub key_sessions: NonZeroUsize,
    /// Requests a minute one peer address may make.
    pub peer_per_minute: NonZeroU32,
    /// Keys a minute one peer address may bring that the server has not yet seen accepted.
    pub peer_new_keys_per_minute: NonZeroU32,
    /// Requests that carry no key (sign-in and the like) one peer address may have under way
    /// at once.
    pub peer_at_once: NonZeroUsize,
    /// Requests under way at once, over everyone.
    pub under_way: NonZeroUsize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        per_minute: a_minute(240),
        at_once: at_once(8),
        sessions: at_once(256),
        key_sessions: at_once(16),
        peer_per_minute: a_minute(600),
        peer_new_keys_per_minute: a_minute(10),
        peer_at_once: at_once(8),
        under_way: at_once(128),
    };
}

/// A default rate, written as a number: none of them is zero, so the fallback is never taken,
/// and it would still let one through a minute rather than none.
const fn at_once(count: usize) -> NonZeroUsize {
    match NonZeroUsize::new(count) {
        Some(count) => count,
        None => NonZeroUsize::MIN,
    }
}

const fn a_minute(count: u32) -> NonZeroU32 {
    match NonZeroU32::new(count) {
        Some(count) => count,
        None => NonZeroU32::MIN,
    }
}

/// The HTTP mode's limits, each from its setting or its default.
pub fn limits(set: &impl Fn(&str) -> Option<String>) -> Result<Limits, ConfigError> {
    Ok(Limits {
        per_minute: at_least_one(set, RATE, Limits::DEFAULT.per_minute, 100_000)?,
        at_once: at_least_one(set, AT_ONCE, Limits::DEFAULT.at_once, 1_000)?,
        sessions: at_least_one(set, SESSIONS, Limits::DEFAULT.sessions, 100_000)?,
        key_sessions: at_least_one(set, KEY_SESSIONS, Limits::DEFAULT.key_sessions, 10_000)?,
        peer_per_minute: at_least_one(set, PEER_RATE, Limits::DEFAULT.peer_per_minute, 1_000_000)?,
        peer_new_keys_per_minute: at_least_one(
            set,
            PEER_NEW_KEYS,
            Limits::DEFAULT.peer_new_keys_per_minute,
            1_000_000,
        )?,
        peer_at_once: at_least_one(set, PEER_AT_ONCE, Limits::DEFAULT.peer_at_once, 10_000)?,
        under_way: at_least_one(set, UNDER_WAY, Limits::DEFAULT.under_way, 100_000)?,
    })
}
