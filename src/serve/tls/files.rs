//! `files`: the operator's PEM chain and key, from whatever issues them (a public authority
//! through another tool, or the household's own). They are checked before they are served: the
//! key must be the certificate's, the certificate must cover the served names and be valid now.
//! A problem at start refuses to start, naming it; a problem with files replaced while serving
//! keeps the certificate in service and is logged.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest as _, Sha256};
use tokio_util::sync::CancellationToken;

use super::{
    CertError, Look, Presented, Started, Swappable, chain_in, keep_looking, key_in, servable,
};

pub(super) fn start(
    certificate: &Path,
    private_key: &Path,
    names: &[String],
    every: Duration,
    ends: &CancellationToken,
) -> Result<Started, CertError> {
    let files = OperatorFiles {
        certificate: certificate.to_owned(),
        private_key: private_key.to_owned(),
    };
    // Read before the files are loaded, so that a change while they are is loaded again.
    let mut seen = files.digest();
    let first = files.load(names)?;
    let resolver = Swappable::new(first.certified.clone());
    let names = names.to_vec();
    let source = certificate.display().to_string();
    let keeper = tokio::spawn(keep_looking(
        resolver.clone(),
        every,
        ends.clone(),
        source,
        move || {
            let now = files.digest();
            if now == seen {
                return Look::Unchanged;
            }
            let loaded = files.load(&names);
            if loaded.is_ok() {
                seen = now;
            }
            Look::Changed(loaded)
        },
    ));
    Ok(Started {
        first,
        resolver,
        trust_file: certificate.to_owned(),
        root_pem: None,
        root_fingerprint: None,
        keeper,
    })
}

struct OperatorFiles {
    certificate: PathBuf,
    private_key: PathBuf,
}

impl OperatorFiles {
    /// The chain and key, if they can be served for `names` now.
    fn load(&self, names: &[String]) -> Result<Presented, CertError> {
        let chain = chain_in(&self.certificate)?;
        let key = key_in(&self.private_key)?;
        let files = (self.certificate.as_path(), self.private_key.as_path());
        Ok(servable(chain, key, names, files)?.0)
    }

    /// What the two files hold now, to tell whether they changed; `None` if one cannot be read.
    fn digest(&self) -> Option<[u8; 32]> {
        let mut digest = Sha256::new();
        for file in [&self.certificate, &self.private_key] {
            digest.update(std::fs::read(file).ok()?);
        }
        Some(digest.finalize().into())
    }
}
