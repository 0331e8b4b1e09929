//! The sign-in page in a real browser: Debian's Chromium, headless, with script turned off,
//! driven as a person would (typing, clicking). It renders the page (the screenshots in
//! docs/connect-a-hosted-assistant.md are these, from target/screenshots), its forms work without
//! script, and what it sends back is a code a client can exchange. F13-R8.

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
#[path = "support/https.rs"]
mod https;
#[path = "support/sign_in.rs"]
mod sign_in;
#[path = "support/webdriver.rs"]
mod webdriver;

use std::path::Path;

use base64::Engine as _;
use demo::{DemoStack, target_dir};
use reqwest::StatusCode;
use sha2::Digest as _;
use sign_in::{SignIn, VERIFIER, challenge_of, parameter};
use webdriver::Browser;

/// The base64 SHA-256 of the demo MCP certificate's public key, which the browser is told to
/// trust as a pin.
fn spki_pin(demo: &DemoStack) -> String {
    use rustls::pki_types::pem::PemObject as _;
    let folder = Path::new(&demo.read_key_file)
        .parent()
        .expect("the key folder");
    let certificate =
        rustls::pki_types::CertificateDer::from_pem_file(folder.join("mcp/server-certificate.pem"))
            .expect("the demo's MCP certificate");
    let (_, parsed) = x509_parser::parse_x509_certificate(&certificate).expect("a certificate");
    base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(parsed.public_key().raw))
}

/// A page a person is sent back to: it only has to be there.
async fn callback_page() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let router = axum::Router::new().route(
        "/callback",
        axum::routing::get(|| async { "Signed in; you can close this window." }),
    );
    let serving = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (format!("http://{address}/callback"), serving)
}

#[tokio::test]
async fn a_person_signs_in_on_the_page_in_chromium_with_script_turned_off() {
    let demo = DemoStack::start().await;
    let (redirect, callback) = callback_page().await;
    let sign_in = SignIn::new(demo.mcp_url.trim_end_matches("/mcp"), &demo.mcp_pin);
    let client = sign_in.register(&redirect).await;
    let mut authorize = url::Url::parse(&format!("{}/authorize", sign_in.base)).expect("a URL");
    authorize
        .query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &client)
        .append_pair("redirect_uri", &redirect)
        .append_pair("code_challenge", &challenge_of(VERIFIER))
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", "from-the-browser")
        .append_pair("resource", &sign_in.resource());

    // A phone's window.
    let browser = Browser::start(&spki_pin(&demo), 412, 915).await;
    browser
        .go_to("data:text/html,<title>still</title><script>document.title='ran'</script>")
        .await;
    assert_eq!(
        browser.title().await,
        "still",
        "this browser runs no script"
    );
    browser.go_to(authorize.as_str()).await;
    let first = browser.source().await;
    assert!(
        first.contains("Connect your assistant to lemonfiber"),
        "{first}"
    );
    assert!(!first.contains("<script"));
    let screenshots = target_dir().join("screenshots");
    std::fs::create_dir_all(&screenshots).expect("a folder for screenshots");
    std::fs::write(
        screenshots.join("sign-in-key.png"),
        browser.screenshot().await,
    )
    .expect("kept");

    browser
        .type_into("#credential", &demo.key(&demo.member_key_file))
        .await;
    browser.click("button.yes").await;
    browser.find("button[value=allow]").await;
    let second = browser.source().await;
    assert!(second.contains("household member's key"), "{second}");
    std::fs::write(
        screenshots.join("sign-in-allow.png"),
        browser.screenshot().await,
    )
    .expect("kept");

    browser.click("button[value=allow]").await;
    let mut back = String::new();
    for _ in 0..100 {
        back = browser.url().await;
        if back.starts_with(&redirect) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let back = url::Url::parse(&back).expect("sent back");
    assert!(back.as_str().starts_with(&redirect), "{back}");
    assert_eq!(
        parameter(&back, "state").as_deref(),
        Some("from-the-browser")
    );
    assert_eq!(
        parameter(&back, "iss").as_deref(),
        Some(sign_in.base.as_str())
    );
    browser.stop().await;
    callback.abort();

    let code = parameter(&back, "code").expect("a code");
    let (status, tokens) = sign_in
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &redirect),
            ("code_verifier", VERIFIER),
            ("client_id", &client),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access = tokens["access_token"].as_str().expect("a token");
    assert_eq!(
        sign_in.initialize_with(Some(access)).await.0,
        StatusCode::OK
    );
}
