//! Beyond the peers, driven by the official Python MCP SDK against the real binary and the demo
//! stack: the person's own yes asked through their client (elicitation, and on 2026-07-28 a result
//! that requires their input), live resources, and prompts and completions by audience. F13-R4,
//! F13-R3.

// Test code stops at the first surprise, and reaches the server and the stack as any client would.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_types,
    clippy::disallowed_methods
)]

#[path = "support/demo.rs"]
mod demo;
#[path = "support/python.rs"]
mod python;

use demo::{DemoStack, Scratch};
use python::python_script;
use serde_json::Value;

/// Seconds between two reads of a watched resource, in these tests.
const WATCH_EVERY: &str = "1";

/// How a test reaches the server: the binary over stdio with these settings, or the demo's own
/// HTTPS endpoint with a key.
enum Way<'a> {
    Stdio(&'a DemoStack, &'a [(&'a str, &'a str)]),
    Https(&'a DemoStack, &'a str),
}

async fn beyond(way: &Way<'_>, scenario: &str, mode: &str, extra: &[&str]) -> Value {
    let mut args: Vec<String> = vec![scenario.into(), "--mode".into(), mode.into()];
    match way {
        Way::Stdio(demo, settings) => {
            args.extend(["--command".into(), demo::BINARY.into()]);
            let mut env = vec![
                format!("LEMONFIBER_ADDRESS={}", demo.address),
                format!("LEMONFIBER_PIN={}", demo.pin),
            ];
            env.extend(
                settings
                    .iter()
                    .map(|(name, value)| format!("{name}={value}")),
            );
            if !settings
                .iter()
                .any(|(name, _)| *name == "LEMONFIBER_KEY_FILE")
            {
                env.push(format!("LEMONFIBER_KEY_FILE={}", demo.act_key_file));
            }
            for pair in env {
                args.extend(["--env".into(), pair]);
            }
        }
        Way::Https(demo, key_file) => {
            args.extend([
                "--url".into(),
                demo.mcp_url.clone(),
                "--key-file".into(),
                (*key_file).into(),
                "--trust".into(),
                demo.mcp_certificate(),
            ]);
        }
    }
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    python_script("beyond.py", &args).await
}

/// How many times the stack was asked to act (not rehearse) on pausing downloads.
async fn pauses_sent(demo: &DemoStack) -> usize {
    demo.requests()
        .await
        .iter()
        .filter(|request| {
            request["path"] == "/api/actions/downloads-pause" && request["body"]["dry_run"] != true
        })
        .count()
}

fn text(call: &Value) -> &str {
    call["text"].as_str().unwrap_or_default()
}

/// The person was asked once, in the server's words alone, with one yes/no field.
fn assert_asked_in_the_servers_words(seen: &Value) {
    let questions = seen["questions"].as_array().expect("questions");
    assert_eq!(questions.len(), 1, "asked once, on the first call: {seen}");
    let message = questions[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("Pause downloads (downloads_pause)"),
        "{message}"
    );
    let report = seen["rehearsal"].as_str().unwrap_or_default();
    assert!(report.contains("transmission"), "{report}");
    for stack_text in [
        "caution",
        "transmission",
        "Nothing would change",
        "queued",
        "stack data",
    ] {
        assert!(
            !message.contains(stack_text),
            "no stack text in the question: {message}"
        );
    }
    let schema = &questions[0]["schema"];
    assert_eq!(schema["properties"]["agree"]["type"], "boolean", "{seen}");
    assert_eq!(schema["required"], serde_json::json!(["agree"]));
}

/// Accept acts once, and says the person was asked; decline and cancel act never, and say so.
async fn answers_decide(way: &Way<'_>, demo: &DemoStack, mode: &str) {
    let before = pauses_sent(demo).await;
    let accepted = beyond(way, "consent", mode, &["--answer", "accept"]).await;
    assert_asked_in_the_servers_words(&accepted);
    let calls = &accepted["calls"];
    assert_eq!(calls[0]["is_error"], false, "{accepted}");
    assert_eq!(calls[0]["consent"], "asked", "{accepted}");
    assert!(text(&calls[0]).starts_with("The person agreed when asked"));
    assert_eq!(calls[1]["is_error"], true, "{accepted}");
    assert!(text(&calls[1]).contains("an offer acts once"), "{accepted}");
    assert_eq!(pauses_sent(demo).await, before + 1, "acted once");

    for (answer, said) in [("decline", "said no"), ("cancel", "was cancelled")] {
        let refused = beyond(way, "consent", mode, &["--answer", answer]).await;
        assert_asked_in_the_servers_words(&refused);
        let calls = &refused["calls"];
        assert_eq!(calls[0]["is_error"], true, "{refused}");
        assert!(text(&calls[0]).contains(said), "{refused}");
        assert!(
            text(&calls[0]).contains("nothing was sent to the stack"),
            "{refused}"
        );
        assert!(
            text(&calls[1]).contains("an offer acts once"),
            "a no is final: {refused}"
        );
    }
    assert_eq!(pauses_sent(demo).await, before + 1, "never acted on a no");
}

