//! `private-ca`: a root of the server's own, made once and kept in the state folder, that issues
//! the served certificate itself. The root is name-constrained to the served names, so even its
//! key could certify nothing else that a device trusting it would accept; household devices
//! install it once (from the state folder or `/root.pem`), and the short-lived leaf it issues is
//! renewed without anyone doing anything.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rcgen::{
    BasicConstraints, CertificateParams, CidrSubnet, DnType, ExtendedKeyUsagePurpose,
    GeneralSubtree, IsCa, Issuer, KeyPair, KeyUsagePurpose, NameConstraints,
};
use tokio_util::sync::CancellationToken;

use super::inspect::{Lifetime, said};
use super::{
    CertError, Presented, Started, Swappable, keep, leaf_of, presented, read_text, wait_until,
};
use crate::fingerprint::Fingerprint;

pub(super) const ROOT_FILE: &str = "private-ca-root.pem";
const ROOT_KEY_FILE: &str = "private-ca-root-key.pem";
/// The names the root was made for, one a line: the names it may certify.
const ROOT_NAMES_FILE: &str = "private-ca-names";
const ROOT_LIFE: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// Short enough that a leaf taken from the server is soon worthless; renewed at a third left.
const LEAF_LIFE: Duration = Duration::from_secs(7 * 24 * 3600);
/// Room for a device's clock that runs a little behind.
const BACKDATED: Duration = Duration::from_secs(3600);
/// How long to wait before trying again when a leaf could not be issued.
const RETRY_AFTER: Duration = Duration::from_secs(60);

pub(super) fn start(
    state: &Path,
    names: &[String],
    ends: &CancellationToken,
) -> Result<Started, CertError> {
    let root = PrivateRoot::kept_or_made(state, names)?;
    let (first, lifetime) = root.issue(names, LEAF_LIFE)?;
    let resolver = Swappable::new(first.certified.clone());
    tracing::info!(
        root = %state.join(ROOT_FILE).display(),
        root_fingerprint = %root.fingerprint.to_hex(),
        "serving a certificate from the private root: install the root on the household's devices, from this file \
         or from /root.pem on this server"
    );
    let root_pem = Some(Arc::from(root.pem.as_str()));
    let root_fingerprint = Some(root.fingerprint);
    let keeper = tokio::spawn(keep_renewed(
        root,
        names.to_vec(),
        resolver.clone(),
        (lifetime, LEAF_LIFE),
        ends.clone(),
    ));
    Ok(Started {
        first,
        resolver,
        trust_file: state.join(ROOT_FILE),
        root_pem,
        root_fingerprint,
        keeper,
    })
}

/// The private root, able to issue for the names it was made for and no others.
struct PrivateRoot {
    pem: String,
    fingerprint: Fingerprint,
    issuer: Issuer<'static, KeyPair>,
    permitted: Vec<String>,
}

impl PrivateRoot {
    /// The root kept in `state`, or one made now for `names` and kept there.
    fn kept_or_made(state: &Path, names: &[String]) -> Result<PrivateRoot, CertError> {
        let root = match read_text(&state.join(ROOT_FILE)) {
            Ok(pem) => PrivateRoot::kept(state, pem)?,
            Err(CertError::NotRead(_, error)) if error.kind() == std::io::ErrorKind::NotFound => {
                PrivateRoot::make(state, names)?
            }
            Err(problem) => return Err(problem),
        };
        let outside: Vec<String> = names
            .iter()
            .filter(|name| !root.permits(name))
            .cloned()
            .collect();
        if !outside.is_empty() {
            return Err(CertError::RootDoesNotCover(state.to_owned(), outside));
        }
        Ok(root)
    }

    fn kept(state: &Path, pem: String) -> Result<PrivateRoot, CertError> {
        let key_file = state.join(ROOT_KEY_FILE);
        // A root key others could read could certify the served names to every device that
        // trusts the root: refused, as the sealing secret is, rather than used.
        match crate::state::open_to_others(&key_file) {
            Ok(Some(mode)) => return Err(CertError::KeyOpenToOthers(key_file, mode)),
            Ok(None) => {}
            Err(error) => return Err(CertError::NotRead(key_file, error)),
        }
        let key =
            KeyPair::from_pem(&read_text(&key_file)?).map_err(|_| CertError::NotAKey(key_file))?;
        let permitted = read_text(&state.join(ROOT_NAMES_FILE))?
            .lines()
            .map(str::to_owned)
            .collect();
        let root_file = state.join(ROOT_FILE);
        let der = leaf_of(pem.as_bytes(), &root_file)?;
        let issuer =
            Issuer::from_ca_cert_der(&der, key).map_err(|_| CertError::NotX509(root_file))?;
        Ok(PrivateRoot {
            fingerprint: Fingerprint::of_certificate(&der),
            pem,
            issuer,
            permitted,
        })
    }

