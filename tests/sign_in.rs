//! Signing in as a provider-hosted assistant does (MCP authorization, OAuth 2.1), against the
//! real binary and the demo stack: discovery, the page, codes and tokens, and each refusal. The
//! Python SDK's own OAuth client goes through it in tests/interop.rs, and a real browser in
//! tests/sign_in_browser.rs. F13-R8.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/hostile.rs"]
mod hostile;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/pki.rs"]
mod pki;
#[path = "support/sign_in.rs"]
mod sign_in;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use demo::{DemoStack, Scratch};
use hostile::{BREAKING_CLAIM, HostileStack};
use http_server::{HttpServer, fresh_dir, http_server};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sign_in::{REDIRECT, SignIn, VERIFIER, parameter};

fn signing_in(demo: &DemoStack) -> SignIn {
    SignIn::new(demo.mcp_url.trim_end_matches("/mcp"), &demo.mcp_pin)
}

fn server_signing_in(server: &HttpServer) -> SignIn {
    SignIn::new(server.url.trim_end_matches("/mcp"), &server.pin)
}

#[tokio::test]
async fn a_request_without_a_token_is_told_where_to_sign_in_and_discovery_names_every_endpoint() {
    let demo = DemoStack::start().await;
    let sign_in = signing_in(&demo);
    let base = sign_in.base.clone();
    let (status, challenge, _) = sign_in.initialize_with(None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge.as_deref(),
        Some(
            format!(
                "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", scope=\"lemonfiber\""
            )
            .as_str()
        )
    );
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let metadata: Value = sign_in
            .http
            .get(format!("{base}{path}"))
            .send()
            .await
            .expect("answered")
            .json()
            .await
            .expect("JSON");
        assert_eq!(metadata["resource"], format!("{base}/mcp"));
        assert_eq!(metadata["authorization_servers"], json!([base]));
    }
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let answer = sign_in
            .http
            .get(format!("{base}{path}"))
            .send()
            .await
            .expect("answered");
        assert_eq!(answer.headers()["access-control-allow-origin"], "*");
        let metadata: Value = answer.json().await.expect("JSON");
        assert_eq!(metadata["issuer"], base);
        assert_eq!(
            metadata["authorization_endpoint"],
            format!("{base}/authorize")
        );
        assert_eq!(metadata["token_endpoint"], format!("{base}/token"));
        assert_eq!(
            metadata["registration_endpoint"],
            format!("{base}/register")
        );
        assert_eq!(
            metadata["code_challenge_methods_supported"],
            json!(["S256"])
        );
        assert_eq!(
            metadata["grant_types_supported"],
            json!(["authorization_code", "refresh_token"])
        );
        assert_eq!(
            metadata["token_endpoint_auth_methods_supported"],
            json!(["none"])
        );
        assert_eq!(metadata["client_id_metadata_document_supported"], true);
    }
}

#[tokio::test]
async fn a_code_is_exchanged_once_within_its_minute_with_its_verifier_redirect_and_client_only() {
    let demo = DemoStack::start().await;
    let sign_in = signing_in(&demo);
    let key = demo.key(&demo.read_key_file);
    let (client, code) = sign_in.code_for(&key).await;
    let exchange = |verifier: &'static str, redirect: &'static str, client: String| {
        let sign_in = &sign_in;
        let code = code.clone();
        async move {
            sign_in
                .token(&[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", redirect),
                    ("code_verifier", verifier),
                    ("client_id", &client),
                ])
                .await
        }
    };
    let wrong_verifier = exchange(
        "another-verifier-of-forty-three-or-more-characters-012",
        REDIRECT,
        client.clone(),
    )
    .await;
    assert_eq!(wrong_verifier.0, StatusCode::BAD_REQUEST);
    assert_eq!(wrong_verifier.1["error"], "invalid_grant");
    let wrong_redirect = exchange(VERIFIER, "http://127.0.0.1:9/elsewhere", client.clone()).await;
    assert_eq!(wrong_redirect.1["error"], "invalid_grant");
    let other_client = sign_in.register(REDIRECT).await;
    assert_eq!(
        exchange(VERIFIER, REDIRECT, other_client).await.1["error"],
        "invalid_grant"
    );

    let (status, tokens) = sign_in.exchange(&client, &code).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    let access = tokens["access_token"].as_str().expect("an access token");
    assert!(!access.contains(&key) && !tokens.to_string().contains(&key[4..]));
    let (status, _, _) = sign_in.initialize_with(Some(access)).await;
    assert_eq!(status, StatusCode::OK, "the access token carries the key");

    let reused = sign_in.exchange(&client, &code).await;
    assert_eq!(reused.0, StatusCode::BAD_REQUEST);
    assert_eq!(reused.1["error"], "invalid_grant");
    assert!(
        reused.1["error_description"]
            .as_str()
            .unwrap_or_default()
            .contains("used already")
    );
}

