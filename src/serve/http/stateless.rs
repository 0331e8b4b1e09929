//! A stateless (2026-07-28) `tools/call`, served in the request's own task. Through the MCP
//! library such a call costs more than the server's own work on it: four tasks a request, its
//! handler made twice, and the request turned back into a JSON tree to check its headers
//! (docs/performance.md, "Whose instructions a read runs"). The server takes a call here only
//! when the library would take it as it comes, and answers it as the library would; a call the
//! library would refuse goes on to the library, which refuses it in its own words. Either way the
//! tool runs through `LemonfiberServer::call_tool_for`, the one way a tool is called. A read in a
//! session the server serves itself (`in_session`) is run and answered here too, shaped for the
//! session's version.

use std::net::IpAddr;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use base64::prelude::BASE64_STANDARD;
use bytes::Bytes;
use futures::StreamExt;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, ErrorCode, JsonRpcVersion2_0, ProtocolVersion,
    RequestId, RequestMetaObject, ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::common::http_header::{
    BASE64_HEADER_PREFIX, BASE64_HEADER_SUFFIX, EVENT_STREAM_MIME_TYPE, HEADER_MCP_METHOD,
    HEADER_MCP_NAME, HEADER_MCP_PROTOCOL_VERSION, JSON_MIME_TYPE,
};
use serde::Deserialize;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::answer::outcome::{Data, ToolAnswer};
use crate::mcp::reach::Reach;
use crate::mcp::server::{Caller, LemonfiberServer};
use crate::mcp::versions::{self, PROTOCOL_VERSIONS};

/// How long a stream of progress goes without a message before a comment keeps it open, as the
/// library keeps its own streams open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// The messages a call may have waiting to be sent before it waits itself.
const WAITING_MESSAGES: usize = 8;

/// One stateless `tools/call`, as it came.
pub struct Call {
    id: RequestId,
    params: CallToolRequestParams,
    meta: RequestMetaObject,
    version: ProtocolVersion,
}

/// The call a POST makes, when the library would serve it statelessly as it comes: it accepts
/// both JSON and events, is JSON, names a stateless version this server speaks in its header and
/// again in its `_meta` (with everything else the version asks of `_meta`), and names its method
/// and tool in `Mcp-Method` and `Mcp-Name` as its body does. Anything else is the library's.
pub fn served_here(headers: &HeaderMap, body: &[u8]) -> Option<Call> {
    if !accepts_json_and_events(headers) || !is_json(headers) {
        return None;
    }
    let named = only(headers, HEADER_MCP_PROTOCOL_VERSION)?;
    let version = PROTOCOL_VERSIONS
        .iter()
        .find(|spoken| spoken.as_str() == named)
        .filter(|spoken| versions::stateless(Some((*spoken).clone())))?
        .clone();
    let Posted { id, mut params, .. } = serde_json::from_slice::<Posted>(body).ok()?;
    let meta = params.meta.take()?;
    let complete = meta
        .missing_required_keys(&ProtocolVersion::V_2026_07_28)
        .is_empty();
    if !complete || meta.protocol_version().as_ref() != Some(&version) {
        return None;
    }
    if only(headers, HEADER_MCP_METHOD)? != "tools/call"
        || decoded(only(headers, HEADER_MCP_NAME)?)? != params.name
    {
        return None;
    }
    Some(Call {
        id,
        params,
        meta,
        version,
    })
}

/// A `tools/call` request as the library reads one, with its `_meta` left in its params rather
/// than moved aside: the library's reading buffers the whole body to do that.
#[derive(Deserialize)]
pub(super) struct Posted {
    #[serde(rename = "jsonrpc")]
    _version: JsonRpcVersion2_0,
    pub id: RequestId,
    #[serde(rename = "method")]
    _method: CallToolRequestMethod,
    pub params: CallToolRequestParams,
}

/// Whether the request accepts both JSON and events, read only where the reading is plain: a
/// media range with parameters (a weight, say) or a quoted string leaves it to the library.
pub(super) fn accepts_json_and_events(headers: &HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        if value.contains(['"', ';']) {
            return false;
        }
        for range in value.split(',').map(str::trim) {
            json |= range.eq_ignore_ascii_case(JSON_MIME_TYPE);
            events |= range.eq_ignore_ascii_case(EVENT_STREAM_MIME_TYPE);
        }
    }
    json && events
}

