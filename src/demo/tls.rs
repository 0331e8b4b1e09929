//! The demo stack's certificate: made at start, for the loopback names, and its pin.

use std::sync::Arc;

use rcgen::{CertificateParams, KeyPair};
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::stack::pin::Pin;

pub struct Certificate {
    pub config: Arc<ServerConfig>,
    pub pin: Pin,
}

pub fn make() -> Result<Certificate, String> {
    let names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    let key_pair =
        KeyPair::generate().map_err(|error| format!("cannot make the demo's key: {error}"))?;
    let mut params = CertificateParams::new(names)
        .map_err(|error| format!("cannot describe the demo's certificate: {error}"))?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "lemonfiber demo stack");
    let certificate = params
        .self_signed(&key_pair)
        .map_err(|error| format!("cannot sign the demo's certificate: {error}"))?;
    let der: CertificateDer<'static> = certificate.der().clone();
    let pin = Pin::of_certificate(&der);
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_pair.serialize_der()));
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|error| format!("cannot set up TLS: {error}"))?
            .with_no_client_auth()
            .with_single_cert(vec![der], key)
            .map_err(|error| format!("cannot use the demo's certificate: {error}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Certificate {
        config: Arc::new(config),
        pin,
    })
}
