//! The HTTP mode under a flood, as an attacker would try it (F8 items 1 and 8): keys the stack
//! never accepted get no lasting state, so they cannot push out a real user's session, fill the
//! session cap or dodge a limit; a refused key stays refused whatever else comes; limits per
//! peer and over everyone answer 429 with Retry-After; and answers follow HTTP and JSON-RPC.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/sign_in.rs"]
mod sign_in;

use std::net::IpAddr;

use demo::DemoStack;
use futures::StreamExt;
use http_server::{HttpServer, call, http_server, initialize};
use https::{SlowBody, messages, pinned_tls, raw_status, status_of};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sign_in::SignIn;

const ATTACKER: &str = "127.0.0.2";
const HOUSEHOLD: &str = "127.0.0.1";
/// An address holding slow bodies open, and one signing in beside it.
const SLOW_SENDER: &str = "127.0.8.2";
const SIGNING_IN: &str = "127.0.8.3";
/// The requests without a key one address may have under way at once, by default.
const PEER_AT_ONCE: usize = 8;
/// Limits lifted so that every made-up key goes as far as the server lets one go.
const UNLIMITED_PEERS: [(&str, &str); 2] = [
    ("LEMONFIBER_PEER_NEW_KEYS", "1000000"),
    ("LEMONFIBER_PEER_RATE", "1000000"),
];

fn random_key() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("randomness");
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("lfk_{hex}")
}

fn ip(text: &str) -> IpAddr {
    text.parse().expect("an address")
}

/// Sends `body` under `count` fresh random keys from the attacker's address, 16 at a time, and
/// answers how many of each status came back.
async fn flood(server: &HttpServer, count: usize, body: Value) -> Vec<(StatusCode, usize)> {
    let attacker = server.client_from(ip(ATTACKER));
    let statuses: Vec<StatusCode> = futures::stream::iter(0..count)
        .map(|_| {
            let request = server.post_with(&attacker, Some(&random_key()), &body);
            async move { request.send().await.expect("answered").status() }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let mut counted: Vec<(StatusCode, usize)> = Vec::new();
    for status in statuses {
        match counted.iter_mut().find(|(seen, _)| *seen == status) {
            Some((_, count)) => *count += 1,
            None => counted.push((status, 1)),
        }
    }
    counted
}

/// The tool result in an answer's messages.
async fn result_of(response: reqwest::Response) -> Value {
    let body = response.text().await.expect("a body");
    messages(&body)
        .into_iter()
        .find(|message| message["result"].is_object())
        .unwrap_or_else(|| panic!("a result: {body}"))["result"]
        .clone()
}

/// A stateless (2026-07-28) `read_status`, as a client without a session sends it.
fn stateless_read_status(
    server: &HttpServer,
    client: &reqwest::Client,
    key: &str,
    id: u64,
) -> reqwest::RequestBuilder {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "admission", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "read_status", "arguments": {}, "_meta": meta}});
    server
        .post_with(client, Some(key), &body)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "read_status")
}

