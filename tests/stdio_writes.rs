//! Writes through the real `lemonfiber-mcp stdio` and a real MCP client against the demo stack:
//! rehearse, then act on the offer (F13-R4); annotations (F13-R5); stale offers; jobs.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/mcp.rs"]
mod mcp;

use std::collections::BTreeSet;

use demo::DemoStack;
use mcp::{Stdio, parameter_names, text_of, tool_named, unframe};
use serde_json::{Value, json};

async fn connected(demo: &DemoStack, key_file: &str, job_wait: &str) -> Stdio {
    Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &demo.address),
        ("LEMONFIBER_PIN", &demo.pin),
        ("LEMONFIBER_KEY_FILE", key_file),
        ("LEMONFIBER_JOB_WAIT", job_wait),
    ])
    .await
}

/// The actions a key has asked the demo stack to take (rehearsals included), in order.
async fn posts(demo: &DemoStack) -> Vec<String> {
    demo.requests()
        .await
        .iter()
        .filter(|request| request["method"] == "POST")
        .map(|request| request["path"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The table in DESIGN.md §2 and §4: (tool, readOnlyHint, destructiveHint, idempotentHint).
const WRITE_TOOLS: [(&str, bool, bool, bool); 10] = [
    ("rehearse_restart", true, false, true),
    ("restart", false, true, true),
    ("diagnose", false, true, false),
    ("rehearse_update", true, false, true),
    ("update", false, true, false),
    ("rehearse_downloads_pause", true, false, true),
    ("downloads_pause", false, false, true),
    ("rehearse_downloads_resume", true, false, true),
    ("downloads_resume", false, false, true),
    ("job", true, false, true),
];

#[tokio::test]
async fn every_write_tool_carries_the_annotations_of_the_design_f13_r5() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file, "5").await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 39 + WRITE_TOOLS.len());
    for (name, read_only, destructive, idempotent) in WRITE_TOOLS {
        let tool = tool_named(&tools, name);
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(
            annotations.read_only_hint,
            Some(read_only),
            "{name} readOnlyHint"
        );
        assert_eq!(
            annotations.destructive_hint,
            Some(destructive),
            "{name} destructiveHint"
        );
        assert_eq!(
            annotations.idempotent_hint,
            Some(idempotent),
            "{name} idempotentHint"
        );
        assert_eq!(
            annotations.open_world_hint,
            Some(false),
            "{name} openWorldHint"
        );
        assert!(
            tool.title.as_deref().is_some_and(|title| !title.is_empty()),
            "{name} has a title"
        );
    }
    let properties = |name: &str| -> BTreeSet<String> {
        parameter_names(tool_named(&tools, name))
            .into_iter()
            .collect()
    };
    let required = |name: &str| -> Value {
        tool_named(&tools, name)
            .input_schema
            .get("required")
            .cloned()
            .unwrap_or(json!([]))
    };
    let set = |names: &[&str]| {
        names
            .iter()
            .map(|name| name.to_string())
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(
        properties("rehearse_restart"),
        set(&["forms", "services"]),
        "a rehearsal takes no consent"
    );
    assert_eq!(
        properties("restart"),
        set(&["offer"]),
        "an act takes only the person's yes: it acts with what was rehearsed"
    );
    assert_eq!(required("restart"), json!(["offer"]));
    assert_eq!(properties("rehearse_update"), set(&["wait", "service"]));
    assert_eq!(properties("update"), set(&["offer", "confirm"]));
    assert_eq!(properties("diagnose"), set(&["only", "disruptive"]));
    assert_eq!(properties("rehearse_downloads_pause"), set(&[]));
    assert_eq!(required("downloads_pause"), json!(["offer"]));
}

#[tokio::test]
async fn a_read_key_is_offered_no_write_tool() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.read_key_file, "5").await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 39);
    assert!(
        tools.iter().all(|tool| tool.name.starts_with("read_")),
        "only reads"
    );
    let refused = server.call("rehearse_restart", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text_of(&refused).contains("not offered to this key"));
    assert!(
        posts(&demo).await.is_empty(),
        "nothing was asked of the stack"
    );
}

/// Rehearses and answers the sealed offer, checking the sentence says how to say yes.
async fn rehearse(server: &Stdio, rehearsal: &str, act: &str, arguments: Value) -> String {
    let rehearsed = server.call(rehearsal, arguments).await;
    assert_eq!(rehearsed.is_error, Some(false), "{}", text_of(&rehearsed));
    let framed = unframe(&text_of(&rehearsed));
    assert_eq!(framed.data["data"]["rehearsed"], true);
    let offer = framed.data["data"]["offer"]
        .as_str()
        .expect("an offer")
        .to_owned();
    assert!(
        framed
            .sentence
            .contains(&format!("call {act} with the offer {offer}")),
        "the sentence says how to say yes: {}",
        framed.sentence
    );
    offer
}

