//! Where the server stands with the stack for one key: `connected` (with what its capabilities
//! admit), `refused` (for good: the key is never sent again), or `unreachable` (the next call
//! tries again). Kept under the SHA-256 digest of the key, never the key.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, broadcast};

use super::offer::Offer;
use crate::catalogue::refusals;
use crate::stack::{Capabilities, Failure, Refusal};

/// How long what the stack said a key may do is trusted before it is asked again.
pub const CAPABILITIES_FRESH_FOR: Duration = Duration::from_secs(30);

#[derive(Debug, Default)]
pub struct KeyStanding {
    /// The last capabilities the stack answered, and when.
    capabilities: Option<(Instant, Arc<Capabilities>)>,
    /// Whether they must be read again before they are trusted, whatever their age.
    stale: bool,
    refused: bool,
    /// Why the last attempt to read them failed, if it did.
    failure: Option<Failure>,
    /// What was offered when last looked at, to tell when it changes.
    offered: Option<Vec<String>>,
    /// Whoever listens for the offer to change: every `subscriptions/listen` of the key.
    changes: Changes,
}

/// Tells each listener that a key's offer changed. A listener that falls behind hears once for
/// all it missed, which says the same.
#[derive(Debug)]
struct Changes(broadcast::Sender<()>);

impl Default for Changes {
    fn default() -> Changes {
        Changes(broadcast::channel(4).0)
    }
}

/// Where the server stands, with what it offers meanwhile (the last known offer, if any).
#[derive(Debug, Clone)]
pub enum Position {
    Connected(Offer),
    Refused(Option<Offer>),
    Unreachable(Failure, Option<Offer>),
}

impl Position {
    /// What the key is offered now, as a listing shows it: nothing once the stack has refused
    /// it, so every session of a refused key lists what a new one would.
    pub fn offered(&self) -> Option<&Offer> {
        match self {
            Position::Refused(_) => None,
            _ => self.offer(),
        }
    }

    pub fn offer(&self) -> Option<&Offer> {
        match self {
            Position::Connected(offer) => Some(offer),
            Position::Refused(offer) | Position::Unreachable(_, offer) => offer.as_ref(),
        }
    }
}

/// What the stack says of a key, however the key arrived: as a bearer, in an access token, typed
/// or claimed from a key link on the sign-in page, or from the settings of `stdio` and `check`.
/// A failed read of a key's capabilities is judged here, for the HTTP mode's key check, sign-in,
/// `check`, and a key's standing (below); `T` is what an accepted key comes with where it is
/// asked (its MCP service, what it is offered, or nothing).
#[derive(Clone, Debug)]
pub enum Verdict<T> {
    Accepted(T),
    /// The key is wrong, revoked or unknown: it is never sent again, and a new one is needed.
    Refused,
    /// The stack is turning the key's requests away; try again after this many seconds.
    Throttled(Option<u64>),
    /// The stack could not be asked.
    Unreachable,
    /// The stack does not count this server's connection as pinned (ADMIT-11): a setup problem.
    NotPinned,
}

impl<T> Verdict<T> {
    /// What a failed read of the key's capabilities says of it.
    pub fn of_failure(failure: &Failure) -> Verdict<T> {
        match failure {
            Failure::Refused(refusal) if refuses_the_key(refusal) => Verdict::Refused,
            Failure::Refused(refusal) if not_pinned(refusal) => Verdict::NotPinned,
            Failure::Refused(refusal) if refusal.status == 429 => {
                Verdict::Throttled(refusal.retry_after_seconds)
            }
            _ => Verdict::Unreachable,
        }
    }

    /// Whether the key is refused for good.
    pub fn is_refused(&self) -> bool {
        matches!(self, Verdict::Refused)
    }

    /// The same verdict, with what an accepted key comes with made into another thing.
    pub fn map<U>(self, accepted: impl FnOnce(T) -> U) -> Verdict<U> {
        match self {
            Verdict::Accepted(with) => Verdict::Accepted(accepted(with)),
            Verdict::Refused => Verdict::Refused,
            Verdict::Throttled(seconds) => Verdict::Throttled(seconds),
            Verdict::Unreachable => Verdict::Unreachable,
            Verdict::NotPinned => Verdict::NotPinned,
        }
    }
}

