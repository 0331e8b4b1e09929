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

/// The command a person types into PowerShell (Windows' own terminal opens it) to run `words`
/// with the setting `name` given `value`. PowerShell has no setting for one command alone, so
/// the setting stays for the rest of that window; and a program named in quotes is run with `&`,
/// since PowerShell would otherwise take it as a string.
pub fn command_line(setting: Option<(&str, &str)>, words: &[&str]) -> String {
    let mut line = setting
        .map(|(name, value)| format!("$env:{name} = {}; ", single_quoted(value)))
        .unwrap_or_default();
    let mut words = words.iter();
    if let Some(program) = words.next() {
        if is_plain(program) {
            line.push_str(program);
        } else {
            line.push_str("& ");
            line.push_str(&single_quoted(program));
        }
    }
    for word in words {
        line.push(' ');
        line.push_str(&if is_plain(word) {
            (*word).to_owned()
        } else {
            single_quoted(word)
        });
    }
    line
}

fn is_plain(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || r"\/._-:".contains(c))
}

/// `text` as one literal PowerShell string: in single quotes, each of its own doubled (PowerShell
/// also closes a string at the typographic single quotes, so those are doubled too).
fn single_quoted(text: &str) -> String {
    let mut quoted = String::from("'");
    for c in text.chars() {
        if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}') {
            quoted.push(c);
        }
        quoted.push(c);
    }
    quoted.push('\'');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_in_a_folder_with_a_space_is_run_with_an_ampersand() {
        assert_eq!(
            command_line(None, &[r"C:\Program Files\lf\lemonfiber-mcp.exe", "check"]),
            r"& 'C:\Program Files\lf\lemonfiber-mcp.exe' check"
        );
        assert_eq!(
            command_line(None, &[r"C:\lf\lemonfiber-mcp.exe", "check"]),
            r"C:\lf\lemonfiber-mcp.exe check"
        );
    }

    #[test]
    fn a_setting_is_given_before_the_command_and_quotes_in_it_are_doubled() {
        assert_eq!(
            command_line(
                Some(("LEMONFIBER_CONFIG", r"C:\Users\Ann O'Neil\lf.json")),
                &[r"C:\lf\lemonfiber-mcp.exe", "check"]
            ),
            r"$env:LEMONFIBER_CONFIG = 'C:\Users\Ann O''Neil\lf.json'; C:\lf\lemonfiber-mcp.exe check"
        );
        assert_eq!(single_quoted("a\u{2019}b"), "'a\u{2019}\u{2019}b'");
    }
}
