//! `lemonfiber-mcp http` by hand, over real TLS with the server's fingerprint pinned: a key on
//! every request, Origin and Host checks, limits, sessions bound to their key, the health check,
//! and a certificate that survives a restart (F13-R8, F13-R12).

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
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;

use demo::{BINARY, DemoStack, Scratch};
use http_server::{call, fresh_dir, http_server, initialize};
use https::{ACCEPT, messages, status_before_the_whole_body};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test]
async fn health_needs_no_key_and_says_nothing_of_any() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let health = server
        .client
        .get(server.url.replace("/mcp", "/health"))
        .send()
        .await
        .expect("health");
    assert_eq!(health.status(), StatusCode::OK);
    let body: Value = health.json().await.expect("JSON");
    assert_eq!(body["status"], "ok");
    assert!(!body.to_string().contains("lfk_") && !body.to_string().contains("key"));
}

#[tokio::test]
async fn every_request_needs_an_integration_key_as_its_bearer() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let missing = server
        .post(None, &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        missing
            .headers()
            .get("connection")
            .map(|value| value.as_bytes()),
        Some(&b"close"[..]),
        "refused before its body was read, the connection closes and says so, so no client sends \
         its next request on it"
    );
    let challenge = missing
        .headers()
        .get("www-authenticate")
        .expect("a challenge")
        .to_str()
        .expect("text")
        .to_owned();
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    let body: Value = missing.json().await.expect("a JSON error");
    assert!(
        body["error_description"]
            .as_str()
            .is_some_and(|text| text.contains("Authorization: Bearer"))
    );

    let wrong = server
        .post(Some("operator-password-hunter2"), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(wrong.headers().get("www-authenticate").is_some());
    assert!(
        !wrong.text().await.expect("body").contains("hunter2"),
        "the refusal never repeats the key"
    );

    let key = demo.key(&demo.read_key_file);
    let accepted = server
        .post(Some(&key), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(accepted.status(), StatusCode::OK);
    assert!(
        accepted.headers().get("connection").is_none(),
        "a request answered after its body was read keeps its connection"
    );
}

#[tokio::test]
async fn origin_host_protocol_version_and_body_size_are_checked() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let with = |name: &'static str, value: &str| {
        server
            .post(Some(&key), &initialize())
            .header(name, value.to_owned())
    };

    let origin = with("origin", "https://evil.example")
        .send()
        .await
        .expect("answered");
    assert_eq!(origin.status(), StatusCode::FORBIDDEN);
    let port = server
        .url
        .rsplit(':')
        .next()
        .and_then(|rest| rest.split('/').next())
        .expect("a port")
        .to_owned();
    let same_origin = with("origin", &format!("https://127.0.0.1:{port}"))
        .send()
        .await
        .expect("answered");
    assert_eq!(same_origin.status(), StatusCode::OK);
    let host = with("host", "evil.example").send().await.expect("answered");
    assert_eq!(host.status(), StatusCode::FORBIDDEN);
    let version = with("mcp-protocol-version", "1999-01-01")
        .send()
        .await
        .expect("answered");
    assert_eq!(version.status(), StatusCode::BAD_REQUEST);

    let authority = server
        .url
        .trim_start_matches("https://")
        .split('/')
        .next()
        .expect("an authority")
        .to_owned();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {key}\r\nAccept: {ACCEPT}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        5 * 1024 * 1024
    );
    let (url, pin) = (server.url.clone(), server.pin.clone());
    let status =
        tokio::task::spawn_blocking(move || status_before_the_whole_body(&url, &pin, &head, 1024))
            .await
            .expect("sent");
    assert_eq!(status, 413, "refused before the rest of the body is read");
}

