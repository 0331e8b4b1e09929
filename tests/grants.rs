//! A refusal is final everywhere at once, and a grant can be ended before it expires: against the
//! real `lemonfiber-mcp http` and the demo stack, whose control endpoint revokes keys. A key the
//! stack refused is answered 401 `invalid_token` on every new request bearing it, raw or sealed
//! in a token, and after a restart too; a key not confirmed for a while is asked about again when
//! a session opens; a client that signs out (RFC 7009) ends its grant; and the operator lists
//! and ends grants with `lemonfiber-mcp grants`. F13-R8, F13-R9; issue 27 item 2.

#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;
#[path = "support/sign_in.rs"]
mod sign_in;

use std::time::Duration;

use demo::{BINARY, DemoStack, Scratch};
use http_server::{HttpServer, call, fresh_dir, initialize};
use reqwest::StatusCode;
use serde_json::Value;
use sign_in::SignIn;

fn signing_in(server: &HttpServer) -> SignIn {
    SignIn::new(server.url.trim_end_matches("/mcp"), &server.pin)
}

/// A new `initialize` with `bearer`: its status and `WWW-Authenticate`.
async fn opening(server: &HttpServer, bearer: &str) -> (StatusCode, String) {
    let answer = server
        .post(Some(bearer), &initialize())
        .send()
        .await
        .expect("answered");
    let challenge = answer
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().expect("text").to_owned())
        .unwrap_or_default();
    (answer.status(), challenge)
}

fn assert_sent_back_to_sign_in(opened: &(StatusCode, String), what: &str) {
    assert_eq!(opened.0, StatusCode::UNAUTHORIZED, "{what}");
    assert!(
        opened.1.contains("error=\"invalid_token\"") && opened.1.contains("resource_metadata="),
        "{what}: {}",
        opened.1
    );
}

/// Requests the stack received from a key of `scope` after it was revoked.
async fn sent_once_revoked(demo: &DemoStack, scope: &str) -> usize {
    demo.requests()
        .await
        .iter()
        .filter(|request| request["scope"] == scope && request["admitted"] == false)
        .count()
}

/// The access and refresh tokens of a sign-in with `key`, and the client's id.
async fn signed_in(sign_in: &SignIn, key: &str) -> (String, String, String) {
    let (client, code) = sign_in.code_for(key).await;
    let (status, tokens) = sign_in.exchange(&client, &code).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let token = |name: &str| tokens[name].as_str().expect("a token").to_owned();
    (token("access_token"), token("refresh_token"), client)
}

#[tokio::test]
async fn a_key_the_stack_refused_gets_401_on_every_new_request_raw_or_as_a_token_and_after_a_restart()
 {
    let demo = DemoStack::start().await;
    let state = Scratch::at(fresh_dir("refused-state"));
    let settings = [("LEMONFIBER_STATE", state.to_str().expect("a path"))];
    let server = http_server::http_server(&demo, &settings).await;
    let act_key = demo.key(&demo.act_key_file);
    let session = server.open_session(&act_key).await;
    let (access, _, _) = signed_in(&signing_in(&server), &demo.key(&demo.member_key_file)).await;
    assert_eq!(opening(&server, &access).await.0, StatusCode::OK);

    demo.control("revoke/act").await;
    demo.control("revoke/member").await;
    // The open session's call is where the stack says so; the session itself goes on, saying so.
    let said = server
        .in_session(
            &act_key,
            &session,
            &call(2, "read_status", serde_json::json!({})),
        )
        .await
        .text()
        .await
        .expect("the call's answer");
    assert!(said.contains("refused"), "{said}");
    assert_sent_back_to_sign_in(&opening(&server, &act_key).await, "the raw key");
    let still = server
        .in_session(
            &act_key,
            &session,
            &call(3, "read_status", serde_json::json!({})),
        )
        .await;
    assert_eq!(
        still.status(),
        StatusCode::OK,
        "the open session says so itself"
    );

    // The token's key was refused by no call yet: a session opened with it asks the stack again,
    // since what the stack said of it at sign-in is no longer fresh.
    tokio::time::sleep(Duration::from_secs(31)).await;
    assert_sent_back_to_sign_in(&opening(&server, &access).await, "the access token");
    assert_sent_back_to_sign_in(&opening(&server, &access).await, "and from then on");

    drop(server);
    let asked_before = sent_once_revoked(&demo, "act").await;
    let restarted = http_server::http_server(&demo, &settings).await;
    assert_sent_back_to_sign_in(&opening(&restarted, &act_key).await, "after a restart");
    assert_eq!(
        sent_once_revoked(&demo, "act").await,
        asked_before,
        "a revoked key is not sent to the stack again after a restart"
    );
}

