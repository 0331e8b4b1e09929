//! `lemonfiber-mcp install <client>` (issue 30), with the real binary, against a temporary home
//! holding each assistant's configuration as the assistant writes it: missing, empty, with other
//! servers and settings, with an old lemonfiber entry, with comments where the assistant allows
//! them, and malformed. The entry is added or replaced, refers to the linked config (never the
//! key), and every other byte of the file is kept; a file that does not read is refused by line
//! and left as it was.

#[path = "support/demo.rs"]
mod demo;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use demo::{BINARY, Scratch};
use serde_json::{Value, json};

const CLIENTS: [&str; 4] = ["claude-desktop", "claude-code", "cursor", "vscode"];
const KEY: &str = "lfk_00112233445566778899aabbccddeeff";
const PIN: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// A temporary home with a linked config in it, in the shape `link` writes.
struct Home {
    folder: Scratch,
    config: PathBuf,
}

fn home(what: &str) -> Home {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let folder = Scratch::at(std::env::temp_dir().join(format!(
        "lemonfiber-install-test-{what}-{}-{n}",
        std::process::id()
    )));
    let config = folder.join(".config/lemonfiber-mcp/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let linked = json!({"address": "https://127.0.0.1:8443", "pin": PIN, "key": KEY,
        "name": "kitchen", "scope": "read"});
    std::fs::write(&config, format!("{linked:#}\n")).unwrap();
    set_mode(&config, 0o600);
    Home { folder, config }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) {}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// `lemonfiber-mcp install <args>` with nothing in its environment but the home (as each
/// system names it) and `settings`.
fn install_with(home: &Home, settings: &[(&str, &Path)], args: &[&str]) -> Output {
    Command::new(BINARY)
        .arg("install")
        .args(args)
        .env_clear()
        .env("HOME", &*home.folder)
        .env("USERPROFILE", &*home.folder)
        .env("APPDATA", home.folder.join("AppData/Roaming"))
        .envs(settings.iter().copied())
        .output()
        .expect("it runs")
}

fn install(home: &Home, args: &[&str]) -> Output {
    install_with(home, &[], args)
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Where `client` keeps the user's MCP servers, in `home`, on this system.
fn file_of(home: &Path, client: &str) -> PathBuf {
    let applications = if cfg!(target_os = "macos") {
        home.join("Library/Application Support")
    } else if cfg!(windows) {
        home.join("AppData/Roaming")
    } else {
        home.join(".config")
    };
    match client {
        "claude-desktop" => applications.join("Claude/claude_desktop_config.json"),
        "claude-code" => home.join(".claude.json"),
        "cursor" => home.join(".cursor/mcp.json"),
        "vscode" => applications.join("Code/User/mcp.json"),
        _ => panic!("{client}"),
    }
}

fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap().to_os_string();
    name.push(".lemonfiber-backup");
    file.with_file_name(name)
}

fn servers_key(client: &str) -> &'static str {
    if client == "vscode" {
        "servers"
    } else {
        "mcpServers"
    }
}

/// The entry `install` should write for `client`.
fn entry(home: &Home, client: &str) -> Value {
    let mut entry = json!({"command": BINARY, "args": ["stdio"],
        "env": {"LEMONFIBER_CONFIG": home.config.display().to_string()}});
    if client == "claude-code" || client == "vscode" {
        entry["type"] = json!("stdio");
    }
    entry
}

/// `text` as JSON, with the comments, and the commas before a closing bracket, taken out.
fn read_loosely(text: &str) -> Value {
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            plain.push(c);
            match c {
                '\\' => plain.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                plain.push(c);
            }
            ('/', Some('/')) => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            _ => plain.push(c),
        }
    }
    let mut out = String::new();
    let bytes: Vec<char> = plain.chars().collect();
    for (at, &c) in bytes.iter().enumerate() {
        let closes = bytes[at + 1..]
            .iter()
            .find(|c| !c.is_whitespace())
            .is_some_and(|&c| c == '}' || c == ']');
        if !(c == ',' && closes) {
            out.push(c);
        }
    }
    serde_json::from_str(&out).unwrap_or_else(|error| panic!("{error}: {out}"))
}

