//! The read path, measured side by side in one run (issue 15): a direct HTTPS read of the stack's
//! status, and the same read through lemonfiber-mcp as `tools/call read_status` over HTTPS (in a
//! session, and stateless on 2026-07-28) and over stdio, beside `ping` and `tools/list`. It
//! prints latency at one client and calls a second and errors at 16 and 64 clients (both
//! interleaved, so each kind sees the same machine), the CPU a call costs the server, the stack
//! and the clients, the server's resident memory idle and with sessions open, its time to ready,
//! and its allocations per call (counted on the threads of a server run in this process). The
//! upstreams are a fast stack of its own and the demo stack, both on loopback.
//!
//! `cargo bench --bench read_path` for the figures in docs/performance.md. CI runs
//! `cargo test --bench read_path -- --short`: a few seconds a block, from the test build, which
//! fails on errors only, never on timing. `READ_PATH_BINARY=<path>` measures another build of the
//! server (a release's static binary, or one laid out by a profile of its reads, which
//! packaging/pgo/build makes by running this benchmark against a build that counts).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lemonfiber_mcp::serve::http_command;
use lemonfiber_mcp::threads;

use bytes::Bytes;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

#[path = "../tests/support/demo.rs"]
mod demo;
#[path = "read_path/fast_stack.rs"]
mod fast_stack;
#[path = "../tests/support/http_server.rs"]
mod http_server;
#[path = "../tests/support/https.rs"]
mod https;

use demo::{BINARY, DemoStack};
use http_server::HttpServer;

/// The server the benchmark measures: the build's own binary, or another build of it that
/// `READ_PATH_BINARY` names (one laid out by a profile of its reads: packaging/pgo/build). The
/// demo stack and the server run in this process stay the build's own, so every build measured
/// has the same upstream.
fn measured_binary() -> PathBuf {
    std::env::var_os("READ_PATH_BINARY").map_or_else(|| PathBuf::from(BINARY), PathBuf::from)
}

const SESSION_VERSION: &str = "2025-11-25";
const STATELESS_VERSION: &str = "2026-07-28";

/// Counts the allocations made on the threads of the server this benchmark runs in its own
/// process, and on no other: the clients' are not the server's.
struct CountingServerAllocations;

static SERVER_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static SERVING: Cell<bool> = const { Cell::new(false) };
}

fn count_if_serving() {
    if SERVING.try_with(Cell::get).unwrap_or(false) {
        SERVER_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is handed to the system allocator as it came; counting allocates nothing.
unsafe impl GlobalAlloc for CountingServerAllocations {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_if_serving();
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_if_serving();
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_if_serving();
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingServerAllocations = CountingServerAllocations;

/// How much of each block a run measures.
struct Run {
    /// Calls of each kind at one client.
    rounds: usize,
    /// Turns each kind takes at many clients, and how long each turn lasts.
    load_rounds: usize,
    load_block: Duration,
    /// Sessions kept open for the memory they hold.
    sessions: usize,
}

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let short = arguments.iter().any(|arg| arg == "--short");
    let reads = count_after(&arguments, "--reads");
    let session_reads = count_after(&arguments, "--session-reads");
    let sessions = count_after(&arguments, "--sessions").map(|count| count as usize);
    let run = if short {
        Run {
            rounds: 200,
            load_rounds: 1,
            load_block: Duration::from_secs(2),
            sessions: 100,
        }
    } else {
        Run {
            rounds: 2000,
            load_rounds: 5,
            load_block: Duration::from_secs(2),
            sessions: 1000,
        }
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let errors = match (reads, session_reads, sessions) {
        (Some(count), _, _) => runtime.block_on(reads_only(Kind::ReadStateless, count)),
        (None, Some(count), _) => runtime.block_on(reads_only(Kind::ReadInSession, count)),
        (None, None, Some(count)) => runtime.block_on(sessions_only(count)),
        (None, None, None) => runtime.block_on(measure(&run, short)),
    };
    if errors > 0 {
        eprintln!("{errors} requests failed");
        std::process::exit(1);
    }
}

/// The count given after `flag`, if the flag is given.
fn count_after(arguments: &[String], flag: &str) -> Option<u64> {
    let at = arguments.iter().position(|arg| arg == flag)?;
    let count = arguments.get(at + 1)?;
    Some(
        count
            .parse()
            .unwrap_or_else(|_| panic!("{flag} takes a count, not {count:?}")),
    )
}

/// A child stopped with SIGTERM when dropped, as the server and the demo expect to be.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        demo::stop_gracefully(&mut self.0);
    }
}

fn pinned(pin: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_backend_preconfigured(https::pinned_tls(pin))
        .tcp_nodelay(true)
        .pool_max_idle_per_host(256)
        .no_proxy()
        .build()
        .expect("a client")
}

/// What one kind of request needs: where it goes and how.
#[derive(Clone)]
struct Target {
    stack: String,
    mcp: String,
    key: String,
    stack_client: reqwest::Client,
    mcp_client: reqwest::Client,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Direct,
    Ping,
    List,
    ReadInSession,
    ReadStateless,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Direct => "direct HTTPS GET /api/status",
            Kind::Ping => "MCP ping (HTTPS, session)",
            Kind::List => "MCP tools/list (HTTPS, session)",
            Kind::ReadInSession => "MCP read_status (HTTPS, session)",
            Kind::ReadStateless => "MCP read_status (HTTPS, stateless)",
        }
    }
}

