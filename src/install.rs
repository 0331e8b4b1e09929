//! `lemonfiber-mcp install <client>`: adds lemonfiber to a desktop assistant's own MCP
//! configuration, as one entry that runs this program with the config `link` wrote, so that the
//! key stays in that file and never enters the assistant's. Everything else in the assistant's
//! file is left byte for byte as it was (its other servers, its settings, and its comments and
//! layout where it has them): the entry is found and changed in place by a reader that keeps
//! where things are ([`jsonc`]), and the file is never read into a value and written out again.
//! A file that does not read is refused, by line, and nothing is written. Before a file is
//! replaced it is kept beside itself as `<file>.lemonfiber-backup`.

use std::path::{Path, PathBuf};

use crate::config::{self, ConfigError};
use crate::places::Os;

mod client;
mod edit;
mod jsonc;
mod render;

pub use client::Client;
use edit::{Change, Level, Planned, Refused, Target};
use render::{Layout, Written};

/// The name of the one entry `install` writes.
pub const ENTRY: &str = "lemonfiber";
/// What is added to a file's name for its backup.
const BACKUP: &str = "lemonfiber-backup";
/// How many times a file that changed while it was being read is read again.
const READINGS: usize = 3;

/// Why nothing was written. Names files and lines, never what the files hold.
#[derive(Debug, thiserror::Error)]
pub enum InstallFailure {
    #[error(
        "there is no config folder where link would have kept a config: set {} or HOME",
        config::CONFIG
    )]
    NowhereLinked,
    #[error(
        "there is no linked config at {path} for {client} to use, so nothing was written: run \
         lemonfiber-mcp link with the key link the stack gave you first (if link was run with {config} \
         set, set it to the same file for install)",
        path = .0.display(),
        client = .1,
        config = config::CONFIG
    )]
    NothingLinked(PathBuf, &'static str),
    #[error("{0}; nothing was written")]
    Linked(ConfigError),
    #[error("there is no folder to find {0}'s configuration in: set {1}")]
    NoFolder(&'static str, &'static str),
    #[error("{path} cannot be read ({1}), so nothing was written", path = .0.display())]
    Unreadable(PathBuf, std::io::ErrorKind),
    #[error(
        "{path} does not read as {dialect}, at line {line}, column {column}: {what}. Nothing was written: \
         fix the file (or move it aside) and run install again",
        path = .path.display()
    )]
    Malformed {
        path: PathBuf,
        dialect: &'static str,
        line: usize,
        column: usize,
        what: &'static str,
    },
    #[error(
        "{path}, line {line}, column {column}: {what} is not an object, so install cannot add an entry \
         to it. Nothing was written",
        path = .path.display()
    )]
    NotAnObject {
        path: PathBuf,
        what: String,
        line: usize,
        column: usize,
    },
    #[error(
        "{path} names \"{key}\" twice in one object ({lines}), and which of the two {client} uses is not \
         for install to guess. Nothing was written: keep one and run install again",
        path = .path.display()
    )]
    Twice {
        path: PathBuf,
        client: &'static str,
        key: String,
        /// The line or lines it is named on.
        lines: String,
    },
    #[error(
        "the change install worked out for {path} did not check out ({1}), so nothing was written. This is \
         a fault in install; add the entry link printed by hand instead",
        path = .0.display()
    )]
    Unverified(PathBuf, &'static str),
    #[error(
        "{path} kept changing while install read it ({1} may be writing it), so nothing was written: \
         quit {1} and run install again",
        path = .0.display()
    )]
    KeptChanging(PathBuf, &'static str),
    #[error(
        "the backup {path} could not be written ({1}), so {file} was left as it was",
        path = .0.display(),
        file = .2.display()
    )]
    BackupNotWritten(PathBuf, std::io::ErrorKind, PathBuf),
    #[error(
        "{path} could not be written ({1}); it is as it was",
        path = .0.display()
    )]
    NotWritten(PathBuf, std::io::ErrorKind),
}

impl InstallFailure {
    /// Whether what was asked, or a file it names, is at fault (the command line's exit 2).
    pub fn is_settings(&self) -> bool {
        matches!(
            self,
            InstallFailure::NowhereLinked
                | InstallFailure::NothingLinked(..)
                | InstallFailure::Linked(_)
                | InstallFailure::NoFolder(..)
                | InstallFailure::Malformed { .. }
                | InstallFailure::NotAnObject { .. }
                | InstallFailure::Twice { .. }
        )
    }
}

/// This program, as an assistant (or a person) would start it again.
pub fn program() -> String {
    std::env::current_exe().map_or_else(
        |_| "lemonfiber-mcp".to_owned(),
        |path| path.display().to_string(),
    )
}

