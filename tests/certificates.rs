//! The certificate the HTTP mode serves (F13-R12, R13; issue 12), in the modes that need no
//! authority: its own, pinned by its clients and replaced by `lemonfiber-mcp certificate rotate`
//! while it runs; the operator's files; and leaves of a private root. Every client here checks
//! the chain (a pin, or chosen roots), never with an insecure flag. ACME is in tests/acme.rs.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/pki.rs"]
mod pki;
#[path = "support/python.rs"]
mod python;

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
    let spki = said
        .lines()
        .find_map(|line| line.strip_prefix("New public key pin (SPKI SHA-256, base64): "))
        .expect("the new public key pin is printed");
    assert_ne!(spki, server.said["spki_sha256"], "a new key, so a new pin");
    assert!(said.contains(
        "Every client that pins the old fingerprint or public key must be given the new one"
    ));

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

/// What a command on this machine (curl, openssl) did, given `stdin`; it stops by itself.
async fn ran(program: &str, args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    use tokio::io::AsyncWriteExt as _;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|error| panic!("{program} runs: {error}"));
    let mut input = child.stdin.take().expect("stdin");
    if let Some(bytes) = stdin {
        input.write_all(bytes).await.expect("written");
    }
    drop(input);
    tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("it stops by itself")
        .expect("it ran")
}

/// What `curl` answers for `url` with `options`: its exit code and the HTTP status it got.
async fn curl(url: &str, options: &[&str]) -> (Option<i32>, String) {
    let args = [
        &["--silent", "--show-error", "--max-time", "20"][..],
        options,
        &["--output", "/dev/null", "--write-out", "%{http_code}", url],
    ]
    .concat();
    let done = ran("curl", &args, None).await;
    (
        done.status.code(),
        String::from_utf8(done.stdout).expect("text"),
    )
}

/// The public key pin of the certificate in `pem`, as openssl works it out: the recipe in
/// docs/certificates.md, so it checks the server's sum and the docs at once.
async fn spki_by_openssl(pem: &[u8]) -> String {
    let key = ran("openssl", &["x509", "-pubkey", "-noout"], Some(pem)).await;
    assert!(key.status.success(), "{key:?}");
    let der = ran(
        "openssl",
        &["pkey", "-pubin", "-outform", "der"],
        Some(&key.stdout),
    )
    .await;
    assert!(der.status.success(), "{der:?}");
    let digest = ran(
        "openssl",
        &["dgst", "-sha256", "-binary"],
        Some(&der.stdout),
    )
    .await;
    let base64 = ran("openssl", &["base64", "-A"], Some(&digest.stdout)).await;
    String::from_utf8(base64.stdout)
        .expect("text")
        .trim()
        .to_owned()
}

/// The SHA-256 fingerprint of the certificate in `pem` as openssl shows it (pairs and colons).
async fn fingerprint_by_openssl(pem: &[u8]) -> String {
    let shown = ran(
        "openssl",
        &["x509", "-noout", "-fingerprint", "-sha256"],
        Some(pem),
    )
    .await;
    assert!(shown.status.success(), "{shown:?}");
    let shown = String::from_utf8(shown.stdout).expect("text");
    shown
        .trim()
        .split_once('=')
        .map(|(_, pairs)| pairs.to_owned())
        .expect("`sha256 Fingerprint=…`")
}

