//! Each protocol version as its clients expect it (issue 11): the error codes a resource read
//! comes to, and 2025-03-26, which assistants in the field still speak, over stdio and HTTPS.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/mcp.rs"]
mod mcp;

use demo::{DemoStack, Scratch};
use http_server::http_server;
use https::messages;
use mcp::{Opening, Stdio, connected_speaking, text_of};
use rmcp::ServiceError;
use rmcp::model::{ErrorCode, ProtocolVersion};
use serde_json::{Value, json};

/// The JSON-RPC error a resource read came to: its code and its data.
async fn read_error(server: &Stdio, uri: &str) -> (ErrorCode, Option<Value>) {
    match server.read(uri).await {
        Err(ServiceError::McpError(error)) => (error.code, error.data),
        other => panic!("{uri}: a JSON-RPC error, not {other:?}"),
    }
}

#[tokio::test]
async fn a_resource_read_that_fails_gets_the_code_of_the_version_spoken() {
    let demo = DemoStack::start().await;
    let missing = "lemonfiber://read/held/ttl-no-such-title";
    let nowhere = "lemonfiber://read/nothing-here";

    // 2025-11-25: what the stack says is not there, and what no read serves, is -32002.
    let legacy = connected_speaking(
        &demo,
        &demo.read_key_file,
        Opening::Initialize(ProtocolVersion::V_2025_11_25),
    )
    .await;
    for uri in [missing, nowhere] {
        assert_eq!(
            read_error(&legacy, uri).await,
            (ErrorCode::RESOURCE_NOT_FOUND, Some(json!({"uri": uri}))),
            "{uri}"
        );
    }

    // 2026-07-28: an invalid-params error naming the resource.
    let current = connected_speaking(&demo, &demo.read_key_file, Opening::Discover).await;
    for uri in [missing, nowhere] {
        assert_eq!(
            read_error(&current, uri).await,
            (ErrorCode::INVALID_PARAMS, Some(json!({"uri": uri}))),
            "{uri}"
        );
    }

    // A resource the key is not offered is the caller's to change, on every version: never an
    // internal error.
    let not_offered = "lemonfiber://read/status";
    for opening in [
        Opening::Initialize(ProtocolVersion::V_2025_11_25),
        Opening::Discover,
    ] {
        let member = connected_speaking(&demo, &demo.member_key_file, opening).await;
        assert_eq!(
            read_error(&member, not_offered).await,
            (ErrorCode::INVALID_PARAMS, Some(json!({"uri": not_offered})))
        );
    }
}

#[tokio::test]
async fn a_2025_03_26_client_lists_and_calls_tools_over_stdio() {
    let demo = DemoStack::start().await;
    let server = connected_speaking(
        &demo,
        &demo.read_key_file,
        Opening::Initialize(ProtocolVersion::V_2025_03_26),
    )
    .await;
    let negotiated = server
        .client
        .peer_info()
        .expect("the server answered initialize")
        .protocol_version
        .clone();
    assert_eq!(negotiated, ProtocolVersion::V_2025_03_26);
    let tools = server.client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|tool| tool.name == "read_status"));
    let status = server.call("read_status", json!({})).await;
    assert_eq!(status.is_error, Some(false), "{}", text_of(&status));
}

#[tokio::test]
async fn a_2025_03_26_client_lists_and_calls_tools_over_https() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let (session, opened) = initialize(&server, &key, "2025-03-26").await;
    let answer = messages(&opened);
    assert_eq!(answer[0]["result"]["protocolVersion"], "2025-03-26");

    let send = |body: Value| {
        server
            .post(Some(&key), &body)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-03-26")
            .send()
    };
    let initialized = send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await
        .expect("initialized");
    assert_eq!(initialized.status(), reqwest::StatusCode::ACCEPTED);
    let listed = send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await
        .expect("tools/list");
    assert_eq!(listed.status(), reqwest::StatusCode::OK);
    let listed = messages(&listed.text().await.expect("a body"));
    let tools = listed[0]["result"]["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|tool| tool["name"] == "read_status"));
    let called = send(http_server::call(3, "read_status", json!({})))
        .await
        .expect("tools/call");
    let called = messages(&called.text().await.expect("a body"));
    assert_eq!(called[0]["result"]["isError"], false, "{called:?}");
}