/// Whether `line` is the answer to a request and a result that is no error; `None` when it is
/// no answer (a notification, or not JSON-RPC). A parse of the whole message: each kind's answer
/// is read so once before it is measured (`Target::verified`), and `looks_succeeded` then stands
/// in for it.
fn succeeded(line: &str) -> Option<bool> {
    #[derive(Deserialize)]
    struct Message {
        result: Option<Outcome>,
        error: Option<IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Outcome {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    match serde_json::from_str(line).ok()? {
        Message {
            result: Some(outcome),
            ..
        } => Some(!outcome.is_error),
        Message { error: Some(_), .. } => Some(false),
        _ => None,
    }
}

/// What `succeeded` says of an answer, looked for as a load generator looks (wrk reads only the
/// status): three searches for raw JSON text, not a parse. Outside a string a `"` is raw only
/// around keys and strings, and inside one it is escaped, so no text the answer carries (the
/// framed data in its content) can look like these; only a key of the structured content could.
/// The direct call's client reads its answer's bytes and nothing more, and a client reading each
/// 7 KB answer as text and parsing it in full ran 136,000 instructions a call, about half of what
/// the clients and the fast stack ran for it, on the cores the server is measured on.
fn looks_succeeded(answer: &[u8]) -> Option<bool> {
    use memchr::memmem::find;
    if find(answer, br#""result":{"#).is_some() {
        Some(find(answer, br#""isError":true"#).is_none())
    } else if find(answer, br#""error":{"#).is_some() {
        Some(false)
    } else {
        None
    }
}

// Bodies are written as text, as a load generator sends them, not built as JSON each call.
fn call(id: u64, tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
    )
}

fn stateless_call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read_status","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{STATELESS_VERSION}","io.modelcontextprotocol/clientInfo":{{"name":"bench","version":"0"}},"io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    )
}

impl Target {
    /// Posts `body` in `session`, or stateless (a `read_status` call) without one.
    async fn post(&self, session: Option<&str>, body: String) -> Result<Bytes, String> {
        let request = self
            .mcp_client
            .post(&self.mcp)
            .bearer_auth(&self.key)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body);
        let request = match session {
            Some(session) => request
                .header("mcp-protocol-version", SESSION_VERSION)
                .header("mcp-session-id", session),
            None => request
                .header("mcp-protocol-version", STATELESS_VERSION)
                .header("mcp-method", "tools/call")
                .header("mcp-name", "read_status"),
        };
        let answer = request.send().await.map_err(|error| error.to_string())?;
        let status = answer.status();
        let body = answer.bytes().await.map_err(|error| error.to_string())?;
        if !status.is_success() || looks_succeeded(&body) != Some(true) {
            return Err(format!("{status}: {}", shown(&body)));
        }
        Ok(body)
    }

    /// Posts `body` as `post` does, and reads the whole answer as JSON-RPC: it is the last message,
    /// whether sent as JSON or as an event.
    async fn verified(&self, session: Option<&str>, body: String) -> Result<(), String> {
        let answer = self.post(session, body).await?;
        let text = std::str::from_utf8(&answer).map_err(|error| error.to_string())?;
        let succeeded = text
            .lines()
            .rev()
            .find_map(|line| succeeded(line.strip_prefix("data:").unwrap_or(line).trim()));
        match succeeded {
            Some(true) => Ok(()),
            _ => Err(format!("not a result: {}", shown(&answer))),
        }
    }

    /// Each kind of MCP request this benchmark measures, answered and read in full.
    async fn verify(&self, session: &str) -> Result<(), String> {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_owned();
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_owned();
        self.verified(Some(session), ping).await?;
        self.verified(Some(session), list).await?;
        self.verified(Some(session), call(3, "read_status")).await?;
        self.verified(None, stateless_call(4)).await
    }

    /// Opens a session: its identifier.
    async fn session(&self) -> Result<String, String> {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": SESSION_VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}});
        let answer = self
            .mcp_client
            .post(&self.mcp)
            .bearer_auth(&self.key)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize)
            .send()
            .await
            .map_err(|error| error.to_string())?;
        let session = answer
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let status = answer.status();
        let text = answer.text().await.map_err(|error| error.to_string())?;
        let session =
            session.ok_or_else(|| format!("no session: {status}: {}", shown(text.as_bytes())))?;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.mcp_client
            .post(&self.mcp)
            .bearer_auth(&self.key)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", SESSION_VERSION)
            .header("mcp-session-id", &session)
            .json(&initialized)
            .send()
            .await
            .map_err(|error| error.to_string())?;
        Ok(session)
    }

    async fn once(&self, kind: Kind, session: &str, id: u64) -> Result<(), String> {
        match kind {
            Kind::Direct => {
                let answer = self
                    .stack_client
                    .get(format!("{}/api/status", self.stack))
                    .header("x-lemonfiber-token", &self.key)
                    .send()
                    .await
                    .map_err(|error| error.to_string())?;
                let status = answer.status();
                answer.bytes().await.map_err(|error| error.to_string())?;
                if status.is_success() {
                    Ok(())
                } else {
                    Err(status.to_string())
                }
            }
            Kind::Ping => self
                .post(
                    Some(session),
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
                )
                .await
                .map(drop),
            Kind::List => self
                .post(
                    Some(session),
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
                )
                .await
                .map(drop),
            Kind::ReadInSession => self
                .post(Some(session), call(id, "read_status"))
                .await
                .map(drop),
            Kind::ReadStateless => self.post(None, stateless_call(id)).await.map(drop),
        }
    }
}