pub(super) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case(JSON_MIME_TYPE)
        })
}

/// The header's one value, as text; none when it is missing, given twice, or not text.
pub(super) fn only<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// A standard header's value, which is sent as Base64 between markers when it is not plain.
fn decoded(value: &str) -> Option<String> {
    match value
        .strip_prefix(BASE64_HEADER_PREFIX)
        .and_then(|inner| inner.strip_suffix(BASE64_HEADER_SUFFIX))
    {
        Some(inner) => String::from_utf8(BASE64_STANDARD.decode(inner).ok()?).ok(),
        None => Some(value.to_owned()),
    }
}

impl Call {
    /// The call, ready to run for a client at `client`.
    pub fn ready(self, client: Option<IpAddr>) -> Ready {
        let (progress, told) = mpsc::channel(WAITING_MESSAGES);
        let cancelled = CancellationToken::new();
        let reach = Reach::Response(progress);
        let caller = Caller::stateless(&self.meta, client, reach, cancelled.clone());
        Ready {
            id: self.id,
            params: self.params,
            version: self.version,
            caller,
            cancelled,
            told,
        }
    }
}

/// A `tools/call` the server serves itself, ready to run: what it asks, who asks it, and the
/// version its answer is shaped for.
pub struct Ready {
    pub id: RequestId,
    pub params: CallToolRequestParams,
    pub version: ProtocolVersion,
    pub caller: Caller,
    /// Cancels the call; the caller's own token.
    pub cancelled: CancellationToken,
    /// The messages the call tells its client on its own response, before its answer.
    pub told: mpsc::Receiver<ServerJsonRpcMessage>,
}

/// The answer to `call`, run by `server`, once its first message is known: the call's answer
/// alone as one JSON body; or, when the call reports progress first, a stream of events that
/// ends with the answer. The call runs in a task of its own, so a client that goes away cancels
/// it (as a client's cancellation does) but never cuts it short: an act the stack took is always
/// written in the audit. `None` when the key's service ends first.
pub async fn answered(
    server: LemonfiberServer,
    call: Ready,
    ends: &CancellationToken,
) -> Option<Response> {
    let Ready {
        id,
        params,
        version,
        caller,
        cancelled,
        mut told,
    } = call;
    let (answer, mut answered) = oneshot::channel();
    tokio::spawn(async move {
        let outcome = server
            .call_tool_for(params, caller, Some(version.clone()))
            .await;
        let _ = answer.send(written(outcome, id, &version));
    });
    // Until the first message, a client that goes away (this future dropped) cancels the call.
    let gone = cancelled.drop_guard();
    // The call's progress is closed before its answer is sent, and is looked at first, so
    // progress told before the answer goes before it.
    let first = tokio::select! {
        biased;
        Some(progress) = told.recv() => progress,
        answer = &mut answered => {
            gone.disarm();
            return answer.ok().map(json);
        }
        () = ends.cancelled() => return None,
    };
    let stream = Events {
        first: Some(first),
        told,
        answered,
        gone,
    };
    Some(events(stream, ends.clone()))
}

/// A call's answer, written: its JSON-RPC message, and the HTTP status it goes with.
struct Written {
    message: Vec<u8>,
    status: StatusCode,
}

/// The JSON-RPC message a call's outcome is sent as, shaped as the library shapes it for
/// `version`: on 2026-07-28, cacheable results with their hints and a resource not found as
/// invalid params; before it, results without a result type and structured content only when it
/// is an object (else its JSON goes first among the content, unless it is there already).
fn written(
    outcome: Result<ToolAnswer, McpError>,
    id: RequestId,
    version: &ProtocolVersion,
) -> Written {
    let stateless = versions::stateless(Some(version.clone()));
    let (message, structured) = match outcome {
        Ok(ToolAnswer {
            response,
            structured,
        }) => {
            let mut result = ServerResult::from(response);
            let structured = if stateless {
                result.fill_missing_cache_hints();
                structured
            } else {
                result.strip_result_type_for_legacy_peer();
                let (object, other) = match structured {
                    Some(data) if data.json().trim_start().starts_with('{') => (Some(data), None),
                    other => (None, other),
                };
                if let (Some(other), ServerResult::CallToolResult(called)) = (other, &mut result) {
                    called.structured_content = Some(other.into_value());
                    result.strip_non_object_output_for_legacy_peer();
                }
                object
            };
            (ServerJsonRpcMessage::response(result, id), structured)
        }
        Err(mut error) => {
            if stateless && error.code == ErrorCode::RESOURCE_NOT_FOUND {
                error.code = ErrorCode::INVALID_PARAMS;
            }
            (ServerJsonRpcMessage::error(error, Some(id)), None)
        }
    };
    // In a session the answer is the session's to carry, whatever its error: always OK.
    let status = if stateless {
        status_of(&message)
    } else {
        StatusCode::OK
    };
    let written = match structured {
        Some(structured) => spliced(&message, &structured).or_else(|| whole(message, structured)),
        None => serde_json::to_vec(&message).ok(),
    };
    match written {
        Some(message) => Written { message, status },
        // Only a map with keys that are not text fails to be written, and a message has none.
        None => Written {
            message: Vec::new(),
            status: StatusCode::INTERNAL_SERVER_ERROR,
        },
    }
}

