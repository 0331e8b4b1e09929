//! The certificate the HTTP mode serves (F13-R12, R13), in the mode the operator chose: one of its
//! own that clients pin, the operator's files, leaves of a private root, or one an ACME authority
//! issues. Every mode serves through one resolver that swaps the certificate without dropping the
//! connections already open, and says at start who can check what it serves.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use tokio_util::sync::CancellationToken;

use crate::config::TlsMode;
use crate::fingerprint::Fingerprint;

mod acme;
mod files;
mod inspect;
mod pinned;
mod private_ca;
mod resolver;
pub use pinned::make_and_keep;
pub use resolver::Swappable;

/// How often a mode that watches files looks at them, so that a replaced certificate is served
/// within seconds (the look reads two small files and compares them).
const LOOKED_AT_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// A certificate being served, in the mode chosen.
pub struct Served {
    pub config: Arc<ServerConfig>,
    /// What every handshake presents: swapped for a new certificate while serving.
    pub resolver: Arc<Swappable>,
    /// The fingerprint of the certificate served first.
    pub fingerprint: Fingerprint,
    /// The PEM a client trusts to check the server: the certificate itself, the operator's chain,
    /// the private root, or the issued chain.
    pub trust_file: PathBuf,
    /// The private root, served at `/root.pem` for household devices to install.
    pub root_pem: Option<Arc<str>>,
    /// Who can check what is served (F13-R13), for the operator at start.
    pub who_can_check: String,
}

/// What a mode starts serving with; it keeps the resolver current from then on.
struct Started {
    first: Presented,
    resolver: Arc<Swappable>,
    trust_file: PathBuf,
    root_pem: Option<Arc<str>>,
}