/// Whether every byte of `old` is in `new`, in order: nothing was taken away or moved.
fn kept_in(old: &str, new: &str) -> bool {
    let mut new = new.bytes();
    old.bytes().all(|byte| new.any(|other| other == byte))
}

/// Writes `text` as `client`'s file in `home`, its folders made as the assistant makes them.
fn put(home: &Home, client: &str, text: &str) -> PathBuf {
    let file = file_of(&home.folder, client);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    file
}

/// Each assistant's file as it writes it, with other servers and settings in it.
fn with_others(client: &str) -> &'static str {
    match client {
        "claude-desktop" => {
            r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/ann/Desktop"
      ]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_not_a_real_token"
      }
    }
  },
  "globalShortcut": "Ctrl+Space"
}
"#
        }
        // The top-level servers are the user's own; a project's are beside it, and stay its own.
        "claude-code" => {
            r#"{
  "numStartups": 42,
  "installMethod": "native",
  "autoUpdates": true,
  "tipsHistory": {
    "memory-command": 3,
    "theme-command": 7
  },
  "mcpServers": {
    "sequential-thinking": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-sequential-thinking"
      ],
      "env": {}
    }
  },
  "projects": {
    "/home/ann/src/shop": {
      "allowedTools": [],
      "mcpServers": {
        "postgres": {
          "type": "stdio",
          "command": "npx",
          "args": [
            "-y",
            "@modelcontextprotocol/server-postgres",
            "postgresql://localhost/shop"
          ],
          "env": {}
        }
      },
      "hasTrustDialogAccepted": true,
      "lastCost": 0.1234,
      "lastSessionId": "1c9b6a3e-2f4d-4e8a-9b7c-0d1e2f3a4b5c"
    }
  },
  "hasCompletedOnboarding": true,
  "lastReleaseNotesSeen": "2.1.50"
}"#
        }
        "cursor" => {
            r#"{
  "mcpServers": {
    "context7": {
      "url": "https://mcp.context7.com/mcp"
    },
    "browser": {
      "command": "npx",
      "args": ["@browsermcp/mcp@latest"]
    }
  }
}
"#
        }
        "vscode" => {
            "{\n\t// Servers for every workspace.\n\t\"servers\": {\n\t\t\"github\": {\n\t\t\t\"type\": \"http\",\n\t\t\t\"url\": \"https://api.githubcopilot.com/mcp/\",\n\t\t},\n\t\t\"fetch\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"uvx\",\n\t\t\t\"args\": [\"mcp-server-fetch\"] // pinned later\n\t\t}\n\t},\n\t/* asked for once, kept by VS Code */\n\t\"inputs\": [\n\t\t{\n\t\t\t\"type\": \"promptString\",\n\t\t\t\"id\": \"github-token\",\n\t\t\t\"description\": \"GitHub token\",\n\t\t\t\"password\": true\n\t\t}\n\t]\n}\n"
        }
        _ => panic!("{client}"),
    }
}

/// Claude Code's file before its user has any servers of their own: only a project's.
const CLAUDE_CODE_PROJECT_ONLY: &str = r#"{
  "numStartups": 3,
  "projects": {
    "/home/ann/src/shop": {
      "mcpServers": {
        "postgres": {"type": "stdio", "command": "npx", "args": []}
      }
    }
  },
  "userID": "0123abcd"
}
"#;

#[test]
fn a_missing_file_is_made_holding_the_entry_alone() {
    let home = home("missing");
    for client in CLIENTS {
        let file = file_of(&home.folder, client);
        let installed = install(&home, &[client]);
        assert!(installed.status.success(), "{client}: {}", said(&installed));
        let written = std::fs::read_to_string(&file).expect("made");
        let read: Value = serde_json::from_str(&written).expect("JSON");
        assert_eq!(
            read,
            json!({servers_key(client): {"lemonfiber": entry(&home, client)}}),
            "{client}"
        );
        assert!(!backup_of(&file).exists(), "no backup of nothing");
        #[cfg(unix)]
        assert_eq!(mode(&file), 0o600, "{client}: a file made is its owner's");
        assert!(
            said(&installed).contains(&format!("Made {}", file.display())),
            "{}",
            said(&installed)
        );
        assert!(
            !written.contains(KEY),
            "the key never enters the assistant's file"
        );
    }
}