/// A token sealed as this server seals them, with the secret in its state folder: for a token
/// whose expiry the test chooses.
fn sealed_access_token(state: &std::path::Path, grant: &Value) -> String {
    use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};
    let secret = std::fs::read(state.join("seal-secret")).expect("the server's secret");
    let key = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &secret).expect("a key"));
    let nonce = [3u8; 12];
    let mut text = serde_json::to_vec(grant).expect("JSON");
    key.seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::from(b"lemonfiber-mcp access token 1"),
        &mut text,
    )
    .expect("sealed");
    let mut sealed = nonce.to_vec();
    sealed.append(&mut text);
    format!(
        "lfmcp-at1.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sealed)
    )
}

#[tokio::test]
async fn a_token_is_taken_only_for_this_mcp_url_unexpired_unchanged_and_raw_keys_only_when_allowed()
{
    let demo = DemoStack::start().await;
    let state = Scratch::at(fresh_dir("sign-in-state"));
    let state_setting = state.display().to_string();
    let server = http_server(
        &demo,
        &[
            ("LEMONFIBER_RAW_KEYS", "false"),
            ("LEMONFIBER_STATE", &state_setting),
        ],
    )
    .await;
    let sign_in = server_signing_in(&server);
    let key = demo.key(&demo.act_key_file);
    let (client, code) = sign_in.code_for(&key).await;
    let (_, tokens) = sign_in.exchange(&client, &code).await;
    let access = tokens["access_token"].as_str().expect("a token").to_owned();
    let refresh = tokens["refresh_token"]
        .as_str()
        .expect("a refresh token")
        .to_owned();
    assert_eq!(
        sign_in.initialize_with(Some(&access)).await.0,
        StatusCode::OK
    );

    let refused = |answer: (StatusCode, Option<String>, Value), why: &str| {
        assert_eq!(answer.0, StatusCode::UNAUTHORIZED, "{why}: {}", answer.2);
        let challenge = answer.1.unwrap_or_default();
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{why}: {challenge}"
        );
        assert!(
            challenge.contains("resource_metadata=\""),
            "{why}: {challenge}"
        );
        assert!(!answer.2.to_string().contains(&key[4..]), "{why}");
        answer.2["error_description"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let said = refused(
        sign_in.initialize_with(Some(&key)).await,
        "a raw key, with LEMONFIBER_RAW_KEYS=false",
    );
    assert!(said.contains("only the access tokens"), "{said}");

    // The same server, reached by another of its names, is another resource.
    let address = server.address();
    let elsewhere = SignIn::reaching(
        &format!("https://localhost:{}", address.port()),
        &server.pin,
        Some(("localhost", address)),
    );
    let said = refused(
        elsewhere.initialize_with(Some(&access)).await,
        "a token for another resource",
    );
    assert!(said.contains("another resource"), "{said}");

    let mut tampered = access.clone().into_bytes();
    let last = tampered.len() - 2;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("text");
    refused(
        sign_in.initialize_with(Some(&tampered)).await,
        "a changed token",
    );
    refused(
        sign_in.initialize_with(Some(&refresh)).await,
        "a refresh token in place of an access token",
    );
    let expired = sealed_access_token(
        &state,
        &json!({"k": key, "c": client, "a": sign_in.resource(), "x": 1_000_000_000u64}),
    );
    let said = refused(
        sign_in.initialize_with(Some(&expired)).await,
        "an expired token",
    );
    assert!(said.contains("expired"), "{said}");
    let fresh = sealed_access_token(
        &state,
        &json!({"k": key, "c": client, "a": sign_in.resource(), "x": 4_000_000_000u64}),
    );
    assert_eq!(
        sign_in.initialize_with(Some(&fresh)).await.0,
        StatusCode::OK,
        "the same token unexpired is taken: the expiry alone was refused"
    );

    let other_resource = sign_in
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client),
            ("resource", "https://elsewhere.example/mcp"),
        ])
        .await;
    assert_eq!(other_resource.1["error"], "invalid_target");
    drop(server);
}

