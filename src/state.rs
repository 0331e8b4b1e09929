//! The state folder the HTTP mode keeps what it must remember in (its certificates, its ACME
//! account, the secret offers are sealed with): its owner's alone, 0700, and each file 0600,
//! written whole or not at all so that a crash or a reader never sees half of one.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// Makes `folder` (and what leads to it), and makes it its owner's alone (0700) if it was there
/// already and open to others.
pub fn make_folder(folder: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)?;
    let mode = std::fs::metadata(folder)?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The mode of `path` when others than its owner may read or write it: a file the server keeps
/// its secrets in that is not its owner's alone is one another user may have read (or put there).
pub fn open_to_others(path: &Path) -> std::io::Result<Option<u32>> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path)?.permissions().mode();
    Ok((mode & 0o077 != 0).then_some(mode & 0o7777))
}

/// Writes `bytes` to `path` whole or not at all, readable by its owner only: to a file beside
/// it of this writer's own (replicas may share the folder), flushed to disk, renamed over it,
/// and the rename itself flushed.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(std::io::Error::other)?;
    let partial = path.with_extension(format!("{}.partial", hex::encode(nonce)));
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&partial)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&partial, path)?;
        match path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => {
                std::fs::File::open(folder)?.sync_all()
            }
            _ => Ok(()),
        }
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })
}
