//! Where a client learns how to sign in: the protected resource's metadata (RFC 9728), naming
//! this server as its own authorization server, and that server's metadata (RFC 8414, also at
//! the OpenID discovery path, which some clients ask first). Both are made from the name the
//! client reached this server by, so each served name is a resource and an issuer of its own.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use super::{Here, SCOPE, json_answer};

pub async fn resource(here: Here) -> Response {
    json_answer(
        StatusCode::OK,
        &json!({
            "resource": here.resource(),
            "authorization_servers": [here.issuer],
            "scopes_supported": [SCOPE],
            "bearer_methods_supported": ["header"],
            "resource_name": "lemonfiber-mcp",
        }),
    )
}

pub async fn authorization_server(here: Here) -> Response {
    json_answer(
        StatusCode::OK,
        &json!({
            "issuer": here.issuer,
            "authorization_endpoint": here.url("/authorize"),
            "token_endpoint": here.url("/token"),
            "registration_endpoint": here.url("/register"),
            "revocation_endpoint": here.url("/revoke"),
            "revocation_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": [SCOPE],
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"],
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": true,
            "authorization_response_iss_parameter_supported": true,
        }),
    )
}
