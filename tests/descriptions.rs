//! A read's description agrees with the stack and with its answer (F13-R3): the "not turned on"
//! note is there exactly when the stack's capabilities say `unconfigured` for this key's path, a
//! read described as not turned on answers no data, and one that answers with data is not
//! described as off. Held for every read each demo key is offered, against the real binary and
//! the demo stack.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/https.rs"]
mod https;
#[path = "support/mcp.rs"]
mod mcp;

use std::collections::BTreeMap;

use demo::DemoStack;
use mcp::{connected, text_of, unframe};
use serde_json::{Map, Value, json};

/// The two notes, as `src/words.toml` writes them.
fn notes() -> [String; 2] {
    let words = include_str!("../src/words.toml");
    let note = |name: &str| {
        words
            .lines()
            .find_map(|line| {
                let (key, value) = line.split_once('=')?;
                (key.trim() == name).then(|| value.trim().trim_matches('"').to_owned())
            })
            .unwrap_or_else(|| panic!("words.toml has {name}"))
    };
    [note("unconfigured"), note("unconfigured_household")]
}

/// Each read tool's path, as the contract names it (and the capabilities read names it).
fn read_paths() -> BTreeMap<String, String> {
    let contract: Value =
        serde_json::from_str(include_str!("../contract/openapi.json")).expect("the contract");
    contract["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .filter_map(|(path, item)| {
            let operation = item["get"]["operationId"].as_str()?;
            Some((operation.to_owned(), path.clone()))
        })
        .collect()
}

/// What the demo stack's capabilities say of each path for `key`, asked of it directly.
async fn capabilities(demo: &DemoStack, key: &str) -> Map<String, Value> {
    let answer: Value = https::pinned_client(&demo.pin)
        .get(format!("{}/api/capabilities", demo.address))
        .header("X-Lemonfiber-Token", key)
        .send()
        .await
        .expect("the capabilities read")
        .json()
        .await
        .expect("JSON");
    answer["data"]["capabilities"]
        .as_object()
        .expect("capabilities")
        .clone()
}

/// Arguments that make a read ask the stack for something it has.
fn arguments_for(tool: &rmcp::model::Tool, held_id: &str) -> Value {
    let mut arguments = Map::new();
    let required = tool.input_schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let value = match name {
            "id" => held_id,
            "name" => "support-2026-11-18.tar",
            other => panic!("{}: no value known for {other}", tool.name),
        };
        arguments.insert(name.to_owned(), Value::from(value));
    }
    Value::Object(arguments)
}

#[tokio::test]
async fn every_reads_description_agrees_with_the_capabilities_and_the_answer_f13_r3() {
    let demo = DemoStack::start().await;
    let notes = notes();
    let paths = read_paths();
    let mut described_off = 0;
    for key_file in [
        &demo.read_key_file,
        &demo.act_key_file,
        &demo.member_key_file,
    ] {
        let key = demo.key(key_file);
        let states = capabilities(&demo, &key).await;
        let server = connected(&demo, key_file).await;
        let tools = server.client.list_all_tools().await.expect("tools/list");
        let held = server.call("read_held", json!({})).await;
        let held_id = unframe(&text_of(&held)).data["data"]["holdings"][0]["id"]
            .as_str()
            .expect("a title's id")
            .to_owned();
        for tool in tools.iter().filter(|tool| tool.name.starts_with("read_")) {
            let name = tool.name.to_string();
            let path = paths
                .get(&name)
                .unwrap_or_else(|| panic!("{name} has a path"));
            let state = states[path].as_str().expect("a state");
            let description = tool.description.as_deref().unwrap_or_default();
            let off = notes.iter().any(|note| description.contains(note.as_str()));
            assert_eq!(
                off,
                state == "unconfigured",
                "{name} ({path}, {state}) for {key_file}: {description}"
            );
            let answer = server.call(&name, arguments_for(tool, &held_id)).await;
            let answered_data = answer.is_error == Some(false);
            if off {
                described_off += 1;
                assert!(
                    !answered_data,
                    "{name} is described as not turned on and answered with data: {}",
                    text_of(&answer)
                );
                let framed = unframe(&text_of(&answer));
                assert!(
                    framed.data.get("problem").is_some() && framed.data.get("kind").is_none(),
                    "{name} answers a refusal, not the stack's data: {}",
                    text_of(&answer)
                );
            } else {
                assert!(
                    answered_data,
                    "{name} ({path}, {state}) is described as on and did not answer for {key_file}: {}",
                    text_of(&answer)
                );
            }
        }
    }
    assert!(
        described_off > 0,
        "the demo keeps a path unconfigured, so the note is exercised"
    );
}
