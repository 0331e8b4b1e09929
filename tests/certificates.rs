//! The certificate the HTTP mode serves (F13-R12, R13; issue 12): its own, pinned by its clients,
//! replaced by `lemonfiber-mcp certificate rotate` while the server runs.

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

use std::time::Duration;

use demo::{BINARY, DemoStack, Scratch};
use http_server::{fresh_dir, http_server};
use https::pinned_client;
use reqwest::StatusCode;

/// What a client that pins `fingerprint`, on a connection of its own, gets from `/health`.
async fn health(url: &str, fingerprint: &str) -> Result<StatusCode, String> {
    pinned_client(fingerprint)
        .get(url.replace("/mcp", "/health"))
        .send()
        .await
        .map(|answer| answer.status())
        .map_err(|error| {
            let mut said = error.to_string();
            let mut source = std::error::Error::source(&error);
            while let Some(cause) = source {
                said.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            said
        })
}

#[tokio::test]
async fn a_rotated_certificate_is_served_at_once_and_the_old_pin_no_longer_connects() {
    let demo = DemoStack::start().await;
    let state = Scratch::at(fresh_dir("rotate"));
    let state_text = state.display().to_string();
    let server = http_server(&demo, &[("LEMONFIBER_STATE", &state_text)]).await;
    assert_eq!(health(&server.url, &server.pin).await, Ok(StatusCode::OK));

    let rotated = std::process::Command::new(BINARY)
        .args(["certificate", "rotate"])
        .env_clear()
        .env("LEMONFIBER_STATE", &state_text)
        .output()
        .expect("rotate runs");
    assert!(rotated.status.success(), "{rotated:?}");
    let said = String::from_utf8(rotated.stdout).expect("text");
    let fingerprint = said
        .lines()
        .find_map(|line| line.strip_prefix("New certificate fingerprint (SHA-256): "))
        .expect("the new fingerprint is printed")
        .to_owned();
    assert_ne!(fingerprint, server.pin);
    assert!(said.contains("Every client that pins the old fingerprint must be given this one"));

    // The running server serves it within seconds.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let mut old = health(&server.url, &server.pin).await;
    while old.is_ok() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        old = health(&server.url, &server.pin).await;
    }
    let refused = old.expect_err("the old pin no longer connects");
    assert!(
        refused.contains("PinMismatch"),
        "the mismatch is named: {refused}"
    );
    assert_eq!(health(&server.url, &fingerprint).await, Ok(StatusCode::OK));
}
