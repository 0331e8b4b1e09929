//! Where a watch of a resource ends, and what a key may watch: rmcp's own client over stdio,
//! against the real binary and the demo stack. The notifications themselves are proved with the
//! Python SDK in tests/beyond.rs.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/mcp.rs"]
mod mcp;

use std::time::Duration;

use demo::DemoStack;
use mcp::Stdio;
use rmcp::model::{PaginatedRequestParams, SubscribeRequestParams, UnsubscribeRequestParams};

const STATUS: &str = "lemonfiber://read/status";

async fn server(demo: &DemoStack, key_file: &str) -> Stdio {
    Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &demo.address),
        ("LEMONFIBER_PIN", &demo.pin),
        ("LEMONFIBER_KEY_FILE", key_file),
        ("LEMONFIBER_WATCH_EVERY", "1"),
    ])
    .await
}

// resources/subscribe is how the versions before 2026-07-28 watch, which these tests speak.
#[allow(deprecated)]
async fn subscribe(server: &Stdio, uri: &str) -> Result<(), rmcp::ServiceError> {
    server
        .client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
}

async fn status_reads(demo: &DemoStack) -> usize {
    demo.requests()
        .await
        .iter()
        .filter(|request| request["path"] == "/api/status")
        .count()
}

#[tokio::test]
async fn a_watch_reads_every_so_often_and_ends_for_good_when_the_key_is_refused() {
    let demo = DemoStack::start().await;
    let server = server(&demo, &demo.act_key_file).await;
    subscribe(&server, STATUS).await.expect("watched");
    let before = status_reads(&demo).await;
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let watching = status_reads(&demo).await - before;
    assert!(
        (2..=5).contains(&watching),
        "read about once a second: {watching}"
    );
    demo.control("revoke/act").await;
    // One more read, a second on, is refused; the watch ends there.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let at_refusal = status_reads(&demo).await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert_eq!(
        status_reads(&demo).await,
        at_refusal,
        "the key is not sent again once refused"
    );
}

async fn tool_names(server: &Stdio) -> Vec<String> {
    let tools = server.client.list_all_tools().await.expect("tools");
    tools
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

/// Issue 27 item 9, F13-R9: a refusal learned in the background (a watch's read) reaches the
/// client at once, with nothing asked of it: `list_changed` and, since it asked for notices, a
/// notice; the open session then lists what a new session of the refused key lists. Notices are
/// logging, which the versions before 2026-07-28 (spoken here) still have.
#[allow(deprecated)]
#[tokio::test]
async fn a_refusal_a_watch_learns_is_told_at_once_and_the_listing_matches_a_new_sessions() {
    let demo = DemoStack::start().await;
    let server = server(&demo, &demo.act_key_file).await;
    server
        .client
        .set_level(rmcp::model::SetLevelRequestParams::new(
            rmcp::model::LoggingLevel::Info,
        ))
        .await
        .expect("notices asked for");
    let before = server.client.list_all_tools().await.expect("tools");
    assert!(before.len() > 30, "an act key's tools: {}", before.len());
    subscribe(&server, STATUS).await.expect("watched");
    let seen = server.watcher.tools_changed();
    demo.control("revoke/act").await;
    assert!(
        server.watcher.wait_for_tools_changed(seen).await,
        "told that the tools changed, with no request of the client's"
    );
    let listed = tool_names(&server).await;
    let a_new_session = tool_names(&mcp::connected(&demo, &demo.act_key_file).await).await;
    assert_eq!(listed, vec!["connection".to_owned()]);
    assert_eq!(
        listed, a_new_session,
        "the open session lists what a new one does"
    );
    let notices = server.watcher.notices();
    assert!(
        notices
            .iter()
            .any(|notice| notice.as_str().is_some_and(|said| said.contains("refused"))),
        "{notices:?}"
    );
    assert_eq!(
        server.watcher.tools_changed(),
        seen + 1,
        "told once, not once per way it was learned"
    );
}

#[tokio::test]
async fn unsubscribing_ends_the_watch() {
    let demo = DemoStack::start().await;
    let server = server(&demo, &demo.act_key_file).await;
    subscribe(&server, STATUS).await.expect("watched");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    #[allow(deprecated)]
    server
        .client
        .unsubscribe(UnsubscribeRequestParams::new(STATUS))
        .await
        .expect("unsubscribed");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = status_reads(&demo).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(status_reads(&demo).await, after, "no more reads");
}

#[tokio::test]
async fn a_key_watches_at_most_sixteen_resources_and_only_those_it_is_offered() {
    let demo = DemoStack::start().await;
    let server = server(&demo, &demo.act_key_file).await;
    let resources = server
        .client
        .list_resources(None::<PaginatedRequestParams>)
        .await
        .expect("listed")
        .resources;
    assert!(resources.len() > 17);
    for resource in &resources[..16] {
        subscribe(&server, &resource.uri)
            .await
            .expect("within the limit");
    }
    subscribe(&server, &resources[0].uri)
        .await
        .expect("watching the same resource again is not another watch");
    let refused = subscribe(&server, &resources[16].uri)
        .await
        .expect_err("one too many");
    assert!(refused.to_string().contains("at most 16"), "{refused}");
    #[allow(deprecated)]
    server
        .client
        .unsubscribe(UnsubscribeRequestParams::new(&resources[0].uri))
        .await
        .expect("unsubscribed");
    subscribe(&server, &resources[16].uri)
        .await
        .expect("room again");

    let member = server_for_member(&demo).await;
    let refused = subscribe(&member, STATUS).await.expect_err("not offered");
    assert!(refused.to_string().contains("read_status"), "{refused}");
    let unknown = subscribe(&member, "lemonfiber://read/nothing")
        .await
        .expect_err("no such resource");
    assert!(unknown.to_string().contains("no resource"), "{unknown}");
    subscribe(&member, "lemonfiber://read/held")
        .await
        .expect("a member watches its library");
}

async fn server_for_member(demo: &DemoStack) -> Stdio {
    server(demo, &demo.member_key_file).await
}
