//! The real server against a stack that misbehaves as an attacker's would (tests/support/hostile):
//! answers past every limit, floods of log lines, lying media types, the key echoed back, and
//! every invisible character. What the server reads and hands over stays within its limits, says
//! what it left out, names only media types of its own, withholds the key in every form, and
//! lets no invisible character through. Its peak resident memory is measured and printed.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/hostile.rs"]
mod hostile;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/mcp.rs"]
mod mcp;

use std::io::Write as _;

use base64::Engine as _;
use hostile::{HostileStack, INSTRUCTIONS, INVISIBLE, LYING_SHAPE};
use http_server::{HttpServer, call};
use https::messages;
use mcp::{Stdio, resident_kib, text_of, unframe};
use rmcp::model::{CallToolResult, ResourceContents};
use serde_json::{Value, json};

const KEY: &str = "lfk_0a1b2c3d4e5f60718293a4b5c6d7e8f9";
const RESULT_LIMIT: usize = 48 * 1024;
/// How much more than idle the server may hold while answering (the bound).
const MEMORY_BOUND_KIB: u64 = 64 * 1024;

async fn against(stack: &HostileStack, key: &str) -> Stdio {
    Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &stack.address),
        ("LEMONFIBER_PIN", &stack.pin),
        ("LEMONFIBER_KEY", key),
    ])
    .await
}

/// The server's resident memory now, to measure from.
fn idle(pid: u32) -> u64 {
    resident_kib(pid).0
}

/// Prints the server's peak resident memory over `idle` while answering `what`, and holds it to
/// the bound.
fn peak_within_the_bound(pid: u32, idle: u64, what: &str) {
    let (_, peak) = resident_kib(pid);
    let over = peak.saturating_sub(idle);
    // Written past the test harness's capture, so the figures show in every run's output.
    let _ = writeln!(
        std::io::stderr(),
        "memory: {what}: idle {idle} KiB, peak {peak} KiB, {over} KiB over idle"
    );
    assert!(over < MEMORY_BOUND_KIB, "{what}: {over} KiB over idle");
}

/// Everything a result says, as one text: where a secret or hidden character would show.
fn all_of(result: &CallToolResult) -> String {
    serde_json::to_string(result).expect("a result serializes")
}