#[tokio::test]
async fn a_form_posted_from_another_site_without_this_browsers_cookie_or_twice_is_refused() {
    let demo = DemoStack::start().await;
    let sign_in = signing_in(&demo);
    let key = demo.key(&demo.read_key_file);
    let client = sign_in.register(REDIRECT).await;
    let first = sign_in.open_for(&client, REDIRECT).await;
    assert_eq!(first.status, StatusCode::OK);
    let cookie = first.cookie.clone().expect("a binding cookie");
    assert!(cookie.starts_with("__Host-lfmcp-sign-in="));
    let form = first.form();
    let fields = [("form", form.as_str()), ("credential", key.as_str())];

    let cross_site = sign_in
        .post_from(Some(&cookie), &fields, Some("https://evil.example"))
        .await;
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
    assert!(
        cross_site
            .text()
            .await
            .expect("page")
            .contains("sent from another site")
    );
    let no_cookie = sign_in.post(None, &fields).await;
    assert_eq!(no_cookie.status(), StatusCode::FORBIDDEN);
    let other_cookie = sign_in
        .post(Some("__Host-lfmcp-sign-in=someone-elses"), &fields)
        .await;
    assert_eq!(other_cookie.status(), StatusCode::FORBIDDEN);
    assert!(
        other_cookie
            .text()
            .await
            .expect("page")
            .contains("not one this server gave this browser")
    );

    let second = sign_in.give(&first, &key).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.html);
    let replayed = sign_in.post(Some(&cookie), &fields).await;
    assert_eq!(replayed.status(), StatusCode::FORBIDDEN);
    assert!(
        replayed
            .text()
            .await
            .expect("page")
            .contains("sent already")
    );

    let denied = sign_in
        .post(
            Some(&cookie),
            &[("form", &second.form()), ("decision", "deny")],
        )
        .await;
    assert_eq!(denied.status(), StatusCode::SEE_OTHER);
    let back =
        url::Url::parse(denied.headers()["location"].to_str().expect("text")).expect("a URL");
    assert_eq!(parameter(&back, "error").as_deref(), Some("access_denied"));
    assert_eq!(parameter(&back, "state").as_deref(), Some("s1"));
    assert_eq!(parameter(&back, "code"), None);
}

