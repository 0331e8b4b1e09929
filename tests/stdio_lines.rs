//! What `lemonfiber-mcp stdio` does with lines that are no message, and with more calls than it
//! takes at once (issue 27): the real binary over pipes, against the tests' hostile stack. A
//! line that is not JSON is answered with a parse error, one far too long with an error as soon
//! as it is found to be (and never held whole), and a call past the cap with an error at once;
//! the session goes on after each.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/hostile.rs"]
mod hostile;
#[path = "support/mcp.rs"]
mod mcp;

use std::process::Stdio as Piped;
use std::time::Duration;

use demo::{BINARY, eventually, stop_gracefully};
use hostile::{HELD_UNTIL_RELEASED, HostileStack};
use mcp::{Stdio, resident_kib};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const KEY: &str = "lfk_0a1b2c3d4e5f60718293a4b5c6d7e8f9";
const MIB: usize = 1024 * 1024;
/// The longest line the server reads, and the most calls it has under way: as docs/security.md
/// states them.
const LINE_LIMIT: usize = 4 * MIB;
const CALLS_AT_ONCE: usize = 64;
/// How long an answer the server owes may take to come.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);

/// The server over its own pipes, spoken to a line at a time.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Raw {
    async fn start(stack: &HostileStack) -> Raw {
        let mut child = Command::new(BINARY)
            .arg("stdio")
            .env_clear()
            .env("LEMONFIBER_ADDRESS", &stack.address)
            .env("LEMONFIBER_PIN", &stack.pin)
            .env("LEMONFIBER_KEY", KEY)
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .stderr(Piped::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the stdio server starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut raw = Raw {
            child,
            stdin,
            stdout,
        };
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        )
        .await;
        let opened = raw.answer_to(&json!(1)).await;
        assert!(opened["result"]["protocolVersion"].is_string(), "{opened}");
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    async fn send(&mut self, message: &Value) {
        self.write(format!("{message}\n").as_bytes()).await;
    }

    async fn write(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.expect("written");
        self.stdin.flush().await.expect("flushed");
    }

    /// The next line the server writes, as JSON, within the time an answer may take.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(ANSWER_WITHIN, self.stdout.next_line())
            .await
            .expect("the server answers in time: a client would otherwise wait forever")
            .expect("stdout reads")
            .expect("the server is still there");
        serde_json::from_str(&line).expect("each line the server writes is JSON")
    }

    /// The server's answer to the request of this id, passing over its notifications.
    async fn answer_to(&mut self, id: &Value) -> Value {
        for _ in 0..100 {
            let line = self.next().await;
            if line.get("id") == Some(id) {
                return line;
            }
            assert!(
                line.get("id").is_none(),
                "an answer to another call: {line}"
            );
        }
        panic!("no answer to {id}")
    }

    /// The next error the server writes, passing over its notifications.
    async fn next_error(&mut self) -> Value {
        for _ in 0..100 {
            let line = self.next().await;
            if line.get("error").is_some() {
                return line;
            }
        }
        panic!("no error")
    }

    /// Asks for a ping and waits for its answer: the session goes on.
    async fn still_answers(&mut self, id: u64) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        let pong = self.answer_to(&json!(id)).await;
        assert_eq!(pong["result"], json!({}), "{pong}");
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        stop_gracefully(&mut self.child);
    }
}

#[tokio::test]
async fn a_line_that_is_not_json_is_answered_with_a_parse_error_and_the_session_goes_on() {
    let stack = HostileStack::start().await;
    let mut server = Raw::start(&stack).await;

    server.write(b"this is not json\n").await;
    let error = server.next_error().await;
    assert_eq!(error["jsonrpc"], "2.0");
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(error["error"]["code"], -32700, "{error}");
    server.still_answers(2).await;

    server.write(b"{\"jsonrpc\": \"2.0\", \"id\": 3, \n").await;
    let error = server.next_error().await;
    assert_eq!(error["error"]["code"], -32700, "{error}");
    server.still_answers(4).await;

    // JSON that is no message is an invalid request, to the id it gives.
    server.write(b"{\"jsonrpc\": \"2.0\", \"id\": 5}\n").await;
    let error = server.next_error().await;
    assert_eq!(error["error"]["code"], -32600, "{error}");
    assert_eq!(error["id"], 5, "{error}");
    server.still_answers(6).await;
}

