//! The config file `lemonfiber-mcp link` writes (F13-R15): the stack's address and pin and the
//! key a key link brought, kept in the user's config folder (made 0700 if it is missing, left as
//! it is if it was there), the file 0600, made new and written whole, so that `stdio` and `check` need nothing in the environment and no key sits in an
//! assistant's configuration.

use std::path::{Path, PathBuf};

use super::private_file::{NotPrivate, read_private};
use super::{ConfigError, stack_address};
use crate::fingerprint::Fingerprint;
use crate::stack::StackAddress;
use crate::stack::credential::Key;
use crate::state::FolderRefused;

pub const CONFIG: &str = "LEMONFIBER_CONFIG";
const FILE: &str = "config.json";

/// A stack and a key, as linked.
#[derive(Debug)]
pub struct Linked {
    pub address: StackAddress,
    pub key: Key,
}

/// The file's form. The key's name and scope as the stack minted it are kept for the person
/// who opens the file.
#[derive(serde::Serialize, serde::Deserialize)]
struct Written {
    address: String,
    pin: String,
    key: String,
    name: String,
    scope: String,
}

/// Where the linked config is: `LEMONFIBER_CONFIG`, else `config.json` in the per-user config
/// folder ([`crate::places::config_folder`]).
pub fn config_path(set: &impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(path) = set(CONFIG) {
        return Some(PathBuf::from(path.trim()));
    }
    crate::places::config_folder(set).map(|folder| folder.join(FILE))
}

/// The linked config at `path`, if only its owner can read it.
pub fn read_linked(path: &Path) -> Result<Linked, ConfigError> {
    let text = read_private(path).map_err(|problem| match problem {
        NotPrivate::Unreadable(kind) => ConfigError::ConfigUnreadable(path.to_owned(), kind),
        NotPrivate::OpenToOthers(mode) => ConfigError::ConfigOpenToOthers(path.to_owned(), mode),
    })?;
    let written: Written =
        serde_json::from_str(&text).map_err(|_| ConfigError::ConfigMalformed(path.to_owned()))?;
    let address = stack_address(&written.address, Some(&written.pin))
        .map_err(|_| ConfigError::ConfigMalformed(path.to_owned()))?;
    let key =
        Key::parse(&written.key).map_err(|_| ConfigError::ConfigMalformed(path.to_owned()))?;
    Ok(Linked { address, key })
}

/// What a linked config held that was removed: for the person to know which key to revoke.
#[derive(Debug)]
pub struct Unlinked {
    pub address: String,
    pub name: String,
    pub scope: String,
}

/// Removes the linked config at `path`, if it is one `link` wrote (whoever may read it: one
/// others could read is all the more to be removed). `None` when there is none.
pub fn remove_linked(path: &Path) -> Result<Option<Unlinked>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(ConfigError::ConfigUnreadable(path.to_owned(), error.kind())),
    };
    let written: Written =
        serde_json::from_str(&text).map_err(|_| ConfigError::ConfigMalformed(path.to_owned()))?;
    std::fs::remove_file(path)
        .map_err(|error| ConfigError::ConfigNotWritten(path.to_owned(), error.kind()))?;
    Ok(Some(Unlinked {
        address: written.address,
        name: written.name,
        scope: written.scope,
    }))
}

/// The config file, taken for one link before its claim is spent: made empty and exclusively
/// (so two links at once cannot both write it, and a folder that cannot hold it is found before
/// the claim is spent), and removed again unless the link's key is written to it.
pub struct Reserved {
    path: PathBuf,
    written: bool,
    /// The folders made to hold it, taken away again with it when nothing is written.
    made: Vec<PathBuf>,
}

/// Takes `path` for a link: refused if a linked config is there already.
pub fn reserve(path: &Path) -> Result<Reserved, ConfigError> {
    let path = std::path::absolute(path)
        .map_err(|error| ConfigError::ConfigNotWritten(path.to_owned(), error.kind()))?;
    let not_written =
        |error: std::io::Error| ConfigError::ConfigNotWritten(path.clone(), error.kind());
    let made = match path.parent() {
        Some(folder) => {
            crate::state::make_missing_folder(folder).map_err(|refused| match refused {
                FolderRefused::Io(error) => not_written(error),
                FolderRefused::OthersMayReplace(mode) => {
                    ConfigError::ConfigFolderShared(folder.to_owned(), mode)
                }
            })?
        }
        None => Vec::new(),
    };
    let opened =
        crate::platform::owner_only(std::fs::OpenOptions::new().write(true).create_new(true))
            .open(&path);
    if opened.is_err() {
        crate::state::remove_made_folders(&made);
    }
    match opened {
        Ok(_) => Ok(Reserved {
            path,
            written: false,
            made,
        }),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(ConfigError::AlreadyLinked(path))
        }
        Err(error) => Err(not_written(error)),
    }
}

impl Reserved {
    /// Where the config is, as an absolute path an assistant started anywhere can find.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the linked stack and key, whole, readable by its owner only.
    pub fn write(
        mut self,
        address: &str,
        pin: Fingerprint,
        key: &Key,
        (name, scope): (&str, &str),
    ) -> Result<(), ConfigError> {
        let written = Written {
            address: address.to_owned(),
            pin: pin.to_hex(),
            key: key.expose_for_keeping().to_owned(),
            name: name.to_owned(),
            scope: scope.to_owned(),
        };
        let text = serde_json::to_string_pretty(&written)
            .map_err(|_| ConfigError::ConfigMalformed(self.path.clone()))?;
        crate::state::write_whole(&self.path, format!("{text}\n").as_bytes())
            .map_err(|error| ConfigError::ConfigNotWritten(self.path.clone(), error.kind()))?;
        self.written = true;
        Ok(())
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        if !self.written {
            let _ = std::fs::remove_file(&self.path);
            crate::state::remove_made_folders(&self.made);
        }
    }
}
