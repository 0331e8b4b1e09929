//! A certificate's public-key pin: the SHA-256 of its SubjectPublicKeyInfo, in base64. It is what
//! curl's `--pinnedpubkey sha256//…` and Chromium's `--ignore-certificate-errors-spki-list` take,
//! neither of which can pin the certificate's own fingerprint; it lasts as long as the key does,
//! so a certificate made again for the same key keeps it.

use std::fmt;

use base64::Engine as _;
use sha2::{Digest, Sha256};

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SpkiPin([u8; 32]);

impl SpkiPin {
    /// The pin of the certificate in `der`, or `None` if it cannot be read as X.509.
    pub fn of_certificate(der: &[u8]) -> Option<SpkiPin> {
        let (_, certificate) = x509_parser::parse_x509_certificate(der).ok()?;
        Some(SpkiPin(Sha256::digest(certificate.public_key().raw).into()))
    }

    /// Standard base64 with padding, as curl and Chromium take it.
    pub fn to_base64(self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.0)
    }
}

impl fmt::Debug for SpkiPin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SpkiPin(withheld)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_made_again_for_the_same_key_keeps_its_pin() {
        let key = rcgen::KeyPair::generate().expect("a key");
        let make = |name: &str| {
            rcgen::CertificateParams::new(vec![name.to_owned()])
                .expect("a name")
                .self_signed(&key)
                .expect("signed")
        };
        let (first, second) = (make("localhost"), make("mcp.home.arpa"));
        assert_ne!(first.der(), second.der());
        let pin = SpkiPin::of_certificate(first.der()).expect("read");
        assert_eq!(SpkiPin::of_certificate(second.der()), Some(pin));
        let expected = Sha256::digest(rcgen::PublicKeyData::subject_public_key_info(&key));
        assert_eq!(
            pin.0,
            <[u8; 32]>::from(expected),
            "the hash of the key's own SPKI"
        );
        assert_eq!(pin.to_base64().len(), 44, "32 bytes in padded base64");
        assert_eq!(SpkiPin::of_certificate(b"not a certificate"), None);
    }

    #[test]
    fn debug_withholds_the_pin() {
        let key = rcgen::KeyPair::generate().expect("a key");
        let certificate = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .expect("a name")
            .self_signed(&key)
            .expect("signed");
        let pin = SpkiPin::of_certificate(certificate.der()).expect("read");
        assert!(!format!("{pin:?}").contains(&pin.to_base64()[..8]));
    }
}
