//! The config file `lemonfiber-mcp link` writes (F13-R15): the stack's address and pin and the
//! key a key link brought, kept in the user's config folder (0700), the file 0600 and written
//! whole, so that `stdio` and `check` need nothing in the environment and no key sits in an
//! assistant's configuration.

use std::path::{Path, PathBuf};

use super::{ConfigError, stack_address};
use crate::fingerprint::Fingerprint;
use crate::stack::StackAddress;
use crate::stack::credential::Key;

pub const CONFIG: &str = "LEMONFIBER_CONFIG";
const FOLDER: &str = "lemonfiber-mcp";
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

/// Where the linked config is: `LEMONFIBER_CONFIG`, else `config.json` in
/// `$XDG_CONFIG_HOME/lemonfiber-mcp/` (or `~/.config/lemonfiber-mcp/`).
pub fn config_path(set: &impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(path) = set(CONFIG) {
        return Some(PathBuf::from(path.trim()));
    }
    let base = set("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|base| base.is_absolute())
        .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join(FOLDER).join(FILE))
}

/// The linked config at `path`, if only its owner can read it.
pub fn read_linked(path: &Path) -> Result<Linked, ConfigError> {
    use std::os::unix::fs::PermissionsExt as _;
    let unreadable =
        |error: std::io::Error| ConfigError::ConfigUnreadable(path.to_owned(), error.kind());
    let mode = std::fs::metadata(path)
        .map_err(unreadable)?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(ConfigError::ConfigOpenToOthers(
            path.to_owned(),
            mode & 0o7777,
        ));
    }
    let text = std::fs::read_to_string(path).map_err(unreadable)?;
    let written: Written =
        serde_json::from_str(&text).map_err(|_| ConfigError::ConfigMalformed(path.to_owned()))?;
    let address = stack_address(&written.address, Some(&written.pin))
        .map_err(|_| ConfigError::ConfigMalformed(path.to_owned()))?;
    let key =
        Key::parse(&written.key).map_err(|_| ConfigError::ConfigMalformed(path.to_owned()))?;
    Ok(Linked { address, key })
}

/// Writes `linked` to `path` whole, in a folder only its owner can enter, readable by its owner
/// only.
pub fn write_linked(
    path: &Path,
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
        .map_err(|_| ConfigError::ConfigMalformed(path.to_owned()))?;
    let not_written =
        |error: std::io::Error| ConfigError::ConfigNotWritten(path.to_owned(), error.kind());
    if let Some(folder) = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        crate::state::make_folder(folder).map_err(not_written)?;
    }
    crate::state::write_whole(path, format!("{text}\n").as_bytes()).map_err(not_written)
}
