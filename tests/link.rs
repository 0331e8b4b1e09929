//! Setting up from a key link (F13-R15) and asking what a key reaches (`check`, F13-R6; issue 13),
//! with the real binary against the demo stack: the claim traded once, only the reply kept in a
//! config only its owner can read, `stdio` working from that config alone, and every refusal
//! named.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/hostile.rs"]
mod hostile;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/mcp.rs"]
mod mcp;

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output, Stdio as Piped};

use demo::{BINARY, DemoStack, Scratch};
use hostile::{BREAKING_CLAIM, ECHOING_CLAIM, HostileStack, MINTED_KEY, SILENT_CLAIM};
use http_server::fresh_dir;
use mcp::Stdio;
use serde_json::{Value, json};

/// `lemonfiber-mcp <args>` with nothing in its environment but `HOME`, and `input` on stdin.
fn run(home: &Path, args: &[&str], input: &str) -> Output {
    run_with(home, &[], args, input)
}

/// As `run`, with `settings` in the environment too.
fn run_with(home: &Path, settings: &[(&str, &Path)], args: &[&str], input: &str) -> Output {
    let mut child = Command::new(BINARY)
        .args(args)
        .env_clear()
        .env("HOME", home)
        .envs(settings.iter().copied())
        .stdin(Piped::piped())
        .stdout(Piped::piped())
        .stderr(Piped::piped())
        .spawn()
        .expect("it runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("written");
    child.wait_with_output().expect("it ends")
}

/// As `run`, off the test's runtime, which serves a stack of the tests' own meanwhile.
async fn run_apart(home: &Path, args: &[&str]) -> Output {
    run_apart_with(home, None, args).await
}

/// As `run_apart`, keeping the linked config at `config`.
async fn run_apart_with(home: &Path, config: Option<&Path>, args: &[&str]) -> Output {
    let home = home.to_path_buf();
    let config = config.map(Path::to_path_buf);
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let settings: Vec<(&str, &Path)> = config
            .iter()
            .map(|config| ("LEMONFIBER_CONFIG", config.as_path()))
            .collect();
        run_with(&home, &settings, &args, "")
    })
    .await
    .expect("it ends")
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn config_in(home: &Path) -> std::path::PathBuf {
    home.join(".config/lemonfiber-mcp/config.json")
}

/// The claim part of a key link.
fn claim_of(link: &str) -> String {
    link.split("claim=")
        .nth(1)
        .expect("a claim")
        .split('&')
        .next()
        .expect("a claim")
        .to_owned()
}

/// Everything under `folder`, as text.
fn everything_in(folder: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            all.push_str(&everything_in(&path));
        } else {
            all.push_str(&String::from_utf8_lossy(
                &std::fs::read(&path).unwrap_or_default(),
            ));
        }
    }
    all
}