/// The status of an `initialize` with `key`, tried every 100 ms up to `tries` times until one
/// opens a session: for a place that is given back a moment after something ends.
async fn opens_within(server: &HttpServer, key: &str, tries: usize) -> StatusCode {
    let mut opened = StatusCode::TOO_MANY_REQUESTS;
    for _ in 0..tries {
        opened = server
            .post(Some(key), &initialize())
            .send()
            .await
            .expect("answered")
            .status();
        if opened == StatusCode::OK {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    opened
}

#[tokio::test]
async fn two_thousand_fresh_keys_leave_a_real_session_and_a_refusal_in_place() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &UNLIMITED_PEERS).await;
    let read = demo.key(&demo.read_key_file);
    let session = server.open_session(&read).await;
    let status = result_of(
        server
            .in_session(&read, &session, &call(2, "read_status", json!({})))
            .await,
    )
    .await;
    assert_eq!(status["isError"], false, "{status}");

    demo.control("revoke/member").await;
    let member = demo.key(&demo.member_key_file);
    let refused = server
        .post(Some(&member), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(
        refused
            .text()
            .await
            .expect("body")
            .contains("a new key is needed")
    );
    let member_requests = |requests: &[Value]| {
        requests
            .iter()
            .filter(|request| request["scope"] == "member:maya")
            .count()
    };
    let before = member_requests(&demo.requests().await);

    let answered = flood(&server, 2000, call(3, "read_status", json!({}))).await;
    assert_eq!(
        answered,
        vec![(StatusCode::UNAUTHORIZED, 2000)],
        "every made-up key is refused as the stack refused it"
    );

    let status = result_of(
        server
            .in_session(&read, &session, &call(4, "read_status", json!({})))
            .await,
    )
    .await;
    assert_eq!(
        status["isError"], false,
        "the real session lives on: {status}"
    );
    let again = server
        .post(Some(&member), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        member_requests(&demo.requests().await),
        before,
        "the refused key was not sent to the stack again"
    );
}

#[tokio::test]
async fn made_up_initializes_leave_real_users_able_to_open_sessions() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &UNLIMITED_PEERS).await;
    let answered = flood(&server, 300, initialize()).await;
    assert_eq!(answered, vec![(StatusCode::UNAUTHORIZED, 300)]);
    for key_file in [
        &demo.read_key_file,
        &demo.act_key_file,
        &demo.member_key_file,
    ] {
        server.open_session(&demo.key(key_file)).await;
    }
}

#[tokio::test]
async fn new_keys_and_requests_from_one_address_are_limited_and_others_are_not() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[("LEMONFIBER_PEER_RATE", "100")]).await;
    let answered = flood(&server, 30, initialize()).await;
    let limited = answered
        .iter()
        .find(|(status, _)| *status == StatusCode::TOO_MANY_REQUESTS)
        .map_or(0, |(_, count)| *count);
    assert!(
        limited >= 15,
        "past its allowance of new keys: {answered:?}"
    );
    let attacker = server.client_from(ip(ATTACKER));
    let turned_away = server
        .post_with(&attacker, Some(&random_key()), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(turned_away.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = turned_away.headers()["retry-after"]
        .to_str()
        .expect("text")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&wait), "{wait}");

    // The attacker's requests run out too, whatever key they carry.
    let read = demo.key(&demo.read_key_file);
    let mut statuses = Vec::new();
    for _ in 0..120 {
        let status = server
            .post_with(&attacker, Some(&read), &initialize())
            .send()
            .await
            .expect("answered")
            .status();
        statuses.push(status);
    }
    assert!(
        statuses.contains(&StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );

    let household = server.client_from(ip(HOUSEHOLD));
    let welcome = server
        .post_with(
            &household,
            Some(&demo.key(&demo.act_key_file)),
            &initialize(),
        )
        .send()
        .await
        .expect("answered");
    assert_eq!(
        welcome.status(),
        StatusCode::OK,
        "another address has its own allowance"
    );
}

