//! The certificate the HTTP mode serves (F13-R12). For now the one mode that depends on nobody:
//! a certificate of its own, made for the served names and kept in the state folder so its
//! fingerprint survives a restart; a client pins that fingerprint.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{CertificateParams, KeyPair};
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::sign::CertifiedKey;

use crate::fingerprint::Fingerprint;

mod resolver;
pub use resolver::Swappable;

const CERTIFICATE_FILE: &str = "server-certificate.pem";
const KEY_FILE: &str = "server-key.pem";
const NAMES_FILE: &str = "server-names";

/// A certificate ready to serve.
pub struct Served {
    pub config: Arc<ServerConfig>,
    /// What every handshake presents: swapped for a new certificate while serving.
    pub resolver: Arc<Swappable>,
    pub fingerprint: Fingerprint,
    /// Where its PEM is, for a client that trusts it as it is.
    pub certificate_file: PathBuf,
}

/// Why no certificate could be had. Names the file, never a key.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("cannot set up TLS: {0}")]
    Tls(#[source] rustls::Error),
    #[error("cannot use the certificate: {0}")]
    Unusable(#[source] rustls::Error),
    #[error("{file} is not a PEM certificate: {1}", file = .0.display())]
    NotACertificate(PathBuf, #[source] rustls::pki_types::pem::Error),
    #[error("{file} is not a PEM private key", file = .0.display())]
    NotAKey(PathBuf),
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

/// A TLS server configuration for a certificate and its key (HTTP/1.1, ring).
pub fn server_config(
    certificate: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<ServerConfig>, CertError> {
    config_presenting(Swappable::new(presented(certificate, key)?.certified))
}

/// A certificate with its key, as a handshake presents it, and its fingerprint.
pub struct Presented {
    pub certified: Arc<CertifiedKey>,
    pub fingerprint: Fingerprint,
}

/// A TLS server configuration that presents whatever `resolver` holds (HTTP/1.1, ring).
fn config_presenting(resolver: Arc<Swappable>) -> Result<Arc<ServerConfig>, CertError> {
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(CertError::Tls)?
            .with_no_client_auth()
            .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The server's own certificate for `names`, from `state` when one was made for the same names
/// before, else made now and kept there; served through a resolver that can swap it.
pub fn own_certificate(state: &Path, names: &[String]) -> Result<Served, CertError> {
    let kept =
        std::fs::read_to_string(state.join(NAMES_FILE)).is_ok_and(|kept| kept == names.join("\n"));
    let presented = match kept.then(|| kept_in(state)) {
        Some(Ok(presented)) => presented,
        // Kept files that are there but unusable are the operator's to look at, not to replace.
        Some(Err(problem)) if !matches!(problem, CertError::NotRead(..)) => return Err(problem),
        _ => make_and_keep(state, names)?,
    };
    let resolver = Swappable::new(presented.certified);
    Ok(Served {
        config: config_presenting(resolver.clone())?,
        fingerprint: presented.fingerprint,
        certificate_file: state.join(CERTIFICATE_FILE),
        resolver,
    })
}

/// The certificate and key kept in `state`, if they are whole and belong together.
pub fn kept_in(state: &Path) -> Result<Presented, CertError> {
    let key_file = state.join(KEY_FILE);
    let key = PrivateKeyDer::from_pem_slice(&read(&key_file)?)
        .map_err(|_| CertError::NotAKey(key_file.clone()))?;
    presented(kept_certificate(state)?, key)
}

/// The certificate kept in `state`, without its key.
fn kept_certificate(state: &Path) -> Result<CertificateDer<'static>, CertError> {
    let file = state.join(CERTIFICATE_FILE);
    CertificateDer::from_pem_slice(&read(&file)?)
        .map_err(|error| CertError::NotACertificate(file, error))
}

fn read(file: &Path) -> Result<Vec<u8>, CertError> {
    std::fs::read(file).map_err(|error| CertError::NotRead(file.to_owned(), error))
}

/// A certificate and its key as a handshake presents them, if the key is the certificate's.
fn presented(
    certificate: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
) -> Result<Presented, CertError> {
    let fingerprint = Fingerprint::of_certificate(&certificate);
    let certified = CertifiedKey::from_der(
        vec![certificate],
        key,
        &rustls::crypto::ring::default_provider(),
    )
    .map_err(CertError::Unusable)?;
    Ok(Presented {
        certified: Arc::new(certified),
        fingerprint,
    })
}

/// A new key and certificate for `names`, kept in `state` in place of any before (the key
/// readable by its owner only): what `lemonfiber-mcp certificate rotate` does, and a server's
/// first start.
pub fn make_and_keep(state: &Path, names: &[String]) -> Result<Presented, CertError> {
    let key_pair = KeyPair::generate().map_err(CertError::NoKey)?;
    let mut params = CertificateParams::new(names.to_vec()).map_err(CertError::BadNames)?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "lemonfiber-mcp");
    let certificate = params
        .self_signed(&key_pair)
        .map_err(CertError::NotSigned)?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(state)
        .map_err(|error| CertError::NoStateFolder(state.to_owned(), error))?;
    write_file(&state.join(KEY_FILE), key_pair.serialize_pem().as_bytes())?;
    write_file(&state.join(CERTIFICATE_FILE), certificate.pem().as_bytes())?;
    write_file(&state.join(NAMES_FILE), names.join("\n").as_bytes())?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_pair.serialize_der()));
    presented(certificate.der().clone(), key)
}

/// Keeps the served certificate the one kept in `state`: looks every `every` until `ends`, and
/// swaps in a new one (as `certificate rotate` leaves) without dropping open connections. One
/// that cannot be read, or whose key does not match, leaves the one in service and is logged.
pub async fn keep_current(
    state: std::path::PathBuf,
    resolver: Arc<Swappable>,
    mut serving: Fingerprint,
    every: std::time::Duration,
    ends: tokio_util::sync::CancellationToken,
) {
    let mut last_problem = None;
    loop {
        tokio::select! {
            () = ends.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        // The certificate alone says whether anything changed; the key is read only then.
        let unchanged = kept_certificate(&state)
            .is_ok_and(|kept| Fingerprint::of_certificate(&kept) == serving);
        if unchanged {
            last_problem = None;
            continue;
        }
        match kept_in(&state) {
            Ok(presented) if presented.fingerprint != serving => {
                resolver.swap(presented.certified);
                serving = presented.fingerprint;
                last_problem = None;
                tracing::info!(
                    fingerprint = %serving.to_hex(),
                    "serving the certificate now kept in the state folder"
                );
            }
            Ok(_) => last_problem = None,
            Err(problem) => {
                let said = problem.to_string();
                if last_problem.as_ref() != Some(&said) {
                    tracing::warn!(problem = %said, "the kept certificate cannot be served; the one in service stays");
                }
                last_problem = Some(said);
            }
        }
    }
}

/// Writes `bytes` to `path` whole or not at all, readable by its owner only: to a file beside
/// it, flushed to disk, then renamed over it.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CertError> {
    let partial = path.with_extension("partial");
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&partial)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&partial, path)
    };
    write().map_err(|error| {
        let _ = std::fs::remove_file(&partial);
        CertError::NotWritten(path.to_owned(), error)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_certificate_and_its_fingerprint_survive_a_restart() {
        let state =
            std::env::temp_dir().join(format!("lemonfiber-certs-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let first = own_certificate(&state, &names).expect("made");
        let again = own_certificate(&state, &names).expect("kept");
        assert_eq!(first.fingerprint, again.fingerprint);
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(state.join(KEY_FILE))
                .expect("key")
                .permissions(),
        );
        assert_eq!(mode & 0o077, 0, "the key is its owner's alone");
        let other = own_certificate(&state, &["mcp.home.arpa".to_owned()]).expect("remade");
        assert_ne!(
            first.fingerprint, other.fingerprint,
            "other names, another certificate"
        );
        let _ = std::fs::remove_dir_all(&state);
    }

    /// A key and a certificate that do not belong together (a rotation caught half-way, or a
    /// file replaced by hand) are never served: the one in service stays.
    #[tokio::test]
    async fn a_key_that_does_not_match_is_never_served() {
        let base =
            std::env::temp_dir().join(format!("lemonfiber-rotate-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let names = vec!["localhost".to_owned()];
        let (state, other) = (base.join("state"), base.join("other"));
        let served = own_certificate(&state, &names).expect("made");
        make_and_keep(&other, &names).expect("another");
        std::fs::copy(other.join(KEY_FILE), state.join(KEY_FILE)).expect("a foreign key");
        assert!(matches!(kept_in(&state), Err(CertError::Unusable(_))));

        let ends = tokio_util::sync::CancellationToken::new();
        let watching = tokio::spawn(keep_current(
            state.clone(),
            served.resolver.clone(),
            served.fingerprint,
            std::time::Duration::from_millis(10),
            ends.clone(),
        ));
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        ends.cancel();
        watching.await.expect("the watch ends");
        let presented = Fingerprint::of_certificate(&served.resolver.in_service().cert[0]);
        assert_eq!(presented, served.fingerprint);
        let _ = std::fs::remove_dir_all(&base);
    }
}
