//! The certificate the HTTP mode serves (F13-R12, R13; issue 12), in the modes that need no
//! authority: its own, pinned by its clients and replaced by `lemonfiber-mcp certificate rotate`
//! while it runs; the operator's files; and leaves of a private root. Every client here checks
//! the chain (a pin, or chosen roots), never with an insecure flag. ACME is in tests/acme.rs.

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
#[path = "support/pki.rs"]
mod pki;

use std::time::Duration;

use demo::{BINARY, DemoStack, Scratch, eventually};
use http_server::{HttpServer, fresh_dir, http_server};
use https::pinned_client;
use pki::{TestAuthority, client_trusting, served_fingerprint};
use reqwest::StatusCode;
use rustls::client::danger::ServerCertVerifier as _;
use rustls::pki_types::pem::PemObject;
use serde_json::json;

const DAY: Duration = Duration::from_secs(24 * 3600);

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
    let server = http_server(
        &demo,
        &[
            ("LEMONFIBER_STATE", &state_text),
            ("LEMONFIBER_LOG", "info"),
        ],
    )
    .await;
    assert_eq!(health(&server.url, &server.pin).await, Ok(StatusCode::OK));
    says_who_can_check(&server, "Only a client that pins that fingerprint").await;

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

/// F13-R13: the start-up line names who can check the certificate, and that a hosted assistant
/// needs a publicly trusted one.
async fn says_who_can_check(server: &HttpServer, who: &str) {
    let said = eventually(|| server.stderr().contains(who)).await;
    let stderr = server.stderr();
    assert!(said, "the start-up line names who can check: {stderr}");
    assert!(stderr.contains("can reach this server only with a publicly trusted certificate"));
}