fn grants_command(state: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let output = std::process::Command::new(BINARY)
        .arg("grants")
        .args(args)
        .env_clear()
        .env("LEMONFIBER_STATE", state)
        .output()
        .expect("the command runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn signing_out_ends_a_grant_and_the_operator_lists_and_ends_grants_with_nothing_secret_shown()
{
    let demo = DemoStack::start().await;
    let state = Scratch::at(fresh_dir("grants-state"));
    let settings = [("LEMONFIBER_STATE", state.to_str().expect("a path"))];
    let server = http_server::http_server(&demo, &settings).await;
    let sign_in = signing_in(&server);
    let metadata: Value = server
        .client
        .get(format!(
            "{}/.well-known/oauth-authorization-server",
            sign_in.base
        ))
        .send()
        .await
        .expect("discovery")
        .json()
        .await
        .expect("JSON");
    assert_eq!(
        metadata["revocation_endpoint"],
        format!("{}/revoke", sign_in.base)
    );

    let key = demo.key(&demo.member_key_file);
    let (first_access, first_refresh, first_client) = signed_in(&sign_in, &key).await;
    let (second_access, second_refresh, second_client) = signed_in(&sign_in, &key).await;
    let (code, listed, _) = grants_command(&state, &["list", "--json"]);
    assert_eq!(code, 0);
    let grants: Vec<Value> = listed
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    assert_eq!(grants.len(), 2, "{listed}");
    let (_, for_a_person, _) = grants_command(&state, &["list"]);
    for shown in [&listed, &for_a_person] {
        for secret in [
            &key,
            &first_access,
            &first_refresh,
            &second_access,
            &first_client,
        ] {
            assert!(!shown.contains(secret.as_str()), "nothing secret: {shown}");
        }
        assert!(!shown.contains("lfk_"), "{shown}");
    }
    assert!(for_a_person.contains("grants end"), "{for_a_person}");

    let revoke = |token: String, client: String| {
        let http = server.client.clone();
        let url = format!("{}/revoke", sign_in.base);
        async move {
            let form = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs([("token", token.as_str()), ("client_id", client.as_str())])
                .finish();
            http.post(url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form)
                .send()
                .await
                .expect("revocation answers")
        }
    };
    let other_client = revoke(first_refresh.clone(), second_client.clone()).await;
    assert_eq!(
        other_client.status(),
        StatusCode::BAD_REQUEST,
        "only its own client"
    );
    assert_eq!(opening(&server, &first_access).await.0, StatusCode::OK);
    let signed_out = revoke(first_refresh.clone(), first_client.clone()).await;
    assert_eq!(signed_out.status(), StatusCode::OK);
    assert_sent_back_to_sign_in(&opening(&server, &first_access).await, "signed out");
    let (status, refreshed) = sign_in
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &first_refresh),
            ("client_id", &first_client),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        refreshed["error_description"]
            .as_str()
            .unwrap_or_default()
            .contains("has ended"),
        "{refreshed}"
    );
    let made_up = revoke("lfmcp-rt1.AAAA".to_owned(), first_client.clone()).await;
    assert_eq!(made_up.status(), StatusCode::OK, "RFC 7009: as if revoked");

    let (_, listed, _) = grants_command(&state, &["list", "--json"]);
    let left: Vec<Value> = listed
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    assert_eq!(left.len(), 1, "{listed}");
    let id = left[0]["id"].as_str().expect("an id").to_owned();
    assert_eq!(opening(&server, &second_access).await.0, StatusCode::OK);
    let (code, said, _) = grants_command(&state, &["end", &id]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains(&id), "{said}");
    assert_sent_back_to_sign_in(
        &opening(&server, &second_access).await,
        "ended by the operator",
    );
    let (status, _) = sign_in
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &second_refresh),
            ("client_id", &second_client),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (code, _, refused) = grants_command(&state, &["end", "../seal-secret"]);
    assert_eq!(code, 2);
    assert!(refused.contains("is not a grant id"), "{refused}");
    let (code, _, refused) = grants_command(&state, &["end", &id]);
    assert_eq!(code, 2);
    assert!(
        refused.contains("has ended or expired already"),
        "{refused}"
    );
    assert!(
        state.join("seal-secret").exists(),
        "nothing else was touched"
    );
    let (code, _, refused) = grants_command(&state.join("not-there"), &["list"]);
    assert_eq!(code, 2);
    assert!(refused.contains("no state folder"), "{refused}");
}