#[tokio::test]
async fn session_caps_are_permits_taken_before_a_session_is_made_and_given_back() {
    let demo = DemoStack::start().await;
    let server = http_server(
        &demo,
        &[
            ("LEMONFIBER_SESSIONS", "3"),
            ("LEMONFIBER_KEY_SESSIONS", "2"),
        ],
    )
    .await;
    let read = demo.key(&demo.read_key_file);
    let act = demo.key(&demo.act_key_file);
    let member = demo.key(&demo.member_key_file);
    let called = |key: &str, session: &str| {
        server
            .post(Some(key), &call(3, "read_status", json!({})))
            .header("mcp-session-id", session)
            .send()
    };
    let first = server.open_session(&read).await;
    let second = server.open_session(&read).await;
    // Past the key's share, its own session idle longest makes way.
    let third = server.open_session(&read).await;
    assert_eq!(
        called(&read, &first).await.expect("answered").status(),
        StatusCode::NOT_FOUND,
        "one key's share"
    );
    assert_eq!(
        called(&read, &second).await.expect("answered").status(),
        StatusCode::OK
    );
    let acts = server.open_session(&act).await;
    // Past the server's cap, a key with a session of its own gives that up; one without any
    // is refused, and no other key's session is closed for it.
    let acts_again = server.open_session(&act).await;
    assert_eq!(
        called(&act, &acts).await.expect("answered").status(),
        StatusCode::NOT_FOUND
    );
    let full = server
        .post(Some(&member), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(
        full.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "the server's cap"
    );
    assert!(full.headers().get("retry-after").is_some());
    assert!(full.text().await.expect("body").contains("on this server"));
    for (key, session) in [(&read, &second), (&read, &third), (&act, &acts_again)] {
        assert_eq!(
            called(key, session).await.expect("answered").status(),
            StatusCode::OK
        );
    }

    let delete = |key: &str, session: &str| {
        server
            .client
            .delete(&server.url)
            .bearer_auth(key)
            .header("mcp-session-id", session)
            .send()
    };
    assert_eq!(
        delete(&read, &acts_again).await.expect("answered").status(),
        StatusCode::NOT_FOUND,
        "another key's session is not this key's to end"
    );
    assert_eq!(
        delete(&read, "no-such-session")
            .await
            .expect("answered")
            .status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        delete(&read, &second).await.expect("answered").status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        delete(&read, &second).await.expect("answered").status(),
        StatusCode::NOT_FOUND,
        "an ended session is gone"
    );
    // Its permits went back with it.
    assert_eq!(opens_within(&server, &member, 50).await, StatusCode::OK);
}

#[tokio::test]
async fn past_the_requests_under_way_over_everyone_a_request_is_answered_429() {
    let demo = DemoStack::start().await;
    let server = http_server(
        &demo,
        &[("LEMONFIBER_UNDER_WAY", "1"), ("LEMONFIBER_JOB_WAIT", "3")],
    )
    .await;
    let act = demo.key(&demo.act_key_file);
    let read = demo.key(&demo.read_key_file);
    let session = server.open_session(&act).await;
    let rehearsed = result_of(
        server
            .in_session(&act, &session, &call(2, "rehearse_update", json!({})))
            .await,
    )
    .await;
    let offer = rehearsed["structuredContent"]["data"]["offer"]
        .as_str()
        .expect("an offer")
        .to_owned();
    demo.control("jobs/hold").await;
    let slow = server
        .in_session(
            &act,
            &session,
            &call(3, "update", json!({ "offer": offer })),
        )
        .await;
    let busy = server
        .post(Some(&read), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(
        busy.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "one under way is everyone's limit"
    );
    assert!(busy.headers().get("retry-after").is_some());
    let _ = slow.text().await;
    assert_eq!(
        server
            .post(Some(&read), &initialize())
            .send()
            .await
            .expect("answered")
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn two_hosts_or_a_target_naming_another_host_are_bad_requests() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let authority = server
        .url
        .trim_start_matches("https://")
        .split('/')
        .next()
        .expect("an authority")
        .to_owned();
    let body = initialize().to_string();
    let head = |target: &str, hosts: &[&str]| {
        let hosts: String = hosts
            .iter()
            .map(|host| format!("Host: {host}\r\n"))
            .collect();
        format!(
            "POST {target} HTTP/1.1\r\n{hosts}Authorization: Bearer {key}\r\nAccept: {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            https::ACCEPT,
            body.len()
        )
    };
    for (request, expected) in [
        (head("/mcp", &[&authority, "evil.example"]), 400),
        (head("https://evil.example/mcp", &[&authority]), 400),
        (
            head(&format!("https://{authority}/mcp"), &[&authority]),
            200,
        ),
    ] {
        let (url, pin) = (server.url.clone(), server.pin.clone());
        let status = tokio::task::spawn_blocking(move || raw_status(&url, &pin, &request))
            .await
            .expect("sent");
        assert_eq!(status, expected);
    }
}

#[tokio::test]
async fn bodies_that_are_not_one_message_get_json_rpc_errors() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let session = server.open_session(&key).await;
    let send = |body: &str| {
        server
            .client
            .post(&server.url)
            .bearer_auth(&key)
            .header("accept", https::ACCEPT)
            .header("content-type", "application/json")
            .header("mcp-session-id", &session)
            .body(body.to_owned())
            .send()
    };
    for (body, status, code) in [
        (
            "{\"jsonrpc\": \"2.0\", \"id\": 1, ",
            StatusCode::BAD_REQUEST,
            -32700,
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
            StatusCode::BAD_REQUEST,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            StatusCode::BAD_REQUEST,
            -32600,
        ),
        (r#"{"jsonrpc":"2.0"}"#, StatusCode::BAD_REQUEST, -32600),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read_status","arguments":"everything"}}"#,
            StatusCode::OK,
            -32602,
        ),
    ] {
        let answered = send(body).await.expect("answered");
        assert_eq!(answered.status(), status, "{body}");
        let answer = messages(&answered.text().await.expect("a body"));
        assert_eq!(answer.len(), 1, "{answer:?}");
        assert_eq!(answer[0]["error"]["code"], code, "{body}: {answer:?}");
        assert_eq!(answer[0]["jsonrpc"], "2.0");
    }
}

/// A key the stack accepted and later refused keeps its session, where every tool says it was
/// refused, and it is never sent to the stack again (F13-R9), on that session or a new one.
#[tokio::test]
async fn a_key_refused_after_it_was_accepted_is_never_sent_again() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let read = demo.key(&demo.read_key_file);
    let session = server.open_session(&read).await;
    let status = result_of(
        server
            .in_session(&read, &session, &call(2, "read_status", json!({})))
            .await,
    )
    .await;
    assert_eq!(status["isError"], false, "{status}");
    demo.control("revoke/read").await;
    let sent_with_read = |requests: Vec<Value>| {
        requests
            .iter()
            .filter(|request| request["scope"] == "read")
            .count()
    };
    let before = sent_with_read(demo.requests().await);
    for id in 3..6 {
        let refused = result_of(
            server
                .in_session(&read, &session, &call(id, "read_stuck", json!({})))
                .await,
        )
        .await;
        assert_eq!(refused["isError"], true);
        let said = refused["content"][0]["text"].as_str().unwrap_or_default();
        assert!(said.contains("A new key is needed"), "{said}");
    }
    let again = server
        .post(Some(&read), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(
        again.status(),
        StatusCode::UNAUTHORIZED,
        "a new session is sent back to sign in"
    );
    assert_eq!(
        sent_with_read(demo.requests().await),
        before + 1,
        "sent once after it was revoked, to learn so, and never again"
    );
}

/// A key the stack turns away because the connection is not one it counts as pinned (ADMIT-11)
/// is a setup problem, not a refused key: answered 503 naming it, and taken once the stack
/// takes it (issue 9).
#[tokio::test]
async fn a_connection_the_stack_does_not_count_as_pinned_is_not_a_refused_key() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let read = demo.key(&demo.read_key_file);
    demo.control("not-pinned").await;
    let turned_away = server
        .post(Some(&read), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(turned_away.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body = turned_away.text().await.expect("a body");
    assert!(
        body.contains("stack_not_pinned") && body.contains("ADMIT-11"),
        "{body}"
    );
    let session = server.open_session(&read).await;
    let status = result_of(
        server
            .in_session(&read, &session, &call(2, "read_status", json!({})))
            .await,
    )
    .await;
    assert_eq!(
        status["isError"], false,
        "the key was not refused: {status}"
    );
}

/// Sends `head` and a byte of its body from `from`, and no more.
async fn slow_body(server: &HttpServer, from: &str, head: &str) -> SlowBody {
    SlowBody::send(server.address(), ip(from), &server.pin, head).await
}

/// The head of a slow request with no key, by turn to each endpoint that reads a body before
/// any key: sign-in's, and MCP's for a version it does not speak (answered to its body's id).
fn slow_head(server: &HttpServer, n: usize) -> String {
    let authority = server.address();
    let (path, kind) = match n % 4 {
        0 => ("/register", "application/json"),
        1 => ("/token", "application/x-www-form-urlencoded"),
        2 => ("/authorize", "application/x-www-form-urlencoded"),
        _ => (
            "/mcp",
            "application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 1999-01-01",
        ),
    };
    format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: {kind}\r\n\
         Content-Length: 1000\r\n\r\n"
    )
}

/// How many of `slow` the server is still waiting on, and the heads of its answers to the rest;
/// the ones waited on are closed.
async fn still_waiting(slow: Vec<SlowBody>) -> (usize, Vec<String>) {
    tokio::task::spawn_blocking(move || {
        let mut waiting = 0;
        let mut answers = Vec::new();
        for mut body in slow {
            if body.answered_yet() {
                answers.push(body.answer_head());
            } else {
                waiting += 1;
            }
        }
        (waiting, answers)
    })
    .await
    .expect("read")
}

/// A person signing in from `from`, the whole way: registration, the page, the key, allow, and
/// the code exchanged for tokens.
async fn signs_in(server: &HttpServer, from: &str, key: &str) {
    let sign_in = SignIn {
        http: reqwest::Client::builder()
            .tls_backend_preconfigured(pinned_tls(&server.pin))
            .local_address(ip(from))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .expect("an HTTPS client"),
        base: server.url.trim_end_matches("/mcp").to_owned(),
    };
    let (client, code) = sign_in.code_for(key).await;
    let (status, tokens) = sign_in.exchange(&client, &code).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert!(tokens["access_token"].is_string(), "{tokens}");
}

/// How many of ten stateless calls with `key` from the household's address are answered.
async fn keyed_calls_answered(server: &HttpServer, key: &str) -> usize {
    let household = server.client_from(ip(HOUSEHOLD));
    let mut worked = 0;
    for id in 0..10 {
        let response = stateless_read_status(server, &household, key, id)
            .send()
            .await
            .expect("answered");
        if response.status() == StatusCode::OK && result_of(response).await["isError"] == false {
            worked += 1;
        }
    }
    worked
}

/// Issue 27 item 3: one address holding 130 slow bodies open with no key (registration, tokens,
/// the page's form, MCP in a version it does not speak) is held to its own few requests under way, and no body it sends slowly holds
/// a place anyone else needs: keyed calls from another address, and a whole sign-in from a third,
/// are answered meanwhile.
#[tokio::test]
async fn slow_keyless_bodies_from_one_address_leave_keyed_calls_and_other_sign_ins_answering() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let read = demo.key(&demo.read_key_file);
    let heads: Vec<String> = (0..130).map(|n| slow_head(&server, n)).collect();
    let mut slow: Vec<SlowBody> = futures::stream::iter(&heads)
        .map(|head| slow_body(&server, SLOW_SENDER, head))
        .buffered(8)
        .collect()
        .await;
    // As a sender does, each body answered is sent again, once: every place it can take, it has.
    for (body, head) in slow.iter_mut().zip(&heads) {
        if body.answered_yet() {
            *body = slow_body(&server, SLOW_SENDER, head).await;
        }
    }

    let worked = keyed_calls_answered(&server, &read).await;
    assert!(
        worked >= 9,
        "keyed calls from another address: {worked} of 10"
    );
    signs_in(&server, SIGNING_IN, &read).await;

    // The slow bodies were held all along: as many as the address may have under way are still
    // waited on, and every other one was refused at once, its connection closed.
    let (waiting, refused) = still_waiting(slow).await;
    assert_eq!(waiting, PEER_AT_ONCE, "the flood was still held");
    assert_eq!(refused.len(), 130 - PEER_AT_ONCE);
    for head in refused {
        let head = head.to_ascii_lowercase();
        assert_eq!(status_of(&head), Some(429), "{head}");
        assert!(head.contains("retry-after:"), "{head}");
        assert!(head.contains("connection: close"), "{head}");
    }
}

/// A handful of addresses, each holding as many slow bodies as it may, take no place among the
/// sign-in requests being answered: those are taken only once a body is in, so another address
/// still signs in.
#[tokio::test]
async fn slow_bodies_from_a_handful_of_addresses_leave_other_sign_ins_answering() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let read = demo.key(&demo.read_key_file);
    let senders: Vec<String> = (1..=9).map(|n| format!("127.0.9.{n}")).collect();
    let mut slow = Vec::new();
    for sender in &senders {
        for n in 0..PEER_AT_ONCE {
            slow.push(slow_body(&server, sender, &slow_head(&server, n)).await);
        }
    }
    signs_in(&server, SIGNING_IN, &read).await;
    assert_eq!(keyed_calls_answered(&server, &read).await, 10);
    let (waiting, refused) = still_waiting(slow).await;
    assert_eq!(
        waiting,
        senders.len() * PEER_AT_ONCE,
        "every slow body was still held: {refused:?}"
    );
}

