//! Keys, scope and states (F13-R1, R3, R7, R9, R10): what each key is offered and in whose
//! words, a key revoked mid-session, a stack that stops or changes its certificate, and secrets
//! that never show.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/mcp.rs"]
mod mcp;

use std::collections::BTreeSet;
use std::path::Path;

use demo::{DemoStack, Scratch};
use mcp::{Stdio, connected, parameter_names, text_of, tool_named, unframe};
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

const HOUSEHOLD_READS: [&str; 7] = [
    "read_held",
    "read_held_by_id",
    "read_held_by_id_backdrop",
    "read_held_by_id_poster",
    "read_playing",
    "read_requests",
    "read_watching",
];
const UNCONFIGURED: &str = "The stack has not turned this on yet";
const UNCONFIGURED_HOUSEHOLD: &str = "This is not switched on yet";
const KEY_REFUSED: &str = "The stack refused this server's key";

fn names(tools: &[rmcp::model::Tool]) -> BTreeSet<String> {
    tools.iter().map(|tool| tool.name.to_string()).collect()
}

fn description<'a>(tools: &'a [rmcp::model::Tool], name: &str) -> &'a str {
    tool_named(tools, name)
        .description
        .as_deref()
        .unwrap_or_default()
}

#[tokio::test]
async fn each_key_is_offered_what_its_capabilities_and_words_allow_f13_r3() {
    let demo = DemoStack::start().await;

    let read = connected(&demo, &demo.read_key_file).await;
    let tools = read.client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 39);
    assert!(names(&tools).iter().all(|name| name.starts_with("read_")));
    for answering in ["read_migration", "read_status", "read_playing"] {
        assert!(
            !description(&tools, answering).contains(UNCONFIGURED),
            "{answering} answers on the demo, so it is not described as off"
        );
    }

    let act = connected(&demo, &demo.act_key_file).await;
    let tools = act.client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 39 + 10, "reads, nine action tools and job");
    assert!(
        !names(&tools).contains("connection"),
        "the connection tool is for before the stack answers"
    );

    let member = connected(&demo, &demo.member_key_file).await;
    let tools = member.client.list_all_tools().await.expect("tools/list");
    assert_eq!(
        names(&tools),
        HOUSEHOLD_READS
            .iter()
            .map(|name| name.to_string())
            .collect()
    );
    assert!(description(&tools, "read_requests").starts_with("The things you have asked for"));
    assert!(description(&tools, "read_playing").starts_with("What you are playing right now"));
    assert!(
        description(&tools, "read_playing").contains(UNCONFIGURED_HOUSEHOLD),
        "the note in the household's words"
    );
    for tool in &tools {
        let words = tool.description.as_deref().unwrap_or_default();
        assert!(
            !words.contains("operator") && !words.contains("service"),
            "{}: {words}",
            tool.name
        );
    }
    let held_parameters = parameter_names(tool_named(&tools, "read_held"));
    assert_eq!(
        held_parameters,
        vec!["most"],
        "a member is offered only the parameters the household words describe"
    );
    let resources = member
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let uris: BTreeSet<&str> = resources
        .iter()
        .map(|resource| resource.uri.as_str())
        .collect();
    assert_eq!(
        uris,
        BTreeSet::from([
            "lemonfiber://read/held",
            "lemonfiber://read/playing",
            "lemonfiber://read/requests",
            "lemonfiber://read/watching"
        ])
    );
    let templates = member
        .client
        .list_all_resource_templates()
        .await
        .expect("templates");
    assert_eq!(templates.len(), 3, "a title, its poster and its backdrop");
    for technical in [
        "read_services",
        "read_logs",
        "read_config",
        "read_credentials",
        "restart",
        "read_update",
        "read_checks",
    ] {
        let refused = member.call(technical, json!({})).await;
        assert_eq!(refused.is_error, Some(true));
        assert!(
            text_of(&refused).contains("not offered to this key"),
            "{technical}"
        );
    }
}

#[tokio::test]
async fn a_key_revoked_mid_session_is_refused_by_every_tool_and_never_sent_again_f13_r9() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file).await;
    let status = server.call("read_status", json!({})).await;
    assert_eq!(status.is_error, Some(false));
    demo.control("revoke/act").await;

    for (tool, arguments) in [
        ("read_stuck", json!({})),
        ("read_status", json!({})),
        ("restart", json!({"offer": "lfo-restart-0"})),
        ("rehearse_update", json!({})),
        ("job", json!({"job": "job-0001"})),
        ("connection", json!({})),
    ] {
        let result = server.call(tool, arguments).await;
        assert_eq!(result.is_error, Some(true), "{tool}");
        let text = text_of(&result);
        assert!(
            text.contains(KEY_REFUSED) && text.contains("A new key is needed"),
            "{tool}: {text}"
        );
    }
    assert!(
        server
            .client
            .read_resource(ReadResourceRequestParams::new("lemonfiber://read/status"))
            .await
            .is_err()
    );
    let refused_sends = demo
        .requests()
        .await
        .into_iter()
        .filter(|request| request["admitted"] == false)
        .count();
    assert_eq!(
        refused_sends, 1,
        "the refused key was sent once, and never again"
    );
}