#[test]
fn an_empty_file_is_given_the_entry_and_kept_as_the_backup() {
    let home = home("empty");
    for client in CLIENTS {
        let file = put(&home, client, "");
        let installed = install(&home, &[client]);
        assert!(installed.status.success(), "{client}: {}", said(&installed));
        let read: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            read,
            json!({servers_key(client): {"lemonfiber": entry(&home, client)}})
        );
        assert_eq!(std::fs::read_to_string(backup_of(&file)).unwrap(), "");
    }
}

/// Every assistant, every shape with other things in it: the entry is added, every byte that was
/// there is there still and in order, and every other value is as it was.
#[test]
fn other_servers_and_settings_are_kept_byte_for_byte() {
    let home = home("others");
    let mut shapes: Vec<(&str, &str)> = CLIENTS
        .iter()
        .map(|&client| (client, with_others(client)))
        .collect();
    shapes.push(("claude-code", CLAUDE_CODE_PROJECT_ONLY));
    for (client, old) in shapes {
        let file = put(&home, client, old);
        set_mode(&file, 0o644);
        let installed = install(&home, &[client]);
        assert!(installed.status.success(), "{client}: {}", said(&installed));
        let new = std::fs::read_to_string(&file).unwrap();
        assert!(
            kept_in(old, &new),
            "{client}: a byte was lost:\n{old}\n=>\n{new}"
        );
        let mut read = read_loosely(&new);
        let added = read[servers_key(client)]
            .as_object_mut()
            .expect("servers")
            .remove("lemonfiber");
        assert_eq!(added, Some(entry(&home, client)), "{client}");
        let mut before = read_loosely(old);
        if before.get(servers_key(client)).is_none() {
            before[servers_key(client)] = json!({});
        }
        assert_eq!(read, before, "{client}: every other value is as it was");
        assert_eq!(std::fs::read_to_string(backup_of(&file)).unwrap(), old);
        #[cfg(unix)]
        assert_eq!(
            mode(&file),
            0o644,
            "{client}: the file keeps its permissions"
        );
        #[cfg(unix)]
        assert_eq!(mode(&backup_of(&file)), 0o600, "the backup is its owner's");
        assert!(!new.contains(KEY));
        let said = said(&installed);
        assert!(
            said.contains(&backup_of(&file).display().to_string()) && said.contains("Restart "),
            "{said}"
        );
    }
}