/// Rehearses, then acts on the offer alone; answers the act result.
async fn rehearse_and_act(
    server: &Stdio,
    rehearsal: &str,
    act: &str,
    arguments: Value,
) -> rmcp::model::CallToolResult {
    let offer = rehearse(server, rehearsal, act, arguments).await;
    server.call(act, json!({ "offer": offer })).await
}

#[tokio::test]
async fn every_action_is_rehearsed_then_taken_on_its_offer_f13_r4() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file, "10").await;

    let restarted = rehearse_and_act(
        &server,
        "rehearse_restart",
        "restart",
        json!({"services": ["sonarr"]}),
    )
    .await;
    let restarted = unframe(&text_of(&restarted)).data;
    assert_eq!(
        restarted["state"], "finished",
        "the job was followed to its end: {restarted}"
    );
    assert_eq!(
        restarted["answer"]["data"]["plan"]["services"],
        json!(["sonarr"])
    );

    let updated = rehearse_and_act(
        &server,
        "rehearse_update",
        "update",
        json!({"service": "jellyfin"}),
    )
    .await;
    let updated = unframe(&text_of(&updated)).data;
    assert_eq!(updated["state"], "finished", "{updated}");
    assert_eq!(
        updated["answer"]["data"]["applied"][0]["service"],
        "jellyfin"
    );

    let paused = rehearse_and_act(
        &server,
        "rehearse_downloads_pause",
        "downloads_pause",
        json!({}),
    )
    .await;
    assert_eq!(paused.is_error, Some(false), "{}", text_of(&paused));
    let paused = unframe(&text_of(&paused)).data;
    assert_eq!(paused["state"], "finished", "{paused}");
    assert_eq!(paused["answer"]["data"]["clients"][0]["now"], "stopped");
    let status = server
        .call("read_status", json!({}))
        .await
        .structured_content
        .expect("status");
    assert_eq!(
        status["data"]["condition"], "partial",
        "pausing changes the status"
    );
    let stuck = server
        .call("read_stuck", json!({}))
        .await
        .structured_content
        .expect("stuck");
    assert_eq!(
        stuck["data"]["items"],
        json!([]),
        "nothing counts as stuck while paused"
    );

    let resumed = rehearse_and_act(
        &server,
        "rehearse_downloads_resume",
        "downloads_resume",
        json!({}),
    )
    .await;
    let resumed = unframe(&text_of(&resumed)).data;
    assert_eq!(resumed["state"], "finished", "{resumed}");
    assert_eq!(resumed["answer"]["data"]["clients"][0]["now"], "fetching");
    let status = server
        .call("read_status", json!({}))
        .await
        .structured_content
        .expect("status");
    assert_eq!(status["data"]["condition"], "degraded");

    let diagnosed = server.call("diagnose", json!({"only": "disk-space"})).await;
    assert_eq!(diagnosed.is_error, Some(false), "{}", text_of(&diagnosed));
    let diagnosed = unframe(&text_of(&diagnosed)).data;
    assert_eq!(diagnosed["state"], "finished", "{diagnosed}");
    let checks = diagnosed["answer"]["data"]["findings"].clone();
    assert_eq!(checks.as_array().map(Vec::len), Some(1));

    // Each rehearsal and each action reached the stack exactly once: actions are never retried.
    let posts = posts(&demo).await;
    for action in ["restart", "update", "downloads-pause", "downloads-resume"] {
        let path = format!("/api/actions/{action}");
        assert_eq!(
            posts.iter().filter(|post| **post == path).count(),
            2,
            "{action}: {posts:?}"
        );
    }
    assert_eq!(
        posts
            .iter()
            .filter(|post| *post == "/api/actions/diagnose")
            .count(),
        1
    );
}

#[tokio::test]
async fn an_action_without_an_offer_is_refused_before_the_stack() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file, "5").await;
    for (act, arguments) in [
        ("restart", json!({})),
        ("restart", json!({"offer": ""})),
        ("update", json!({"offer": "   ", "service": "sonarr"})),
        ("downloads_pause", json!({"offer": null})),
    ] {
        let result = server.call(act, arguments).await;
        assert_eq!(result.is_error, Some(true), "{act}");
        let text = text_of(&result);
        assert!(
            text.contains(&format!("Call rehearse_{act} first")),
            "{text}"
        );
        assert!(text.contains("nothing was sent to the stack"), "{text}");
    }
    assert!(posts(&demo).await.is_empty(), "no action reached the stack");
}

