//! The demo stack's web API: the contract's reads, actions, jobs and capabilities behind
//! integration keys, answered as the real core answers them.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::Demo;
use super::actions::{self, Acted};
use super::again::{self, Claim};
use super::claims;
use super::household::{Answer, Query};
use super::keys::Scope;
use super::pictures;
use super::requests::Received;
use crate::stack::credential::TOKEN_HEADER;

/// The reads a household member's key may reach.
const MEMBER_READS: [&str; 7] = [
    "/api/requests",
    "/api/held",
    "/api/held/{id}",
    "/api/held/{id}/poster",
    "/api/held/{id}/backdrop",
    "/api/watching",
    "/api/playing",
];
const BODY_LIMIT: usize = 64 * 1024;
/// Where a key link's claim is traded, with no key.
const CLAIM_PATH: &str = "/api/keys/claim";

pub fn router(demo: Arc<Demo>) -> Router {
    Router::new().fallback(answer).with_state(demo)
}

async fn answer(State(demo): State<Arc<Demo>>, request: Request) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().map(str::to_owned);
    let (scope, admitted) = match scope_of(&demo, request.headers()) {
        Some((scope, admitted)) => (Some(scope), admitted),
        None => (None, false),
    };
    let idempotency_key = again::key_of(request.headers());
    let key_sent = request
        .headers()
        .get(again::HEADER)
        .and_then(|key| key.to_str().ok())
        .map(str::to_owned);
    let body = axum::body::to_bytes(request.into_body(), BODY_LIMIT)
        .await
        .unwrap_or_default();
    let is_a_claim = method == Method::POST && path == CLAIM_PATH;
    demo.requests.record(Received {
        method: method.to_string(),
        path: path.clone(),
        query: query.clone(),
        // A claim is as good as the key it trades for: it is kept nowhere, in no log.
        body: serde_json::from_slice(&body).ok().filter(|_| !is_a_claim),
        scope: scope.as_ref().map(Scope::label),
        admitted,
        idempotency_key: key_sent,
    });
    if is_a_claim {
        return trade(&demo, &body);
    }
    let Some(scope) = scope.filter(|_| admitted) else {
        return problem(
            StatusCode::FORBIDDEN,
            "ADMIT-4",
            "This key is not admitted.",
            &["Ask the operator for a new integration key."],
        );
    };
    if demo.take_not_pinned() {
        return problem(
            StatusCode::FORBIDDEN,
            "ADMIT-11",
            "This key came from another machine over a connection its pin does not verify.",
            &["Reach the stack at the address and pin its key link gives."],
        );
    }
    if let Some(seconds) = demo.take_throttle() {
        let mut refused = problem(
            StatusCode::TOO_MANY_REQUESTS,
            "ADMIT-9",
            "Too many requests.",
            &["Wait, then ask again."],
        );
        refused
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        return refused;
    }
    let decoded = percent_encoding::percent_decode_str(&path)
        .decode_utf8_lossy()
        .into_owned();
    match (method, decoded.as_str()) {
        (Method::GET, "/api/capabilities") => {
            envelope(StatusCode::OK, "capabilities", capabilities(&demo, &scope))
        }
        (Method::POST, action) if action.starts_with("/api/actions/") => match idempotency_key {
            Ok(key) => act(
                &demo,
                &scope,
                action.trim_start_matches("/api/actions/"),
                &body,
                key.as_deref(),
            ),
            Err(()) => problem(
                StatusCode::BAD_REQUEST,
                "ASK-12",
                "An Idempotency-Key is one to 255 visible characters, given once.",
                &["Send the key once, as up to 255 visible characters with no spaces."],
            ),
        },
        (Method::GET, job) if job.starts_with("/api/jobs/") => {
            match state_for(&demo, &scope, "/api/jobs/{job}") {
                "unpermitted" => out_of_scope(),
                _ => {
                    let (status, answer) =
                        answer_of(demo.actions.job(job.trim_start_matches("/api/jobs/")));
                    respond(status, &answer)
                }
            }
        }
        (Method::GET, read) => self::read(&demo, &scope, read, query.as_deref()),
        _ => problem(
            StatusCode::METHOD_NOT_ALLOWED,
            "ASK-2",
            "That method is not served here.",
            &[],
        ),
    }
}