/// The server over stdio, a line a message.
struct OverStdio {
    _child: Stopped,
    input: ChildStdin,
    output: tokio::io::Lines<BufReader<ChildStdout>>,
}

impl OverStdio {
    async fn start(address: &str, pin: &str, key_file: &str) -> OverStdio {
        let mut child = Command::new(measured_binary())
            .arg("stdio")
            .env_clear()
            .env("LEMONFIBER_ADDRESS", address)
            .env("LEMONFIBER_PIN", pin)
            .env("LEMONFIBER_KEY_FILE", key_file)
            .env("LEMONFIBER_LOG", "warn")
            .env("LEMONFIBER_AUDIT", "/dev/null")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("stdio starts");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut stdio = OverStdio {
            _child: Stopped(child),
            input,
            output,
        };
        stdio
            .ask(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": SESSION_VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
                .to_string(),
            )
            .await
            .expect("initialized");
        stdio
            .input
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .expect("sent");
        stdio
    }

    async fn ask(&mut self, mut line: String) -> Result<(), String> {
        line.push('\n');
        self.input
            .write_all(line.as_bytes())
            .await
            .map_err(|error| error.to_string())?;
        loop {
            let answer = self
                .output
                .next_line()
                .await
                .map_err(|error| error.to_string())?
                .ok_or("closed")?;
            // Notifications the server sends meanwhile are not the answer.
            match looks_succeeded(answer.as_bytes()) {
                Some(true) => return Ok(()),
                Some(false) => return Err(shown(answer.as_bytes())),
                None => {}
            }
        }
    }
}

/// What clients at once made of one kind of request: in one block, or summed over several.
#[derive(Clone, Copy, Default)]
struct Block {
    calls: u64,
    wrong: u64,
    seconds: f64,
    spent: Spent,
}

impl Block {
    fn add(&mut self, other: Block) {
        self.calls += other.calls;
        self.wrong += other.wrong;
        self.seconds += other.seconds;
        self.spent = self.spent.plus(other.spent);
    }
}

/// The CPU each side of a call has used so far, in seconds.
#[derive(Clone, Copy, Default)]
struct Spent {
    server: f64,
    stack: f64,
    clients: f64,
}

impl Spent {
    /// What the server (process `pid`), `upstream` and this benchmark's clients have used: this
    /// process less the fast stack's thread, when that is the upstream.
    fn now(pid: u32, upstream: &Upstream) -> Spent {
        let stack = cpu_seconds_in(&upstream.stat);
        let this_process = cpu_seconds(std::process::id());
        Spent {
            server: cpu_seconds(pid),
            stack,
            clients: if upstream.in_this_process {
                this_process - stack
            } else {
                this_process
            },
        }
    }

    fn plus(self, other: Spent) -> Spent {
        Spent {
            server: self.server + other.server,
            stack: self.stack + other.stack,
            clients: self.clients + other.clients,
        }
    }

