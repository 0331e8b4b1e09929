//! The official Python MCP SDK (PyPI `mcp`, pinned in tests/interop/requirements.txt), installed by
//! the tests into a venv of their own, and the scripts in tests/interop that drive the real binary
//! with it, each printing one JSON object of what it saw.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::demo::target_dir;

const CLIENT_LIMIT: Duration = Duration::from_secs(120);

pub fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

/// The venv's Python, made (once, and again when the pinned requirements change) by this test.
pub fn python() -> &'static Path {
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

pub async fn python_client(args: &[&str]) -> Value {
    python_script("client.py", args).await
}

pub async fn python_script(script: &str, args: &[&str]) -> Value {
    let python = python();
    let mut command = tokio::process::Command::new(python);
    command
        .arg(interop_dir().join(script))
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

/// `tools` tools were listed, and the read answered the stack's data, framed.
pub fn assert_listed_and_read(seen: &Value, tools: usize) {
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
}
