//! Issue 31: `lemonfiber-mcp http` behind real reverse proxies, each run from its recipe in
//! docs/http.md: Debian's Caddy (its own internal authority on the public side) and Debian's
//! nginx, each forwarding over TLS to the server and checking its certificate (F13-R8). The
//! official Python SDK signs in through Caddy with OAuth from the public URL alone and calls
//! tools; behind either proxy, clients are limited by their own forwarded addresses, which the
//! audit line names; a forged `X-Forwarded-For` sent straight to the server is ignored.

#[path = "support/debian.rs"]
mod debian;
#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/pki.rs"]
mod pki;
#[path = "support/proxy.rs"]
mod proxy;
#[path = "support/python.rs"]
mod python;

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use demo::{DemoStack, Scratch};
use http_server::{HttpServer, call, fresh_dir, initialize};
use https::ACCEPT;
use pki::free_port;
use proxy::{Placing, Proxy};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Requests a minute each client address may make, in the tests of limits.
const LIMITED: (&str, &str) = ("LEMONFIBER_PEER_RATE", "10");

/// The server as it runs behind a proxy on this machine: listening on loopback, told the public
/// URL and that the proxy at 127.0.0.1 is trusted, with its audit lines in a file.
struct Behind {
    demo: DemoStack,
    server: HttpServer,
    listen: SocketAddr,
    /// The port the proxy is to serve the public URL at.
    public_port: u16,
    audit: PathBuf,
    _folder: Scratch,
}

impl Behind {
    /// The server, with `extra` settings besides.
    async fn start(extra: &[(&str, &str)]) -> Behind {
        let public_port = free_port();
        let demo = DemoStack::start().await;
        let folder = Scratch::at(fresh_dir("behind"));
        std::fs::create_dir_all(&*folder).expect("a folder for the audit");
        let audit = folder.join("audit");
        let listen = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let public_url = format!("https://{}:{public_port}/mcp", proxy::PUBLIC_NAME);
        let (listening, audited) = (listen.to_string(), audit.display().to_string());
        let mut settings = vec![
            ("LEMONFIBER_LISTEN", listening.as_str()),
            ("LEMONFIBER_PUBLIC_URL", &public_url),
            ("LEMONFIBER_TRUSTED_PROXIES", "127.0.0.1"),
            ("LEMONFIBER_AUDIT", &audited),
            ("LEMONFIBER_LOG", "info"),
        ];
        settings.extend_from_slice(extra);
        let server = HttpServer::start(&demo.address, &demo.pin, &settings).await;
        assert_eq!(
            server.url, public_url,
            "the URL it prints is the public one"
        );
        Behind {
            demo,
            server,
            listen,
            public_port,
            audit,
            _folder: folder,
        }
    }

    /// Where the proxy in front of this server is to serve, and what it checks the server
    /// against (`certificate`).
    fn placing<'a>(&self, certificate: &'a Path) -> Placing<'a> {
        Placing {
            public_port: self.public_port,
            upstream: self.listen,
            server_certificate: certificate,
        }
    }

    /// The certificate file the proxy checks the server against.
    fn certificate(&self) -> PathBuf {
        let file = self.server.said["certificate_file"].as_str();
        PathBuf::from(file.expect("the certificate file"))
    }

    /// F13-R13: the start-up line says that clients check the proxy's certificate, and what the
    /// proxy checks this server's against.
    async fn says_the_proxy_checks(&self) {
        let (public, certificate) = (&self.server.url, self.certificate());
        let said = format!("Clients reach this server through your proxy or tunnel at {public}");
        let told = format!("give it {} to trust", certificate.display());
        let stderr = || self.server.stderr();
        let both = || stderr().contains(&said) && stderr().contains(&told);
        assert!(demo::eventually(both).await, "{}", stderr());
    }

    /// The URL a client on this machine reaches the server at without the proxy.
    fn direct_url(&self) -> String {
        format!("https://{}/mcp", self.listen)
    }

    /// The client addresses the audit lines of tool calls name.
    fn audited_clients(&self) -> Vec<String> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|line| line["audit"] == "tool")
            .filter_map(|line| line["client"].as_str().map(str::to_owned))
            .collect()
    }
}

/// A POST to `url` with no key, as `client` sends it, with `forwarded` as its own
/// `X-Forwarded-For` if given: its status.
async fn keyless_status(client: &reqwest::Client, url: &str, forwarded: Option<&str>) -> u16 {
    let mut request = client
        .post(url)
        .header("accept", ACCEPT)
        .header("content-type", "application/json")
        .body(initialize().to_string());
    if let Some(forwarded) = forwarded {
        request = request.header("x-forwarded-for", forwarded);
    }
    request.send().await.expect("answered").status().as_u16()
}