#[tokio::test]
async fn the_page_says_in_plain_words_what_is_wrong_and_sends_nothing_to_an_unregistered_redirect()
{
    let demo = DemoStack::start().await;
    let sign_in = signing_in(&demo);
    let client = sign_in.register(REDIRECT).await;

    let elsewhere = sign_in
        .open_for(&client, "https://attacker.example/cb")
        .await;
    assert_eq!(elsewhere.status, StatusCode::BAD_REQUEST);
    assert!(elsewhere.html.contains("did not register"));
    let made_up = sign_in.open_for("lfmcp-client1.AAAA", REDIRECT).await;
    assert!(made_up.html.contains("not one this server knows"));
    let plain = sign_in
        .open(&[
            ("response_type", "code"),
            ("client_id", &client),
            ("redirect_uri", REDIRECT),
            ("state", "s1"),
        ])
        .await;
    assert_eq!(
        plain.status,
        StatusCode::BAD_REQUEST,
        "no PKCE: said on the page, and nothing sent on"
    );
    assert!(plain.html.contains("no PKCE S256 challenge"));

    let said = |shown: &sign_in::Shown| {
        assert_eq!(shown.status, StatusCode::OK, "asked again");
        assert!(shown.html.contains("name=\"credential\""), "asked again");
        shown.html.clone()
    };
    let first = sign_in.open_for(&client, REDIRECT).await;
    let not_a_key = sign_in.give(&first, "hunter2").await;
    let page = said(&not_a_key);
    assert!(page.contains("neither an integration key") && !page.contains("hunter2"));
    let unknown = sign_in
        .give(&not_a_key, "lfk_00000000000000000000000000000000")
        .await;
    assert!(said(&unknown).contains("The stack refused this key"));
    let link = demo.link("read");
    let other_stack = link.replace(&demo.pin, &"ab".repeat(32));
    let page = said(&sign_in.give(&unknown, &other_stack).await);
    assert!(page.contains("for another stack"), "{page}");

    let first = sign_in.open_for(&client, REDIRECT).await;
    let claimed = sign_in.give(&first, &link).await;
    assert!(
        claimed.html.contains("This is a read key"),
        "{}",
        claimed.html
    );
    let again = sign_in.open_for(&client, REDIRECT).await;
    let page = said(&sign_in.give(&again, &link).await);
    assert!(page.contains("used already"), "{page}");
    assert!(!page.contains(link.split("claim=").nth(1).expect("a claim")));

    // A link for this stack is used at the stack this server serves, never at the address the
    // link names (which is the giver's to choose).
    let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    elsewhere.set_nonblocking(true).expect("nonblocking");
    let stack_at = demo.address.trim_start_matches("https://").to_owned();
    let member = demo.link("member").replace(
        &stack_at,
        &elsewhere.local_addr().expect("address").to_string(),
    );
    assert_ne!(member, demo.link("member"));
    let first = sign_in.open_for(&client, REDIRECT).await;
    let claimed = sign_in.give(&first, &member).await;
    assert!(
        claimed.html.contains("household member's key"),
        "{}",
        claimed.html
    );
    assert!(
        elsewhere.accept().is_err(),
        "nothing connected to the link's address"
    );

    // A link traded for a key the stack then turns away for a moment: the key is kept for this
    // sign-in, since the link cannot be used again.
    demo.control("throttle?seconds=5").await;
    let first = sign_in.open_for(&client, REDIRECT).await;
    let held = sign_in.give(&first, &demo.link("act")).await;
    assert!(held.html.contains("turning requests away"), "{}", held.html);
    assert!(
        held.html.contains("kept for this sign-in") && !held.html.contains("name=\"credential\"")
    );
    let checked = sign_in.give(&held, "").await;
    assert!(
        checked.html.contains("This is an act key"),
        "{}",
        checked.html
    );

    let nowhere = HttpServer::start(
        &format!("https://127.0.0.1:{}", pki::free_port()),
        &demo.pin,
        &[],
    )
    .await;
    let far = server_signing_in(&nowhere);
    let client = far.register(REDIRECT).await;
    let first = far.open_for(&client, REDIRECT).await;
    let page = said(&far.give(&first, &demo.key(&demo.read_key_file)).await);
    assert!(page.contains("could not be reached"), "{page}");
    drop(nowhere);
}

/// An HTTPS server for one client metadata document, counting the requests it gets.
struct DocumentServer {
    address: std::net::SocketAddr,
    asked: Arc<AtomicUsize>,
    roots: Scratch,
    handle: axum_server::Handle<std::net::SocketAddr>,
}

impl DocumentServer {
    async fn serve(document: impl Fn(&str) -> String + Send + Sync + 'static) -> DocumentServer {
        let authority = pki::TestAuthority::new("client documents root");
        let leaf = authority.leaf(&["127.0.0.1"], Duration::from_secs(3600));
        let roots = Scratch::at(fresh_dir("document-roots"));
        std::fs::create_dir_all(&*roots).expect("a folder");
        authority.write(&roots.join("roots.pem"));
        let (chain, key) = (roots.join("chain.pem"), roots.join("key.pem"));
        leaf.write(&chain, &key);
        let _ = rustls::crypto::ring::default_provider().install_default();
        let tls = axum_server::tls_rustls::RustlsConfig::from_pem_file(&chain, &key)
            .await
            .expect("TLS");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let address = listener.local_addr().expect("address");
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = asked.clone();
        let url = format!("https://{address}/client.json");
        let body = document(&url);
        let router = axum::Router::new().route(
            "/client.json",
            axum::routing::get(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                let body = body.clone();
                async move { ([("content-type", "application/json")], body) }
            }),
        );
        let handle = axum_server::Handle::new();
        let serving = axum_server::from_tcp_rustls(listener, tls)
            .expect("served")
            .handle(handle.clone());
        tokio::spawn(serving.serve(router.into_make_service()));
        DocumentServer {
            address,
            asked,
            roots,
            handle,
        }
    }

    fn url(&self) -> String {
        format!("https://{}/client.json", self.address)
    }
}