/// A tools/list on `session`, over `client`'s connection: the status.
async fn list_tools(
    server: &HttpServer,
    client: &reqwest::Client,
    key: &str,
    session: &str,
) -> StatusCode {
    server
        .post_with(
            client,
            Some(key),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .header("mcp-session-id", session)
        .send()
        .await
        .expect("answered")
        .status()
}

#[tokio::test]
async fn the_operators_files_are_served_and_replaced_while_a_session_stays_open() {
    let demo = DemoStack::start().await;
    let folder = Scratch::at(fresh_dir("files"));
    std::fs::create_dir_all(&*folder).expect("folder");
    let authority = TestAuthority::new("household test root");
    let (chain, key) = (folder.join("chain.pem"), folder.join("key.pem"));
    authority
        .leaf(&["localhost", "127.0.0.1"], DAY)
        .write(&chain, &key);
    let (chain_text, key_text) = (chain.display().to_string(), key.display().to_string());
    let server = http_server(
        &demo,
        &[
            ("LEMONFIBER_TLS_MODE", "files"),
            ("LEMONFIBER_TLS_CERTIFICATE", &chain_text),
            ("LEMONFIBER_TLS_PRIVATE_KEY", &key_text),
            ("LEMONFIBER_NAMES", "localhost,127.0.0.1"),
            ("LEMONFIBER_LOG", "info"),
        ],
    )
    .await;
    says_who_can_check(&server, &format!("serves the certificate in {chain_text}")).await;
    let address = server.address();
    let first =
        served_fingerprint(address, "localhost", &authority.pem).expect("served, and checked");
    assert_eq!(first, server.pin);

    let client = client_trusting(&authority.pem, "localhost", address);
    let read = demo.key(&demo.read_key_file);
    let session = server.open_session_with(&client, &read).await;

    authority
        .leaf(&["localhost", "127.0.0.1"], DAY)
        .write(&chain, &key);
    let replaced = eventually(|| {
        served_fingerprint(address, "localhost", &authority.pem).is_ok_and(|now| now != first)
    })
    .await;
    assert!(
        replaced,
        "the replaced files are served on the next connection"
    );
    assert_eq!(
        list_tools(&server, &client, &read, &session).await,
        StatusCode::OK,
        "the session opened before keeps working"
    );

    // A key that does not match, put in place while serving, is never served: the one in
    // service stays, and the problem is logged.
    let serving = served_fingerprint(address, "localhost", &authority.pem).expect("served");
    std::fs::write(&key, authority.leaf(&["localhost"], DAY).key_pem).expect("a foreign key");
    let logged = eventually(|| server.stderr().contains("does not match the certificate")).await;
    assert!(logged, "the problem is logged: {}", server.stderr());
    assert_eq!(
        served_fingerprint(address, "localhost", &authority.pem),
        Ok(serving)
    );
}

/// What `lemonfiber-mcp http` says when it refuses to start with these settings.
async fn refused_to_start(settings: &[(&str, &str)]) -> String {
    let state = Scratch::at(fresh_dir("refused"));
    let ran = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new(BINARY)
            .args(["http", "--listen", "127.0.0.1:0"])
            .env_clear()
            .env("LEMONFIBER_ADDRESS", "https://127.0.0.1:9")
            .env("LEMONFIBER_PIN", "0f".repeat(32))
            .env("LEMONFIBER_STATE", &*state)
            .envs(settings.iter().copied())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("it stops by itself")
    .expect("it runs");
    assert!(!ran.status.success(), "it refused to start");
    assert!(ran.stdout.is_empty(), "nothing is said to be served");
    String::from_utf8(ran.stderr).expect("text")
}

#[tokio::test]
async fn files_that_cannot_be_served_refuse_to_start_naming_why() {
    let folder = Scratch::at(fresh_dir("bad-files"));
    std::fs::create_dir_all(&*folder).expect("folder");
    let authority = TestAuthority::new("household test root");
    let (chain, key) = (folder.join("chain.pem"), folder.join("key.pem"));
    let (chain_text, key_text) = (chain.display().to_string(), key.display().to_string());
    let files = [
        ("LEMONFIBER_TLS_MODE", "files"),
        ("LEMONFIBER_TLS_CERTIFICATE", chain_text.as_str()),
        ("LEMONFIBER_TLS_PRIVATE_KEY", key_text.as_str()),
    ];

    authority.leaf(&["localhost"], DAY).write(&chain, &key);
    std::fs::write(&key, authority.leaf(&["localhost"], DAY).key_pem).expect("another key");
    let said = refused_to_start(&[&files[..], &[("LEMONFIBER_NAMES", "localhost")]].concat()).await;
    assert!(
        said.contains(&format!(
            "the private key in {key_text} does not match the certificate"
        )),
        "{said}"
    );

    authority.leaf(&["localhost"], DAY).write(&chain, &key);
    let said = refused_to_start(
        &[
            &files[..],
            &[("LEMONFIBER_NAMES", "localhost,mcp.home.arpa")],
        ]
        .concat(),
    )
    .await;
    assert!(
        said.contains("does not cover mcp.home.arpa, which LEMONFIBER_NAMES lists"),
        "{said}"
    );

    authority.expired_leaf(&["localhost"]).write(&chain, &key);
    let said = refused_to_start(&[&files[..], &[("LEMONFIBER_NAMES", "localhost")]].concat()).await;
    assert!(
        said.contains(&format!("the certificate in {chain_text} expired at")),
        "{said}"
    );
}

#[tokio::test]
async fn a_client_trusting_only_the_private_root_connects_f13_r12() {
    let demo = DemoStack::start().await;
    let state = Scratch::at(fresh_dir("private-ca"));
    let state_text = state.display().to_string();
    let server = http_server(
        &demo,
        &[
            ("LEMONFIBER_TLS_MODE", "private-ca"),
            ("LEMONFIBER_STATE", &state_text),
            ("LEMONFIBER_LOG", "info"),
        ],
    )
    .await;
    says_who_can_check(
        &server,
        "Only devices that have installed that root can check it",
    )
    .await;
    assert!(
        server.stderr().contains("root_fingerprint="),
        "the start-up log gives the root's fingerprint"
    );

    // The root is served without a key, and is the one written to the state folder.
    let root = pinned_client(&server.pin)
        .get(server.url.replace("/mcp", "/root.pem"))
        .send()
        .await
        .expect("answered");
    assert_eq!(root.status(), StatusCode::OK);
    let root = root.text().await.expect("PEM");
    assert_eq!(
        root,
        std::fs::read_to_string(state.join("private-ca-root.pem")).expect("kept")
    );

    let address = server.address();
    assert_eq!(
        served_fingerprint(address, "localhost", &root),
        Ok(server.pin.clone())
    );
    let client = client_trusting(&root, "localhost", address);
    let read = demo.key(&demo.read_key_file);
    let session = server.open_session_with(&client, &read).await;
    assert_eq!(
        list_tools(&server, &client, &read, &session).await,
        StatusCode::OK
    );
    let stranger = TestAuthority::new("someone else's root");
    assert!(
        served_fingerprint(address, "localhost", &stranger.pem).is_err(),
        "a client that trusts another root cannot check it"
    );

    // The root is name-constrained: even its own key certifies no other name a client accepts.
    let root_key = std::fs::read_to_string(state.join("private-ca-root-key.pem")).expect("kept");
    let issuer =
        rcgen::Issuer::from_ca_cert_pem(&root, rcgen::KeyPair::from_pem(&root_key).expect("key"))
            .expect("the root");
    let verifier = {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(rustls::pki_types::CertificateDer::from_pem_slice(root.as_bytes()).expect("root"))
            .expect("added");
        rustls::client::WebPkiServerVerifier::builder_with_provider(
            std::sync::Arc::new(roots),
            std::sync::Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .expect("a verifier")
    };
    let checked = |name: &str| {
        let key = rcgen::KeyPair::generate().expect("key");
        let leaf = rcgen::CertificateParams::new(vec![name.to_owned()])
            .expect("name")
            .signed_by(&key, &issuer)
            .expect("signed");
        verifier.verify_server_cert(
            leaf.der(),
            &[],
            &rustls::pki_types::ServerName::try_from(name.to_owned()).expect("a name"),
            &[],
            rustls::pki_types::UnixTime::now(),
        )
    };
    assert!(checked("localhost").is_ok(), "a served name checks");
    let outside = checked("bank.example").expect_err("outside the constraint");
    assert!(
        format!("{outside:?}").contains("NameConstraint"),
        "{outside:?}"
    );
}

/// Issue 27: a private root's key that others can read is not used; the server refuses to start,
/// naming the file and `chmod 600`, as it does for the sealing secret.
#[tokio::test]
async fn a_private_root_key_others_can_read_refuses_to_start_naming_the_mend() {
    use std::os::unix::fs::PermissionsExt as _;
    let demo = DemoStack::start().await;
    let state = Scratch::at(fresh_dir("private-ca-open"));
    let state_text = state.display().to_string();
    let mode = [
        ("LEMONFIBER_TLS_MODE", "private-ca"),
        ("LEMONFIBER_STATE", state_text.as_str()),
    ];
    let first = http_server(&demo, &mode).await;
    drop(first);
    let key = state.join("private-ca-root-key.pem");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let said = refused_to_start(&mode).await;
    assert!(
        said.contains(&format!("chmod 600 {}", key.display())),
        "{said}"
    );
    assert!(said.contains("mode 0644"), "{said}");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    // Made its owner's alone, the key is used: the server starts and serves.
    let again = http_server(&demo, &mode).await;
    assert_eq!(
        health(&again.url, &again.pin).await,
        Ok(StatusCode::OK),
        "{}",
        again.stderr()
    );
}