/// A key link's claim traded for its scope's key, sent with no key.
fn trade(demo: &Demo, body: &[u8]) -> Response {
    let claim = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|body| body.get("claim").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    let traded = demo.claims.trade(&claim);
    let key = traded.map(|scope| demo.keys.iter().find(|key| key.scope == scope));
    match key {
        Ok(Some(key)) => envelope(
            StatusCode::OK,
            "minted-key",
            json!({"name": format!("demo assistant ({})", key.scope.label()), "scope": key.scope.label(),
                   "purpose": "an assistant's way in", "secret": key.text}),
        ),
        Ok(None) => problem(
            StatusCode::FORBIDDEN,
            "ADMIT-4",
            claims::NotTraded::Unknown.summary(),
            &[],
        ),
        Err(why) => problem(
            StatusCode::FORBIDDEN,
            "ADMIT-4",
            why.summary(),
            &["Ask the operator for a new key link."],
        ),
    }
}

fn read(demo: &Demo, scope: &Scope, path: &str, query: Option<&str>) -> Response {
    match capability_of(path).map(|template| state_for(demo, scope, template)) {
        None | Some("unpermitted") => return out_of_scope(),
        Some("unconfigured") => return not_switched_on(),
        Some(_) => {}
    }
    if let Some((id, picture)) = pictures::picture(path) {
        let held = demo.household.read(
            &format!("/api/held/{id}"),
            &Query::parse(None),
            scope,
            false,
        );
        return match held {
            Answer::Envelope { .. } => {
                ([(header::CONTENT_TYPE, pictures::MEDIA_TYPE)], picture).into_response()
            }
            _ => problem(
                StatusCode::NOT_FOUND,
                "PLAY-9",
                "No title by that identifier is held, so it has no picture.",
                &[],
            ),
        };
    }
    match demo.household.read(
        path,
        &Query::parse(query),
        scope,
        demo.actions.downloads_paused(),
    ) {
        Answer::Envelope { kind, data } => envelope(StatusCode::OK, &kind, data),
        Answer::Lines(lines) => {
            let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
            ([(header::CONTENT_TYPE, "application/x-ndjson")], text).into_response()
        }
        Answer::File { media_type, bytes } => {
            ([(header::CONTENT_TYPE, media_type)], bytes).into_response()
        }
        Answer::Problem {
            status,
            code,
            summary,
        } => problem(
            StatusCode::from_u16(status).unwrap_or(StatusCode::NOT_FOUND),
            code,
            &summary,
            &[],
        ),
    }
}

fn act(
    demo: &Demo,
    scope: &Scope,
    action: &str,
    body: &Bytes,
    idempotency_key: Option<&str>,
) -> Response {
    let capability = format!("/api/actions/{action}");
    if !actions::is_key_callable(action) {
        return out_of_scope();
    }
    match state_for(demo, scope, &capability) {
        "available" => {}
        "unconfigured" => return not_switched_on(),
        _ => return out_of_scope(),
    }
    let body: Map<String, Value> = match serde_json::from_slice(body) {
        Ok(Value::Object(body)) => body,
        _ => {
            return problem(
                StatusCode::BAD_REQUEST,
                "ASK-6",
                "The action's body is not arguments it can read.",
                &[],
            );
        }
    };
    let caller = scope.label();
    if let Some(key) = idempotency_key {
        match demo.answered.claim(&caller, key, action, &body) {
            Claim::First => {}
            Claim::Again { status, answer } => return respond(status, &answer),
            Claim::Otherwise => {
                return problem(
                    StatusCode::BAD_REQUEST,
                    "ASK-13",
                    "This Idempotency-Key was already sent with another action or other arguments.",
                    &["Send a new key with each new attempt."],
                );
            }
        }
    }
    let (status, answer) = answer_of(demo.actions.act(action, &body));
    if let Some(key) = idempotency_key {
        demo.answered
            .keep(&caller, key, action, &body, status, &answer);
    }
    respond(status, &answer)
}

/// An action's or a job's answer: its status and envelope.
fn answer_of(acted: Acted) -> (u16, Value) {
    match acted {
        Acted::Answer { status, kind, data } => (status, enveloped(&kind, data)),
        Acted::Refused {
            status,
            code,
            summary,
        } => (
            status,
            enveloped(
                "error",
                problem_data(
                    code,
                    &summary,
                    &["Rehearse again, and act on the new offer."],
                ),
            ),
        ),
    }
}

fn respond(status: u16, answer: &Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        answer.to_string(),
    )
        .into_response()
}

/// A read or action whose setting is off answers as the core answers a request it refuses until
/// a setting is turned on: a refusal naming what to do, and no data. The contract's registry has one code
/// for a household feature that is not set up, PLAY-4 (503), so the demo uses it.
fn not_switched_on() -> Response {
    problem(
        StatusCode::SERVICE_UNAVAILABLE,
        "PLAY-4",
        "This is not switched on yet on this stack.",
        &["Ask the operator to switch it on."],
    )
}

