//! The certificate pin: the SHA-256 of the stack's leaf certificate, and the TLS verifier that
//! accepts that certificate and no other. A mismatch fails the handshake, so nothing is sent.

use std::fmt;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, OtherError, SignatureScheme};
use sha2::{Digest, Sha256};

const PIN_HEX_LEN: usize = 64;

/// A certificate pin. Its `Debug` withholds it and it has no `Display`: the only way to its text
/// is [`Pin::to_hex`], for the demo, which prints its own pin for a person on purpose.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Pin([u8; 32]);

/// Why text is not a pin. It never repeats the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinError;

impl fmt::Display for PinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a pin is the SHA-256 of the stack's certificate as {PIN_HEX_LEN} hex characters"
        )
    }
}

impl std::error::Error for PinError {}

impl Pin {
    pub fn parse(text: &str) -> Result<Pin, PinError> {
        let text = text.trim();
        if text.len() != PIN_HEX_LEN {
            return Err(PinError);
        }
        let mut pin = [0u8; 32];
        hex::decode_to_slice(text, &mut pin).map_err(|_| PinError)?;
        Ok(Pin(pin))
    }

    pub fn of_certificate(der: &[u8]) -> Pin {
        Pin(Sha256::digest(der).into())
    }

    /// From now on the pin is withheld from everything the server writes.
    pub fn withhold_from_output(self) {
        crate::redact::withhold(&self.to_hex());
    }

    pub fn to_hex(self) -> String {
        hex::encode(self.0)
    }
}

impl fmt::Debug for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Pin(withheld)")
    }
}

/// The handshake failed because the stack showed a certificate other than the pinned one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinMismatch;

impl fmt::Display for PinMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the stack's certificate does not match the pin")
    }
}

impl std::error::Error for PinMismatch {}

/// Trusts exactly the pinned certificate, wherever the stack is: a process on the same machine
/// could answer in the stack's place as well as one anywhere else.
#[derive(Debug)]
pub struct PinVerifier {
    pin: Pin,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinVerifier {
    pub fn new(pin: Pin, provider: &CryptoProvider) -> PinVerifier {
        PinVerifier {
            pin,
            algorithms: provider.signature_verification_algorithms,
        }
    }
}

impl ServerCertVerifier for PinVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if Pin::of_certificate(end_entity) == self.pin {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(CertificateError::Other(
                OtherError(Arc::new(PinMismatch)),
            )))
        }
    }

    // The pin says which certificate; the handshake signature still proves the stack holds its key.
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Whether an error, anywhere down its chain, is a pin mismatch. `io::Error` hides the error it
/// wraps from `source()`, so it is looked inside by hand.
pub fn is_pin_mismatch(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        if error.downcast_ref::<PinMismatch>().is_some() {
            return true;
        }
        if let Some(rustls::Error::InvalidCertificate(CertificateError::Other(other))) =
            error.downcast_ref()
            && other.0.downcast_ref::<PinMismatch>().is_some()
        {
            return true;
        }
        if let Some(inner) = error
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            && is_pin_mismatch(inner)
        {
            return true;
        }
        next = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_hex_it_prints() {
        let pin = Pin::of_certificate(b"a certificate");
        assert_eq!(Pin::parse(&pin.to_hex()), Ok(pin));
        assert_eq!(Pin::parse(&pin.to_hex().to_uppercase()), Ok(pin));
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
            assert_eq!(Pin::parse(text), Err(PinError), "{text:?}");
        }
    }

    #[test]
    fn debug_withholds_the_pin() {
        let pin = Pin::of_certificate(b"x");
        assert!(!format!("{pin:?}").contains(&pin.to_hex()[..8]));
    }

    #[test]
    fn finds_a_mismatch_behind_io_and_rustls_errors() {
        let rustls_error = rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(
            Arc::new(PinMismatch),
        )));
        let io = std::io::Error::other(rustls_error);
        assert!(is_pin_mismatch(&io));
        assert!(!is_pin_mismatch(&std::io::Error::other(
            "connection refused"
        )));
    }
}