/// Where a demo listens, to start another at the same address once it is stopped. The first
/// demo is given port 0, so no port is guessed free beforehand.
fn listening_at(demo: &DemoStack) -> String {
    demo.address.trim_start_matches("https://").to_owned()
}

fn key_dir(test: &str) -> Scratch {
    Scratch::at(std::env::temp_dir().join(format!("lemonfiber-test-{test}-{}", std::process::id())))
}

async fn demo_at(address: &str, seed: &str, keys: &Path) -> DemoStack {
    DemoStack::start_with(&[
        "--listen",
        address,
        "--certificate-seed",
        seed,
        "--key-dir",
        &keys.display().to_string(),
    ])
    .await
}

#[tokio::test]
async fn before_the_stack_answers_only_the_connection_tool_is_offered() {
    let keys = key_dir("before");
    let first = demo_at("127.0.0.1:0", "1", &keys).await;
    let address = listening_at(&first);
    let (stack_address, pin, key_file) = (
        first.address.clone(),
        first.pin.clone(),
        first.read_key_file.clone(),
    );
    first.stop().await;

    let server = Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &stack_address),
        ("LEMONFIBER_PIN", &pin),
        ("LEMONFIBER_KEY_FILE", &key_file),
    ])
    .await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    assert_eq!(names(&tools), BTreeSet::from(["connection".to_owned()]));
    let not_yet = server.call("connection", json!({})).await;
    assert!(
        text_of(&not_yet).contains("The stack is unreachable"),
        "{}",
        text_of(&not_yet)
    );

    let seen = server.watcher.tools_changed();
    let _back = demo_at(&address, "1", &keys).await;
    let now = server.call("connection", json!({})).await;
    assert_eq!(now.is_error, Some(false));
    assert!(
        text_of(&now)
            .starts_with("Connected: the stack answered, and this is a key that may read."),
        "{}",
        text_of(&now)
    );
    assert!(
        server.watcher.wait_for_tools_changed(seen).await,
        "the client is told its tools changed"
    );
    assert_eq!(
        server
            .client
            .list_all_tools()
            .await
            .expect("tools/list")
            .len(),
        39
    );
}

#[tokio::test]
async fn a_stopped_stack_and_a_changed_certificate_are_unreachable_and_recover() {
    let keys = key_dir("recover");
    let first = demo_at("127.0.0.1:0", "1", &keys).await;
    let address = listening_at(&first);
    let server = connected(&first, &first.read_key_file).await;
    assert_eq!(
        server.call("read_status", json!({})).await.is_error,
        Some(false)
    );
    first.stop().await;

    let stopped = server.call("read_status", json!({})).await;
    assert_eq!(stopped.is_error, Some(true));
    assert!(
        text_of(&stopped).contains("The stack is unreachable"),
        "{}",
        text_of(&stopped)
    );

    let back = demo_at(&address, "1", &keys).await;
    assert_eq!(
        server.call("read_status", json!({})).await.is_error,
        Some(false),
        "the next call tries again"
    );
    back.stop().await;

    let impostor = demo_at(&address, "2", &keys).await;
    let mismatch = server.call("read_status", json!({})).await;
    assert!(
        text_of(&mismatch).contains("does not match the configured pin"),
        "{}",
        text_of(&mismatch)
    );
    assert_eq!(
        impostor.requests().await,
        Vec::<Value>::new(),
        "nothing was sent past the failed pin check"
    );
    impostor.stop().await;

    let _again = demo_at(&address, "1", &keys).await;
    assert_eq!(
        server.call("read_stuck", json!({})).await.is_error,
        Some(false),
        "recovered"
    );
}

#[tokio::test]
async fn a_scope_that_no_longer_reaches_brings_the_offer_up_to_date() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.read_key_file).await;
    assert!(names(&server.client.list_all_tools().await.expect("tools")).contains("read_stuck"));
    let seen = server.watcher.tools_changed();
    demo.control("capability?path=/api/stuck&state=unpermitted")
        .await;

    let refused = server.call("read_stuck", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    let framed = unframe(&text_of(&refused));
    assert!(
        framed.sentence.contains("scope does not reach that"),
        "{}",
        framed.sentence
    );
    assert_eq!(framed.data["problem"]["code"], "ADMIT-12");
    assert!(
        server.watcher.wait_for_tools_changed(seen).await,
        "the client is told its tools changed"
    );
    assert!(!names(&server.client.list_all_tools().await.expect("tools")).contains("read_stuck"));
    assert_eq!(
        server.call("read_status", json!({})).await.is_error,
        Some(false),
        "the key is not refused"
    );
}

