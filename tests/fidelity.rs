//! The real `lemonfiber-mcp stdio` against the demo stack answering in the core's own shapes
//! (issue 9): every read's output schema, checked with a JSON Schema validator against what the
//! server hands over; parameters typed as the core types them; refusals told apart by status and
//! code; acts sent under an `Idempotency-Key`; a title's images handed over as images.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/mcp.rs"]
mod mcp;

use base64::Engine as _;
use demo::DemoStack;
use mcp::{connected, text_of, tool_named, unframe};
use rmcp::model::{CallToolResult, Tool};
use serde_json::{Value, json};

/// The read tools whose answer the contract gives a kind: every JSON read but the logs.
fn reads_with_a_kind() -> Vec<String> {
    reads_of(|get| {
        get["x-lemonfiber-kinds"]
            .as_array()
            .is_some_and(|kinds| !kinds.is_empty())
            && get["responses"]["2XX"]["content"]
                .get("application/json")
                .is_some()
    })
}

/// The contract's reads that `chosen` picks, by tool name.
fn reads_of(chosen: impl Fn(&Value) -> bool) -> Vec<String> {
    let contract: Value =
        serde_json::from_str(include_str!("../contract/openapi.json")).expect("the contract");
    contract["paths"]
        .as_object()
        .expect("paths")
        .values()
        .filter_map(|item| item.get("get"))
        .filter(|get| {
            get["tags"]
                .as_array()
                .is_some_and(|tags| tags.contains(&json!("read")))
        })
        .filter(|get| chosen(get))
        .filter_map(|get| get["operationId"].as_str().map(str::to_owned))
        .collect()
}