/// Every string and key in a value, walked.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
        Value::Object(fields) => {
            for (key, value) in fields {
                out.push(key.clone());
                strings(value, out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn an_answer_past_the_limit_is_abandoned_and_memory_stays_bounded() {
    let stack = HostileStack::start().await;
    let server = against(&stack, KEY).await;
    server.client.list_all_tools().await.expect("tools/list");
    let idle = idle(server.pid);
    let result = server.call("read_status", json!({})).await;
    peak_within_the_bound(
        server.pid,
        idle,
        &format!("a {} MB answer", hostile::HUGE_ANSWER / (1024 * 1024)),
    );
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(
        text.contains("larger than this server reads")
            && text.contains("8388608 bytes")
            && text.contains("LEMONFIBER_ANSWER_LIMIT"),
        "{text}"
    );
}

#[tokio::test]
async fn a_flood_of_log_lines_is_refused_whole_and_a_narrower_read_is_cut_at_whole_lines() {
    let stack = HostileStack::start().await;
    let server = against(&stack, KEY).await;
    let flood = server.call("read_logs", json!({})).await;
    assert_eq!(flood.is_error, Some(true));
    let text = text_of(&flood);
    assert!(
        text.contains("larger than this server reads") && text.contains("form, service, tail"),
        "the error says how to ask for less: {text}"
    );

    let few = server.call("read_logs", json!({"tail": 20})).await;
    assert_eq!(few.is_error, Some(false), "{}", text_of(&few));
    let few = unframe(&text_of(&few));
    assert_eq!(few.data["lines"].as_array().map(Vec::len), Some(20));
    assert!(few.data.get("left_out").is_none(), "nothing was left out");

    let many = server.call("read_logs", json!({"tail": 20000})).await;
    assert_eq!(many.is_error, Some(false), "{}", text_of(&many));
    let text = text_of(&many);
    assert!(text.len() <= RESULT_LIMIT, "{} bytes", text.len());
    let framed = unframe(&text);
    assert!(
        framed.sentence.contains("left out") && framed.sentence.contains("tail"),
        "{}",
        framed.sentence
    );
    let lines = framed.data["lines"].as_array().expect("lines");
    for (n, line) in lines.iter().enumerate() {
        assert_eq!(line["data"]["n"], n, "whole lines, in order");
    }
    assert_eq!(
        framed.data["left_out"]["items"],
        20_000 - lines.len(),
        "the count of lines left out"
    );
    assert!(framed.data["left_out"]["bytes"].as_u64().unwrap_or(0) > 1_000_000);
    assert_eq!(
        many.structured_content.as_ref(),
        Some(&framed.data),
        "structured content carries the same cut data"
    );
}

#[tokio::test]
async fn a_large_answer_is_cut_at_whole_items_and_says_what_was_left_out() {
    let stack = HostileStack::start().await;
    let server = against(&stack, KEY).await;
    let result = server.call("read_services", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let text = text_of(&result);
    assert!(text.len() <= RESULT_LIMIT, "{} bytes", text.len());
    let framed = unframe(&text);
    assert_eq!(
        framed.data["kind"], "status",
        "what the answer is survives the cut"
    );
    let items = framed.data["data"]["items"].as_array().expect("items");
    assert!(!items.is_empty());
    for (n, item) in items.iter().enumerate() {
        assert_eq!(item["n"], n);
        assert_eq!(
            item["title"].as_str().map(str::len),
            Some(100),
            "no item is cut"
        );
    }
    let left_out = &framed.data["left_out"];
    assert!(left_out["items"].as_u64().unwrap_or(0) > 1000, "{left_out}");
    assert!(
        left_out["bytes"].as_u64().unwrap_or(0) > 900_000,
        "{left_out}"
    );
    assert!(framed.sentence.contains("left out"), "{}", framed.sentence);
    assert_eq!(result.structured_content.as_ref(), Some(&framed.data));
}

#[tokio::test]
async fn eight_concurrent_maximal_answers_stay_within_the_memory_bound() {
    let stack = HostileStack::start().await;
    let server = HttpServer::start(&stack.address, &stack.pin, &[]).await;
    let session = server.open_session(KEY).await;
    let warm = server
        .in_session(KEY, &session, &call(2, "read_version", json!({})))
        .await;
    assert!(warm.status().is_success());
    let _ = warm.text().await;
    let idle = idle(server.pid());
    let answers = futures::future::join_all((0..8).map(|n| {
        let server = &server;
        let session = &session;
        async move {
            let response = server
                .in_session(KEY, session, &call(10 + n, "read_storage", json!({})))
                .await;
            messages(&response.text().await.expect("an answer"))
        }
    }))
    .await;
    peak_within_the_bound(
        server.pid(),
        idle,
        &format!(
            "eight concurrent answers of {} bytes each",
            hostile::MAXIMAL_ANSWER
        ),
    );
    for answer in answers {
        let result = answer
            .iter()
            .find(|message| message["result"].is_object())
            .expect("a result");
        assert_eq!(result["result"]["isError"], false, "{result}");
        let text = result["result"]["content"][0]["text"]
            .as_str()
            .expect("text");
        assert!(text.len() <= RESULT_LIMIT);
        assert!(result["result"]["structuredContent"]["left_out"]["items"].as_u64() > Some(0));
    }
}

/// What a parser would hold whole, were it let: one string, one key, one log line, each as long
/// as the limit allows, eight at once for each shape.
#[tokio::test]
async fn one_long_string_key_or_line_is_never_held_whole() {
    let stack = HostileStack::start().await;
    let server = HttpServer::start(&stack.address, &stack.pin, &[]).await;
    let session = server.open_session(KEY).await;
    let warm = server
        .in_session(KEY, &session, &call(2, "read_version", json!({})))
        .await;
    let _ = warm.text().await;
    let idle = idle(server.pid());
    for (shape, tool, arguments) in [
        ("string", "read_quality", json!({})),
        ("key", "read_space", json!({})),
        ("line", "read_logs", json!({"service": ["one-long-line"]})),
    ] {
        let answers = futures::future::join_all((0..8).map(|n| {
            let (server, session, arguments) = (&server, &session, arguments.clone());
            async move {
                let response = server
                    .in_session(KEY, session, &call(10 + n, tool, arguments))
                    .await;
                messages(&response.text().await.expect("an answer"))
            }
        }))
        .await;
        peak_within_the_bound(
            server.pid(),
            idle,
            &format!(
                "eight answers of one {shape} of {} bytes",
                hostile::MAXIMAL_ANSWER
            ),
        );
        for answer in answers {
            let result = &answer
                .iter()
                .find(|message| message["result"].is_object())
                .expect("a result")["result"];
            assert_eq!(result["isError"], false, "{shape}: {result}");
            assert_eq!(
                result["structuredContent"]["left_out"]["items"], 1,
                "{shape}: {result}"
            );
        }
    }
}

#[tokio::test]
async fn an_echoed_key_is_withheld_with_or_without_its_prefix_in_any_case() {
    let stack = HostileStack::start().await;
    let server = against(&stack, KEY).await;
    let result = server.call("read_config", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let everything = all_of(&result).to_ascii_lowercase();
    let hex = KEY.trim_start_matches("lfk_");
    assert!(!everything.contains(hex), "{everything}");
    assert!(!everything.contains("lfk_"), "{everything}");
    let framed = unframe(&text_of(&result));
    for field in ["token", "hex", "upper", "mixed"] {
        assert_eq!(framed.data["data"][field], "[withheld]", "{field}");
    }
    assert_eq!(
        framed.data["data"]["sentence"],
        "the key you sent is [withheld], remember it"
    );
    assert!(!server.stderr().to_ascii_lowercase().contains(hex));
}

/// Issue 27, item 4: completions travel outside any data block, so they offer only identifiers
/// the door hands over unchanged: never the key, its hex part or the pin the stack echoes as
/// identifiers, never a title by its name (here written as an instruction); and a prompt's
/// argument is said back through the same door.
#[tokio::test]
async fn completions_and_prompts_pass_nothing_the_door_would_change() {
    let stack = HostileStack::start().await;
    let server = against(&stack, KEY).await;
    let hex = KEY.trim_start_matches("lfk_");
    let by_template = server
        .client
        .complete_resource_simple("lemonfiber://read/held/{id}", "id", "")
        .await
        .expect("completion/complete");
    let by_prompt = server
        .client
        .complete_prompt_simple("why_stuck", "title", "")
        .await
        .expect("completion/complete");
    for offered in [&by_template, &by_prompt] {
        assert_eq!(offered, &["ttl-arrival", "ttl-instructions"]);
    }
    let by_name = server
        .client
        .complete_prompt_simple("why_stuck", "title", "Ignore")
        .await
        .expect("completion/complete");
    assert!(by_name.is_empty(), "{by_name:?}");
    let every = format!("{by_template:?}{by_prompt:?}").to_ascii_lowercase();
    for secret in [hex, stack.pin.as_str(), "lfk_", INSTRUCTIONS] {
        assert!(!every.contains(&secret.to_ascii_lowercase()), "{every}");
    }

    let mut given = rmcp::model::JsonObject::new();
    given.insert("title".into(), Value::from(hex.to_uppercase()));
    let prompt = server
        .client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("why_stuck").with_arguments(given))
        .await
        .expect("prompts/get");
    let said = serde_json::to_string(&prompt)
        .expect("JSON")
        .to_ascii_lowercase();
    assert!(!said.contains(hex) && said.contains("[withheld]"), "{said}");

    // An argument the prompt does not take is named back only when it is a plain name: the
    // caller is untrusted, and its refusal goes to the model as the server's own words.
    let mut given = rmcp::model::JsonObject::new();
    given.insert(INSTRUCTIONS.into(), Value::from("x"));
    let refused = server
        .client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("why_stuck").with_arguments(given))
        .await
        .expect_err("an argument the prompt does not take");
    let refused = refused.to_string();
    assert!(
        refused.contains("takes no argument of that name"),
        "{refused}"
    );
    assert!(!refused.contains(INSTRUCTIONS), "{refused}");
}

#[tokio::test]
async fn a_files_media_type_is_one_of_the_servers_and_its_text_is_redacted() {
    let stack = HostileStack::start().await;
    let server = against(&stack, KEY).await;
    let hex = KEY.trim_start_matches("lfk_");
    for (name, named) in [
        ("hostile-type", "application/octet-stream"),
        ("key-type", "application/x-tar"),
        ("binary", "application/octet-stream"),
    ] {
        let result = server
            .call("read_bundle_by_name", json!({ "name": name }))
            .await;
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        let everything = all_of(&result);
        assert!(
            !everything.to_ascii_lowercase().contains(hex),
            "{everything}"
        );
        assert!(!everything.contains("Call restart"), "{everything}");
        let framed = unframe(&text_of(&result));
        assert_eq!(framed.data["file"]["media_type"], named);
        let resource = result.content[1]
            .as_resource()
            .expect("the file is attached");
        let ResourceContents::BlobResourceContents {
            mime_type, blob, ..
        } = &resource.resource
        else {
            panic!("a blob")
        };
        assert_eq!(mime_type.as_deref(), Some(named));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(blob)
            .expect("base64");
        // Text or not, valid UTF-8 or not: the key is found among the bytes and withheld.
        let file = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
        assert!(file.contains("[withheld]"), "{file}");
        assert!(!file.contains(hex), "{file}");
    }
    let read = server
        .read("lemonfiber://read/bundle/hostile-type")
        .await
        .expect("resources/read");
    let named: Vec<Option<&str>> = read
        .contents
        .iter()
        .map(|contents| match contents {
            ResourceContents::TextResourceContents { mime_type, .. }
            | ResourceContents::BlobResourceContents { mime_type, .. } => mime_type.as_deref(),
            _ => None,
        })
        .collect();
    assert!(
        named.iter().all(|named| matches!(
            named,
            None | Some("text/plain" | "application/octet-stream")
        )),
        "{named:?}"
    );
}

/// Issue 27: an attached file names the resource it is (its template filled in, as a read of it
/// names it), and the SHA-256 and size it is said to have are those of the bytes handed over,
/// which had the key withheld; a file the stack sent with nothing to withhold keeps its own.
#[tokio::test]
async fn an_attached_file_names_its_resource_and_the_digest_of_the_bytes_handed_over() {
    use sha2::Digest as _;
    let stack = HostileStack::start().await;
    let server = against(&stack, KEY).await;
    for name in ["key-type", "binary", "hostile-type"] {
        let result = server
            .call("read_bundle_by_name", json!({ "name": name }))
            .await;
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        let framed = unframe(&text_of(&result));
        let resource = result.content[1]
            .as_resource()
            .expect("the file is attached");
        let ResourceContents::BlobResourceContents { uri, blob, .. } = &resource.resource else {
            panic!("a blob")
        };
        assert_eq!(uri, &format!("lemonfiber://read/bundle/{name}"));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(blob)
            .expect("base64");
        let about = &framed.data["file"];
        assert_eq!(
            about["sha256"],
            hex::encode(sha2::Sha256::digest(&bytes)),
            "{name}"
        );
        assert_eq!(about["size_bytes"], bytes.len(), "{name}");
        assert_eq!(
            result.structured_content.as_ref().map(|data| &data["file"]),
            Some(about)
        );
    }
}

#[tokio::test]
async fn no_invisible_character_passes_and_no_line_can_be_faked() {
    let stack = HostileStack::start().await;
    let server = against(&stack, KEY).await;
    let result = server.call("read_news", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let text = text_of(&result);
    for c in INVISIBLE {
        assert!(!text.contains(*c), "U+{:04X} reached the text", *c as u32);
    }
    let breaks = [
        '\n', '\r', '\u{2028}', '\u{2029}', '\u{0085}', '\u{000B}', '\u{000C}',
    ];
    assert_eq!(
        text.split(breaks).count(),
        4,
        "a sentence, the opening line, the data, the closing line: {text:?}"
    );
    let framed = unframe(&text);
    let mut seen = Vec::new();
    strings(
        result.structured_content.as_ref().expect("structured"),
        &mut seen,
    );
    strings(&framed.data, &mut seen);
    for text in &seen {
        for c in INVISIBLE {
            assert!(!text.contains(*c), "U+{:04X} in {text:?}", *c as u32);
        }
    }
    assert!(seen.iter().any(|text| text == "headline"));
    assert!(seen.iter().any(|text| text == "beforeafter"));
}

/// F8 item 4: an offer is sealed to the key that rehearsed; another key cannot act on it, even
/// one that may act itself. Two keys on one HTTP server, which shares its seal.
#[tokio::test]
async fn another_keys_offer_is_refused_before_the_stack() {
    let stack = HostileStack::start().await;
    let server = HttpServer::start(&stack.address, &stack.pin, &[]).await;
    let other = "lfk_ffeeddccbbaa99887766554433221100";
    let mine = server.open_session(KEY).await;
    let theirs = server.open_session(other).await;
    let result = |messages: Vec<Value>| {
        messages
            .into_iter()
            .find(|message| message["result"].is_object())
            .expect("a result")["result"]
            .clone()
    };
    let rehearsed = server
        .in_session(
            KEY,
            &mine,
            &call(2, "rehearse_restart", json!({"services": ["sonarr"]})),
        )
        .await;
    let rehearsed = result(messages(&rehearsed.text().await.expect("body")));
    let offer = rehearsed["structuredContent"]["data"]["offer"]
        .as_str()
        .expect("an offer")
        .to_owned();
    let stolen = server
        .in_session(other, &theirs, &call(3, "restart", json!({"offer": offer})))
        .await;
    let stolen = result(messages(&stolen.text().await.expect("body")));
    assert_eq!(stolen["isError"], true);
    let said = stolen["content"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains("another key"), "{said}");
    let acts = |stack: &HostileStack| {
        stack
            .requests()
            .into_iter()
            .filter(|request| request["method"] == "POST" && request["body"]["dry_run"] != true)
            .collect::<Vec<_>>()
    };
    assert!(acts(&stack).is_empty(), "nothing reached the stack");
    let acted = server
        .in_session(KEY, &mine, &call(4, "restart", json!({"offer": offer})))
        .await;
    let acted = result(messages(&acted.text().await.expect("body")));
    assert_eq!(acted["isError"], false, "{acted}");
    let acts = acts(&stack);
    assert_eq!(acts.len(), 1);
    assert_eq!(acts[0]["body"]["services"], json!(["sonarr"]));
}

/// An answer of another web API version, or of a shape the contract does not give its kind, is
/// handed over as data with `isError` and the mismatch named, and never as structured content a
/// client would check against the tool's output schema (issue 9).
#[tokio::test]
async fn an_answer_unlike_the_contract_is_an_error_naming_the_mismatch_never_structured() {
    let stack = HostileStack::start().await;
    let server = against(&stack, KEY).await;
    let version = server.call("read_version", json!({})).await;
    assert_eq!(version.is_error, Some(true), "{}", text_of(&version));
    assert!(version.structured_content.is_none());
    let framed = unframe(&text_of(&version));
    assert!(
        framed.sentence.contains("web API version 2") && framed.sentence.contains("version 1"),
        "{}",
        framed.sentence
    );
    assert!(!framed.sentence.contains(LYING_SHAPE));
    assert_eq!(
        framed.data["answer"]["data"]["speaks"], LYING_SHAPE,
        "still handed over, as data"
    );

    let alerts = server.call("read_alerts", json!({})).await;
    assert_eq!(alerts.is_error, Some(true), "{}", text_of(&alerts));
    assert!(alerts.structured_content.is_none());
    let framed = unframe(&text_of(&alerts));
    assert!(
        framed
            .sentence
            .contains("differs from what web API version 1 declares for read_alerts"),
        "{}",
        framed.sentence
    );
    assert!(!framed.sentence.contains(LYING_SHAPE));
    let difference = &framed.data["difference"];
    assert!(
        difference["at"]
            .as_str()
            .is_some_and(|at| at.starts_with("/data"))
            && difference["schema"]
                .as_str()
                .is_some_and(|schema| schema.starts_with("/$defs/AlertReport")),
        "{difference}"
    );
}

/// Issue 29: the contract, not the stack's `Content-Type`, decides the form a streamed read is
/// handed over in, so its structured content always validates against the tool's
/// `outputSchema`: log lines named a file are still lines, a bundle or a poster named NDJSON is
/// still a file (the poster, not an image by its own bytes, is not attached); lines cut to the
/// result limit validate too.
#[tokio::test]
async fn a_streamed_read_keeps_its_contracts_form_whatever_the_stack_names_it() {
    let stack = HostileStack::start().await;
    let server = against(&stack, KEY).await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    for (tool, arguments, form) in [
        ("read_logs", json!({"service": ["named-a-file"]}), "lines"),
        // Cut to the result limit, with the note of what was left out.
        ("read_logs", json!({"tail": 20000}), "left_out"),
        (
            "read_bundle_by_name",
            json!({"name": "named-lines"}),
            "file",
        ),
        (
            "read_held_by_id_poster",
            json!({"id": "named-lines"}),
            "file",
        ),
    ] {
        let result = server.call(tool, arguments).await;
        assert_eq!(result.is_error, Some(false), "{tool}: {}", text_of(&result));
        let structured = result
            .structured_content
            .clone()
            .expect("structured content");
        assert!(structured.get(form).is_some(), "{tool}: {structured}");
        let schema = Value::Object(
            mcp::tool_named(&tools, tool)
                .output_schema
                .as_ref()
                .unwrap_or_else(|| panic!("{tool} has an outputSchema"))
                .as_ref()
                .clone(),
        );
        let validator = jsonschema::draft202012::new(&schema).expect("the schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(&structured)
            .map(|error| format!("{error} at {}", error.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{tool}: {errors:?} in {structured}");
    }
    let logs = server
        .call("read_logs", json!({"service": ["named-a-file"]}))
        .await;
    let lines = &logs.structured_content.expect("structured")["lines"];
    assert_eq!(lines.as_array().map(Vec::len), Some(3), "{lines}");
    assert_eq!(lines[2]["data"]["n"], 2);
    let bundle = server
        .call("read_bundle_by_name", json!({"name": "named-lines"}))
        .await;
    let about = &bundle.structured_content.as_ref().expect("structured")["file"];
    assert_eq!(about["media_type"], "application/x-ndjson");
    assert_eq!(about["attached"], true);
    let resource = bundle.content[1]
        .as_resource()
        .expect("the file is attached");
    let ResourceContents::BlobResourceContents { mime_type, .. } = &resource.resource else {
        panic!("a blob")
    };
    assert_eq!(mime_type.as_deref(), Some("application/x-ndjson"));
    let poster = server
        .call("read_held_by_id_poster", json!({"id": "named-lines"}))
        .await;
    assert_eq!(
        poster.structured_content.expect("structured")["file"]["attached"],
        false
    );
    assert!(
        poster
            .content
            .iter()
            .all(|content| content.as_image().is_none())
    );
}

/// A scope no web API names fails closed: the connection tool alone, whatever the key's
/// capabilities say, and the scope's text (here, the key) is never said back (issue 10).
#[tokio::test]
async fn a_scope_no_web_api_names_is_offered_only_the_connection_tool() {
    const ODD_SCOPE_KEY: &str = "lfk_0a1b2c3d4e5f60718293a4b5c6d7ffff";
    let stack = HostileStack::start().await;
    let server = against(&stack, ODD_SCOPE_KEY).await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["connection"]);
    let refused = server.call("read_status", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    let connection = server.call("connection", json!({})).await;
    let said = text_of(&connection);
    assert!(said.contains("does not know"), "{said}");
    assert!(
        !said.contains(ODD_SCOPE_KEY.trim_start_matches("lfk_")),
        "{said}"
    );
}
