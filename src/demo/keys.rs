//! The demo's integration keys, one for each scope, written to key files only their owner can read.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

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

/// A fresh directory (0700) holding one key file (0600) for each scope.
pub fn mint(directory_hint: &Path) -> Result<(PathBuf, Vec<DemoKey>), String> {
    let directory = directory_hint.join(format!("lemonfiber-demo-{}", random_hex(8)?));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&directory)
        .map_err(|error| format!("cannot make {}: {error}", directory.display()))?;
    let mut keys = Vec::new();
    for scope in [Scope::Read, Scope::Act, Scope::Member(MEMBER.to_owned())] {
        let text = format!("lfk_{}", random_hex(32)?);
        let file = directory.join(format!("{}.key", scope.kind()));
        let mut handle = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&file)
            .map_err(|error| format!("cannot write {}: {error}", file.display()))?;
        handle
            .write_all(format!("{text}\n").as_bytes())
            .map_err(|error| format!("cannot write {}: {error}", file.display()))?;
        keys.push(DemoKey { scope, text, file });
    }
    Ok((directory, keys))
}

fn random_hex(bytes: usize) -> Result<String, String> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer)
        .map_err(|error| format!("no randomness for the demo's keys: {error}"))?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}
