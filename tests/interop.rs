//! Independent clients: the official Python MCP SDK (PyPI `mcp`, pinned in
//! tests/interop/requirements.txt, installed by this test into a venv of its own) against the real
//! binary, over stdio and over HTTPS with a bearer key, in its auto mode (2026-07-28) and its
//! legacy mode (2025-11-25), and signing in through its OAuth client as a provider-hosted
//! assistant does. F13-R6, F13-R8.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/python.rs"]
mod python;

use demo::DemoStack;
use python::{assert_listed_and_read, python_client, python_script};
use serde_json::Value;

fn assert_acted(seen: &Value) {
    let act = &seen["act"];
    assert!(
        act["offer"].as_str().is_some_and(|offer| !offer.is_empty()),
        "{seen}"
    );
    assert_eq!(act["without_offer"]["is_error"], true);
    assert!(
        act["without_offer"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Call rehearse_downloads_pause first")
    );
    assert_eq!(act["with_offer"]["is_error"], false, "{seen}");
    assert_eq!(act["with_offer"]["data"]["state"], "finished", "{seen}");
    assert_eq!(
        act["with_offer"]["data"]["answer"]["data"]["clients"][0]["now"], "stopped",
        "{seen}"
    );
}

fn assert_read(seen: &Value, tools: usize) {
    assert_eq!(seen["server"], "lemonfiber-mcp");
    assert_listed_and_read(seen, tools);
    assert_eq!(seen["first_tool_annotations"]["readOnlyHint"], true);
}

#[tokio::test]
async fn the_python_sdk_over_stdio_in_auto_and_legacy_modes() {
    let demo = DemoStack::start().await;
    let binary = demo::BINARY;
    let env = [
        format!("LEMONFIBER_ADDRESS={}", demo.address),
        format!("LEMONFIBER_PIN={}", demo.pin),
        format!("LEMONFIBER_KEY_FILE={}", demo.act_key_file),
    ];
    for (mode, protocol) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        demo.control("move").await;
        let mut args = vec![
            "--mode",
            mode,
            "--act",
            "--bundle",
            "support-2026-11-18.tar",
            "--command",
            binary,
        ];
        for pair in &env {
            args.extend(["--env", pair.as_str()]);
        }
        let seen = python_client(&args).await;
        assert_eq!(seen["protocol"], protocol, "{seen}");
        assert_read(&seen, 49);
        assert_acted(&seen);
        // Issue 29: the SDK validated each against its outputSchema, or the script had failed.
        assert_eq!(
            seen["streamed"],
            serde_json::json!({
                "read_logs": {"is_error": false, "fields": ["lines"]},
                "read_bundle_by_name": {"is_error": false, "fields": ["file"]},
                "read_held_by_id_poster": {"is_error": false, "fields": ["file"]},
            }),
            "{mode}"
        );
        assert!(
            seen["resources"]
                .as_array()
                .is_some_and(|resources| resources.len() == 35)
        );
    }
}

#[tokio::test]
async fn the_python_sdk_over_https_with_a_bearer_key_in_auto_and_legacy_modes() {
    let demo = DemoStack::start().await;
    let trust = demo.mcp_certificate();
    for (mode, protocol) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let seen = python_client(&[
            "--mode",
            mode,
            "--act",
            "--url",
            &demo.mcp_url,
            "--key-file",
            &demo.act_key_file,
            "--trust",
            &trust,
        ])
        .await;
        assert_eq!(seen["protocol"], protocol, "{seen}");
        assert_read(&seen, 49);
        assert_acted(&seen);
    }
}

#[tokio::test]
async fn two_clients_with_different_keys_at_once_each_get_their_own_tools() {
    let demo = DemoStack::start().await;
    let trust = demo.mcp_certificate();
    let read = [
        "--mode",
        "legacy",
        "--url",
        &demo.mcp_url,
        "--key-file",
        &demo.read_key_file,
        "--trust",
        &trust,
    ];
    let member = [
        "--mode",
        "auto",
        "--url",
        &demo.mcp_url,
        "--key-file",
        &demo.member_key_file,
        "--trust",
        &trust,
    ];
    let (read, member) = tokio::join!(python_client(&read), python_client(&member));
    assert_read(&read, 39);
    assert_eq!(
        member["tools"],
        serde_json::json!([
            "read_held",
            "read_held_by_id",
            "read_held_by_id_backdrop",
            "read_held_by_id_poster",
            "read_playing",
            "read_requests",
            "read_watching"
        ])
    );
    assert_eq!(member["read"]["kind"], "household");
}

