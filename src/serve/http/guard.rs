//! What every request to the HTTP mode must show before anything else happens: a served name in
//! `Host`, an allowed `Origin` if any, a protocol version this server speaks, a body within the
//! cap, and an integration key as its bearer. Each refusal is a clear JSON answer.

use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::mcp::server::PROTOCOL_VERSIONS;
use crate::stack::credential::Key;

/// The largest request body taken; a larger one is refused before it is read.
pub const BODY_LIMIT: u64 = 4 * 1024 * 1024;
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

pub fn refusal(status: StatusCode, error: &str, description: &str) -> Response {
    let body = json!({ "error": error, "error_description": description });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A request refused before it reached MCP: its status, and a JSON error saying why.
#[derive(Debug)]
pub struct Refused {
    pub status: StatusCode,
    error: &'static str,
    description: String,
    /// The `WWW-Authenticate` challenge, for a request without a usable key.
    challenge: Option<String>,
}

impl Refused {
    fn new(status: StatusCode, error: &'static str, description: impl Into<String>) -> Refused {
        Refused {
            status,
            error,
            description: description.into(),
            challenge: None,
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let mut response = refusal(self.status, self.error, &self.description);
        if let Some(challenge) = self
            .challenge
            .and_then(|challenge| HeaderValue::from_str(&challenge).ok())
        {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
        }
        response
    }
}

/// The host a `Host` header names, without its port, in lower case.
fn host_of(value: &str) -> String {
    let value = value.trim().to_ascii_lowercase();
    if let Some(rest) = value.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default().to_owned();
    }
    value
        .rsplit_once(':')
        .map_or(value.clone(), |(host, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) && !host.contains(':') {
                host.to_owned()
            } else {
                value.clone()
            }
        })
}

/// The checks that need no key: `Host`, `Origin`, the protocol version and the body's size.
pub struct Checks {
    names: Vec<String>,
    origins: Vec<String>,
}

impl Checks {
    /// `origins`: the allowed browser origins; by default, the served names at the served port.
    pub fn new(names: &[String], origins: Option<Vec<String>>, port: u16) -> Checks {
        let origins = origins.unwrap_or_else(|| {
            names
                .iter()
                .map(|name| {
                    let host = if name.contains(':') {
                        format!("[{name}]")
                    } else {
                        name.clone()
                    };
                    if port == 443 {
                        format!("https://{host}")
                    } else {
                        format!("https://{host}:{port}")
                    }
                })
                .collect()
        });
        Checks {
            names: names.iter().map(|name| name.to_ascii_lowercase()).collect(),
            origins: origins
                .iter()
                .map(|origin| origin.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
        }
    }

    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refused> {
        if headers.get_all(header::HOST).iter().count() > 1 {
            return Err(Refused::new(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "The request names more than one Host.",
            ));
        }
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .map(host_of);
        // A target in absolute form names a host of its own, which must be the one in Host.
        if let Some(authority) = uri.authority()
            && host.as_deref() != Some(host_of(authority.as_str()).as_str())
        {
            return Err(Refused::new(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "The request's target names another host than its Host header.",
            ));
        }
        match host {
            None => {
                return Err(Refused::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "The request names no Host.",
                ));
            }
            Some(host) if !self.names.contains(&host) => {
                return Err(Refused::new(
                    StatusCode::FORBIDDEN,
                    "forbidden",
                    "This server is not served under that Host name.",
                ));
            }
            Some(_) => {}
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin
                .to_str()
                .unwrap_or_default()
                .trim_end_matches('/')
                .to_ascii_lowercase();
            if !self.origins.contains(&origin) {
                return Err(Refused::new(
                    StatusCode::FORBIDDEN,
                    "forbidden",
                    "Requests from that Origin are not allowed.",
                ));
            }
        }
        if let Some(version) = headers.get(PROTOCOL_VERSION_HEADER) {
            let version = version.to_str().unwrap_or_default();
            if !PROTOCOL_VERSIONS
                .iter()
                .any(|served| served.as_str() == version)
            {
                let served: Vec<&str> = PROTOCOL_VERSIONS.iter().map(|v| v.as_str()).collect();
                let description = format!(
                    "Unsupported MCP-Protocol-Version; this server speaks {}.",
                    served.join(", ")
                );
                return Err(Refused::new(
                    StatusCode::BAD_REQUEST,
                    "unsupported_protocol_version",
                    description,
                ));
            }
        }
        let length = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
        if length.is_some_and(|length| length > BODY_LIMIT) {
            return Err(Refused::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "The request body is larger than 4 MiB.",
            ));
        }
        Ok(())
    }
}

fn challenge(error: Option<&str>) -> String {
    match error {
        Some(error) => format!("Bearer realm=\"lemonfiber-mcp\", error=\"{error}\""),
        None => "Bearer realm=\"lemonfiber-mcp\"".to_owned(),
    }
}

impl Refused {
    /// The stack refused this key: it is never sent again, and a new one is needed (F13-R9).
    pub fn key_refused() -> Refused {
        Refused {
            challenge: Some(challenge(Some("invalid_token"))),
            ..Refused::new(
                StatusCode::UNAUTHORIZED,
                "invalid_token",
                "The stack refused this key: it is wrong, revoked, or unknown to the stack. It will not be sent to \
                 the stack again; a new key is needed.",
            )
        }
    }
}

