//! The demo stack's certificate, for the loopback names, and its pin. Made new, or from a seed
//! (so that a test can serve the same certificate again, and a different one), or served again
//! from what an earlier run kept (so that the pin a person pasted still holds).

use std::sync::Arc;

use rcgen::{CertificateParams, KeyPair, PKCS_ED25519, SerialNumber};
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use sha2::{Digest, Sha256};

use super::DemoError;
use crate::fingerprint::Fingerprint;

/// PKCS#8 v1 for an Ed25519 key, less its 32-byte seed.
const ED25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

pub struct Certificate {
    pub config: Arc<ServerConfig>,
    pub pin: Fingerprint,
    /// The certificate and its key (PKCS#8), as DER, for keeping.
    pub der: (Vec<u8>, Vec<u8>),
}

/// The certificate `der` and its key, as made before: refused when they do not belong together.
pub fn from_kept(der: (Vec<u8>, Vec<u8>)) -> Result<Certificate, DemoError> {
    let certificate = CertificateDer::from(der.0.clone());
    let pin = Fingerprint::of_certificate(&certificate);
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(der.1.clone()));
    let config = crate::serve::tls::server_config(certificate, key)?;
    Ok(Certificate { config, pin, der })
}

pub fn make(seed: Option<u64>) -> Result<Certificate, DemoError> {
    let names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    let mut params = CertificateParams::new(names)
        .map_err(certificate("cannot describe the demo's certificate"))?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "lemonfiber demo stack");
    let key_pair = match seed {
        None => KeyPair::generate().map_err(certificate("cannot make the demo's key"))?,
        Some(seed) => {
            // Ed25519 signs deterministically, so the same seed gives the same certificate.
            let secret = Sha256::digest(format!("lemonfiber demo certificate {seed}"));
            let pkcs8: Vec<u8> = ED25519_PKCS8_PREFIX
                .iter()
                .chain(secret.iter())
                .copied()
                .collect();
            params.serial_number = Some(SerialNumber::from(seed.to_be_bytes().to_vec()));
            KeyPair::from_pkcs8_der_and_sign_algo(&PrivatePkcs8KeyDer::from(pkcs8), &PKCS_ED25519)
                .map_err(certificate("cannot make the demo's key from its seed"))?
        }
    };
    let certificate = params
        .self_signed(&key_pair)
        .map_err(certificate("cannot sign the demo's certificate"))?;
    let der = certificate.der();
    from_kept((der.to_vec(), key_pair.serialize_der()))
}

fn certificate(what: &'static str) -> impl Fn(rcgen::Error) -> DemoError {
    move |source| DemoError::Certificate { what, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_the_same_certificate_and_another_seed_another() {
        let pin = |seed| make(Some(seed)).expect("a certificate").pin;
        assert_eq!(pin(1), pin(1));
        assert_ne!(pin(1), pin(2));
        assert_ne!(
            make(None).expect("a certificate").pin,
            make(None).expect("a certificate").pin
        );
    }

    #[test]
    fn a_kept_certificate_is_served_with_its_pin_and_one_with_another_key_is_refused() {
        let made = make(None).expect("a certificate");
        let again = from_kept(made.der.clone()).expect("served again");
        assert_eq!(again.pin, made.pin);
        let other = make(None).expect("another");
        assert!(from_kept((made.der.0, other.der.1)).is_err());
    }
}
