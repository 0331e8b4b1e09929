//! Tools among other servers' (issue 29, item 7). Hosts that load several servers put the name
//! the person gave each server in front of its tools' names, so the names the issues gave stay,
//! in a shape that still fits once a host has done so; and a model that meets `restart` or `job`
//! beside another server's reads in its description that it is lemonfiber's. See
//! docs/architecture.md, "Names among other servers".

#[path = "support/demo.rs"]
mod demo;
#[path = "support/mcp.rs"]
mod mcp;

use std::collections::HashSet;

use demo::DemoStack;
use mcp::connected;

/// The longest namespacing a host was seen to add: Claude Code's `mcp__<server>__`, with the
/// server named as the docs name it.
const HOST_PREFIX: &str = "mcp__lemonfiber__";

/// What the strictest host takes as a tool's name once its prefix is on: 1 to 64 ASCII letters,
/// digits, `_` or `-` (tighter than the protocol's 128 with `.`).
fn fits_the_strictest_host(name: &str) -> bool {
    let prefixed = format!("{HOST_PREFIX}{name}");
    prefixed.len() <= 64
        && prefixed
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-'))
}

#[tokio::test]
async fn the_names_stay_and_fit_any_host_and_what_changes_the_stack_says_it_is_lemonfibers() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &demo.act_key_file).await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    for name in ["job", "restart", "update", "diagnose"] {
        assert!(tools.iter().any(|tool| tool.name == name), "{name}");
    }
    let mut seen = HashSet::new();
    let mut changes = 0;
    for tool in &tools {
        assert!(seen.insert(tool.name.clone()), "{} twice", tool.name);
        assert!(fits_the_strictest_host(&tool.name), "{}", tool.name);
        let changes_the_stack = tool
            .annotations
            .as_ref()
            .is_some_and(|annotations| annotations.read_only_hint == Some(false));
        changes += usize::from(changes_the_stack);
        if changes_the_stack || ["job", "connection"].contains(&tool.name.as_ref()) {
            let description = tool.description.as_deref().unwrap_or_default();
            assert!(
                description.contains("lemonfiber"),
                "{}: {description}",
                tool.name
            );
        }
    }
    assert!(changes >= 4, "{changes} tools change the stack");
    server.client.cancel().await.expect("the session ends");
}