/// The key a request carries as `Authorization: Bearer <integration key>` (F13-R8). A refusal
/// never repeats what was sent.
pub fn bearer(headers: &HeaderMap) -> Result<Key, Refused> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        let description = "Every request needs Authorization: Bearer <integration key>.";
        return Err(Refused {
            challenge: Some(challenge(None)),
            ..Refused::new(StatusCode::UNAUTHORIZED, "invalid_request", description)
        });
    };
    let value = value.to_str().unwrap_or_default().trim();
    let token = value
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    match token.map(Key::parse) {
        Some(Ok(key)) => Ok(key),
        _ => {
            let description =
                "The bearer is not an integration key (lfk_ followed by lower-case hex).";
            Err(Refused {
                challenge: Some(challenge(Some("invalid_token"))),
                ..Refused::new(StatusCode::UNAUTHORIZED, "invalid_token", description)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_str(value).expect("a header value"));
        }
        headers
    }

    fn status(result: Result<(), Refused>) -> Option<StatusCode> {
        result.err().map(|refused| refused.status)
    }

    fn origin_form() -> Uri {
        Uri::from_static("/mcp")
    }

    #[test]
    fn host_and_origin_must_be_served_ones() {
        let checks = Checks::new(
            &["localhost".into(), "127.0.0.1".into(), "::1".into()],
            None,
            8443,
        );
        assert_eq!(
            status(checks.check(&origin_form(), &headers(&[("host", "127.0.0.1:8443")]))),
            None
        );
        assert_eq!(
            status(checks.check(&origin_form(), &headers(&[("host", "[::1]:8443")]))),
            None
        );
        assert_eq!(
            status(checks.check(&origin_form(), &headers(&[("host", "LOCALHOST")]))),
            None
        );
        assert_eq!(
            status(checks.check(&origin_form(), &headers(&[("host", "evil.example")]))),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(checks.check(&origin_form(), &headers(&[]))),
            Some(StatusCode::BAD_REQUEST)
        );
        let from = |origin| {
            checks.check(
                &origin_form(),
                &headers(&[("host", "localhost"), ("origin", origin)]),
            )
        };
        assert_eq!(status(from("https://localhost:8443")), None);
        assert_eq!(
            status(from("https://evil.example")),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(status(from("null")), Some(StatusCode::FORBIDDEN));
    }

    #[test]
    fn two_hosts_or_a_target_naming_another_host_are_refused() {
        let checks = Checks::new(&["localhost".into(), "127.0.0.1".into()], None, 8443);
        let mut two = headers(&[("host", "localhost:8443")]);
        two.append(header::HOST, HeaderValue::from_static("evil.example"));
        assert_eq!(
            status(checks.check(&origin_form(), &two)),
            Some(StatusCode::BAD_REQUEST)
        );
        let one = headers(&[("host", "localhost:8443")]);
        let elsewhere = Uri::from_static("https://evil.example/mcp");
        assert_eq!(
            status(checks.check(&elsewhere, &one)),
            Some(StatusCode::BAD_REQUEST)
        );
        let same = Uri::from_static("https://localhost:8443/mcp");
        assert_eq!(status(checks.check(&same, &one)), None);
    }

    #[test]
    fn protocol_version_and_body_size_are_checked() {
        let checks = Checks::new(&["localhost".into()], None, 443);
        let with = |name, value| {
            checks.check(
                &origin_form(),
                &headers(&[("host", "localhost"), (name, value)]),
            )
        };
        assert_eq!(status(with("mcp-protocol-version", "2025-11-25")), None);
        assert_eq!(
            status(with("mcp-protocol-version", "1999-01-01")),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(status(with("content-length", "4194304")), None);
        assert_eq!(
            status(with("content-length", "4194305")),
            Some(StatusCode::PAYLOAD_TOO_LARGE)
        );
    }

    #[test]
    fn the_bearer_must_be_an_integration_key_and_is_never_repeated() {
        let key = "lfk_0123456789abcdef0123456789abcdef";
        assert!(bearer(&headers(&[("authorization", &format!("Bearer {key}"))])).is_ok());
        assert!(bearer(&headers(&[("authorization", &format!("bearer {key}"))])).is_ok());
        for value in [
            "",
            "Bearer",
            "Basic dXNlcjpwYXNz",
            "Bearer hunter2",
            &format!("Token {key}"),
        ] {
            let refused = bearer(&headers(&[("authorization", value)]))
                .expect_err(value)
                .into_response();
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
            assert!(refused.headers().get(header::WWW_AUTHENTICATE).is_some());
        }
        let missing = bearer(&HeaderMap::new())
            .expect_err("no key")
            .into_response();
        assert_eq!(
            missing
                .headers()
                .get(header::WWW_AUTHENTICATE)
                .map(|v| v.as_bytes()),
            Some(&b"Bearer realm=\"lemonfiber-mcp\""[..])
        );
    }
}