#[tokio::test]
async fn the_person_is_asked_over_stdio_in_a_session_and_on_2026_07_28() {
    let demo = DemoStack::start().await;
    for mode in ["legacy", "auto"] {
        answers_decide(&Way::Stdio(&demo, &[]), &demo, mode).await;
    }
}

#[tokio::test]
async fn the_person_is_asked_over_https_in_a_session_and_on_2026_07_28() {
    let demo = DemoStack::start().await;
    for mode in ["legacy", "auto"] {
        answers_decide(&Way::Https(&demo, &demo.act_key_file), &demo, mode).await;
    }
}

/// The question names what was rehearsed, and says a disturbing action disturbs.
#[tokio::test]
async fn the_question_names_the_services_rehearsed_and_what_it_disturbs() {
    let demo = DemoStack::start().await;
    let seen = beyond(
        &Way::Stdio(&demo, &[]),
        "consent",
        "legacy",
        &[
            "--act",
            "restart",
            "--arguments",
            r#"{"services": ["sonarr"]}"#,
            "--answer",
            "decline",
        ],
    )
    .await;
    let message = seen["questions"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("Restart services (restart)"), "{message}");
    assert!(
        message.contains(r#"narrowed as rehearsed to {"services":["sonarr"]}"#),
        "{message}"
    );
    assert!(
        message.contains("interrupts what the services involved are doing"),
        "{message}"
    );
    assert_eq!(seen["calls"][0]["is_error"], true, "declined: {seen}");
}

/// A client that cannot ask its person acts on the offer alone by default (and `both`), is
/// refused under `ask`; and the audit line records how consent was given.
#[tokio::test]
async fn a_client_that_cannot_ask_follows_lemonfiber_consent_and_the_audit_says_how() {
    let demo = DemoStack::start().await;
    let folder = Scratch::at(
        std::env::temp_dir().join(format!("lemonfiber-consent-{}", std::process::id())),
    );
    std::fs::create_dir_all(&*folder).expect("a folder for the audit");
    let audit = folder.join("audit.jsonl");
    let audit_setting = audit.display().to_string();
    for (mode, acts) in [("offer", true), ("both", true), ("ask", false)] {
        let settings = [
            ("LEMONFIBER_CONSENT", mode),
            ("LEMONFIBER_AUDIT", audit_setting.as_str()),
        ];
        let before = pauses_sent(&demo).await;
        for version in ["legacy", "auto"] {
            let seen = beyond(
                &Way::Stdio(&demo, &settings),
                "consent",
                version,
                &["--answer", "none"],
            )
            .await;
            let first = &seen["calls"][0];
            assert_eq!(seen["questions"], serde_json::json!([]), "{seen}");
            if acts {
                assert_eq!(first["is_error"], false, "{mode}: {seen}");
                assert_eq!(first["consent"], "offer", "{mode}: {seen}");
                assert!(text(first).starts_with("The person could not be asked"));
            } else {
                assert_eq!(first["is_error"], true, "{mode}: {seen}");
                assert!(text(first).contains("LEMONFIBER_CONSENT is ask"), "{seen}");
            }
        }
        let sent = pauses_sent(&demo).await - before;
        assert_eq!(sent, if acts { 2 } else { 0 }, "{mode}");
    }
    let lines: Vec<Value> = std::fs::read_to_string(&audit)
        .expect("the audit file")
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON"))
        .filter(|line: &Value| line["tool"] == "downloads_pause")
        .collect();
    let decided: Vec<(&str, &str)> = lines
        .iter()
        .map(|line| {
            (
                line["consent"].as_str().unwrap_or("-"),
                line["why"]
                    .as_str()
                    .unwrap_or(line["decision"].as_str().unwrap_or_default()),
            )
        })
        .collect();
    assert!(
        decided.contains(&("offer", "sent")),
        "acted on the offer alone: {decided:?}"
    );
    assert!(
        decided.contains(&("-", "person-cannot-be-asked")),
        "refused under ask: {decided:?}"
    );
}

/// On 2026-07-28 a yes counts only with the question the server handed out for this key, action
/// and offer: brought back with it changed, it is no answer, which `both` refuses; with it as it
/// was, it acts.
#[tokio::test]
async fn a_yes_brought_back_with_another_question_is_no_answer() {
    let demo = DemoStack::start().await;
    let settings = [("LEMONFIBER_CONSENT", "both")];
    let seen = beyond(&Way::Stdio(&demo, &settings), "unanswered", "auto", &[]).await;
    assert_eq!(seen["protocol"], "2026-07-28");
    assert_eq!(seen["input_required"], true, "{seen}");
    assert_eq!(seen["asks"], serde_json::json!(["consent"]), "{seen}");
    assert_eq!(seen["changed"]["is_error"], true, "{seen}");
    assert!(text(&seen["changed"]).contains("did not answer"), "{seen}");
    assert_eq!(seen["as_handed_out"]["is_error"], false, "{seen}");
    assert_eq!(seen["as_handed_out"]["consent"], "asked", "{seen}");
    assert_eq!(pauses_sent(&demo).await, 1, "acted once");
}

/// A subscribed resource is told within one poll of the demo changing it, and not after the
/// client stops watching: `resources/subscribe` in a session, `subscriptions/listen` from
/// 2026-07-28.
async fn watched(way: &Way<'_>) {
    for mode in ["legacy", "auto"] {
        let seen = beyond(
            way,
            "watch",
            mode,
            &["--control", control_of(way), "--within", "4"],
        )
        .await;
        assert_eq!(
            seen["updates"],
            serde_json::json!(["lemonfiber://read/status"]),
            "{mode}: {seen}"
        );
        let after = seen["updated_after"].as_f64().expect("told of the change");
        assert!(after < 3.0, "within one poll (and a read): {after} s");
        if mode == "legacy" {
            assert_eq!(
                seen["updates_after_unsubscribe"],
                serde_json::json!([]),
                "{seen}"
            );
        } else {
            assert_eq!(
                seen["honored"],
                serde_json::json!(["lemonfiber://read/status"])
            );
        }
    }
}

fn control_of<'a>(way: &'a Way<'_>) -> &'a str {
    match way {
        Way::Stdio(demo, _) | Way::Https(demo, _) => &demo.control,
    }
}

#[tokio::test]
async fn a_watched_resource_is_told_when_it_changes_over_stdio() {
    let demo = DemoStack::start().await;
    watched(&Way::Stdio(
        &demo,
        &[("LEMONFIBER_WATCH_EVERY", WATCH_EVERY)],
    ))
    .await;
}

#[tokio::test]
async fn a_watched_resource_is_told_when_it_changes_over_https() {
    let demo = DemoStack::start_with_settings(&[("LEMONFIBER_WATCH_EVERY", WATCH_EVERY)]).await;
    watched(&Way::Https(&demo, &demo.act_key_file)).await;
}

#[tokio::test]
async fn prompts_differ_by_audience_and_completions_come_from_the_keys_own_reads() {
    let demo = DemoStack::start().await;
    let operator = beyond(
        &Way::Https(&demo, &demo.act_key_file),
        "prompts",
        "auto",
        &[],
    )
    .await;
    let member = beyond(
        &Way::Stdio(&demo, &[("LEMONFIBER_KEY_FILE", &demo.member_key_file)]),
        "prompts",
        "legacy",
        &[],
    )
    .await;
    assert_eq!(
        operator["prompts"],
        serde_json::json!(["is_everything_healthy", "what_changed", "why_stuck"])
    );
    assert_eq!(
        member["prompts"],
        serde_json::json!(["my_requests", "what_was_i_watching"])
    );
    let rendered = operator["rendered"]["why_stuck"][0]
        .as_str()
        .unwrap_or_default();
    assert!(
        rendered.ends_with("Look first at this service: Arrival."),
        "{rendered}"
    );
    let rendered = member["rendered"]["my_requests"][0]
        .as_str()
        .unwrap_or_default();
    assert!(
        rendered.ends_with("I mostly want to know about this title: Arrival."),
        "{rendered}"
    );
    for seen in [&operator, &member] {
        let titles = seen["titles"].as_array().expect("titles");
        assert!(titles.iter().any(|title| title == "ttl-arrival"), "{seen}");
        assert_eq!(seen["titles_narrowed"], serde_json::json!(["ttl-arrival"]));
        assert_eq!(
            seen["titles"], seen["held"],
            "the key's own library: {seen}"
        );
        assert_eq!(
            seen["titles_by_prompt"],
            serde_json::json!(["ttl-arrival"]),
            "a prompt's title by its identifier: {seen}"
        );
        assert_eq!(
            seen["titles_by_name"],
            serde_json::json!([]),
            "never by its name, which is the stack's words (issue 27): {seen}"
        );
    }
    assert!(
        operator["services"]
            .as_array()
            .is_some_and(|services| services.iter().any(|service| service == "transmission"))
    );
    assert_eq!(
        member["services"],
        serde_json::json!([]),
        "a member's key reads no status"
    );
}
