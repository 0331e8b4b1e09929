//! The demo's control endpoint, on loopback and apart from the stack's API, for tests.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};

use super::Demo;

pub fn router(demo: Arc<Demo>) -> Router {
    Router::new()
        .route("/requests", get(requests))
        .route("/move", post(move_state))
        .route("/jobs/hold", post(hold_jobs))
        .route("/jobs/release", post(release_jobs))
        .with_state(demo)
}

/// Moves the stack's state as if someone else had acted: every offer made before goes stale.
async fn move_state(State(demo): State<Arc<Demo>>) -> StatusCode {
    demo.actions
        .move_state("someone else restarted transmission");
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

async fn requests(State(demo): State<Arc<Demo>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        demo.requests.json_lines(),
    )
}
