//! `lemonfiber-mcp unlink`: undoes `link` on this machine, by removing the config it wrote, so
//! that nothing here uses that key any more. The key itself is the stack's: it works there until
//! the operator revokes it, and the person is told so, since removing a file here cannot do that.

use std::path::PathBuf;

use crate::config::{self, ConfigError};

/// Why nothing was removed.
#[derive(Debug, thiserror::Error)]
pub enum UnlinkFailure {
    #[error(
        "there is no config folder where link would have kept a config: set {} or HOME",
        config::CONFIG
    )]
    NowhereKept,
    #[error(
        "there is no linked config at {path}, so nothing was removed (if link was run with {config} \
         set, set it to the same file for unlink)",
        path = .0.display(),
        config = config::CONFIG
    )]
    NothingLinked(PathBuf),
    #[error(
        "{path} is not a config lemonfiber-mcp link wrote, so it was left as it is",
        path = .0.display()
    )]
    NotLinked(PathBuf),
    #[error(transparent)]
    Config(ConfigError),
}

impl UnlinkFailure {
    /// Whether what was asked is at fault (the command line's exit 2).
    pub fn is_settings(&self) -> bool {
        !matches!(self, UnlinkFailure::Config(_))
    }
}

/// Removes the linked config (`LEMONFIBER_CONFIG`, or the per-user one) and says what that did
/// and did not do.
pub fn run() -> Result<(), UnlinkFailure> {
    let set = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|value| !value.trim().is_empty())
    };
    let path = config::config_path(&set).ok_or(UnlinkFailure::NowhereKept)?;
    let path = std::path::absolute(&path).unwrap_or(path);
    let unlinked = match config::remove_linked(&path) {
        Ok(Some(unlinked)) => unlinked,
        Ok(None) => return Err(UnlinkFailure::NothingLinked(path)),
        Err(ConfigError::ConfigMalformed(path)) => return Err(UnlinkFailure::NotLinked(path)),
        Err(error) => return Err(UnlinkFailure::Config(error)),
    };
    // Written by link from the stack's words, but the file is the person's to edit: one line each.
    let line = |text: &str| text.chars().filter(|c| !c.is_control()).collect::<String>();
    let (name, scope, address) = (
        line(&unlinked.name),
        line(&unlinked.scope),
        line(&unlinked.address),
    );
    println!(
        "Removed the linked config {}: nothing on this machine uses the key \"{name}\" (scope {scope}) \
         for the stack at {address} any more, and an assistant set up with that config will not \
         connect until you link again.",
        path.display()
    );
    println!(
        "The key itself still works on the stack until you revoke it there: on the stack, among its \
         integration keys, revoke the one named \"{name}\"."
    );
    Ok(())
}
