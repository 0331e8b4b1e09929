//! The certificate the HTTP mode serves (F13-R12, R13), in the mode the operator chose: one of its
//! own that clients pin, the operator's files, leaves of a private root, or one an ACME authority
//! issues. Every mode serves through one resolver that swaps the certificate without dropping the
//! connections already open, and says at start who can check what it serves.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use tokio_util::sync::CancellationToken;

use crate::config::{AcmeChallenge, TlsMode};
use crate::fingerprint::{Fingerprint, SpkiPin};
use inspect::{Lifetime, uncovered};

mod acme;
mod files;
mod inspect;
mod pinned;
mod private_ca;
mod resolver;
pub use pinned::{Holds, make_and_keep, what_is_in};
pub use resolver::Swappable;

/// How often a mode that watches files looks at them, so that a replaced certificate is served
/// within seconds (the look reads two small files and compares them).
const LOOKED_AT_EVERY: Duration = Duration::from_secs(2);
/// The longest a wait for a renewal sleeps before looking at the clock again: a sleeping machine
/// stops the runtime's clock, not the certificate's.
const CLOCK_LOOKED_AT_EVERY: Duration = Duration::from_secs(600);

/// A certificate being served, in the mode chosen.
pub struct Served {
    pub config: Arc<ServerConfig>,
    /// The fingerprint of the certificate served first.
    pub fingerprint: Fingerprint,
    /// The public-key pin of the certificate served first, for the clients that pin a key.
    pub spki: SpkiPin,
    /// The private root's fingerprint, in the mode that has one: what a device compares before
    /// installing it, and what lasts while the leaf it issues changes weekly.
    pub root_fingerprint: Option<Fingerprint>,
    /// The PEM a client trusts to check the server: the certificate itself, the operator's chain,
    /// the private root, or the issued chain.
    pub trust_file: PathBuf,
    /// The private root, served at `/root.pem` for household devices to install.
    pub root_pem: Option<Arc<str>>,
    /// Who can check what is served (F13-R13), for the operator at start.
    pub who_can_check: String,
    /// The task keeping the certificate current; it ends soon after the server's `ends`.
    pub keeper: tokio::task::JoinHandle<()>,
}

/// What a mode starts serving with, and the task that keeps the resolver current from then on.
struct Started {
    first: Presented,
    resolver: Arc<Swappable>,
    trust_file: PathBuf,
    root_pem: Option<Arc<str>>,
    root_fingerprint: Option<Fingerprint>,
    keeper: tokio::task::JoinHandle<()>,
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
    #[error("the certificate cannot be read as X.509 to find its public key")]
    NoPublicKey,
    #[error("{file} is not as this server wrote it; remove it and it is made again", file = .0.display())]
    NotOurs(PathBuf),
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
    #[error(
        "{file} can be read by others (mode {mode:04o}); make it yours alone with: chmod 600 {file}",
        file = .0.display(), mode = .1
    )]
    KeyOpenToOthers(PathBuf, u32),
}

/// Starts serving a certificate in `mode` for `names`, kept current until `ends`.
/// `behind`: the public URL of the trusted proxy or tunnel clients reach the server through, if
/// there is one, which is what clients then check.
pub fn serve_certificate(
    mode: &TlsMode,
    state: &Path,
    names: &[String],
    behind: Option<&str>,
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
    let who_can_check = match behind {
        Some(public_url) => who_can_check_behind_a_proxy(mode, &started, public_url),
        None => who_can_check(mode, &started),
    };
    let answers_tls_alpn =
        matches!(mode, TlsMode::Acme(settings) if settings.challenge == AcmeChallenge::TlsAlpn);
    Ok(Served {
        config: config_presenting(started.resolver, answers_tls_alpn)?,
        fingerprint: started.first.fingerprint,
        spki: started.first.spki,
        trust_file: started.trust_file,
        root_pem: started.root_pem,
        root_fingerprint: started.root_fingerprint,
        who_can_check,
        keeper: started.keeper,
    })
}

