//! The real `lemonfiber-mcp http --json`, run as a child process for a test, and a client that
//! pins its certificate.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::demo::{BINARY, DemoStack, collected, stop_gracefully};
use super::https::{ACCEPT, pinned_client, pinned_tls};

pub struct HttpServer {
    child: Child,
    pub url: String,
    pub pin: String,
    /// The JSON line it printed once listening, whole.
    pub said: Value,
    pub client: reqwest::Client,
    stderr: Arc<Mutex<String>>,
    /// The state folder and audit file made for this server alone, removed when it stops.
    made: Vec<PathBuf>,
}

/// `lemonfiber-mcp http --json` against the demo stack, with these settings besides.
pub async fn http_server(demo: &DemoStack, settings: &[(&str, &str)]) -> HttpServer {
    HttpServer::start(&demo.address, &demo.pin, settings).await
}

pub fn fresh_dir(what: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::env::temp_dir().join(format!(
        "lemonfiber-http-test-{what}-{}-{n}",
        std::process::id()
    ))
}

pub fn initialize() -> Value {
    initialize_asking("2025-11-25")
}

/// An `initialize` request asking for `version`.
pub fn initialize_asking(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}})
}

/// A `tools/call` request.
pub fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

impl HttpServer {
    /// `lemonfiber-mcp http --json` against the stack at `address`, with these settings besides.
    pub async fn start(address: &str, pin: &str, settings: &[(&str, &str)]) -> HttpServer {
        Self::start_binary(Path::new(BINARY), address, pin, settings).await
    }

    /// The same, run from another build of the binary (the benchmark's `READ_PATH_BINARY`).
    pub async fn start_binary(
        binary: &Path,
        address: &str,
        pin: &str,
        settings: &[(&str, &str)],
    ) -> HttpServer {
        let mut command = Command::new(binary);
        command.args(["http", "--json"]);
        if !settings
            .iter()
            .any(|(name, _)| *name == "LEMONFIBER_LISTEN")
        {
            command.args(["--listen", "127.0.0.1:0"]);
        }
        command
            .env_clear()
            .env("LEMONFIBER_ADDRESS", address)
            .env("LEMONFIBER_PIN", pin)
            .env("LEMONFIBER_LOG", "warn")
            .envs(settings.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut made = Vec::new();
        for (setting, what) in [("LEMONFIBER_STATE", "state"), ("LEMONFIBER_AUDIT", "audit")] {
            if !settings.iter().any(|(name, _)| *name == setting) {
                let path = fresh_dir(what);
                command.env(setting, &path);
                made.push(path);
            }
        }
        let mut child = command.spawn().expect("the HTTP mode starts");
        let stderr = child
            .stderr
            .take()
            .map(|pipe| collected(pipe, true))
            .unwrap_or_default();
        let stdout = child.stdout.take().expect("stdout");
        let line = tokio::time::timeout(
            Duration::from_secs(30),
            BufReader::new(stdout).lines().next_line(),
        )
        .await
        .expect("it says where it listens in time")
        .expect("stdout reads")
        .expect("one line");
        let info: Value = serde_json::from_str(&line).expect("a JSON line");
        let url = info["mcp_url"].as_str().expect("mcp_url").to_owned();
        let pin = info["mcp_pin"].as_str().expect("mcp_pin").to_owned();
        HttpServer {
            child,
            client: pinned_client(&pin),
            url,
            pin,
            said: info,
            stderr,
            made,
        }
    }

    /// What the server has written to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr buffer").clone()
    }

    /// The server's process, to measure.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("running")
    }

    /// A client that pins the server and connects from `from` (any 127.x address is this
    /// machine, so tests can be several peers).
    pub fn client_from(&self, from: IpAddr) -> reqwest::Client {
        reqwest::Client::builder()
            .tls_backend_preconfigured(pinned_tls(&self.pin))
            .local_address(from)
            .no_proxy()
            .build()
            .expect("an HTTPS client")
    }

    pub fn post(&self, key: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
        self.post_with(&self.client, key, body)
    }

    pub fn post_with(
        &self,
        client: &reqwest::Client,
        key: Option<&str>,
        body: &Value,
    ) -> reqwest::RequestBuilder {
        let request = client
            .post(&self.url)
            .header("accept", ACCEPT)
            .header("content-type", "application/json")
            .body(body.to_string());
        match key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    /// Sends `body` on a session `key` opened.
    pub async fn in_session(&self, key: &str, session: &str, body: &Value) -> reqwest::Response {
        self.post(Some(key), body)
            .header("mcp-session-id", session)
            .send()
            .await
            .expect("answered")
    }

    /// Where the server listens.
    pub fn address(&self) -> std::net::SocketAddr {
        let authority = self
            .url
            .trim_start_matches("https://")
            .trim_end_matches("/mcp");
        let port = authority.rsplit_once(':').expect("a port").1;
        ([127, 0, 0, 1], port.parse().expect("a port")).into()
    }

    /// Opens a session with `key`: its identifier.
    pub async fn open_session(&self, key: &str) -> String {
        self.open_session_with(&self.client, key).await
    }

    /// Opens a session with `key` on `client`'s connection: its identifier.
    pub async fn open_session_with(&self, client: &reqwest::Client, key: &str) -> String {
        let response = self
            .post_with(client, Some(key), &initialize())
            .send()
            .await
            .expect("initialize");
        assert_eq!(response.status(), StatusCode::OK);
        let session = response
            .headers()
            .get("mcp-session-id")
            .expect("a session")
            .to_str()
            .expect("text")
            .to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = self
            .post_with(client, Some(key), &initialized)
            .header("mcp-session-id", &session)
            .send()
            .await
            .expect("initialized");
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        session
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        stop_gracefully(&mut self.child);
        for path in &self.made {
            let _ = std::fs::remove_dir_all(path);
            let _ = std::fs::remove_file(path);
        }
    }
}
