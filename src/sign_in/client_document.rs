//! A client ID metadata document: a client whose id is an https URL publishes its name and
//! redirect URIs there, and this server fetches it when the client asks for a sign-in. The URL is
//! the client's to choose, so the fetch is kept from being a way into this server's own network:
//! the name is resolved first and every address it gives must be a public one (unless the
//! operator allows this machine's private networks), the connection goes to those addresses and
//! no other, no redirect is followed, and the document is read within a small size and time.

// The one connection sign-in makes, and never to the stack: clippy.toml says so.
#![allow(clippy::disallowed_types)]

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rustls::pki_types::CertificateDer;
use rustls_platform_verifier::BuilderVerifierExt as _;
use serde_json::Value;

use super::redirects::redirects_of;
use crate::config::{CLIENT_DOCUMENT_ROOTS, SignInSettings};

/// The largest document read.
pub const DOCUMENT_MOST: usize = 5 * 1024;
/// The longest the name may take to resolve, and the document to arrive.
const RESOLVE_TIME: Duration = Duration::from_secs(3);
const FETCH_TIME: Duration = Duration::from_secs(5);
/// The longest client id URL taken.
const URL_LONGEST: usize = 512;

/// How client documents are fetched.
pub struct Documents {
    tls: rustls::ClientConfig,
    private_allowed: bool,
}

/// What a client's document says.
pub struct Document {
    pub name: Option<String>,
    pub redirect_uris: Vec<String>,
    /// The host it was fetched from.
    pub host: String,
}

/// The roots `CLIENT_DOCUMENT_ROOTS` names, as the HTTP mode read them from their file.
pub struct DocumentRoots {
    pub file: PathBuf,
    pub roots: Vec<CertificateDer<'static>>,
}

/// Why the HTTPS client for documents could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DocumentsError {
    #[error("{CLIENT_DOCUMENT_ROOTS} names {0} roots that cannot be used: {1}")]
    BadRoots(String, String),
    #[error("cannot set up TLS for client metadata documents: {0}")]
    Tls(#[source] rustls::Error),
}

/// Why a client's document was not taken. Names the reason; repeats nothing of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentRefused {
    NotAUrl,
    Private,
    NotResolved,
    Unreachable,
    Status(u16),
    TooLarge,
    TooSlow,
    NotJson,
    OtherId,
    NoRedirects(String),
    NotPublic,
}

impl DocumentRefused {
    /// What the sign-in page says.
    pub fn describe(&self) -> String {
        match self {
            DocumentRefused::NotAUrl => "Its client id is not an https URL with a path.".to_owned(),
            DocumentRefused::Private => "Its client id names an address on this machine or a private network, which this server does not fetch from.".to_owned(),
            DocumentRefused::NotResolved => "Its client id names a host that could not be found.".to_owned(),
            DocumentRefused::Unreachable => "Its client metadata document could not be fetched.".to_owned(),
            DocumentRefused::Status(status) => format!("Its client metadata document answered HTTP {status}."),
            DocumentRefused::TooLarge => format!("Its client metadata document is larger than {} KiB.", DOCUMENT_MOST / 1024),
            DocumentRefused::TooSlow => "Its client metadata document took too long to arrive.".to_owned(),
            DocumentRefused::NotJson => "Its client metadata document is not a JSON object.".to_owned(),
            DocumentRefused::OtherId => "Its client metadata document names another client id than its own URL.".to_owned(),
            DocumentRefused::NoRedirects(why) => format!("Its client metadata document's redirect URIs are not usable: {why}"),
            DocumentRefused::NotPublic => "Its client metadata document asks to authenticate with a secret or key; this server signs in public clients only.".to_owned(),
        }
    }
}