/// The entry a desktop assistant is given to start this program with the linked config at
/// `config`, as Claude Desktop takes it (what `link` prints).
pub fn desktop_entry(program: &str, config: &str) -> serde_json::Value {
    Client::ClaudeDesktop.entry(program, config).to_value()
}

/// Adds the lemonfiber entry to `client`'s configuration, or with `print` says what it would
/// write and writes nothing.
pub fn run(client: Client, print: bool) -> Result<(), InstallFailure> {
    let set = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|value| !value.trim().is_empty())
    };
    let linked = config::config_path(&set).ok_or(InstallFailure::NowhereLinked)?;
    let linked = std::path::absolute(&linked).unwrap_or(linked);
    match config::read_linked(&linked) {
        Ok(_) => {}
        Err(ConfigError::ConfigUnreadable(_, std::io::ErrorKind::NotFound)) => {
            return Err(InstallFailure::NothingLinked(linked, client.name()));
        }
        Err(error) => return Err(InstallFailure::Linked(error)),
    }
    let os = Os::this();
    let file = client.file(os, &set).ok_or(InstallFailure::NoFolder(
        client.name(),
        client.folder_settings(os),
    ))?;
    let file = std::path::absolute(&file).unwrap_or(file);
    // A file kept elsewhere and linked to (as dotfiles often are) is changed where it is, and
    // the link is left a link.
    let file = match std::fs::symlink_metadata(&file) {
        Ok(metadata) if metadata.file_type().is_symlink() => std::fs::canonicalize(&file)
            .map_err(|error| InstallFailure::Unreadable(file.clone(), error.kind()))?,
        _ => file,
    };
    let entry = client.entry(&program(), &linked.display().to_string());
    let target = Target {
        servers: client.servers_key(),
        name: ENTRY,
        entry: &entry,
        dialect: client.dialect(),
    };
    for _ in 0..READINGS {
        let old = read(&file)?;
        let text = text_of(&file, old.as_deref(), target)?;
        let (change, edits) = match plan(&file, text, client, target)? {
            Planned::Same { at } => {
                let (line, _) = jsonc::line_and_column(text, at);
                println!(
                    "{}'s configuration {} has this lemonfiber entry already (line {line}), so nothing was \
                     changed.",
                    client.name(),
                    file.display()
                );
                return Ok(());
            }
            Planned::Edits { change, edits } => (change, edits),
        };
        let new = edit::apply(text, &edits);
        let at = edit::check(text, &new, &edits, target)
            .map_err(|unverified| InstallFailure::Unverified(file.clone(), unverified.0))?;
        let (line, _) = jsonc::line_and_column(&new, at);
        if print {
            print_plan(client, &file, change, line, &entry);
            return Ok(());
        }
        if let Some(old) = &old {
            let backup = backup_of(&file);
            crate::state::write_whole(&backup, old).map_err(|error| {
                InstallFailure::BackupNotWritten(backup.clone(), error.kind(), file.clone())
            })?;
        }
        // The assistant may have written its file since it was read (Claude Code writes its own
        // often): then it is read again, and nothing it wrote is lost.
        if read(&file)? != old {
            continue;
        }
        write(&file, old.is_some(), new.as_bytes())?;
        print_done(client, &file, change, line, old.is_some());
        return Ok(());
    }
    Err(InstallFailure::KeptChanging(file, client.name()))
}

/// The file's bytes, or `None` when there is no file.
fn read(file: &Path) -> Result<Option<Vec<u8>>, InstallFailure> {
    match std::fs::read(file) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(InstallFailure::Unreadable(file.to_owned(), error.kind())),
    }
}

/// The file's text (empty where there is no file); refused, by line, when it is not UTF-8.
fn text_of<'a>(
    file: &Path,
    bytes: Option<&'a [u8]>,
    target: Target,
) -> Result<&'a str, InstallFailure> {
    let bytes = bytes.unwrap_or_default();
    std::str::from_utf8(bytes).map_err(|error| {
        let before = String::from_utf8_lossy(&bytes[..error.valid_up_to()]);
        let (line, column) = jsonc::line_and_column(&before, before.len());
        InstallFailure::Malformed {
            path: file.to_owned(),
            dialect: dialect_name(target),
            line,
            column,
            what: "bytes that are not UTF-8 text",
        }
    })
}

fn dialect_name(target: Target) -> &'static str {
    match target.dialect {
        jsonc::Dialect::Strict => "JSON",
        jsonc::Dialect::WithComments => "JSON with comments",
    }
}