#[tokio::test]
async fn an_unsupported_version_over_https_is_answered_as_json_rpc_with_the_supported_list() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let answered = server
        .post(
            Some(&key),
            &json!({"jsonrpc": "2.0", "id": 41, "method": "tools/list"}),
        )
        .header("mcp-protocol-version", "1999-01-01")
        .send()
        .await
        .expect("answered");
    assert_eq!(answered.status(), reqwest::StatusCode::BAD_REQUEST);
    let body: Value = answered.json().await.expect("JSON");
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], 41);
    assert_eq!(body["error"]["code"], -32022);
    assert_eq!(body["error"]["data"]["requested"], "1999-01-01");
    assert_eq!(
        body["error"]["data"]["supported"],
        json!(["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
    );
}

/// Every event of an SSE body, as its raw lines.
fn events(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// Opens a session over HTTPS asking for `version`: its identifier, and the answer's body.
async fn initialize(
    server: &http_server::HttpServer,
    key: &str,
    version: &str,
) -> (String, String) {
    let opened = server
        .post(Some(key), &http_server::initialize_asking(version))
        .send()
        .await
        .expect("initialize");
    assert_eq!(opened.status(), reqwest::StatusCode::OK);
    let session = opened
        .headers()
        .get("mcp-session-id")
        .expect("a session")
        .to_str()
        .expect("text")
        .to_owned();
    (session, opened.text().await.expect("a body"))
}

/// The events of `tools/list` answered on a session opened with `version`.
async fn events_of_tools_list(version: &str) -> Vec<String> {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let (session, opened) = initialize(&server, &key, version).await;
    let mut seen = events(&opened);
    let listed = server
        .post(
            Some(&key),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", version)
        .send()
        .await
        .expect("tools/list")
        .text()
        .await
        .expect("a body");
    seen.extend(events(&listed));
    seen
}

/// Whether an SSE event carries a JSON-RPC message, rather than empty data (the priming event).
fn carries_a_message(event: &str) -> bool {
    let data: Vec<&str> = event
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .collect();
    !data.is_empty()
        && data
            .iter()
            .all(|data| serde_json::from_str::<Value>(data).is_ok())
}

#[tokio::test]
async fn the_sse_priming_event_goes_only_to_clients_of_2025_11_25_on() {
    let earlier = events_of_tools_list("2025-06-18").await;
    assert!(
        earlier.iter().all(|event| carries_a_message(event)),
        "a 2025-06-18 client sees only JSON-RPC messages: {earlier:?}"
    );
    let later = events_of_tools_list("2025-11-25").await;
    assert!(
        later.iter().any(|event| !carries_a_message(event)),
        "a 2025-11-25 client is primed: {later:?}"
    );
}

#[tokio::test]
async fn on_2026_07_28_every_result_names_the_server_and_before_it_none_does() {
    let demo = DemoStack::start().await;
    let named = |meta: Option<&rmcp::model::MetaObject>| {
        meta.and_then(|meta| meta.get("io.modelcontextprotocol/serverInfo"))
            .and_then(|info| info["name"].as_str().map(str::to_owned))
    };
    let current = connected_speaking(&demo, &demo.read_key_file, Opening::Discover).await;
    let tools = current.client.list_tools(None).await.expect("tools/list");
    assert_eq!(
        named(tools.meta.as_ref()).as_deref(),
        Some("lemonfiber-mcp")
    );
    let status = current.call("read_status", json!({})).await;
    assert_eq!(
        named(status.meta.as_ref()).as_deref(),
        Some("lemonfiber-mcp")
    );
    let resources = current
        .client
        .list_resources(None)
        .await
        .expect("resources/list");
    assert_eq!(
        named(resources.meta.as_ref()).as_deref(),
        Some("lemonfiber-mcp")
    );
    let read = current
        .read("lemonfiber://read/status")
        .await
        .expect("resources/read");
    assert_eq!(named(read.meta.as_ref()).as_deref(), Some("lemonfiber-mcp"));

    let legacy = connected_speaking(
        &demo,
        &demo.read_key_file,
        Opening::Initialize(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let tools = legacy.client.list_tools(None).await.expect("tools/list");
    assert_eq!(named(tools.meta.as_ref()), None);
}

/// A stateless (2026-07-28) `tools/call` as a client without a session sends it.
fn stateless(
    server: &http_server::HttpServer,
    key: &str,
    id: u64,
    tool: &str,
    arguments: Value,
    mut meta: Value,
) -> reqwest::RequestBuilder {
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "versions", "version": "0"});
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta}});
    server
        .post(Some(key), &body)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
}