/// Opens a session with `key` at `url` and calls `read_status` in it, every request carrying
/// `forwarded` as its own `X-Forwarded-For` if given: the call's status.
async fn read_status(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    forwarded: Option<&str>,
) -> StatusCode {
    let send = |body: Value, session: Option<&str>| {
        let mut request = client
            .post(url)
            .bearer_auth(key)
            .header("accept", ACCEPT)
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(forwarded) = forwarded {
            request = request.header("x-forwarded-for", forwarded);
        }
        request.send()
    };
    let opened = send(initialize(), None).await.expect("initialize");
    assert_eq!(opened.status(), StatusCode::OK);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .expect("a session")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let told = send(initialized, Some(&session))
        .await
        .expect("initialized");
    assert_eq!(told.status(), StatusCode::ACCEPTED);
    let called = send(call(2, "read_status", json!({})), Some(&session))
        .await
        .expect("called");
    let status = called.status();
    let body = called.text().await.expect("the answer");
    assert!(body.contains("[lemonfiber stack data "), "{body}");
    status
}

fn at(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

/// Behind `proxy`: each client address has its own allowance, at `/mcp` and at sign-in, the
/// proxy's own header is the one believed (a client cannot borrow another's address through it),
/// a header sent straight to the server is ignored, and each tool call's audit line names the
/// client it came from.
async fn each_client_is_counted_by_its_own_address(behind: &Behind, proxy: &Proxy) {
    let peer_rate: usize = LIMITED.1.parse().expect("a number");
    let through = proxy.url();
    let first = proxy.client_from(at(2));
    for sent in 1..=peer_rate {
        assert_eq!(
            keyless_status(&first, &through, None).await,
            401,
            "request {sent}"
        );
    }
    assert_eq!(
        keyless_status(&first, &through, None).await,
        429,
        "127.0.0.2 has made its {peer_rate} requests this minute"
    );
    let key = behind.demo.key(&behind.demo.act_key_file);
    let second = proxy.client_from(at(3));
    assert_eq!(
        read_status(&second, &through, &key, None).await,
        StatusCode::OK,
        "127.0.0.3, through the same proxy, has an allowance of its own"
    );
    let borrowing = proxy.client_from(at(5));
    assert_eq!(
        keyless_status(&borrowing, &through, Some("127.0.0.2")).await,
        401,
        "a client cannot name another's address through the proxy"
    );

    // Sign-in's own requests count against the forwarded client too.
    let metadata = through.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    let discovered = |client: reqwest::Client| {
        let metadata = metadata.clone();
        async move {
            let answer = client.get(&metadata).send().await.expect("answered");
            answer.status().as_u16()
        }
    };
    let signing_in = proxy.client_from(at(7));
    for sent in 1..=peer_rate {
        assert_eq!(discovered(signing_in.clone()).await, 200, "request {sent}");
    }
    assert_eq!(
        discovered(signing_in).await,
        429,
        "127.0.0.7 is over its allowance"
    );
    assert_eq!(
        discovered(proxy.client_from(at(8))).await,
        200,
        "127.0.0.8 signs in on an allowance of its own"
    );

    let direct = behind.direct_url();
    let forger = behind.server.client_from(at(4));
    for sent in 1..=peer_rate {
        let forged = format!("10.9.9.{sent}");
        let status = keyless_status(&forger, &direct, Some(&forged)).await;
        assert_eq!(status, 401, "request {sent}");
    }
    assert_eq!(
        keyless_status(&forger, &direct, Some("10.9.9.200")).await,
        429,
        "every forged address was counted as 127.0.0.4, the peer that sent it"
    );
    let straight = behind.server.client_from(at(6));
    assert_eq!(
        read_status(&straight, &direct, &key, Some("127.0.0.9")).await,
        StatusCode::OK
    );
    let audited = behind.audited_clients();
    assert!(
        audited.iter().any(|client| client == "127.0.0.3"),
        "{audited:?}"
    );
    assert!(
        audited.iter().any(|client| client == "127.0.0.6"),
        "{audited:?}"
    );
    assert!(
        !audited.iter().any(|client| client == "127.0.0.9"),
        "a forged address is never recorded: {audited:?}"
    );
}

#[tokio::test]
async fn through_caddy_a_hosted_assistant_signs_in_from_the_public_url_and_calls_tools() {
    let behind = Behind::start(&[]).await;
    let certificate = behind.certificate();
    let caddy = Proxy::caddy(&behind.placing(&certificate)).await;
    let public = caddy.url();
    let origin = public.trim_end_matches("/mcp").to_owned();
    let client = caddy.client_from(at(1));
    let challenged = client
        .post(&public)
        .header("accept", ACCEPT)
        .header("content-type", "application/json")
        .body(initialize().to_string())
        .send()
        .await
        .expect("answered");
    assert_eq!(challenged.status(), StatusCode::UNAUTHORIZED);
    let challenge = challenged.headers()["www-authenticate"]
        .to_str()
        .expect("text");
    assert!(
        challenge.contains(&format!(
            "resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\""
        )),
        "{challenge}"
    );
    let resource: Value = client
        .get(format!("{origin}/.well-known/oauth-protected-resource/mcp"))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("JSON");
    assert_eq!(resource["resource"], public.as_str());
    assert_eq!(resource["authorization_servers"], json!([origin]));

    let folder = Scratch::at(fresh_dir("caddy-credential"));
    std::fs::create_dir_all(&*folder).expect("a folder for the credential");
    let credential = folder.join("credential");
    let key = behind.demo.key(&behind.demo.act_key_file);
    std::fs::write(&credential, &key).expect("the credential is written");
    let seen = python::python_script(
        "oauth_client.py",
        &[
            "--url",
            &public,
            "--trust",
            &caddy.root_file.display().to_string(),
            "--credential-file",
            &credential.display().to_string(),
        ],
    )
    .await;
    assert_eq!(seen["person"]["first_page"]["status"], 200, "{seen}");
    assert_eq!(
        seen["person"]["second_page"]["buttons"],
        json!(["allow", "deny"])
    );
    python::assert_listed_and_read(&seen, 49);
    assert_eq!(seen["after_refresh"]["is_error"], false, "{seen}");
    assert!(
        !seen.to_string().contains(&key),
        "the provider never holds the key"
    );
    let audited = behind.audited_clients();
    assert!(
        audited.len() >= 2 && audited.iter().all(|client| client == "127.0.0.1"),
        "each of the assistant's calls names where it came from (the SDK connects from 127.0.0.1, the \
         proxy's own address, so this shows the field, not the reading): {audited:?}"
    );
}

#[tokio::test]
async fn behind_caddy_each_client_is_limited_by_its_forwarded_address_and_a_forged_one_is_not() {
    let behind = Behind::start(&[LIMITED]).await;
    let certificate = behind.certificate();
    assert!(certificate.ends_with("server-certificate.pem"), "pinned");
    behind.says_the_proxy_checks().await;
    let caddy = Proxy::caddy(&behind.placing(&certificate)).await;
    each_client_is_counted_by_its_own_address(&behind, &caddy).await;
}

#[tokio::test]
async fn behind_nginx_each_client_is_limited_by_its_forwarded_address_and_a_forged_one_is_not() {
    let private_root = ("LEMONFIBER_TLS_MODE", "private-ca");
    let behind = Behind::start(&[LIMITED, private_root]).await;
    let certificate = behind.certificate();
    assert!(
        certificate.ends_with("private-ca-root.pem"),
        "nginx trusts the server's private root: {certificate:?}"
    );
    behind.says_the_proxy_checks().await;
    let nginx = Proxy::nginx(&behind.placing(&certificate)).await;
    each_client_is_counted_by_its_own_address(&behind, &nginx).await;
}

/// A proxy setting the server cannot honour safely stops it at once, saying which and why, before
/// anything is written: trusting every address would let any client name itself, and a public URL
/// off `/mcp` would hand out URLs nothing serves.
#[test]
fn a_proxy_setting_it_cannot_honour_stops_the_server_before_anything_is_written() {
    let folder = Scratch::at(fresh_dir("refused-proxy-settings"));
    let state = folder.join("state");
    for (setting, value, said) in [
        (
            "LEMONFIBER_TRUSTED_PROXIES",
            "10.0.0.0/8,::/0",
            "lists \"::/0\", wider than a /8",
        ),
        (
            "LEMONFIBER_TRUSTED_PROXIES",
            "10.0.0/8",
            "lists \"10.0.0/8\", which is not an IP",
        ),
        (
            "LEMONFIBER_PUBLIC_URL",
            "https://mcp.example.net/lemonfiber",
            "its path must be /mcp",
        ),
        (
            "LEMONFIBER_PUBLIC_URL",
            "http://mcp.example.net/mcp",
            "it is not https",
        ),
        (
            "LEMONFIBER_FORWARDED_HEADER",
            "forwarded",
            "LEMONFIBER_TRUSTED_PROXIES is not",
        ),
    ] {
        let output = std::process::Command::new(demo::BINARY)
            .args(["http", "--listen", "127.0.0.1:0"])
            .env_clear()
            .env("LEMONFIBER_ADDRESS", "https://127.0.0.1:9")
            .env("LEMONFIBER_PIN", "ab".repeat(32))
            .env("LEMONFIBER_STATE", &state)
            .env(setting, value)
            .output()
            .expect("it runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{setting}={value}: {stderr}");
        assert!(
            stderr.contains(setting) && stderr.contains(said),
            "{stderr}"
        );
        assert!(!state.exists(), "nothing is written for {setting}={value}");
    }
}