    fn less(self, other: Spent) -> Spent {
        Spent {
            server: self.server - other.server,
            stack: self.stack - other.stack,
            clients: self.clients - other.clients,
        }
    }

    /// Each side's CPU a call, in µs, over `calls` calls.
    fn per_call(self, calls: u64) -> Spent {
        let million_calls = calls.max(1) as f64 / 1e6;
        Spent {
            server: self.server / million_calls,
            stack: self.stack / million_calls,
            clients: self.clients / million_calls,
        }
    }
}

/// One client for each of `sessions` asking `kind` over and over for `block`; the CPU the server
/// (process `pid`), `upstream` and the clients spent meanwhile.
async fn load(
    target: &Target,
    kind: Kind,
    sessions: &[String],
    block: Duration,
    pid: u32,
    upstream: &Upstream,
) -> Block {
    let done = Arc::new(AtomicU64::new(0));
    let wrong = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let before = Spent::now(pid, upstream);
    let began = Instant::now();
    let mut workers = Vec::new();
    for session in sessions {
        let (target, session) = (target.clone(), session.clone());
        let (done, wrong, stop) = (done.clone(), wrong.clone(), stop.clone());
        workers.push(tokio::spawn(async move {
            let mut id = 1;
            while !stop.load(Ordering::Relaxed) {
                match target.once(kind, &session, id).await {
                    Ok(()) => {
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(error) => {
                        if wrong.fetch_add(1, Ordering::Relaxed) == 0 {
                            eprintln!("{}: {error}", kind.name());
                        }
                    }
                }
                id += 1;
            }
        }));
    }
    tokio::time::sleep(block).await;
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        let _ = worker.await;
    }
    Block {
        calls: done.load(Ordering::Relaxed),
        wrong: wrong.load(Ordering::Relaxed),
        seconds: began.elapsed().as_secs_f64(),
        spent: Spent::now(pid, upstream).less(before),
    }
}

/// The start of an answer, for an error message.
fn shown(answer: &[u8]) -> String {
    String::from_utf8_lossy(&answer[..answer.len().min(300)]).into_owned()
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at].as_secs_f64() * 1000.0
}

/// The CPU time (user and system) a process has used, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    cpu_seconds_in(&format!("/proc/{pid}/stat"))
}

/// The CPU time (user and system) a process or a thread has used, in seconds, from its `stat`.
fn cpu_seconds_in(stat: &str) -> f64 {
    let stat = std::fs::read_to_string(stat).expect("a stat");
    let fields: Vec<&str> = stat.rsplit_once(") ").expect("stat").1.split(' ').collect();
    let ticks: f64 =
        fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
    ticks / 100.0
}

/// A process's resident memory, in KiB.
fn resident_kib(pid: u32) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the process's status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// The HTTP mode's settings for the run: the limits lifted, so the figures are the server's and
/// not its allowances'.
fn server_settings(address: &str, pin: &str, state: &Path) -> Vec<(&'static str, String)> {
    std::fs::create_dir_all(state).expect("a state folder");
    // The server starts with an empty environment: a run trying another number of worker
    // threads names it to the benchmark.
    let threads = std::env::var("TOKIO_WORKER_THREADS").ok();
    let threads = threads.map(|threads| ("TOKIO_WORKER_THREADS", threads));
    vec![
        ("LEMONFIBER_ADDRESS", address.to_owned()),
        ("LEMONFIBER_PIN", pin.to_owned()),
        ("LEMONFIBER_STATE", state.display().to_string()),
        (
            "LEMONFIBER_AUDIT",
            state.join("audit.log").display().to_string(),
        ),
        ("LEMONFIBER_LOG", "warn".to_owned()),
        ("LEMONFIBER_RATE", "100000".to_owned()),
        ("LEMONFIBER_AT_ONCE", "1000".to_owned()),
        ("LEMONFIBER_SESSIONS", "100000".to_owned()),
        ("LEMONFIBER_KEY_SESSIONS", "10000".to_owned()),
        ("LEMONFIBER_PEER_RATE", "1000000".to_owned()),
        ("LEMONFIBER_UNDER_WAY", "1000".to_owned()),
    ]
    .into_iter()
    .chain(threads)
    .collect()
}

/// The benchmark's own state folder, new and empty.
fn fresh_state() -> std::path::PathBuf {
    let state = http_server::fresh_dir("bench");
    std::fs::create_dir_all(&state).expect("a state folder");
    state
}

