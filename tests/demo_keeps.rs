//! Issue 28: the real `lemonfiber-mcp demo` keeps its address, pin and key files across runs in
//! a per-user folder of its own (here a scratch `HOME` and `XDG_STATE_HOME`, never the real one),
//! so that a configuration pasted from one run still works on the next; `--fresh` makes new ones;
//! a kept address something else holds is refused, saying what to do; and what it prints for a
//! person says all this truly.

#[path = "support/demo.rs"]
mod demo;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use demo::{BINARY, DemoStack, Scratch, stop_gracefully};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// How long a demo that refuses to start may take to say so.
const REFUSAL_LIMIT: Duration = Duration::from_secs(30);

fn scratch(what: &str) -> Scratch {
    Scratch::at(std::env::temp_dir().join(format!(
        "lemonfiber-demo-keeps-{what}-{}",
        std::process::id()
    )))
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("there").permissions().mode() & 0o7777
}

/// Everything a demo started from `home` told a person, and the demo too, to stop.
struct Run {
    said: String,
    child: tokio::process::Child,
}

impl Drop for Run {
    fn drop(&mut self) {
        stop_gracefully(&mut self.child);
    }
}

/// The demo as a person runs it (no `--json`), read until its last paragraph.
async fn for_a_person(home: &Path, extra: &[&str]) -> Run {
    let mut child = Command::new(BINARY)
        .arg("demo")
        .args(extra)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the demo starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut said = String::new();
    let read = async {
        while let Some(line) = lines.next_line().await.expect("stdout reads") {
            said.push_str(&line);
            said.push('\n');
            if line.contains("work only while it runs") {
                break;
            }
        }
    };
    tokio::time::timeout(REFUSAL_LIMIT, read)
        .await
        .expect("the demo says what it serves in time");
    Run { said, child }
}

#[tokio::test]
async fn a_second_run_keeps_the_address_pin_and_key_files_and_fresh_makes_new_ones() {
    let home = scratch("again");
    let folder = home.join("lemonfiber-mcp/demo");
    let first = DemoStack::start_kept(&home, &[]).await;
    let first_keys = first.all_keys();
    let first_seen = (
        first.address.clone(),
        first.pin.clone(),
        first.read_key_file.clone(),
        first.act_key_file.clone(),
        first.member_key_file.clone(),
        first.mcp_url.clone(),
        first.mcp_pin.clone(),
    );
    assert_eq!(
        PathBuf::from(&first.read_key_file).parent(),
        Some(folder.as_path()),
        "the keys are in the per-user state folder"
    );
    first.stop().await;

    assert_eq!(mode(&folder), 0o700, "the folder is its owner's alone");
    let key_files = [&first_seen.2, &first_seen.3, &first_seen.4];
    for file in key_files {
        assert_eq!(mode(Path::new(file)), 0o600, "{file}");
    }
    // A kept key is still the demo's own: with the demo stopped, nothing accepts it.
    let stopped = std::process::Command::new(BINARY)
        .arg("check")
        .env_clear()
        .env("HOME", &*home)
        .env("LEMONFIBER_ADDRESS", &first_seen.0)
        .env("LEMONFIBER_PIN", &first_seen.1)
        .env("LEMONFIBER_KEY_FILE", &first_seen.2)
        .output()
        .expect("check runs");
    assert_eq!(stopped.status.code(), Some(4), "unreachable once stopped");

    let second = DemoStack::start_kept(&home, &[]).await;
    let second_seen = (
        second.address.clone(),
        second.pin.clone(),
        second.read_key_file.clone(),
        second.act_key_file.clone(),
        second.member_key_file.clone(),
        second.mcp_url.clone(),
        second.mcp_pin.clone(),
    );
    assert_eq!(second_seen, first_seen, "what was pasted still holds");
    assert_eq!(second.all_keys(), first_keys, "the same keys");
    second.stop().await;

    let fresh = DemoStack::start_kept(&home, &["--fresh"]).await;
    assert_ne!(fresh.pin, first_seen.1, "a new certificate");
    assert_ne!(fresh.mcp_pin, first_seen.6, "a new MCP certificate");
    let fresh_keys = fresh.all_keys();
    for (new, old) in fresh_keys.iter().zip(&first_keys) {
        assert_ne!(new, old, "new keys");
    }
    let fresh_pin = fresh.pin.clone();
    fresh.stop().await;
    let after = DemoStack::start_kept(&home, &[]).await;
    assert_eq!(after.pin, fresh_pin, "what --fresh made is kept in turn");
    assert_eq!(after.all_keys(), fresh_keys);
}

/// A person who pasted the configuration expects it to keep working, so a kept address that
/// something else holds now (here another demo from the same folder) is not quietly swapped for
/// another: the demo exits 2 saying what holds it and what to do.
#[tokio::test]
async fn a_kept_address_that_is_taken_is_refused_with_what_to_do() {
    let home = scratch("taken");
    let first = DemoStack::start_kept(&home, &[]).await;
    let second = Command::new(BINARY)
        .args(["demo", "--json"])
        .env("HOME", &*home)
        .env("XDG_STATE_HOME", &*home)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let refused = tokio::time::timeout(REFUSAL_LIMIT, second)
        .await
        .expect("the second demo ends by itself")
        .expect("it runs");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    let address = first.address.trim_start_matches("https://");
    assert!(
        said.contains(&format!("{address}, where its last run listened")),
        "{said}"
    );
    assert!(
        said.contains("Stop that one") && said.contains("--fresh"),
        "{said}"
    );
    assert!(refused.stdout.is_empty(), "no configuration is printed");
    first.stop().await;
}

/// What the demo says to a person: on the first run that what it prints is kept, on the next
/// that it is the last run's; that its keys stay but work only while it runs; and that its MCP
/// endpoint is reached from this machine only (it listens on loopback), not from a phone.
#[tokio::test]
async fn what_the_demo_tells_a_person_is_true_of_what_it_keeps_and_who_reaches_it() {
    let home = scratch("words");
    let first = for_a_person(&home, &[]).await;
    assert!(
        first.said.contains("These are kept for the next run"),
        "{}",
        first.said
    );
    assert!(
        first
            .said
            .contains("work only while it runs: nothing else accepts them")
    );
    assert!(
        first
            .said
            .contains("only a client on this machine reaches it"),
        "{}",
        first.said
    );
    assert!(
        !first.said.contains("assistant on this machine") && !first.said.contains("deleted"),
        "{}",
        first.said
    );
    drop(first);
    let second = for_a_person(&home, &[]).await;
    assert!(
        second
            .said
            .contains("The address, pin and key files are the last run's"),
        "{}",
        second.said
    );
}