fn out_of_scope() -> Response {
    problem(
        StatusCode::FORBIDDEN,
        "ADMIT-12",
        "This key's scope does not reach that.",
        &["Ask the operator for a key of a wider scope."],
    )
}

/// The scope of the key a request carries, and whether it is still admitted (not revoked).
fn scope_of(demo: &Demo, headers: &HeaderMap) -> Option<(Scope, bool)> {
    let token = headers.get(TOKEN_HEADER)?.to_str().ok()?;
    let key = demo.keys.iter().find(|key| key.text == token)?;
    Some((key.scope.clone(), !demo.is_revoked(&key.scope)))
}

/// Every path the contract lets a key use, as the core's capabilities read names them: each
/// read and the jobs path, and each key-callable action. Taken from the contract itself, not
/// from the server's catalogue, so a test of the server against the demo is not circular.
static CONTRACT_PATHS: LazyLock<Vec<(String, bool)>> = LazyLock::new(|| {
    let contract: Value =
        serde_json::from_str(include_str!("../../contract/openapi.json")).unwrap_or_default();
    let mut paths = Vec::new();
    for (path, item) in contract["paths"].as_object().into_iter().flatten() {
        if item.get("get").is_some() && path != "/api/capabilities" {
            paths.push((path.clone(), false));
        }
        if item["post"]["x-lemonfiber-key-callable"] == Value::Bool(true) {
            paths.push((path.clone(), true));
        }
    }
    paths
});

/// The contract path a read is for: `/api/held/ttl-x` → `/api/held/{id}`.
fn capability_of(path: &str) -> Option<&'static str> {
    CONTRACT_PATHS
        .iter()
        .filter(|(_, action)| !action)
        .map(|(template, _)| template.as_str())
        .find(|template| {
            let mut template_parts = template.split('/');
            let mut path_parts = path.split('/');
            loop {
                match (template_parts.next(), path_parts.next()) {
                    (None, None) => return true,
                    (Some(expected), Some(actual)) if expected.starts_with('{') => {
                        if actual.is_empty() {
                            return false;
                        }
                    }
                    (Some(expected), Some(actual)) if expected == actual => {}
                    _ => return false,
                }
            }
        })
}

/// What a scope may do with a path: a member only the household's reads, a read key no action;
/// a member's "playing now" is not switched on yet, so their key is told so and refused. The
/// control endpoint may set a path's state for every scope.
fn state_for(demo: &Demo, scope: &Scope, path: &str) -> &'static str {
    if let Some(state) = demo.capability_override(path) {
        return state;
    }
    let is_action = path.starts_with("/api/actions/");
    match scope {
        Scope::Member(_) if path == "/api/playing" => "unconfigured",
        Scope::Member(_) if MEMBER_READS.contains(&path) => "available",
        Scope::Member(_) => "unpermitted",
        Scope::Read if is_action => "unpermitted",
        _ => "available",
    }
}

/// Every read, job and key-callable action of the contract, in the state this scope has for it.
fn capabilities(demo: &Demo, scope: &Scope) -> Value {
    let states: BTreeMap<&str, &str> = CONTRACT_PATHS
        .iter()
        .map(|(path, _)| (path.as_str(), state_for(demo, scope, path)))
        .collect();
    json!({ "capabilities": states, "scope": scope.kind(), "stack": demo.household.stack })
}

/// The envelope every JSON answer of the core comes in.
pub(super) fn enveloped(kind: &str, data: Value) -> Value {
    json!({ "api_version": 1, "kind": kind, "data": data, "host": "demo" })
}

fn envelope(status: StatusCode, kind: &str, data: Value) -> Response {
    respond(status.as_u16(), &enveloped(kind, data))
}

fn problem(status: StatusCode, code: &str, summary: &str, remedies: &[&str]) -> Response {
    envelope(status, "error", problem_data(code, summary, remedies))
}

/// A refusal in the core's shape: a Problem whose remedies are objects, with the technical
/// `detail` the server must never hand over.
pub(super) fn problem_data(code: &str, summary: &str, remedies: &[&str]) -> Value {
    let remedies: Vec<Value> = remedies
        .iter()
        .map(|remedy| json!({ "action": remedy, "detail": null }))
        .collect();
    json!({
        "code": code,
        "severity": "error",
        "state": if remedies.is_empty() { "unknown" } else { "actionable" },
        "summary": summary,
        "meaning": summary,
        "remedies": remedies,
        "detail": "demo stack internals: /srv/lemonfiber/core",
        "cause": null,
    })
}