    fn make(state: &Path, names: &[String]) -> Result<PrivateRoot, CertError> {
        let (key, _) = super::new_key()?;
        let mut params = CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(
            DnType::CommonName,
            format!("lemonfiber-mcp private root for {}", names.join(", ")),
        );
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        params.name_constraints = Some(NameConstraints {
            permitted_subtrees: names.iter().map(|name| subtree(name)).collect(),
            excluded_subtrees: Vec::new(),
        });
        valid_for(&mut params, ROOT_LIFE);
        let certificate = params.self_signed(&key).map_err(CertError::NotSigned)?;
        let pem = certificate.pem();
        keep(state, ROOT_KEY_FILE, key.serialize_pem().as_bytes())?;
        keep(state, ROOT_NAMES_FILE, names.join("\n").as_bytes())?;
        keep(state, ROOT_FILE, pem.as_bytes())?;
        Ok(PrivateRoot {
            pem,
            fingerprint: Fingerprint::of_certificate(certificate.der()),
            issuer: Issuer::new(params, key),
            permitted: names.to_vec(),
        })
    }

    /// Whether `name` is one the root was made for, or (for a domain) below one.
    fn permits(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.permitted.iter().any(|permitted| {
            let permitted = permitted.to_ascii_lowercase();
            match (name.parse::<IpAddr>(), permitted.parse::<IpAddr>()) {
                (Ok(address), Ok(allowed)) => address == allowed,
                (Err(_), Err(_)) => name == permitted || name.ends_with(&format!(".{permitted}")),
                _ => false,
            }
        })
    }

    /// A leaf for `names`, valid for `life` from now; refused for any name the root was not made
    /// for, though a client would refuse it too.
    fn issue(&self, names: &[String], life: Duration) -> Result<(Presented, Lifetime), CertError> {
        if let Some(outside) = names.iter().find(|name| !self.permits(name)) {
            return Err(CertError::OutsideRoot(outside.clone()));
        }
        let (key_pair, key) = super::new_key()?;
        let mut params = CertificateParams::new(names.to_vec()).map_err(CertError::BadNames)?;
        params
            .distinguished_name
            .push(DnType::CommonName, "lemonfiber-mcp");
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        valid_for(&mut params, life);
        let leaf = params
            .signed_by(&key_pair, &self.issuer)
            .map_err(CertError::NotSigned)?;
        let lifetime = Lifetime::of(leaf.der(), Path::new("the issued leaf"))?;
        Ok((presented(vec![leaf.der().clone()], key)?, lifetime))
    }
}

/// The name constraint that permits `name`: a domain and those below it, or one address.
fn subtree(name: &str) -> GeneralSubtree {
    match name.parse::<IpAddr>() {
        Ok(address) => {
            let whole = if address.is_ipv4() { 32 } else { 128 };
            GeneralSubtree::IpAddress(CidrSubnet::from_addr_prefix(address, whole))
        }
        Err(_) => GeneralSubtree::DnsName(name.to_owned()),
    }
}

fn valid_for(params: &mut CertificateParams, life: Duration) {
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - BACKDATED;
    params.not_after = now + life;
}