/// Issue 28, F13-R13: the public key pin printed in `--json` is the one curl's `--pinnedpubkey`
/// takes; curl given it connects (alone, or with the certificate file as its CA), and curl given
/// another is refused before anything is sent.
#[tokio::test]
async fn curl_pins_the_printed_public_key_and_refuses_another() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let spki = server.said["spki_sha256"]
        .as_str()
        .expect("spki_sha256")
        .to_owned();
    assert_eq!(server.said["root_fingerprint"], json!(null));
    let certificate_file = server.said["certificate_file"]
        .as_str()
        .expect("certificate_file")
        .to_owned();
    let pem = std::fs::read(&certificate_file).expect("the certificate file");
    assert_eq!(
        spki_by_openssl(&pem).await,
        spki,
        "openssl works out the same pin"
    );

    let health = server.url.replace("/mcp", "/health");
    let pinned = format!("sha256//{spki}");
    // With the pin alone, curl checks the key and nothing else (the certificate is the server's
    // own, which no authority vouches for): `--insecure` lifts the authority check, not the pin.
    assert_eq!(
        curl(&health, &["--insecure", "--pinnedpubkey", &pinned]).await,
        (Some(0), "200".to_owned())
    );
    assert_eq!(
        curl(
            &health,
            &["--cacert", &certificate_file, "--pinnedpubkey", &pinned]
        )
        .await,
        (Some(0), "200".to_owned())
    );

    // Another key's pin is refused: curl's "public key does not match", before any request.
    let demo_pin = format!("sha256//{}", demo.mcp_spki_sha256);
    for wrong in [demo_pin.clone(), format!("sha256//{}=", "A".repeat(43))] {
        assert_ne!(wrong, pinned);
        let (code, status) = curl(&health, &["--insecure", "--pinnedpubkey", &wrong]).await;
        assert_eq!(code, Some(90), "curl's pinned-key mismatch, for {wrong}");
        assert_eq!(status, "000", "nothing was answered");
    }
    // The demo's `mcp_spki_sha256` is its own MCP server's, as curl finds it.
    let demo_health = demo.mcp_url.replace("/mcp", "/health");
    assert_eq!(
        curl(&demo_health, &["--insecure", "--pinnedpubkey", &demo_pin]).await,
        (Some(0), "200".to_owned())
    );
}

/// Issue 28, F13-R12: in private-ca mode a person is told the root's fingerprint first, in the
/// form openssl and browsers show; a new device fetches `/root.pem` (with curl's `--insecure`,
/// since it does not trust the root yet), checks it against that fingerprint with openssl, and
/// once it trusts the file, connects with no warning to click through.
#[tokio::test]
async fn private_ca_prints_the_root_first_and_a_device_checks_it_before_trusting_it() {
    use tokio::io::AsyncBufReadExt as _;
    let demo = DemoStack::start().await;
    let state = Scratch::at(fresh_dir("private-ca-stdout"));
    let audit = Scratch::at(fresh_dir("private-ca-stdout-audit"));
    std::fs::create_dir_all(&*audit).expect("a folder for the audit");
    let mut server = tokio::process::Command::new(BINARY)
        .args(["http", "--listen", "127.0.0.1:0"])
        .env_clear()
        .env("LEMONFIBER_ADDRESS", &demo.address)
        .env("LEMONFIBER_PIN", &demo.pin)
        .env("LEMONFIBER_STATE", &*state)
        .env("LEMONFIBER_AUDIT", audit.join("audit"))
        .env("LEMONFIBER_TLS_MODE", "private-ca")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the HTTP mode starts");
    let mut lines = tokio::io::BufReader::new(server.stdout.take().expect("stdout")).lines();
    let mut said = Vec::new();
    while !said
        .iter()
        .any(|line: &String| line.starts_with("Serving MCP at "))
        && said.len() < 20
    {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("it says what it serves in time")
            .expect("stdout reads")
            .expect("a line");
        said.push(line);
    }
    let root = said[0]
        .strip_prefix("Private root fingerprint (SHA-256): ")
        .unwrap_or_else(|| panic!("the root comes first: {said:?}"))
        .to_owned();
    let url = said
        .iter()
        .find_map(|line| line.strip_prefix("Serving MCP at "))
        .expect("the URL")
        .to_owned();

    let fetched = state.join("fetched-root.pem");
    let fetched_text = fetched.display().to_string();
    let root_url = url.replace("/mcp", "/root.pem");
    let got = ran(
        "curl",
        &[
            "--silent",
            "--show-error",
            "--max-time",
            "20",
            "--insecure",
            "--output",
            &fetched_text,
            &root_url,
        ],
        None,
    )
    .await;
    assert!(got.status.success(), "{got:?}");
    let pem = std::fs::read(&fetched).expect("fetched");
    assert_eq!(
        fingerprint_by_openssl(&pem).await,
        root,
        "the device sees the printed fingerprint"
    );
    assert_eq!(
        pem,
        std::fs::read(state.join("private-ca-root.pem")).expect("kept"),
        "the root served is the one in the state folder"
    );

    // Trusted, the root checks the server: no warning, no `--insecure`.
    let health = url.replace("/mcp", "/health");
    assert_eq!(
        curl(&health, &["--cacert", &fetched_text]).await,
        (Some(0), "200".to_owned())
    );
    // And an untrusted one is a warning curl will not click through.
    let (refused, _) = curl(&health, &[]).await;
    assert_eq!(
        refused,
        Some(60),
        "curl cannot check the server without the root"
    );
    demo::stop_gracefully(&mut server);
}

