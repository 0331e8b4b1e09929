//! The official MCP Registry's schema for `server.json` (packaging/registry), applied with the
//! jsonschema package the interop venv pins.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::python::{interop_dir, python};

pub fn repository(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The problems the registry's schema finds in each entry, by file.
pub fn schema_problems(entries: &[&Path]) -> Value {
    let output = std::process::Command::new(python())
        .arg(interop_dir().join("registry.py"))
        .arg(repository("packaging/registry/server.schema.json"))
        .args(entries)
        .output()
        .expect("the validator runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON object")
}