/// A refusal that means the key itself is refused: wrong, revoked or unknown (all alike), or a
/// request that carried no key this stack admits (`NOT_ADMITTED`).
pub fn refuses_the_key(refusal: &Refusal) -> bool {
    refusal.status == 401 || refusal.is(refusals::NOT_ADMITTED)
}

/// A refusal that means the key's scope does not reach what was asked (`NOT_FOR_A_KEY`): what
/// the server knew of its capabilities is out of date.
pub fn out_of_scope(refusal: &Refusal) -> bool {
    refusal.is(refusals::NOT_FOR_A_KEY)
}

/// A refusal that says the connection, not the key, is wrong (`KEY_IN_THE_CLEAR`: the key came
/// over a connection the stack does not count as pinned; F13: the pin is the trust).
pub fn not_pinned(refusal: &Refusal) -> bool {
    refusal.is(refusals::KEY_IN_THE_CLEAR)
}

impl KeyStanding {
    /// Whether the capabilities must be (re)read before the key's position is known.
    pub fn needs_reading(&self) -> bool {
        !self.refused
            && (self.stale
                || self.failure.is_some()
                || self
                    .capabilities
                    .as_ref()
                    .is_none_or(|(at, _)| at.elapsed() >= CAPABILITIES_FRESH_FOR))
    }

    pub fn record(&mut self, read: Result<Capabilities, Failure>) {
        match read {
            Ok(capabilities) => {
                self.capabilities = Some((Instant::now(), Arc::new(capabilities)));
                self.stale = false;
                self.failure = None;
            }
            Err(failure) if Verdict::<()>::of_failure(&failure).is_refused() => self.refuse(),
            Err(failure) => self.failure = Some(failure),
        }
    }

    /// The stack refused the key: it is never sent again, and everyone listening is told at once
    /// (what the key is offered is now nothing), however the refusal was learned.
    pub fn refuse(&mut self) {
        if !self.refused {
            self.refused = true;
            // What was listed before is let go: the next listing (the connection tool alone) is
            // the change already told, not another.
            self.offered = None;
            let _ = self.changes.0.send(());
        }
    }

    pub fn is_refused(&self) -> bool {
        self.refused
    }

    /// Read the capabilities again before trusting them.
    pub fn forget_capabilities(&mut self) {
        self.stale = true;
    }

    pub fn position(&self) -> Position {
        let offer = self
            .capabilities
            .as_ref()
            .map(|(_, capabilities)| Offer::new(capabilities.clone()));
        match (&self.failure, self.refused, offer) {
            (_, true, offer) => Position::Refused(offer),
            (Some(failure), false, offer) => Position::Unreachable(failure.clone(), offer),
            (None, false, Some(offer)) => Position::Connected(offer),
            (None, false, None) => {
                Position::Unreachable(Failure::Unexpected { status: None }, None)
            }
        }
    }

    /// Notes what is offered now; answers whether it differs from what was offered before, and
    /// tells the listeners when it does.
    pub fn note_offered(&mut self, offered: Vec<String>) -> bool {
        let changed = self
            .offered
            .as_ref()
            .is_some_and(|before| *before != offered);
        self.offered = Some(offered);
        if changed {
            // No listener is no one to tell.
            let _ = self.changes.0.send(());
        }
        changed
    }

    /// Whether what is offered has been noted yet.
    pub fn offer_noted(&self) -> bool {
        self.offered.is_some()
    }

    /// Hears of each change to what the key is offered from now on.
    pub fn listen(&self) -> broadcast::Receiver<()> {
        self.changes.0.subscribe()
    }
}

/// One key's standing, shared by every session that uses the key.
pub type SharedStanding = Arc<Mutex<KeyStanding>>;

