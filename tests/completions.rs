//! `completion/complete` against the real server (issue 29, item 3): what the key is offered
//! completes, and a prompt, resource template or argument it is not offered is invalid params
//! naming which, said back only cleaned and short. In every version served, over stdio and HTTPS.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/mcp.rs"]
mod mcp;

use demo::DemoStack;
use http_server::{HttpServer, http_server, initialize_asking};
use https::messages;
use mcp::{Opening, Stdio, connected_speaking};
use rmcp::ServiceError;
use rmcp::model::{CompleteRequestParams, ErrorCode, ProtocolVersion};
use serde_json::{Value, json};

/// How a scenario reaches the server.
enum Way<'a> {
    Stdio(&'a Stdio),
    /// A session `initialize` opened, of that version.
    Session(&'a HttpServer, &'a str, String),
    /// 2026-07-28: no session, the version in each request.
    Stateless(&'a HttpServer, &'a str),
}

/// What the server answered a completion: its values, or the error's code and message.
async fn complete(way: &Way<'_>, reference: Value, argument: &str, typed: &str) -> Answer {
    let params = json!({"ref": reference, "argument": {"name": argument, "value": typed}});
    match way {
        Way::Stdio(server) => {
            let params: CompleteRequestParams = serde_json::from_value(params).expect("params");
            match server.client.complete(params).await {
                Ok(result) => Answer::Values(result.completion.values),
                Err(ServiceError::McpError(error)) => {
                    Answer::Error(error.code.0, error.message.into_owned())
                }
                Err(other) => panic!("a JSON-RPC answer, not {other}"),
            }
        }
        Way::Session(server, key, session) => {
            let body = json!({"jsonrpc": "2.0", "id": 2, "method": "completion/complete",
                "params": params});
            let answer = server.in_session(key, session, &body).await;
            of(&answer.text().await.expect("a body"))
        }
        Way::Stateless(server, key) => {
            let mut params = params;
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "completions", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            });
            let body = json!({"jsonrpc": "2.0", "id": 2, "method": "completion/complete",
                "params": params});
            let answer = server
                .post(Some(key), &body)
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "completion/complete")
                .send()
                .await
                .expect("answered");
            of(&answer.text().await.expect("a body"))
        }
    }
}

fn of(body: &str) -> Answer {
    let message = messages(body)
        .pop()
        .unwrap_or_else(|| panic!("a message: {body}"));
    match message.get("error") {
        Some(error) => Answer::Error(
            i32::try_from(error["code"].as_i64().expect("a code")).expect("small"),
            error["message"].as_str().expect("a message").to_owned(),
        ),
        None => Answer::Values(
            message["result"]["completion"]["values"]
                .as_array()
                .unwrap_or_else(|| panic!("values: {message}"))
                .iter()
                .map(|value| value.as_str().expect("text").to_owned())
                .collect(),
        ),
    }
}

#[derive(Debug)]
enum Answer {
    Values(Vec<String>),
    Error(i32, String),
}

impl Answer {
    fn values(self) -> Vec<String> {
        match self {
            Answer::Values(values) => values,
            Answer::Error(code, message) => panic!("values, not {code}: {message}"),
        }
    }

    /// The message of an invalid-params error.
    fn refusal(self) -> String {
        match self {
            Answer::Error(code, message) if code == ErrorCode::INVALID_PARAMS.0 => message,
            other => panic!("invalid params, not {other:?}"),
        }
    }
}

fn prompt(name: &str) -> Value {
    json!({"type": "ref/prompt", "name": name})
}

fn template(uri: &str) -> Value {
    json!({"type": "ref/resource", "uri": uri})
}

const HELD: &str = "lemonfiber://read/held/{id}";

/// What a scenario checks, the same over every way: the known complete, the unknown are refused
/// naming which, and what the client sent is said back cleaned (nothing hidden, no key) and short.
async fn scenario(way: &Way<'_>, key: &str) {
    let services = complete(way, prompt("why_stuck"), "service", "")
        .await
        .values();
    assert!(
        services.iter().any(|service| service == "transmission"),
        "{services:?}"
    );
    let titles = complete(way, template(HELD), "id", "ttl-arr")
        .await
        .values();
    assert_eq!(titles, ["ttl-arrival"]);

    let said = complete(way, prompt("why_not_stuck"), "service", "")
        .await
        .refusal();
    assert!(
        said.contains("no prompt \u{201C}why_not_stuck\u{201D}"),
        "{said}"
    );

    let uri = "lemonfiber://read/nothing/{id}";
    let said = complete(way, template(uri), "id", "").await.refusal();
    assert!(
        said.contains(&format!("no resource template \u{201C}{uri}\u{201D}")),
        "{said}"
    );

    let said = complete(way, prompt("why_stuck"), "colour", "")
        .await
        .refusal();
    assert!(
        said.contains("why_stuck takes no argument \u{201C}colour\u{201D}"),
        "{said}"
    );

    let said = complete(way, template(HELD), "name", "").await.refusal();
    assert!(
        said.contains(&format!("{HELD} has no parameter \u{201C}name\u{201D}")),
        "{said}"
    );

    let hostile = format!("why\u{202E}_stuck_{key}_{}", "x".repeat(4000));
    let said = complete(way, prompt(&hostile), "service", "")
        .await
        .refusal();
    assert!(said.contains("no prompt \u{201C}why_stuck_"), "{said}");
    assert!(!said.contains('\u{202E}') && !said.contains(key), "{said}");
    assert!(said.chars().count() < 300, "bounded: {said}");
}

#[tokio::test]
async fn unknown_completions_are_invalid_params_over_stdio_in_every_version() {
    let demo = DemoStack::start().await;
    let key = demo.key(&demo.read_key_file);
    for opening in [
        Opening::Initialize(ProtocolVersion::V_2025_03_26),
        Opening::Initialize(ProtocolVersion::V_2025_06_18),
        Opening::Initialize(ProtocolVersion::V_2025_11_25),
        Opening::Discover,
    ] {
        let server = connected_speaking(&demo, &demo.read_key_file, opening).await;
        scenario(&Way::Stdio(&server), &key).await;
        server.client.cancel().await.expect("the session ends");
    }
}

#[tokio::test]
async fn unknown_completions_are_invalid_params_over_https_in_every_version() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let session = open_session(&server, &key, version).await;
        scenario(&Way::Session(&server, &key, session), &key).await;
    }
    scenario(&Way::Stateless(&server, &key), &key).await;
}

/// A session of `version`, opened and initialized.
async fn open_session(server: &HttpServer, key: &str, version: &str) -> String {
    let answer = server
        .post(Some(key), &initialize_asking(version))
        .send()
        .await
        .expect("initialize");
    let session = answer.headers()["mcp-session-id"]
        .to_str()
        .expect("text")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = server
        .post(Some(key), &initialized)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", version)
        .send()
        .await
        .expect("initialized");
    assert!(answer.status().is_success(), "{version}");
    session
}
