//! The demo's integration keys, one for each scope, written to key files only their owner can read.

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
    /// Whether it is the key an earlier run left in its file.
    pub kept: bool,
}

/// One key file (0600) for each scope in `directory`, which the caller has made the owner's
/// alone. A key file already there is used again, so that a demo restarted on the same folder
/// admits the same keys, unless `fresh` asks for new ones, or it is not a key, or others could
/// read it (whoever did holds the key, so it is replaced).
pub fn keys_in(directory: &Path, fresh: bool) -> Result<Vec<DemoKey>, DemoError> {
    let mut keys = Vec::new();
    for scope in [Scope::Read, Scope::Act, Scope::Member(MEMBER.to_owned())] {
        let file = directory.join(format!("{}.key", scope.kind()));
        let kept = (!fresh && matches!(crate::state::open_to_others(&file), Ok(None)))
            .then(|| std::fs::read_to_string(&file).ok())
            .flatten()
            .map(|text| text.trim().to_owned());
        let kept = kept.filter(|text| crate::stack::credential::Key::parse(text).is_ok());
        let was_kept = kept.is_some();
        let text = match kept {
            Some(text) => text,
            None => {
                let text = format!("lfk_{}", random_hex(32)?);
                crate::state::write_whole(&file, format!("{text}\n").as_bytes()).map_err(
                    |source| DemoError::File {
                        what: "write",
                        path: file.clone(),
                        source,
                    },
                )?;
                text
            }
        };
        keys.push(DemoKey {
            scope,
            text,
            file,
            kept: was_kept,
        });
    }
    Ok(keys)
}

/// `bytes` random bytes as hex.
pub fn random_hex(bytes: usize) -> Result<String, getrandom::Error> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer)?;
    Ok(hex::encode(buffer))
}
