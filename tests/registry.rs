//! The entry for the official MCP Registry (issue 30): `server.json` is this version, names the
//! image the release pushes (which names it back, as the registry checks), and holds to the
//! registry's schema; and a schema the entry breaks is found to be broken.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/python.rs"]
mod python;
#[path = "support/registry.rs"]
mod registry;

use registry::{repository, schema_problems};
use serde_json::Value;

#[test]
fn the_entry_is_this_version_names_the_image_and_holds_to_the_schema() {
    let entry_file = repository("server.json");
    let entry: Value =
        serde_json::from_slice(&std::fs::read(&entry_file).expect("server.json")).expect("JSON");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(entry["version"], version);
    let image = &entry["packages"][0];
    assert_eq!(image["registryType"], "oci");
    assert_eq!(
        image["identifier"],
        format!("ghcr.io/lemonfiber/lemonfiber-mcp:{version}")
    );
    let name = entry["name"].as_str().expect("a name");
    let containerfile =
        std::fs::read_to_string(repository("Containerfile")).expect("Containerfile");
    assert!(
        containerfile.contains(&format!(
            "LABEL io.modelcontextprotocol.server.name=\"{name}\""
        )),
        "the image names {name}"
    );
    // The variable in the address it serves on is one of the settings the entry asks for.
    let asked: Vec<&str> = image["environmentVariables"]
        .as_array()
        .expect("settings")
        .iter()
        .filter_map(|setting| setting["name"].as_str())
        .collect();
    let url = image["transport"]["url"].as_str().expect("a URL");
    assert!(
        asked
            .iter()
            .any(|setting| url.contains(&format!("{{{setting}}}"))),
        "{url}"
    );

    let problems = schema_problems(&[&entry_file]);
    assert_eq!(
        problems[entry_file.display().to_string()],
        serde_json::json!([]),
        "{problems}"
    );
}

/// The schema is not a formality: an entry with a name the registry refuses, an image given a
/// version beside its tag, an address naming a setting the entry does not ask for, a bundle
/// without its digest, and an older schema are all found.
#[test]
fn the_schema_finds_what_the_registry_would_refuse() {
    let mut entry: Value =
        serde_json::from_slice(&std::fs::read(repository("server.json")).expect("server.json"))
            .expect("JSON");
    entry["name"] = Value::from("lemonfiber mcp");
    entry["$schema"] =
        Value::from("https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json");
    entry["packages"][0]["version"] = Value::from("0.1.0");
    entry["packages"][0]["transport"]["url"] = Value::from("https://{HOST}:9443/mcp");
    entry["packages"]
        .as_array_mut()
        .expect("packages")
        .push(serde_json::json!({
            "registryType": "mcpb",
            "identifier": "https://github.com/lemonfiber/lemonfiber-mcp/releases/download/v0/x.mcpb",
            "transport": {"type": "stdio"}
        }));
    let broken = demo::target_dir().join(format!("registry-broken-{}.json", std::process::id()));
    std::fs::write(&broken, entry.to_string()).expect("written");
    let problems = schema_problems(&[&broken]);
    let _ = std::fs::remove_file(&broken);
    let found = problems[broken.display().to_string()].to_string();
    for expected in [
        "name: ",
        "$schema: not the schema",
        "packages/0: an image is named by its tag alone, without version",
        "packages/0/transport/url: {HOST} is no setting",
        "packages/1: a bundle needs its fileSha256",
    ] {
        assert!(found.contains(expected), "{expected} in {found}");
    }
}