#[tokio::test]
async fn a_key_link_sets_up_stdio_and_check_and_leaves_the_claim_nowhere_f13_r15() {
    let demo = DemoStack::start().await;
    let home = Scratch::at(fresh_dir("home"));
    // A config folder that was there is left as it is: the file in it is its owner's alone.
    let folder = home.join(".config/lemonfiber-mcp");
    std::fs::create_dir_all(&folder).expect("folder");
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let link = demo.link("read");
    let linked = run(
        &home,
        &["link", "-", "--https", "https://mcp.home.arpa:9443/mcp"],
        &link,
    );
    let linked_said = said(&linked);
    assert!(linked.status.success(), "{linked_said}");
    let config = config_in(&home);
    assert!(
        linked_said.contains(&config.display().to_string()),
        "the config's path is printed"
    );
    assert!(
        linked_said.contains("\"LEMONFIBER_CONFIG\""),
        "a stdio config that refers to the file"
    );
    assert!(
        linked_said.contains("${input:lemonfiber-key}"),
        "the HTTPS form asks for the key"
    );
    assert!(
        linked_said.contains("\"type\": \"http\", as VS Code's does")
            && linked_said.contains("trust the HTTP mode's certificate: docs/certificates.md"),
        "the HTTPS form says which client takes it, and how it trusts the certificate: {linked_said}"
    );
    assert!(
        linked_said.contains(&format!("Check what the key reaches with: {BINARY} check")),
        "{linked_said}"
    );
    assert!(
        linked_said.contains(&format!(
            "Claude Desktop, Claude Code, Cursor or VS Code for you: {BINARY} install claude-desktop \
             (or claude-code, cursor, vscode)"
        )),
        "link ends by offering install (issue 30): {linked_said}"
    );
    let key = demo.key(&demo.read_key_file);
    assert!(!linked_said.contains(&key), "no key is printed");
    let mode = |path: &Path| std::fs::metadata(path).expect("there").permissions().mode() & 0o777;
    assert_eq!(mode(&config), 0o600);
    assert_eq!(mode(config.parent().expect("folder")), 0o755);
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("kept")).expect("JSON");
    assert_eq!(kept["key"], key.as_str());
    assert_eq!(kept["address"], demo.address.as_str());
    assert_eq!(kept["pin"], demo.pin.as_str());
    assert_eq!(kept["scope"], "read");

    // stdio from the linked config alone.
    let home_text = home.display().to_string();
    let server = Stdio::start(&[("HOME", &home_text)]).await;
    let status = server.call("read_status", json!({})).await;
    assert_ne!(status.is_error, Some(true), "{status:?}");
    let stdio_said = server.stderr();
    drop(server);

    let checked = run(&home, &["check", "--json"], "");
    assert_eq!(checked.status.code(), Some(0), "{}", said(&checked));
    let report: Value = serde_json::from_slice(&checked.stdout).expect("JSON");
    assert_eq!(report["state"], "connected");
    assert_eq!(report["scope"], "read");
    // Issue 30: where a key file's privacy is not checked (Windows), check says so.
    assert_eq!(report["key_file_privacy_checked"], cfg!(unix));
    assert!(
        report["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .any(|tool| tool["name"] == "read_status")
    );
    assert!(
        report["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .any(|resource| resource["uri"] == "lemonfiber://read/status")
    );
    let person = run(&home, &["check"], "");
    assert!(
        said(&person).contains("Connected to the stack at"),
        "{}",
        said(&person)
    );

    // Linking again over a kept config is refused before anything is claimed.
    let again = run(&home, &["link", &demo.link("act")], "");
    assert_eq!(again.status.code(), Some(2));
    assert!(said(&again).contains("already holds a linked config; nothing was claimed"));
    let other_home = Scratch::at(fresh_dir("home"));
    assert!(
        run(&other_home, &["link", &demo.link("act")], "")
            .status
            .success(),
        "the act claim was not spent"
    );

    // A config others can read is not used.
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let open = run(&home, &["check"], "");
    assert_eq!(open.status.code(), Some(2));
    assert!(
        said(&open).contains("can be read or written by others"),
        "{}",
        said(&open)
    );

    let claim = claim_of(&link);
    let requests = serde_json::to_string(&demo.requests().await).expect("text");
    for (what, text) in [
        ("link's output", linked_said),
        ("stdio's log", stdio_said),
        ("check's output", said(&checked)),
        ("the home folder", everything_in(&home)),
        ("the stack's request log", requests),
    ] {
        assert!(!text.contains(&claim), "the claim is in {what}");
    }
}

/// Issue 30: a key link given as `stdio`'s one setting (an MCP Bundle's), as a household member
/// is handed one: traded at the first start, kept in a file of its own that only its owner can
/// read, and that file used at each start after, since the claim is spent by then. The link may
/// not come with another way of naming the stack or key, and the claim is left nowhere.
#[tokio::test]
async fn a_key_link_given_as_a_setting_is_traded_once_and_kept_for_each_start() {
    let demo = DemoStack::start().await;
    let home = Scratch::at(fresh_dir("home"));
    let home_text = home.display().to_string();
    let link = demo.link("member");
    // As a bundle passes them: every setting, those left empty as "".
    let given = [
        ("HOME", home_text.as_str()),
        ("LEMONFIBER_LINK", link.as_str()),
        ("LEMONFIBER_ADDRESS", ""),
        ("LEMONFIBER_PIN", ""),
        ("LEMONFIBER_KEY", ""),
        ("LEMONFIBER_KEY_FILE", ""),
    ];
    let mut logs = String::new();
    for start in ["first", "next"] {
        let server = Stdio::start(&given).await;
        let requests = server.call("read_requests", json!({})).await;
        assert_ne!(requests.is_error, Some(true), "{start} start: {requests:?}");
        logs.push_str(&server.stderr());
    }
    let kept: Vec<_> = std::fs::read_dir(home.join(".config/lemonfiber-mcp/links"))
        .expect("the links folder")
        .flatten()
        .map(|entry| entry.path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        std::fs::metadata(&kept[0])
            .expect("kept")
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    let written: Value =
        serde_json::from_slice(&std::fs::read(&kept[0]).expect("kept")).expect("JSON");
    assert_eq!(written["key"], demo.key(&demo.member_key_file).as_str());
    assert!(!config_in(&home).exists(), "link's own config is not made");

    let link_path = Path::new(&link);
    let checked = run_with(
        &home,
        &[("LEMONFIBER_LINK", link_path)],
        &["check", "--json"],
        "",
    );
    assert_eq!(checked.status.code(), Some(0), "{}", said(&checked));

    let mixed = run_with(
        &home,
        &[
            ("LEMONFIBER_LINK", link_path),
            ("LEMONFIBER_ADDRESS", Path::new(&demo.address)),
        ],
        &["check"],
        "",
    );
    assert_eq!(mixed.status.code(), Some(2));
    assert!(
        said(&mixed).contains("LEMONFIBER_LINK is set, and so is LEMONFIBER_ADDRESS"),
        "{}",
        said(&mixed)
    );

    let claim = claim_of(&link);
    for (what, text) in [
        ("stdio's log", logs),
        ("check's output", said(&checked)),
        ("the home folder", everything_in(&home)),
    ] {
        assert!(!text.contains(&claim), "the claim is in {what}");
    }
}

#[tokio::test]
async fn a_refused_claim_names_its_reason_and_nothing_is_kept() {
    let demo = DemoStack::start().await;
    let refused = |home: &Scratch, link: &str| {
        let output = run(home, &["link", link], "");
        assert!(!config_in(home).exists(), "nothing is kept for {link}");
        // Issue 28: nor the folders made to keep it in (the home folder itself, here).
        assert!(!home.exists(), "no folder is left for {link}");
        (output.status.code(), said(&output))
    };
    let home = Scratch::at(fresh_dir("home"));

    let read = demo.link("read");
    let other_pin = read.replace(&demo.pin, &"ab".repeat(32));
    let (code, text) = refused(&home, &other_pin);
    assert_eq!(code, Some(1));
    assert!(
        text.contains("did not show the certificate the link's pin names"),
        "{text}"
    );
    assert!(text.contains("Nothing was sent"));

    let unknown = read.replace(&claim_of(&read), &"0".repeat(48));
    let (_, text) = refused(&home, &unknown);
    assert!(
        text.contains("the stack does not know this claim"),
        "{text}"
    );

    let spent_home = Scratch::at(fresh_dir("home"));
    assert!(
        run(&spent_home, &["link", &read], "").status.success(),
        "the pin mismatch spent nothing"
    );
    let (_, text) = refused(&home, &read);
    assert!(text.contains("the claim is spent"), "{text}");

    demo.control("claims/expire").await;
    let (_, text) = refused(&home, &demo.link("member"));
    assert!(text.contains("the claim has expired"), "{text}");

    let claim = claim_of(&read);
    let nowhere = format!("https://127.0.0.1:1/link#claim={claim}&pin={}", demo.pin);
    let (code, text) = refused(&home, &nowhere);
    assert_eq!(code, Some(1));
    assert!(
        text.contains(
            "could not be reached (no connection), so the claim was not sent and is not spent"
        ),
        "{text}"
    );

    let malformed = format!("https://127.0.0.1:1/link#claim={claim}&pin=nope");
    let (code, text) = refused(&home, &malformed);
    assert_eq!(code, Some(2));
    assert!(text.contains("the key link's pin is not a pin"), "{text}");
    assert!(
        !text.contains(&claim),
        "a malformed link's claim is never repeated"
    );
    let bad_claim = format!("https://127.0.0.1:1/link#claim=short&pin={}", demo.pin);
    let (code, text) = refused(&home, &bad_claim);
    assert_eq!(code, Some(2));
    assert!(
        text.contains("that key link will not do: its claim is not")
            && !text.contains("link's its"),
        "{text}"
    );
    let (code, text) = refused(&home, "stack.home.arpa");
    assert_eq!(code, Some(2));
    assert!(text.contains("that is not a key link"), "{text}");
}

/// Issue 28: a pin written as browsers and openssl show it (pairs with colons) is taken, and a
/// reader that stops early (`check | head`) leaves `check` to exit with what it found, not panic.
#[tokio::test]
async fn check_takes_a_pin_with_colons_and_a_reader_that_stops_early() {
    let demo = DemoStack::start().await;
    let home = Scratch::at(fresh_dir("home"));
    let upper = demo.pin.to_uppercase();
    let pairs: Vec<&str> = (0..32).map(|at| &upper[at * 2..at * 2 + 2]).collect();
    let colons = pairs.join(":");
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let status = Command::new(BINARY)
        .arg("check")
        .env_clear()
        .env("HOME", &*home)
        .env("LEMONFIBER_ADDRESS", &demo.address)
        .env("LEMONFIBER_PIN", &colons)
        .env("LEMONFIBER_KEY_FILE", &demo.read_key_file)
        .stdout(writer)
        .stderr(Piped::piped())
        .output()
        .expect("it runs");
    assert_eq!(
        status.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let help = run(&home, &["check", "--help"], "");
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("2 when the"),
        "every exit code is named"
    );
}

#[tokio::test]
async fn check_says_each_state_with_its_exit_code_f13_r6() {
    let demo = DemoStack::start().await;
    let home = Scratch::at(fresh_dir("home"));
    assert!(
        run(&home, &["link", &demo.link("act")], "")
            .status
            .success()
    );
    let check = || {
        let output = run(&home, &["check", "--json"], "");
        let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        (output.status.code(), report)
    };
    let (code, report) = check();
    assert_eq!(
        (code, report["state"].as_str()),
        (Some(0), Some("connected"))
    );
    assert_eq!(report["scope"], "act");
    let writes = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .any(|tool| tool["writes"] == true);
    assert!(writes, "an act key is offered tools that change the stack");
    let sent_before = demo.requests().await.len();
    assert_eq!(check().0, Some(0));
    let sent: Vec<Value> = demo.requests().await.split_off(sent_before);
    assert!(
        sent.iter().all(|request| request["method"] == "GET"),
        "check writes nothing: {sent:?}"
    );

    demo.control("revoke/act").await;
    let (code_refused, report_refused) = check();
    assert_eq!(
        (code_refused, report_refused["state"].as_str()),
        (Some(3), Some("refused"))
    );
    assert!(
        report_refused["why"]
            .as_str()
            .expect("why")
            .contains("A new key is needed")
    );

    demo.stop().await;
    let (code_gone, report_gone) = check();
    assert_eq!(
        (code_gone, report_gone["state"].as_str()),
        (Some(4), Some("unreachable"))
    );
    assert!(
        report_gone["why"]
            .as_str()
            .expect("why")
            .contains("Nothing answered"),
        "{report_gone}"
    );
}

#[tokio::test]
async fn a_relative_config_path_is_printed_as_the_absolute_path_an_assistant_needs() {
    let demo = DemoStack::start().await;
    let home = Scratch::at(fresh_dir("home"));
    std::fs::create_dir_all(&*home).expect("home");
    let linked = Command::new(BINARY)
        .args(["link", &demo.link("member")])
        .env_clear()
        .env("LEMONFIBER_CONFIG", "linked dir/member.json")
        .current_dir(&*home)
        .output()
        .expect("it runs");
    assert!(linked.status.success(), "{}", said(&linked));
    let absolute = home.join("linked dir/member.json");
    assert!(
        said(&linked).contains(&format!(
            "\"LEMONFIBER_CONFIG\": \"{}\"",
            absolute.display()
        )),
        "{}",
        said(&linked)
    );
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(&absolute).expect("kept")).expect("JSON");
    assert_eq!(kept["scope"], "member:maya");
    // Issue 28: the check it suggests reads the same file, from anywhere, as pasted into a shell.
    let stdout = String::from_utf8_lossy(&linked.stdout);
    let hint = stdout
        .lines()
        .find_map(|line| line.strip_prefix("Check what the key reaches with: "))
        .expect("a check hint");
    assert!(hint.starts_with("LEMONFIBER_CONFIG='"), "{hint}");
    let elsewhere = Scratch::at(fresh_dir("elsewhere"));
    std::fs::create_dir_all(&*elsewhere).expect("elsewhere");
    let checked = Command::new("sh")
        .args(["-c", hint])
        .env_clear()
        .current_dir(&*elsewhere)
        .output()
        .expect("the hint runs");
    assert_eq!(checked.status.code(), Some(0), "{}", said(&checked));
    assert!(String::from_utf8_lossy(&checked.stdout).contains("member"));
    // Issue 30: the install it offers refers to the same file, as pasted into a shell.
    let install = stdout
        .lines()
        .find_map(|line| line.split_once("for you: ").map(|(_, command)| command))
        .and_then(|command| command.strip_suffix(" (or claude-code, cursor, vscode)"))
        .expect("an install offer");
    let installed = Command::new("sh")
        .args(["-c", install])
        .env_clear()
        .env("HOME", &*elsewhere)
        .current_dir(&*elsewhere)
        .output()
        .expect("the offer runs");
    assert!(installed.status.success(), "{}", said(&installed));
    let desktop = if cfg!(target_os = "macos") {
        elsewhere.join("Library/Application Support/Claude/claude_desktop_config.json")
    } else {
        elsewhere.join(".config/Claude/claude_desktop_config.json")
    };
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(desktop).expect("written")).expect("JSON");
    assert_eq!(
        written["mcpServers"]["lemonfiber"]["env"]["LEMONFIBER_CONFIG"],
        absolute.display().to_string()
    );
}

