//! The assistants `install` writes into: where each keeps its MCP servers for the user (in every
//! project), under which key, in which JSON, and the entry each takes for a server it starts.

use std::path::PathBuf;

use super::jsonc::Dialect;
use super::render::Written;
use crate::places::{self, Os};

/// An assistant whose configuration `install` can add lemonfiber to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    VsCode,
}

impl Client {
    /// The assistant's name, as its maker writes it.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::VsCode => "VS Code",
        }
    }

    /// The key of the top-level object the assistant lists its servers in.
    pub fn servers_key(self) -> &'static str {
        match self {
            Client::VsCode => "servers",
            Client::ClaudeDesktop | Client::ClaudeCode | Client::Cursor => "mcpServers",
        }
    }

    /// How the assistant reads its file. VS Code reads its settings files as JSON with comments.
    /// Claude Desktop and Claude Code read theirs as JSON. Cursor documents its file as JSON and
    /// is reported to refuse a trailing comma in it, so it is held to JSON too: a comment there is
    /// refused, by line, rather than kept in a file Cursor might not read, and what `install`
    /// writes is then JSON any reader takes.
    pub fn dialect(self) -> Dialect {
        match self {
            Client::VsCode => Dialect::WithComments,
            Client::ClaudeDesktop | Client::ClaudeCode | Client::Cursor => Dialect::Strict,
        }
    }

    /// The file the assistant keeps the user's MCP servers in, found from the settings `set`
    /// answers, by the convention of `os`:
    ///
    /// - Claude Desktop: `claude_desktop_config.json` in its application folder
    ///   (`~/Library/Application Support/Claude` on macOS, `%APPDATA%\Claude` on Windows, and on
    ///   Linux, where there is no release of Anthropic's own, `$XDG_CONFIG_HOME/Claude` or
    ///   `~/.config/Claude`, as the Linux builds others make of it use);
    /// - Claude Code: `~/.claude.json` (`.claude.json` in `CLAUDE_CONFIG_DIR` where that is
    ///   set), whose top-level `mcpServers` are the user's own, in every project;
    /// - Cursor: `~/.cursor/mcp.json`;
    /// - VS Code: `mcp.json` in its user settings folder (`Code/User` in its application folder).
    pub fn file(self, os: Os, set: &impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
        match self {
            Client::ClaudeDesktop => places::application_folder(os, set, "Claude")
                .map(|folder| folder.join("claude_desktop_config.json")),
            Client::ClaudeCode => set("CLAUDE_CONFIG_DIR")
                .map(PathBuf::from)
                .filter(|folder| folder.is_absolute())
                .or_else(|| places::home_folder(os, set))
                .map(|folder| folder.join(".claude.json")),
            Client::Cursor => {
                places::home_folder(os, set).map(|home| home.join(".cursor").join("mcp.json"))
            }
            Client::VsCode => places::application_folder(os, set, "Code")
                .map(|folder| folder.join("User").join("mcp.json")),
        }
    }

    /// The settings that name the folder [`Client::file`] is in, for a person to set.
    pub fn folder_settings(self, os: Os) -> &'static str {
        match (self, os) {
            (Client::ClaudeDesktop | Client::VsCode, Os::Windows) => "APPDATA",
            (Client::ClaudeDesktop | Client::VsCode, Os::Linux) => "XDG_CONFIG_HOME or HOME",
            (Client::ClaudeCode | Client::Cursor, Os::Windows) => "USERPROFILE",
            _ => "HOME",
        }
    }

    /// The entry that starts `program stdio` with the linked config at `config`: it names the
    /// file, never the key in it. Claude Code and VS Code say the kind of server too, as their
    /// own commands write it.
    pub fn entry(self, program: &str, config: &str) -> Written {
        let string = |text: &str| Written::String(text.to_owned());
        let mut members = Vec::new();
        if matches!(self, Client::ClaudeCode | Client::VsCode) {
            members.push(("type".to_owned(), string("stdio")));
        }
        members.extend([
            ("command".to_owned(), string(program)),
            ("args".to_owned(), Written::List(vec![string("stdio")])),
            (
                "env".to_owned(),
                Written::Object(vec![(crate::config::CONFIG.to_owned(), string(config))]),
            ),
        ]);
        Written::Object(members)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::places::tests::from;

    #[cfg(unix)]
    #[test]
    fn each_assistants_file_is_where_it_keeps_the_users_servers() {
        let set = from(&[("HOME", "/home/ann")]);
        let file = |client: Client, os| client.file(os, &set).expect("a file");
        assert_eq!(
            file(Client::ClaudeDesktop, Os::Linux),
            PathBuf::from("/home/ann/.config/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            file(Client::ClaudeDesktop, Os::Mac),
            PathBuf::from(
                "/home/ann/Library/Application Support/Claude/claude_desktop_config.json"
            )
        );
        assert_eq!(
            file(Client::ClaudeCode, Os::Mac),
            PathBuf::from("/home/ann/.claude.json")
        );
        assert_eq!(
            file(Client::Cursor, Os::Linux),
            PathBuf::from("/home/ann/.cursor/mcp.json")
        );
        assert_eq!(
            file(Client::VsCode, Os::Linux),
            PathBuf::from("/home/ann/.config/Code/User/mcp.json")
        );
        assert_eq!(
            file(Client::VsCode, Os::Mac),
            PathBuf::from("/home/ann/Library/Application Support/Code/User/mcp.json")
        );
        let set = from(&[("HOME", "/home/ann"), ("CLAUDE_CONFIG_DIR", "/x/claude")]);
        assert_eq!(
            Client::ClaudeCode.file(Os::Linux, &set),
            Some(PathBuf::from("/x/claude/.claude.json"))
        );
        assert_eq!(
            Client::VsCode.file(Os::Windows, &from(&[("HOME", "/home/ann")])),
            None
        );
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_each_file_is_in_the_users_profile() {
        let set = from(&[
            ("APPDATA", r"C:\Users\ann\AppData\Roaming"),
            ("USERPROFILE", r"C:\Users\ann"),
        ]);
        let file = |client: Client| client.file(Os::Windows, &set).expect("a file");
        assert_eq!(
            file(Client::ClaudeDesktop),
            PathBuf::from(r"C:\Users\ann\AppData\Roaming\Claude\claude_desktop_config.json")
        );
        assert_eq!(
            file(Client::ClaudeCode),
            PathBuf::from(r"C:\Users\ann\.claude.json")
        );
        assert_eq!(
            file(Client::Cursor),
            PathBuf::from(r"C:\Users\ann\.cursor\mcp.json")
        );
        assert_eq!(
            file(Client::VsCode),
            PathBuf::from(r"C:\Users\ann\AppData\Roaming\Code\User\mcp.json")
        );
    }

    #[test]
    fn the_entry_names_the_linked_config_and_the_kind_where_the_assistant_writes_one() {
        let desktop = Client::ClaudeDesktop.entry("/bin/lemonfiber-mcp", "/c/config.json");
        assert_eq!(
            desktop.to_value(),
            serde_json::json!({"command": "/bin/lemonfiber-mcp", "args": ["stdio"],
                "env": {"LEMONFIBER_CONFIG": "/c/config.json"}})
        );
        let code = Client::VsCode.entry("/bin/lemonfiber-mcp", "/c/config.json");
        assert_eq!(code.to_value()["type"], "stdio");
    }
}