impl Documents {
    /// `roots`: those `CLIENT_DOCUMENT_ROOTS` names, when it is set, trusted instead of the
    /// platform's.
    pub fn new(
        settings: &SignInSettings,
        roots: Option<DocumentRoots>,
    ) -> Result<Documents, DocumentsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(DocumentsError::Tls)?;
        let mut tls = match roots {
            Some(DocumentRoots { file, roots: given }) => {
                let mut roots = rustls::RootCertStore::empty();
                for root in given {
                    roots.add(root).map_err(|error| {
                        DocumentsError::BadRoots(file.display().to_string(), error.to_string())
                    })?;
                }
                builder.with_root_certificates(roots).with_no_client_auth()
            }
            None => builder
                .with_platform_verifier()
                .map_err(DocumentsError::Tls)?
                .with_no_client_auth(),
        };
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Documents {
            tls,
            private_allowed: settings.private_client_documents,
        })
    }

    /// The document at `id`, if it may be fetched and is one.
    pub async fn fetch(&self, id: &str) -> Result<Document, DocumentRefused> {
        let url = url::Url::parse(id).map_err(|_| DocumentRefused::NotAUrl)?;
        let usable = id.len() <= URL_LONGEST
            && url.scheme() == "https"
            && url.username().is_empty()
            && url.password().is_none()
            && url.fragment().is_none()
            && url.path() != "/";
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return Err(DocumentRefused::NotAUrl);
        };
        if !usable {
            return Err(DocumentRefused::NotAUrl);
        }
        let addresses = self.addresses(&url, port).await?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(self.tls.clone())
            .resolve_to_addrs(
                host.trim_start_matches('[').trim_end_matches(']'),
                &addresses,
            )
            .tcp_nodelay(true)
            .connect_timeout(RESOLVE_TIME)
            .timeout(FETCH_TIME)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .http1_only()
            .user_agent(concat!("lemonfiber-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|_| DocumentRefused::Unreachable)?;
        let fetched = client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(not_fetched)?;
        if fetched.status() != reqwest::StatusCode::OK {
            return Err(DocumentRefused::Status(fetched.status().as_u16()));
        }
        if fetched
            .content_length()
            .is_some_and(|length| length > DOCUMENT_MOST as u64)
        {
            return Err(DocumentRefused::TooLarge);
        }
        let mut body = Vec::new();
        let mut chunks = fetched.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(not_fetched)?;
            if body.len() + chunk.len() > DOCUMENT_MOST {
                return Err(DocumentRefused::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        read(&body, id, host)
    }

    /// The addresses `url`'s host resolves to, each one this server may connect to.
    async fn addresses(
        &self,
        url: &url::Url,
        port: u16,
    ) -> Result<Vec<SocketAddr>, DocumentRefused> {
        let addresses: Vec<SocketAddr> = match url.host() {
            Some(url::Host::Ipv4(address)) => vec![SocketAddr::new(address.into(), port)],
            Some(url::Host::Ipv6(address)) => vec![SocketAddr::new(address.into(), port)],
            Some(url::Host::Domain(name)) => {
                tokio::time::timeout(RESOLVE_TIME, tokio::net::lookup_host((name, port)))
                    .await
                    .map_err(|_| DocumentRefused::NotResolved)?
                    .map_err(|_| DocumentRefused::NotResolved)?
                    .collect()
            }
            None => return Err(DocumentRefused::NotAUrl),
        };
        if addresses.is_empty() {
            return Err(DocumentRefused::NotResolved);
        }
        if !self.private_allowed && addresses.iter().any(|address| !is_public(address.ip())) {
            return Err(DocumentRefused::Private);
        }
        Ok(addresses)
    }
}

/// Why a fetch failed: too slow, or not reached at all.
fn not_fetched(error: reqwest::Error) -> DocumentRefused {
    if error.is_timeout() {
        DocumentRefused::TooSlow
    } else {
        DocumentRefused::Unreachable
    }
}

/// The document's name and redirect URIs, if it is one for the client `id`.
fn read(body: &[u8], id: &str, host: &str) -> Result<Document, DocumentRefused> {
    let Ok(Value::Object(document)) = serde_json::from_slice::<Value>(body) else {
        return Err(DocumentRefused::NotJson);
    };
    if document.get("client_id").and_then(Value::as_str) != Some(id) {
        return Err(DocumentRefused::OtherId);
    }
    let method = document
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str);
    if method.is_some_and(|method| method != "none") {
        return Err(DocumentRefused::NotPublic);
    }
    let redirect_uris =
        redirects_of(document.get("redirect_uris")).map_err(DocumentRefused::NoRedirects)?;
    Ok(Document {
        name: document
            .get("client_name")
            .and_then(Value::as_str)
            .map(str::to_owned),
        redirect_uris,
        host: host.to_owned(),
    })
}

/// Whether an address is on the public internet: not this machine, not a private, shared,
/// link-local, documentation, benchmarking or reserved range, nor such an address inside IPv6.
fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0)
                || (a == 198 && (18..20).contains(&b))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || (first & 0xffc0) == 0xfec0
                || first == 0x2001 && v6.segments()[1] == 0x0db8
                || first == 0x0064 && v6.segments()[1] == 0xff9b
                || first == 0x2002
                || (first == 0x2001 && v6.segments()[1] == 0)
                || (first == 0x0100 && v6.segments()[1..4] == [0, 0, 0])
                || first == 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "2001:db8::1",
            "64:ff9b::a00:1",
            "2002:a00:1::",
            "198.18.0.1",
            "240.0.0.1",
        ] {
            let address: IpAddr = private.parse().expect("an address");
            assert!(!is_public(address), "{private}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            let address: IpAddr = public.parse().expect("an address");
            assert!(is_public(address), "{public}");
        }
    }

    #[test]
    fn a_document_must_name_its_own_url_and_be_for_a_public_client() {
        let id = "https://client.example/oauth/client.json";
        let good = format!(
            r#"{{"client_id":"{id}","client_name":"Example","redirect_uris":["https://client.example/cb"]}}"#
        );
        let document = read(good.as_bytes(), id, "client.example").expect("taken");
        assert_eq!(document.name.as_deref(), Some("Example"));
        let other = good.replace("/oauth/client.json", "/other.json");
        assert_eq!(
            read(other.as_bytes(), id, "client.example").err(),
            Some(DocumentRefused::OtherId)
        );
        let secret = good.replace(
            r#""client_name""#,
            r#""token_endpoint_auth_method":"private_key_jwt","client_name""#,
        );
        assert_eq!(
            read(secret.as_bytes(), id, "client.example").err(),
            Some(DocumentRefused::NotPublic)
        );
        assert_eq!(
            read(b"[1]", id, "client.example").err(),
            Some(DocumentRefused::NotJson)
        );
    }

    #[tokio::test]
    async fn a_private_address_is_refused_before_anything_is_sent() {
        let documents = Documents::new(
            &SignInSettings {
                raw_keys: true,
                private_client_documents: false,
                client_document_roots: None,
            },
            None,
        )
        .expect("documents");
        for id in [
            "https://127.0.0.1:9/client.json",
            "https://[::1]:9/client.json",
            "https://localhost:9/client.json",
        ] {
            assert_eq!(
                documents.fetch(id).await.err(),
                Some(DocumentRefused::Private),
                "{id}"
            );
        }
        assert_eq!(
            documents.fetch("https://client.example/").await.err(),
            Some(DocumentRefused::NotAUrl)
        );
    }
}