/// `message` written with `structured` put in its result as the structured content, as the JSON
/// it already is. A response is written with its result last, so the result's object closes just
/// before the message's does; `None` if it is not written so.
fn spliced(message: &ServerJsonRpcMessage, structured: &Data) -> Option<Vec<u8>> {
    // Room for the message at once: the framed text holds the data's JSON again, written with
    // its quotes escaped, so the whole is about three times the data; a buffer grown to it as it
    // is written would copy what it holds at each doubling.
    let room = structured
        .json()
        .len()
        .saturating_mul(3)
        .saturating_add(1024);
    let mut written = Vec::with_capacity(room);
    serde_json::to_writer(&mut written, message).ok()?;
    let at = written.len().checked_sub(2)?;
    if written[at..] != *b"}}" {
        return None;
    }
    written.truncate(at);
    written.extend_from_slice(b",\"structuredContent\":");
    written.extend_from_slice(structured.json().as_bytes());
    written.extend_from_slice(b"}}");
    Some(written)
}

/// `message` written as the library writes it, with `structured` in its result as a tree.
fn whole(mut message: ServerJsonRpcMessage, structured: Data) -> Option<Vec<u8>> {
    if let ServerJsonRpcMessage::Response(response) = &mut message
        && let ServerResult::CallToolResult(result) = &mut response.result
    {
        result.structured_content = Some(structured.into_value());
    }
    serde_json::to_vec(&message).ok()
}

/// The HTTP status a stateless answer goes with, as the library gives it: a refusal of the
/// request's version, capabilities or headers is a bad request, an unknown method is not found,
/// and every other answer (an error in the call included) is OK.
fn status_of(message: &ServerJsonRpcMessage) -> StatusCode {
    let ServerJsonRpcMessage::Error(error) = message else {
        return StatusCode::OK;
    };
    match error.error.code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

fn json(written: Written) -> Response {
    let mut response = Response::new(Body::from(written.message));
    *response.status_mut() = written.status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(JSON_MIME_TYPE),
    );
    response
}

/// What a stream of a call's events has still to send.
struct Events {
    first: Option<ServerJsonRpcMessage>,
    told: mpsc::Receiver<ServerJsonRpcMessage>,
    answered: oneshot::Receiver<Written>,
    /// Cancels the call when the stream is dropped before its answer is sent.
    gone: DropGuard,
}

/// What comes next on a stream of events.
enum Next {
    Told(Bytes),
    Answer(Bytes),
    Quiet,
}