/// What `lemonfiber-mcp certificate rotate` does with `settings` (and nothing else set).
async fn rotate_with(settings: &[(&str, &std::ffi::OsStr)]) -> std::process::Output {
    tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new(BINARY)
            .args(["certificate", "rotate"])
            .env_clear()
            .envs(settings.iter().copied())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("it stops by itself")
    .expect("it runs")
}

/// The files in `folder` and what each holds, to show that nothing changed.
fn contents(folder: &std::path::Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(folder)
        .expect("the folder")
        .map(|entry| {
            let entry = entry.expect("an entry");
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            (entry.file_name(), bytes)
        })
        .collect();
    files.sort();
    files
}

/// Issue 28: `certificate rotate` makes a certificate only where a pinned server serves one.
/// Anywhere else it would print a fingerprint nothing serves; it refuses (exit 2, the settings'),
/// naming why, and leaves the folder as it was, or not there.
#[tokio::test]
async fn certificate_rotate_refuses_where_no_pinned_server_serves_naming_why() {
    let base = Scratch::at(fresh_dir("rotate-refused"));
    let refused = |done: &std::process::Output, why: &str| {
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(2), "{stderr}");
        assert!(done.stdout.is_empty(), "no fingerprint is printed");
        assert!(stderr.contains(why), "names why ({why}): {stderr}");
        assert!(stderr.contains("certificate rotate"), "{stderr}");
    };

    // The wrong folder, which does not exist: not made.
    let missing = base.join("not-a-state");
    let done = rotate_with(&[("LEMONFIBER_STATE", missing.as_os_str())]).await;
    refused(
        &done,
        &format!("found no state folder at {}", missing.display()),
    );
    assert!(!missing.exists(), "no folder is made");

    // With no LEMONFIBER_STATE, the per-user folder a server uses by default, never one under
    // the current folder; not made either.
    let home = base.join("home");
    std::fs::create_dir_all(&home).expect("a home");
    let done = rotate_with(&[("HOME", home.as_os_str())]).await;
    let default = home.join(".local/state/lemonfiber-mcp/http");
    refused(
        &done,
        &format!("found no state folder at {}", default.display()),
    );
    let xdg = base.join("xdg-state");
    let done = rotate_with(&[
        ("HOME", home.as_os_str()),
        ("XDG_STATE_HOME", xdg.as_os_str()),
    ])
    .await;
    refused(
        &done,
        &format!(
            "found no state folder at {}",
            xdg.join("lemonfiber-mcp/http").display()
        ),
    );
    assert!(
        !home.join(".local").exists() && !xdg.exists(),
        "nothing is made"
    );

    // A folder that is there but that no pinned server serves from.
    let empty = base.join("empty");
    std::fs::create_dir_all(&empty).expect("a folder");
    let done = rotate_with(&[("LEMONFIBER_STATE", empty.as_os_str())]).await;
    refused(&done, "no server-certificate.pem in");
    assert!(contents(&empty).is_empty(), "nothing is written");

    // A private-ca server's state, as the real server leaves it.
    let demo = DemoStack::start().await;
    let private_ca = base.join("private-ca");
    let private_ca_text = private_ca.display().to_string();
    let server = http_server(
        &demo,
        &[
            ("LEMONFIBER_TLS_MODE", "private-ca"),
            ("LEMONFIBER_STATE", &private_ca_text),
        ],
    )
    .await;
    drop(server);
    let before = contents(&private_ca);
    let done = rotate_with(&[("LEMONFIBER_STATE", private_ca.as_os_str())]).await;
    refused(&done, "holds a private root (private-ca-root.pem)");
    assert_eq!(contents(&private_ca), before, "nothing is changed");
    // Told the mode, it says so first.
    let done = rotate_with(&[
        ("LEMONFIBER_STATE", private_ca.as_os_str()),
        ("LEMONFIBER_TLS_MODE", std::ffi::OsStr::new("private-ca")),
    ])
    .await;
    refused(&done, "LEMONFIBER_TLS_MODE is private-ca");

    // An ACME state: the stand-in a server serves until the authority issues (as a pinned
    // server's certificate), beside the account it opened.
    let acme = base.join("acme");
    let acme_text = acme.display().to_string();
    drop(http_server(&demo, &[("LEMONFIBER_STATE", &acme_text)]).await);
    std::fs::write(acme.join("acme-account.json"), b"{}").expect("an account");
    let before = contents(&acme);
    let done = rotate_with(&[("LEMONFIBER_STATE", acme.as_os_str())]).await;
    refused(&done, "holds an ACME account or issued certificate");
    assert_eq!(contents(&acme), before, "nothing is changed");
}