/// Issue 27 item 8: a client that never closes its session (the Inspector CLI, an SDK's
/// `close()`) runs as often as it likes with one key: past the key's sessions, the one walked
/// away from longest ago is closed for the new one, and its client would be told it is not found.
#[tokio::test]
async fn twenty_runs_that_never_close_their_session_all_succeed_with_one_key() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let read = demo.key(&demo.read_key_file);
    let mut sessions = Vec::new();
    for run in 0..20 {
        // A client of its own each run, as each run of a command-line client is.
        let client = server.client_from(ip(HOUSEHOLD));
        let session = server.open_session_with(&client, &read).await;
        let answer = server
            .post_with(&client, Some(&read), &call(2, "read_status", json!({})))
            .header("mcp-session-id", &session)
            .send()
            .await
            .expect("answered");
        assert_eq!(answer.status(), StatusCode::OK, "run {run}");
        let status = result_of(answer).await;
        assert_eq!(status["isError"], false, "run {run}: {status}");
        sessions.push(session);
    }
    let called = |session: &str| {
        server
            .post(Some(&read), &call(3, "read_status", json!({})))
            .header("mcp-session-id", session)
            .send()
    };
    for closed in &sessions[..4] {
        assert_eq!(
            called(closed).await.expect("answered").status(),
            StatusCode::NOT_FOUND,
            "the sessions idle longest were closed"
        );
    }
    for kept in [&sessions[4], &sessions[19]] {
        let answer = called(kept).await.expect("answered");
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(result_of(answer).await["isError"], false);
    }
}

