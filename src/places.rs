//! The per-user folders the program keeps things in when no setting names a place: so that
//! where something lands does not depend on the folder a command happened to be run from, and a
//! second run finds what the first one kept. The one place those folders are worked out, so that
//! another platform's convention is added here and nowhere else.

use std::path::PathBuf;

/// The program's own name for its folder inside each per-user folder.
const OURS: &str = "lemonfiber-mcp";

/// Where settings the user writes (or `link` writes for them) live:
/// `$XDG_CONFIG_HOME/lemonfiber-mcp` (or `~/.config/lemonfiber-mcp`), and on Windows
/// `%APPDATA%\lemonfiber-mcp`.
pub fn config_folder(set: &impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    user_folder(set, "XDG_CONFIG_HOME", ".config", "APPDATA")
}

/// Where what the program made for itself and must find again lives (certificates, the demo's
/// keys): `$XDG_STATE_HOME/lemonfiber-mcp` (or `~/.local/state/lemonfiber-mcp`), and on Windows
/// `%LOCALAPPDATA%\lemonfiber-mcp`.
pub fn state_folder(set: &impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    user_folder(set, "XDG_STATE_HOME", ".local/state", "LOCALAPPDATA")
}

/// The operating systems whose conventions for per-user folders differ, as far as the folders
/// worked out here go. Other Unix systems follow Linux's (the XDG base directories).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    Mac,
    Windows,
}

impl Os {
    /// The system this program was built for.
    pub const fn this() -> Os {
        if cfg!(target_os = "macos") {
            Os::Mac
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// The user's home folder, as Node.js (and so the assistants written in it) finds it: `HOME`,
/// and on Windows `USERPROFILE` first.
pub fn home_folder(os: Os, set: &impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let absolute = |name: &str| absolute_folder(set, name);
    match os {
        Os::Windows => absolute("USERPROFILE").or_else(|| absolute("HOME")),
        Os::Linux | Os::Mac => absolute("HOME"),
    }
}

/// The folder a desktop application built on Electron (Claude Desktop, VS Code) keeps the
/// settings of `application` in: `~/Library/Application Support/<application>` on macOS,
/// `%APPDATA%\<application>` on Windows, and elsewhere `$XDG_CONFIG_HOME/<application>` (or
/// `~/.config/<application>`).
pub fn application_folder(
    os: Os,
    set: &impl Fn(&str) -> Option<String>,
    application: &str,
) -> Option<PathBuf> {
    let base = match os {
        Os::Mac => home_folder(os, set).map(|home| home.join("Library/Application Support")),
        Os::Windows => absolute_folder(set, "APPDATA"),
        Os::Linux => absolute_folder(set, "XDG_CONFIG_HOME")
            .or_else(|| home_folder(os, set).map(|home| home.join(".config"))),
    };
    base.map(|base| base.join(application))
}

/// The folder the setting `name` names, when it is absolute: a relative one would be taken from
/// whichever folder the command was run in.
fn absolute_folder(set: &impl Fn(&str) -> Option<String>, name: &str) -> Option<PathBuf> {
    set(name)
        .map(PathBuf::from)
        .filter(|folder| folder.is_absolute())
}

/// The XDG base directory `xdg` names when it is absolute (the specification says a relative
/// one is to be ignored), else `home_relative` under `HOME`, else the Windows folder `windows`.
fn user_folder(
    set: &impl Fn(&str) -> Option<String>,
    xdg: &str,
    home_relative: &str,
    windows: &str,
) -> Option<PathBuf> {
    let absolute = |name: &str| absolute_folder(set, name);
    absolute(xdg)
        .or_else(|| absolute("HOME").map(|home| home.join(home_relative)))
        .or_else(|| absolute(windows))
        .map(|base| base.join(OURS))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Settings as a lookup, the way the functions here take the environment.
    pub(crate) fn from(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(set, _)| *set == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    // The paths are Unix ones, which Windows does not count as absolute.
    #[cfg(unix)]
    #[test]
    fn the_xdg_folder_comes_first_and_a_relative_one_is_ignored() {
        let set = from(&[("XDG_STATE_HOME", "/x/state"), ("HOME", "/home/ann")]);
        assert_eq!(
            state_folder(&set),
            Some(PathBuf::from("/x/state/lemonfiber-mcp"))
        );
        let set = from(&[("XDG_STATE_HOME", "state"), ("HOME", "/home/ann")]);
        assert_eq!(
            state_folder(&set),
            Some(PathBuf::from("/home/ann/.local/state/lemonfiber-mcp"))
        );
        let set = from(&[("HOME", "/home/ann")]);
        assert_eq!(
            config_folder(&set),
            Some(PathBuf::from("/home/ann/.config/lemonfiber-mcp"))
        );
    }

    /// Issue 30: with no XDG folder and no `HOME`, as on Windows, the profile's own folders.
    #[cfg(windows)]
    #[test]
    fn on_windows_the_profiles_own_folders_are_used() {
        let set = from(&[
            ("APPDATA", r"C:\Users\ann\AppData\Roaming"),
            ("LOCALAPPDATA", r"C:\Users\ann\AppData\Local"),
        ]);
        assert_eq!(
            config_folder(&set),
            Some(PathBuf::from(
                r"C:\Users\ann\AppData\Roaming\lemonfiber-mcp"
            ))
        );
        assert_eq!(
            state_folder(&set),
            Some(PathBuf::from(r"C:\Users\ann\AppData\Local\lemonfiber-mcp"))
        );
    }

    /// Issue 30: the folders the assistants keep their settings in, by each system's convention.
    #[cfg(unix)]
    #[test]
    fn an_applications_folder_follows_its_systems_convention() {
        let set = from(&[("HOME", "/home/ann"), ("XDG_CONFIG_HOME", "/x/config")]);
        assert_eq!(
            application_folder(Os::Linux, &set, "Claude"),
            Some(PathBuf::from("/x/config/Claude"))
        );
        assert_eq!(
            application_folder(Os::Mac, &set, "Code/User"),
            Some(PathBuf::from(
                "/home/ann/Library/Application Support/Code/User"
            ))
        );
        let set = from(&[("HOME", "/home/ann"), ("XDG_CONFIG_HOME", "config")]);
        assert_eq!(
            application_folder(Os::Linux, &set, "Claude"),
            Some(PathBuf::from("/home/ann/.config/Claude"))
        );
        assert_eq!(
            home_folder(Os::Linux, &set),
            Some(PathBuf::from("/home/ann"))
        );
        let set = from(&[("HOME", "/home/ann"), ("USERPROFILE", "/profile/ann")]);
        assert_eq!(
            home_folder(Os::Windows, &set),
            Some(PathBuf::from("/profile/ann"))
        );
        assert_eq!(application_folder(Os::Windows, &set, "Claude"), None);
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_an_applications_folder_is_in_the_roaming_profile() {
        let set = from(&[
            ("APPDATA", r"C:\Users\ann\AppData\Roaming"),
            ("USERPROFILE", r"C:\Users\ann"),
        ]);
        assert_eq!(
            application_folder(Os::Windows, &set, "Claude"),
            Some(PathBuf::from(r"C:\Users\ann\AppData\Roaming\Claude"))
        );
        assert_eq!(
            home_folder(Os::Windows, &set),
            Some(PathBuf::from(r"C:\Users\ann"))
        );
    }

    #[test]
    fn with_no_home_there_is_no_folder_rather_than_one_under_the_current_folder() {
        assert_eq!(state_folder(&from(&[("HOME", "relative")])), None);
        assert_eq!(config_folder(&from(&[])), None);
    }
}