/// Issues a new leaf (living `life`) when a third of the one in service's life is left, for as
/// long as the server runs; a leaf that cannot be issued is tried again a minute later.
async fn keep_renewed(
    root: PrivateRoot,
    names: Vec<String>,
    resolver: Arc<Swappable>,
    (mut serving, life): (Lifetime, Duration),
    ends: CancellationToken,
) {
    let mut due = serving.renew_at();
    while wait_until(due, &ends).await {
        match root.issue(&names, life) {
            Ok((leaf, lifetime)) => {
                resolver.swap(leaf.certified);
                serving = lifetime;
                // A clock far off could make every new leaf due at once; one a minute is plenty.
                due = serving.renew_at().max(SystemTime::now() + RETRY_AFTER);
                tracing::info!(until = %said(serving.not_after), "renewed the certificate from the private root");
            }
            Err(problem) => {
                tracing::warn!(%problem, "the private root could not renew the certificate; the one in service stays");
                due = SystemTime::now() + RETRY_AFTER;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(what: &str) -> std::path::PathBuf {
        let folder = std::env::temp_dir().join(format!(
            "lemonfiber-private-ca-{what}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&folder);
        folder
    }

    /// F13-R12: the root issues for the names it was made for and below, and for nothing else.
    #[test]
    fn a_name_outside_the_root_is_never_issued() {
        let state = folder("outside");
        let names = vec!["mcp.home.arpa".to_owned(), "192.168.1.4".to_owned()];
        let root = PrivateRoot::kept_or_made(&state, &names).expect("made");
        assert!(root.issue(&names, LEAF_LIFE).is_ok());
        assert!(
            root.issue(&["tv.mcp.home.arpa".to_owned()], LEAF_LIFE)
                .is_ok()
        );
        for outside in ["bank.example", "home.arpa", "xmcp.home.arpa", "192.168.1.5"] {
            assert!(
                matches!(root.issue(&[outside.to_owned()], LEAF_LIFE), Err(CertError::OutsideRoot(name)) if name == outside),
                "{outside}"
            );
        }
        let _ = std::fs::remove_dir_all(&state);
    }

    /// The leaf is renewed by itself, a third of its life before it ends.
    #[tokio::test]
    async fn the_leaf_is_renewed_with_a_third_of_its_life_left() {
        let state = folder("renewed");
        let names = vec!["mcp.home.arpa".to_owned()];
        let root = PrivateRoot::kept_or_made(&state, &names).expect("made");
        // Backdated by an hour, a leaf of an hour and a half is due for renewal at once.
        let life = Duration::from_secs(1800);
        let (first, lifetime) = root.issue(&names, life).expect("issued");
        assert!(lifetime.renew_at() <= SystemTime::now());
        let resolver = Swappable::new(first.certified.clone());
        let ends = CancellationToken::new();
        let renewing = tokio::spawn(keep_renewed(
            root,
            names,
            resolver.clone(),
            (lifetime, life),
            ends.clone(),
        ));
        let mut renewed = false;
        for _ in 0..100 {
            renewed =
                Fingerprint::of_certificate(&resolver.in_service().cert[0]) != first.fingerprint;
            if renewed {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        ends.cancel();
        renewing.await.expect("the renewal ends");
        assert!(renewed, "a new leaf is in service");
        let _ = std::fs::remove_dir_all(&state);
    }

    #[test]
    fn the_root_is_made_once_and_refuses_names_it_was_not_made_for() {
        let state = folder("kept");
        let names = vec!["mcp.home.arpa".to_owned()];
        let made = PrivateRoot::kept_or_made(&state, &names).expect("made");
        let kept = PrivateRoot::kept_or_made(&state, &names).expect("kept");
        assert_eq!(made.fingerprint, kept.fingerprint);
        let other = PrivateRoot::kept_or_made(&state, &["nas.home.arpa".to_owned()])
            .err()
            .expect("refused");
        assert!(other.to_string().contains("nas.home.arpa"), "{other}");
        #[cfg(unix)]
        {
            let mode = std::os::unix::fs::PermissionsExt::mode(
                &std::fs::metadata(state.join(ROOT_KEY_FILE))
                    .expect("key")
                    .permissions(),
            );
            assert_eq!(mode & 0o077, 0, "the root's key is its owner's alone");
        }
        let _ = std::fs::remove_dir_all(&state);
    }

    /// Issue 27: a root key others can read is refused, naming the file and how to mend it, as
    /// the sealing secret is; made its owner's alone again, it is used.
    #[cfg(unix)]
    #[test]
    fn a_root_key_open_to_others_is_refused_naming_the_file_and_the_mend() {
        use std::os::unix::fs::PermissionsExt as _;
        let state = folder("open");
        let names = vec!["mcp.home.arpa".to_owned()];
        let made = PrivateRoot::kept_or_made(&state, &names).expect("made");
        let key_file = state.join(ROOT_KEY_FILE);
        let set_mode = |mode| {
            std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(mode))
                .expect("the mode is set")
        };
        set_mode(0o644);
        let refused = PrivateRoot::kept_or_made(&state, &names)
            .err()
            .expect("refused");
        let said = refused.to_string();
        assert!(
            matches!(refused, CertError::KeyOpenToOthers(ref file, 0o644) if *file == key_file),
            "{said}"
        );
        assert!(
            said.contains(&format!("chmod 600 {}", key_file.display())),
            "{said}"
        );
        set_mode(0o600);
        let kept = PrivateRoot::kept_or_made(&state, &names).expect("kept");
        assert_eq!(made.fingerprint, kept.fingerprint);
        let _ = std::fs::remove_dir_all(&state);
    }
}