impl Drop for DocumentServer {
    fn drop(&mut self) {
        self.handle.shutdown();
    }
}

#[tokio::test]
async fn client_metadata_documents_on_a_private_address_or_too_large_are_refused_and_a_good_one_signs_in()
 {
    let demo = DemoStack::start().await;
    let good = DocumentServer::serve(|url| {
        json!({"client_id": url, "client_name": "Document assistant", "redirect_uris": [REDIRECT]})
            .to_string()
    })
    .await;

    // By default, this machine is a private address: nothing is fetched.
    let sign_in = signing_in(&demo);
    let page = sign_in.open_for(&good.url(), REDIRECT).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.html.contains("private network"), "{}", page.html);
    assert_eq!(
        good.asked.load(Ordering::SeqCst),
        0,
        "nothing was sent to it"
    );

    let roots = good.roots.join("roots.pem").display().to_string();
    let server = http_server(
        &demo,
        &[
            ("LEMONFIBER_PRIVATE_CLIENT_DOCUMENTS", "true"),
            ("LEMONFIBER_CLIENT_DOCUMENT_ROOTS", &roots),
        ],
    )
    .await;
    let sign_in = server_signing_in(&server);
    let first = sign_in.open_for(&good.url(), REDIRECT).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.html);
    assert!(
        first.html.contains("“Document assistant”")
            && first.html.contains("described by 127.0.0.1")
    );
    let second = sign_in.give(&first, &demo.key(&demo.read_key_file)).await;
    let back = sign_in.allow(&second).await;
    let code = parameter(&back, "code").expect("a code");
    let (status, tokens) = sign_in.exchange(&good.url(), &code).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");

    let large = DocumentServer::serve(|url| {
        json!({"client_id": url, "redirect_uris": [REDIRECT], "padding": "x".repeat(6 * 1024)})
            .to_string()
    })
    .await;
    let large_roots = large.roots.join("roots.pem").display().to_string();
    let trusting_large = http_server(
        &demo,
        &[
            ("LEMONFIBER_PRIVATE_CLIENT_DOCUMENTS", "true"),
            ("LEMONFIBER_CLIENT_DOCUMENT_ROOTS", &large_roots),
        ],
    )
    .await;
    let page = server_signing_in(&trusting_large)
        .open_for(&large.url(), REDIRECT)
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.html.contains("larger than 5 KiB"), "{}", page.html);
    let not_its_own = sign_in.open_for(&large.url(), REDIRECT).await;
    assert!(
        not_its_own.html.contains("could not be fetched"),
        "a server whose certificate the roots do not cover is not read: {}",
        not_its_own.html
    );
    drop(server);
    drop(trusting_large);
}

#[tokio::test]
async fn a_refresh_token_is_used_once_and_a_key_the_stack_refuses_ends_the_grant() {
    let demo = DemoStack::start().await;
    let sign_in = signing_in(&demo);
    let (client, code) = sign_in.code_for(&demo.key(&demo.member_key_file)).await;
    let (_, tokens) = sign_in.exchange(&client, &code).await;
    let refresh = |token: String| {
        let sign_in = &sign_in;
        let client = client.clone();
        async move {
            sign_in
                .token(&[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &token),
                    ("client_id", &client),
                ])
                .await
        }
    };
    let first = tokens["refresh_token"]
        .as_str()
        .expect("a refresh token")
        .to_owned();
    let (status, renewed) = refresh(first.clone()).await;
    assert_eq!(status, StatusCode::OK, "{renewed}");
    assert_ne!(
        renewed["refresh_token"], tokens["refresh_token"],
        "it rotates"
    );
    assert_eq!(refresh(first).await.1["error"], "invalid_grant");
    demo.control("revoke/member").await;
    let (status, ended) = refresh(renewed["refresh_token"].as_str().expect("one").to_owned()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(ended["error"], "invalid_grant");
    assert!(
        ended["error_description"]
            .as_str()
            .unwrap_or_default()
            .contains("refused the key")
    );
}

