//! The demo's integration keys, one for each scope, written to key files only their owner can read.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::DemoError;

/// The member whose key the demo mints.
pub const MEMBER: &str = "maya";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Read,
    Act,
    Member(String),
}

impl Scope {
    pub fn label(&self) -> String {
        match self {
            Scope::Read => "read".to_owned(),
            Scope::Act => "act".to_owned(),
            Scope::Member(account) => format!("member:{account}"),
        }
    }

    /// The scope as `GET /api/capabilities` names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Act => "act",
            Scope::Member(_) => "member",
        }
    }
}

pub struct DemoKey {
    pub scope: Scope,
    pub text: String,
    pub file: PathBuf,
}

/// One key file (0600) for each scope in `directory` (made 0700 if missing). A key file already
/// there is used again, so a demo restarted on the same folder admits the same keys.
pub fn keys_in(directory: &Path) -> Result<Vec<DemoKey>, DemoError> {
    if !directory.exists() {
        std::fs::DirBuilder::new()
            .mode(0o700)
            .recursive(true)
            .create(directory)
            .map_err(|source| DemoError::File {
                what: "make",
                path: directory.to_owned(),
                source,
            })?;
    }
    let mut keys = Vec::new();
    for scope in [Scope::Read, Scope::Act, Scope::Member(MEMBER.to_owned())] {
        let file = directory.join(format!("{}.key", scope.kind()));
        let kept = std::fs::read_to_string(&file)
            .ok()
            .map(|text| text.trim().to_owned());
        let text = match kept.filter(|text| crate::stack::credential::Key::parse(text).is_ok()) {
            Some(text) => text,
            None => {
                let text = format!("lfk_{}", random_hex(32)?);
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .open(&file)
                    .and_then(|mut handle| handle.write_all(format!("{text}\n").as_bytes()))
                    .map_err(|source| DemoError::File {
                        what: "write",
                        path: file.clone(),
                        source,
                    })?;
                text
            }
        };
        keys.push(DemoKey { scope, text, file });
    }
    Ok(keys)
}

/// A fresh folder in `parent` for a demo's keys.
pub fn fresh_directory(parent: &Path) -> Result<PathBuf, DemoError> {
    Ok(parent.join(format!("lemonfiber-demo-{}", random_hex(8)?)))
}

/// `bytes` random bytes as hex.
pub fn random_hex(bytes: usize) -> Result<String, getrandom::Error> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer)?;
    Ok(hex::encode(buffer))
}
