//! 2026-07-28 clients hear that a key's offer changed on a `subscriptions/listen` stream, over
//! stdio and over HTTPS, as clients of earlier versions hear it as a notification (issue 11).

#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/mcp.rs"]
mod mcp;

use std::time::Duration;

use demo::DemoStack;
use http_server::http_server;
use mcp::Opening;
use rmcp::model::{CallToolRequestParams, ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService, Subscription};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient};

/// A client that handles nothing itself: what it hears comes on its subscription.
#[derive(Clone, Default)]
struct Quiet;

impl ClientHandler for Quiet {}

fn tools_and_resources() -> SubscriptionFilter {
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    filter.resources_list_changed = Some(true);
    filter
}

/// Waits (a bounded time) for a notice that the tools changed on `subscription`.
async fn hears_tools_changed(subscription: &mut Subscription) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, subscription.next()).await {
            Ok(Ok(Some(ServerNotification::ToolListChangedNotification(_)))) => return true,
            Ok(Ok(Some(_))) => continue,
            _ => return false,
        }
    }
}

/// Takes `/api/stuck` from the read key's capabilities and calls it: the stack's refusal makes the
/// server read the capabilities again and find the offer changed.
async fn narrow_the_offer(
    demo: &DemoStack,
    client: &RunningService<RoleClient, impl ClientHandler>,
) {
    demo.control("capability?path=/api/stuck&state=unpermitted")
        .await;
    let refused = client
        .call_tool(CallToolRequestParams::new("read_stuck"))
        .await
        .expect("read_stuck answers");
    assert_eq!(refused.is_error, Some(true));
}

/// A client of the versions before 2026-07-28 that asked for notices hears the server's own words
/// when the offer changes, and nothing of the stack's.
#[allow(deprecated)]
#[tokio::test]
async fn a_client_that_asked_for_notices_hears_the_offer_changed() {
    let demo = DemoStack::start().await;
    let server = mcp::connected(&demo, &demo.read_key_file).await;
    server.client.list_all_tools().await.expect("tools/list");
    server
        .client
        .set_level(rmcp::model::SetLevelRequestParams::new(
            rmcp::model::LoggingLevel::Info,
        ))
        .await
        .expect("logging/setLevel is served");
    narrow_the_offer(&demo, &server.client).await;
    demo::eventually(|| !server.watcher.notices().is_empty()).await;
    assert_eq!(
        server.watcher.notices(),
        vec![serde_json::json!(
            "What this key is offered has changed; list the tools and resources again."
        )]
    );
}

#[tokio::test]
async fn a_2026_07_28_client_over_stdio_hears_its_tools_changed() {
    let demo = DemoStack::start().await;
    let server = mcp::connected_speaking(&demo, &demo.read_key_file, Opening::Discover).await;
    server.client.list_all_tools().await.expect("tools/list");
    let mut subscription = server
        .client
        .listen(tools_and_resources())
        .await
        .expect("subscriptions/listen is served");
    assert_eq!(subscription.acknowledged(), &tools_and_resources());
    narrow_the_offer(&demo, &server.client).await;
    assert!(hears_tools_changed(&mut subscription).await);
}

#[tokio::test]
async fn a_2026_07_28_client_over_https_hears_its_tools_changed() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let transport = StreamableHttpClientTransport::with_client(
        server.client.clone(),
        StreamableHttpClientTransportConfig::with_uri(server.url.clone()).auth_header(key),
    );
    let client = Quiet
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("the client connects");
    client.list_all_tools().await.expect("tools/list");
    let mut subscription = client
        .listen(tools_and_resources())
        .await
        .expect("subscriptions/listen is served");
    narrow_the_offer(&demo, &client).await;
    assert!(hears_tools_changed(&mut subscription).await);
}

