//! The real `lemonfiber-mcp stdio`, driven by rmcp's MCP client, with its stderr kept for checks.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, JsonObject, ProgressNotificationParam,
    ProtocolVersion,
};
use rmcp::service::NotificationContext;
use rmcp::service::RunningService;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;
use tokio::process::Command;
use tokio::sync::Notify;

use super::demo::{BINARY, DemoStack, collected};

pub struct Stdio {
    pub client: RunningService<RoleClient, Watcher>,
    pub watcher: Watcher,
    stderr: Arc<Mutex<String>>,
    /// The server's process, to measure.
    pub pid: u32,
}

/// The client's side of the session: counts the server's notices that its tools changed.
#[derive(Clone, Default)]
pub struct Watcher {
    tools_changed: Arc<AtomicUsize>,
    noticed: Arc<Notify>,
    /// The version it asks for in `initialize`, when not the library's own choice.
    speaks: Option<ProtocolVersion>,
    /// The progress notes the server sent, in order.
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    /// The data of each notice (`notifications/message`) the server sent, in order.
    notices: Arc<Mutex<Vec<Value>>>,
}

impl Watcher {
    pub fn notices(&self) -> Vec<Value> {
        self.notices.lock().expect("notices").clone()
    }

    pub fn progress(&self) -> Vec<ProgressNotificationParam> {
        self.progress.lock().expect("progress").clone()
    }

    pub fn tools_changed(&self) -> usize {
        self.tools_changed.load(Ordering::SeqCst)
    }

    /// Waits (a bounded time) until the server has said its tools changed more than `seen` times.
    pub async fn wait_for_tools_changed(&self, seen: usize) -> bool {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.tools_changed() <= seen {
            if tokio::time::timeout_at(deadline, self.noticed.notified())
                .await
                .is_err()
            {
                return self.tools_changed() > seen;
            }
        }
        true
    }
}

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.fetch_add(1, Ordering::SeqCst);
        self.noticed.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().expect("progress").push(params);
    }

    // Logging is deprecated from 2026-07-28 on; clients of earlier versions still hear it.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.notices.lock().expect("notices").push(params.data);
    }

    fn get_info(&self) -> ClientConfig {
        match &self.speaks {
            Some(version) => ClientConfig::default().with_protocol_version(version.clone()),
            None => ClientConfig::default(),
        }
    }
}

/// How the client opens its connection: `initialize` asking for a version, or (from 2026-07-28)
/// `server/discover`.
pub enum Opening {
    Initialize(ProtocolVersion),
    Discover,
}

impl Stdio {
    /// Starts the server with exactly these environment settings (nothing inherited that could
    /// carry a key).
    pub async fn start(env: &[(&str, &str)]) -> Stdio {
        Self::start_binary(Path::new(BINARY), env).await
    }

    pub async fn start_binary(binary: &Path, env: &[(&str, &str)]) -> Stdio {
        Self::start_opening(binary, env, None).await
    }

    /// Starts the server as `start` does, with a client that opens as `opening` says.
    pub async fn start_speaking(env: &[(&str, &str)], opening: Opening) -> Stdio {
        Self::start_opening(Path::new(BINARY), env, Some(opening)).await
    }

    async fn start_opening(binary: &Path, env: &[(&str, &str)], opening: Option<Opening>) -> Stdio {
        let mut command = Command::new(binary);
        command
            .arg("stdio")
            .env_clear()
            .env("LEMONFIBER_LOG", "trace");
        for (name, value) in env {
            command.env(name, value);
        }
        let (transport, stderr_pipe) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the stdio server starts");
        let pid = transport.id().expect("the server runs");
        let stderr = stderr_pipe
            .map(|pipe| collected(pipe, false))
            .unwrap_or_default();
        let (speaks, lifecycle) = match opening {
            None => (None, ClientLifecycleMode::Initialize),
            Some(Opening::Initialize(version)) => (Some(version), ClientLifecycleMode::Initialize),
            Some(Opening::Discover) => (
                None,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            ),
        };
        let watcher = Watcher {
            speaks,
            ..Watcher::default()
        };
        let client = watcher
            .clone()
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .expect("the MCP session starts");
        Stdio {
            client,
            watcher,
            stderr,
            pid,
        }
    }

    pub async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object")
        };
        let arguments: JsonObject = arguments;
        self.client
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await
            .unwrap_or_else(|error| panic!("{tool} answers: {error}"))
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr buffer").clone()
    }

    /// Reads a resource, answering what the server said.
    pub async fn read(
        &self,
        uri: &str,
    ) -> Result<rmcp::model::ReadResourceResult, rmcp::ServiceError> {
        self.client
            .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
            .await
    }
}

/// The real server over stdio, reaching the demo stack with the key in `key_file`.
pub async fn connected(demo: &DemoStack, key_file: &str) -> Stdio {
    Stdio::start(&demo_settings(demo, key_file)).await
}

/// As `connected`, with a client that opens as `opening` says.
pub async fn connected_speaking(demo: &DemoStack, key_file: &str, opening: Opening) -> Stdio {
    Stdio::start_speaking(&demo_settings(demo, key_file), opening).await
}

fn demo_settings<'a>(demo: &'a DemoStack, key_file: &'a str) -> [(&'static str, &'a str); 3] {
    [
        ("LEMONFIBER_ADDRESS", &demo.address),
        ("LEMONFIBER_PIN", &demo.pin),
        ("LEMONFIBER_KEY_FILE", key_file),
    ]
}

/// The listed tool of that name.
pub fn tool_named<'a>(tools: &'a [rmcp::model::Tool], name: &str) -> &'a rmcp::model::Tool {
    tools
        .iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("{name} is offered"))
}

/// The names of the parameters a tool's input schema offers.
pub fn parameter_names(tool: &rmcp::model::Tool) -> Vec<String> {
    tool.input_schema["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .cloned()
        .collect()
}

/// The text of a result's first content block.
pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|content| content.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default()
}

/// A framed answer, taken apart: the server's sentence, the boundary, and the data between.
pub struct Framed {
    pub sentence: String,
    pub boundary: String,
    pub data: Value,
}

pub fn unframe(text: &str) -> Framed {
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() >= 4,
        "a framed answer has a sentence, two boundary lines and data: {text}"
    );
    let boundary = lines[1]
        .strip_prefix("[lemonfiber stack data ")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("the second line opens the data: {}", lines[1]))
        .to_owned();
    assert_eq!(boundary.len(), 32, "the boundary is 128 random bits");
    assert_eq!(
        lines[lines.len() - 1],
        format!("[end lemonfiber stack data {boundary}]"),
        "the last line closes the data"
    );
    assert_eq!(
        text.matches(&boundary).count(),
        2,
        "the boundary appears only on its two lines"
    );
    let data =
        serde_json::from_str(&lines[2..lines.len() - 1].join("\n")).expect("the data is JSON");
    Framed {
        sentence: lines[0].to_owned(),
        boundary,
        data,
    }
}

/// Resident memory of a process, in KiB: now (`VmRSS`) and at its peak so far (`VmHWM`).
pub fn resident_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .expect(name)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