/// Where an assistant is laid out with tabs, comments and trailing commas, the entry goes after
/// the last server, after the comment that ends its line, indented with tabs.
#[test]
fn comments_are_kept_where_the_assistant_allows_them() {
    let home = home("comments");
    let old = with_others("vscode");
    let file = put(&home, "vscode", old);
    let installed = install(&home, &["vscode"]);
    assert!(installed.status.success(), "{}", said(&installed));
    let config = serde_json::to_string(&home.config.display().to_string()).unwrap();
    let binary = serde_json::to_string(BINARY).unwrap();
    let inserted = format!(
        ",\n\t\t\"lemonfiber\": {{\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": {binary},\n\t\t\t\"args\": [\"stdio\"],\n\t\t\t\"env\": {{\n\t\t\t\t\"LEMONFIBER_CONFIG\": {config}\n\t\t\t}}\n\t\t}}"
    );
    let after_fetch = old.find("// pinned later\n\t\t}").unwrap() + "// pinned later\n\t\t}".len();
    let expected = format!("{}{inserted}{}", &old[..after_fetch], &old[after_fetch..]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
}

#[test]
fn an_old_lemonfiber_entry_is_replaced_and_nothing_else_is_touched() {
    let home = home("replaced");
    for client in CLIENTS {
        let servers = servers_key(client);
        let old_entry = format!(
            "{{\n      \"command\": \"/opt/old/lemonfiber-mcp\",\n      \"args\": [\"stdio\"],\n      \"env\": {{\"LEMONFIBER_KEY\": \"{KEY}\"}}\n    }}"
        );
        let before = format!(
            "{{\n  \"{servers}\": {{\n    \"other\": {{\"command\": \"x\"}},\n    \"lemonfiber\": "
        );
        let after = "\n  },\n  \"kept\": [1, 2]\n}\n";
        let old = format!("{before}{old_entry}{after}");
        let file = put(&home, client, &old);
        let installed = install(&home, &[client]);
        assert!(installed.status.success(), "{client}: {}", said(&installed));
        let new = std::fs::read_to_string(&file).unwrap();
        assert!(
            new.starts_with(&before) && new.ends_with(after),
            "{client}: only the entry's value changed:\n{new}"
        );
        let read: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(read[servers]["lemonfiber"], entry(&home, client));
        assert!(
            !new.contains(KEY),
            "the key the old entry held is gone from the file"
        );
        assert_eq!(std::fs::read_to_string(backup_of(&file)).unwrap(), old);
        assert!(said(&installed).contains("Replaced the lemonfiber entry"));
    }
}

#[test]
fn a_file_that_does_not_read_is_refused_by_file_and_line_and_left_as_it_is() {
    let home = home("malformed");
    let missing_comma = "{\n  \"mcpServers\": {\n    \"files\": {\n      \"command\": \"npx\"\n      \"args\": []\n    }\n  }\n}\n";
    let mut shapes: Vec<(&str, &str, &str)> = CLIENTS
        .iter()
        .map(|&client| (client, missing_comma, "line 5, column 7"))
        .collect();
    // A comment is not JSON: where the assistant reads JSON, it is refused.
    for client in ["claude-desktop", "claude-code", "cursor"] {
        shapes.push((
            client,
            "{\n  // mine\n  \"mcpServers\": {}\n}\n",
            "line 2, column 3",
        ));
    }
    shapes.push((
        "vscode",
        "{\n\t\"servers\": {\n\t\t\"a\": {\n\t}\n",
        "line 5, column 1",
    ));
    shapes.push(("cursor", "{\"mcpServers\": []}", "line 1, column 16"));
    for (client, old, line) in shapes {
        let file = put(&home, client, old);
        let _ = std::fs::remove_file(backup_of(&file));
        for args in [&[client][..], &[client, "--print"][..]] {
            let refused = install(&home, args);
            let said = said(&refused);
            assert_eq!(refused.status.code(), Some(2), "{client}: {said}");
            assert!(
                said.contains(&file.display().to_string()) && said.contains(line),
                "{client}: the file and the line are named ({line}): {said}"
            );
            assert!(said.contains("Nothing was written"), "{said}");
            assert_eq!(std::fs::read_to_string(&file).unwrap(), old, "{client}");
            assert!(!backup_of(&file).exists(), "{client}: nothing was written");
        }
    }
}

#[test]
fn print_shows_the_entry_and_writes_nothing() {
    let home = home("print");
    for client in CLIENTS {
        let file = file_of(&home.folder, client);
        let printed = install(&home, &[client, "--print"]);
        assert!(printed.status.success(), "{client}: {}", said(&printed));
        assert!(!file.exists(), "{client}: no file is made");
        assert!(
            client == "claude-code" || !file.parent().unwrap().exists(),
            "{client}: nor a folder"
        );
        let old = with_others(client);
        let file = put(&home, client, old);
        let printed = install(&home, &[client, "--print"]);
        let said = said(&printed);
        assert!(printed.status.success(), "{client}: {said}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), old);
        assert!(!backup_of(&file).exists());
        let config = serde_json::to_string(&home.config.display().to_string()).unwrap();
        assert!(
            said.contains("\"lemonfiber\": {")
                && said.contains(&format!("\"LEMONFIBER_CONFIG\": {config}"))
                && said.contains("Nothing was written"),
            "{client}: {said}"
        );
        assert!(
            !said.contains("ghp_not_a_real_token"),
            "what else the file holds is not printed: {said}"
        );
    }
}

#[test]
fn running_again_changes_nothing() {
    let home = home("again");
    for client in CLIENTS {
        let old = with_others(client);
        let file = put(&home, client, old);
        assert!(install(&home, &[client]).status.success());
        let once = std::fs::read_to_string(&file).unwrap();
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        let again = install(&home, &[client]);
        assert!(again.status.success(), "{}", said(&again));
        assert!(
            said(&again).contains("has this lemonfiber entry already"),
            "{}",
            said(&again)
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), once);
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            modified
        );
        assert_eq!(
            std::fs::read_to_string(backup_of(&file)).unwrap(),
            old,
            "the backup is still the file before install"
        );
    }
}