/// Issue 15: a stateless answer that is the request's only message goes out as one JSON body of
/// known length (one write, no event framing), still framed as data inside.
#[tokio::test]
async fn a_stateless_answer_is_one_json_body_of_known_length() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let answer = stateless(&server, &key, 7, "read_status", json!({}), json!({}))
        .send()
        .await
        .expect("read_status");
    assert_eq!(answer.status(), reqwest::StatusCode::OK);
    assert_eq!(answer.headers()["content-type"], "application/json");
    let length: usize = answer.headers()["content-length"]
        .to_str()
        .expect("text")
        .parse()
        .expect("a length");
    let body = answer.text().await.expect("a body");
    assert_eq!(body.len(), length);
    let message: Value = serde_json::from_str(&body).expect("one JSON-RPC message");
    assert_eq!(message["id"], 7);
    assert_eq!(message["result"]["isError"], false, "{body}");
    let text = message["result"]["content"][0]["text"]
        .as_str()
        .expect("a text block");
    assert_eq!(mcp::unframe(text).data["kind"], "status");
}

/// The offer a stateless `rehearse_update` hands out for `key`.
async fn rehearsed_update(server: &http_server::HttpServer, key: &str) -> String {
    let rehearsed: Value = stateless(server, key, 1, "rehearse_update", json!({}), json!({}))
        .send()
        .await
        .expect("rehearse_update")
        .json()
        .await
        .expect("one JSON body");
    let rehearsal = rehearsed["result"]["content"][0]["text"]
        .as_str()
        .expect("a text block");
    mcp::unframe(rehearsal).data["data"]["offer"]
        .as_str()
        .expect("an offer")
        .to_owned()
}

/// Issue 15: a stateless act whose job the server follows, for a caller that asked for
/// progress, still streams: the progress goes out before the result, none of it lost to the
/// single JSON body.
#[tokio::test]
async fn a_stateless_act_that_reports_progress_still_streams_it_before_its_result() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[("LEMONFIBER_JOB_WAIT", "2")]).await;
    let key = demo.key(&demo.act_key_file);
    demo.control("jobs/hold").await;
    let offer = rehearsed_update(&server, &key).await;

    let acted = stateless(
        &server,
        &key,
        2,
        "update",
        json!({"offer": offer}),
        json!({"progressToken": "update-1"}),
    )
    .send()
    .await
    .expect("update");
    assert_eq!(acted.headers()["content-type"], "text/event-stream");
    let messages = messages(&acted.text().await.expect("a body"));
    let (result, before) = messages.split_last().expect("messages");
    assert_eq!(result["id"], 2, "{messages:?}");
    assert_eq!(result["result"]["isError"], false, "{result}");
    assert!(
        !before.is_empty()
            && before.iter().all(|message| {
                message["method"] == "notifications/progress"
                    && message["params"]["progressToken"] == "update-1"
            }),
        "{messages:?}"
    );
    demo.control("jobs/release").await;
}

/// Issue 32: a stateless act whose client goes away while the server follows its job is
/// cancelled, never cut short: the stack took the act, so its audit line is written, long before
/// the job would have been followed to its end.
#[tokio::test]
async fn a_stateless_act_whose_client_goes_away_is_still_audited() {
    let demo = DemoStack::start().await;
    let folder = Scratch::at(http_server::fresh_dir("gone-away"));
    std::fs::create_dir_all(&*folder).expect("a folder for the audit");
    let audit = folder.join("audit");
    let audited = audit.display().to_string();
    let settings = [
        ("LEMONFIBER_JOB_WAIT", "60"),
        ("LEMONFIBER_AUDIT", &audited),
    ];
    let server = http_server(&demo, &settings).await;
    let key = demo.key(&demo.act_key_file);
    demo.control("jobs/hold").await;
    let offer = rehearsed_update(&server, &key).await;

    let acting = stateless(
        &server,
        &key,
        2,
        "update",
        json!({"offer": offer}),
        json!({}),
    )
    .send();
    let gone = tokio::time::timeout(std::time::Duration::from_secs(2), acting).await;
    assert!(
        gone.is_err(),
        "the act answered before its job ended: {gone:?}"
    );
    let mut acted = None;
    for _ in 0..100 {
        acted = std::fs::read_to_string(&audit)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|line| line["tool"] == "update");
        if acted.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let acted = acted.expect("the act's audit line, within ten seconds");
    assert_eq!(acted["decision"], "sent", "{acted}");
    assert!(acted["ms"].as_u64().expect("ms") < 30_000, "{acted}");
    demo.control("jobs/release").await;
}

