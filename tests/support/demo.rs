//! The real `lemonfiber-mcp demo --json`, run as a child process for a test.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt as _, BufReader};
use tokio::process::{Child, Command};

pub const BINARY: &str = env!("CARGO_BIN_EXE_lemonfiber-mcp");
const START_LIMIT: Duration = Duration::from_secs(30);

pub struct DemoStack {
    child: Child,
    /// The folder the demo keeps its things in, when the support gave it one of its own: so that
    /// no test run touches the real per-user folder, and no two demos share a kept port.
    _folder: Option<Scratch>,
    pub address: String,
    pub pin: String,
    pub read_key_file: String,
    pub act_key_file: String,
    pub member_key_file: String,
    pub control: String,
    pub mcp_url: String,
    pub mcp_pin: String,
    /// The base64 SHA-256 of the MCP certificate's public key, as curl and browsers pin it.
    pub mcp_spki_sha256: String,
    /// A key link for each key, by scope (`read`, `act`, `member`).
    pub links: Value,
}

impl DemoStack {
    pub async fn start() -> DemoStack {
        Self::start_with(&[]).await
    }

    pub async fn start_with(extra: &[&str]) -> DemoStack {
        Self::start_binary(Path::new(BINARY), extra).await
    }

    pub async fn start_binary(binary: &Path, extra: &[&str]) -> DemoStack {
        Self::start_configured(binary, extra, &[]).await
    }

    /// The demo with these settings in its environment besides.
    pub async fn start_with_settings(settings: &[(&str, &str)]) -> DemoStack {
        Self::start_configured(Path::new(BINARY), &[], settings).await
    }

    /// The demo as a person runs it, keeping its things in the per-user state folder, with
    /// `state_home` as that person's `HOME` and `XDG_STATE_HOME`.
    pub async fn start_kept(state_home: &Path, extra: &[&str]) -> DemoStack {
        let home = state_home.display().to_string();
        let settings = [("HOME", home.as_str()), ("XDG_STATE_HOME", home.as_str())];
        Self::spawned(Path::new(BINARY), extra, &settings, None).await
    }

    async fn start_configured(
        binary: &Path,
        extra: &[&str],
        settings: &[(&str, &str)],
    ) -> DemoStack {
        if extra.contains(&"--key-dir") {
            return Self::spawned(binary, extra, settings, None).await;
        }
        let folder = Scratch::at(own_folder());
        let folder_text = folder.display().to_string();
        let extra: Vec<&str> = extra
            .iter()
            .copied()
            .chain(["--key-dir", folder_text.as_str()])
            .collect();
        Self::spawned(binary, &extra, settings, Some(folder)).await
    }

    async fn spawned(
        binary: &Path,
        extra: &[&str],
        settings: &[(&str, &str)],
        folder: Option<Scratch>,
    ) -> DemoStack {
        let mut child = Command::new(binary)
            .arg("demo")
            .envs(settings.iter().copied())
            .arg("--json")
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("the demo starts");
        let stdout = child.stdout.take().expect("the demo's stdout");
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(START_LIMIT, lines.next_line())
            .await
            .expect("the demo says where it listens in time")
            .expect("the demo's stdout reads")
            .expect("the demo prints one line");
        let info: Value = serde_json::from_str(&line).expect("the demo's line is JSON");
        let text = |pointer: &str| {
            info.pointer(pointer)
                .and_then(Value::as_str)
                .expect(pointer)
                .to_owned()
        };
        DemoStack {
            address: text("/address"),
            pin: text("/pin"),
            read_key_file: text("/key_files/read"),
            act_key_file: text("/key_files/act"),
            member_key_file: text("/key_files/member"),
            control: text("/control"),
            mcp_url: text("/mcp_url"),
            mcp_pin: text("/mcp_pin"),
            mcp_spki_sha256: text("/mcp_spki_sha256"),
            links: info["links"].clone(),
            child,
            _folder: folder,
        }
    }

    /// Stops the demo stack as a person would (SIGTERM), and waits until it has gone.
    pub async fn stop(self) {
        drop(self);
    }

    /// The demo's process, to signal.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The key link the demo made for `scope`.
    pub fn link(&self, scope: &str) -> String {
        self.links[scope].as_str().expect("a key link").to_owned()
    }

    pub fn key(&self, file: &str) -> String {
        std::fs::read_to_string(file)
            .expect("the key file reads")
            .trim()
            .to_owned()
    }

    /// Where the demo keeps its MCP endpoint's certificate (beside its keys), for a client to trust.
    pub fn mcp_certificate(&self) -> String {
        Path::new(&self.read_key_file)
            .parent()
            .expect("the key folder")
            .join("mcp/server-certificate.pem")
            .display()
            .to_string()
    }

    /// Every key the demo minted: what must never show up in a log, result or error.
    pub fn all_keys(&self) -> Vec<String> {
        [
            &self.read_key_file,
            &self.act_key_file,
            &self.member_key_file,
        ]
        .iter()
        .map(|file| self.key(file))
        .collect()
    }

    /// Asks the demo's control endpoint to do something (`move`, `jobs/hold`, `jobs/release`).
    pub async fn control(&self, what: &str) {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let response = reqwest::Client::new()
            .post(format!("{}/{what}", self.control))
            .send()
            .await
            .expect("the control endpoint answers");
        assert!(
            response.status().is_success(),
            "control {what}: {}",
            response.status()
        );
    }

    /// What the demo stack received, from its control endpoint.
    pub async fn requests(&self) -> Vec<Value> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let text = reqwest::get(format!("{}/requests", self.control))
            .await
            .expect("the control endpoint answers")
            .text()
            .await
            .expect("the control endpoint's answer reads");
        text.lines()
            .map(|line| serde_json::from_str(line).expect("each line is JSON"))
            .collect()
    }
}

impl Drop for DemoStack {
    fn drop(&mut self) {
        stop_gracefully(&mut self.child);
    }
}

/// Asks a child to stop (SIGTERM) and waits a bounded time for it to go; only then kills it.
pub fn stop_gracefully(child: &mut Child) {
    let Some(pid) = child.id() else {
        return;
    };
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    for _ in 0..100 {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.start_kill();
}

/// A folder of its own for one demo, under the system's temporary folder.
fn own_folder() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::env::temp_dir().join(format!("lemonfiber-demo-test-{}-{n}", std::process::id()))
}

/// A test's own folder, removed when it goes out of scope, however the test ends.
pub struct Scratch(PathBuf);

impl Scratch {
    /// Takes `path` over, empty: whatever an earlier run left there is removed first.
    pub fn at(path: PathBuf) -> Scratch {
        let _ = std::fs::remove_dir_all(&path);
        Scratch(path)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The target directory this build uses: where the tests keep the tools they install.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Waits, for a bounded time, until `ready` says so; answers whether it did.
pub async fn eventually(mut ready: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !ready() {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// What a child writes to `pipe`, gathered as it comes, for a test to read at any moment; with
/// `echo`, written to the test's own stderr too, so that a failing test shows it.
pub fn collected(
    mut pipe: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    echo: bool,
) -> Arc<Mutex<String>> {
    let gathered = Arc::new(Mutex::new(String::new()));
    let sink = gathered.clone();
    tokio::spawn(async move {
        let mut buffer = [0u8; 4096];
        while let Ok(read) = pipe.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            let text = String::from_utf8_lossy(&buffer[..read]);
            if echo {
                eprint!("{text}");
            }
            sink.lock().expect("stderr buffer").push_str(&text);
        }
    });
    gathered
}