/// Issue 27, item 6: what the page shows is where the browser goes. A redirect URI holding what a
/// URL parser drops (tabs, line breaks, spaces at its ends) or a reader cannot see (bidirectional
/// controls, zero-width characters) is refused at registration and in a client metadata document,
/// saying why; one in look-alike letters is shown as the browser reaches it (`xn--…`), and one the
/// parser reads otherwise than it looks is shown as it is read.
#[tokio::test]
async fn a_redirect_that_could_show_another_place_is_refused_and_the_page_shows_where_the_browser_goes()
 {
    let demo = DemoStack::start().await;
    let sign_in = signing_in(&demo);
    let hidden = [
        "https://good.example\t/cb",
        "https://good.example/cb\r\n",
        " https://good.example/cb",
        "https://evil.example/\u{202e}bc/elpmaxe.doog",
        "https://good.example\u{200b}.evil.example/cb",
    ];
    for uri in hidden {
        let answer = sign_in
            .http
            .post(format!("{}/register", sign_in.base))
            .json(&json!({"client_name": "Test assistant", "redirect_uris": [uri]}))
            .send()
            .await
            .expect("answered");
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{uri:?}");
        let said: Value = answer.json().await.expect("JSON");
        assert_eq!(said["error"], "invalid_redirect_uri", "{uri:?}");
        let why = said["error_description"].as_str().expect("a description");
        assert!(
            why.contains("invisible, bidirectional") && why.contains("another place"),
            "{why}"
        );
    }

    for (registered, shown, host) in [
        (
            "https://\u{0430}pple.example/cb",
            "https://xn--pple-43d.example/cb",
            "xn--pple-43d.example",
        ),
        (
            "https://evil.example\\.good.example/cb",
            "https://evil.example/.good.example/cb",
            "evil.example",
        ),
    ] {
        let client = sign_in.register(registered).await;
        let first = sign_in.open_for(&client, registered).await;
        assert_eq!(first.status, StatusCode::OK, "{}", first.html);
        let shown_as = format!("you go back to: {shown}</p>");
        assert!(first.html.contains(&shown_as), "{}", first.html);
        assert!(!first.html.contains(registered), "{}", first.html);
        let second = sign_in.give(&first, &demo.key(&demo.read_key_file)).await;
        assert!(second.html.contains(&shown_as), "{}", second.html);
        let back = sign_in.allow(&second).await;
        assert_eq!(back.host_str(), Some(host));
        assert!(back.as_str().starts_with(&format!("{shown}?")), "{back}");
    }

    let bidi = DocumentServer::serve(|url| {
        json!({"client_id": url, "client_name": "Document assistant",
               "redirect_uris": ["https://evil.example/\u{202e}bc/elpmaxe.doog"]})
        .to_string()
    })
    .await;
    let roots = bidi.roots.join("roots.pem").display().to_string();
    let server = http_server(
        &demo,
        &[
            ("LEMONFIBER_PRIVATE_CLIENT_DOCUMENTS", "true"),
            ("LEMONFIBER_CLIENT_DOCUMENT_ROOTS", &roots),
        ],
    )
    .await;
    let page = server_signing_in(&server)
        .open_for(&bidi.url(), "https://evil.example/\u{202e}bc/elpmaxe.doog")
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.html);
    assert!(
        page.html.contains("redirect URIs are not usable")
            && page.html.contains("invisible, bidirectional"),
        "{}",
        page.html
    );
    drop(server);
}

/// Issue 27, item 5: a key link the stack was sent but gave no key back for may have been used
/// up, and the page says so rather than that it was not used.
#[tokio::test]
async fn a_key_link_the_stack_was_sent_but_gave_no_key_back_for_is_said_to_be_perhaps_used_up() {
    let stack = HostileStack::start().await;
    let server = HttpServer::start(&stack.address, &stack.pin, &[]).await;
    let sign_in = server_signing_in(&server);
    let client = sign_in.register(REDIRECT).await;
    let first = sign_in.open_for(&client, REDIRECT).await;
    let page = sign_in.give(&first, &stack.link(BREAKING_CLAIM)).await;
    assert!(
        page.html.contains("no key came back") && page.html.contains("may have used it up"),
        "{}",
        page.html
    );
    assert!(!page.html.contains("it was not used"), "{}", page.html);
    drop(server);
}
