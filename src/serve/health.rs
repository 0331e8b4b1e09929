//! `lemonfiber-mcp health`: the container's health check, for an image with no shell or curl.
//! It asks the HTTP mode on this machine for `/health` and exits 0 only if it answers `200`.
//!
//! It does not check the certificate: it sends nothing (no key, no cookie) and trusts nothing it
//! is told beyond one status line, and only ever to this machine; the certificate in service may
//! be any mode's, including a stand-in no pin is known for yet.

// The one probe outside src/stack, and never to the stack: clippy.toml says so.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::io::{Read as _, Write as _};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::config::{self, ConfigError, LISTEN};

const PROBE_TIME: Duration = Duration::from_secs(3);

/// Why the server is not healthy, or could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum Unhealthy {
    #[error("{LISTEN} is not set to the address the HTTP mode serves on")]
    NoListen,
    #[error(transparent)]
    Names(#[from] ConfigError),
    #[error("nothing answered on port {0}: {1}")]
    NoAnswer(u16, #[source] std::io::Error),
    #[error("the TLS handshake on port {0} failed: {1}")]
    Tls(u16, String),
    #[error("/health did not answer 200 OK")]
    NotOk,
}

/// Asks the HTTP mode serving on `LEMONFIBER_LISTEN` whether it is up.
pub fn run() -> Result<(), Unhealthy> {
    let listen: SocketAddr = std::env::var(LISTEN)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .ok_or(Unhealthy::NoListen)?;
    let host = match listen.ip() {
        ip if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        ip => ip,
    };
    let port = listen.port();
    // The server answers only a Host that names it, at a port it is reached at: the first of
    // its names, at the port it listens on.
    let set = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|value| !value.trim().is_empty())
    };
    let named = config::served_names(&set)?
        .into_iter()
        .next()
        .unwrap_or_else(|| "localhost".to_owned());
    let named = if named.contains(':') {
        format!("[{named}]")
    } else {
        named
    };
    let target = SocketAddr::new(host, port);
    let tcp = TcpStream::connect_timeout(&target, PROBE_TIME)
        .map_err(|error| Unhealthy::NoAnswer(port, error))?;
    tcp.set_read_timeout(Some(PROBE_TIME))
        .and_then(|()| tcp.set_write_timeout(Some(PROBE_TIME)))
        .map_err(|error| Unhealthy::NoAnswer(port, error))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|error| Unhealthy::Tls(port, error.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ThisMachine(
            provider.signature_verification_algorithms,
        )))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let name = ServerName::IpAddress(host.into());
    let connection = rustls::ClientConnection::new(Arc::new(tls), name)
        .map_err(|error| Unhealthy::Tls(port, error.to_string()))?;
    let mut stream = rustls::StreamOwned::new(connection, tcp);
    let request =
        format!("GET /health HTTP/1.1\r\nHost: {named}:{port}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|error| Unhealthy::Tls(port, error.to_string()))?;
    let mut head = [0u8; 16];
    let read = stream.read(&mut head).unwrap_or(0);
    if head[..read].starts_with(b"HTTP/1.1 200") {
        Ok(())
    } else {
        Err(Unhealthy::NotOk)
    }
}

/// Takes whatever certificate this machine's server presents (see the module's note), but
/// still checks the handshake's signatures.
#[derive(Debug)]
struct ThisMachine(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for ThisMachine {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}