/// F13-R13: who can check the certificate `mode` serves, and so which assistants can reach it.
fn who_can_check(mode: &TlsMode, started: &Started) -> String {
    const HOSTED: &str = "An assistant whose provider makes the connection (a phone or browser assistant hosted by \
                          its provider) can reach this server only with a publicly trusted certificate: acme mode \
                          with a public authority, or files from one.";
    let trust_file = started.trust_file.display();
    match mode {
        TlsMode::Pinned => format!(
            "This server serves a certificate of its own (fingerprint {}, public key SHA-256 {}). Only a client that \
             pins that fingerprint or that public key, or trusts {trust_file}, can check it, so only assistants that \
             connect from your own devices can reach it. {HOSTED}",
            started.first.fingerprint.to_hex(),
            started.first.spki.to_base64()
        ),
        TlsMode::Files { .. } => format!(
            "This server serves the certificate in {trust_file}. Whoever trusts the authority that issued it can \
             check it: every client, if that authority is public; otherwise only devices that trust its root. \
             {HOSTED}"
        ),
        TlsMode::PrivateCa => format!(
            "This server serves certificates from a private root of its own (root fingerprint {}), in {trust_file} \
             and at /root.pem. Only devices that have installed that root can check it, so only assistants on your \
             own devices can reach it. {HOSTED}",
            started
                .root_fingerprint
                .map_or_else(String::new, |root| root.to_colon_pairs())
        ),
        TlsMode::Acme(settings) => format!(
            "This server serves a certificate issued by the ACME authority at {}. Whoever trusts that authority can \
             check it: every client, if it is a public one; otherwise only clients given its root. {HOSTED}",
            settings.directory
        ),
    }
}

/// Who can check what, when clients reach this server through a proxy or tunnel at `public_url`
/// (F13-R13): they check the proxy's certificate, and the proxy checks this server's.
fn who_can_check_behind_a_proxy(mode: &TlsMode, started: &Started, public_url: &str) -> String {
    let trust_file = started.trust_file.display();
    let the_proxy_trusts = match mode {
        TlsMode::Pinned | TlsMode::PrivateCa => format!("give it {trust_file} to trust"),
        TlsMode::Files { .. } | TlsMode::Acme(_) => format!(
            "give it the root of the authority that issued it (it trusts a public authority's roots already; \
             the chain served is in {trust_file})"
        ),
    };
    format!(
        "Clients reach this server through your proxy or tunnel at {public_url}, and check the proxy's certificate: \
         an assistant hosted by its provider can connect only if that certificate is publicly trusted. The proxy \
         checks this server's certificate: {the_proxy_trusts}. The proxy reads every request in the clear, keys \
         and access tokens among them, so trust it as you trust this server."
    )
}