#[tokio::test]
async fn too_many_requests_says_how_long_to_wait() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.read_key_file).await;
    assert_eq!(
        server.call("read_status", json!({})).await.is_error,
        Some(false)
    );
    demo.control("throttle?seconds=7").await;
    let throttled = server.call("read_status", json!({})).await;
    assert_eq!(throttled.is_error, Some(true));
    let framed = unframe(&text_of(&throttled));
    assert!(
        framed.sentence.contains("wait 7 seconds"),
        "{}",
        framed.sentence
    );
    assert_eq!(framed.data["problem"]["code"], "ADMIT-9");
    assert_eq!(
        server.call("read_status", json!({})).await.is_error,
        Some(false),
        "the key is not refused"
    );
}

/// Every text a result carries, with its structured content.
fn all_of(result: &rmcp::model::CallToolResult) -> String {
    let texts: Vec<String> = result
        .content
        .iter()
        .filter_map(|content| content.as_text().map(|text| text.text.clone()))
        .collect();
    format!(
        "{}\n{}",
        texts.join("\n"),
        result.structured_content.clone().unwrap_or(Value::Null)
    )
}

#[tokio::test]
async fn no_key_or_pin_appears_in_any_log_result_or_error_f13_r10() {
    let demo = DemoStack::start().await;
    let act_key = demo.key(&demo.act_key_file);
    let server = Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &demo.address),
        ("LEMONFIBER_PIN", &demo.pin),
        ("LEMONFIBER_KEY", &act_key),
    ])
    .await;
    let mut seen = String::new();

    let tools = server.client.list_all_tools().await.expect("tools/list");
    seen.push_str(&format!("{tools:?}"));
    for tool in &tools {
        let arguments = match tool.name.as_ref() {
            "read_held_by_id" => json!({"id": "ttl-paddington-2"}),
            "read_bundle_by_name" => json!({"name": "support-2026-11-18.tar"}),
            "job" => json!({"job": "job-0404"}),
            "restart" | "update" | "downloads_pause" | "downloads_resume" => json!({}),
            _ => json!({}),
        };
        seen.push_str(&all_of(&server.call(&tool.name, arguments).await));
    }
    let clients = server.call("read_clients", json!({})).await;
    assert!(
        all_of(&clients).contains("pasting the key [withheld] into"),
        "a key-shaped value from the stack is withheld"
    );
    assert!(!all_of(&clients).contains("lfk_5e1fc0ffee"));
    let rehearsed = server.call("rehearse_restart", json!({})).await;
    let offer = unframe(&text_of(&rehearsed)).data["data"]["offer"].clone();
    demo.control("move").await;
    seen.push_str(&all_of(
        &server.call("restart", json!({"offer": offer})).await,
    ));
    seen.push_str(&all_of(&server.call("restart", json!({"offer": 3})).await));
    seen.push_str(&format!(
        "{:?}",
        server
            .client
            .call_tool(rmcp::model::CallToolRequestParams::new("no_such_tool"))
            .await
    ));
    for uri in [
        "lemonfiber://read/status",
        "lemonfiber://read/held/ttl-paddington-2",
        "lemonfiber://read/nothing",
    ] {
        seen.push_str(&format!(
            "{:?}",
            server
                .client
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
        ));
    }
    demo.control("throttle?seconds=3").await;
    seen.push_str(&all_of(&server.call("read_status", json!({})).await));
    demo.control("revoke/act").await;
    seen.push_str(&all_of(&server.call("read_status", json!({})).await));
    seen.push_str(&all_of(&server.call("connection", json!({})).await));

    let wrong_pin = Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &demo.address),
        ("LEMONFIBER_PIN", &"cd".repeat(32)),
        ("LEMONFIBER_KEY", &act_key),
    ])
    .await;
    seen.push_str(&all_of(&wrong_pin.call("read_status", json!({})).await));

    let stderr = format!("{}\n{}", server.stderr(), wrong_pin.stderr());
    assert!(
        stderr.contains("the stack did not answer the tool"),
        "the logs were captured"
    );
    for secret in demo.all_keys().iter().chain([&demo.pin, &"cd".repeat(32)]) {
        assert!(
            !seen.contains(secret.as_str()),
            "a secret reached a result or error"
        );
        assert!(
            !stderr.contains(secret.as_str()),
            "a secret reached the log"
        );
    }
    assert!(
        !seen.contains("lfk_") && !stderr.contains("lfk_"),
        "nothing key-shaped anywhere"
    );
}
