//! Whether the stack can be reached at all, asked with no key: a TLS handshake that trusts
//! exactly the pinned certificate, and nothing sent over it. The HTTP mode holds no key of its
//! own (F13-R8), so this is all it can learn of its stack before a person's key arrives, and it
//! is enough to tell the operator at start whether the address and the pin are right.

use std::io;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::Arc;

use rustls::pki_types::ServerName;

use super::pin::{PinVerifier, is_pin_mismatch};
use super::{CONNECT_TIMEOUT, StackAddress, Unreachable};

/// What a handshake with the stack came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    /// The stack answered over TLS with the pinned certificate.
    Reached,
    /// Something answered with a certificate other than the pinned one.
    PinMismatch,
    Unreachable(Unreachable),
}

/// Shakes hands with the stack at `address` once, and hangs up.
pub async fn reach(address: &StackAddress) -> Reached {
    let address = address.clone();
    // A handshake is a few round trips on a socket with timeouts: blocking, off the runtime's
    // workers, is simpler than an async TLS stream the project does not otherwise need.
    tokio::task::spawn_blocking(move || handshake(&address))
        .await
        .unwrap_or(Reached::Unreachable(Unreachable::Broken))
}

fn handshake(address: &StackAddress) -> Reached {
    let no_connection = Reached::Unreachable(Unreachable::NoConnection);
    let Ok(url) = url::Url::parse(&address.base_url) else {
        return no_connection;
    };
    let server_name = match url.host() {
        Some(url::Host::Domain(name)) => match ServerName::try_from(name.to_owned()) {
            Ok(name) => name,
            Err(_) => return no_connection,
        },
        Some(url::Host::Ipv4(ip)) => ServerName::IpAddress(IpAddr::V4(ip).into()),
        Some(url::Host::Ipv6(ip)) => ServerName::IpAddress(IpAddr::V6(ip).into()),
        None => return no_connection,
    };
    let Ok(addresses) = url.socket_addrs(|| Some(443)) else {
        return no_connection;
    };
    let mut tcp = match connect(&addresses) {
        Ok(tcp) => tcp,
        Err(reached) => return reached,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(PinVerifier::new(address.pin, &provider));
    let Ok(versions) =
        rustls::ClientConfig::builder_with_provider(provider).with_safe_default_protocol_versions()
    else {
        return Reached::Unreachable(Unreachable::Broken);
    };
    let mut tls = versions
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let Ok(mut connection) = rustls::ClientConnection::new(Arc::new(tls), server_name) else {
        return Reached::Unreachable(Unreachable::Broken);
    };
    while connection.is_handshaking() {
        if let Err(error) = connection.complete_io(&mut tcp) {
            return failed(&error);
        }
    }
    connection.send_close_notify();
    let _ = connection.complete_io(&mut tcp);
    Reached::Reached
}

/// A connection to the first of `addresses` that takes one, within the connect timeout each.
fn connect(addresses: &[SocketAddr]) -> Result<TcpStream, Reached> {
    let mut why = Reached::Unreachable(Unreachable::NoConnection);
    for address in addresses {
        match TcpStream::connect_timeout(address, CONNECT_TIMEOUT) {
            Ok(tcp) => {
                let timeouts = tcp
                    .set_read_timeout(Some(CONNECT_TIMEOUT))
                    .and_then(|()| tcp.set_write_timeout(Some(CONNECT_TIMEOUT)));
                return match timeouts {
                    Ok(()) => Ok(tcp),
                    Err(_) => Err(Reached::Unreachable(Unreachable::Broken)),
                };
            }
            Err(error) if timed_out(&error) => {
                why = Reached::Unreachable(Unreachable::TimedOut);
            }
            Err(_) => {}
        }
    }
    Err(why)
}

fn failed(error: &io::Error) -> Reached {
    if is_pin_mismatch(error) {
        Reached::PinMismatch
    } else if timed_out(error) {
        Reached::Unreachable(Unreachable::TimedOut)
    } else {
        Reached::Unreachable(Unreachable::Broken)
    }
}

fn timed_out(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}
