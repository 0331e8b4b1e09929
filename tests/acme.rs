//! `acme` mode end to end against a real ACME server, Debian's Pebble on loopback (F13-R12, R13;
//! issue 12): an account opened and kept, each of TLS-ALPN-01, HTTP-01 and DNS-01 answered, the
//! issued chain served to a client that trusts only Pebble's root, and a renewal forced by a short
//! lifetime with a session open across it.

#[path = "support/debian.rs"]
mod debian;
#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/pebble.rs"]
mod pebble;
#[path = "support/pki.rs"]
mod pki;

use std::time::Duration;

use demo::{DemoStack, Scratch};
use http_server::{HttpServer, fresh_dir, http_server};
use pebble::{Pebble, Ports};
use pki::{client_trusting, free_port, served_fingerprint};
use reqwest::StatusCode;
use serde_json::json;

const NAME: &str = "mcp.lemonfiber.test";

/// Waits, up to `bound`, until `ready` says so; answers whether it did.
async fn within(bound: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + bound;
    while !ready() {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    true
}

/// The HTTP mode in acme mode against `pebble`, listening where Pebble looks for TLS-ALPN-01.
async fn acme_server(
    demo: &DemoStack,
    pebble: &Pebble,
    ports: &Ports,
    state: &Scratch,
    extra: &[(&str, &str)],
) -> HttpServer {
    let listen = format!("127.0.0.1:{}", ports.tls_alpn_01);
    let roots = pebble.directory_roots.display().to_string();
    let state = state.display().to_string();
    let settings = [
        ("LEMONFIBER_TLS_MODE", "acme"),
        ("LEMONFIBER_ACME_DIRECTORY", pebble.directory.as_str()),
        ("LEMONFIBER_ACME_ROOTS", roots.as_str()),
        ("LEMONFIBER_ACME_CONTACT", "operator@lemonfiber.test"),
        ("LEMONFIBER_NAMES", NAME),
        ("LEMONFIBER_LISTEN", listen.as_str()),
        ("LEMONFIBER_STATE", state.as_str()),
        ("LEMONFIBER_LOG", "info"),
    ];
    http_server(demo, &[&settings[..], extra].concat()).await
}

fn ports() -> Ports {
    Ports {
        http_01: free_port(),
        tls_alpn_01: free_port(),
    }
}

/// Waits until the server presents a certificate that checks against `root`: its fingerprint.
async fn issued(server: &HttpServer, root: &str) -> String {
    let address = server.address();
    let mut served = Err(String::new());
    let came = within(Duration::from_secs(60), || {
        served = served_fingerprint(address, NAME, root);
        served.is_ok()
    })
    .await;
    assert!(
        came,
        "a certificate was issued: {served:?}\n{}",
        server.stderr()
    );
    served.expect("checked")
}

#[tokio::test]
async fn tls_alpn_01_issues_renews_with_a_session_open_and_keeps_the_account() {
    let demo = DemoStack::start().await;
    let ports = ports();
    // A lifetime short enough that renewal comes within the test: at a third left, 10 s in.
    let pebble = Pebble::start(&ports, 15).await;
    let root = pebble.issuing_root().await;
    let state = Scratch::at(fresh_dir("acme-alpn"));
    let server = acme_server(&demo, &pebble, &ports, &state, &[]).await;
    let stderr = server.stderr();
    assert!(
        stderr.contains("serving a stand-in of this server's own"),
        "until the first certificate, a stand-in is served and said so: {stderr}"
    );

    let first = issued(&server, &root).await;
    assert_ne!(
        first, server.pin,
        "the issued certificate replaced the stand-in"
    );
    let said = server.stderr();
    assert!(
        said.contains(&format!(
            "issued by the ACME authority at {}",
            pebble.directory
        )),
        "{said}"
    );
    assert!(said.contains("can reach this server only with a publicly trusted certificate"));

    let client = client_trusting(&root, NAME, server.address());
    let read = demo.key(&demo.read_key_file);
    let session = server.open_session_with(&client, &read).await;

    let address = server.address();
    let renewed = within(Duration::from_secs(40), || {
        served_fingerprint(address, NAME, &root).is_ok_and(|now| now != first)
    })
    .await;
    assert!(
        renewed,
        "renewed before the lifetime ran out: {}",
        server.stderr()
    );
    let listed = server
        .post_with(
            &client,
            Some(&read),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("answered");
    assert_eq!(
        listed.status(),
        StatusCode::OK,
        "the session stays open across the renewal"
    );

    // The account and the certificate are kept, for the owner alone.
    for file in [
        "acme-account.json",
        "acme-issued.json",
        "acme-certificate.pem",
    ] {
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(state.join(file))
                .expect(file)
                .permissions(),
        );
        assert_eq!(mode & 0o077, 0, "{file} is its owner's alone");
    }
    let folder = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&*state).expect("state").permissions(),
    );
    assert_eq!(folder & 0o777, 0o700);
}

#[tokio::test]
async fn http_01_is_answered_on_a_listener_open_only_while_the_order_is_pending() {
    let demo = DemoStack::start().await;
    let ports = ports();
    let pebble = Pebble::start(&ports, 3600).await;
    let root = pebble.issuing_root().await;
    let state = Scratch::at(fresh_dir("acme-http"));
    let http = format!("127.0.0.1:{}", ports.http_01);
    let server = acme_server(
        &demo,
        &pebble,
        &ports,
        &state,
        &[("LEMONFIBER_ACME_HTTP", &http)],
    )
    .await;
    issued(&server, &root).await;
    let closed = within(Duration::from_secs(10), || {
        std::net::TcpStream::connect(&http).is_err()
    })
    .await;
    assert!(
        closed,
        "the HTTP-01 listener is closed once the order is settled"
    );

    // A restart serves the kept certificate at once, without a stand-in or a new order.
    drop(server);
    let again = acme_server(
        &demo,
        &pebble,
        &ports,
        &state,
        &[("LEMONFIBER_ACME_HTTP", &http)],
    )
    .await;
    assert_eq!(
        served_fingerprint(again.address(), NAME, &root),
        Ok(again.pin.clone())
    );
    let logged = within(Duration::from_secs(10), || {
        again.stderr().contains("mode=\"acme\"")
    })
    .await;
    assert!(logged, "{}", again.stderr());
    assert!(
        !again.stderr().contains("serving a stand-in"),
        "{}",
        again.stderr()
    );
}

