//! `pinned`, the mode that depends on nobody: a certificate of the server's own, made for the
//! served names and kept in the state folder so its fingerprint survives a restart; a client pins
//! that fingerprint. `lemonfiber-mcp certificate rotate` replaces it, and a running server serves
//! the new one within seconds.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rcgen::CertificateParams;
use tokio_util::sync::CancellationToken;

use super::{
    CertError, Look, Presented, Started, Swappable, chain_in, keep, keep_looking, key_in, leaf_in,
    presented,
};
use crate::fingerprint::Fingerprint;

const CERTIFICATE_FILE: &str = "server-certificate.pem";
const KEY_FILE: &str = "server-key.pem";
const NAMES_FILE: &str = "server-names";

pub(super) fn start(
    state: &Path,
    names: &[String],
    every: Duration,
    ends: &CancellationToken,
) -> Result<Started, CertError> {
    let first = own_certificate(state, names)?;
    let resolver = Swappable::new(first.certified.clone());
    let keeper = tokio::spawn(keep_current(
        state.to_owned(),
        resolver.clone(),
        first.fingerprint,
        every,
        ends.clone(),
    ));
    Ok(Started {
        first,
        resolver,
        trust_file: state.join(CERTIFICATE_FILE),
        root_pem: None,
        root_fingerprint: None,
        keeper,
    })
}

/// The server's own certificate for `names`, from `state` when one was made for the same names
/// before, else made now and kept there.
pub(super) fn own_certificate(state: &Path, names: &[String]) -> Result<Presented, CertError> {
    let kept =
        std::fs::read_to_string(state.join(NAMES_FILE)).is_ok_and(|kept| kept == names.join("\n"));
    match kept.then(|| kept_in(state)) {
        Some(Ok(presented)) => Ok(presented),
        // Kept files that are there but unusable are the operator's to look at, not to replace.
        Some(Err(problem)) if !matches!(problem, CertError::NotRead(..)) => Err(problem),
        _ => make_and_keep(state, names),
    }
}

/// What a state folder holds, as far as `certificate rotate` is concerned: a new certificate is
/// worth making only where a pinned server serves the one it replaces, or it prints a
/// fingerprint nothing serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// A pinned server's certificate, and nothing of another mode.
    PinnedCertificate,
    NoFolder,
    /// A private root, whose leaves renew by themselves.
    PrivateRoot,
    /// An ACME account or issued certificate (beside it, the stand-in is served only until the
    /// authority issues one).
    Acme,
    /// A folder no pinned server has served from.
    NoCertificate,
}

/// What `state` holds, looked at without writing anything.
pub fn what_is_in(state: &Path) -> Holds {
    let has = |file: &str| state.join(file).exists();
    if !state.is_dir() {
        Holds::NoFolder
    } else if has(super::private_ca::ROOT_FILE) {
        Holds::PrivateRoot
    } else if has(super::acme::ACCOUNT_FILE) || has(super::acme::ISSUED_FILE) {
        Holds::Acme
    } else if has(CERTIFICATE_FILE) {
        Holds::PinnedCertificate
    } else {
        Holds::NoCertificate
    }
}

/// The certificate and key kept in `state`, if they are whole and belong together.
fn kept_in(state: &Path) -> Result<Presented, CertError> {
    presented(
        chain_in(&state.join(CERTIFICATE_FILE))?,
        key_in(&state.join(KEY_FILE))?,
    )
}

/// A new key and certificate for `names`, kept in `state` in place of any before (the key
/// readable by its owner only): what `lemonfiber-mcp certificate rotate` does, and a server's
/// first start.
pub fn make_and_keep(state: &Path, names: &[String]) -> Result<Presented, CertError> {
    let (key_pair, key) = super::new_key()?;
    let mut params = CertificateParams::new(names.to_vec()).map_err(CertError::BadNames)?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "lemonfiber-mcp");
    let certificate = params
        .self_signed(&key_pair)
        .map_err(CertError::NotSigned)?;
    keep(state, KEY_FILE, key_pair.serialize_pem().as_bytes())?;
    keep(state, CERTIFICATE_FILE, certificate.pem().as_bytes())?;
    keep(state, NAMES_FILE, names.join("\n").as_bytes())?;
    presented(vec![certificate.der().clone()], key)
}

/// Keeps the served certificate the one kept in `state`: swaps in a new one (as `certificate
/// rotate` leaves) without dropping open connections. One that cannot be read, or whose key does
/// not match, leaves the one in service and is logged.
async fn keep_current(
    state: std::path::PathBuf,
    resolver: Arc<Swappable>,
    mut serving: Fingerprint,
    every: Duration,
    ends: CancellationToken,
) {
    let source = state.join(CERTIFICATE_FILE).display().to_string();
    keep_looking(resolver, every, ends, source, move || {
        // The certificate alone says whether anything changed; the key is read only then.
        let kept = leaf_in(&state.join(CERTIFICATE_FILE));
        if kept.is_ok_and(|kept| Fingerprint::of_certificate(&kept) == serving) {
            return Look::Unchanged;
        }
        match kept_in(&state) {
            Ok(presented) if presented.fingerprint != serving => {
                serving = presented.fingerprint;
                Look::Changed(Ok(presented))
            }
            Ok(_) => Look::Unchanged,
            Err(problem) => Look::Changed(Err(problem)),
        }
    })
    .await;
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
        #[cfg(unix)]
        {
            let mode = std::os::unix::fs::PermissionsExt::mode(
                &std::fs::metadata(state.join(KEY_FILE))
                    .expect("key")
                    .permissions(),
            );
            assert_eq!(mode & 0o077, 0, "the key is its owner's alone");
        }
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
        let resolver = Swappable::new(served.certified.clone());
        make_and_keep(&other, &names).expect("another");
        std::fs::copy(other.join(KEY_FILE), state.join(KEY_FILE)).expect("a foreign key");
        assert!(matches!(kept_in(&state), Err(CertError::Unusable(_))));

        let ends = CancellationToken::new();
        let watching = tokio::spawn(keep_current(
            state.clone(),
            resolver.clone(),
            served.fingerprint,
            Duration::from_millis(10),
            ends.clone(),
        ));
        tokio::time::sleep(Duration::from_millis(100)).await;
        ends.cancel();
        watching.await.expect("the watch ends");
        let presented = Fingerprint::of_certificate(&resolver.in_service().cert[0]);
        assert_eq!(presented, served.fingerprint);
        let _ = std::fs::remove_dir_all(&base);
    }
}