/// The first code block of `language` in docs/certificates.md, with the example's name, file and
/// pin (where it has one) swapped for the server's.
fn recipe(language: &str, url: &str, file: &str, pin: &str) -> String {
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/certificates.md"))
            .expect("the docs");
    let opening = format!("```{language}\n");
    let (_, after) = docs.split_once(&opening).expect("a recipe in the docs");
    let (code, _) = after.split_once("```").expect("the recipe ends");
    for example in [
        "https://mcp.home.arpa:9443/health",
        "server-certificate.pem",
    ] {
        assert!(code.contains(example), "the recipe names {example}");
    }
    code.replace("https://mcp.home.arpa:9443/health", url)
        .replace("server-certificate.pem", file)
        .replace(EXAMPLE_PIN, pin)
}

/// The public key pin the docs' examples show.
const EXAMPLE_PIN: &str = "wCD9yMyGDlF43jg+oYMrtnRSv6PwCGS98jm7CgmU6rw=";

/// Issue 28: the Node and Python recipes in docs/certificates.md, run as written with the real
/// `node` and the Python the interop tests use, check the served certificate: Node accepts the
/// printed public key pin and refuses another; Python trusts the certificate file.
#[tokio::test]
async fn the_node_and_python_recipes_in_the_docs_check_the_server() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let spki = server.said["spki_sha256"].as_str().expect("spki_sha256");
    let file = server.said["certificate_file"]
        .as_str()
        .expect("certificate_file");
    let health = server.url.replace("/mcp", "/health");
    let folder = Scratch::at(fresh_dir("recipes"));
    std::fs::create_dir_all(&*folder).expect("a folder");

    let node = |pin: &str| {
        let script = folder.join(format!("check-{}.mjs", pin.len()));
        std::fs::write(&script, recipe("js", &health, file, pin)).expect("written");
        script.display().to_string()
    };
    let accepted = ran("node", &[&node(spki)], None).await;
    assert_eq!(
        String::from_utf8_lossy(&accepted.stdout).trim(),
        "200",
        "{accepted:?}"
    );
    let wrong = format!("{}=", "A".repeat(42));
    let refused = ran("node", &[&node(&wrong)], None).await;
    assert!(refused.stdout.is_empty(), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains(&format!(
            "the server's public key pin is {spki}, not the one pinned"
        )),
        "{said}"
    );

    // The interop tests' SDK pins httpx2, the same client under the name it is installed by.
    let script = folder.join("check.py");
    let code =
        recipe("python", &health, file, spki).replace("import httpx\n", "import httpx2 as httpx\n");
    std::fs::write(&script, code).expect("written");
    let checked = ran(
        &python::python().display().to_string(),
        &[&script.display().to_string()],
        None,
    )
    .await;
    assert_eq!(
        String::from_utf8_lossy(&checked.stdout).trim(),
        "200",
        "{checked:?}"
    );
}

/// Issue 28: the example in docs/http.md runs as pasted into a shell (it once held an apostrophe
/// the shell took for a quote), reaches the program with every setting, and serves MCP on a port
/// of its own, not the stack's; given the placeholder, the program refuses the pin, naming it.
#[tokio::test]
async fn the_http_example_in_the_docs_runs_as_pasted() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/http.md"))
        .expect("the docs");
    let (_, after) = docs.split_once("```sh\n").expect("an example");
    let (example, _) = after.split_once("```").expect("the example ends");
    assert!(
        example.contains("LEMONFIBER_LISTEN=0.0.0.0:9443"),
        "{example}"
    );
    assert!(
        example.contains("LEMONFIBER_ADDRESS=https://stack.home.arpa:8443"),
        "{example}"
    );
    let home = Scratch::at(fresh_dir("http-example-home"));
    let binaries = std::path::Path::new(BINARY).parent().expect("a folder");
    let ran = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new("sh")
            .args(["-c", example])
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", binaries.display()))
            .env("HOME", &*home)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("it stops by itself")
    .expect("sh runs");
    let said = String::from_utf8_lossy(&ran.stderr);
    assert_eq!(ran.status.code(), Some(2), "{said}");
    assert!(
        said.starts_with("lemonfiber-mcp: LEMONFIBER_PIN is not a pin"),
        "{said}"
    );
    assert!(
        !home.exists(),
        "nothing is made before the settings are right"
    );
}