/// Settings as `HttpServer::start` takes them.
fn borrowed<'a>(settings: &'a [(&'static str, String)]) -> Vec<(&'a str, &'a str)> {
    settings
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect()
}

/// The HTTP mode run in this process, on a runtime of its own whose threads' allocations are
/// counted; the same code as the binary's, started as the binary starts it.
struct InProcess {
    url: String,
    pin: String,
    ends: tokio_util::sync::CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InProcess {
    fn start(settings: Vec<(&'static str, String)>) -> InProcess {
        let (ready, started) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            SERVING.set(true);
            let runtime = threads::for_http()
                .expect("a number of threads")
                .enable_all()
                .on_thread_start(|| SERVING.set(true))
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let lookup = |name: &str| {
                    settings
                        .iter()
                        .find(|(setting, _)| *setting == name)
                        .map(|(_, value)| value.clone())
                };
                let started = http_command::start(lookup, Some(([127, 0, 0, 1], 0).into()))
                    .await
                    .expect("the server starts in this process");
                let serving = started.serving;
                ready
                    .send((
                        started.url,
                        serving.fingerprint.to_hex(),
                        serving.ends.clone(),
                    ))
                    .expect("the benchmark waits");
                let _ = serving.done.await;
            });
        });
        let (url, pin, ends) = started.recv().expect("the server started");
        InProcess {
            url,
            pin,
            ends,
            thread: Some(thread),
        }
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.ends.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The server's allocations a call, counted over `calls` calls of each kind made one at a time
/// after as many to warm up.
async fn allocations(target: &Target, calls: u64) -> Result<Vec<(Kind, f64)>, String> {
    let session = target.session().await?;
    let mut counted = Vec::new();
    for kind in [Kind::Ping, Kind::ReadInSession, Kind::ReadStateless] {
        for id in 1..=calls {
            target.once(kind, &session, id).await?;
        }
        let before = SERVER_ALLOCATIONS.load(Ordering::Relaxed);
        for id in 1..=calls {
            target.once(kind, &session, calls + id).await?;
        }
        let made = SERVER_ALLOCATIONS.load(Ordering::Relaxed) - before;
        counted.push((kind, made as f64 / calls as f64));
    }
    Ok(counted)
}

/// What the fast stack replays: the demo's answers to the reads the server makes for
/// `read_status` with `key`, each as the demo gave it.
async fn recorded(demo: &DemoStack, key: &str) -> HashMap<String, fast_stack::Answer> {
    let client = pinned(&demo.pin);
    let mut answers = HashMap::new();
    for path in ["/api/capabilities", "/api/status"] {
        let answer = client
            .get(format!("{}{path}", demo.address))
            .header("x-lemonfiber-token", key)
            .send()
            .await
            .expect("the demo answers");
        let status = answer.status();
        let content_type = answer
            .headers()
            .get("content-type")
            .cloned()
            .unwrap_or(axum::http::HeaderValue::from_static("application/json"));
        let body = answer.bytes().await.expect("its body");
        assert!(status.is_success(), "{path}: {status}");
        answers.insert(
            path.to_owned(),
            fast_stack::Answer {
                status,
                content_type,
                body,
            },
        );
    }
    answers
}

/// A stack the server is measured against.
struct Upstream {
    name: &'static str,
    address: String,
    pin: String,
    /// The `stat` of what answers the server's requests: the fast stack's thread, or the demo.
    stat: String,
    in_this_process: bool,
}

/// What one upstream's run gave, for the summary.
struct Measured {
    /// p50 of each kind at one client, in the order of `ONE_CLIENT`, then stdio.
    p50: Vec<f64>,
    /// Calls a second at 16 clients: direct, in a session, stateless.
    rates_at_16: [f64; 3],
    /// Server CPU a call at one client and at 16: in a session, stateless.
    cpu: [[f64; 2]; 2],
}

const ONE_CLIENT: [Kind; 5] = [
    Kind::Direct,
    Kind::Ping,
    Kind::List,
    Kind::ReadInSession,
    Kind::ReadStateless,
];

/// Keys for the blocks at many clients: a read in a session by one, a stateless read by the
/// other, so that neither runs out of the requests a minute a key may make (at most 100,000,
/// however high the setting), which a fast upstream would otherwise spend within a block.
struct Keys<'a> {
    in_session: &'a str,
    stateless: &'a str,
}