/// What `logging/setLevel` came to: answered, or the code of the error.
// Logging is deprecated from 2026-07-28 on; the versions before it still have it.
#[allow(deprecated)]
async fn set_level(server: &Stdio) -> Result<(), ErrorCode> {
    let asked = rmcp::model::SetLevelRequestParams::new(rmcp::model::LoggingLevel::Info);
    match server.client.set_level(asked).await {
        Ok(()) => Ok(()),
        Err(ServiceError::McpError(error)) => Err(error.code),
        Err(other) => panic!("a JSON-RPC answer, not {other}"),
    }
}

/// Issue 29, item 5: 2026-07-28 deprecates logging and moves its level into each request, which
/// this server does not serve: `server/discover` declares no logging, and `logging/setLevel` is
/// an unknown method. The versions before it keep logging.
#[tokio::test]
async fn logging_is_declared_and_served_only_before_2026_07_28_over_stdio() {
    let demo = DemoStack::start().await;
    let current = connected_speaking(&demo, &demo.read_key_file, Opening::Discover).await;
    let declared = current.client.peer_info().expect("discovered");
    assert_eq!(declared.protocol_version, ProtocolVersion::V_2026_07_28);
    assert_eq!(declared.capabilities.logging, None);
    assert!(
        declared.capabilities.completions.is_some(),
        "the rest stays"
    );
    assert_eq!(set_level(&current).await, Err(ErrorCode::METHOD_NOT_FOUND));

    for version in [
        ProtocolVersion::V_2025_03_26,
        ProtocolVersion::V_2025_06_18,
        ProtocolVersion::V_2025_11_25,
    ] {
        let legacy = connected_speaking(
            &demo,
            &demo.read_key_file,
            Opening::Initialize(version.clone()),
        )
        .await;
        let declared = legacy.client.peer_info().expect("initialized");
        assert!(declared.capabilities.logging.is_some(), "{version}");
        assert_eq!(set_level(&legacy).await, Ok(()), "{version}");
    }
}

/// Issue 29, item 5, over HTTPS: the same, by raw requests without a session on 2026-07-28.
#[tokio::test]
async fn logging_is_declared_and_served_only_before_2026_07_28_over_https() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let ask = |id: u64, method: &str, params: Value| {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "versions", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        server
            .post(Some(&key), &body)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
    };
    let answered = |response: reqwest::Response| async move {
        let body = response.text().await.expect("a body");
        messages(&body)
            .pop()
            .unwrap_or_else(|| panic!("a message: {body}"))
    };
    let discovered = answered(
        ask(1, "server/discover", json!({}))
            .send()
            .await
            .expect("sent"),
    )
    .await;
    let capabilities = &discovered["result"]["capabilities"];
    assert!(capabilities.get("tools").is_some(), "{discovered}");
    assert_eq!(capabilities.get("logging"), None, "{discovered}");
    let asked = ask(2, "logging/setLevel", json!({"level": "info"}));
    let refused = answered(asked.send().await.expect("sent")).await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");

    let initialized = server
        .post(Some(&key), &http_server::initialize())
        .send()
        .await
        .expect("initialize");
    let initialized = answered(initialized).await;
    assert!(
        initialized["result"]["capabilities"]
            .get("logging")
            .is_some(),
        "{initialized}"
    );
}

/// Issue 32: the server serves a stateless `tools/call` in the request's own task, not through
/// the MCP library, and answers it as the library does. The same call is sent as the official
/// clients send it (served by the server) and with a weighted `Accept` (which the server leaves
/// to the library); both answers must agree in status, type and every field but the offer each
/// rehearsal seals afresh.
#[tokio::test]
async fn a_stateless_call_the_server_serves_itself_is_answered_as_the_library_answers_it() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let read = demo.key(&demo.read_key_file);
    let act = demo.key(&demo.act_key_file);
    let member = demo.key(&demo.member_key_file);
    let calls = [
        (&read, "read_status", json!({})),
        (&read, "connection", json!({})),
        (&read, "read_logs", json!({"lines": "many"})),
        (&read, "read_status", json!({"unasked": true})),
        (&read, "no_such_tool", json!({})),
        (&read, "update", json!({})),
        (&act, "rehearse_update", json!({})),
        (&act, "update", json!({"offer": "not-an-offer"})),
        (&member, "read_status", json!({})),
        (&member, "read_requests", json!({})),
    ];
    for (id, (key, tool, arguments)) in (1..).zip(calls) {
        let served_here = stateless(&server, key, id, tool, arguments.clone(), json!({}));
        let by_the_library = stateless(&server, key, id, tool, arguments, json!({}))
            .header("accept", "application/json;q=1");
        let (here, library) = (answer(served_here).await, answer(by_the_library).await);
        assert_eq!(here.1, "application/json", "{tool}: one JSON body");
        assert_eq!(here, library, "{tool}");
    }
}