fn validates(tool: &Tool, result: &CallToolResult) {
    let schema = Value::Object(
        tool.output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{} has an output schema", tool.name))
            .as_ref()
            .clone(),
    );
    let validator = jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|error| panic!("{}'s output schema compiles: {error}", tool.name));
    let structured = result.structured_content.as_ref().unwrap_or_else(|| {
        panic!(
            "{} answers structured content: {}",
            tool.name,
            text_of(result)
        )
    });
    let errors: Vec<String> = validator
        .iter_errors(structured)
        .map(|error| format!("{} at {}", error.schema_path(), error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", tool.name);
}

/// Every read has an `outputSchema` (F13-R14's structured content, described), and every answer
/// the demo gives it, for the operator and for a member, validates against it.
#[tokio::test]
async fn every_reads_structured_content_validates_against_its_output_schema() {
    let demo = DemoStack::start().await;
    let operator = connected(&demo, &demo.act_key_file).await;
    let tools = operator.client.list_all_tools().await.expect("tools/list");
    let held = operator.call("read_held", json!({})).await;
    let id = held.structured_content.as_ref().expect("structured")["data"]["holdings"][0]["id"]
        .as_str()
        .expect("a title's id")
        .to_owned();
    let kinded = reads_with_a_kind();
    assert!(kinded.len() >= 35, "{kinded:?}");
    let mut checked = 0;
    for name in &kinded {
        let tool = tool_named(&tools, name);
        let mut calls = vec![json!({})];
        match name.as_str() {
            "read_held_by_id" => calls = vec![json!({"id": id})],
            "read_explain" => calls.push(json!({"word": "seed"})),
            "read_held" => calls.push(json!({"most": 1})),
            _ => {}
        }
        for arguments in calls {
            let result = operator.call(name, arguments).await;
            assert_eq!(result.is_error, Some(false), "{name}: {}", text_of(&result));
            validates(tool, &result);
            checked += 1;
        }
    }
    assert!(checked > kinded.len());
    // Issue 29: the reads that answer lines, a file or an image publish the structured content
    // the server makes of them, and what they hand over validates against it.
    for (name, arguments) in [
        ("read_logs", json!({})),
        ("read_logs", json!({"tail": 1})),
        (
            "read_bundle_by_name",
            json!({"name": "support-2026-11-18.tar"}),
        ),
        ("read_held_by_id_poster", json!({"id": id})),
        ("read_held_by_id_backdrop", json!({"id": id})),
    ] {
        let result = operator.call(name, arguments).await;
        assert_eq!(result.is_error, Some(false), "{name}: {}", text_of(&result));
        validates(tool_named(&tools, name), &result);
        let structured = result.structured_content.as_ref().expect("structured");
        let form = if name == "read_logs" { "lines" } else { "file" };
        assert!(structured.get(form).is_some(), "{name}: {structured}");
    }
    // The published schemas say something: a file of another shape does not pass them.
    let bundle = tool_named(&tools, "read_bundle_by_name");
    let schema = Value::Object(
        bundle
            .output_schema
            .as_ref()
            .expect("a schema")
            .as_ref()
            .clone(),
    );
    let validator = jsonschema::draft202012::new(&schema).expect("compiles");
    assert!(!validator.is_valid(&json!({"lines": []})));
    assert!(!validator.is_valid(&json!({"file": {"size_bytes": "12"}})));

    // Every read of the contract lists an outputSchema: one added without fails here.
    let every_read = reads_of(|_| true);
    assert_eq!(every_read.len(), 39, "{every_read:?}");
    let without: Vec<&String> = every_read
        .iter()
        .filter(|name| tool_named(&tools, name).output_schema.is_none())
        .collect();
    assert!(
        without.is_empty(),
        "reads without an outputSchema: {without:?}"
    );

    let member = connected(&demo, &demo.member_key_file).await;
    let offered = member.client.list_all_tools().await.expect("tools/list");
    // A read the demo has not switched on for a member answers a refusal, not data
    // (tests/descriptions.rs holds that); the rest are checked against their schemas.
    let switched_on = |tool: &&rmcp::model::Tool| {
        !tool
            .description
            .as_deref()
            .unwrap_or_default()
            .contains("This is not switched on yet")
    };
    for tool in offered
        .iter()
        .filter(|tool| tool.output_schema.is_some())
        .filter(switched_on)
    {
        let arguments = if tool.input_schema["properties"].get("id").is_some() {
            json!({"id": id})
        } else {
            json!({})
        };
        let result = member.call(&tool.name, arguments).await;
        assert_eq!(
            result.is_error,
            Some(false),
            "{}: {}",
            tool.name,
            text_of(&result)
        );
        validates(tool, &result);
    }
}

/// `defaults` is a boolean and `most`, `tail` and `season` whole numbers, in every input schema
/// and on the wire.
#[tokio::test]
async fn parameters_are_typed_as_the_core_types_them() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file).await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    let type_of = |tool: &str, parameter: &str| {
        tool_named(&tools, tool).input_schema["properties"][parameter]["type"].clone()
    };
    assert_eq!(type_of("read_requests", "defaults"), "boolean");
    assert_eq!(type_of("read_held", "defaults"), "boolean");
    assert_eq!(type_of("read_held", "most"), "integer");
    assert_eq!(type_of("read_watching", "most"), "integer");
    assert_eq!(type_of("read_logs", "tail"), "integer");
    assert_eq!(type_of("read_trace", "season"), "integer");

    // The core's meaning, not a guess from the word: wait lets downloads finish before the stop.
    let wait = &tool_named(&tools, "rehearse_update").input_schema["properties"]["wait"];
    assert_eq!(wait["type"], "boolean");
    assert!(
        wait["description"]
            .as_str()
            .is_some_and(|words| words.contains("downloading") && words.contains("stop")),
        "{wait}"
    );

    let defaults = server
        .call("read_requests", json!({"defaults": true}))
        .await;
    assert_eq!(defaults.is_error, Some(false), "{}", text_of(&defaults));
    let most = server.call("read_held", json!({"most": 2})).await;
    assert_eq!(most.is_error, Some(false), "{}", text_of(&most));
    let sent: Vec<String> = demo
        .requests()
        .await
        .iter()
        .filter_map(|request| request["query"].as_str().map(str::to_owned))
        .collect();
    assert!(sent.contains(&"defaults=true".to_owned()), "{sent:?}");
    assert!(sent.contains(&"most=2".to_owned()), "{sent:?}");

    for (tool, arguments, named) in [
        ("read_held", json!({"most": "2"}), "most"),
        ("read_held", json!({"most": -1}), "most"),
        ("read_requests", json!({"defaults": "true"}), "defaults"),
    ] {
        let result = server.call(tool, arguments.clone()).await;
        assert_eq!(result.is_error, Some(true), "{arguments}");
        assert!(text_of(&result).contains(named), "{}", text_of(&result));
    }
}

