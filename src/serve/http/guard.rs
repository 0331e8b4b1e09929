//! What every request to the HTTP mode must show before anything else happens: a served name in
//! `Host`, an allowed `Origin` if any, a protocol version this server speaks and a body within the
//! cap. Each refusal is a clear JSON answer.
//!
//! The MCP library checks `Host`, `Origin` and the body's size too, and is told to accept what
//! these checks accept. Its checks stay a second wall rather than these' replacement: it answers
//! them in plain text rather than JSON, and only once a key has been checked and its limits taken,
//! where these answer before anything else is spent on the request.

use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use serde_json::{Value, json};

use crate::config::PublicUrl;
use crate::mcp::versions::PROTOCOL_VERSIONS;
use crate::web::refusing::refusal;

mod host;

use host::HostAndPort;

/// The largest request body taken; a larger one is refused before it is read.
pub const BODY_LIMIT: u64 = 4 * 1024 * 1024;
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// A request refused before it reached MCP: its status, and a JSON error saying why.
#[derive(Debug)]
pub struct Refused {
    pub status: StatusCode,
    error: &'static str,
    description: String,
    /// The protocol version the request named, when this server does not speak it: answered as
    /// JSON-RPC answers it (`-32022`), to the request's id, once its body is read.
    pub unsupported_version: Option<String>,
}

impl Refused {
    fn new(status: StatusCode, error: &'static str, description: impl Into<String>) -> Refused {
        Refused {
            status,
            error,
            description: description.into(),
            unsupported_version: None,
        }
    }
}

/// The JSON-RPC answer to a request (of this `id`) that named a protocol version this server does
/// not speak: the error stdio gives, `-32022` with the version requested and those supported.
pub fn unsupported_version(id: Value, requested: &str) -> Response {
    // The library's own constructor makes the very error stdio answers; a version is read from
    // any text, so this cannot fail but for the type's sake.
    let requested = serde_json::from_value(Value::from(requested))
        .unwrap_or(rmcp::model::ProtocolVersion::V_2024_11_05);
    let error = rmcp::model::ErrorData::unsupported_protocol_version(requested, &PROTOCOL_VERSIONS);
    let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        refusal(self.status, self.error, &self.description)
    }
}

/// A served name as a URL's host names it: an IPv6 address in brackets.
fn as_url_host(name: &str) -> String {
    if name.contains(':') {
        format!("[{name}]")
    } else {
        name.to_owned()
    }
}

/// The checks that need no key: `Host`, `Origin`, the protocol version and the body's size.
pub struct Checks {
    names: Vec<String>,
    /// The ports a `Host` may name: the one listened on, and the one clients reach it at when a
    /// port forward puts it elsewhere. Any other is one a client made up, which would end up in
    /// the URLs this server hands out (its issuer).
    ports: Vec<u16>,
    origins: Vec<String>,
    /// The URL clients use when a proxy or tunnel puts the server at another: its host at its
    /// port is served too, and every URL the server hands out is made from it.
    public: Option<PublicUrl>,
}