/// A TLS server configuration for a certificate and its key (HTTP/1.1, ring).
pub fn server_config(
    certificate: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<ServerConfig>, CertError> {
    config_presenting(
        Swappable::new(presented(vec![certificate], key)?.certified),
        false,
    )
}

/// A certificate chain with its key, as a handshake presents it, and the leaf's fingerprint and
/// public-key pin.
pub struct Presented {
    certified: Arc<CertifiedKey>,
    pub fingerprint: Fingerprint,
    pub spki: SpkiPin,
}

/// A TLS server configuration that presents whatever `resolver` holds (HTTP/1.1, ring), and
/// that speaks `acme-tls/1` only when it answers an ACME authority's TLS-ALPN-01 looks.
fn config_presenting(
    resolver: Arc<Swappable>,
    answers_tls_alpn: bool,
) -> Result<Arc<ServerConfig>, CertError> {
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(CertError::Tls)?
            .with_no_client_auth()
            .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    if answers_tls_alpn {
        config.alpn_protocols.push(resolver::ACME_TLS_ALPN.to_vec());
    }
    Ok(Arc::new(config))
}

/// A chain and its key as a handshake presents them, if the key is the leaf's.
fn presented(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Presented, CertError> {
    let leaf = chain
        .first()
        .ok_or(CertError::Unusable(rustls::Error::NoCertificatesPresented))?;
    let fingerprint = Fingerprint::of_certificate(leaf);
    let spki = SpkiPin::of_certificate(leaf).ok_or(CertError::NoPublicKey)?;
    let certified = CertifiedKey::from_der(chain, key, &rustls::crypto::ring::default_provider())
        .map_err(CertError::Unusable)?;
    Ok(Presented {
        certified: Arc::new(certified),
        fingerprint,
        spki,
    })
}

/// A chain and its key, checked to be servable for `names` now: the key is the leaf's, the leaf
/// covers every name as a client checks it, and it is valid now. The files are named in errors.
fn servable(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    names: &[String],
    (certificate_file, key_file): (&Path, &Path),
) -> Result<(Presented, Lifetime), CertError> {
    let leaf = chain
        .first()
        .cloned()
        .ok_or_else(|| CertError::NoCertificate(certificate_file.to_owned()))?;
    let presented = presented(chain, key).map_err(|problem| match problem {
        CertError::Unusable(rustls::Error::InconsistentKeys(_)) => {
            CertError::KeyDoesNotMatch(certificate_file.to_owned(), key_file.to_owned())
        }
        other => other,
    })?;
    let missing = uncovered(&leaf, names);
    if !missing.is_empty() {
        return Err(CertError::NamesNotCovered(
            certificate_file.to_owned(),
            missing,
        ));
    }
    let lifetime = Lifetime::of(&leaf, certificate_file)?;
    lifetime.check(SystemTime::now(), certificate_file)?;
    Ok((presented, lifetime))
}

/// What a look at where a certificate comes from found.
enum Look {
    Unchanged,
    /// Something new: the certificate to serve, or why it cannot be served.
    Changed(Result<Presented, CertError>),
}

/// Looks every `every` until `ends`, and puts in service what each look finds new; a new
/// certificate that cannot be served leaves the one in service, and is logged once per problem.
async fn keep_looking(
    resolver: Arc<Swappable>,
    every: Duration,
    ends: CancellationToken,
    source: String,
    mut look: impl FnMut() -> Look,
) {
    let mut last_problem = None;
    loop {
        tokio::select! {
            () = ends.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        match look() {
            Look::Unchanged => {}
            Look::Changed(Ok(presented)) => {
                resolver.swap(presented.certified);
                last_problem = None;
                tracing::info!(
                    fingerprint = %presented.fingerprint.to_hex(),
                    spki_sha256 = %presented.spki.to_base64(),
                    from = %source,
                    "serving the new certificate"
                );
            }
            Look::Changed(Err(problem)) => {
                let said = problem.to_string();
                if last_problem.as_ref() != Some(&said) {
                    tracing::warn!(problem = %said, from = %source, "the new certificate cannot be served; the one in service stays");
                }
                last_problem = Some(said);
            }
        }
    }
}

/// Waits until the clock says `at` (looking at it now and then, so a machine that slept does not
/// make the wait longer), or until `ends`: answers whether the time came.
async fn wait_until(at: SystemTime, ends: &CancellationToken) -> bool {
    loop {
        let left = inspect::until(at);
        if left.is_zero() {
            tokio::task::yield_now().await;
            return !ends.is_cancelled();
        }
        tokio::select! {
            () = ends.cancelled() => return false,
            () = tokio::time::sleep(left.min(CLOCK_LOOKED_AT_EVERY)) => {}
        }
    }
}

/// The first certificate of a PEM file: the leaf of a chain, or a root.
fn leaf_in(file: &Path) -> Result<CertificateDer<'static>, CertError> {
    leaf_of(&read(file)?, file)
}

/// The first certificate of PEM text that came from `file`.
fn leaf_of(pem: &[u8], file: &Path) -> Result<CertificateDer<'static>, CertError> {
    chain_of(pem, file)?
        .into_iter()
        .next()
        .ok_or_else(|| CertError::NoCertificate(file.to_owned()))
}

/// The certificates of a PEM file, in order; never none.
pub fn chain_in(file: &Path) -> Result<Vec<CertificateDer<'static>>, CertError> {
    chain_of(&read(file)?, file)
}

/// The certificates of PEM text that came from `file`, in order; never none.
fn chain_of(pem: &[u8], file: &Path) -> Result<Vec<CertificateDer<'static>>, CertError> {
    use rustls::pki_types::pem::PemObject as _;
    let chain = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| CertError::NotACertificate(file.to_owned(), error))?;
    if chain.is_empty() {
        return Err(CertError::NoCertificate(file.to_owned()));
    }
    Ok(chain)
}

/// The private key of a PEM file.
fn key_in(file: &Path) -> Result<PrivateKeyDer<'static>, CertError> {
    key_of(&read(file)?, file)
}

/// The private key in PEM text that came from `file`.
fn key_of(pem: &[u8], file: &Path) -> Result<PrivateKeyDer<'static>, CertError> {
    use rustls::pki_types::pem::PemObject as _;
    PrivateKeyDer::from_pem_slice(pem).map_err(|_| CertError::NotAKey(file.to_owned()))
}

fn read(file: &Path) -> Result<Vec<u8>, CertError> {
    std::fs::read(file).map_err(|error| CertError::NotRead(file.to_owned(), error))
}

fn read_text(file: &Path) -> Result<String, CertError> {
    std::fs::read_to_string(file).map_err(|error| CertError::NotRead(file.to_owned(), error))
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
