//! The demo's control endpoint, on loopback and apart from the stack's API, for tests.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use super::Demo;

pub fn router(demo: Arc<Demo>) -> Router {
    Router::new()
        .route("/requests", get(requests))
        .with_state(demo)
}

async fn requests(State(demo): State<Arc<Demo>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        demo.requests.json_lines(),
    )
}