#[tokio::test]
async fn a_stale_offer_is_refused_naming_what_moved_and_a_fresh_one_works() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file, "10").await;
    let rehearsed = server.call("rehearse_restart", json!({})).await;
    let offer = unframe(&text_of(&rehearsed)).data["data"]["offer"].clone();
    demo.control("move").await;

    let stale = server.call("restart", json!({"offer": offer})).await;
    assert_eq!(stale.is_error, Some(true));
    let framed = unframe(&text_of(&stale));
    assert!(
        framed.sentence.contains("has moved") && framed.sentence.contains("rehearse_restart again"),
        "{}",
        framed.sentence
    );
    assert_eq!(framed.data["problem"]["code"], "LIFE-10");
    let summary = framed.data["problem"]["summary"].as_str().expect("summary");
    assert!(
        summary.contains("someone else restarted transmission"),
        "what moved is named: {summary}"
    );
    assert!(
        framed.data["problem"].get("detail").is_none(),
        "a refusal's detail is never handed over"
    );

    let restarted = rehearse_and_act(&server, "rehearse_restart", "restart", json!({})).await;
    assert_eq!(restarted.is_error, Some(false), "{}", text_of(&restarted));
    assert_eq!(unframe(&text_of(&restarted)).data["state"], "finished");
}

#[tokio::test]
async fn a_job_still_running_is_answered_later_by_the_job_tool() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file, "1").await;
    demo.control("jobs/hold").await;
    let started = rehearse_and_act(&server, "rehearse_update", "update", json!({})).await;
    assert_eq!(started.is_error, Some(false), "{}", text_of(&started));
    let framed = unframe(&text_of(&started));
    assert!(
        framed.sentence.contains("still working on update"),
        "{}",
        framed.sentence
    );
    assert_eq!(framed.data["state"], "running");
    let job = framed.data["job"]
        .as_str()
        .expect("the job's identifier")
        .to_owned();

    let still = server.call("job", json!({"job": job})).await;
    assert_eq!(unframe(&text_of(&still)).data["state"], "running");
    demo.control("jobs/release").await;
    let finished = server.call("job", json!({"job": job})).await;
    assert_eq!(finished.is_error, Some(false));
    let finished = unframe(&text_of(&finished)).data;
    assert_eq!(finished["state"], "finished", "{finished}");
    assert_eq!(finished["answer"]["data"]["state"], "updated");

    let unknown = server.call("job", json!({"job": "job-9999"})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert_eq!(unframe(&text_of(&unknown)).data["problem"]["code"], "ASK-7");
    let posts = posts(&demo).await;
    assert_eq!(
        posts
            .iter()
            .filter(|post| *post == "/api/actions/update")
            .count(),
        2,
        "never retried: {posts:?}"
    );
}

#[tokio::test]
async fn a_job_that_stops_says_why() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file, "10").await;
    let stopped = rehearse_and_act(
        &server,
        "rehearse_update",
        "update",
        json!({"service": "plex"}),
    )
    .await;
    assert_eq!(stopped.is_error, Some(true));
    let framed = unframe(&text_of(&stopped));
    assert!(
        framed.sentence.contains("stopped without finishing"),
        "{}",
        framed.sentence
    );
    assert_eq!(framed.data["state"], "stopped");
    assert_eq!(framed.data["problem"]["code"], "UPDATE-2");
}

#[tokio::test]
async fn invalid_arguments_are_refused_before_the_stack_naming_the_argument() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file, "5").await;
    for (tool, arguments, said) in [
        (
            "restart",
            json!({"offer": "lfo-x", "services": ["sonarr"]}),
            "The argument services is not one restart takes",
        ),
        (
            "rehearse_restart",
            json!({"forms": "movies"}),
            "The argument forms must be a list of strings",
        ),
        (
            "diagnose",
            json!({"disruptive": "yes"}),
            "The argument disruptive must be true or false",
        ),
        (
            "rehearse_restart",
            json!({"offer": "lfo-x"}),
            "The argument offer is not one rehearse_restart takes",
        ),
        (
            "rehearse_update",
            json!({"confirm": true}),
            "The argument confirm is not one rehearse_update takes",
        ),
        (
            "update",
            json!({"offer": 7}),
            "The argument offer must be a string",
        ),
        ("job", json!({}), "The argument job is required"),
    ] {
        let result = server.call(tool, arguments).await;
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert!(
            text_of(&result).contains(said),
            "{tool}: {}",
            text_of(&result)
        );
    }
    assert!(posts(&demo).await.is_empty(), "nothing reached the stack");
    let reads: Vec<Value> = demo.requests().await;
    assert!(
        reads
            .iter()
            .all(|request| request["path"] == "/api/capabilities"),
        "{reads:?}"
    );
}
