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