/// Why no certificate could be had. Names the file or the name, never a key.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("cannot set up TLS: {0}")]
    Tls(#[source] rustls::Error),
    #[error("cannot use the certificate: {0}")]
    Unusable(#[source] rustls::Error),
    #[error("{file} is not a PEM certificate: {1}", file = .0.display())]
    NotACertificate(PathBuf, #[source] rustls::pki_types::pem::Error),
    #[error("{file} holds no certificate", file = .0.display())]
    NoCertificate(PathBuf),
    #[error("{file} is not a PEM private key", file = .0.display())]
    NotAKey(PathBuf),
    #[error(
        "the private key in {key} does not match the certificate in {certificate}",
        key = .1.display(), certificate = .0.display()
    )]
    KeyDoesNotMatch(PathBuf, PathBuf),
    #[error(
        "the certificate in {file} does not cover {names}, which LEMONFIBER_NAMES lists",
        file = .0.display(), names = .1.join(", ")
    )]
    NamesNotCovered(PathBuf, Vec<String>),
    #[error("the certificate in {file} expired at {1}", file = .0.display())]
    Expired(PathBuf, String),
    #[error("the certificate in {file} is not valid until {1}", file = .0.display())]
    NotYetValid(PathBuf, String),
    #[error("the certificate in {file} cannot be read as X.509", file = .0.display())]
    NotX509(PathBuf),
    #[error(
        "the private root in {folder} was made for other names, and cannot certify {names}. Serve the names it was \
         made for, or move its private-ca-root files away to make a new root (which every household device must \
         then install)",
        folder = .0.display(), names = .1.join(", ")
    )]
    RootDoesNotCover(PathBuf, Vec<String>),
    #[error("the private root does not issue for {0}, which is outside the names it was made for")]
    OutsideRoot(String),
    #[error("{file} holds no root to trust: {1}", file = .0.display())]
    NoRoots(PathBuf, String),
    #[error("cannot use this machine's trusted roots to check the ACME directory: {0}")]
    NoPlatformRoots(#[source] std::io::Error),
    #[error("cannot make a key: {0}")]
    NoKey(#[source] rcgen::Error),
    #[error("the names cannot be certified: {0}")]
    BadNames(#[source] rcgen::Error),
    #[error("cannot sign the certificate: {0}")]
    NotSigned(#[source] rcgen::Error),
    #[error("cannot make the state folder {folder}: {1}", folder = .0.display())]
    NoStateFolder(PathBuf, #[source] std::io::Error),
    #[error("cannot write {file}: {1}", file = .0.display())]
    NotWritten(PathBuf, #[source] std::io::Error),
    #[error("cannot read {file}: {1}", file = .0.display())]
    NotRead(PathBuf, #[source] std::io::Error),
}

/// Starts serving a certificate in `mode` for `names`, kept current until `ends`.
pub fn serve_certificate(
    mode: &TlsMode,
    state: &Path,
    names: &[String],
    ends: &CancellationToken,
) -> Result<Served, CertError> {
    let started = match mode {
        TlsMode::Pinned => pinned::start(state, names, LOOKED_AT_EVERY, ends)?,
        TlsMode::Files {
            certificate,
            private_key,
        } => files::start(certificate, private_key, names, LOOKED_AT_EVERY, ends)?,
        TlsMode::PrivateCa => private_ca::start(state, names, ends)?,
        TlsMode::Acme(settings) => acme::start(settings, state, names, ends)?,
    };
    let who_can_check = who_can_check(mode, &started.first.fingerprint, &started.trust_file);
    Ok(Served {
        config: config_presenting(started.resolver.clone())?,
        resolver: started.resolver,
        fingerprint: started.first.fingerprint,
        trust_file: started.trust_file,
        root_pem: started.root_pem,
        who_can_check,
    })
}

/// F13-R13: who can check the certificate `mode` serves, and so which assistants can reach it.
fn who_can_check(mode: &TlsMode, fingerprint: &Fingerprint, trust_file: &Path) -> String {
    const HOSTED: &str = "An assistant whose provider makes the connection (a phone or browser assistant hosted by \
                          its provider) can reach this server only with a publicly trusted certificate: acme mode \
                          with a public authority, or files from one.";
    let trust_file = trust_file.display();
    match mode {
        TlsMode::Pinned => format!(
            "This server serves a certificate of its own (fingerprint {}). Only a client that pins that fingerprint or \
             trusts {trust_file} can check it, so only assistants that connect from your own devices can reach it. \
             {HOSTED}",
            fingerprint.to_hex()
        ),
        TlsMode::Files { .. } => format!(
            "This server serves the certificate in {trust_file}. Whoever trusts the authority that issued it can \
             check it: every client, if that authority is public; otherwise only devices that trust its root. \
             {HOSTED}"
        ),
        TlsMode::PrivateCa => format!(
            "This server serves certificates from a private root of its own, in {trust_file} and at /root.pem. Only \
             devices that have installed that root can check it, so only assistants on your own devices can reach \
             it. {HOSTED}"
        ),
        TlsMode::Acme(settings) => format!(
            "This server serves a certificate issued by the ACME authority at {}. Whoever trusts that authority can \
             check it: every client, if it is a public one; otherwise only clients given its root. Until the first \
             certificate is issued it serves a stand-in of its own that only a client pinning it can check. {HOSTED}",
            settings.directory
        ),
    }
}

/// A TLS server configuration for a certificate and its key (HTTP/1.1, ring).
pub fn server_config(
    certificate: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<ServerConfig>, CertError> {
    config_presenting(Swappable::new(presented(vec![certificate], key)?.certified))
}

/// A certificate chain with its key, as a handshake presents it, and the leaf's fingerprint.
pub struct Presented {
    certified: Arc<CertifiedKey>,
    pub fingerprint: Fingerprint,
}

/// A TLS server configuration that presents whatever `resolver` holds (HTTP/1.1, ring), and
/// answers an ACME authority's TLS-ALPN-01 look when one is pending.
fn config_presenting(resolver: Arc<Swappable>) -> Result<Arc<ServerConfig>, CertError> {
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(CertError::Tls)?
            .with_no_client_auth()
            .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"http/1.1".to_vec(), resolver::ACME_TLS_ALPN.to_vec()];
    Ok(Arc::new(config))
}

/// A chain and its key as a handshake presents them, if the key is the leaf's.
fn presented(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Presented, CertError> {
    let fingerprint = chain
        .first()
        .map(|leaf| Fingerprint::of_certificate(leaf))
        .ok_or(CertError::Unusable(rustls::Error::NoCertificatesPresented))?;
    let certified = CertifiedKey::from_der(chain, key, &rustls::crypto::ring::default_provider())
        .map_err(CertError::Unusable)?;
    Ok(Presented {
        certified: Arc::new(certified),
        fingerprint,
    })
}

/// The certificates of a PEM file, in order.
fn chain_in(file: &Path) -> Result<Vec<CertificateDer<'static>>, CertError> {
    use rustls::pki_types::pem::PemObject as _;
    let chain = CertificateDer::pem_slice_iter(&read(file)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| CertError::NotACertificate(file.to_owned(), error))?;
    if chain.is_empty() {
        return Err(CertError::NoCertificate(file.to_owned()));
    }
    Ok(chain)
}

/// The private key of a PEM file.
fn key_in(file: &Path) -> Result<PrivateKeyDer<'static>, CertError> {
    use rustls::pki_types::pem::PemObject as _;
    PrivateKeyDer::from_pem_slice(&read(file)?).map_err(|_| CertError::NotAKey(file.to_owned()))
}

fn read(file: &Path) -> Result<Vec<u8>, CertError> {
    std::fs::read(file).map_err(|error| CertError::NotRead(file.to_owned(), error))
}

/// Keeps `bytes` in `file` in the state folder, whole, its owner's alone.
fn keep(state: &Path, file: &str, bytes: &[u8]) -> Result<(), CertError> {
    crate::state::make_folder(state)
        .map_err(|error| CertError::NoStateFolder(state.to_owned(), error))?;
    let path = state.join(file);
    crate::state::write_whole(&path, bytes).map_err(|error| CertError::NotWritten(path, error))
}

/// A fresh key, in the two forms it is needed in: rcgen's to sign with, rustls's to serve.
fn new_key() -> Result<(rcgen::KeyPair, PrivateKeyDer<'static>), CertError> {
    let key_pair = rcgen::KeyPair::generate().map_err(CertError::NoKey)?;
    let der = PrivateKeyDer::Pkcs8(key_pair.serialize_der().into());
    Ok((key_pair, der))
}