#[tokio::test]
async fn a_session_is_bound_to_the_key_that_opened_it() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let read = demo.key(&demo.read_key_file);
    let member = demo.key(&demo.member_key_file);
    let session = server.open_session(&read).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});

    let stolen = server.in_session(&member, &session, &list).await;
    assert_eq!(
        stolen.status(),
        StatusCode::NOT_FOUND,
        "another key's request is not served on the session"
    );
    let own = server.in_session(&read, &session, &list).await;
    assert_eq!(own.status(), StatusCode::OK);
    let answer = messages(&own.text().await.expect("body"));
    let tools = answer
        .iter()
        .find_map(|message| message["result"]["tools"].as_array().cloned())
        .expect("tools");
    assert_eq!(tools.len(), 39);

    let older = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}});
    let answered = server
        .post(Some(&read), &older)
        .send()
        .await
        .expect("answered");
    let answer = messages(&answered.text().await.expect("body"));
    assert!(
        answer
            .iter()
            .any(|message| message["result"]["protocolVersion"] == "2025-06-18"),
        "{answer:?}"
    );

    let unknown = json!({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"});
    let answered = server.in_session(&read, &session, &unknown).await;
    let answer = messages(&answered.text().await.expect("body"));
    assert!(
        answer
            .iter()
            .any(|message| message["error"]["code"] == -32601),
        "{answer:?}"
    );
}

#[tokio::test]
async fn past_the_per_key_limits_a_request_is_answered_429() {
    let demo = DemoStack::start().await;
    let server = http_server(
        &demo,
        &[("LEMONFIBER_RATE", "3"), ("LEMONFIBER_SESSIONS", "4")],
    )
    .await;
    let read = demo.key(&demo.read_key_file);
    for _ in 0..3 {
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
    let limited = server
        .post(Some(&read), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = limited
        .headers()
        .get("retry-after")
        .expect("Retry-After")
        .to_str()
        .expect("text")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    let act = demo.key(&demo.act_key_file);
    assert_eq!(
        server
            .post(Some(&act), &initialize())
            .send()
            .await
            .expect("answered")
            .status(),
        StatusCode::OK,
        "another key has its own limit"
    );
    // The sessions are all open, and this key has none of its own to give up for one.
    let member = demo.key(&demo.member_key_file);
    let over = server
        .post(Some(&member), &initialize())
        .send()
        .await
        .expect("answered");
    assert_eq!(
        over.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "past the cap on open sessions"
    );
}

#[tokio::test]
async fn refuses_to_start_with_a_key_in_its_environment_or_nowhere_to_listen() {
    let key = "lfk_0123456789abcdef0123456789abcdef";
    for (settings, named) in [
        (
            vec![
                ("LEMONFIBER_LISTEN", "127.0.0.1:0"),
                ("LEMONFIBER_ADDRESS", "127.0.0.1:9"),
                ("LEMONFIBER_KEY", key),
            ],
            "LEMONFIBER_KEY",
        ),
        (
            vec![
                ("LEMONFIBER_LISTEN", "127.0.0.1:0"),
                ("LEMONFIBER_ADDRESS", "127.0.0.1:9"),
                ("LEMONFIBER_KEY_FILE", "/etc/hostname"),
            ],
            "LEMONFIBER_KEY_FILE",
        ),
        (
            vec![("LEMONFIBER_ADDRESS", "127.0.0.1:9")],
            "LEMONFIBER_LISTEN",
        ),
    ] {
        let output = std::process::Command::new(BINARY)
            .arg("http")
            .env_clear()
            .envs(settings)
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(named), "{stderr}");
        assert!(!stderr.contains(key));
    }
}

#[tokio::test]
async fn a_restart_keeps_the_certificate_and_its_fingerprint() {
    let demo = DemoStack::start().await;
    let state = Scratch::at(fresh_dir("kept"));
    let state_text = state.display().to_string();
    let first = http_server(&demo, &[("LEMONFIBER_STATE", &state_text)]).await;
    let fingerprint = first.pin.clone();
    drop(first);
    let again = http_server(&demo, &[("LEMONFIBER_STATE", &state_text)]).await;
    assert_eq!(again.pin, fingerprint);
    let health = again
        .client
        .get(again.url.replace("/mcp", "/health"))
        .send()
        .await
        .expect("the pinned certificate is the one served");
    assert_eq!(health.status(), StatusCode::OK);
}

#[tokio::test]
async fn past_the_requests_a_key_may_have_under_way_a_request_is_answered_429() {
    let demo = DemoStack::start().await;
    let server = http_server(
        &demo,
        &[("LEMONFIBER_AT_ONCE", "1"), ("LEMONFIBER_JOB_WAIT", "3")],
    )
    .await;
    let act = demo.key(&demo.act_key_file);
    let session = server.open_session(&act).await;
    let rehearsed = server
        .in_session(&act, &session, &call(2, "rehearse_update", json!({})))
        .await;
    let rehearsed = messages(&rehearsed.text().await.expect("body"));
    let offer = rehearsed
        .iter()
        .find_map(|message| {
            message["result"]["structuredContent"]["data"]["offer"]
                .as_str()
                .map(str::to_owned)
        })
        .expect("an offer");

    demo.control("jobs/hold").await;
    let slow = server
        .in_session(&act, &session, &call(3, "update", json!({"offer": offer})))
        .await;
    assert_eq!(
        slow.status(),
        StatusCode::OK,
        "the answer streams while the job is followed"
    );
    let busy = server
        .in_session(
            &act,
            &session,
            &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
        )
        .await;
    assert_eq!(
        busy.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "one request under way is this key's limit"
    );
    assert!(busy.headers().get("retry-after").is_some());

    let followed = messages(&slow.text().await.expect("the streamed answer"));
    assert!(
        followed
            .iter()
            .any(|message| message["result"]["structuredContent"]["state"] == "running"),
        "{followed:?}"
    );
    let free = server
        .in_session(
            &act,
            &session,
            &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
        )
        .await;
    assert_eq!(
        free.status(),
        StatusCode::OK,
        "the limit frees once the answer is sent"
    );
}