/// An answer as a client sees it: its status, its type, and its one JSON-RPC message (alone, or
/// in a stream of events), with what is made afresh for each answer (a frame's boundary, a
/// sealed offer or question) made the same.
async fn answer(request: reqwest::RequestBuilder) -> (u16, String, Value) {
    let answer = request.send().await.expect("an answer");
    let status = answer.status().as_u16();
    let kind = answer.headers()["content-type"]
        .to_str()
        .expect("text")
        .to_owned();
    let body = answer.text().await.expect("a body");
    let mut said = messages(&body);
    assert_eq!(said.len(), 1, "one message: {body}");
    let mut message = said.remove(0);
    unseal(&mut message);
    (status, kind, message)
}

fn unseal(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            for (name, field) in fields.iter_mut() {
                match field {
                    Value::String(text) if name == "offer" || name == "requestState" => {
                        *text = "sealed".to_owned();
                    }
                    Value::String(text) if text.contains("\n[lemonfiber stack data ") => {
                        let framed = mcp::unframe(text);
                        let mut data = framed.data;
                        unseal(&mut data);
                        let sentence = unsealed(&framed.sentence);
                        *field = json!({"sentence": sentence, "data": data});
                    }
                    Value::String(text) => *text = unsealed(text),
                    _ => unseal(field),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unseal),
        _ => {}
    }
}

/// `text` with each sealed offer it names made the same.
fn unsealed(text: &str) -> String {
    const OFFER: &str = "lfmcp-offer1.";
    let mut rest = text;
    let mut unsealed = String::new();
    while let Some(at) = rest.find(OFFER) {
        unsealed.push_str(&rest[..at]);
        unsealed.push_str("sealed");
        let sealed = &rest[at + OFFER.len()..];
        let end = sealed
            .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
            .unwrap_or(sealed.len());
        rest = &sealed[end..];
    }
    unsealed.push_str(rest);
    unsealed
}

/// A session opened with `version` whose client has said it is initialized: its identifier.
async fn begun(server: &http_server::HttpServer, key: &str, version: &str) -> String {
    let (session, _) = initialize(server, key, version).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let said = in_session(server, key, &session, version, &initialized)
        .send()
        .await
        .expect("notifications/initialized");
    assert_eq!(said.status(), reqwest::StatusCode::ACCEPTED);
    session
}

/// A request of `session`'s, as a client of `version` sends it (2025-03-26 named no version).
fn in_session(
    server: &http_server::HttpServer,
    key: &str,
    session: &str,
    version: &str,
    body: &Value,
) -> reqwest::RequestBuilder {
    let request = server
        .post(Some(key), body)
        .header("mcp-session-id", session);
    if version == "2025-03-26" {
        request
    } else {
        request.header("mcp-protocol-version", version)
    }
}

/// Issue 32: a read in a session that has begun is served in the request's own task, not
/// through the MCP library, as one JSON body that holds what the library's stream would: the
/// same call is sent as the official clients send it (served by the server) and with a weighted
/// `Accept` (left to the library), on each version a session speaks.
#[tokio::test]
async fn a_read_in_a_session_the_server_serves_itself_is_answered_as_the_library_answers_it() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let read = demo.key(&demo.read_key_file);
    let member = demo.key(&demo.member_key_file);
    let calls = [
        (&read, "read_status", json!({})),
        (&read, "connection", json!({})),
        (&read, "read_logs", json!({"lines": "many"})),
        (&read, "read_status", json!({"unasked": true})),
        (&read, "read_held_by_id", json!({"id": "ttl-no-such-title"})),
        (&read, "read_held_by_id", json!({"id": "../credentials"})),
        (&member, "read_status", json!({})),
        (&member, "read_requests", json!({})),
    ];
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let sessions = [
            (&read, begun(&server, &read, version).await),
            (&member, begun(&server, &member, version).await),
        ];
        for (id, (key, tool, arguments)) in (1..).zip(&calls) {
            let (_, session) = sessions
                .iter()
                .find(|(of, _)| of == key)
                .expect("a session");
            let body = http_server::call(id, tool, arguments.clone());
            let served_here = in_session(&server, key, session, version, &body);
            let by_the_library = in_session(&server, key, session, version, &body)
                .header("accept", "application/json;q=1, text/event-stream");
            let here = answer(served_here).await;
            let library = answer(by_the_library).await;
            assert_eq!(here.1, "application/json", "{version} {tool}: served here");
            assert!(
                library.1.starts_with("text/event-stream"),
                "{version} {tool}: {}",
                library.1
            );
            assert_eq!((here.0, here.2), (library.0, library.2), "{version} {tool}");
        }
    }
}

