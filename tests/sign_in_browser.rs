//! The sign-in page in a real browser: Debian's Chromium, headless, with script turned off,
//! driven as a person would (typing, clicking). It renders the page (the screenshots in
//! docs/connect-a-hosted-assistant.md are the phone test's, from target/screenshots), its forms work without
//! script, fits a phone's screen with Allow on it, and what it sends back is a code a client can
//! exchange. F13-R8.

#[path = "support/debian.rs"]
mod debian;
#[path = "support/demo.rs"]
mod demo;
#[path = "support/https.rs"]
mod https;
#[path = "support/mcp.rs"]
mod mcp;
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

/// Where the browser is sent to sign in, as a client sends it.
fn authorize_url(sign_in: &SignIn, client: &str, redirect: &str) -> url::Url {
    let mut authorize = url::Url::parse(&format!("{}/authorize", sign_in.base)).expect("a URL");
    authorize
        .query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", client)
        .append_pair("redirect_uri", redirect)
        .append_pair("code_challenge", &challenge_of(VERIFIER))
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", "from-the-browser")
        .append_pair("resource", &sign_in.resource());
    authorize
}

#[tokio::test]
async fn a_person_signs_in_on_the_page_in_chromium_with_script_turned_off() {
    let demo = DemoStack::start().await;
    let (redirect, callback) = callback_page().await;
    let sign_in = SignIn::new(demo.mcp_url.trim_end_matches("/mcp"), &demo.mcp_pin);
    let client = sign_in.register(&redirect).await;
    let authorize = authorize_url(&sign_in, &client, &redirect);

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

    browser
        .type_into("#credential", &demo.key(&demo.member_key_file))
        .await;
    browser.click("button.yes").await;
    browser.find("button[value=allow]").await;
    let second = browser.source().await;
    assert!(second.contains("household member's key"), "{second}");

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

/// What the browser laid out, measured by the driver (the page itself runs no script): where the
/// page's main button ends and how wide the page is against the window, with nothing scrolled;
/// and, on the allow page, what it says the key can change and read.
const LAID_OUT: &str = "
    const button = document.querySelector('button[value=allow]') || document.querySelector('button.yes');
    const heading = document.querySelector('h2');
    const reads = document.querySelector('details');
    return {
        button_bottom: button.getBoundingClientRect().bottom,
        inner_height: window.innerHeight,
        inner_width: window.innerWidth,
        page_width: document.documentElement.scrollWidth,
        scrolled: window.scrollY,
        changes_heading: heading ? heading.textContent : null,
        changes_top: heading ? heading.getBoundingClientRect().top : null,
        changes: Array.from(document.querySelectorAll('ul.changes li')).map(item => ({
            title: item.querySelector('.act').textContent,
            said: item.querySelector('.small').textContent,
        })),
        agreed: document.querySelector('.agreed') ? document.querySelector('.agreed').textContent : null,
        reads_top: reads ? reads.getBoundingClientRect().top : null,
        reads_summary: reads ? reads.querySelector('summary').textContent : null,
        reads_listed: reads ? reads.querySelectorAll('li').length : 0,
        reads_open: reads ? reads.open : null,
    };";

/// The page's button is on the first screen and the page is no wider than the window.
fn fits(laid_out: &serde_json::Value, what: &str) {
    let number = |name: &str| {
        laid_out[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name}: {laid_out}"))
    };
    assert!(
        number("inner_width") <= 390.0 && number("inner_height") <= 844.0,
        "measured on a phone's screen: {laid_out}"
    );
    assert_eq!(number("scrolled"), 0.0, "{what}: {laid_out}");
    assert!(
        number("button_bottom") <= number("inner_height"),
        "{what}: the button is on the first screen: {laid_out}"
    );
    assert!(
        number("page_width") <= number("inner_width"),
        "{what}: nothing to scroll sideways: {laid_out}"
    );
}

/// Issue 28: on a phone's screen (390 × 844, as Chromium's own phone emulation gives it)
/// every demo key's allow page has Allow on the first screen and nothing to scroll sideways; what
/// the key can change comes first, each action with what it disturbs and how the person's yes is
/// had (the default consent mode, `offer`); what it can read is one folded line. Each claim is
/// held against the tools the real server lists for the same key. F13-R3, F13-R8.
#[tokio::test]
async fn on_a_phones_screen_every_demo_keys_allow_is_on_the_first_screen_and_changes_come_first() {
    let demo = DemoStack::start().await;
    let (redirect, callback) = callback_page().await;
    let sign_in = SignIn::new(demo.mcp_url.trim_end_matches("/mcp"), &demo.mcp_pin);
    let client = sign_in.register(&redirect).await;
    let browser = Browser::phone(&spki_pin(&demo), 390, 844).await;
    let screenshots = target_dir().join("screenshots");
    std::fs::create_dir_all(&screenshots).expect("a folder for screenshots");

    for (kind, key_file) in [
        ("act", &demo.act_key_file),
        ("read", &demo.read_key_file),
        ("member", &demo.member_key_file),
    ] {
        browser
            .go_to(authorize_url(&sign_in, &client, &redirect).as_str())
            .await;
        browser.find("#credential").await;
        fits(&browser.measure(LAID_OUT).await, "the key's page");
        if kind == "act" {
            std::fs::write(
                screenshots.join("sign-in-key.png"),
                browser.screenshot().await,
            )
            .expect("kept");
        }
        browser.type_into("#credential", &demo.key(key_file)).await;
        browser.click("button.yes").await;
        browser.find("button[value=allow]").await;
        let laid_out = browser.measure(LAID_OUT).await;
        // The act key's is docs/sign-in-allow.png; the others are kept beside it to look at.
        let shot = match kind {
            "act" => "sign-in-allow.png".to_owned(),
            _ => format!("sign-in-allow-{kind}.png"),
        };
        std::fs::write(screenshots.join(shot), browser.screenshot().await).expect("kept");
        fits(&laid_out, kind);

        // What the real server offers the same key.
        let server = mcp::connected(&demo, key_file).await;
        let tools = server.client.list_all_tools().await.expect("tools/list");
        server.client.cancel().await.expect("the session ends");
        let reads = tools
            .iter()
            .filter(|tool| tool.name.starts_with("read_"))
            .count();
        let mut acts: Vec<String> = tools
            .iter()
            .filter(|tool| {
                tool.annotations
                    .as_ref()
                    .is_some_and(|annotations| annotations.read_only_hint == Some(false))
            })
            .map(|tool| tool.title.clone().expect("a title"))
            .collect();
        let mut changes: Vec<String> = laid_out["changes"]
            .as_array()
            .expect("a list")
            .iter()
            .map(|change| change["title"].as_str().expect("a title").to_owned())
            .collect();
        acts.sort();
        changes.sort();
        assert_eq!(
            changes, acts,
            "{kind}: what it can change, and nothing else"
        );
        assert_eq!(laid_out["reads_listed"], reads, "{kind}: {laid_out}");
        let summary = laid_out["reads_summary"].as_str().expect("a summary");
        assert!(
            summary.contains(&format!(" {reads} things")),
            "{kind}: {summary}"
        );
        assert_eq!(laid_out["reads_open"], false, "folded: {laid_out}");
        let heading = laid_out["changes_heading"].as_str().expect("a heading");
        assert!(
            laid_out["changes_top"].as_f64() < laid_out["reads_top"].as_f64(),
            "what it can change comes before what it can read: {laid_out}"
        );
        match kind {
            "act" => {
                assert_eq!(heading, "It can change", "{laid_out}");
                assert!(acts.len() >= 4, "{acts:?}");
                for change in laid_out["changes"].as_array().expect("a list") {
                    let said = change["said"].as_str().expect("words");
                    assert!(said.contains("interrupt"), "what it disturbs: {change}");
                }
                let agreed = laid_out["agreed"].as_str().expect("how it is agreed");
                assert!(
                    agreed.contains("All but “Run the doctor” are rehearsed first")
                        && agreed.contains("asks you before each")
                        && agreed.contains("if it cannot ask you, or you do not answer, the rehearsal stands for your yes")
                        && agreed.contains("“Run the doctor” runs only on your yes, or on the assistant's call where it cannot ask"),
                    "how each is agreed to, under the default consent mode: {agreed}"
                );
                assert!(summary.starts_with("It can read "), "{summary}");
            }
            "read" => {
                assert_eq!(heading, "It can change nothing on the stack.", "{laid_out}");
                assert!(summary.starts_with("It can read "), "{summary}");
            }
            _ => {
                assert_eq!(
                    heading, "It can change nothing: it only looks.",
                    "{laid_out}"
                );
                assert!(
                    summary.starts_with("It can see "),
                    "in the household's words: {summary}"
                );
                assert!(!browser.source().await.contains("Read: "));
            }
        }
    }
    browser.stop().await;
    callback.abort();
}
