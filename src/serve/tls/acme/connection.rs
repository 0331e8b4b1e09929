//! How the ACME client reaches the authority: HTTPS checked against the machine's roots, or the
//! roots the operator gave for a directory of their own; and, since the client library keeps a
//! refusal's headers to itself, the `Retry-After` an authority sends with one, so the next try
//! waits as long as it asked.

// The one connection outside src/stack, and never to the stack: clippy.toml says so.
#![allow(clippy::disallowed_types)]

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use instant_acme::{BodyWrapper, BytesResponse, HttpClient};

use crate::lock::lock;
use crate::serve::tls::CertError;

/// The longest one request to the authority may take, so a stalled connection cannot stop
/// renewal for good.
const REQUEST_TIME: Duration = Duration::from_secs(30);

#[derive(Clone)]
pub struct Connection {
    client: Client<HttpsConnector<HttpConnector>, BodyWrapper<Bytes>>,
    retry_after: Arc<Mutex<Option<SystemTime>>>,
}

impl Connection {
    /// A connection that trusts the roots in `roots`, or the machine's when there are none.
    pub fn new(roots: Option<&Path>) -> Result<Connection, CertError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = match roots {
            Some(file) => {
                let mut store = rustls::RootCertStore::empty();
                for root in super::super::chain_in(file)? {
                    store
                        .add(root)
                        .map_err(|error| CertError::NoRoots(file.to_owned(), error.to_string()))?;
                }
                let tls = rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .map_err(CertError::Tls)?
                    .with_root_certificates(store)
                    .with_no_client_auth();
                HttpsConnectorBuilder::new().with_tls_config(tls)
            }
            None => HttpsConnectorBuilder::new()
                .with_provider_and_platform_verifier(provider)
                .map_err(CertError::NoPlatformRoots)?,
        };
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        http.set_connect_timeout(Some(REQUEST_TIME));
        http.enforce_http(false);
        let connector = builder.https_only().enable_http1().wrap_connector(http);
        Ok(Connection {
            client: Client::builder(TokioExecutor::new()).build(connector),
            retry_after: Arc::new(Mutex::new(None)),
        })
    }

    /// How long the authority last asked to be left alone for, forgetting it.
    pub fn take_retry_after(&self) -> Option<Duration> {
        lock(&self.retry_after)
            .take()
            .map(|at| at.duration_since(SystemTime::now()).unwrap_or_default())
    }
}

impl HttpClient for Connection {
    fn request(
        &self,
        request: http::Request<BodyWrapper<Bytes>>,
    ) -> Pin<Box<dyn Future<Output = Result<BytesResponse, instant_acme::Error>> + Send>> {
        let answer = self.client.request(request);
        let retry_after = self.retry_after.clone();
        Box::pin(async move {
            let response = tokio::time::timeout(REQUEST_TIME, answer)
                .await
                .map_err(|elapsed| instant_acme::Error::Other(Box::new(elapsed)))?
                .map_err(|error| instant_acme::Error::Other(Box::new(error)))?;
            if response.status().is_client_error() || response.status().is_server_error() {
                let asked = response
                    .headers()
                    .get(http::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(retry_at);
                if asked.is_some() {
                    *lock(&retry_after) = asked;
                }
            }
            Ok(BytesResponse::from(response))
        })
    }
}

/// When a `Retry-After` value (seconds, or an HTTP date) says to try again.
fn retry_at(value: &str) -> Option<SystemTime> {
    let value = value.trim();
    match value.parse::<u64>() {
        Ok(seconds) => Some(SystemTime::now() + Duration::from_secs(seconds)),
        Err(_) => httpdate::parse_http_date(value).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_either_form() {
        let in_a_minute = retry_at("60").expect("seconds");
        let left = in_a_minute
            .duration_since(SystemTime::now())
            .expect("ahead");
        assert!(left > Duration::from_secs(58) && left <= Duration::from_secs(60));
        let dated = retry_at("Wed, 21 Oct 2037 07:28:00 GMT").expect("a date");
        assert_eq!(
            httpdate::fmt_http_date(dated),
            "Wed, 21 Oct 2037 07:28:00 GMT"
        );
        assert_eq!(retry_at("soon"), None);
    }
}
