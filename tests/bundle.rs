//! The MCP Bundle for Claude Desktop (issue 30): `packaging/mcpb/build` makes it from this build's
//! binary with the official mcpb CLI (from npm, pinned here), which validates the manifest and
//! packs it; the CLI unpacks it again; and the official Python MCP SDK starts the server exactly
//! as the manifest says, with the settings a person would give filled in from the demo, and lists
//! and reads.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/python.rs"]
mod python;
#[path = "support/registry.rs"]
mod registry;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use demo::{BINARY, DemoStack, target_dir};
use python::{interop_dir, python};
use registry::schema_problems;
use serde_json::{Value, json};
use sha2::Digest as _;

/// The official bundle CLI, `@anthropic-ai/mcpb` from npm, at the version these tests were made
/// with.
const MCPB_CLI: &str = "@anthropic-ai/mcpb@2.1.2";

/// The CLI, installed once into the target folder.
fn mcpb() -> &'static Path {
    static CLI: OnceLock<PathBuf> = OnceLock::new();
    CLI.get_or_init(|| {
        let prefix = target_dir().join("mcpb-cli");
        let cli = prefix.join("node_modules/.bin/mcpb");
        let installed = prefix.join("installed");
        if std::fs::read_to_string(&installed).ok().as_deref() != Some(MCPB_CLI) {
            let status = Command::new("npm")
                .args(["install", "--prefix"])
                .arg(&prefix)
                .args(["--no-save", "--no-audit", "--no-fund", "--silent", MCPB_CLI])
                .status()
                .expect("npm runs");
            assert!(status.success(), "npm install {MCPB_CLI}");
            std::fs::write(&installed, MCPB_CLI).expect("note what is installed");
        }
        cli
    })
}

fn run(command: &mut Command) -> String {
    let output = command.output().expect("it runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?}: {said}");
    said
}

/// A fresh folder of this test's own, under the target folder.
fn scratch(name: &str) -> PathBuf {
    let folder = target_dir()
        .join("bundle-test")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("scratch");
    folder
}

#[tokio::test]
async fn the_bundle_packs_unpacks_and_serves_as_its_manifest_says() {
    let built = target_dir().join("lemonfiber-mcp.mcpb");
    let said = run(Command::new(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("packaging/mcpb/build"),
    )
    .env("MCPB", mcpb())
    .arg("linux")
    .arg(bundled_binary())
    .arg(&built));
    assert!(said.contains("validation passes"), "{said}");

    let unpacked = scratch("unpacked");
    run(Command::new(mcpb())
        .arg("unpack")
        .arg(&built)
        .arg(&unpacked));
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(unpacked.join("manifest.json")).expect("the manifest"),
    )
    .expect("JSON");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["compatibility"]["platforms"], json!(["linux"]));
    assert_eq!(manifest["server"]["mcp_config"]["args"], json!(["stdio"]));
    let settings = &manifest["user_config"];
    assert_eq!(settings["key"]["sensitive"], true, "the keychain keeps it");
    assert_eq!(
        settings["link"]["sensitive"], true,
        "the keychain keeps the link"
    );
    for optional in ["link", "address", "pin", "key", "key_file"] {
        assert_eq!(settings[optional]["required"], false, "{optional}");
    }
    assert_eq!(settings["key_file"]["type"], "file");

    let demo = DemoStack::start().await;
    let home = scratch("home");
    let key = std::fs::read_to_string(&demo.act_key_file).expect("the act key");
    let given = json!({"address": demo.address, "pin": demo.pin, "key": key.trim()});
    let (seen, stdout) = served(&unpacked, &home, &given, "read_status").await;
    let tools = seen["tools"].as_array().expect("tools");
    assert!(
        tools.iter().any(|tool| tool == "restart"),
        "an act key's tools: {tools:?}"
    );
    assert!(!stdout.contains(key.trim()), "the key is never said back");

    // A key link alone, as a household member is handed one: traded the first time, and the key
    // it brought used again the next (the claim is spent by then).
    let link = json!({"link": demo.link("member")});
    for start in ["first", "next"] {
        let (seen, _) = served(&unpacked, &home, &link, "read_requests").await;
        let tools = seen["tools"].as_array().expect("tools");
        assert!(
            !tools.iter().any(|tool| tool == "restart"),
            "a member key's tools at the {start} start: {tools:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&unpacked);
    let _ = std::fs::remove_dir_all(&home);

    // The registry entry of a release names this bundle with its digest, and still holds to the
    // registry's schema.
    let completed = scratch("registry").join("server.json");
    let base = "https://github.com/lemonfiber/lemonfiber-mcp/releases/download/v0.1.0";
    run(Command::new(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("packaging/registry/complete"),
    )
    .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("server.json"))
    .arg(&completed)
    .arg(base)
    .arg(&built));
    let entry: Value =
        serde_json::from_slice(&std::fs::read(&completed).expect("completed")).expect("JSON");
    let bundle = entry["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|package| package["registryType"] == "mcpb")
        .expect("the bundle is named")
        .clone();
    let digest = hex::encode(sha2::Sha256::digest(
        std::fs::read(&built).expect("the bundle"),
    ));
    assert_eq!(bundle["fileSha256"], digest);
    assert_eq!(bundle["identifier"], format!("{base}/lemonfiber-mcp.mcpb"));
    let problems = schema_problems(&[&completed]);
    assert_eq!(
        problems[completed.display().to_string()],
        json!([]),
        "{problems}"
    );
}

/// The binary the bundle holds: this build's, or the one `LEMONFIBER_BUNDLED_BINARY` names (CI
/// bundles the static musl binary a release ships, too).
fn bundled_binary() -> PathBuf {
    std::env::var_os("LEMONFIBER_BUNDLED_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(BINARY))
}

/// What the official Python SDK saw of the unpacked bundle's server, started as its manifest says
/// with `given` for its settings and `home` for the person's home folder, calling `read`; and what
/// it printed.
async fn served(unpacked: &Path, home: &Path, given: &Value, read: &str) -> (Value, String) {
    let output = tokio::process::Command::new(python())
        .arg(interop_dir().join("bundle.py"))
        .arg("--bundle")
        .arg(unpacked)
        .args(["--read", read])
        .env("HOME", home)
        .env("LEMONFIBER_BUNDLE_SETTINGS", given.to_string())
        .kill_on_drop(true)
        .output()
        .await
        .expect("the Python client runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(seen["server"], "lemonfiber-mcp");
    assert_eq!(seen["read"]["is_error"], false, "{seen}");
    (seen, stdout)
}

/// The manifest kept in the repository is the version Cargo.toml builds, and the CLI takes it.
#[test]
fn the_manifest_is_this_version_and_the_cli_validates_it() {
    let template = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("packaging/mcpb/manifest.json");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(&template).expect("the manifest")).expect("JSON");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    let said = run(Command::new(mcpb()).arg("validate").arg(&template));
    assert!(said.contains("validation passes"), "{said}");
}