/// The edits `text` needs, its refusals named by file and line.
fn plan(
    file: &Path,
    text: &str,
    client: Client,
    target: Target,
) -> Result<Planned, InstallFailure> {
    let line = |at| jsonc::line_and_column(text, at);
    edit::plan(text, target).map_err(|refused| match refused {
        Refused::Syntax(error) => {
            let (line, column) = line(error.at);
            InstallFailure::Malformed {
                path: file.to_owned(),
                dialect: dialect_name(target),
                line,
                column,
                what: error.what,
            }
        }
        Refused::NotAnObject { at, what } => {
            let (line, column) = line(at);
            InstallFailure::NotAnObject {
                path: file.to_owned(),
                what: match what {
                    Level::Top => "the file's top level".to_owned(),
                    Level::Servers => format!("the value of \"{}\"", client.servers_key()),
                },
                line,
                column,
            }
        }
        Refused::Twice { key, first, second } => {
            let (first, second) = (line(first).0, line(second).0);
            InstallFailure::Twice {
                path: file.to_owned(),
                client: client.name(),
                key,
                lines: if first == second {
                    format!("on line {first}")
                } else {
                    format!("on lines {first} and {second}")
                },
            }
        }
    })
}

/// `<file>.lemonfiber-backup`, beside it.
fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{BACKUP}"));
    file.with_file_name(name)
}

/// Writes the file whole. One that was there keeps its permissions: it is the assistant's, and
/// the entry holds no key to make it more private for. One that is made is its owner's alone,
/// since what the assistant keeps in it later (another server's key, in its `env`) may be secret.
fn write(file: &Path, existed: bool, bytes: &[u8]) -> Result<(), InstallFailure> {
    let not_written =
        |error: std::io::Error| InstallFailure::NotWritten(file.to_owned(), error.kind());
    if existed {
        let permissions = std::fs::metadata(file).map_err(not_written)?.permissions();
        crate::state::write_whole_keeping(file, bytes, permissions).map_err(not_written)
    } else {
        if let Some(folder) = file.parent() {
            crate::platform::make_owner_only_folders(folder).map_err(not_written)?;
        }
        crate::state::write_whole(file, bytes).map_err(not_written)
    }
}

/// What `change` does, in words: the verb (as install would do it, and as it did), and what it
/// does it to, with the line the entry's name is on.
fn described(
    client: Client,
    file: &Path,
    change: Change,
    line: usize,
) -> (&'static str, &'static str, String) {
    let (servers, name, file) = (client.servers_key(), client.name(), file.display());
    match change {
        Change::Made => (
            "make",
            "Made",
            format!(
                "{file}, {name}'s configuration, holding \"{servers}\" with the {ENTRY} entry alone"
            ),
        ),
        Change::AddedServers => (
            "add",
            "Added",
            format!(
                "\"{servers}\", holding the {ENTRY} entry alone, to {name}'s configuration {file} (line {line})"
            ),
        ),
        Change::Added => (
            "add",
            "Added",
            format!(
                "the {ENTRY} entry to \"{servers}\" in {name}'s configuration {file} (line {line}), after \
                 the servers there"
            ),
        ),
        Change::Replaced => (
            "replace",
            "Replaced",
            format!(
                "the {ENTRY} entry in \"{servers}\" in {name}'s configuration {file} (line {line})"
            ),
        ),
    }
}

fn print_plan(client: Client, file: &Path, change: Change, line: usize, entry: &Written) {
    let lines = Layout::Lines {
        indent: "",
        unit: "  ",
        newline: "\n",
    };
    let servers = || Written::Object(vec![(ENTRY.to_owned(), entry.clone())]);
    let shown = match change {
        Change::Made => render::render(
            &Written::Object(vec![(client.servers_key().to_owned(), servers())]),
            lines,
        ),
        Change::AddedServers => render::member(client.servers_key(), &servers(), lines),
        Change::Added | Change::Replaced => render::member(ENTRY, entry, lines),
    };
    if change == Change::Made {
        println!(
            "install would make {}, {}'s configuration, holding this:\n",
            file.display(),
            client.name()
        );
    } else {
        let (verb, _, what) = described(client, file, change, line);
        let with = if change == Change::Replaced {
            " with this one"
        } else {
            ""
        };
        println!("install would {verb} {what}{with}, and change nothing else in it:\n");
    }
    println!("{shown}\n");
    println!("Nothing was written. Run install again without --print to write it.");
}

fn print_done(client: Client, file: &Path, change: Change, line: usize, existed: bool) {
    let (_, did, what) = described(client, file, change, line);
    println!("{did} {what}. The entry runs this program with the linked config, and holds no key.");
    if existed {
        println!(
            "Everything else in the file is as it was, and the file as it was before is kept in {}.",
            backup_of(file).display()
        );
    }
    println!("Restart {} so that it reads the change.", client.name());
}