/// Issue 28: a link pasted with quotes around it (as shells and chat apps paste it) is taken, on
/// stdin or as an argument; `unlink` removes the config it wrote, saying the key still works on
/// the stack until it is revoked there, and refuses (exit 2) when there is none.
#[tokio::test]
async fn a_quoted_link_is_taken_and_unlink_removes_what_link_wrote() {
    let demo = DemoStack::start().await;
    let home = Scratch::at(fresh_dir("home"));
    let linked = run(
        &home,
        &["link", "-"],
        &format!("  '{}'  \n", demo.link("read")),
    );
    assert!(linked.status.success(), "{}", said(&linked));
    let config = config_in(&home);
    assert!(config.exists());

    let unlinked = run(&home, &["unlink"], "");
    let text = said(&unlinked);
    assert_eq!(unlinked.status.code(), Some(0), "{text}");
    assert!(!config.exists(), "the config is gone");
    assert!(text.contains(&config.display().to_string()), "{text}");
    assert!(
        text.contains("still works on the stack until you revoke it there"),
        "{text}"
    );
    let key = demo.key(&demo.read_key_file);
    assert!(!text.contains(&key), "no key is printed");

    let again = run(&home, &["unlink"], "");
    assert_eq!(again.status.code(), Some(2), "{}", said(&again));
    assert!(
        said(&again).contains("there is no linked config at"),
        "{}",
        said(&again)
    );

    let quoted = format!("\"{}\"", demo.link("act"));
    let relinked = run(&home, &["link", &quoted], "");
    assert!(relinked.status.success(), "{}", said(&relinked));

    // A file that is not a linked config is not removed.
    let other = home.join("notes.json");
    std::fs::write(&other, "{}").expect("written");
    let refused = run_with(&home, &[("LEMONFIBER_CONFIG", &other)], &["unlink"], "");
    assert_eq!(refused.status.code(), Some(2), "{}", said(&refused));
    assert!(other.exists(), "left as it is");
}

