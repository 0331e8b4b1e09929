//! An HTTPS client for tests that trusts exactly one certificate, by its SHA-256 fingerprint, as
//! a phone assistant that pins the server would.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::sync::Arc;

use lemonfiber_mcp::fingerprint::Fingerprint as Pin;
use lemonfiber_mcp::stack::pin::PinVerifier;

/// TLS that trusts exactly the certificate of this SHA-256 fingerprint: the library's own pin
/// verifier, as the server uses it for the stack.
pub fn pinned_tls(fingerprint: &str) -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let pin = Pin::parse(fingerprint).expect("a fingerprint");
    let verifier = Arc::new(PinVerifier::new(pin, &provider));
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    tls
}

pub fn pinned_client(fingerprint: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_backend_preconfigured(pinned_tls(fingerprint))
        .no_proxy()
        .build()
        .expect("an HTTPS client")
}

/// A TLS connection to the server at `url`, trusting the certificate of `fingerprint`, to send
/// bytes on as they are.
pub fn raw_connection(
    url: &str,
    fingerprint: &str,
) -> rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream> {
    let authority = url
        .trim_start_matches("https://")
        .split('/')
        .next()
        .expect("an authority");
    let tcp = std::net::TcpStream::connect(authority).expect("connect");
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("a timeout");
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("a name");
    let connection =
        rustls::ClientConnection::new(Arc::new(pinned_tls(fingerprint)), name).expect("TLS");
    rustls::StreamOwned::new(connection, tcp)
}

/// Sends `head` and the first `sent` bytes of a body that claims to be larger, and answers the
/// status the server gives before the rest arrives.
pub fn status_before_the_whole_body(url: &str, fingerprint: &str, head: &str, sent: usize) -> u16 {
    use std::io::{Read, Write};
    let mut stream = raw_connection(url, fingerprint);
    stream.write_all(head.as_bytes()).expect("the head is sent");
    stream
        .write_all(&vec![b'x'; sent])
        .expect("part of the body is sent");
    stream.flush().expect("flushed");
    let mut answer = [0u8; 64];
    let read = stream.read(&mut answer).expect("an answer");
    let answer = String::from_utf8_lossy(&answer[..read]);
    answer
        .split(' ')
        .nth(1)
        .and_then(|status| status.parse().ok())
        .expect("a status line")
}

pub const ACCEPT: &str = "application/json, text/event-stream";

/// The JSON-RPC messages in an answer, whether sent as JSON or as server-sent events.
pub fn messages(body: &str) -> Vec<serde_json::Value> {
    if let Ok(message) = serde_json::from_str(body) {
        return vec![message];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// Sends `head` (a whole request with no body) over TLS to the server at `url` as it is, and
/// answers the status of the reply: for requests no HTTP client would make.
pub fn raw_status(url: &str, fingerprint: &str, head: &str) -> u16 {
    status_before_the_whole_body(url, fingerprint, head, 0)
}

/// A request sent over TLS whose head and first byte of body go and the rest never does: a slow
/// body, held open until the server answers it or it is dropped.
pub struct SlowBody {
    stream: rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>,
    /// What the server has answered so far.
    answer: Vec<u8>,
    ended: bool,
}

impl SlowBody {
    /// Sends `head` and one byte of its body to `server` from the local address `from` (any
    /// 127.x address is this machine), trusting the certificate of `fingerprint`.
    pub async fn send(
        server: std::net::SocketAddr,
        from: std::net::IpAddr,
        fingerprint: &str,
        head: &str,
    ) -> SlowBody {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket
            .bind(std::net::SocketAddr::new(from, 0))
            .expect("bound to the address it comes from");
        let tcp = socket
            .connect(server)
            .await
            .expect("connected")
            .into_std()
            .expect("a socket to write to as it is");
        tcp.set_nonblocking(false).expect("blocking");
        tcp.set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .expect("a timeout");
        let tls = Arc::new(pinned_tls(fingerprint));
        let head = head.to_owned();
        tokio::task::spawn_blocking(move || {
            use std::io::Write;
            let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("a name");
            let connection = rustls::ClientConnection::new(tls, name).expect("TLS");
            let mut stream = rustls::StreamOwned::new(connection, tcp);
            stream.write_all(head.as_bytes()).expect("the head is sent");
            stream.write_all(b"{").expect("a byte of the body is sent");
            stream.flush().expect("flushed");
            SlowBody {
                stream,
                answer: Vec::new(),
                ended: false,
            }
        })
        .await
        .expect("sent")
    }

    /// Whether the server has answered (or closed the connection) yet, without waiting.
    pub fn answered_yet(&mut self) -> bool {
        self.stream.sock.set_nonblocking(true).expect("not waiting");
        self.read_some(false);
        self.stream.sock.set_nonblocking(false).expect("waiting");
        self.ended || !self.answer.is_empty()
    }

    /// The head of the server's answer, waiting for it (each read at most the read timeout).
    pub fn answer_head(mut self) -> String {
        while !self.ended && !self.answer.windows(4).any(|end| end == b"\r\n\r\n") {
            self.read_some(true);
        }
        let text = String::from_utf8_lossy(&self.answer);
        text.split("\r\n\r\n").next().unwrap_or_default().to_owned()
    }

    /// Reads what has come; a read that waited in vain (or failed) ends the answer.
    fn read_some(&mut self, waiting: bool) {
        use std::io::Read;
        let mut buffer = [0u8; 1024];
        match self.stream.read(&mut buffer) {
            Ok(0) => self.ended = true,
            Ok(read) => self.answer.extend_from_slice(&buffer[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock && !waiting => {}
            Err(_) => self.ended = true,
        }
    }
}

/// The status in an answer's head.
pub fn status_of(head: &str) -> Option<u16> {
    head.split(' ')
        .nth(1)
        .and_then(|status| status.parse().ok())
}
