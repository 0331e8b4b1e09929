//! The certificate the HTTP mode presents, which can be swapped while it serves: a handshake
//! takes the one in service when it starts, so connections already open keep theirs. While an
//! ACME order is pending it also answers the authority's TLS-ALPN-01 look (RFC 8737) for a name.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::lock::lock;

/// The ALPN protocol an ACME authority offers, and only it, when it looks for a challenge answer.
pub const ACME_TLS_ALPN: &[u8] = b"acme-tls/1";

#[derive(Debug)]
pub struct Swappable {
    in_service: Mutex<Arc<CertifiedKey>>,
    /// Challenge answers by the name the authority asks for.
    challenges: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl Swappable {
    pub fn new(first: Arc<CertifiedKey>) -> Arc<Swappable> {
        Arc::new(Swappable {
            in_service: Mutex::new(first),
            challenges: Mutex::new(HashMap::new()),
        })
    }

    /// Puts `next` in service for every handshake from now on.
    pub fn swap(&self, next: Arc<CertifiedKey>) {
        *lock(&self.in_service) = next;
    }

    /// The certificate every handshake presents now.
    pub fn in_service(&self) -> Arc<CertifiedKey> {
        lock(&self.in_service).clone()
    }

    /// Answers the authority's TLS-ALPN-01 look for `name` with `answer` until withdrawn.
    pub fn answer_challenge(&self, name: &str, answer: Arc<CertifiedKey>) {
        lock(&self.challenges).insert(name.to_ascii_lowercase(), answer);
    }

    pub fn withdraw_challenge(&self, name: &str) {
        lock(&self.challenges).remove(&name.to_ascii_lowercase());
    }
}

impl ResolvesServerCert for Swappable {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        // An authority's look offers `acme-tls/1` and nothing else (RFC 8737); a client that
        // offers it among others is an ordinary client, and gets the certificate in service.
        let is_a_look = hello.alpn().is_some_and(|offered| {
            let offered: Vec<&[u8]> = offered.collect();
            offered == [ACME_TLS_ALPN]
        });
        if !is_a_look {
            return Some(self.in_service());
        }
        // Only the answer itself goes to a look; with none pending, the handshake fails.
        let name = hello.server_name()?.to_ascii_lowercase();
        lock(&self.challenges).get(&name).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::Fingerprint;
    use crate::stack::pin::PinVerifier;
    use rustls::pki_types::ServerName;

    fn certified(name: &str) -> (Arc<CertifiedKey>, Fingerprint) {
        let folder =
            std::env::temp_dir().join(format!("lemonfiber-resolver-{name}-{}", std::process::id()));
        let presented =
            crate::serve::tls::make_and_keep(&folder, &[name.to_owned()]).expect("made");
        let _ = std::fs::remove_dir_all(&folder);
        (presented.certified, presented.fingerprint)
    }

    /// Whether a client offering `alpn`, and trusting only `expected`, completes a handshake
    /// with a server presenting what `resolver` resolves.
    fn handshake(resolver: Arc<Swappable>, alpn: &[&[u8]], expected: Fingerprint) -> bool {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut server_config = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_cert_resolver(resolver);
        server_config.alpn_protocols = vec![b"http/1.1".to_vec(), ACME_TLS_ALPN.to_vec()];
        let mut client_config = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("versions")
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(PinVerifier::new(expected, &provider)))
            .with_no_client_auth();
        client_config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
        let name = ServerName::try_from("mcp.home.example").expect("name");
        let mut client =
            rustls::ClientConnection::new(Arc::new(client_config), name).expect("client");
        let mut server = rustls::ServerConnection::new(Arc::new(server_config)).expect("server");
        for _ in 0..10 {
            let mut wire = Vec::new();
            if client.write_tls(&mut wire).is_err()
                || server.read_tls(&mut wire.as_slice()).is_err()
            {
                return false;
            }
            if server.process_new_packets().is_err() {
                return false;
            }
            let mut wire = Vec::new();
            if server.write_tls(&mut wire).is_err()
                || client.read_tls(&mut wire.as_slice()).is_err()
            {
                return false;
            }
            if client.process_new_packets().is_err() {
                return false;
            }
            if !client.is_handshaking() && !server.is_handshaking() {
                return true;
            }
        }
        false
    }

    /// RFC 8737: only a look that offers `acme-tls/1` alone gets the challenge answer; a client
    /// that offers it among others is an ordinary client.
    #[test]
    fn only_an_authoritys_look_gets_the_challenge_answer() {
        let (serving, serving_print) = certified("mcp.home.example");
        let (answer, answer_print) = certified("answer.home.example");
        let resolver = Swappable::new(serving);
        resolver.answer_challenge("mcp.home.example", answer);
        let ordinary: [&[u8]; 2] = [b"http/1.1", ACME_TLS_ALPN];
        assert!(handshake(resolver.clone(), &ordinary, serving_print));
        assert!(!handshake(resolver.clone(), &ordinary, answer_print));
        assert!(handshake(resolver.clone(), &[ACME_TLS_ALPN], answer_print));
        resolver.withdraw_challenge("mcp.home.example");
        assert!(!handshake(resolver.clone(), &[ACME_TLS_ALPN], answer_print));
        assert!(
            !handshake(resolver, &[ACME_TLS_ALPN], serving_print),
            "no answer pending: no certificate at all"
        );
    }
}
