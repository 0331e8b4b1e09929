//! A small certificate authority for tests, and clients that check a server's chain against
//! chosen roots as any browser would: never an insecure flag.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

/// A root that signs leaves for tests.
pub struct TestAuthority {
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A leaf and its key, as PEM.
pub struct Leaf {
    pub chain_pem: String,
    pub key_pem: String,
}

impl TestAuthority {
    pub fn new(name: &str) -> TestAuthority {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let certificate = params.self_signed(&key).expect("signed");
        TestAuthority {
            pem: certificate.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A leaf for `names`, valid from an hour ago for `life`.
    pub fn leaf(&self, names: &[&str], life: Duration) -> Leaf {
        let key = KeyPair::generate().expect("key");
        let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("names");
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::hours(1);
        params.not_after = now + life;
        let certificate = params.signed_by(&key, &self.issuer).expect("signed");
        Leaf {
            chain_pem: certificate.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    /// A leaf for `names` that expired yesterday.
    pub fn expired_leaf(&self, names: &[&str]) -> Leaf {
        let key = KeyPair::generate().expect("key");
        let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("names");
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::days(30);
        params.not_after = now - time::Duration::days(1);
        let certificate = params.signed_by(&key, &self.issuer).expect("signed");
        Leaf {
            chain_pem: certificate.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    pub fn write(&self, file: &Path) {
        std::fs::write(file, &self.pem).expect("root written");
    }
}

impl Leaf {
    pub fn write(&self, chain: &Path, key: &Path) {
        std::fs::write(chain, &self.chain_pem).expect("chain written");
        std::fs::write(key, &self.key_pem).expect("key written");
    }
}

/// TLS that trusts only the roots in `roots_pem`.
pub fn trusting(roots_pem: &str) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    for root in CertificateDer::pem_slice_iter(roots_pem.as_bytes()) {
        roots.add(root.expect("a PEM root")).expect("a root");
    }
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    tls
}

/// An HTTPS client that trusts only `roots_pem`, and reaches `name` at `address`.
pub fn client_trusting(
    roots_pem: &str,
    name: &str,
    address: std::net::SocketAddr,
) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_backend_preconfigured(trusting(roots_pem))
        .resolve(name, address)
        .no_proxy()
        .build()
        .expect("an HTTPS client")
}

/// The SHA-256 fingerprint of the leaf the server at `address` presents for `name`, on a
/// connection of its own, checked against `roots_pem`; or why the handshake failed.
pub fn served_fingerprint(
    address: std::net::SocketAddr,
    name: &str,
    roots_pem: &str,
) -> Result<String, String> {
    use sha2::Digest as _;
    let server_name = ServerName::try_from(name.to_owned()).expect("a name");
    let mut connection = rustls::ClientConnection::new(Arc::new(trusting(roots_pem)), server_name)
        .expect("a TLS client");
    let mut tcp = std::net::TcpStream::connect(address).map_err(|error| error.to_string())?;
    tcp.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    while connection.is_handshaking() {
        connection
            .complete_io(&mut tcp)
            .map_err(|error| error.to_string())?;
    }
    let leaf = connection
        .peer_certificates()
        .and_then(|chain| chain.first())
        .expect("a leaf");
    Ok(hex::encode(sha2::Sha256::digest(leaf)))
}

/// A port no one listens on now, for a server the test starts.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}