/// The one-client block, through `target`, and the blocks at many clients, each through a
/// server of its own started with `settings` in front of `upstream`, with allowances still
/// whole.
async fn through(
    run: &Run,
    upstream: &Upstream,
    target: &Target,
    settings: &[(&str, &str)],
    keys: &Keys<'_>,
    key_file: &str,
    errors: &AtomicU64,
) -> Measured {
    let failed = |result: Result<(), String>| {
        if let Err(error) = result
            && errors.fetch_add(1, Ordering::Relaxed) < 3
        {
            eprintln!("error: {error}");
        }
    };
    // One client, every kind interleaved.
    let session = target.session().await.expect("a session");
    failed(target.verify(&session).await);
    let mut stdio = OverStdio::start(&upstream.address, &upstream.pin, key_file).await;
    let mut latencies: Vec<Vec<Duration>> = vec![Vec::new(); ONE_CLIENT.len() + 1];
    for round in 0..run.rounds + run.rounds / 10 {
        let warm = round >= run.rounds / 10;
        for (at, kind) in ONE_CLIENT.iter().enumerate() {
            let began = Instant::now();
            failed(target.once(*kind, &session, round as u64 + 1).await);
            if warm {
                latencies[at].push(began.elapsed());
            }
        }
        let began = Instant::now();
        failed(stdio.ask(call(round as u64 + 1, "read_status")).await);
        if warm {
            latencies[ONE_CLIENT.len()].push(began.elapsed());
        }
    }
    drop(stdio);
    println!();
    println!(
        "{:<38} {:>9} {:>9} {:>9} {:>9}",
        format!("upstream: {}; one client", upstream.name),
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "× direct"
    );
    let mut p50 = Vec::new();
    for (at, times) in latencies.iter_mut().enumerate() {
        times.sort();
        let name = ONE_CLIENT
            .get(at)
            .map_or("MCP read_status (stdio)", |kind| kind.name());
        p50.push(percentile(times, 0.5));
        println!(
            "{:<38} {:>9.3} {:>9.3} {:>9.3} {:>9.1}",
            name,
            percentile(times, 0.5),
            percentile(times, 0.9),
            percentile(times, 0.99),
            p50[at] / p50[0]
        );
    }

    // Many clients at once, each kind alone, in short blocks taken in turn, so that every kind
    // sees the machine as it was through the whole run and not as it was during its own block.
    println!();
    println!(
        "{:<38} {:>8} {:>10} {:>8} {:>16} {:>15} {:>17}",
        format!("upstream: {}; clients at once", upstream.name),
        "clients",
        "calls/s",
        "errors",
        "server CPU/call",
        "stack CPU/call",
        "clients' CPU/call"
    );
    let kinds = [Kind::Direct, Kind::ReadInSession, Kind::ReadStateless];
    let mut rates_at_16 = [0.0; 3];
    let mut cpu = [[0.0; 2]; 2];
    for clients in [1usize, 16, 64] {
        let mut blocks = [Block::default(); 3];
        // A server of its own for each round, so that no key's requests a minute (at most
        // 100,000, however fast the machine) run out within the level's rounds.
        for _ in 0..run.load_rounds {
            let server = HttpServer::start_binary(
                &measured_binary(),
                &upstream.address,
                &upstream.pin,
                settings,
            )
            .await;
            let pid = server.pid();
            let in_session = Target {
                mcp: server.url.clone(),
                mcp_client: pinned(&server.pin),
                key: keys.in_session.to_owned(),
                ..target.clone()
            };
            let stateless = Target {
                key: keys.stateless.to_owned(),
                ..in_session.clone()
            };
            let mut sessions = Vec::new();
            for _ in 0..clients {
                sessions.push(in_session.session().await.unwrap_or_default());
            }
            // The stateless key made known to this server first: many clients bringing a key it
            // has not seen at once would each count against the peer's new keys a minute.
            failed(stateless.once(Kind::ReadStateless, "", 0).await);
            for (kind, block) in kinds.iter().zip(&mut blocks) {
                let by = if *kind == Kind::ReadStateless {
                    &stateless
                } else {
                    &in_session
                };
                block.add(load(by, *kind, &sessions, run.load_block, pid, upstream).await);
            }
        }
        for (at, (kind, block)) in kinds.iter().zip(&blocks).enumerate() {
            let rate = block.calls as f64 / block.seconds;
            let spent = block.spent.per_call(block.calls);
            let per_call = spent.server;
            errors.fetch_add(block.wrong, Ordering::Relaxed);
            if clients == 16 {
                rates_at_16[at] = rate;
            }
            if at > 0 && clients <= 16 {
                cpu[at - 1][usize::from(clients == 16)] = per_call;
            }
            let cpu = if *kind == Kind::Direct {
                "-".to_owned()
            } else {
                format!("{per_call:.0} µs")
            };
            println!(
                "{:<38} {:>8} {:>10.0} {:>8} {:>16} {:>12.0} µs {:>14.0} µs",
                kind.name(),
                clients,
                rate,
                block.wrong,
                cpu,
                spent.stack,
                spent.clients
            );
        }
    }
    Measured {
        p50,
        rates_at_16,
        cpu,
    }
}