/// What a 2026-07-28 request carries in its `_meta` in place of a handshake.
fn meta_2026() -> serde_json::Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A 2026-07-28 request, `_meta` and all.
fn request_2026(id: u64, method: &str, mut params: serde_json::Value) -> serde_json::Value {
    params["_meta"] = meta_2026();
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn listen_for(id: u64, resources: Option<&[&str]>) -> serde_json::Value {
    let mut notifications =
        serde_json::json!({"toolsListChanged": true, "resourcesListChanged": true});
    if let Some(resources) = resources {
        notifications["resourceSubscriptions"] = serde_json::json!(resources);
    }
    request_2026(
        id,
        "subscriptions/listen",
        serde_json::json!({"notifications": notifications}),
    )
}

fn is_list_changed(message: &serde_json::Value) -> bool {
    message["method"]
        .as_str()
        .is_some_and(|method| method.ends_with("/list_changed"))
}

fn subscription_of(message: &serde_json::Value) -> &serde_json::Value {
    &message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

/// The real `lemonfiber-mcp stdio` over its own pipes, spoken to a line at a time, with its
/// stderr kept.
struct RawStdio {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    stdout: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl RawStdio {
    async fn start(demo: &DemoStack, key_file: &str) -> RawStdio {
        use tokio::io::AsyncBufReadExt as _;
        let mut child = tokio::process::Command::new(demo::BINARY)
            .arg("stdio")
            .env_clear()
            .env("LEMONFIBER_ADDRESS", &demo.address)
            .env("LEMONFIBER_PIN", &demo.pin)
            .env("LEMONFIBER_KEY_FILE", key_file)
            .env("LEMONFIBER_WATCH_EVERY", "1")
            .env("LEMONFIBER_LOG", "warn,lemonfiber_mcp=info")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the stdio server starts");
        let stdin = child.stdin.take();
        let stdout = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        let stderr = demo::collected(child.stderr.take().expect("stderr"), false);
        RawStdio {
            child,
            stdin,
            stdout,
            stderr,
        }
    }

    async fn send(&mut self, message: &serde_json::Value) {
        use tokio::io::AsyncWriteExt as _;
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("written");
        stdin.flush().await.expect("flushed");
    }

    /// Everything the server writes until a message `done` says is the last wanted, which must
    /// come within a bounded time.
    async fn read_until(
        &mut self,
        mut done: impl FnMut(&serde_json::Value) -> bool,
    ) -> Vec<serde_json::Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        let mut read = Vec::new();
        loop {
            let line = tokio::time::timeout_at(deadline, self.stdout.next_line())
                .await
                .unwrap_or_else(|_| panic!("no end in time; read so far: {read:?}"))
                .expect("stdout reads")
                .unwrap_or_else(|| {
                    panic!("stdout ended; read so far: {read:?}; {}", self.stderr())
                });
            let message: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
            let last = done(&message);
            read.push(message);
            if last {
                return read;
            }
        }
    }

    async fn answer_to(&mut self, id: u64) -> Vec<serde_json::Value> {
        self.read_until(|message| message["id"] == id && message.get("method").is_none())
            .await
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr buffer").clone()
    }
}

impl Drop for RawStdio {
    fn drop(&mut self) {
        demo::stop_gracefully(&mut self.child);
    }
}

/// Issue 29: on 2026-07-28 a change to the key's offer is told once, tagged, on the listening
/// stream that asked for it, and not again untagged, even to a client that sends
/// `notifications/initialized` as clients of the earlier versions do.
#[tokio::test]
async fn a_2026_07_28_change_is_told_once_on_the_listening_stream_over_stdio() {
    let demo = DemoStack::start().await;
    let mut server = RawStdio::start(&demo, &demo.read_key_file).await;
    server
        .send(&request_2026(1, "server/discover", serde_json::json!({})))
        .await;
    server.answer_to(1).await;
    server
        .send(&request_2026(2, "tools/list", serde_json::json!({})))
        .await;
    let mut heard = server.answer_to(2).await;
    server
        .send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    server.send(&listen_for(3, None)).await;
    heard.extend(
        server
            .read_until(|message| message["method"] == "notifications/subscriptions/acknowledged")
            .await,
    );
    demo.control("capability?path=/api/stuck&state=unpermitted")
        .await;
    server
        .send(&request_2026(
            4,
            "tools/call",
            serde_json::json!({"name": "read_stuck", "arguments": {}}),
        ))
        .await;
    heard.extend(server.answer_to(4).await);
    let mut tagged = heard
        .iter()
        .filter(|message| is_list_changed(message) && *subscription_of(message) == 3)
        .count();
    if tagged < 2 {
        heard.extend(
            server
                .read_until(|message| {
                    if is_list_changed(message) && *subscription_of(message) == 3 {
                        tagged += 1;
                    }
                    tagged == 2
                })
                .await,
        );
    }
    // Whatever the server sends with a change has gone out before it answers what follows.
    server
        .send(&request_2026(5, "ping", serde_json::json!({})))
        .await;
    heard.extend(server.answer_to(5).await);
    let changes: Vec<_> = heard
        .iter()
        .filter(|message| is_list_changed(message))
        .collect();
    assert_eq!(
        changes.len(),
        2,
        "tools and resources, each once: {changes:#?}"
    );
    assert!(
        changes.iter().all(|change| *subscription_of(change) == 3),
        "every change told on the listening stream: {changes:#?}"
    );
}

/// Over HTTPS, 2026-07-28 is stateless: a change is told on the listening stream that asked for
/// it, once, and not on the stream of the request that caused it.
#[tokio::test]
async fn a_2026_07_28_change_is_told_once_on_the_listening_stream_over_https() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.read_key_file);
    let post = |body: serde_json::Value, method: &'static str| {
        server
            .post(Some(&key), &body)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
    };
    post(
        request_2026(1, "tools/list", serde_json::json!({})),
        "tools/list",
    )
    .send()
    .await
    .expect("listed");
    let mut listening = post(listen_for(2, None), "subscriptions/listen")
        .send()
        .await
        .expect("listening");
    assert_eq!(listening.status(), 200);
    let mut stream = String::new();
    let mut heard = Vec::new();
    while !heard.iter().any(|message: &serde_json::Value| {
        message["method"] == "notifications/subscriptions/acknowledged"
    }) {
        heard.extend(next_events(&mut listening, &mut stream).await);
    }
    demo.control("capability?path=/api/stuck&state=unpermitted")
        .await;
    let called = post(
        request_2026(
            3,
            "tools/call",
            serde_json::json!({"name": "read_stuck", "arguments": {}}),
        ),
        "tools/call",
    )
    .header("mcp-name", "read_stuck")
    .send()
    .await
    .expect("called")
    .text()
    .await
    .expect("the call's answer");
    let answered = https::messages(&called);
    assert!(
        answered.iter().any(|message| message["id"] == 3),
        "{called}"
    );
    assert!(
        !answered.iter().any(is_list_changed),
        "nothing told on the call's own stream: {called}"
    );
    while heard
        .iter()
        .filter(|message| is_list_changed(message))
        .count()
        < 2
    {
        heard.extend(next_events(&mut listening, &mut stream).await);
    }
    let changes: Vec<_> = heard
        .iter()
        .filter(|message| is_list_changed(message))
        .collect();
    assert_eq!(changes.len(), 2, "{changes:#?}");
    assert!(
        changes.iter().all(|change| *subscription_of(change) == 2),
        "{changes:#?}"
    );
}

