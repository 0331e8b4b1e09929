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
/// and offer: brought back with it changed, it is not an answer to that question and refuses even
/// under the default mode (and spends the offer); a fresh offer's yes, as handed out, acts.
#[tokio::test]
async fn a_yes_brought_back_with_another_question_refuses_and_the_question_as_handed_out_acts() {
    let demo = DemoStack::start().await;
    let settings = [("LEMONFIBER_CONSENT", "offer")];
    let seen = beyond(&Way::Stdio(&demo, &settings), "unanswered", "auto", &[]).await;
    assert_eq!(seen["protocol"], "2026-07-28");
    assert_eq!(seen["input_required"], true, "{seen}");
    assert_eq!(seen["asks"], serde_json::json!(["consent"]), "{seen}");
    assert_eq!(seen["changed"]["is_error"], true, "{seen}");
    assert!(
        text(&seen["changed"]).contains("not the person's answer"),
        "{seen}"
    );
    assert_eq!(seen["as_handed_out"]["is_error"], false, "{seen}");
    assert_eq!(seen["as_handed_out"]["consent"], "asked", "{seen}");
    assert_eq!(pauses_sent(&demo).await, 1, "acted once");
}

/// How many times the stack was asked to act on `path`, rehearsals left out.
async fn acts_sent(demo: &DemoStack, path: &str) -> usize {
    demo.requests()
        .await
        .iter()
        .filter(|request| request["path"] == path && request["body"]["dry_run"] != true)
        .count()
}

/// F13-R4, issue 27 item 7: whatever the consent mode and the protocol era, any answer that is
/// not the person's yes to exactly the question asked (a decline, a cancel, an error, a question
/// changed or about another offer, an answer filed under another name) leaves the stack unasked.
#[tokio::test]
async fn no_answer_but_a_yes_to_this_very_question_acts_in_any_mode_or_era() {
    let demo = DemoStack::start().await;
    for mode in ["offer", "both", "ask"] {
        let settings = [("LEMONFIBER_CONSENT", mode)];
        for era in ["legacy", "auto"] {
            let seen = beyond(&Way::Stdio(&demo, &settings), "no", era, &[]).await;
            let answers = seen.as_object().expect("what was seen");
            assert!(answers.len() > 4, "{seen}");
            for (name, call) in answers.iter().filter(|(name, _)| *name != "protocol") {
                assert_eq!(call["is_error"], true, "{mode} {era} {name}: {seen}");
                assert_eq!(call["input_required"], false, "{mode} {era} {name}: {seen}");
                let said = text(call);
                assert!(
                    said.contains("nothing was sent to the stack")
                        || said.contains("Nothing was sent to the stack"),
                    "{mode} {era} {name}: {said}"
                );
            }
            if era == "auto" {
                assert!(
                    text(&seen["yes_changed"]).contains("not the person's answer"),
                    "{seen}"
                );
                assert!(
                    text(&seen["decline_under_another_name"]).contains("counts as a no"),
                    "{seen}"
                );
            }
        }
    }
    assert_eq!(
        pauses_sent(&demo).await,
        0,
        "the stack was never asked to act"
    );
    let seen = beyond(&Way::Https(&demo, &demo.act_key_file), "no", "auto", &[]).await;
    assert_eq!(seen["yes_to_another_offer"]["is_error"], true, "{seen}");
    assert_eq!(pauses_sent(&demo).await, 0, "nor over HTTPS");
}

const DIAGNOSE: &str = "/api/actions/diagnose";