#[tokio::test]
async fn a_line_far_too_long_is_answered_at_once_never_held_whole_and_the_session_goes_on() {
    let stack = HostileStack::start().await;
    let mut server = Raw::start(&stack).await;
    let pid = server.child.id().expect("running");
    let (idle, _) = resident_kib(pid);

    // A line past the limit, not yet ended: the error comes before its end is sent.
    let piece = vec![b'x'; MIB];
    for _ in 0..LINE_LIMIT / MIB + 1 {
        server.write(&piece).await;
    }
    let error = server.next_error().await;
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(error["error"]["code"], -32600, "{error}");
    let said = error["error"]["message"].as_str().expect("a message");
    assert!(said.contains("4 MiB"), "{said}");

    // The rest of a 100 MiB line is read past without being kept.
    for _ in 0..100 - (LINE_LIMIT / MIB + 1) {
        server.write(&piece).await;
    }
    server.write(b"\n").await;
    server.still_answers(2).await;
    let (_, peak) = resident_kib(pid);
    let over = peak.saturating_sub(idle);
    assert!(
        over < 32 * 1024,
        "a 100 MiB line took {over} KiB over idle to read"
    );

    // A line just within the limit is read, and answered for what it is.
    let mut within =
        br#"{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {}, "pad": ""#.to_vec();
    within.resize(LINE_LIMIT - 2, b' ');
    within.extend_from_slice(b"\"}");
    within.push(b'\n');
    server.write(&within).await;
    let answer = server.answer_to(&json!(3)).await;
    assert!(
        answer.get("result").is_some() || answer.get("error").is_some(),
        "{answer}"
    );
    server.still_answers(4).await;
}

#[tokio::test]
async fn past_the_calls_it_takes_at_once_a_call_is_refused_at_once_and_the_rest_are_answered() {
    let stack = HostileStack::start().await;
    let server = Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &stack.address),
        ("LEMONFIBER_PIN", &stack.pin),
        ("LEMONFIBER_KEY", KEY),
    ])
    .await;
    let held = || {
        let arguments = json!({"id": HELD_UNTIL_RELEASED.trim_start_matches("/api/held/")});
        let Value::Object(arguments) = arguments else {
            unreachable!("an object")
        };
        CallToolRequestParams::new("read_held_by_id").with_arguments(arguments)
    };
    let beyond = 16;
    let calls: Vec<_> = (0..CALLS_AT_ONCE + beyond)
        .map(|_| {
            let peer = server.client.peer().clone();
            let call = held();
            tokio::spawn(async move { peer.call_tool(call).await })
        })
        .collect();
    let arrived = || {
        stack
            .requests()
            .iter()
            .filter(|request| request["path"] == HELD_UNTIL_RELEASED)
            .count()
    };
    let refused = || calls.iter().filter(|call| call.is_finished()).count();
    assert!(
        eventually(|| arrived() >= CALLS_AT_ONCE && refused() >= beyond).await,
        "{} calls reached the stack and {} were refused",
        arrived(),
        refused()
    );
    assert_eq!(
        arrived(),
        CALLS_AT_ONCE,
        "no call past the cap reached the stack"
    );
    assert_eq!(refused(), beyond);

    stack.release();
    let mut answered = 0;
    let mut said = Vec::new();
    for call in calls {
        match tokio::time::timeout(ANSWER_WITHIN, call)
            .await
            .expect("every call is answered in time")
            .expect("the call's task")
        {
            Ok(_) => answered += 1,
            Err(rmcp::ServiceError::McpError(error)) => {
                assert_eq!(error.code.0, -32000, "{error:?}");
                said.push(error.message.into_owned());
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(answered, CALLS_AT_ONCE);
    assert_eq!(said.len(), beyond);
    assert!(
        said.iter().all(|said| said.contains("64 calls under way")),
        "{said:?}"
    );
    // Once they are done, the server takes calls again.
    let again = server
        .client
        .call_tool(held())
        .await
        .expect("taken once the others are done");
    assert!(!again.content.is_empty());
}
