//! The HTTP mode checks its stack at start and says what it found, and says (at most once an
//! interval) when it answers 503 because the stack cannot be reached: against a closed loopback
//! port, against the demo with a wrong pin, and against the demo as pinned. No line holds a key
//! or a pin (F13-R10).

#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;

use demo::{DemoStack, eventually};
use http_server::{HttpServer, initialize};
use reqwest::StatusCode;

const REACHED: &str = "the stack answers at its address, and its certificate matches the pin";
const NOTHING_ANSWERED: &str = "the stack cannot be reached: nothing answered at its address";
const PIN_DOES_NOT_MATCH: &str =
    "the stack's certificate does not match the pin this server was given";
const TURNED_AWAY: &str = "a request was answered 503 because the stack cannot be reached";
/// A key of the right form that no stack knows.
const A_KEY: &str = "lfk_0123456789abcdef0123456789abcdef";
const A_WRONG_PIN: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// A loopback address at which nothing listens: a port taken from the system and let go.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("its address").port();
    drop(listener);
    format!("https://127.0.0.1:{port}")
}

async fn says(server: &HttpServer, words: &str) {
    assert!(
        eventually(|| server.stderr().contains(words)).await,
        "the log says {words:?}:\n{}",
        server.stderr()
    );
}

/// Sends `times` requests that need the stack, each answered 503.
async fn turned_away(server: &HttpServer, times: usize) {
    for _ in 0..times {
        let answered = server
            .post(Some(A_KEY), &initialize())
            .send()
            .await
            .expect("answered");
        assert_eq!(answered.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
}

fn lines_saying(log: &str, words: &str) -> usize {
    log.lines().filter(|line| line.contains(words)).count()
}

fn holds_no_secret(log: &str, pins: &[&str]) {
    assert!(
        !log.contains(A_KEY) && !log.contains("lfk_"),
        "a key:\n{log}"
    );
    for pin in pins {
        assert!(!log.contains(pin), "a pin:\n{log}");
    }
}

#[tokio::test]
async fn a_stack_nothing_answers_for_is_said_at_start_and_503s_are_said_once_an_interval() {
    let server = HttpServer::start(
        &closed_port(),
        A_WRONG_PIN,
        &[("LEMONFIBER_LOG", "warn,lemonfiber_mcp=info")],
    )
    .await;
    says(&server, NOTHING_ANSWERED).await;
    assert!(server.stderr().contains(" WARN "), "{}", server.stderr());
    turned_away(&server, 5).await;
    says(&server, TURNED_AWAY).await;
    // Every line was written before its request was answered; let the pipe catch up.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let log = server.stderr();
    assert_eq!(
        lines_saying(&log, TURNED_AWAY),
        1,
        "one line, not five:\n{log}"
    );
    assert!(
        log.contains("(0 more answered so since the last such line"),
        "the first line counts none before it:\n{log}"
    );
    assert!(!log.contains(REACHED), "{log}");
    holds_no_secret(&log, &[A_WRONG_PIN]);
}

#[tokio::test]
async fn a_stack_whose_certificate_is_not_the_pinned_one_is_said_at_start() {
    let demo = DemoStack::start().await;
    let server = HttpServer::start(
        &demo.address,
        A_WRONG_PIN,
        &[("LEMONFIBER_LOG", "warn,lemonfiber_mcp=info")],
    )
    .await;
    says(&server, PIN_DOES_NOT_MATCH).await;
    turned_away(&server, 3).await;
    says(&server, &format!("{TURNED_AWAY}: {PIN_DOES_NOT_MATCH}")).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let log = server.stderr();
    assert_eq!(lines_saying(&log, TURNED_AWAY), 1, "{log}");
    assert!(!log.contains(REACHED), "{log}");
    holds_no_secret(&log, &[A_WRONG_PIN, &demo.pin]);
}

#[tokio::test]
async fn a_stack_that_answers_as_pinned_is_said_at_start() {
    let demo = DemoStack::start().await;
    let server = HttpServer::start(
        &demo.address,
        &demo.pin,
        &[("LEMONFIBER_LOG", "warn,lemonfiber_mcp=info")],
    )
    .await;
    says(&server, REACHED).await;
    let log = server.stderr();
    assert!(!log.contains(NOTHING_ANSWERED) && !log.contains(PIN_DOES_NOT_MATCH));
    assert!(!log.contains(TURNED_AWAY), "{log}");
    holds_no_secret(&log, &[&demo.pin]);
    assert!(
        demo.requests().await.is_empty(),
        "the check sent the stack nothing: a handshake, and no request"
    );
}
