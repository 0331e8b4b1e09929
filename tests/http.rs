//! `lemonfiber-mcp http` by hand, over real TLS with the server's fingerprint pinned: a key on
//! every request, Origin and Host checks, limits, sessions bound to their key, the health check,
//! and a certificate that survives a restart (F13-R8, F13-R12).

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

/// A `TOKIO_WORKER_THREADS` that is not a whole number from 1 is refused by name before anything
/// starts, by the HTTP mode and by the commands that run a thread for each core, where the
/// runtime library would panic on it.
#[test]
fn refuses_a_thread_count_that_is_not_a_number() {
    for asked in ["0", "two", "-1", ""] {
        let state = Scratch::at(fresh_dir("threads"));
        let state_text = state.display().to_string();
        let serve: &[&str] = &["http"];
        let demo: &[&str] = &["demo", "--key-dir", &state_text];
        for command in [serve, demo] {
            let output = std::process::Command::new(BINARY)
                .args(command)
                .env_clear()
                .env("TOKIO_WORKER_THREADS", asked)
                .env("LEMONFIBER_LISTEN", "127.0.0.1:0")
                .env("LEMONFIBER_ADDRESS", "127.0.0.1:9")
                .env("LEMONFIBER_STATE", &state_text)
                .output()
                .expect("runs");
            assert_eq!(output.status.code(), Some(2), "{command:?} {asked:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains(&format!("TOKIO_WORKER_THREADS is {asked:?}")),
                "{stderr}"
            );
            assert!(!stderr.contains("panicked"), "{stderr}");
            assert!(
                !state.exists(),
                "nothing is written for {command:?} {asked:?}"
            );
        }
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

/// Sends `request` over TLS as it is (it says `Connection: close`) and answers the whole reply:
/// for requests no HTTP client would make.
fn raw_answer(url: &str, pin: &str, request: &str) -> String {
    use std::io::{Read as _, Write as _};
    let mut stream = https::raw_connection(url, pin);
    stream.write_all(request.as_bytes()).expect("sent");
    let mut answer = Vec::new();
    let mut piece = [0u8; 4096];
    // Until the server closes, however it closes.
    while let Ok(read) = stream.read(&mut piece) {
        if read == 0 {
            break;
        }
        answer.extend_from_slice(&piece[..read]);
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// The status of a raw reply.
fn status_of(answer: &str) -> u16 {
    answer
        .split(' ')
        .nth(1)
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {answer}"))
}

/// The JSON body of a raw reply.
fn body_of(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str(body).unwrap_or_else(|_| panic!("a JSON body: {answer}"))
}

/// The server's `host:port`, as its URL names it.
fn authority_of(server: &http_server::HttpServer) -> String {
    server
        .url
        .trim_start_matches("https://")
        .split('/')
        .next()
        .expect("an authority")
        .to_owned()
}

/// Issue 27: `/health` (and `/root.pem`) take the same Host and absolute-form checks as every
/// request: a foreign Host, a served name at another port, or a target naming another host is
/// refused before anything is said.
#[tokio::test]
async fn health_answers_only_a_served_host_at_a_served_port() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let authority = authority_of(&server);
    let get = |target: &str, host: &str| {
        format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
    };
    for (request, expected) in [
        (get("/health", &authority), 200),
        (get("/health", "evil.example"), 403),
        (get("/health", "127.0.0.1:9"), 403),
        (get("/health", "127.0.0.1"), 403),
        (get("https://evil.example/health", &authority), 400),
        (get(&format!("https://{authority}/health"), &authority), 200),
        (
            "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n".to_owned(),
            400,
        ),
    ] {
        let (url, pin) = (server.url.clone(), server.pin.clone());
        let answer = tokio::task::spawn_blocking(move || raw_answer(&url, &pin, &request))
            .await
            .expect("sent");
        assert_eq!(status_of(&answer), expected, "{answer}");
        if expected != 200 {
            assert!(
                body_of(&answer)["error_description"].is_string(),
                "{answer}"
            );
        }
    }
}

/// Issue 27: a served name at a port the server is not reached at is refused like a foreign
/// Host, so the port a client makes up never becomes the issuer or a URL the server hands out;
/// `LEMONFIBER_PUBLIC_PORT` names one more it is reached at (behind a port forward).
#[tokio::test]
async fn a_host_at_a_port_the_server_is_not_reached_at_never_becomes_the_issuer() {
    let demo = DemoStack::start().await;
    let metadata = "/.well-known/oauth-authorization-server";
    let get = |host: &str| {
        format!("GET {metadata} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
    };
    let ask = |server: &http_server::HttpServer, host: &str| {
        let (url, pin, request) = (server.url.clone(), server.pin.clone(), get(host));
        tokio::task::spawn_blocking(move || raw_answer(&url, &pin, &request))
    };

    let server = http_server(&demo, &[]).await;
    let authority = authority_of(&server);
    let served = ask(&server, &authority).await.expect("sent");
    assert_eq!(status_of(&served), 200, "{served}");
    assert_eq!(body_of(&served)["issuer"], format!("https://{authority}"));
    for made_up in ["127.0.0.1:9", "localhost:9", "127.0.0.1"] {
        let refused = ask(&server, made_up).await.expect("sent");
        assert_eq!(status_of(&refused), 403, "{made_up}: {refused}");
        assert!(!refused.contains(made_up), "{refused}");
    }
    let mcp = server
        .client
        .post(&server.url)
        .header("host", "127.0.0.1:9")
        .header("accept", ACCEPT)
        .header("content-type", "application/json")
        .body(initialize().to_string())
        .send()
        .await
        .expect("answered");
    assert_eq!(mcp.status(), StatusCode::FORBIDDEN);
    let challenge = mcp.headers().get("www-authenticate");
    assert!(challenge.is_none(), "no challenge names the made-up port");
    drop(server);

    // Listening on a port of its own, reached at 443 through a forward: its URL is the public
    // one, and a Host may name either port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let listen = format!("127.0.0.1:{port}");
    let public = http_server(
        &demo,
        &[
            ("LEMONFIBER_LISTEN", &listen),
            ("LEMONFIBER_PUBLIC_PORT", "443"),
        ],
    )
    .await;
    assert_eq!(public.url, "https://127.0.0.1/mcp");
    let ask = |host: &str| {
        let (url, pin) = (format!("https://{listen}/mcp"), public.pin.clone());
        let request = get(host);
        tokio::task::spawn_blocking(move || raw_answer(&url, &pin, &request))
    };
    let at_443 = ask("127.0.0.1").await.expect("sent");
    assert_eq!(status_of(&at_443), 200, "{at_443}");
    assert_eq!(body_of(&at_443)["issuer"], "https://127.0.0.1");
    let listened = ask(&listen).await.expect("sent");
    assert_eq!(body_of(&listened)["issuer"], format!("https://{listen}"));
    let made_up = ask("127.0.0.1:9").await.expect("sent");
    assert_eq!(status_of(&made_up), 403, "{made_up}");
}

/// Issue 27: a chunked body whose chunk size is not a number is a bad request (`400`, saying
/// so), not one too large.
#[tokio::test]
async fn a_chunk_size_that_is_not_one_is_a_bad_request_not_a_body_too_large() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let authority = authority_of(&server);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {key}\r\nAccept: {ACCEPT}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    for body in ["zz\r\n{}\r\n0\r\n\r\n", "2\r\n{}\r\n-1\r\n\r\n"] {
        let request = format!("{head}{body}");
        let (url, pin) = (server.url.clone(), server.pin.clone());
        let answer = tokio::task::spawn_blocking(move || raw_answer(&url, &pin, &request))
            .await
            .expect("sent");
        assert_eq!(status_of(&answer), 400, "{answer}");
        let said = body_of(&answer)["error_description"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(said.contains("chunk"), "{said}");
        assert!(!answer.contains(&key), "the key is never said back");
    }
    // A well-framed chunked body is taken.
    let body = initialize().to_string();
    let request = format!("{head}{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    let (url, pin) = (server.url.clone(), server.pin.clone());
    let answer = tokio::task::spawn_blocking(move || raw_answer(&url, &pin, &request))
        .await
        .expect("sent");
    assert_eq!(status_of(&answer), 200, "{answer}");
}
