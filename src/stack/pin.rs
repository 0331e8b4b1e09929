//! The TLS verifier that accepts the stack's pinned certificate (by its fingerprint) and no other. A mismatch fails the handshake, so nothing is sent.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, OtherError, SignatureScheme};

use crate::fingerprint::Fingerprint;

/// The handshake failed because the stack showed a certificate other than the pinned one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the stack's certificate does not match the pin")]
pub struct PinMismatch;

/// Trusts exactly the pinned certificate, wherever the stack is: a process on the same machine
/// could answer in the stack's place as well as one anywhere else.
#[derive(Debug)]
pub struct PinVerifier {
    pin: Fingerprint,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinVerifier {
    pub fn new(pin: Fingerprint, provider: &CryptoProvider) -> PinVerifier {
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
        if Fingerprint::of_certificate(end_entity) == self.pin {
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