impl Checks {
    /// `origins`: the allowed browser origins; by default, the served names at the served ports,
    /// and the public URL's origin.
    pub fn new(
        names: &[String],
        origins: Option<Vec<String>>,
        ports: &[u16],
        public: Option<&PublicUrl>,
    ) -> Checks {
        let origins = origins.unwrap_or_else(|| {
            names
                .iter()
                .flat_map(|name| {
                    let host = as_url_host(name);
                    ports.iter().map(move |&port| {
                        if port == 443 {
                            format!("https://{host}")
                        } else {
                            format!("https://{host}:{port}")
                        }
                    })
                })
                .chain(public.map(|public| public.origin.clone()))
                .collect()
        });
        Checks {
            names: names.iter().map(|name| name.to_ascii_lowercase()).collect(),
            ports: ports.to_vec(),
            public: public.cloned(),
            origins: origins
                .iter()
                .map(|origin| origin.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
        }
    }

    /// The MCP library's own settings for the same checks, accepting what these accept: the
    /// served names at the served ports as hosts (a name alone, which it takes at any port, only
    /// where HTTPS's own port is served, since a `Host` without a port means that one), the
    /// allowed origins (none allowed when none are listed, as here), and the same body cap.
    pub fn mcp_service_config(&self) -> StreamableHttpServerConfig {
        let served = self.names.iter().flat_map(|name| {
            let ports = self.ports.iter().copied();
            ports.map(move |port| (name.as_str(), port))
        });
        let public = self.public.iter().map(|url| (url.host.as_str(), url.port));
        let hosts = served.chain(public).flat_map(|(name, port)| {
            let host = as_url_host(name);
            let alone = (port == 443).then(|| host.clone());
            std::iter::once(format!("{host}:{port}")).chain(alone)
        });
        StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_allowed_origins(self.origins.iter().map(|origin| with_its_port(origin)))
            .enforce_origin_validation()
            .with_max_request_body_bytes(usize::try_from(BODY_LIMIT).unwrap_or(usize::MAX))
            // A stateless request (2026-07-28) whose answer is its only message gets it as one
            // JSON body, of known length, in one write; an answer the handler precedes with a
            // notification still streams, so nothing is lost (issue 15).
            .with_json_response(true)
    }

    /// The `Host` a request names, as a URL names it (in lower case, with its port unless it is
    /// HTTPS's own), once it is one of the served names at a served port: what this server's own
    /// URLs for the request are made from.
    pub fn served_host(&self, uri: &Uri, headers: &HeaderMap) -> Result<String, Refused> {
        if headers.get_all(header::HOST).iter().count() > 1 {
            return Err(Refused::new(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "The request names more than one Host.",
            ));
        }
        let given = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok());
        let named = given.map(HostAndPort::parse);
        // A target in absolute form names a host (and port) of its own, which must be the one
        // in Host.
        if let Some(authority) = uri.authority()
            && named != Some(HostAndPort::parse(authority.as_str()))
        {
            return Err(Refused::new(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "The request's target names another host than its Host header.",
            ));
        }
        let public = self.public.as_ref();
        match named {
            Some(Some(named))
                if public.is_some_and(|public| {
                    public.host == named.name() && public.port == named.port
                }) =>
            {
                Ok(named.as_url_names_it())
            }
            Some(Some(named)) if self.names.iter().any(|name| name == named.name()) => {
                if self.ports.contains(&named.port) {
                    Ok(named.as_url_names_it())
                } else {
                    Err(Refused::new(
                        StatusCode::FORBIDDEN,
                        "forbidden",
                        "This server is not served at the port that Host names.",
                    ))
                }
            }
            Some(_) => Err(Refused::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                "This server is not served under that Host name.",
            )),
            None => Err(Refused::new(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "The request names no Host.",
            )),
        }
    }

    /// This server's origin for a request that reached it at `host` (as [`Checks::served_host`]
    /// gives it): the public URL's, when there is one, since behind a proxy the `Host` a request
    /// arrives with may be the proxy's own name for this server. The issuer of sign-in, and the
    /// base of every URL this server hands out.
    pub fn issuer(&self, host: &str) -> String {
        match &self.public {
            Some(public) => public.origin.clone(),
            None => format!("https://{host}"),
        }
    }

    /// Every check; the `Host` it names, as [`Checks::served_host`] gives it.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<String, Refused> {
        let host = self.served_host(uri, headers)?;
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
                return Err(Refused {
                    unsupported_version: Some(version.to_owned()),
                    ..Refused::new(
                        StatusCode::BAD_REQUEST,
                        "unsupported_protocol_version",
                        description,
                    )
                });
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
        Ok(host)
    }
}

