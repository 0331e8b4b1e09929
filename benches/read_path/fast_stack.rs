//! A stack that answers as fast as a static server would: HTTPS on loopback, on a thread and a
//! runtime of its own, handing back answers the demo stack gave once, byte for byte, so they are
//! the contract's own. Against it, the time and CPU a call through the server takes are the
//! server's, not a slow upstream's (issue 32).

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum_server::accept::NoDelayAcceptor;
use axum_server::tls_rustls::RustlsConfig;
use sha2::Digest as _;

/// One answer, as the demo gave it for a path.
#[derive(Clone)]
pub struct Answer {
    pub status: StatusCode,
    pub content_type: HeaderValue,
    pub body: Bytes,
}

pub struct FastStack {
    /// `https://127.0.0.1:port`.
    pub address: String,
    /// The SHA-256 fingerprint of its certificate, hex: `LEMONFIBER_PIN`.
    pub pin: String,
    /// The `stat` of the thread it answers on, for the CPU it spends.
    pub stat: String,
    handle: axum_server::Handle<std::net::SocketAddr>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FastStack {
    /// Answers each path in `answers` (whatever the query, method or key) with its answer, and
    /// any other with 404.
    pub fn start(answers: HashMap<String, Answer>) -> FastStack {
        let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()])
            .expect("a certificate");
        let der = certified.cert.der().clone();
        let pin = hex::encode(sha2::Sha256::digest(&der));
        let key =
            rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
        let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![der], key)
        .expect("a TLS server");
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        listener.set_nonblocking(true).expect("non-blocking");
        let address = format!("https://{}", listener.local_addr().expect("its address"));
        let answers = Arc::new(answers);
        let router = axum::Router::new().fallback(move |uri: Uri| {
            let answers = answers.clone();
            async move { answered(&answers, &uri) }
        });
        let handle = axum_server::Handle::new();
        let serving = handle.clone();
        let (told, where_it_runs) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            // `/proc/thread-self` names this thread's folder as `<pid>/task/<tid>`.
            let _ = told.send(std::fs::read_link("/proc/thread-self").expect("this thread"));
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let server = axum_server::from_tcp_rustls(
                    listener,
                    RustlsConfig::from_config(Arc::new(tls)),
                )
                .expect("serves TLS")
                .map(|acceptor| acceptor.acceptor(NoDelayAcceptor));
                let _ = server
                    .handle(serving)
                    .serve(router.into_make_service())
                    .await;
            });
        });
        let folder = where_it_runs.recv().expect("the stack's thread");
        FastStack {
            address,
            pin,
            stat: format!("/proc/{}/stat", folder.display()),
            handle,
            thread: Some(thread),
        }
    }
}

fn answered(answers: &HashMap<String, Answer>, uri: &Uri) -> Response {
    match answers.get(uri.path()) {
        Some(answer) => (
            answer.status,
            [(header::CONTENT_TYPE, answer.content_type.clone())],
            answer.body.clone(),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

impl Drop for FastStack {
    fn drop(&mut self) {
        self.handle.shutdown();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