#[test]
fn without_a_linked_config_install_says_to_link_first_and_writes_nothing() {
    let home = home("unlinked");
    std::fs::remove_file(&home.config).unwrap();
    for client in CLIENTS {
        let refused = install(&home, &[client]);
        let said = said(&refused);
        assert_eq!(refused.status.code(), Some(2), "{said}");
        assert!(
            said.contains("no linked config") && said.contains("lemonfiber-mcp link"),
            "{said}"
        );
        assert!(!file_of(&home.folder, client).exists());
    }
    // A config named by LEMONFIBER_CONFIG is the one referred to.
    let elsewhere = home.folder.join("elsewhere.json");
    std::fs::write(
        &elsewhere,
        json!({"address": "https://127.0.0.1:8443", "pin": PIN, "key": KEY, "name": "n", "scope": "read"})
            .to_string(),
    )
    .unwrap();
    set_mode(&elsewhere, 0o600);
    let installed = install_with(&home, &[("LEMONFIBER_CONFIG", &elsewhere)], &["cursor"]);
    assert!(installed.status.success(), "{}", said(&installed));
    let read: Value =
        serde_json::from_str(&std::fs::read_to_string(file_of(&home.folder, "cursor")).unwrap())
            .unwrap();
    assert_eq!(
        read["mcpServers"]["lemonfiber"]["env"]["LEMONFIBER_CONFIG"],
        elsewhere.display().to_string()
    );
}

/// On Linux the desktop applications' folder follows XDG_CONFIG_HOME, as Electron's does.
#[cfg(target_os = "linux")]
#[test]
fn the_desktop_applications_follow_xdg_config_home() {
    let home = home("xdg");
    let xdg = home.folder.join("xdg");
    for (client, file) in [
        (
            "claude-desktop",
            xdg.join("Claude/claude_desktop_config.json"),
        ),
        ("vscode", xdg.join("Code/User/mcp.json")),
    ] {
        let settings = [
            ("XDG_CONFIG_HOME", xdg.as_path()),
            ("LEMONFIBER_CONFIG", home.config.as_path()),
        ];
        let installed = install_with(&home, &settings, &[client]);
        assert!(installed.status.success(), "{}", said(&installed));
        assert!(file.exists(), "{client}");
    }
}

/// A file kept elsewhere and linked to (as dotfiles often are) is changed where it is, and the
/// link stays a link.
#[cfg(unix)]
#[test]
fn a_linked_file_is_changed_where_it_is() {
    let home = home("symlink");
    let kept = home.folder.join("dotfiles/claude.json");
    std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
    std::fs::write(&kept, CLAUDE_CODE_PROJECT_ONLY).unwrap();
    let file = file_of(&home.folder, "claude-code");
    std::os::unix::fs::symlink(&kept, &file).unwrap();
    let installed = install(&home, &["claude-code"]);
    assert!(installed.status.success(), "{}", said(&installed));
    assert!(
        std::fs::symlink_metadata(&file)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let read: Value = serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert_eq!(
        read["mcpServers"]["lemonfiber"],
        entry(&home, "claude-code")
    );
    assert_eq!(
        std::fs::read_to_string(backup_of(&kept)).unwrap(),
        CLAUDE_CODE_PROJECT_ONLY
    );
}
