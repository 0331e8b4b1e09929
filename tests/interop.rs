//! Independent clients: the official Python MCP SDK (PyPI `mcp`, pinned in
//! tests/interop/requirements.txt, installed by this test into a venv of its own) against the real
//! binary, over stdio and over HTTPS with a bearer key, in its auto mode (2026-07-28) and its
//! legacy mode (2025-11-25). F13-R6, F13-R8.

// Test code stops at the first surprise, and reaches the server and the stack as any client would.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_types,
    clippy::disallowed_methods
)]

#[path = "support/demo.rs"]
mod demo;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use demo::{DemoStack, target_dir};
use serde_json::Value;

const CLIENT_LIMIT: Duration = Duration::from_secs(120);

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

/// The venv's Python, made (once, and again when the pinned requirements change) by this test.
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = target_dir().join("interop-venv");
        let python = venv.join("bin/python");
        let requirements = interop_dir().join("requirements.txt");
        let wanted = std::fs::read_to_string(&requirements).expect("the pinned requirements");
        let installed = venv.join("installed-requirements.txt");
        if std::fs::read_to_string(&installed).is_ok_and(|done| done == wanted) && python.exists() {
            return python;
        }
        let _ = std::fs::remove_dir_all(&venv);
        let run = |program: &Path, args: &[&str]| {
            let status = std::process::Command::new(program)
                .args(args)
                .status()
                .expect("python runs");
            assert!(status.success(), "{} {args:?} failed", program.display());
        };
        run(
            Path::new("python3"),
            &["-m", "venv", &venv.display().to_string()],
        );
        let requirements = requirements.display().to_string();
        run(
            &python,
            &[
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
                &requirements,
            ],
        );
        std::fs::write(&installed, wanted).expect("note what is installed");
        python
    })
}

async fn python_client(args: &[&str]) -> Value {
    let python = python();
    let mut command = tokio::process::Command::new(python);
    command
        .arg(interop_dir().join("client.py"))
        .args(args)
        .kill_on_drop(true);
    let output = tokio::time::timeout(CLIENT_LIMIT, command.output())
        .await
        .expect("the Python client finishes")
        .expect("it runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the Python client failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

fn assert_acted(seen: &Value) {
    let act = &seen["act"];
    assert!(
        act["offer"].as_str().is_some_and(|offer| !offer.is_empty()),
        "{seen}"
    );
    assert_eq!(act["without_offer"]["is_error"], true);
    assert!(
        act["without_offer"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Call rehearse_downloads_pause first")
    );
    assert_eq!(act["with_offer"]["is_error"], false, "{seen}");
    assert_eq!(act["with_offer"]["data"]["state"], "finished", "{seen}");
    assert_eq!(
        act["with_offer"]["data"]["answer"]["data"]["clients"][0]["now"], "stopped",
        "{seen}"
    );
}

fn assert_read(seen: &Value, tools: usize) {
    assert_eq!(seen["server"], "lemonfiber-mcp");
    assert_eq!(
        seen["tools"].as_array().map(Vec::len),
        Some(tools),
        "{seen}"
    );
    assert_eq!(seen["read"]["is_error"], false, "{seen}");
    assert!(
        seen["read"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("[lemonfiber stack data "),
        "{seen}"
    );
    assert_eq!(seen["first_tool_annotations"]["readOnlyHint"], true);
}

#[tokio::test]
async fn the_python_sdk_over_stdio_in_auto_and_legacy_modes() {
    let demo = DemoStack::start().await;
    let binary = demo::BINARY;
    let env = [
        format!("LEMONFIBER_ADDRESS={}", demo.address),
        format!("LEMONFIBER_PIN={}", demo.pin),
        format!("LEMONFIBER_KEY_FILE={}", demo.act_key_file),
    ];
    for (mode, protocol) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        demo.control("move").await;
        let mut args = vec!["--mode", mode, "--act", "--command", binary];
        for pair in &env {
            args.extend(["--env", pair.as_str()]);
        }
        let seen = python_client(&args).await;
        assert_eq!(seen["protocol"], protocol, "{seen}");
        assert_read(&seen, 49);
        assert_acted(&seen);
        assert!(
            seen["resources"]
                .as_array()
                .is_some_and(|resources| resources.len() == 35)
        );
    }
}

#[tokio::test]
async fn the_python_sdk_over_https_with_a_bearer_key_in_auto_and_legacy_modes() {
    let demo = DemoStack::start().await;
    let trust = certificate_of(&demo);
    for (mode, protocol) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let seen = python_client(&[
            "--mode",
            mode,
            "--act",
            "--url",
            &demo.mcp_url,
            "--key-file",
            &demo.act_key_file,
            "--trust",
            &trust,
        ])
        .await;
        assert_eq!(seen["protocol"], protocol, "{seen}");
        assert_read(&seen, 49);
        assert_acted(&seen);
    }
}

#[tokio::test]
async fn two_clients_with_different_keys_at_once_each_get_their_own_tools() {
    let demo = DemoStack::start().await;
    let trust = certificate_of(&demo);
    let read = [
        "--mode",
        "legacy",
        "--url",
        &demo.mcp_url,
        "--key-file",
        &demo.read_key_file,
        "--trust",
        &trust,
    ];
    let member = [
        "--mode",
        "auto",
        "--url",
        &demo.mcp_url,
        "--key-file",
        &demo.member_key_file,
        "--trust",
        &trust,
    ];
    let (read, member) = tokio::join!(python_client(&read), python_client(&member));
    assert_read(&read, 39);
    assert_eq!(
        member["tools"],
        serde_json::json!([
            "read_held",
            "read_held_by_id",
            "read_held_by_id_backdrop",
            "read_held_by_id_poster",
            "read_playing",
            "read_requests",
            "read_watching"
        ])
    );
    assert_eq!(member["read"]["kind"], "household");
}

/// The demo's MCP certificate, which the demo keeps beside its keys.
fn certificate_of(demo: &DemoStack) -> String {
    let keys = Path::new(&demo.read_key_file)
        .parent()
        .expect("the key folder");
    keys.join("mcp/server-certificate.pem")
        .display()
        .to_string()
}
