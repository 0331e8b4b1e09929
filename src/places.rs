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

/// The XDG base directory `xdg` names when it is absolute (the specification says a relative
/// one is to be ignored), else `home_relative` under `HOME`, else the Windows folder `windows`.
fn user_folder(
    set: &impl Fn(&str) -> Option<String>,
    xdg: &str,
    home_relative: &str,
    windows: &str,
) -> Option<PathBuf> {
    let absolute = |name: &str| {
        set(name)
            .map(PathBuf::from)
            .filter(|folder| folder.is_absolute())
    };
    absolute(xdg)
        .or_else(|| absolute("HOME").map(|home| home.join(home_relative)))
        .or_else(|| absolute(windows))
        .map(|base| base.join(OURS))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
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

    #[test]
    fn with_no_home_there_is_no_folder_rather_than_one_under_the_current_folder() {
        assert_eq!(state_folder(&from(&[("HOME", "relative")])), None);
        assert_eq!(config_folder(&from(&[])), None);
    }
}