/// ADMIT-11 is a setup problem, not a refused key: said as such, and the key is kept.
#[tokio::test]
async fn a_connection_the_stack_does_not_count_as_pinned_is_a_setup_problem() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.read_key_file).await;
    assert_eq!(
        server.call("read_status", json!({})).await.is_error,
        Some(false)
    );
    demo.control("not-pinned").await;
    let refused = server.call("read_status", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    let framed = unframe(&text_of(&refused));
    assert!(
        framed.sentence.contains("setup problem") && framed.sentence.contains("ADMIT-11"),
        "{}",
        framed.sentence
    );
    assert_eq!(framed.data["problem"]["code"], "ADMIT-11");
    assert!(framed.data["problem"]["remedies"][0]["action"].is_string());
    assert!(
        framed.data["problem"].get("detail").is_none(),
        "the detail is withheld"
    );
    let again = server.call("read_status", json!({})).await;
    assert_eq!(
        again.is_error,
        Some(false),
        "the key is still used: {}",
        text_of(&again)
    );
}

/// Every act goes with an `Idempotency-Key`: one made from the offer for an act that was
/// rehearsed, a fresh one for one that was not; a rehearsal goes without.
#[tokio::test]
async fn every_act_is_sent_under_an_idempotency_key_made_from_its_offer() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file).await;
    let mut offers = Vec::new();
    for _ in 0..2 {
        let rehearsed = server.call("rehearse_downloads_pause", json!({})).await;
        assert_eq!(rehearsed.is_error, Some(false), "{}", text_of(&rehearsed));
        let offer = rehearsed.structured_content.as_ref().expect("structured")["data"]["offer"]
            .as_str()
            .expect("an offer")
            .to_owned();
        offers.push(offer);
    }
    let acted = server
        .call("downloads_pause", json!({"offer": offers[1]}))
        .await;
    assert_eq!(acted.is_error, Some(false), "{}", text_of(&acted));
    let diagnosed = server.call("diagnose", json!({})).await;
    assert_eq!(diagnosed.is_error, Some(false), "{}", text_of(&diagnosed));

    let posts: Vec<Value> = demo
        .requests()
        .await
        .into_iter()
        .filter(|request| request["method"] == "POST")
        .collect();
    let keys: Vec<(String, Value)> = posts
        .iter()
        .map(|post| {
            (
                post["path"].as_str().unwrap_or_default().to_owned(),
                post["idempotency_key"].clone(),
            )
        })
        .collect();
    let rehearsals: Vec<&Value> = posts
        .iter()
        .filter(|post| post["body"]["dry_run"] == true)
        .collect();
    assert_eq!(rehearsals.len(), 2);
    assert!(
        rehearsals
            .iter()
            .all(|post| post["idempotency_key"].is_null()),
        "{keys:?}"
    );
    let acts: Vec<&str> = posts
        .iter()
        .filter(|post| post["body"]["dry_run"] != true)
        .filter_map(|post| post["idempotency_key"].as_str())
        .collect();
    assert_eq!(acts.len(), 2, "{keys:?}");
    for key in &acts {
        assert!(
            key.len() <= 255 && key.bytes().all(|b| b.is_ascii_graphic()),
            "{key}"
        );
        assert!(key.starts_with("lfmcp-"), "{key}");
        assert!(
            !offers.iter().any(|offer| key.contains(offer.as_str())),
            "the key shows nothing of the offer"
        );
    }
    assert_ne!(acts[0], acts[1]);
}

/// A title's poster reaches a member as image content, its size capped, never inside the text.
#[tokio::test]
async fn a_titles_poster_and_backdrop_are_handed_over_as_images() {
    let demo = DemoStack::start().await;
    let member = connected(&demo, &demo.member_key_file).await;
    let held = member.call("read_held", json!({})).await;
    let id = held.structured_content.as_ref().expect("structured")["data"]["holdings"][0]["id"]
        .as_str()
        .expect("a title's id")
        .to_owned();
    for tool in ["read_held_by_id_poster", "read_held_by_id_backdrop"] {
        let result = member.call(tool, json!({"id": id})).await;
        assert_eq!(result.is_error, Some(false), "{tool}: {}", text_of(&result));
        let text = text_of(&result);
        let image = result
            .content
            .iter()
            .find_map(|content| content.as_image())
            .unwrap_or_else(|| panic!("{tool} answers an image: {text}"));
        assert_eq!(image.mime_type, "image/png");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .expect("base64");
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert!(!text.contains(&image.data), "the image is not in the text");
        let framed = unframe(&text);
        assert_eq!(framed.data["file"]["media_type"], "image/png");
        assert_eq!(framed.data["file"]["size_bytes"], bytes.len());
    }
}
