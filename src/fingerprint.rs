//! A certificate's fingerprint: the SHA-256 of its DER. One type for both sides of TLS: the
//! stack's certificate, pinned by the operator, and the one the HTTP mode serves, which its
//! clients pin. Neither `Debug` nor anything implicit shows it; [`Fingerprint::to_hex`] is the one
//! way to its text, for when it is shown to a person on purpose.

use std::fmt;

use sha2::{Digest, Sha256};

mod spki;
pub use spki::SpkiPin;

const HEX_LEN: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint([u8; 32]);

/// Why text is not a fingerprint. It never repeats the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "a pin is the SHA-256 of the stack's certificate as {HEX_LEN} hex characters, or as 32 pairs of them \
     separated by colons (as browsers and `openssl x509 -fingerprint -sha256` show it)"
)]
pub struct FingerprintError;

impl Fingerprint {
    /// Exactly 64 hex digits, surrounding white space aside (no sign); or 32 pairs of them with
    /// one colon between each, the way browsers and openssl show a certificate's fingerprint.
    pub fn parse(text: &str) -> Result<Fingerprint, FingerprintError> {
        let text = text.trim();
        let joined;
        let hex = if text.contains(':') {
            let pairs: Vec<&str> = text.split(':').collect();
            if pairs.len() != HEX_LEN / 2 || pairs.iter().any(|pair| pair.len() != 2) {
                return Err(FingerprintError);
            }
            joined = pairs.concat();
            joined.as_str()
        } else {
            text
        };
        if hex.len() != HEX_LEN {
            return Err(FingerprintError);
        }
        let mut digest = [0u8; 32];
        hex::decode_to_slice(hex, &mut digest).map_err(|_| FingerprintError)?;
        Ok(Fingerprint(digest))
    }

    pub fn of_certificate(der: &[u8]) -> Fingerprint {
        Fingerprint(Sha256::digest(der).into())
    }

    /// From now on it is withheld from everything the server writes: for the stack's pin.
    pub fn withhold_from_output(self) {
        crate::redact::withhold(&self.to_hex());
    }

    pub fn to_hex(self) -> String {
        hex::encode(self.0)
    }

    /// Upper-case pairs joined by colons, the way `openssl x509 -fingerprint -sha256` and
    /// browsers show it, so a person can compare the two by eye.
    pub fn to_colon_pairs(self) -> String {
        let hex = hex::encode_upper(self.0);
        let pairs: Vec<&str> = (0..hex.len())
            .step_by(2)
            .filter_map(|at| hex.get(at..at + 2))
            .collect();
        pairs.join(":")
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Fingerprint(withheld)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_hex_it_prints() {
        let pin = Fingerprint::of_certificate(b"a certificate");
        assert_eq!(Fingerprint::parse(&pin.to_hex()), Ok(pin));
        assert_eq!(Fingerprint::parse(&pin.to_hex().to_uppercase()), Ok(pin));
    }

    #[test]
    fn parses_the_pairs_a_browser_or_openssl_shows() {
        let pin = Fingerprint::of_certificate(b"a certificate");
        let hex = pin.to_hex().to_uppercase();
        let pairs: Vec<&str> = (0..32).map(|at| &hex[at * 2..at * 2 + 2]).collect();
        assert_eq!(Fingerprint::parse(&pairs.join(":")), Ok(pin));
        assert_eq!(pin.to_colon_pairs(), pairs.join(":"));
        for wrong in [
            pairs[..31].join(":"),
            format!("{}:", pairs.join(":")),
            pairs.join("::"),
            format!("{}:{}", &hex[..3], &hex[3..]),
        ] {
            assert_eq!(Fingerprint::parse(&wrong), Err(FingerprintError), "{wrong}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_pin() {
        for text in [
            "",
            "abc",
            &"g".repeat(64),
            &"a".repeat(63),
            &"a".repeat(65),
            &"é".repeat(32),
            // A sign is not a hex digit, though an integer parser takes one.
            &"+a".repeat(32),
            &format!("+{}", "a".repeat(63)),
        ] {
            assert_eq!(Fingerprint::parse(text), Err(FingerprintError), "{text:?}");
        }
    }

    #[test]
    fn debug_withholds_the_pin() {
        let pin = Fingerprint::of_certificate(b"x");
        assert!(!format!("{pin:?}").contains(&pin.to_hex()[..8]));
    }
}