/// Issue 28: `link -` at a terminal asks for the link on stderr and takes it on Enter, without
/// waiting for the end of input. `script` gives it a terminal, and its stdin is kept open.
#[tokio::test]
async fn link_from_a_terminal_asks_for_the_link_and_takes_it_on_enter() {
    let demo = DemoStack::start().await;
    let home = Scratch::at(fresh_dir("home"));
    let mut child = tokio::process::Command::new("script")
        .args(["-qec", &format!("{BINARY} link -"), "/dev/null"])
        .env_clear()
        .env("HOME", &*home)
        .stdin(Piped::piped())
        .stdout(Piped::piped())
        .stderr(Piped::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("script (util-linux) runs");
    let mut stdin = child.stdin.take().expect("stdin");
    tokio::io::AsyncWriteExt::write_all(&mut stdin, format!("{}\n", demo.link("read")).as_bytes())
        .await
        .expect("written");
    let output = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("link ends on Enter, with its input still open")
        .expect("it ends");
    drop(stdin);
    let text = said(&output);
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains("Paste the key link, then press Enter"),
        "{text}"
    );
    assert!(config_in(&home).exists(), "{text}");
}

/// Everything a link printed and kept, but the one field of its config that must hold the key
/// and the one that holds the pin: where an echo of them would show.
fn printed_and_kept_but_the_key_and_pin(output: &Output, config: &Path) -> String {
    let mut kept: Value =
        serde_json::from_str(&std::fs::read_to_string(config).expect("kept")).expect("JSON");
    let fields = kept.as_object_mut().expect("an object");
    fields.remove("key");
    fields.remove("pin");
    format!("{}{kept}", said(output))
}

