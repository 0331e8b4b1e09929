//! The offer is the only consent there is (the stack acts on a call with no offer at all), so
//! the offer a rehearsal hands out is sealed to the key, the action, the rehearsed arguments and
//! an expiry. Anything else is refused before the stack is asked, saying why; the right one acts
//! once, with exactly what was rehearsed. The real `lemonfiber-mcp stdio` against the demo stack.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/mcp.rs"]
mod mcp;

use std::time::Duration;

use base64::Engine as _;
use demo::{DemoStack, Scratch};
use mcp::{Stdio, text_of, unframe};
use serde_json::{Value, json};

async fn connected(demo: &DemoStack, extra: &[(&str, &str)]) -> Stdio {
    let mut env = vec![
        ("LEMONFIBER_ADDRESS", demo.address.as_str()),
        ("LEMONFIBER_PIN", demo.pin.as_str()),
        ("LEMONFIBER_KEY_FILE", demo.act_key_file.as_str()),
        ("LEMONFIBER_JOB_WAIT", "5"),
    ];
    env.extend_from_slice(extra);
    Stdio::start(&env).await
}

/// The actions the demo stack was asked to take, rehearsals left out, with their bodies.
async fn acts(demo: &DemoStack) -> Vec<Value> {
    demo.requests()
        .await
        .into_iter()
        .filter(|request| request["method"] == "POST" && request["body"]["dry_run"] != true)
        .collect()
}

async fn offer_of(server: &Stdio, rehearsal: &str, arguments: Value) -> String {
    let rehearsed = server.call(rehearsal, arguments).await;
    assert_eq!(rehearsed.is_error, Some(false), "{}", text_of(&rehearsed));
    unframe(&text_of(&rehearsed)).data["data"]["offer"]
        .as_str()
        .expect("an offer")
        .to_owned()
}

/// Acts with `offer` and expects a refusal before the stack that says `why`.
async fn refused(server: &Stdio, act: &str, offer: &str, why: &str) {
    let result = server.call(act, json!({ "offer": offer })).await;
    assert_eq!(result.is_error, Some(true), "{act}: {}", text_of(&result));
    let text = text_of(&result);
    assert!(
        text.contains("refused before anything was sent to the stack") && text.contains(why),
        "{act} should say {why:?}: {text}"
    );
    assert!(text.contains("again"), "it says to rehearse again: {text}");
}

/// Changes one byte inside the sealed part of an offer, as someone editing the arguments in it
/// would, and seals it again as well as they can without the secret.
fn tampered(offer: &str) -> String {
    let (prefix, sealed) = offer.split_at(offer.find('.').expect("a prefix") + 1);
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut bytes = engine.decode(sealed).expect("base64");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    format!("{prefix}{}", engine.encode(bytes))
}

#[tokio::test]
async fn only_the_offer_a_rehearsal_handed_out_acts_once_with_what_was_rehearsed() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &[]).await;

    // Made up, or guessed the way the demo's offers once could be.
    for made_up in ["lfo-restart-3", "lfo-restart-0", "lfmcp-offer1.AAAA", "yes"] {
        refused(
            &server,
            "restart",
            made_up,
            "not an offer this server handed out",
        )
        .await;
    }
    let offer = offer_of(&server, "rehearse_restart", json!({"services": ["sonarr"]})).await;
    refused(
        &server,
        "restart",
        &tampered(&offer),
        "not an offer this server handed out",
    )
    .await;
    // Another action's offer: pausing was rehearsed, not resuming.
    let pause = offer_of(&server, "rehearse_downloads_pause", json!({})).await;
    refused(&server, "downloads_resume", &pause, "another action").await;
    assert!(
        acts(&demo).await.is_empty(),
        "nothing refused reached the stack"
    );

    let restarted = server.call("restart", json!({ "offer": offer })).await;
    assert_eq!(restarted.is_error, Some(false), "{}", text_of(&restarted));
    assert_eq!(
        unframe(&text_of(&restarted)).data["answer"]["data"]["plan"]["services"],
        json!(["sonarr"]),
        "exactly what was rehearsed was restarted"
    );
    // Replayed after the act.
    refused(&server, "restart", &offer, "already acted on").await;

    let acts = acts(&demo).await;
    assert_eq!(acts.len(), 1, "acted exactly once: {acts:?}");
    assert_eq!(acts[0]["path"], "/api/actions/restart");
    assert_eq!(acts[0]["body"]["services"], json!(["sonarr"]), "{acts:?}");
    let stack_offer = acts[0]["body"]["offer"]
        .as_str()
        .expect("the stack's offer");
    assert!(
        stack_offer.starts_with("lfo-") && stack_offer.len() >= 32 && stack_offer != offer,
        "the stack is sent its own (unguessable) offer, not the sealed one"
    );
    assert!(
        !text_of(&restarted).contains(stack_offer),
        "the stack's offer is never handed to the assistant"
    );

    let audit = server.stderr();
    for why in [
        "offer-not-sealed-here",
        "offer-of-another-action",
        "offer-spent",
    ] {
        assert!(
            audit.contains(&format!("\"why\":\"{why}\"")),
            "the audit line says {why}: {audit}"
        );
    }
}