/// The events of a call that reports progress: each message it tells, then its answer, and a
/// comment whenever none has come for a while. It ends when the answer is sent; dropped before
/// that (the client gone), or ended by the key's service ending, it cancels the call.
fn events(stream: Events, ends: CancellationToken) -> Response {
    let stream = futures::stream::unfold(Some(stream), move |events| {
        let ends = ends.clone();
        async move {
            let mut events = events?;
            if let Some(first) = events.first.take() {
                return Some((event(&first), Some(events)));
            }
            let next = async {
                tokio::select! {
                    biased;
                    Some(told) = events.told.recv() => Next::Told(event(&told)),
                    answer = &mut events.answered => match answer {
                        Ok(answer) => Next::Answer(answer_event(&answer)),
                        // The call's task ended without an answer: nothing more will come.
                        Err(_) => Next::Quiet,
                    },
                }
            };
            let next = tokio::select! {
                next = tokio::time::timeout(KEEP_ALIVE, next) => next,
                () = ends.cancelled() => return None,
            };
            match next {
                Ok(Next::Told(told)) => Some((told, Some(events))),
                Ok(Next::Answer(answer)) => {
                    events.gone.disarm();
                    Some((answer, None))
                }
                Ok(Next::Quiet) => None,
                Err(_) => Some((Bytes::from_static(b":\n\n"), Some(events))),
            }
        }
    });
    let stream = stream.map(Ok::<_, std::convert::Infallible>);
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(EVENT_STREAM_MIME_TYPE),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

fn event(message: &ServerJsonRpcMessage) -> Bytes {
    let mut event = b"data: ".to_vec();
    let _ = serde_json::to_writer(&mut event, message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

fn answer_event(answer: &Written) -> Bytes {
    Bytes::from([b"data: ", &answer.message[..], b"\n\n"].concat())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use rmcp::model::{
        CallToolResult, ContentBlock, MetaObject, NumberOrString, ProgressNotification,
        ProgressNotificationParam, ProgressToken, ServerNotification,
    };
    use serde_json::{Value, json};

    use super::*;
    use crate::redact::Secrets;

    fn call_body(tool: &str, meta: Value) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": tool, "arguments": {}, "_meta": meta}})
        .to_string()
        .into_bytes()
    }

    fn meta() -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        })
    }

    /// The headers the official clients send with a stateless call of `read_status`.
    fn headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "read_status"),
        ] {
            headers.insert(name, HeaderValue::from_static(value));
        }
        headers
    }

    fn with(mut headers: HeaderMap, name: &'static str, value: &'static str) -> HeaderMap {
        headers.insert(name, HeaderValue::from_static(value));
        headers
    }

    fn also(mut headers: HeaderMap, name: &'static str, value: &'static str) -> HeaderMap {
        headers.append(name, HeaderValue::from_static(value));
        headers
    }

    fn without(mut headers: HeaderMap, name: &'static str) -> HeaderMap {
        headers.remove(name);
        headers
    }

    #[test]
    fn a_call_as_the_official_clients_send_it_is_served_here() {
        let call = served_here(&headers(), &call_body("read_status", meta())).expect("served");
        assert_eq!(call.id, RequestId::Number(3));
        assert_eq!(call.params.name, "read_status");
        assert_eq!(call.version, ProtocolVersion::V_2026_07_28);
        assert!(call.meta.client_capabilities().is_some());
        let spelled = with(headers(), "accept", "Application/JSON,text/event-stream");
        let spelled = with(spelled, "content-type", "application/json; charset=utf-8");
        assert!(served_here(&spelled, &call_body("read_status", meta())).is_some());
        let split = also(
            with(headers(), "accept", "text/event-stream"),
            "accept",
            JSON_MIME_TYPE,
        );
        assert!(served_here(&split, &call_body("read_status", meta())).is_some());
    }

    /// `Mcp-Name` in Base64 between its markers, as a client sends a name that is not plain.
    #[test]
    fn a_tool_named_in_base64_is_served_here() {
        let named = with(headers(), "mcp-name", "=?base64?cmVhZF9zdGF0dXM=?=");
        assert!(served_here(&named, &call_body("read_status", meta())).is_some());
        let broken = with(headers(), "mcp-name", "=?base64?not base64?=");
        assert!(served_here(&broken, &call_body("read_status", meta())).is_none());
    }

    /// Every call the library would refuse, or read in a way the server does not (a weighted
    /// `Accept`), is left to it.
    #[test]
    fn a_call_the_library_would_refuse_is_left_to_it() {
        let body = call_body("read_status", meta());
        let left = [
            without(headers(), "accept"),
            with(headers(), "accept", "application/json"),
            with(headers(), "accept", "text/event-stream"),
            with(
                headers(),
                "accept",
                "application/json;q=0, text/event-stream",
            ),
            with(
                headers(),
                "accept",
                "application/json, text/event-stream;q=1",
            ),
            with(
                headers(),
                "accept",
                "\"application/json\", text/event-stream",
            ),
            without(headers(), "content-type"),
            with(headers(), "content-type", "text/plain"),
            without(headers(), "mcp-protocol-version"),
            with(headers(), "mcp-protocol-version", "2025-11-25"),
            with(headers(), "mcp-protocol-version", "2099-01-01"),
            also(headers(), "mcp-protocol-version", "2026-07-28"),
            without(headers(), "mcp-method"),
            with(headers(), "mcp-method", "tools/list"),
            also(headers(), "mcp-method", "tools/call"),
            without(headers(), "mcp-name"),
            with(headers(), "mcp-name", "read_logs"),
            also(headers(), "mcp-name", "read_status"),
        ];
        for headers in left {
            assert!(served_here(&headers, &body).is_none(), "{headers:?}");
        }
    }

    #[test]
    fn a_body_that_is_not_a_whole_stateless_call_is_left_to_the_library() {
        let mut older = meta();
        older["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
        let mut incapable = meta();
        incapable
            .as_object_mut()
            .unwrap()
            .remove("io.modelcontextprotocol/clientCapabilities");
        let bodies = [
            call_body("read_status", json!({})),
            call_body("read_status", older),
            call_body("read_status", incapable),
            br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read_status"}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#.to_vec(),
            b"{}".to_vec(),
        ];
        for body in bodies {
            let shown = String::from_utf8_lossy(&body).into_owned();
            assert!(served_here(&headers(), &body).is_none(), "{shown}");
        }
    }

    /// A call's outcome is written as the library writes it for 2026-07-28, its structured
    /// content put in as the JSON it already is.
    #[test]
    fn an_outcome_is_written_as_the_library_writes_it() {
        let structured = json!({"kind": "status", "data": {"quote": "a \"b\"", "n": [1, 2.5]}});
        let mut result = CallToolResult::success(vec![ContentBlock::text("said")]);
        result.meta = Some(MetaObject::new());
        let answer = || ToolAnswer {
            response: result.clone().into(),
            structured: Some(Data::handed(structured.clone().into(), &Secrets::default())),
        };
        let sent = written(Ok(answer()), RequestId::Number(4), &STATELESS);
        assert_eq!(sent.status, StatusCode::OK);
        let mut in_full = ServerResult::from(answer().whole());
        in_full.fill_missing_cache_hints();
        let in_full = ServerJsonRpcMessage::response(in_full, RequestId::Number(4));
        let sent_text = String::from_utf8(sent.message).unwrap();
        assert_eq!(sent_text.matches("structuredContent").count(), 1);
        let sent: Value = serde_json::from_str(&sent_text).unwrap();
        assert_eq!(sent, serde_json::to_value(&in_full).unwrap());
        assert_eq!(sent["result"]["structuredContent"], structured);
        let mut without = ServerResult::from(answer().response);
        without.fill_missing_cache_hints();
        let without = ServerJsonRpcMessage::response(without, RequestId::Number(4));
        let as_a_tree = whole(without, answer().structured.unwrap()).unwrap();
        let as_a_tree: Value = serde_json::from_slice(&as_a_tree).unwrap();
        assert_eq!(
            sent, as_a_tree,
            "the library's own writing, when the splice cannot be made"
        );

        let missing = McpError::resource_not_found("gone", None);
        let sent = written(Err(missing), RequestId::Number(5), &STATELESS);
        assert_eq!(sent.status, StatusCode::OK);
        let sent: Value = serde_json::from_slice(&sent.message).unwrap();
        assert_eq!(sent["error"]["code"], ErrorCode::INVALID_PARAMS.0);
        for (code, status) in [
            (ErrorCode::HEADER_MISMATCH, StatusCode::BAD_REQUEST),
            (
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                StatusCode::BAD_REQUEST,
            ),
            (ErrorCode::METHOD_NOT_FOUND, StatusCode::NOT_FOUND),
            (ErrorCode::INTERNAL_ERROR, StatusCode::OK),
        ] {
            let refused = McpError::new(code, "no", None);
            let sent = json(written(Err(refused), RequestId::Number(6), &STATELESS));
            assert_eq!(sent.status(), status, "{code:?}");
            assert_eq!(sent.headers()[header::CONTENT_TYPE], JSON_MIME_TYPE);
        }
    }

    const STATELESS: ProtocolVersion = ProtocolVersion::V_2026_07_28;

    /// Issue 32: for a session's version, an outcome is written as the library writes it for a
    /// session: no result type, structured content only when it is an object (else first among
    /// the content), a resource not found as such, and every answer with HTTP OK.
    #[test]
    fn an_outcome_in_a_session_is_written_as_the_library_writes_it_for_a_session() {
        let object = json!({"kind": "status", "data": {"quote": "a \"b\"", "n": [1, 2.5]}});
        for structured in [object, json!([{"kind": "held"}, 2])] {
            let mut result = CallToolResult::success(vec![ContentBlock::text("said")]);
            result.meta = Some(MetaObject::new());
            let answer = || ToolAnswer {
                response: result.clone().into(),
                structured: Some(Data::handed(structured.clone().into(), &Secrets::default())),
            };
            for version in [
                ProtocolVersion::V_2025_03_26,
                ProtocolVersion::V_2025_06_18,
                ProtocolVersion::V_2025_11_25,
            ] {
                let sent = written(Ok(answer()), RequestId::Number(4), &version);
                assert_eq!(sent.status, StatusCode::OK);
                let mut by_the_library = ServerResult::from(answer().whole());
                by_the_library.strip_result_type_for_legacy_peer();
                by_the_library.strip_non_object_output_for_legacy_peer();
                let by_the_library =
                    ServerJsonRpcMessage::response(by_the_library, RequestId::Number(4));
                let sent: Value = serde_json::from_slice(&sent.message).unwrap();
                assert_eq!(sent, serde_json::to_value(&by_the_library).unwrap());
                assert_eq!(sent["result"].get("resultType"), None);
            }
        }
        let session = ProtocolVersion::V_2025_11_25;
        let missing = McpError::resource_not_found("gone", None);
        let sent = written(Err(missing), RequestId::Number(5), &session);
        assert_eq!(sent.status, StatusCode::OK);
        let sent: Value = serde_json::from_slice(&sent.message).unwrap();
        assert_eq!(sent["error"]["code"], ErrorCode::RESOURCE_NOT_FOUND.0);
        let refused = McpError::new(ErrorCode::METHOD_NOT_FOUND, "no", None);
        let sent = written(Err(refused), RequestId::Number(6), &session);
        assert_eq!(
            sent.status,
            StatusCode::OK,
            "an error in a session is the session's"
        );
    }

    fn told(step: f64) -> ServerJsonRpcMessage {
        let token = ProgressToken(NumberOrString::String("t".into()));
        let progress = ProgressNotification::new(ProgressNotificationParam::new(token, step));
        ServerJsonRpcMessage::notification(ServerNotification::ProgressNotification(progress))
    }

    /// A stream of a call cancelled by `call`, that has told its first progress, with the ends
    /// the call would send the rest through.
    fn stream_of(
        call: &CancellationToken,
    ) -> (
        mpsc::Sender<ServerJsonRpcMessage>,
        oneshot::Sender<Written>,
        Events,
    ) {
        let (progress, told_rx) = mpsc::channel(4);
        let (answer, answered) = oneshot::channel();
        let stream = Events {
            first: Some(told(1.0)),
            told: told_rx,
            answered,
            gone: call.clone().drop_guard(),
        };
        (progress, answer, stream)
    }

    /// A stream of progress sends each message as an event, then the answer, and ends there,
    /// leaving the call be; dropped before the answer, as when the client goes away, it cancels
    /// the call.
    #[tokio::test]
    async fn a_stream_ends_with_the_answer_and_cancels_the_call_when_dropped_before() {
        let call = CancellationToken::new();
        let (progress, answer, stream) = stream_of(&call);
        let streamed = events(stream, CancellationToken::new());
        progress.send(told(2.0)).await.unwrap();
        drop(progress);
        let message = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec();
        let status = StatusCode::OK;
        let _ = answer.send(Written { message, status });
        let body = axum::body::to_bytes(streamed.into_body(), usize::MAX)
            .await
            .unwrap();
        let expected = [
            &event(&told(1.0))[..],
            &event(&told(2.0))[..],
            br#"data: {"jsonrpc":"2.0","id":1,"result":{}}"#,
            b"\n\n",
        ]
        .concat();
        assert_eq!(
            String::from_utf8_lossy(&body),
            String::from_utf8_lossy(&expected)
        );
        assert!(!call.is_cancelled());

        let call = CancellationToken::new();
        let (_progress, _answer, stream) = stream_of(&call);
        drop(events(stream, CancellationToken::new()));
        assert!(call.is_cancelled());
    }
}