/// The messages of the next chunk of a server-sent event stream, within a bounded time.
async fn next_events(
    response: &mut reqwest::Response,
    stream: &mut String,
) -> Vec<serde_json::Value> {
    let chunk = tokio::time::timeout(Duration::from_secs(15), response.chunk())
        .await
        .expect("the stream goes on in time")
        .expect("the stream reads")
        .expect("the stream is still open");
    stream.push_str(&String::from_utf8_lossy(&chunk));
    let mut messages = Vec::new();
    while let Some(end) = stream.find("\n\n") {
        let event: String = stream.drain(..end + 2).collect();
        messages.extend(
            event
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .filter_map(|data| serde_json::from_str(data).ok()),
        );
    }
    messages
}

const STATUS: &str = "lemonfiber://read/status";
const HELD: &str = "lemonfiber://read/held";

/// What a member key asks to watch: a resource it is not offered, one it is, and one
/// that does not exist.
fn asked_of_a_member() -> SubscriptionFilter {
    let mut filter = SubscriptionFilter::new();
    filter.resource_subscriptions = Some(vec![
        STATUS.to_owned(),
        HELD.to_owned(),
        "lemonfiber://read/nothing".to_owned(),
    ]);
    filter
}

/// Issue 29: the acknowledgment names exactly what is watched for the key, leaving out what it
/// is not offered (here, before the client has asked for anything else, so the offer is read
/// for the listen itself).
#[tokio::test]
async fn a_listen_is_acknowledged_with_only_what_the_key_is_watched_over_stdio() {
    let demo = DemoStack::start().await;
    let server = mcp::connected_speaking(&demo, &demo.member_key_file, Opening::Discover).await;
    let subscription = server
        .client
        .listen(asked_of_a_member())
        .await
        .expect("subscriptions/listen is served");
    assert_eq!(
        subscription.acknowledged().resource_subscriptions,
        Some(vec![HELD.to_owned()])
    );
    let stderr = server.stderr();
    assert!(!stderr.contains("is not watched"), "{stderr}");
}