/// The summary of one upstream's run: each figure the targets name, beside the target.
fn summary(upstream: &Upstream, measured: &Measured) {
    let [direct, session, stateless] = measured.rates_at_16;
    println!();
    println!("against the {} upstream:", upstream.name);
    println!(
        "  read_status p50 × direct: {:.1} in a session, {:.1} stateless",
        measured.p50[3] / measured.p50[0],
        measured.p50[4] / measured.p50[0]
    );
    println!(
        "  calls a second at 16 clients, of direct: {:.0}% in a session, {:.0}% stateless",
        session / direct * 100.0,
        stateless / direct * 100.0
    );
    let [[session_1, session_16], [stateless_1, stateless_16]] = measured.cpu;
    println!(
        "  server CPU a read, 1 / 16 clients: {session_1:.0} / {session_16:.0} µs in a session, \
         {stateless_1:.0} / {stateless_16:.0} µs stateless"
    );
}

async fn measure(run: &Run, short: bool) -> u64 {
    let state = fresh_state();
    let demo = DemoStack::start_with_settings(&[("LEMONFIBER_LOG", "warn")]).await;
    let key_file = demo.read_key_file.clone();
    let key = demo.key(&key_file);
    let fast = fast_stack::FastStack::start(recorded(&demo, &key).await);
    let upstreams = [
        Upstream {
            name: "fast",
            address: fast.address.clone(),
            pin: fast.pin.clone(),
            stat: fast.stat.clone(),
            in_this_process: true,
        },
        Upstream {
            name: "demo",
            address: demo.address.clone(),
            pin: demo.pin.clone(),
            stat: format!("/proc/{}/stat", demo.pid().expect("the demo runs")),
            in_this_process: false,
        },
    ];
    let errors = AtomicU64::new(0);

    println!(
        "lemonfiber-mcp read path, {} mode, {}",
        if short { "short" } else { "full" },
        if cfg!(debug_assertions) {
            "debug build: not the figures of a release"
        } else {
            "release build"
        }
    );
    if std::env::var_os("READ_PATH_BINARY").is_some() {
        println!("server measured: {}", measured_binary().display());
    }
    println!(
        "machine: {} cores; upstreams: a fast stack replaying the demo's answers (the ratios' \
         baseline), then the demo stack itself; both over HTTPS on loopback",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    let mut results = Vec::new();
    for (at, upstream) in upstreams.iter().enumerate() {
        let settings =
            server_settings(&upstream.address, &upstream.pin, &state.join(upstream.name));
        let settings = borrowed(&settings);
        let started = Instant::now();
        let server = HttpServer::start_binary(
            &measured_binary(),
            &upstream.address,
            &upstream.pin,
            &settings,
        )
        .await;
        let ready = started.elapsed();
        let pid = server.pid();
        let target = Target {
            stack: upstream.address.clone(),
            mcp: server.url.clone(),
            key: key.clone(),
            stack_client: pinned(&upstream.pin),
            mcp_client: pinned(&server.pin),
        };
        if at == 0 {
            println!(
                "time to ready (spawn to listening): {:.1} ms",
                ready.as_secs_f64() * 1000.0
            );
            println!(
                "resident memory idle: {:.1} MB",
                resident_kib(pid) as f64 / 1024.0
            );
        }
        let act_key = demo.key(&demo.act_key_file);
        let keys = Keys {
            in_session: &key,
            stateless: &act_key,
        };
        let measured = through(run, upstream, &target, &settings, &keys, &key_file, &errors).await;
        if at == 0 {
            sessions_held(run.sessions, &demo, &target, pid, &errors).await;
            allocations_counted(run, upstream, &target, &state, &errors).await;
        }
        results.push(measured);
    }
    for (upstream, measured) in upstreams.iter().zip(&results) {
        summary(upstream, measured);
    }
    drop(fast);
    let _ = std::fs::remove_dir_all(&state);
    errors.load(Ordering::Relaxed)
}

/// A server in front of the fast stack, alone: for the runs that look at one cost only.
struct Alone {
    target: Target,
    server: HttpServer,
    fast: fast_stack::FastStack,
    demo: DemoStack,
    state: std::path::PathBuf,
}

impl Alone {
    async fn start() -> Alone {
        let state = fresh_state();
        let demo = DemoStack::start_with_settings(&[("LEMONFIBER_LOG", "warn")]).await;
        let key = demo.key(&demo.act_key_file);
        let fast = fast_stack::FastStack::start(recorded(&demo, &key).await);
        let settings = server_settings(&fast.address, &fast.pin, &state.join("fast"));
        let server = HttpServer::start_binary(
            &measured_binary(),
            &fast.address,
            &fast.pin,
            &borrowed(&settings),
        )
        .await;
        let target = Target {
            stack: fast.address.clone(),
            mcp: server.url.clone(),
            key,
            stack_client: pinned(&fast.pin),
            mcp_client: pinned(&server.pin),
        };
        Alone {
            target,
            server,
            fast,
            demo,
            state,
        }
    }

    /// `count` reads of `kind`, one after another (in one session opened first, for a read in a
    /// session); the number that failed.
    async fn read(&self, kind: Kind, count: u64) -> u64 {
        let session = match kind {
            Kind::ReadInSession => match self.target.session().await {
                Ok(session) => session,
                Err(error) => {
                    eprintln!("error: {error}");
                    return count;
                }
            },
            _ => String::new(),
        };
        let mut errors = 0;
        for id in 0..count {
            if let Err(error) = self.target.once(kind, &session, id).await {
                errors += 1;
                eprintln!("error: {error}");
            }
        }
        errors
    }

    fn stop(self) {
        drop(self.server);
        drop(self.fast);
        let _ = std::fs::remove_dir_all(&self.state);
    }
}

/// Only `count` reads of `kind` (`--reads` stateless, `--session-reads` in one session), one
/// after another, through a server in front of the fast stack, and nothing else: for counting
/// the server's instructions, which unlike its seconds are the same on every run, so a change's
/// cost shows however busy the machine is. Run as
/// `valgrind --tool=callgrind --trace-children=yes --trace-children-skip-by-arg=demo` over the
/// benchmark with two counts; the difference of the server's totals over the difference of the
/// counts is a read's.
async fn reads_only(kind: Kind, count: u64) -> u64 {
    let alone = Alone::start().await;
    let errors = alone.read(kind, count).await;
    println!(
        "{count} of {} through server {}",
        kind.name(),
        alone.server.pid()
    );
    alone.stop();
    errors
}

/// Only the memory `count` sessions hold, opened after as many stateless reads: a quick look at
/// a change's cost in memory (the allocator's, say), without the whole run.
async fn sessions_only(count: usize) -> u64 {
    let alone = Alone::start().await;
    let errors = AtomicU64::new(alone.read(Kind::ReadStateless, count as u64).await);
    let pid = alone.server.pid();
    println!(
        "resident memory after {count} reads: {:.1} MB",
        resident_kib(pid) as f64 / 1024.0
    );
    sessions_held(count, &alone.demo, &alone.target, pid, &errors).await;
    alone.stop();
    errors.load(Ordering::Relaxed)
}

/// The memory sessions kept open hold, opened by another key: the blocks before may have spent
/// the read key's requests a minute (at most 100,000, however high the setting).
async fn sessions_held(
    sessions: usize,
    demo: &DemoStack,
    target: &Target,
    pid: u32,
    errors: &AtomicU64,
) {
    let opener = Target {
        key: demo.key(&demo.act_key_file),
        ..target.clone()
    };
    let before = resident_kib(pid);
    let mut opened = 0usize;
    for _ in 0..sessions {
        match opener.session().await {
            Ok(_) => opened += 1,
            Err(error) => {
                if errors.fetch_add(1, Ordering::Relaxed) < 3 {
                    eprintln!("error: {error}");
                }
            }
        }
    }
    let after = resident_kib(pid);
    println!();
    println!(
        "resident memory with {opened} more sessions open: {:.1} MB ({:.1} KB a session)",
        after as f64 / 1024.0,
        (after.saturating_sub(before)) as f64 / opened.max(1) as f64
    );
}

/// The server's allocations a call, from a server run in this process in front of `upstream`.
async fn allocations_counted(
    run: &Run,
    upstream: &Upstream,
    target: &Target,
    state: &Path,
    errors: &AtomicU64,
) {
    let in_process = InProcess::start(server_settings(
        &upstream.address,
        &upstream.pin,
        &state.join("in-process"),
    ));
    let counted = Target {
        mcp: in_process.url.clone(),
        mcp_client: pinned(&in_process.pin),
        ..target.clone()
    };
    println!();
    println!("server allocations a call (the server run in this process, one client)");
    match allocations(&counted, run.rounds as u64).await {
        Ok(counted) => {
            for (kind, per_call) in counted {
                println!("{:<38} {:>9.0}", kind.name(), per_call);
            }
        }
        Err(error) => {
            if errors.fetch_add(1, Ordering::Relaxed) < 3 {
                eprintln!("error: {error}");
            }
        }
    }
}