/// A key's standing before anything is known of it, or once the stack has answered with its
/// capabilities.
pub fn shared(known: Option<Capabilities>) -> SharedStanding {
    let mut standing = KeyStanding::default();
    if let Some(capabilities) = known {
        standing.record(Ok(capabilities));
    }
    Arc::new(Mutex::new(standing))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::Unreachable;
    use serde_json::json;

    fn capabilities() -> Capabilities {
        Capabilities {
            states: Default::default(),
            scope: crate::stack::Scope::Read,
        }
    }

    fn refusal(status: u16, code: &str) -> Failure {
        Failure::Refused(Refusal {
            status,
            problem: json!({"code": code}),
            retry_after_seconds: None,
        })
    }

    #[test]
    fn a_refused_key_stays_refused_and_is_never_read_again() {
        let mut standing = KeyStanding::default();
        assert!(standing.needs_reading());
        standing.record(Ok(capabilities()));
        assert!(matches!(standing.position(), Position::Connected(_)));
        assert!(!standing.needs_reading());
        standing.forget_capabilities();
        standing.record(Err(refusal(403, "ADMIT-4")));
        assert!(matches!(standing.position(), Position::Refused(Some(_))));
        assert!(!standing.needs_reading(), "the key is never sent again");
        let mut unknown = KeyStanding::default();
        unknown.record(Err(refusal(401, "")));
        assert!(matches!(unknown.position(), Position::Refused(None)));
    }

    #[test]
    fn an_unreachable_stack_is_tried_again_and_the_last_offer_kept() {
        let mut standing = KeyStanding::default();
        standing.record(Ok(capabilities()));
        standing.forget_capabilities();
        standing.record(Err(Failure::Unreachable(Unreachable::NoConnection)));
        assert!(matches!(
            standing.position(),
            Position::Unreachable(_, Some(_))
        ));
        assert!(standing.needs_reading(), "the next call tries again");
        standing.record(Ok(capabilities()));
        assert!(matches!(standing.position(), Position::Connected(_)));
    }

    #[test]
    fn other_refusals_do_not_refuse_the_key() {
        let mut standing = KeyStanding::default();
        standing.record(Err(refusal(429, "ADMIT-9")));
        assert!(!matches!(standing.position(), Position::Refused(_)));
        assert!(standing.needs_reading());
    }

    #[test]
    fn a_change_in_what_is_offered_is_noticed() {
        let mut standing = KeyStanding::default();
        assert!(
            !standing.note_offered(vec!["a".into()]),
            "the first look is no change"
        );
        assert!(!standing.note_offered(vec!["a".into()]));
        assert!(standing.note_offered(vec!["a".into(), "b".into()]));
    }

    /// However a key arrived, one reading of the stack's answer decides what becomes of it
    /// (F13-R9: a refused key is never sent again; a throttled or unreachable one is).
    #[test]
    fn a_failed_read_is_judged_the_same_for_every_key() {
        let judged = |failure: &Failure| Verdict::<()>::of_failure(failure);
        assert!(matches!(judged(&refusal(401, "ADMIT-1")), Verdict::Refused));
        let not_admitted = refusals::NOT_ADMITTED;
        let refused = refusal(not_admitted.status, not_admitted.code);
        assert!(matches!(judged(&refused), Verdict::Refused));
        let in_the_clear = refusals::KEY_IN_THE_CLEAR;
        let not_pinned = refusal(in_the_clear.status, in_the_clear.code);
        assert!(matches!(judged(&not_pinned), Verdict::NotPinned));
        let throttled = Failure::Refused(Refusal {
            status: 429,
            problem: json!({"code": "ADMIT-9"}),
            retry_after_seconds: Some(7),
        });
        assert!(matches!(judged(&throttled), Verdict::Throttled(Some(7))));
        for unreachable in [
            refusal(500, "INTERNAL"),
            Failure::Unreachable(Unreachable::TimedOut),
            Failure::PinMismatch,
        ] {
            assert!(matches!(judged(&unreachable), Verdict::Unreachable));
        }
        let accepted = Verdict::Accepted(3).map(|n| n * 2);
        assert!(matches!(accepted, Verdict::Accepted(6)));
        assert!(matches!(
            Verdict::<u8>::Refused.map(|n| n * 2),
            Verdict::Refused
        ));
    }
}