#[tokio::test]
async fn a_listen_is_acknowledged_with_only_what_the_key_is_watched_over_https() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.member_key_file);
    let transport = StreamableHttpClientTransport::with_client(
        server.client.clone(),
        StreamableHttpClientTransportConfig::with_uri(server.url.clone()).auth_header(key),
    );
    let client = Quiet
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("the client connects");
    let subscription = client
        .listen(asked_of_a_member())
        .await
        .expect("subscriptions/listen is served");
    assert_eq!(
        subscription.acknowledged().resource_subscriptions,
        Some(vec![HELD.to_owned()])
    );
}

/// Issue 29: closing stdin with a listening stream open (and a watch on it) ends the stream,
/// which is answered, and the process exits: the protocol library's wait for handlers still
/// running (5 s, after which it gives up with a warning and answers nothing) is not reached.
/// Stdin closes right after the acknowledgment, and the listen is the first request, whose
/// acknowledgment needs the offer read first.
#[tokio::test]
async fn closing_stdin_ends_a_listening_stream_and_the_process_exits() {
    let demo = DemoStack::start().await;
    let mut server = RawStdio::start(&demo, &demo.read_key_file).await;
    server.send(&listen_for(1, Some(&[STATUS]))).await;
    let acknowledged = server
        .read_until(|message| message["method"] == "notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(
        acknowledged.last().expect("acknowledged")["params"]["notifications"]["resourceSubscriptions"],
        serde_json::json!([STATUS])
    );
    drop(server.stdin.take());
    let ended = server.answer_to(1).await;
    let last = ended.last().expect("answered");
    assert!(
        last.get("result").is_some(),
        "the stream ends with its result: {last}"
    );
    let exited = tokio::time::timeout(Duration::from_secs(30), server.child.wait())
        .await
        .expect("the process exits")
        .expect("waited");
    assert!(exited.success(), "{exited}");
    let stderr = server.stderr();
    assert!(!stderr.contains("timed out draining"), "{stderr}");
}

/// Issue 29: a listen naming more resources than the key has room to watch (16) is acknowledged
/// with those that are watched, and not the rest.
#[tokio::test]
async fn a_listen_past_the_keys_watch_room_is_acknowledged_with_what_fits_over_https() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let key = demo.key(&demo.act_key_file);
    let transport = StreamableHttpClientTransport::with_client(
        server.client.clone(),
        StreamableHttpClientTransportConfig::with_uri(server.url.clone()).auth_header(key),
    );
    let client = Quiet
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("the client connects");
    let resources: Vec<String> = client
        .list_all_resources()
        .await
        .expect("listed")
        .into_iter()
        .map(|resource| resource.uri.clone())
        .collect();
    assert!(resources.len() > 17, "{resources:?}");
    let mut filter = SubscriptionFilter::new();
    filter.resource_subscriptions = Some(resources[..17].to_vec());
    let subscription = client.listen(filter).await.expect("listening");
    assert_eq!(
        subscription.acknowledged().resource_subscriptions,
        Some(resources[..16].to_vec()),
        "the key watches at most 16"
    );
}
