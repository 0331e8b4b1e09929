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

use crate::fingerprint::Fingerprint;

const CERTIFICATE_FILE: &str = "server-certificate.pem";
const KEY_FILE: &str = "server-key.pem";
const NAMES_FILE: &str = "server-names";

/// A certificate ready to serve.
pub struct Served {
    pub config: Arc<ServerConfig>,
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
}

/// A TLS server configuration for a certificate and its key (HTTP/1.1, ring).
pub fn server_config(
    certificate: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<ServerConfig>, CertError> {
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(CertError::Tls)?
            .with_no_client_auth()
            .with_single_cert(vec![certificate], key)
            .map_err(CertError::Unusable)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The server's own certificate for `names`, from `state` when one was made for the same names
/// before, else made now and kept there (the key readable by its owner only).
pub fn own_certificate(state: &Path, names: &[String]) -> Result<Served, CertError> {
    let certificate_file = state.join(CERTIFICATE_FILE);
    let key_file = state.join(KEY_FILE);
    let names_file = state.join(NAMES_FILE);
    let wanted = names.join("\n");
    let kept = std::fs::read_to_string(&names_file).is_ok_and(|kept| kept == wanted);
    if kept
        && let (Ok(certificate), Ok(key)) =
            (std::fs::read(&certificate_file), std::fs::read(&key_file))
    {
        let certificate = CertificateDer::from_pem_slice(&certificate)
            .map_err(|error| CertError::NotACertificate(certificate_file.clone(), error))?;
        let key = PrivateKeyDer::from_pem_slice(&key)
            .map_err(|_| CertError::NotAKey(key_file.clone()))?;
        let fingerprint = Fingerprint::of_certificate(&certificate);
        return Ok(Served {
            config: server_config(certificate, key)?,
            fingerprint,
            certificate_file,
        });
    }
    let key_pair = KeyPair::generate().map_err(CertError::NoKey)?;
    let mut params = CertificateParams::new(names.to_vec()).map_err(CertError::BadNames)?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "lemonfiber-mcp");
    let certificate = params
        .self_signed(&key_pair)
        .map_err(CertError::NotSigned)?;
    if !state.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(state)
            .map_err(|error| CertError::NoStateFolder(state.to_owned(), error))?;
    }
    write_file(&key_file, key_pair.serialize_pem().as_bytes(), 0o600)?;
    write_file(&certificate_file, certificate.pem().as_bytes(), 0o644)?;
    write_file(&names_file, wanted.as_bytes(), 0o644)?;
    let der = certificate.der().clone();
    let fingerprint = Fingerprint::of_certificate(&der);
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_pair.serialize_der()));
    Ok(Served {
        config: server_config(der, key)?,
        fingerprint,
        certificate_file,
    })
}

fn write_file(path: &Path, bytes: &[u8], mode: u32) -> Result<(), CertError> {
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(path)?;
        file.write_all(bytes)
    };
    write().map_err(|error| CertError::NotWritten(path.to_owned(), error))
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
}
