//! The answers the HTTP mode gives itself rather than MCP: its JSON refusal (also sign-in's
//! OAuth error), too many at once or too soon (429 with `Retry-After`), and a refusal sent before
//! the body was read, which closes the connection.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

const CLOSE: HeaderValue = HeaderValue::from_static("close");

/// A refusal the server says itself: its status, and why, as JSON.
pub fn refusal(status: StatusCode, error: &str, description: &str) -> Response {
    let body = json!({ "error": error, "error_description": description });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A refusal sent before the request's body was read closes the connection, and says so: the
/// server drops what is left of the body, and a client that sent its next request on the same
/// connection would have it cut off unanswered.
pub fn unread(headers: &HeaderMap, refused: Response) -> Response {
    let has_body = headers.contains_key(header::CONTENT_LENGTH)
        || headers.contains_key(header::TRANSFER_ENCODING);
    if has_body { closing(refused) } else { refused }
}

/// `response`, closing the connection after it, and saying so.
pub fn closing(mut response: Response) -> Response {
    response.headers_mut().insert(header::CONNECTION, CLOSE);
    response
}

/// The refusal of a request from an address that has asked as often as it may for now.
pub fn over_the_address_allowance(seconds: u64) -> Response {
    too_many(
        seconds,
        "Too many requests from this address; wait before the next.",
    )
}

/// The refusal of a request that carries no key from a peer with as many under way as it may.
pub fn too_many_from_this_address() -> Response {
    too_many(
        1,
        "Too many requests from this address are under way at once; wait for one to finish.",
    )
}

pub fn too_many(seconds: u64, description: &str) -> Response {
    after(
        seconds,
        refusal(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_requests",
            description,
        ),
    )
}

/// A refusal that says when to try again.
pub fn after(seconds: u64, mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}