/// An allowed `https` or `http` origin with its scheme's port said outright when it names none,
/// as a browser means it: the MCP library takes an origin without a port for any port, and warns
/// of each such one every time a key's service is made.
fn with_its_port(origin: &str) -> String {
    let Ok(uri) = origin.parse::<Uri>() else {
        return origin.to_owned();
    };
    let (scheme, port) = match uri.scheme_str() {
        Some(scheme @ "https") => (scheme, 443),
        Some(scheme @ "http") => (scheme, 80),
        _ => return origin.to_owned(),
    };
    match uri.authority() {
        Some(authority) if authority.port().is_none() => {
            format!("{scheme}://{}:{port}", authority.host())
        }
        _ => origin.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_str(value).expect("a header value"));
        }
        headers
    }

    fn status<T>(result: Result<T, Refused>) -> Option<StatusCode> {
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
            &[8443],
            None,
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
            status(checks.check(&origin_form(), &headers(&[("host", "LOCALHOST:8443")]))),
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
                &headers(&[("host", "localhost:8443"), ("origin", origin)]),
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
        let checks = Checks::new(
            &["localhost".into(), "127.0.0.1".into()],
            None,
            &[8443],
            None,
        );
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
        let another_port = Uri::from_static("https://localhost:9/mcp");
        assert_eq!(
            status(checks.check(&another_port, &one)),
            Some(StatusCode::BAD_REQUEST)
        );
    }

    /// An authority, as the `http` crate reads one, may say more than a served name and port;
    /// a `Host` (or a target) that does is refused, and one that is taken is named as a URL
    /// names it, whatever the client wrote besides.
    #[test]
    fn a_host_saying_more_than_a_served_name_and_port_is_refused() {
        let checks = Checks::new(
            &["localhost".into(), "::1".into()],
            None,
            &[8443, 443],
            None,
        );
        let served = |host| checks.served_host(&origin_form(), &headers(&[("host", host)]));
        for refused in [
            "a@localhost:8443",
            "a@localhost",
            "a:b@localhost:8443",
            "@localhost:8443",
            "localhost:8443/",
            "localhost:8443/mcp",
            "localhost:8443?x",
            "local%68ost:8443",
            "localhost%2e:8443",
            "[::1%25lo]:8443",
            "localhost:+8443",
            "localhost:8443x",
            "localhost~:8443",
            "localhost;x:8443",
            "[::1]8443",
            ":8443",
        ] {
            assert_eq!(
                status(served(refused)),
                Some(StatusCode::FORBIDDEN),
                "{refused}"
            );
        }
        for (taken, named) in [
            ("localhost:", "localhost"),
            ("[::1]:", "[::1]"),
            (" localhost:8443 ", "localhost:8443"),
            ("localhost:08443", "localhost:8443"),
            ("localhost:00443", "localhost"),
        ] {
            assert_eq!(served(taken).ok().as_deref(), Some(named), "{taken}");
        }
        let one = headers(&[("host", "localhost:8443")]);
        for (target, answer) in [
            (
                "https://a@localhost:8443/mcp",
                Some(StatusCode::BAD_REQUEST),
            ),
            ("https://localhost:8443x/mcp", Some(StatusCode::BAD_REQUEST)),
            // The same port, written otherwise.
            ("https://localhost:08443/mcp", None),
        ] {
            let uri = Uri::try_from(target).expect("a target");
            assert_eq!(status(checks.check(&uri, &one)), answer, "{target}");
        }
    }

    /// Issue 27: the port a client puts in `Host` is never the one the URLs this server hands
    /// out are made with, unless it is one the server is reached at.
    #[test]
    fn a_host_at_a_port_the_server_is_not_reached_at_is_refused() {
        let checks = Checks::new(&["localhost".into(), "::1".into()], None, &[8443], None);
        for host in [
            "localhost:9",
            "localhost",
            "localhost:443",
            "[::1]:9",
            "[::1]",
        ] {
            let refused = checks
                .served_host(&origin_form(), &headers(&[("host", host)]))
                .err()
                .map(|refused| refused.status);
            assert_eq!(refused, Some(StatusCode::FORBIDDEN), "{host}");
        }
        let served = checks.served_host(&origin_form(), &headers(&[("host", "[::1]:8443")]));
        assert_eq!(served.ok().as_deref(), Some("[::1]:8443"));
        let public = Checks::new(&["localhost".into()], None, &[8443, 443], None);
        let served = public.served_host(&origin_form(), &headers(&[("host", "localhost:443")]));
        assert_eq!(served.ok().as_deref(), Some("localhost"));
    }

    /// Issue 31: behind a proxy, the public URL's host is served at its port (and only there),
    /// beside the served names, and every URL handed out is made from it, whatever `Host` the
    /// proxy sends on.
    #[tokio::test]
    async fn a_public_url_is_served_at_its_own_port_and_is_the_issuer_for_every_host() {
        let public = PublicUrl {
            origin: "https://mcp.example.net".into(),
            host: "mcp.example.net".into(),
            port: 443,
        };
        let checks = Checks::new(&["localhost".into()], None, &[9443], Some(&public));
        let served = |host| checks.served_host(&origin_form(), &headers(&[("host", host)]));
        for (host, named) in [
            ("mcp.example.net", "mcp.example.net"),
            ("MCP.example.net:443", "mcp.example.net"),
            ("localhost:9443", "localhost:9443"),
        ] {
            let served = served(host).expect("served");
            assert_eq!(served, named);
            assert_eq!(checks.issuer(&served), "https://mcp.example.net");
        }
        for refused in ["mcp.example.net:9443", "localhost", "other.example.net"] {
            assert_eq!(
                status(served(refused)),
                Some(StatusCode::FORBIDDEN),
                "{refused}"
            );
        }
        let from = |origin| {
            checks.check(
                &origin_form(),
                &headers(&[("host", "mcp.example.net"), ("origin", origin)]),
            )
        };
        assert_eq!(status(from("https://mcp.example.net")), None);
        assert_eq!(
            status(from("https://evil.example")),
            Some(StatusCode::FORBIDDEN)
        );
        let without = Checks::new(&["localhost".into()], None, &[9443], None);
        assert_eq!(without.issuer("localhost:9443"), "https://localhost:9443");
        let passed = StatusCode::METHOD_NOT_ALLOWED;
        for host in ["mcp.example.net", "mcp.example.net:443", "localhost:9443"] {
            let pairs = [("host", host), ("origin", "https://mcp.example.net")];
            assert_eq!(
                mcp_answers(&checks, "PUT", &pairs, Vec::new()).await,
                passed,
                "{host}"
            );
        }
        let at_8443 = PublicUrl {
            origin: "https://mcp.example.net:8443".into(),
            port: 8443,
            ..public
        };
        let checks = Checks::new(&["localhost".into()], None, &[9443], Some(&at_8443));
        for (port, served) in [("8443", true), ("9443", false)] {
            let pairs = [
                ("host", format!("mcp.example.net:{port}")),
                ("origin", "https://mcp.example.net:8443".into()),
            ];
            let pairs = pairs
                .each_ref()
                .map(|(name, value)| (*name, value.as_str()));
            let answered = mcp_answers(&checks, "PUT", &pairs, Vec::new()).await;
            assert_eq!(answered == passed, served, "{port}");
        }
    }

    #[test]
    fn protocol_version_and_body_size_are_checked() {
        let checks = Checks::new(&["localhost".into()], None, &[443], None);
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

    /// An MCP server with nothing to offer, to reach the MCP library's own checks.
    struct Nothing;

    impl rmcp::ServerHandler for Nothing {}

    /// The status the MCP library's own checks, made as `checks` says, answer a request with.
    async fn mcp_answers(
        checks: &Checks,
        method: &str,
        pairs: &[(&'static str, &str)],
        body: Vec<u8>,
    ) -> StatusCode {
        use rmcp::transport::streamable_http_server::StreamableHttpService;
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        let service = StreamableHttpService::new(
            || Ok(Nothing),
            std::sync::Arc::new(LocalSessionManager::default()),
            checks.mcp_service_config(),
        );
        let mut request = axum::http::Request::builder()
            .method(method)
            .uri("/mcp")
            .body(axum::body::Body::from(body))
            .expect("a request");
        *request.headers_mut() = headers(pairs);
        service.handle(request).await.status()
    }

    #[tokio::test]
    async fn the_mcp_library_accepts_the_hosts_and_origins_these_checks_accept_and_no_others() {
        let checks = Checks::new(
            &["localhost".into(), "127.0.0.1".into(), "::1".into()],
            None,
            &[8443],
            None,
        );
        // A method the library does not serve is answered only once its checks have passed.
        let passed = StatusCode::METHOD_NOT_ALLOWED;
        for pairs in [
            vec![("host", "localhost:8443")],
            vec![("host", "LOCALHOST:8443")],
            vec![("host", "[::1]:8443"), ("origin", "https://[::1]:8443")],
            vec![
                ("host", "127.0.0.1:8443"),
                ("origin", "https://127.0.0.1:8443/"),
            ],
        ] {
            assert_eq!(status(checks.check(&origin_form(), &headers(&pairs))), None);
            assert_eq!(
                mcp_answers(&checks, "PUT", &pairs, Vec::new()).await,
                passed,
                "{pairs:?}"
            );
        }
        for pairs in [
            vec![("host", "evil.example")],
            // A served name at a port this server is not reached at, or HTTPS's own it is not
            // served at either.
            vec![("host", "localhost:9")],
            vec![("host", "localhost")],
            vec![("host", "[::1]:9")],
            vec![
                ("host", "localhost:8443"),
                ("origin", "https://evil.example"),
            ],
            vec![
                ("host", "localhost:8443"),
                ("origin", "https://localhost:9999"),
            ],
            vec![("host", "localhost:8443"), ("origin", "null")],
        ] {
            assert_eq!(
                status(checks.check(&origin_form(), &headers(&pairs))),
                Some(StatusCode::FORBIDDEN)
            );
            assert_eq!(
                mcp_answers(&checks, "PUT", &pairs, Vec::new()).await,
                StatusCode::FORBIDDEN,
                "{pairs:?}"
            );
        }
        let listed = Checks::new(
            &["localhost".into()],
            Some(vec![
                "https://Assistant.example/".into(),
                "http://tool.example".into(),
            ]),
            &[8443, 443],
            None,
        );
        assert_eq!(
            listed.mcp_service_config().allowed_origins,
            vec!["https://assistant.example:443", "http://tool.example:80"]
        );
        for (origin, answer) in [
            ("https://assistant.example", passed),
            ("http://tool.example", passed),
            ("https://localhost:8443", StatusCode::FORBIDDEN),
        ] {
            let pairs = [("host", "localhost"), ("origin", origin)];
            assert_eq!(
                mcp_answers(&listed, "PUT", &pairs, Vec::new()).await,
                answer,
                "{origin}"
            );
        }
        // Served at a public port besides the one listened on, a Host may name either, and
        // without a port it names HTTPS's own. Any other port is refused by these checks; the
        // library takes a name without a port at any port, so where HTTPS's own is served it
        // is these checks alone that refuse one.
        for host in ["localhost", "localhost:443", "localhost:8443"] {
            let pairs = [("host", host)];
            assert_eq!(
                status(listed.check(&origin_form(), &headers(&pairs))),
                None,
                "{host}"
            );
            assert_eq!(
                mcp_answers(&listed, "PUT", &pairs, Vec::new()).await,
                passed,
                "{host}"
            );
        }
        assert_eq!(
            status(listed.check(&origin_form(), &headers(&[("host", "localhost:9")]))),
            Some(StatusCode::FORBIDDEN)
        );
        let none = Checks::new(&["localhost".into()], Some(Vec::new()), &[8443], None);
        let pairs = [
            ("host", "localhost:8443"),
            ("origin", "https://localhost:8443"),
        ];
        assert_eq!(
            status(none.check(&origin_form(), &headers(&pairs))),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            mcp_answers(&none, "PUT", &pairs, Vec::new()).await,
            StatusCode::FORBIDDEN,
            "no origin listed, none allowed"
        );
    }

    #[tokio::test]
    async fn the_mcp_library_caps_a_body_where_these_checks_do() {
        let checks = Checks::new(&["localhost".into()], None, &[443], None);
        let post = [
            ("host", "localhost"),
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
        ];
        let limit = usize::try_from(BODY_LIMIT).expect("fits");
        let body = |size: usize| {
            let mut body = b"{}".to_vec();
            body.resize(size, b' ');
            body
        };
        assert_ne!(
            mcp_answers(&checks, "POST", &post, body(limit)).await,
            StatusCode::PAYLOAD_TOO_LARGE
        );
        assert_eq!(
            mcp_answers(&checks, "POST", &post, body(limit + 1)).await,
            StatusCode::PAYLOAD_TOO_LARGE
        );
    }
}
