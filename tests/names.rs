//! Tools among other servers' (issue 29, item 7): hosts load several servers and namespace each
//! tool by the server's name, so the names the issues gave stay, in the shape the protocol asks
//! for; and every title a person chooses or approves by names the lemonfiber stack, as does
//! every description of a tool that changes it. See docs/architecture.md, "Names among other
//! servers".

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
#[path = "support/mcp.rs"]
mod mcp;

use demo::DemoStack;
use mcp::connected;

/// What the protocol asks of a tool's name: 1 to 128 ASCII letters, digits, `_`, `-` or `.`.
fn shaped_as_the_protocol_asks(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'))
}

#[tokio::test]
async fn every_title_names_lemonfiber_and_every_change_says_it_acts_on_it() {
    let demo = DemoStack::start().await;
    for key_file in [&demo.act_key_file, &demo.member_key_file] {
        let server = connected(&demo, key_file).await;
        let tools = server.client.list_all_tools().await.expect("tools/list");
        assert!(tools.len() > 5, "{key_file}: {} tools", tools.len());
        for tool in &tools {
            assert!(shaped_as_the_protocol_asks(&tool.name), "{}", tool.name);
            let title = tool.title.as_deref().unwrap_or_default();
            assert!(title.contains("lemonfiber"), "{}: {title}", tool.name);
            let annotated = tool
                .annotations
                .as_ref()
                .and_then(|annotations| annotations.title.as_deref());
            assert_eq!(annotated, Some(title), "{}", tool.name);
            let changes = tool
                .annotations
                .as_ref()
                .is_some_and(|annotations| annotations.read_only_hint == Some(false));
            let description = tool.description.as_deref().unwrap_or_default();
            assert!(
                !(changes || tool.name == "job") || description.contains("lemonfiber"),
                "{}: {description}",
                tool.name
            );
        }
        let resources = server
            .client
            .list_all_resources()
            .await
            .expect("resources/list");
        let templates = server
            .client
            .list_all_resource_templates()
            .await
            .expect("resources/templates/list");
        let titles = resources
            .iter()
            .map(|resource| resource.title.clone())
            .chain(templates.iter().map(|template| template.title.clone()));
        for title in titles {
            let title = title.unwrap_or_default();
            assert!(title.contains("lemonfiber"), "a resource: {title}");
        }
        server.client.cancel().await.expect("the session ends");
    }
}

/// The names issues gave, which hosts show under the server's own name, are kept.
#[tokio::test]
async fn the_names_the_issues_gave_are_kept() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file).await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    for name in ["job", "restart", "update", "diagnose"] {
        assert!(tools.iter().any(|tool| tool.name == name), "{name}");
    }
    server.client.cancel().await.expect("the session ends");
}
