//! Unix: secrets kept by mode.

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

/// Whether [`open_to_others`] answers what it was asked; on Unix it reads the mode.
pub const PRIVACY_CHECKED: bool = true;

/// A new file made with `options` is readable and writable by its owner alone (0600).
pub fn owner_only(options: &mut OpenOptions) -> &mut OpenOptions {
    options.mode(0o600)
}

/// Makes `folder` and what leads to it, each new one its owner's alone (0700).
pub fn make_owner_only_folders(folder: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(folder)
}

/// Makes `folder` its owner's alone (0700) if others may read, write or enter it.
pub fn close_to_others(folder: &Path) -> std::io::Result<()> {
    if std::fs::metadata(folder)?.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(folder, Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The mode of `path` when others than its owner may read or write it.
pub fn open_to_others(path: &Path) -> std::io::Result<Option<u32>> {
    let mode = std::fs::metadata(path)?.permissions().mode();
    Ok((mode & 0o077 != 0).then_some(mode & 0o7777))
}

/// The mode of `folder` when others may replace what is in it: they may write to it, and
/// without the sticky bit they may rename or remove another's file.
pub fn others_may_replace_in(folder: &Path) -> std::io::Result<Option<u32>> {
    const OTHERS_WRITE: u32 = 0o022;
    const STICKY: u32 = 0o1000;
    let mode = std::fs::metadata(folder)?.permissions().mode() & 0o7777;
    Ok((mode & OTHERS_WRITE != 0 && mode & STICKY == 0).then_some(mode))
}

/// Flushes `folder`'s own entry list to disk, so that a rename in it survives a crash.
pub fn sync_folder(folder: &Path) -> std::io::Result<()> {
    std::fs::File::open(folder)?.sync_all()
}

/// Waits until the process is asked to stop: Ctrl-C, or SIGTERM (as a service manager or a
/// container runtime asks).
pub async fn stop_requested() {
    let interrupt = tokio::signal::ctrl_c();
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = interrupt => {}
                _ = terminate.recv() => {}
            }
        }
        Err(_) => {
            let _ = interrupt.await;
        }
    }
}

/// The command a person types into their shell (a POSIX one) to run `words` with the setting
/// `name` given `value` for that one command.
pub fn command_line(setting: Option<(&str, &str)>, words: &[&str]) -> String {
    let words = words.iter().map(|word| shell_word(word));
    setting
        .map(|(name, value)| format!("{name}={}", shell_word(value)))
        .into_iter()
        .chain(words)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` as one word to a POSIX shell: as it is when nothing in it is special, else in single
/// quotes (a single quote in it closed, escaped and opened again).
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@%=".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_a_space_or_quote_is_one_word_to_the_shell() {
        assert_eq!(shell_word("/home/ann/c.json"), "/home/ann/c.json");
        assert_eq!(shell_word("/home/a n/c.json"), "'/home/a n/c.json'");
        assert_eq!(shell_word("/it's"), r"'/it'\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn a_setting_is_given_for_the_one_command() {
        assert_eq!(
            command_line(
                Some(("LEMONFIBER_CONFIG", "/a b/c.json")),
                &["/bin/lf", "check"]
            ),
            "LEMONFIBER_CONFIG='/a b/c.json' /bin/lf check"
        );
        assert_eq!(command_line(None, &["/bin/lf", "check"]), "/bin/lf check");
    }
}