/// Issue 27, item 5: the words of a minted key (its name, scope and address) are the stack's,
/// and pass the door a tool's result does: an echo of the key (whole, its hex part, split by a
/// hidden character), the claim or the pin in them is neither printed nor kept, and an address
/// that carries one is not kept.
#[tokio::test]
async fn a_reply_that_echoes_the_key_claim_or_pin_has_them_withheld_from_what_link_prints_and_keeps()
 {
    let stack = HostileStack::start().await;
    let home = Scratch::at(fresh_dir("home"));
    let linked = run_apart(&home, &["link", &stack.link(ECHOING_CLAIM)]).await;
    assert!(linked.status.success(), "{}", said(&linked));
    let config = config_in(&home);
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("kept")).expect("JSON");
    assert_eq!(kept["key"], MINTED_KEY, "the key is kept where it belongs");
    assert_eq!(kept["address"], stack.address.as_str(), "{kept}");
    assert!(
        kept["name"]
            .as_str()
            .expect("a name")
            .starts_with("kitchen [withheld]"),
        "{kept}"
    );
    let everything = printed_and_kept_but_the_key_and_pin(&linked, &config).to_ascii_lowercase();
    let hex = MINTED_KEY.trim_start_matches("lfk_");
    for secret in [hex, &hex[16..], ECHOING_CLAIM, &stack.pin, "lfk_"] {
        assert!(!everything.contains(secret), "{secret} in {everything}");
    }
    assert!(!everything.contains('\u{200b}'), "{everything}");
}

