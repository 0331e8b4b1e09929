//! The tools come from the contract (F13-R2): a copy of this project, changed as a maintainer
//! would change it, is built by cargo, and its build and its server show the change.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/mcp.rs"]
mod mcp;

use std::path::{Path, PathBuf};
use std::process::Output;

use demo::{Scratch, target_dir};
use serde_json::{Value, json};

/// The copy builds under its own package name in this target directory, so it reuses every
/// compiled dependency and never overwrites the binary the other tests run.
const PROBE: &str = "lemonfiber-mcp-probe";

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("make the copy's folder");
    for entry in std::fs::read_dir(from).expect("read the folder") {
        let entry = entry.expect("an entry");
        let destination = to.join(entry.file_name());
        if entry.file_type().expect("a type").is_dir() {
            copy_dir(&entry.path(), &destination);
        } else {
            std::fs::copy(entry.path(), destination).expect("copy a file");
        }
    }
}

/// A copy of the sources with the package renamed.
fn copy_of_project(into: &Path) {
    for folder in ["src", "contract", "benches"] {
        copy_dir(&project().join(folder), &into.join(folder));
    }
    std::fs::copy(project().join("build.rs"), into.join("build.rs")).expect("copy build.rs");
    std::fs::copy(project().join("Cargo.lock"), into.join("Cargo.lock")).expect("copy Cargo.lock");
    let manifest = std::fs::read_to_string(project().join("Cargo.toml")).expect("Cargo.toml");
    let manifest = manifest
        .replacen(
            "name = \"lemonfiber-mcp\"",
            &format!("name = \"{PROBE}\""),
            2,
        )
        .replace(
            "CARGO_BIN_EXE_lemonfiber-mcp",
            "CARGO_BIN_EXE_lemonfiber-mcp-probe",
        );
    std::fs::write(into.join("Cargo.toml"), manifest).expect("write Cargo.toml");
}

fn cargo_build(copy: &Path) -> Output {
    std::process::Command::new(env!("CARGO"))
        .args(["build", "--offline", "--bin", PROBE])
        .current_dir(copy)
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .expect("cargo runs")
}

fn edit(path: &Path, change: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).expect("read for editing");
    std::fs::write(path, change(text)).expect("write the edit");
}

#[tokio::test]
async fn a_read_added_to_the_contract_becomes_a_tool_and_resource_of_the_built_server() {
    let copy = Scratch::at(
        std::env::temp_dir().join(format!("lemonfiber-generation-{}", std::process::id())),
    );
    copy_of_project(&copy);

    // What the build refuses (a tool without words, a household read without household words)
    // is the generator's, tested on its own in generator.rs; here the whole build shows a change.
    let words = copy.join("src/words.toml");
    // Adding a read to the contract, with words, adds its tool and resource and nothing else.
    edit(&copy.join("contract/openapi.json"), |text| {
        let mut contract: Value = serde_json::from_str(&text).expect("contract");
        let mut read = contract["paths"]["/api/status"].clone();
        read["get"]["operationId"] = json!("read_queue");
        read["get"]["parameters"] = json!([{
            "name": "form", "in": "query", "required": false, "style": "form", "explode": true,
            "schema": {"type": "array", "items": {"type": "string"}}
        }]);
        contract["paths"]["/api/queue"] = read;
        serde_json::to_string_pretty(&contract).expect("contract text")
    });
    edit(&words, |text| {
        text + "\n[tools.read_queue]\ntitle = \"Queue\"\noperator = \"What the stack will fetch next, in order.\"\n"
    });
    let built = cargo_build(&copy);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );

    // The copy's own demo stack serves the contract it was built from.
    let binary = target_dir().join("debug").join(PROBE);
    let stack = demo::DemoStack::start_binary(&binary, &[]).await;
    let server = mcp::Stdio::start_binary(
        &binary,
        &[
            ("LEMONFIBER_ADDRESS", &stack.address),
            ("LEMONFIBER_PIN", &stack.pin),
            ("LEMONFIBER_KEY_FILE", &stack.read_key_file),
        ],
    )
    .await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    let queue = tools.iter().find(|tool| tool.name == "read_queue");
    let queue = queue.unwrap_or_else(|| {
        panic!(
            "the new read is a tool: {:?}",
            tools.iter().map(|t| &t.name).collect::<Vec<_>>()
        )
    });
    assert_eq!(
        queue.description.as_deref(),
        Some("What the stack will fetch next, in order.")
    );
    assert_eq!(queue.input_schema["properties"]["form"]["type"], "array");
    let resources = server
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    assert!(
        resources
            .iter()
            .any(|resource| resource.uri == "lemonfiber://read/queue")
    );
}