/// The SDK's OAuth client signs in from the URL alone, as a provider-hosted assistant does: it
/// discovers, registers, sends the person to the page (the script fills it in with `credential`,
/// as a browser without script would), exchanges the code, uses and refreshes its token; then the
/// demo revokes the key, and the tools and the refresh grant both say so.
async fn signed_in(demo: &DemoStack, credential: &str, revoke: &str) -> Value {
    let folder = demo::Scratch::at(
        std::env::temp_dir().join(format!("lemonfiber-oauth-{}-{revoke}", std::process::id())),
    );
    std::fs::create_dir_all(&*folder).expect("a folder for the credential");
    let file = folder.join("credential");
    std::fs::write(&file, credential).expect("the credential is written");
    let revoke = format!("{}/revoke/{revoke}", demo.control);
    python_script(
        "oauth_client.py",
        &[
            "--url",
            &demo.mcp_url,
            "--trust",
            &demo.mcp_certificate(),
            "--credential-file",
            &file.display().to_string(),
            "--revoke",
            &revoke,
        ],
    )
    .await
}

fn assert_signed_in_refreshed_and_refused_once_revoked(seen: &Value, tools: usize) {
    let person = &seen["person"];
    assert_eq!(person["first_page"]["status"], 200, "{seen}");
    assert_eq!(person["first_page"]["scripts"], 0, "no script: {seen}");
    assert_eq!(
        person["first_page"]["actions"],
        serde_json::json!(["/authorize"])
    );
    assert!(
        person["first_page"]["csp"].as_str().is_some_and(
            |csp| csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'")
        ),
        "{seen}"
    );
    assert_eq!(
        person["second_page"]["buttons"],
        serde_json::json!(["allow", "deny"])
    );
    let page = person["second_page"]["text"].as_str().unwrap_or_default();
    assert!(
        page.contains("“Interop <test> assistant”"),
        "the client's own words, shown as such: {page}"
    );
    assert_eq!(person["sent_back_to"], "http://127.0.0.1:9/callback");
    assert_eq!(seen["client_id_is_sealed"], true);
    assert_eq!(seen["token_type"], "Bearer");
    assert_eq!(seen["expires_in"], 3600);
    assert_listed_and_read(seen, tools);
    assert_eq!(seen["after_refresh"]["is_error"], false, "{seen}");
    assert_eq!(seen["after_refresh"]["access_token_changed"], true);
    assert_eq!(seen["after_refresh"]["refresh_token_changed"], true);
    assert_eq!(
        seen["old_refresh_token"],
        serde_json::json!({"status": 400, "error": "invalid_grant"}),
        "a refresh token is used once"
    );
    assert_eq!(seen["after_revoke"]["is_error"], true, "{seen}");
    assert!(
        seen["after_revoke"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("refused"),
        "{seen}"
    );
    assert_eq!(
        seen["refresh_after_revoke"],
        serde_json::json!({"status": 400, "error": "invalid_grant"}),
        "{seen}"
    );
}

#[tokio::test]
async fn a_hosted_assistant_signs_in_through_the_python_sdks_oauth_client_with_a_key() {
    let demo = DemoStack::start().await;
    let key = demo.key(&demo.act_key_file);
    let seen = signed_in(&demo, &key, "act").await;
    assert_signed_in_refreshed_and_refused_once_revoked(&seen, 49);
    let page = seen["person"]["second_page"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        page.contains("This is an act key")
            && page.contains("It can change")
            && page.contains("Restart services"),
        "{page}"
    );
    let printed = seen.to_string();
    assert!(
        !printed.contains(&key),
        "the provider never holds the key itself"
    );
}

#[tokio::test]
async fn a_hosted_assistant_signs_in_through_the_python_sdks_oauth_client_with_a_key_link() {
    let demo = DemoStack::start().await;
    let seen = signed_in(&demo, &demo.link("member"), "member").await;
    let page = seen["person"]["second_page"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(page.contains("household member's key"), "{page}");
    assert!(
        page.contains("It can see ") && !page.contains("It can read "),
        "a member is told in the household's words: {page}"
    );
    assert_signed_in_refreshed_and_refused_once_revoked(&seen, 7);
    assert!(
        seen["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|tool| tool == "read_requests"))
    );
}