/// Issue 27, item 5: a claim sent to the stack that brought no answer (it broke off, or timed
/// out) may have been spent: `link` says so, and what to do, rather than that it was not.
#[tokio::test]
async fn a_claim_the_stack_received_but_never_answered_is_said_to_be_perhaps_spent() {
    let stack = HostileStack::start().await;
    let (silent_home, broken_home) = (
        Scratch::at(fresh_dir("home")),
        Scratch::at(fresh_dir("home")),
    );
    let (silent_link, broken_link) = (stack.link(SILENT_CLAIM), stack.link(BREAKING_CLAIM));
    let (silent_args, broken_args) = (["link", &silent_link], ["link", &broken_link]);
    // At once, since the stack answers the silent one only after the server has given up on it.
    let (silent, broken) = tokio::join!(
        run_apart(&silent_home, &silent_args),
        run_apart(&broken_home, &broken_args),
    );
    for (home, output, why) in [
        (&broken_home, &broken, ""),
        (&silent_home, &silent, "(it timed out)"),
    ] {
        let text = said(output);
        assert_eq!(output.status.code(), Some(1), "{text}");
        assert!(text.contains("it may have"), "{text}");
        assert!(text.contains("spent"), "{text}");
        assert!(text.contains("ask the stack for a new key link"), "{text}");
        assert!(text.contains(why), "{text}");
        assert!(
            !text.contains("not spent") && !text.contains("not sent"),
            "{text}"
        );
        assert!(!config_in(home).exists(), "nothing is kept");
    }
    let received = stack
        .requests()
        .iter()
        .filter(|request| request["path"] == "/api/keys/claim")
        .count();
    assert_eq!(received, 2, "the stack received both claims");
}

