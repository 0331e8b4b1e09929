//! A key link's one-time claim traded for an integration key (F13-R15): `POST /api/keys/claim`,
//! sent with no key to a stack checked by the link's pin, once: a claim is spent by trying it,
//! so it is never retried.

use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;

use super::credential::Key;
use super::{AnswerLimits, Failure, SetupError, StackAddress, client, failure, sdk};
use crate::fingerprint::Fingerprint;

/// The most characters of a claim; a key link's is far shorter.
const CLAIM_MOST: usize = 512;
/// The fewest: anything shorter could be guessed.
const CLAIM_FEWEST: usize = 16;

/// A key link's one-time claim. Like a key it is never shown: `Debug` withholds it.
pub struct Claim(SecretString);

impl std::fmt::Debug for Claim {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Claim(withheld)")
    }
}

/// Why text is not a claim. It never repeats the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ClaimTextError {
    #[error("its claim is empty")]
    Empty,
    #[error(
        "its claim is not {CLAIM_FEWEST} to {CLAIM_MOST} letters, digits, '-', '_', '.' or '~'"
    )]
    Malformed,
}

impl Claim {
    /// Adds the claim to `secrets`, so that whatever echoes it is withheld like a key.
    pub fn withhold_in(&self, secrets: &mut crate::redact::Secrets) {
        secrets.add(self.0.expose_secret());
    }

    /// A name for what was kept from this claim, the same each time it is given and telling
    /// nothing of the claim itself: a digest of it, shortened.
    pub fn kept_name(&self) -> String {
        use sha2::Digest as _;
        let digest = sha2::Sha256::new()
            .chain_update(b"lemonfiber-mcp kept claim\0")
            .chain_update(self.0.expose_secret().as_bytes())
            .finalize();
        hex::encode(&digest[..12])
    }

    pub fn parse(text: &str) -> Result<Claim, ClaimTextError> {
        if text.is_empty() {
            return Err(ClaimTextError::Empty);
        }
        let well_formed = (CLAIM_FEWEST..=CLAIM_MOST).contains(&text.len())
            && text
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte));
        if well_formed {
            Ok(Claim(SecretString::from(text)))
        } else {
            Err(ClaimTextError::Malformed)
        }
    }
}

/// What the stack minted for a claim: exactly what its reply carries.
#[derive(Debug)]
pub struct Minted {
    pub name: String,
    pub scope: String,
    pub purpose: Option<String>,
    pub key: Key,
    /// The pin the reply gives, if it gives one.
    pub pin: Option<Fingerprint>,
    /// The address the reply gives, if it gives one.
    pub address: Option<String>,
}

/// Why a claim brought no key.
#[derive(Debug, thiserror::Error)]
pub enum ClaimFailure {
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The stack did not answer, answered with another certificate, or refused the claim.
    #[error("the claim was not answered with a key")]
    Failed(Failure),
    /// The stack answered with something that is not a minted key.
    #[error("the stack's answer to the claim is not a minted key ({0})")]
    NotMinted(&'static str),
}

/// Trades `claim` for a key at the stack at `address`, whose certificate must match its pin.
pub async fn claim(
    address: &StackAddress,
    claim: &Claim,
    limits: AnswerLimits,
) -> Result<Minted, ClaimFailure> {
    let client = client(address, None, limits)?;
    let body = sdk::types::ClaimArguments {
        claim: claim.0.expose_secret().to_owned(),
    };
    let answer = client
        .claim_key()
        .body(body)
        .send()
        .await
        .map_err(|error| ClaimFailure::Failed(failure(error)))?;
    minted(&answer.into_inner().into_value())
}

fn minted(envelope: &Value) -> Result<Minted, ClaimFailure> {
    if envelope.get("kind").and_then(Value::as_str) != Some("minted-key") {
        return Err(ClaimFailure::NotMinted("its kind is not minted-key"));
    }
    let data = envelope.get("data").unwrap_or(&Value::Null);
    let text = |field: &str| data.get(field).and_then(Value::as_str).map(str::to_owned);
    let key = text("secret")
        .and_then(|secret| Key::parse(&secret).ok())
        .ok_or(ClaimFailure::NotMinted(
            "its secret is not an integration key",
        ))?;
    let pin = match text("pin") {
        Some(pin) => Some(
            Fingerprint::parse(&pin)
                .map_err(|_| ClaimFailure::NotMinted("its pin is not a pin"))?,
        ),
        None => None,
    };
    Ok(Minted {
        name: text("name").ok_or(ClaimFailure::NotMinted("it names no key"))?,
        scope: text("scope").ok_or(ClaimFailure::NotMinted("it gives no scope"))?,
        purpose: text("purpose"),
        key,
        pin,
        address: text("address"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_claim_is_never_shown() {
        let claim = Claim::parse("c0ffee-c0ffee-c0ffee-c0ffee").expect("a claim");
        assert!(!format!("{claim:?}").contains("c0ffee"));
        assert_eq!(Claim::parse("short").err(), Some(ClaimTextError::Malformed));
        assert_eq!(
            Claim::parse("has spaces in it and more").err(),
            Some(ClaimTextError::Malformed)
        );
    }

    #[test]
    fn only_what_the_reply_carries_is_taken() {
        let reply = json!({"api_version": 1, "kind": "minted-key", "data": {
            "name": "kitchen assistant", "scope": "read", "purpose": "an assistant",
            "secret": "lfk_00112233445566778899aabbccddeeff"}});
        let taken = minted(&reply).expect("minted");
        assert_eq!(taken.scope, "read");
        assert!(taken.pin.is_none() && taken.address.is_none());
        let not_a_key = json!({"kind": "minted-key", "data": {"name": "n", "scope": "read", "secret": "hunter2"}});
        assert!(matches!(
            minted(&not_a_key),
            Err(ClaimFailure::NotMinted(_))
        ));
    }
}