/// A session with a stream still open is in use, and is never the one closed for a new session;
/// when every session of the key is in use, the new one is refused instead.
#[tokio::test]
async fn a_session_with_a_stream_open_is_never_closed_for_a_new_one() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[("LEMONFIBER_KEY_SESSIONS", "2")]).await;
    let read = demo.key(&demo.read_key_file);
    let listen = |session: &str| {
        server
            .client
            .get(&server.url)
            .bearer_auth(&read)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session)
            .send()
    };
    let called = |session: &str| {
        server
            .post(Some(&read), &call(3, "read_status", json!({})))
            .header("mcp-session-id", session)
            .send()
    };
    let listening = server.open_session(&read).await;
    let stream = listen(&listening).await.expect("a stream");
    assert_eq!(stream.status(), StatusCode::OK);
    let idle = server.open_session(&read).await;
    let newest = server.open_session(&read).await;
    assert_eq!(
        called(&idle).await.expect("answered").status(),
        StatusCode::NOT_FOUND,
        "the idle one was closed"
    );
    let answer = called(&listening).await.expect("answered");
    assert_eq!(answer.status(), StatusCode::OK, "the listening one was not");
    assert_eq!(result_of(answer).await["isError"], false);

    let other_stream = listen(&newest).await.expect("a stream");
    assert_eq!(other_stream.status(), StatusCode::OK);
    let refused = server
        .post(Some(&read), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().get("retry-after").is_some());
    assert!(
        refused
            .text()
            .await
            .expect("body")
            .contains("each with a request or stream still open")
    );

    // Once a stream ends, its session is idle again, and gives way to a new one.
    drop(other_stream);
    assert_eq!(opens_within(&server, &read, 100).await, StatusCode::OK);
    assert_eq!(
        called(&newest).await.expect("answered").status(),
        StatusCode::NOT_FOUND
    );
    drop(stream);
}
