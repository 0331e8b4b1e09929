//! What a POST body must be: one JSON-RPC message. The server looks at what it needs of it
//! before MCP reads it; a body that is not one message, found by that look or by MCP, is answered
//! as JSON-RPC says, with HTTP 400: not JSON is a parse error (-32700), a batch or a message that
//! is not JSON-RPC is an invalid request (-32600).

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::ClientJsonRpcMessage;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use std::borrow::Cow;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;

/// A body that is one JSON-RPC message: what the server needs to know of it before MCP reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The protocol version an `initialize` asks for: `Some` only for an `initialize` request,
    /// which opens a session.
    pub initialize_asks: Option<String>,
    /// Whether it is a `tools/call` request.
    pub calls_a_tool: bool,
}

impl Message {
    pub fn initializes(&self) -> bool {
        self.initialize_asks.is_some()
    }
}

/// Why a body is not one message MCP can take: the JSON-RPC error it is answered with.
#[derive(Debug)]
pub struct NotOneMessage {
    status: StatusCode,
    id: Value,
    code: i64,
    message: &'static str,
}

impl IntoResponse for NotOneMessage {
    fn into_response(self) -> Response {
        let body = json!({"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}});
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    }
}

/// The message a body is, or why it is none: as much of it as the server needs, read without
/// copying it (issue 15). Whether MCP can take the rest is MCP's to say; a body it cannot take is
/// answered through [`as_mcp_reads_it`].
pub fn check(body: &[u8]) -> Result<Message, NotOneMessage> {
    // A batch is refused before anything of it is parsed.
    if body.trim_ascii_start().first() == Some(&b'[') {
        return Err(refused(
            StatusCode::BAD_REQUEST,
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: batches are not served; send one message per request.",
        ));
    }
    match serde_json::from_slice::<Envelope<'_>>(body) {
        Ok(envelope) if envelope.jsonrpc == "2.0" => {
            let initialize_asks =
                if envelope.method.as_deref() == Some("initialize") && envelope.id.is_some() {
                    serde_json::from_slice::<Initialize>(body)
                        .ok()
                        .map(|initialize| initialize.params.protocol_version)
                } else {
                    None
                };
            let calls_a_tool =
                envelope.method.as_deref() == Some("tools/call") && envelope.id.is_some();
            Ok(Message {
                initialize_asks,
                calls_a_tool,
            })
        }
        _ => Err(not_one_message(body)),
    }
}

/// Whether the MCP library can read `body` as a client's message: asked only of a body it
/// refused, to answer that as JSON-RPC says rather than with the library's own words.
pub fn as_mcp_reads_it(body: &[u8]) -> Result<(), NotOneMessage> {
    serde_json::from_slice::<ClientJsonRpcMessage>(body)
        .map(drop)
        .map_err(|_| not_one_message(body))
}

/// The fields of a message the server looks at; every other one is skipped unread.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Initialize {
    params: InitializeParams,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
}

/// Why `body` is not one message: not JSON, or JSON that is not JSON-RPC.
fn not_one_message(body: &[u8]) -> NotOneMessage {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return refused(
            StatusCode::BAD_REQUEST,
            Value::Null,
            PARSE_ERROR,
            "Parse error: the body is not JSON.",
        );
    };
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    refused(
        StatusCode::BAD_REQUEST,
        id,
        INVALID_REQUEST,
        "Invalid Request: the body is not a JSON-RPC 2.0 message.",
    )
}

fn refused(status: StatusCode, id: Value, code: i64, message: &'static str) -> NotOneMessage {
    NotOneMessage {
        status,
        id,
        code,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn answer(body: &str) -> (StatusCode, Value) {
        let Err(refused) = check(body.as_bytes()) else {
            panic!("{body} was taken")
        };
        let response = refused.into_response();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 4096)
            .await
            .expect("body");
        (status, serde_json::from_slice(&bytes).expect("json"))
    }

    #[tokio::test]
    async fn bodies_that_are_not_one_message_get_json_rpc_errors() {
        let (status, body) = answer("{not json").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["error"]["code"], PARSE_ERROR);
        assert_eq!(body["id"], Value::Null);
        let (status, body) = answer(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["error"]["code"], INVALID_REQUEST);
        let (status, body) = answer(r#"{"hello": "world"}"#).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["error"]["code"], INVALID_REQUEST);
    }

    #[test]
    fn a_well_formed_message_passes() {
        let passes = |body: &str, initialize_asks: Option<&str>, calls_a_tool: bool| {
            assert_eq!(
                check(body.as_bytes()).ok(),
                Some(Message {
                    initialize_asks: initialize_asks.map(str::to_owned),
                    calls_a_tool,
                }),
                "{body}"
            );
        };
        passes(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_status","arguments":{}}}"#,
            None,
            true,
        );
        passes(
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read_status"}}"#,
            None,
            false,
        );
        passes(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            None,
            false,
        );
        passes(
            r#"{"jsonrpc":"2.0","id":2,"method":"something/else","params":{}}"#,
            None,
            false,
        );
        passes(
            r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
            None,
            false,
        );
        passes(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            Some("2025-06-18"),
            false,
        );
    }

    /// Issue 15: the look reads only what the server needs, so a body it passes may still be
    /// one MCP cannot read; that one is answered as JSON-RPC says too.
    #[tokio::test]
    async fn a_body_the_look_passes_but_mcp_cannot_read_is_an_invalid_request() {
        for body in [
            r#"{"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
        ] {
            assert!(check(body.as_bytes()).is_ok(), "{body}");
            let refused = as_mcp_reads_it(body.as_bytes())
                .expect_err(body)
                .into_response();
            assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
            let bytes = axum::body::to_bytes(refused.into_body(), 4096)
                .await
                .expect("body");
            let answer: Value = serde_json::from_slice(&bytes).expect("json");
            assert_eq!(answer["error"]["code"], INVALID_REQUEST, "{body}");
        }
        let readable = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(as_mcp_reads_it(readable.as_bytes()).is_ok());
    }
}