#[tokio::test]
async fn dns_01_is_answered_through_the_operators_hook() {
    let demo = DemoStack::start().await;
    let ports = ports();
    let pebble = Pebble::start(&ports, 3600).await;
    let root = pebble.issuing_root().await;
    let state = Scratch::at(fresh_dir("acme-dns"));
    let (hook, calls) = pebble.dns_hook();
    let hook = hook.display().to_string();
    let server = acme_server(
        &demo,
        &pebble,
        &ports,
        &state,
        &[("LEMONFIBER_ACME_DNS_HOOK", &hook)],
    )
    .await;
    issued(&server, &root).await;
    let record = format!("_acme-challenge.{NAME}");
    let cleared = within(Duration::from_secs(10), || {
        pebble::read(&calls).contains(&format!("clear {record}"))
    })
    .await;
    assert!(
        cleared,
        "the record is cleared after: {}",
        pebble::read(&calls)
    );
    assert!(pebble::read(&calls).starts_with(&format!("set {record}\n")));
}

#[tokio::test]
async fn a_failed_renewal_keeps_the_working_certificate_in_service() {
    let demo = DemoStack::start().await;
    let ports = ports();
    let mut pebble = Pebble::start(&ports, 15).await;
    let root = pebble.issuing_root().await;
    let state = Scratch::at(fresh_dir("acme-down"));
    let server = acme_server(&demo, &pebble, &ports, &state, &[]).await;
    let working = issued(&server, &root).await;

    pebble.stop_authority();
    let tried = within(Duration::from_secs(40), || {
        server
            .stderr()
            .contains("no certificate from the ACME authority this time; the one in service stays")
    })
    .await;
    assert!(
        tried,
        "the renewal was tried and failed: {}",
        server.stderr()
    );
    assert_eq!(
        served_fingerprint(server.address(), NAME, &root),
        Ok(working)
    );
}

/// An authority that refuses every new account with `429` and `Retry-After: 42`, as a public
/// one does under its rate limits: only the directory and nonces are answered besides.
async fn busy_authority(
    authority: &pki::TestAuthority,
) -> (String, axum_server::Handle<std::net::SocketAddr>) {
    use axum::routing::{get, post};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let leaf = authority.leaf(&["127.0.0.1"], Duration::from_secs(3600));
    let tls = axum_server::tls_rustls::RustlsConfig::from_pem(
        leaf.chain_pem.into_bytes(),
        leaf.key_pem.into_bytes(),
    )
    .await
    .expect("TLS");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("non-blocking");
    let base = format!("https://{}", listener.local_addr().expect("address"));
    let directory = json!({
        "newNonce": format!("{base}/nonce"), "newAccount": format!("{base}/account"),
        "newOrder": format!("{base}/order"), "revokeCert": format!("{base}/revoke"),
        "keyChange": format!("{base}/key-change"),
    });
    let nonce = || async {
        (
            [("replay-nonce", "a-nonce"), ("cache-control", "no-store")],
            "",
        )
    };
    let refused = || async {
        (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "42"), ("content-type", "application/problem+json"), ("replay-nonce", "a-nonce")],
            json!({"type": "urn:ietf:params:acme:error:rateLimited", "detail": "too many new accounts"}).to_string(),
        )
    };
    let router = axum::Router::new()
        .route("/dir", get(move || async move { axum::Json(directory) }))
        .route("/nonce", get(nonce).head(nonce))
        .route("/account", post(refused));
    let handle = axum_server::Handle::new();
    let server = axum_server::from_tcp_rustls(listener, tls)
        .expect("TLS")
        .handle(handle.clone());
    tokio::spawn(server.serve(router.into_make_service()));
    (format!("{base}/dir"), handle)
}

#[tokio::test]
async fn an_authority_that_asks_to_wait_is_waited_for() {
    let demo = DemoStack::start().await;
    let folder = Scratch::at(fresh_dir("acme-busy"));
    std::fs::create_dir_all(&*folder).expect("folder");
    let authority = pki::TestAuthority::new("busy authority root");
    let roots = folder.join("roots.pem");
    authority.write(&roots);
    let (directory, busy) = busy_authority(&authority).await;
    let roots = roots.display().to_string();
    let state = folder.join("state").display().to_string();
    let server = http_server(
        &demo,
        &[
            ("LEMONFIBER_TLS_MODE", "acme"),
            ("LEMONFIBER_ACME_DIRECTORY", &directory),
            ("LEMONFIBER_ACME_ROOTS", &roots),
            ("LEMONFIBER_NAMES", NAME),
            ("LEMONFIBER_STATE", &state),
            ("LEMONFIBER_LOG", "info"),
        ],
    )
    .await;
    let waits = within(Duration::from_secs(20), || {
        server.stderr().contains("next_try_in_seconds=")
    })
    .await;
    let said = server.stderr();
    assert!(waits, "{said}");
    assert!(
        said.contains("too many new accounts"),
        "the authority's reason is logged: {said}"
    );
    assert!(
        said.contains("next_try_in_seconds=41") || said.contains("next_try_in_seconds=42"),
        "{said}"
    );
    busy.shutdown();
}
