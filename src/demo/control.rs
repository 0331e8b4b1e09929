//! The demo's control endpoint, on loopback and apart from the stack's API, for tests: what the
//! stack received, and ways to change it under a running server.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};

use super::Demo;
use super::keys::{MEMBER, Scope};

pub fn router(demo: Arc<Demo>) -> Router {
    Router::new()
        .route("/requests", get(requests))
        .route("/move", post(move_state))
        .route("/downloads/pause", post(pause_downloads))
        .route("/downloads/resume", post(resume_downloads))
        .route("/jobs/hold", post(hold_jobs))
        .route("/jobs/release", post(release_jobs))
        .route("/revoke/{scope}", post(revoke))
        .route("/capability", post(capability))
        .route("/throttle", post(throttle))
        .route("/not-pinned", post(not_pinned))
        .route("/claims/expire", post(expire_claims))
        .with_state(demo)
}

async fn requests(State(demo): State<Arc<Demo>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        demo.requests.json_lines(),
    )
}

/// Moves the stack's state as if someone else had acted: every offer made before goes stale.
async fn move_state(State(demo): State<Arc<Demo>>) -> StatusCode {
    demo.actions
        .move_state("someone else restarted transmission");
    StatusCode::NO_CONTENT
}

/// Every download is paused as if someone else had paused them: the status changes.
async fn pause_downloads(State(demo): State<Arc<Demo>>) -> StatusCode {
    demo.actions.set_downloads_paused(true);
    StatusCode::NO_CONTENT
}

async fn resume_downloads(State(demo): State<Arc<Demo>>) -> StatusCode {
    demo.actions.set_downloads_paused(false);
    StatusCode::NO_CONTENT
}

/// Jobs started from now on run until released, so a test can see one still running.
async fn hold_jobs(State(demo): State<Arc<Demo>>) -> StatusCode {
    demo.actions.hold_jobs();
    StatusCode::NO_CONTENT
}

async fn release_jobs(State(demo): State<Arc<Demo>>) -> StatusCode {
    demo.actions.release_jobs();
    StatusCode::NO_CONTENT
}

/// Revokes the key of a scope (`read`, `act` or `member`): from now on it is refused as unknown.
async fn revoke(State(demo): State<Arc<Demo>>, Path(scope): Path<String>) -> StatusCode {
    let scope = match scope.as_str() {
        "read" => Scope::Read,
        "act" => Scope::Act,
        "member" => Scope::Member(MEMBER.to_owned()),
        _ => return StatusCode::NOT_FOUND,
    };
    demo.revoke(&scope);
    StatusCode::NO_CONTENT
}

/// Sets the state of one path for every scope: `?path=/api/stuck&state=unpermitted`.
async fn capability(
    State(demo): State<Arc<Demo>>,
    Query(query): Query<HashMap<String, String>>,
) -> StatusCode {
    let state = match query.get("state").map(String::as_str) {
        Some("available") => "available",
        Some("unconfigured") => "unconfigured",
        Some("unpermitted") => "unpermitted",
        _ => return StatusCode::BAD_REQUEST,
    };
    let Some(path) = query.get("path") else {
        return StatusCode::BAD_REQUEST;
    };
    demo.set_capability(path, state);
    StatusCode::NO_CONTENT
}

/// The next request to the stack is answered `429` with `Retry-After: <seconds>`.
async fn throttle(
    State(demo): State<Arc<Demo>>,
    Query(query): Query<HashMap<String, String>>,
) -> StatusCode {
    match query
        .get("seconds")
        .and_then(|seconds| seconds.parse().ok())
    {
        Some(seconds) => {
            demo.throttle_next(seconds);
            StatusCode::NO_CONTENT
        }
        None => StatusCode::BAD_REQUEST,
    }
}

/// The next request to the stack is answered as the core answers a key that came from another
/// machine over a connection its pin does not verify: `403` with `ADMIT-11`.
async fn not_pinned(State(demo): State<Arc<Demo>>) -> StatusCode {
    demo.not_pinned_next();
    StatusCode::NO_CONTENT
}

/// Every key link's claim expires now, as ten minutes would have it.
async fn expire_claims(State(demo): State<Arc<Demo>>) -> StatusCode {
    demo.claims.expire_all();
    StatusCode::NO_CONTENT
}
