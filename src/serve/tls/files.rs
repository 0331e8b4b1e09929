//! `files`: the operator's PEM chain and key, from whatever issues them (a public authority
//! through another tool, or the household's own). They are checked before they are served: the
//! key must be the certificate's, the certificate must cover the served names and be valid now.
//! A problem at start refuses to start, naming it; a problem with files replaced while serving
//! keeps the certificate in service and is logged.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sha2::{Digest as _, Sha256};
use tokio_util::sync::CancellationToken;

use super::inspect::{Lifetime, uncovered};
use super::{CertError, Presented, Started, Swappable, chain_in, key_in, presented};

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
    let first = files.load(names)?;
    let resolver = Swappable::new(first.certified.clone());
    tokio::spawn(keep_current(
        files,
        names.to_vec(),
        resolver.clone(),
        every,
        ends.clone(),
    ));
    Ok(Started {
        first,
        resolver,
        trust_file: certificate.to_owned(),
        root_pem: None,
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
        let leaf = chain[0].clone();
        let presented = presented(chain, key).map_err(|problem| match problem {
            CertError::Unusable(rustls::Error::InconsistentKeys(_)) => {
                CertError::KeyDoesNotMatch(self.certificate.clone(), self.private_key.clone())
            }
            other => other,
        })?;
        let missing = uncovered(&leaf, names);
        if !missing.is_empty() {
            return Err(CertError::NamesNotCovered(
                self.certificate.clone(),
                missing,
            ));
        }
        Lifetime::of(&leaf, &self.certificate)?.check(SystemTime::now(), &self.certificate)?;
        Ok(presented)
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

/// Serves the files again whenever they change, if they can be served; else keeps the
/// certificate in service and logs why, once per problem.
async fn keep_current(
    files: OperatorFiles,
    names: Vec<String>,
    resolver: Arc<Swappable>,
    every: Duration,
    ends: CancellationToken,
) {
    let mut seen = files.digest();
    let mut last_problem = None;
    loop {
        tokio::select! {
            () = ends.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        let now = files.digest();
        if now == seen {
            continue;
        }
        match files.load(&names) {
            Ok(presented) => {
                resolver.swap(presented.certified);
                seen = now;
                last_problem = None;
                tracing::info!(
                    fingerprint = %presented.fingerprint.to_hex(),
                    file = %files.certificate.display(),
                    "serving the replaced certificate"
                );
            }
            Err(problem) => {
                let said = problem.to_string();
                if last_problem.as_ref() != Some(&said) {
                    tracing::warn!(problem = %said, "the replaced certificate cannot be served; the one in service stays");
                }
                last_problem = Some(said);
            }
        }
    }
}
