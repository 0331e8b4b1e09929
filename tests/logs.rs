//! F8 item 6: no log level puts what the stack answered, or a session's identifier, in the log.
//! The suite's paths are run at `trace` over stdio and over HTTP, and the captured logs are
//! searched for the demo household's titles and for the sessions' identifiers. The audit line
//! each call gets is there, and holds neither.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/mcp.rs"]
mod mcp;

use demo::DemoStack;
use http_server::{call, http_server};
use mcp::{Stdio, text_of};
use serde_json::{Value, json};

/// Titles the demo household holds: what a member asked for and watches.
fn household_titles() -> Vec<String> {
    let household: Value =
        serde_json::from_str(include_str!("../src/demo/household.json")).expect("the household");
    let mut titles = Vec::new();
    for list in ["requests", "held", "watching", "playing"] {
        for item in household[list].as_array().expect("a list") {
            if let Some(title) = item["title"].as_str().filter(|title| title.is_ascii()) {
                titles.push(title.to_owned());
            }
        }
    }
    assert!(titles.len() > 10, "{titles:?}");
    titles
}

fn assert_no_household_title(log: &str) {
    for title in household_titles() {
        assert!(!log.contains(&title), "the log holds {title:?}:\n{log}");
    }
}

#[tokio::test]
async fn at_trace_the_stdio_log_holds_no_answer() {
    let demo = DemoStack::start().await;
    let member = Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &demo.address),
        ("LEMONFIBER_PIN", &demo.pin),
        ("LEMONFIBER_KEY_FILE", &demo.member_key_file),
        ("LEMONFIBER_LOG", "trace"),
    ])
    .await;
    for tool in ["read_requests", "read_held", "read_watching"] {
        let result = member.call(tool, json!({})).await;
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    }
    let act = Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &demo.address),
        ("LEMONFIBER_PIN", &demo.pin),
        ("LEMONFIBER_KEY_FILE", &demo.act_key_file),
        ("LEMONFIBER_LOG", "trace"),
    ])
    .await;
    for tool in ["read_requests", "read_held", "read_logs", "read_stuck"] {
        act.call(tool, json!({})).await;
    }
    let rehearsed = act.call("rehearse_downloads_pause", json!({})).await;
    let offer = mcp::unframe(&text_of(&rehearsed)).data["data"]["offer"].clone();
    act.call("downloads_pause", json!({ "offer": offer })).await;
    for log in [member.stderr(), act.stderr()] {
        assert!(
            log.contains("\"audit\":\"tool\""),
            "an audit line a call:\n{log}"
        );
        assert_no_household_title(&log);
        assert!(
            !log.contains(offer.as_str().unwrap_or("no offer")),
            "no offer in the log"
        );
    }
}

#[tokio::test]
async fn at_trace_the_http_log_holds_no_answer_and_no_session() {
    let demo = DemoStack::start().await;
    let server = http_server(
        &demo,
        &[("LEMONFIBER_LOG", "trace"), ("LEMONFIBER_AUDIT", "")],
    )
    .await;
    let member = demo.key(&demo.member_key_file);
    let session = server.open_session(&member).await;
    for (id, tool) in [(2, "read_requests"), (3, "read_held"), (4, "read_watching")] {
        let answered = server
            .in_session(&member, &session, &call(id, tool, json!({})))
            .await;
        let body = answered.text().await.expect("a body");
        assert!(
            body.contains("Paddington") || body.contains("Bluey") || body.contains("Slow Horses"),
            "{body}"
        );
    }
    let _ = server
        .client
        .delete(&server.url)
        .bearer_auth(&member)
        .header("mcp-session-id", &session)
        .send()
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let log = server.stderr();
    assert!(
        log.contains("\"audit\":\"tool\""),
        "an audit line a call:\n{log}"
    );
    assert_no_household_title(&log);
    assert!(
        !log.contains(&session),
        "the session's identifier is not logged:\n{log}"
    );
}

/// F8 item 10: one audit line a call, to the file LEMONFIBER_AUDIT names: when, which key (the
/// first 8 hex of its digest), its scope, the tool, what the server decided and why, the stack's
/// status and how long it took; never the arguments or the answer.
#[tokio::test]
async fn every_call_gets_one_audit_line_and_none_holds_what_was_asked_or_answered() {
    use sha2::{Digest, Sha256};
    let demo = DemoStack::start().await;
    let audit = http_server::fresh_dir("audit-file");
    let server = Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &demo.address),
        ("LEMONFIBER_PIN", &demo.pin),
        ("LEMONFIBER_KEY_FILE", &demo.read_key_file),
        ("LEMONFIBER_AUDIT", &audit.display().to_string()),
    ])
    .await;
    server
        .call("read_held_by_id", json!({"id": "ttl-paddington-2"}))
        .await;
    server
        .call("restart", json!({"offer": "lfo-made-up"}))
        .await;
    server
        .call("read_held_by_id", json!({"id": "../credentials"}))
        .await;
    server
        .client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "lemonfiber://read/status",
        ))
        .await
        .expect("a resource");
    let text = std::fs::read_to_string(&audit).expect("the audit file");
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let key: String = Sha256::digest(demo.key(&demo.read_key_file).as_bytes())[..4]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let expected = [
        ("tool", "read_held_by_id", "sent", Value::Null, json!(200)),
        ("tool", "restart", "not-offered", Value::Null, Value::Null),
        (
            "tool",
            "read_held_by_id",
            "refused-before-stack",
            json!("arguments"),
            Value::Null,
        ),
        ("resource", "read_status", "sent", Value::Null, json!(200)),
    ];
    assert_eq!(lines.len(), expected.len(), "{text}");
    for (line, (event, tool, decision, why, status)) in lines.iter().zip(expected) {
        assert_eq!(line["audit"], event, "{line}");
        assert_eq!(line["tool"], tool, "{line}");
        assert_eq!(line["decision"], decision, "{line}");
        assert_eq!(line["why"], why, "{line}");
        assert_eq!(line["status"], status, "{line}");
        assert_eq!(line["key"], key.as_str());
        assert_eq!(line["scope"], "read");
        assert!(
            line["ms"].is_u64()
                && line["time"]
                    .as_str()
                    .is_some_and(|time| time.ends_with('Z'))
        );
    }
    for never in [
        "ttl-paddington-2",
        "Paddington",
        "lfo-made-up",
        "credentials",
        "lfk_",
    ] {
        assert!(!text.contains(never), "{never} in the audit:\n{text}");
    }
    assert!(
        !server.stderr().contains("\"audit\""),
        "the audit went to its file only"
    );
    let _ = std::fs::remove_file(audit);
}
