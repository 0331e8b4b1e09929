//! The state folder the HTTP mode keeps what it must remember in (its certificates, its ACME
//! account, the secret offers are sealed with): its owner's alone (0700, each file 0600, on Unix;
//! see [`crate::platform`] for Windows), each file written whole or not at all so that a crash or
//! a reader never sees half of one. And the folder `link` keeps its config in, which may be
//! anyone's (see [`make_missing_folder`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::platform;

pub use platform::open_to_others;

/// Makes `folder` (and what leads to it), and makes it its owner's alone (0700) if it was there
/// already and open to others.
pub fn make_folder(folder: &Path) -> std::io::Result<()> {
    platform::make_owner_only_folders(folder)?;
    platform::close_to_others(folder)
}

/// Why a folder is not one to keep a secret in.
#[derive(Debug, thiserror::Error)]
pub enum FolderRefused {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Others may write to it, and without the sticky bit they may replace what is in it.
    #[error("others can write to it (mode {0:04o})")]
    OthersMayReplace(u32),
}

/// Makes what is missing of `folder` (0700: the program's own), and leaves a folder that was
/// there already as it is, since it may be shared (a 1777 folder, the target of a symlink) and
/// its mode is not this program's to change. One that others may write to without the sticky
/// bit is refused: they could replace the file kept in it. Answers the folders it made, the
/// innermost last, so that a caller that ends up keeping nothing can take them away again.
pub fn make_missing_folder(folder: &Path) -> Result<Vec<PathBuf>, FolderRefused> {
    let mut missing: Vec<PathBuf> = folder
        .ancestors()
        .take_while(|ancestor| {
            !ancestor.as_os_str().is_empty() && std::fs::symlink_metadata(ancestor).is_err()
        })
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    platform::make_owner_only_folders(folder)?;
    if let Some(mode) = platform::others_may_replace_in(folder)? {
        return Err(FolderRefused::OthersMayReplace(mode));
    }
    Ok(missing)
}

/// Takes away `made` (as [`make_missing_folder`] answered it), innermost first, each only if it
/// is empty: whatever someone else has put in one since is left, and the folders around it.
pub fn remove_made_folders(made: &[PathBuf]) {
    for folder in made.iter().rev() {
        if std::fs::remove_dir(folder).is_err() {
            return;
        }
    }
}

/// Writes `bytes` to `path` whole or not at all, readable by its owner only: to a file beside
/// it of this writer's own (replicas may share the folder), flushed to disk, renamed over it,
/// and the rename itself flushed.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_whole_as(path, bytes, None)
}

/// As [`write_whole`], but the file is given `permissions` (those of the file it replaces, say)
/// before it takes `path`'s place, rather than being its owner's alone.
pub fn write_whole_keeping(
    path: &Path,
    bytes: &[u8],
    permissions: std::fs::Permissions,
) -> std::io::Result<()> {
    write_whole_as(path, bytes, Some(permissions))
}

fn write_whole_as(
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(std::io::Error::other)?;
    let partial = path.with_extension(format!("{}.partial", hex::encode(nonce)));
    let write = || -> std::io::Result<()> {
        // Made new, so that nothing another user put at its name (a symlink) is followed: in a
        // shared folder the name is theirs to take too.
        let mut file =
            platform::owner_only(std::fs::OpenOptions::new().write(true).create_new(true))
                .open(&partial)?;
        file.write_all(bytes)?;
        if let Some(permissions) = &permissions {
            file.set_permissions(permissions.clone())?;
        }
        file.sync_all()?;
        std::fs::rename(&partial, path)?;
        match path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => platform::sync_folder(folder),
            _ => Ok(()),
        }
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("there").permissions().mode() & 0o7777
    }

    /// Issue 27, item 5: only what is missing is made; a folder that was there keeps its mode
    /// and sticky bit, through a symlink too, and one others may replace files in is refused.
    #[test]
    fn only_a_missing_folder_is_made_and_one_that_was_there_is_left_as_it_is() {
        let scratch =
            std::env::temp_dir().join(format!("lemonfiber-folders-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).expect("scratch");
        let made = scratch.join("made/inner");
        let folders = make_missing_folder(&made).expect("made");
        assert_eq!(folders, [scratch.join("made"), made.clone()]);
        assert_eq!(mode(&made), 0o700);
        remove_made_folders(&folders);
        assert!(!scratch.join("made").exists() && scratch.exists());
        make_missing_folder(&made).expect("made again");

        let shared = scratch.join("shared");
        std::fs::create_dir(&shared).expect("shared");
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        let through = scratch.join("through");
        std::os::unix::fs::symlink(&shared, &through).expect("symlink");
        for folder in [&shared, &through] {
            make_missing_folder(folder).expect("a sticky folder is used as it is");
            assert_eq!(mode(&shared), 0o1777);
        }
        let open = scratch.join("open");
        std::fs::create_dir(&open).expect("open");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        make_missing_folder(&open).expect("readable by others is the owner's choice");
        assert_eq!(mode(&open), 0o755);
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert!(matches!(
            make_missing_folder(&open),
            Err(FolderRefused::OthersMayReplace(0o777))
        ));
        assert_eq!(mode(&open), 0o777);
        let _ = std::fs::remove_dir_all(&scratch);
    }
}