/// Issue 27, item 5: `link` makes only the folder that is missing (0700), never changes the mode
/// or sticky bit of one that was there (shared, or reached through a symlink), refuses one
/// others may replace the config in before anything is claimed, and never follows a symlink
/// where the config goes.
#[tokio::test]
async fn link_leaves_a_folder_it_did_not_make_as_it_was_and_follows_no_symlink_to_the_file() {
    let stack = HostileStack::start().await;
    let link = stack.link(ECHOING_CLAIM);
    let scratch = Scratch::at(fresh_dir("folders"));
    let folder = |name: &str, mode: u32| {
        let path = scratch.join(name);
        std::fs::create_dir_all(&path).expect("folder");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        path
    };
    let mode = |path: &Path| std::fs::metadata(path).expect("there").permissions().mode() & 0o7777;
    let claims = || {
        stack
            .requests()
            .iter()
            .filter(|request| request["path"] == "/api/keys/claim")
            .count()
    };

    let shared = folder("shared", 0o1777);
    let target = folder("target", 0o1777);
    let through = scratch.join("through");
    std::os::unix::fs::symlink(&target, &through).expect("symlink");
    let missing = scratch.join("made/for/it");
    for (config, kept_as) in [
        (shared.join("config.json"), Some((&shared, 0o1777))),
        (through.join("config.json"), Some((&target, 0o1777))),
        (missing.join("config.json"), None),
    ] {
        let linked = run_apart_with(&scratch, Some(&config), &["link", &link]).await;
        assert!(linked.status.success(), "{}", said(&linked));
        assert_eq!(mode(&config), 0o600);
        match kept_as {
            Some((folder, was)) => assert_eq!(mode(folder), was, "{}", folder.display()),
            None => assert_eq!(mode(&missing), 0o700),
        }
    }
    let claimed = claims();

    let open = folder("open", 0o777);
    let refused = run_apart_with(&scratch, Some(&open.join("config.json")), &["link", &link]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", said(&refused));
    assert!(
        said(&refused).contains("can be written by others"),
        "{}",
        said(&refused)
    );
    assert_eq!(mode(&open), 0o777, "left as it was");
    assert!(!open.join("config.json").exists());

    let elsewhere = scratch.join("elsewhere.txt");
    std::fs::write(&elsewhere, "untouched").expect("written");
    let mine = folder("mine", 0o700);
    std::os::unix::fs::symlink(&elsewhere, mine.join("config.json")).expect("symlink");
    std::os::unix::fs::symlink(scratch.join("nothing-yet"), mine.join("dangling.json"))
        .expect("symlink");
    for config in [mine.join("config.json"), mine.join("dangling.json")] {
        let refused = run_apart_with(&scratch, Some(&config), &["link", &link]).await;
        assert_eq!(refused.status.code(), Some(2), "{}", said(&refused));
    }
    assert_eq!(
        std::fs::read_to_string(&elsewhere).expect("there"),
        "untouched"
    );
    assert!(!scratch.join("nothing-yet").exists());
    assert_eq!(claims(), claimed, "nothing was claimed for a place refused");
}
