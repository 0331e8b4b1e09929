//! An act whose job the server follows tells a client that asked for progress, each time the job
//! is still running, before its result (issue 11).

#[path = "support/demo.rs"]
mod demo;
#[path = "support/mcp.rs"]
mod mcp;

use demo::DemoStack;
use mcp::{Stdio, text_of, unframe};
use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken, RequestParamsMeta};
use serde_json::json;

/// The server with an act key that follows a job for `job_wait` seconds, a demo whose jobs run
/// until released (so the server follows one for the whole wait), and an offer to update.
async fn ready_to_update(job_wait: &str) -> (DemoStack, Stdio, String) {
    let demo = DemoStack::start().await;
    let server = Stdio::start(&[
        ("LEMONFIBER_ADDRESS", &demo.address),
        ("LEMONFIBER_PIN", &demo.pin),
        ("LEMONFIBER_KEY_FILE", &demo.act_key_file),
        ("LEMONFIBER_JOB_WAIT", job_wait),
    ])
    .await;
    demo.control("jobs/hold").await;
    let rehearsed = server.call("rehearse_update", json!({})).await;
    let offer = unframe(&text_of(&rehearsed)).data["data"]["offer"]
        .as_str()
        .expect("an offer")
        .to_owned();
    (demo, server, offer)
}

#[tokio::test]
async fn a_long_act_with_a_progress_token_sends_progress_before_its_result() {
    let (demo, server, offer) = ready_to_update("2").await;

    let token = ProgressToken(NumberOrString::String("update-1".into()));
    let mut request = CallToolRequestParams::new("update").with_arguments(
        json!({"offer": offer})
            .as_object()
            .cloned()
            .expect("an object"),
    );
    request.set_progress_token(token.clone());
    let acted = server
        .client
        .call_tool(request)
        .await
        .expect("update answers");
    assert_eq!(acted.is_error, Some(false), "{}", text_of(&acted));
    assert_eq!(unframe(&text_of(&acted)).data["state"], "running");

    let progress = server.watcher.progress();
    assert!(progress.len() >= 2, "{progress:?}");
    assert!(
        progress
            .iter()
            .all(|note| note.progress_token == progress[0].progress_token),
        "one token: {progress:?} (asked with {token:?})"
    );
    assert!(
        progress
            .windows(2)
            .all(|pair| pair[0].progress < pair[1].progress),
        "progress only grows: {progress:?}"
    );
    let said = progress[0].message.as_deref().unwrap_or_default();
    assert!(
        said.starts_with("The stack is still working on update"),
        "{said}"
    );
    demo.control("jobs/release").await;
}

/// A cancelled request stops the following at once, never the job, and the log says so.
#[tokio::test]
async fn a_cancelled_act_stops_following_its_job_and_the_job_goes_on() {
    let (demo, server, offer) = ready_to_update("60").await;
    let request = CallToolRequestParams::new("update").with_arguments(
        json!({"offer": offer})
            .as_object()
            .cloned()
            .expect("an object"),
    );
    let handle = server
        .client
        .send_cancellable_request(
            rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(request)),
            rmcp::service::PeerRequestOptions::no_options(),
        )
        .await
        .expect("update is sent");
    // Once the server follows the job, the caller gives up.
    demo::eventually(|| !server.watcher.progress().is_empty()).await;
    handle
        .cancel(Some("the person changed their mind".into()))
        .await
        .expect("cancelled");
    demo::eventually(|| server.stderr().contains("no longer followed")).await;
    assert!(
        server
            .stderr()
            .contains("the request was cancelled: the job is no longer followed"),
        "{}",
        server.stderr()
    );
    // The job is the stack's: it goes on, and finishes when the stack lets it.
    let received = demo.requests().await;
    let job = received
        .iter()
        .filter_map(|request| request["path"].as_str()?.strip_prefix("/api/jobs/"))
        .next()
        .expect("the job was followed")
        .to_owned();
    assert!(
        received.iter().all(|request| request["method"] != "DELETE"),
        "nothing asked the stack to stop the job"
    );
    demo.control("jobs/release").await;
    let finished = server.call("job", json!({"job": job})).await;
    assert_eq!(unframe(&text_of(&finished)).data["state"], "finished");
}