#[tokio::test]
async fn an_expired_offer_is_refused_before_the_stack() {
    let demo = DemoStack::start().await;
    let server = connected(&demo, &[("LEMONFIBER_OFFER_LIFE", "1")]).await;
    let offer = offer_of(&server, "rehearse_downloads_pause", json!({})).await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    refused(&server, "downloads_pause", &offer, "expired").await;
    assert!(acts(&demo).await.is_empty());
}

#[tokio::test]
async fn an_offer_sealed_by_another_server_is_not_one_this_server_handed_out() {
    let demo = DemoStack::start().await;
    let first = connected(&demo, &[]).await;
    let second = connected(&demo, &[]).await;
    let offer = offer_of(&first, "rehearse_downloads_pause", json!({})).await;
    refused(
        &second,
        "downloads_pause",
        &offer,
        "not an offer this server handed out",
    )
    .await;
    assert!(acts(&demo).await.is_empty());
}

/// HTTP replicas that share their state folder share the seal and the record of offers acted on:
/// an offer acted on through one is refused by the other before the stack is asked.
#[tokio::test]
async fn replicas_sharing_their_state_refuse_each_others_replays() {
    let demo = DemoStack::start().await;
    let state_folder = Scratch::at(http_server::fresh_dir("shared-state"));
    let state = state_folder.display().to_string();
    let first = http_server::http_server(&demo, &[("LEMONFIBER_STATE", &state)]).await;
    let second = http_server::http_server(&demo, &[("LEMONFIBER_STATE", &state)]).await;
    let act = demo.key(&demo.act_key_file);
    let result = |body: String| {
        https::messages(&body)
            .into_iter()
            .find(|message| message["result"].is_object())
            .expect("a result")["result"]
            .clone()
    };
    let on_first = first.open_session(&act).await;
    let rehearsed = first
        .in_session(
            &act,
            &on_first,
            &http_server::call(2, "rehearse_downloads_pause", json!({})),
        )
        .await;
    let rehearsed = result(rehearsed.text().await.expect("a body"));
    let offer = rehearsed["structuredContent"]["data"]["offer"]
        .as_str()
        .expect("an offer")
        .to_owned();
    let acted = first
        .in_session(
            &act,
            &on_first,
            &http_server::call(3, "downloads_pause", json!({"offer": offer})),
        )
        .await;
    assert_eq!(
        result(acted.text().await.expect("a body"))["isError"],
        false
    );
    let on_second = second.open_session(&act).await;
    let replayed = second
        .in_session(
            &act,
            &on_second,
            &http_server::call(4, "downloads_pause", json!({"offer": offer})),
        )
        .await;
    let replayed = result(replayed.text().await.expect("a body"));
    assert_eq!(replayed["isError"], true);
    let said = replayed["content"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains("already acted on"), "{said}");
    assert_eq!(
        acts(&demo).await.len(),
        1,
        "acted once, through either replica"
    );
}