/// Issue 27 item 1: an action with no rehearsal that disturbs the stack (the contract's flags say
/// diagnose does) is asked of the person like a rehearsed one: under `ask` a decline leaves the
/// stack unasked and a yes runs it once, in a session and on 2026-07-28, over stdio and HTTPS.
#[tokio::test]
async fn a_disruptive_diagnosis_is_asked_of_the_person_and_a_decline_leaves_the_stack_unasked() {
    let demo = DemoStack::start_with_settings(&[("LEMONFIBER_CONSENT", "ask")]).await;
    let disruptive = r#"{"disruptive": true}"#;
    let settings = [("LEMONFIBER_CONSENT", "ask")];
    let ways = [
        Way::Stdio(&demo, &settings),
        Way::Https(&demo, &demo.act_key_file),
    ];
    for way in &ways {
        for era in ["legacy", "auto"] {
            let direct = ["--act", "diagnose", "--direct", "--arguments", disruptive];
            let declined = beyond(
                way,
                "consent",
                era,
                &[&direct[..], &["--answer", "decline"]].concat(),
            )
            .await;
            let questions = declined["questions"].as_array().expect("questions");
            assert_eq!(questions.len(), 2, "asked on each call: {declined}");
            let message = questions[0]["message"].as_str().unwrap_or_default();
            assert!(message.contains("Run the doctor (diagnose)"), "{message}");
            assert!(message.contains(r#"{"disruptive":true}"#), "{message}");
            assert!(message.contains("may interrupt"), "{message}");
            for call in declined["calls"].as_array().expect("calls") {
                assert_eq!(call["is_error"], true, "{era}: {declined}");
                assert!(text(call).contains("said no"), "{declined}");
            }
            assert_eq!(
                acts_sent(&demo, DIAGNOSE).await,
                0,
                "{era}: a no never runs it"
            );
        }
    }
    let mut ran = 0;
    for way in &ways {
        for era in ["legacy", "auto"] {
            let direct = ["--act", "diagnose", "--direct", "--arguments", disruptive];
            let accepted = beyond(
                way,
                "consent",
                era,
                &[&direct[..], &["--answer", "accept"]].concat(),
            )
            .await;
            let first = &accepted["calls"][0];
            assert_eq!(first["is_error"], false, "{era}: {accepted}");
            assert_eq!(first["consent"], "asked", "{accepted}");
            ran += 2;
            assert_eq!(
                acts_sent(&demo, DIAGNOSE).await,
                ran,
                "a yes each time: {accepted}"
            );
        }
    }
    let unable = beyond(
        &Way::Stdio(&demo, &settings),
        "consent",
        "legacy",
        &[
            "--act",
            "diagnose",
            "--direct",
            "--arguments",
            disruptive,
            "--answer",
            "none",
        ],
    )
    .await;
    assert_eq!(unable["calls"][0]["is_error"], true, "{unable}");
    assert!(
        text(&unable["calls"][0]).contains("LEMONFIBER_CONSENT is ask"),
        "{unable}"
    );
    assert_eq!(
        acts_sent(&demo, DIAGNOSE).await,
        ran,
        "nor where the client cannot ask"
    );
}

/// Under the default `offer`, a diagnosis (no offer to stand for a yes) is asked where the client
/// can ask; where it cannot, it runs on the assistant's call, and the result says so.
#[tokio::test]
async fn by_default_a_diagnosis_is_asked_where_it_can_be_and_otherwise_says_it_ran_unasked() {
    let demo = DemoStack::start().await;
    let direct = [
        "--act",
        "diagnose",
        "--direct",
        "--arguments",
        r#"{"disruptive": true}"#,
    ];
    let declined = beyond(
        &Way::Stdio(&demo, &[]),
        "consent",
        "legacy",
        &[&direct[..], &["--answer", "decline"]].concat(),
    )
    .await;
    assert_eq!(declined["calls"][0]["is_error"], true, "{declined}");
    assert_eq!(acts_sent(&demo, DIAGNOSE).await, 0);
    let unable = beyond(
        &Way::Stdio(&demo, &[]),
        "consent",
        "legacy",
        &[&direct[..], &["--answer", "none"]].concat(),
    )
    .await;
    let first = &unable["calls"][0];
    assert_eq!(first["is_error"], false, "{unable}");
    assert_eq!(first["consent"], "call", "{unable}");
    assert!(
        text(first).contains("on the assistant's call alone"),
        "{unable}"
    );
    assert_eq!(acts_sent(&demo, DIAGNOSE).await, 2);
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
