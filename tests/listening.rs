//! 2026-07-28 clients hear that a key's offer changed on a `subscriptions/listen` stream, over
//! stdio and over HTTPS, as clients of earlier versions hear it as a notification (issue 11).

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