/// Issue 32: what a read served in the request's own task would answer differently from the
/// library goes to the library, which answers with its stream: an act, a read asking for
/// progress or naming its own version, a session whose client has not yet said it is
/// initialized, and one whose client asked for the server's notices.
#[tokio::test]
async fn a_call_in_a_session_that_only_the_library_answers_as_it_would_is_left_to_it() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let read = demo.key(&demo.read_key_file);
    let act = demo.key(&demo.act_key_file);
    let version = "2025-11-25";
    let streamed = |answer: (u16, String, Value), what: &str| {
        assert!(
            answer.1.starts_with("text/event-stream"),
            "{what}: {answer:?}"
        );
        answer.2
    };

    let acting = begun(&server, &act, version).await;
    let rehearsed = in_session(
        &server,
        &act,
        &acting,
        version,
        &http_server::call(1, "rehearse_update", json!({})),
    );
    let rehearsed = streamed(answer(rehearsed).await, "a rehearsal");
    assert_eq!(rehearsed["result"]["isError"], false, "{rehearsed}");

    let session = begun(&server, &read, version).await;
    let mut progress = http_server::call(2, "read_status", json!({}));
    progress["params"]["_meta"] = json!({"progressToken": "p"});
    let mut versioned = http_server::call(3, "read_status", json!({}));
    versioned["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": version});
    for (body, what) in [
        (progress, "progress asked for"),
        (versioned, "a version named"),
    ] {
        let request = in_session(&server, &read, &session, version, &body);
        streamed(answer(request).await, what);
    }
    let other_version = in_session(
        &server,
        &read,
        &session,
        "2025-06-18",
        &http_server::call(4, "read_status", json!({})),
    );
    streamed(answer(other_version).await, "another version");

    let (unready, _) = initialize(&server, &read, version).await;
    let early = in_session(
        &server,
        &read,
        &unready,
        version,
        &http_server::call(5, "read_status", json!({})),
    );
    let early = streamed(answer(early).await, "before initialized");
    assert_eq!(early["result"]["isError"], false, "{early}");

    let hearing = begun(&server, &read, version).await;
    let asked = json!({"jsonrpc": "2.0", "id": 6, "method": "logging/setLevel",
        "params": {"level": "warning"}});
    let asked = answer(in_session(&server, &read, &hearing, version, &asked)).await;
    assert_eq!(asked.2["result"], json!({}), "{asked:?}");
    let read_then = in_session(
        &server,
        &read,
        &hearing,
        version,
        &http_server::call(7, "read_status", json!({})),
    );
    streamed(answer(read_then).await, "notices asked for");
}

/// Issue 32: a session whose reads are all served in the request's own task is still the
/// key's, and ends as any does: another key naming it finds no session, a DELETE ends it, and a
/// read of it then is not found.
#[tokio::test]
async fn a_session_whose_reads_are_served_here_ends_when_its_client_ends_it() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let read = demo.key(&demo.read_key_file);
    let other = demo.key(&demo.member_key_file);
    let version = "2025-11-25";
    let session = begun(&server, &read, version).await;
    let call = http_server::call(1, "read_status", json!({}));
    let elsewhere = in_session(&server, &other, &session, version, &call)
        .send()
        .await
        .expect("another key's read");
    assert_eq!(elsewhere.status(), reqwest::StatusCode::NOT_FOUND);
    let served = answer(in_session(&server, &read, &session, version, &call)).await;
    assert_eq!((served.0, served.1.as_str()), (200, "application/json"));
    let ended = server
        .client
        .delete(&server.url)
        .bearer_auth(&read)
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("DELETE");
    assert!(ended.status().is_success(), "{}", ended.status());
    let after = in_session(&server, &read, &session, version, &call)
        .send()
        .await
        .expect("a read after");
    assert_eq!(after.status(), reqwest::StatusCode::NOT_FOUND);
}
