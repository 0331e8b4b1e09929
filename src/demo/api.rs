//! The demo stack's web API: the contract's reads and capabilities behind integration keys.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::Demo;
use super::household::{Answer, Query};
use super::keys::Scope;
use super::requests::Received;
use crate::catalogue;
use crate::stack::credential::TOKEN_HEADER;

/// The reads a household member's key may reach.
const MEMBER_READS: [&str; 5] = [
    "/api/requests",
    "/api/held",
    "/api/held/{id}",
    "/api/watching",
    "/api/playing",
];

pub fn router(demo: Arc<Demo>) -> Router {
    Router::new().fallback(answer).with_state(demo)
}

async fn answer(State(demo): State<Arc<Demo>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let query = request.uri().query().map(str::to_owned);
    let scope = scope_of(&demo, request.headers());
    demo.requests.record(Received {
        method: request.method().to_string(),
        path: path.clone(),
        query: query.clone(),
        scope: scope.as_ref().map(Scope::label),
    });
    let Some(scope) = scope else {
        return problem(
            StatusCode::FORBIDDEN,
            "ADMIT-4",
            "This key is not admitted.",
            &["Ask the operator for a new integration key."],
        );
    };
    if request.method() != axum::http::Method::GET {
        return problem(
            StatusCode::METHOD_NOT_ALLOWED,
            "ASK-2",
            "This demo stack answers reads only.",
            &[],
        );
    }
    if path == "/api/capabilities" {
        return envelope(
            StatusCode::OK,
            "capabilities",
            capabilities(&scope, &demo.household.stack),
        );
    }
    let decoded = percent_encoding::percent_decode_str(&path)
        .decode_utf8_lossy()
        .into_owned();
    let template = capability_of(&decoded);
    if matches!(scope, Scope::Member(_))
        && !template.is_some_and(|template| MEMBER_READS.contains(&template))
    {
        return problem(
            StatusCode::FORBIDDEN,
            "ADMIT-12",
            "This key's scope does not reach that.",
            &["Ask the operator."],
        );
    }
    match demo
        .household
        .read(&decoded, &Query::parse(query.as_deref()), &scope)
    {
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

fn scope_of(demo: &Demo, headers: &HeaderMap) -> Option<Scope> {
    let token = headers.get(TOKEN_HEADER)?.to_str().ok()?;
    demo.keys
        .iter()
        .find(|key| key.text == token)
        .map(|key| key.scope.clone())
}

/// The contract path a request is for: `/api/held/ttl-x` → `/api/held/{id}`.
fn capability_of(path: &str) -> Option<&'static str> {
    catalogue::reads()
        .map(|tool| tool.capability)
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

fn capabilities(scope: &Scope, stack: &str) -> Value {
    let mut states = BTreeMap::new();
    for tool in catalogue::reads() {
        let reaches = !matches!(scope, Scope::Member(_)) || MEMBER_READS.contains(&tool.capability);
        states.insert(
            tool.capability,
            if reaches { "available" } else { "unpermitted" },
        );
    }
    json!({ "capabilities": states, "scope": scope.kind(), "stack": stack })
}

fn envelope(status: StatusCode, kind: &str, data: Value) -> Response {
    let body = json!({ "api_version": 1, "kind": kind, "data": data, "host": "demo" });
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.to_string(),
    )
        .into_response()
}

fn problem(status: StatusCode, code: &str, summary: &str, remedies: &[&str]) -> Response {
    let data = json!({
        "code": code,
        "severity": "error",
        "state": "refused",
        "summary": summary,
        "meaning": summary,
        "remedies": remedies,
    });
    let mut response = envelope(status, "error", data);
    *response.status_mut() = status;
    response
}
