//! Windows: secrets kept by the access list a new file or folder inherits from its folder.

use std::fs::OpenOptions;
use std::path::Path;

/// Whether [`open_to_others`] answers what it was asked; on Windows it does not read access lists.
pub const PRIVACY_CHECKED: bool = false;

/// A new file made with `options` takes its folder's access list, as Windows gives it.
pub fn owner_only(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}

/// Makes `folder` and what leads to it, each taking its parent's access list.
pub fn make_owner_only_folders(folder: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(folder)
}

/// Leaves `folder`'s access list as it is: this server does not change access lists.
pub fn close_to_others(_folder: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Not checked on Windows (see [`PRIVACY_CHECKED`]): answers that `path` is there.
pub fn open_to_others(path: &Path) -> std::io::Result<Option<u32>> {
    std::fs::metadata(path).map(|_| None)
}

/// Not checked on Windows (see [`PRIVACY_CHECKED`]): answers that `folder` is there.
pub fn others_may_replace_in(folder: &Path) -> std::io::Result<Option<u32>> {
    std::fs::metadata(folder).map(|_| None)
}

/// Nothing to do: NTFS journals a rename, and a folder cannot be opened as a file to flush it.
pub fn sync_folder(_folder: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Waits until the process is asked to stop: Ctrl-C, Ctrl-Break, its console closing, or
/// Windows shutting down.
pub async fn stop_requested() {
    use tokio::signal::windows;
    let interrupt = tokio::signal::ctrl_c();
    match (
        windows::ctrl_break(),
        windows::ctrl_close(),
        windows::ctrl_shutdown(),
    ) {
        (Ok(mut broken_off), Ok(mut closed), Ok(mut shutting_down)) => {
            tokio::select! {
                _ = interrupt => {}
                _ = broken_off.recv() => {}
                _ = closed.recv() => {}
                _ = shutting_down.recv() => {}
            }
        }
        _ => {
            let _ = interrupt.await;
        }
    }
}
