//! A file only its owner may read or write, as a key or the linked config must be: one others
//! can read is as good as theirs.

/// Why a file that must be its owner's alone is not used.
pub(super) enum NotPrivate {
    Unreadable(std::io::ErrorKind),
    /// Others may read or write it: its mode.
    OpenToOthers(u32),
}

/// The text of `path`, if only its owner may read or write it.
pub(super) fn read_private(path: &std::path::Path) -> Result<String, NotPrivate> {
    let unreadable = |error: std::io::Error| NotPrivate::Unreadable(error.kind());
    if let Some(mode) = crate::state::open_to_others(path).map_err(unreadable)? {
        return Err(NotPrivate::OpenToOthers(mode));
    }
    std::fs::read_to_string(path).map_err(unreadable)
}
