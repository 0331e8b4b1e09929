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
        let wants_challenge = hello
            .alpn()
            .is_some_and(|mut offered| offered.any(|protocol| protocol == ACME_TLS_ALPN));
        if !wants_challenge {
            return Some(self.in_service());
        }
        // Only the answer itself goes to a challenge look; with none pending, the handshake fails.
        let name = hello.server_name()?.to_ascii_lowercase();
        lock(&self.challenges).get(&name).cloned()
    }
}
