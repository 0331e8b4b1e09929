//! The demo's key links (F13-R15): one claim per scope, made at start, that trades once for that
//! scope's key within ten minutes, and is answered as the core answers a spent, expired or unknown
//! claim after. The control endpoint can expire them all, for the tests.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::keys::{Scope, random_hex};

/// How long a claim can be traded.
const LIFE: Duration = Duration::from_secs(600);

pub struct Claims(Mutex<HashMap<String, Outstanding>>);

struct Outstanding {
    scope: Scope,
    expires: Instant,
    spent: bool,
}

/// Why a claim brings no key, as the refusal's summary names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotTraded {
    Spent,
    Expired,
    Unknown,
}

impl NotTraded {
    pub fn summary(self) -> &'static str {
        match self {
            NotTraded::Spent => "This claim is spent: its key link was used already.",
            NotTraded::Expired => "This claim has expired.",
            NotTraded::Unknown => "This claim is unknown.",
        }
    }
}

impl Claims {
    /// A claim for each of `scopes`, in their order.
    pub fn made_for(scopes: &[Scope]) -> Result<(Claims, Vec<String>), getrandom::Error> {
        let mut outstanding = HashMap::new();
        let mut made = Vec::new();
        for scope in scopes {
            let claim = random_hex(24)?;
            outstanding.insert(
                claim.clone(),
                Outstanding {
                    scope: scope.clone(),
                    expires: Instant::now() + LIFE,
                    spent: false,
                },
            );
            made.push(claim);
        }
        Ok((Claims(Mutex::new(outstanding)), made))
    }

    /// The scope whose key `claim` is traded for, once.
    pub fn trade(&self, claim: &str) -> Result<Scope, NotTraded> {
        let mut outstanding = self.0.lock().map_err(|_| NotTraded::Unknown)?;
        let found = outstanding.get_mut(claim).ok_or(NotTraded::Unknown)?;
        if found.spent {
            return Err(NotTraded::Spent);
        }
        if Instant::now() >= found.expires {
            return Err(NotTraded::Expired);
        }
        found.spent = true;
        Ok(found.scope.clone())
    }

    /// Every claim expires now.
    pub fn expire_all(&self) {
        if let Ok(mut outstanding) = self.0.lock() {
            let now = Instant::now();
            for found in outstanding.values_mut() {
                found.expires = now;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_trades_once_and_not_after_it_expires() {
        let (claims, made) = Claims::made_for(&[Scope::Read, Scope::Act]).expect("made");
        assert_eq!(claims.trade(&made[0]), Ok(Scope::Read));
        assert_eq!(claims.trade(&made[0]), Err(NotTraded::Spent));
        assert_eq!(claims.trade("0000"), Err(NotTraded::Unknown));
        claims.expire_all();
        assert_eq!(claims.trade(&made[1]), Err(NotTraded::Expired));
    }
}
