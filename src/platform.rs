//! What differs between operating systems, and nothing else: who may read the files and folders
//! the server keeps secrets in, making a rename durable, how the process is asked to stop, and
//! how a command the program suggests is typed into the platform's own shell.
//! Unix keeps a secret its owner's alone by mode (0600 files, 0700 folders). Windows keeps it by
//! the folder's inherited access list: a user's own profile folders, where the server keeps its
//! files by default (`crate::places`), are readable by that user and the system alone. This
//! server does not read Windows access lists, so there a file's privacy is not checked, and
//! `check` and docs/security.md say so.

// Each platform's file gives every one of these names, so a name missing on one fails its build.
#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{
    PRIVACY_CHECKED, close_to_others, command_line, make_owner_only_folders, open_to_others,
    others_may_replace_in, owner_only, stop_requested, sync_folder,
};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{
    PRIVACY_CHECKED, close_to_others, command_line, make_owner_only_folders, open_to_others,
    others_may_replace_in, owner_only, stop_requested, sync_folder,
};
