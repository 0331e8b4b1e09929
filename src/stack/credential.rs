//! The integration key, kept so that it can only ever leave in the `X-Lemonfiber-Token` header.

use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};

/// The header every request to the stack carries its key in (never the URL).
pub const TOKEN_HEADER: &str = "X-Lemonfiber-Token";
const KEY_PREFIX: &str = "lfk_";
/// Integration keys carry at least 128 bits of hex after the prefix.
const KEY_MIN_HEX: usize = 32;
const KEY_MAX_HEX: usize = 256;

/// An integration key: `lfk_` and lower-case hex. It has no `Display`, its `Debug` withholds it,
/// and each copy's memory is wiped when the copy is dropped.
#[derive(Clone, Debug)]
pub struct Key(SecretString);

/// Why text is not an integration key. It never repeats the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("the key is empty")]
    Empty,
    #[error(
        "that is not an integration key (one starts with {KEY_PREFIX} followed by lower-case hex); \
         make one on the stack for this assistant"
    )]
    NotAnIntegrationKey,
}

impl Key {
    /// Reads a key, ignoring the surrounding white space a key file usually ends with.
    pub fn parse(text: &str) -> Result<Key, KeyError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(KeyError::Empty);
        }
        let hex = text
            .strip_prefix(KEY_PREFIX)
            .ok_or(KeyError::NotAnIntegrationKey)?;
        let well_formed = (KEY_MIN_HEX..=KEY_MAX_HEX).contains(&hex.len())
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if well_formed {
            Ok(Key(SecretString::from(text)))
        } else {
            Err(KeyError::NotAnIntegrationKey)
        }
    }

    /// The SHA-256 of the key: what per-key state is kept under, so the key itself is not.
    pub fn digest(&self) -> [u8; 32] {
        Sha256::digest(self.expose().as_bytes()).into()
    }

    /// From now on the key is withheld from everything the server writes.
    pub fn withhold_from_output(&self) {
        crate::redact::withhold(self.expose());
    }

    /// The key, and its hex part on its own, as secrets to withhold from what this key's calls
    /// hand over.
    pub fn withheld(&self) -> crate::redact::Secrets {
        let mut secrets = crate::redact::Secrets::default();
        secrets.add(self.expose());
        secrets
    }

    /// The key's text, for the one file it is kept in (the config `link` writes, 0600).
    pub fn expose_for_keeping(&self) -> &str {
        self.expose()
    }

    /// The key's text, for the one header it travels in.
    pub(super) fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

/// Compared by digest, so how long a comparison takes says nothing about how much of two keys
/// agree.
impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.digest() == other.digest()
    }
}

impl Eq for Key {}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "lfk_0123456789abcdef0123456789abcdef";

    #[test]
    fn accepts_an_integration_key_and_trims_a_file_newline() {
        assert_eq!(Key::parse(&format!("{GOOD}\n")), Key::parse(GOOD));
        assert!(Key::parse(GOOD).is_ok());
    }

    #[test]
    fn refuses_what_is_not_an_integration_key() {
        for text in [
            "",
            "  ",
            "hunter2",
            "lfk_",
            "lfk_0123",
            "LFK_0123456789abcdef0123456789abcdef",
            "lfk_0123456789ABCDEF0123456789abcdef",
        ] {
            assert!(Key::parse(text).is_err(), "{text:?} was taken as a key");
        }
    }

    #[test]
    fn keys_are_equal_only_when_they_are_the_same_key() {
        let key = Key::parse(GOOD).expect("a good key");
        assert_eq!(key, key.clone());
        let other = Key::parse("lfk_0123456789abcdef0123456789abcdee").expect("another key");
        assert_ne!(key, other);
    }

    #[test]
    fn debug_and_errors_never_show_the_key() {
        let key = Key::parse(GOOD).expect("a good key");
        let shown = format!("{key:?} {key:#?}");
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
        assert!(shown.contains("REDACTED"), "{shown}");
        assert!(!format!("{:?}", key.withheld()).contains("0123456789abcdef"));
        let error = Key::parse("lfk_not-hex-at-all-but-secretish").expect_err("not a key");
        assert!(!error.to_string().contains("secretish"));
    }
}
