//! The certificate the HTTP mode presents, which can be swapped while it serves: a handshake
//! takes the one in service when it starts, so connections already open keep theirs.

use std::sync::{Arc, Mutex};

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::lock::lock;

#[derive(Debug)]
pub struct Swappable(Mutex<Arc<CertifiedKey>>);

impl Swappable {
    pub fn new(first: Arc<CertifiedKey>) -> Arc<Swappable> {
        Arc::new(Swappable(Mutex::new(first)))
    }

    /// Puts `next` in service for every handshake from now on.
    pub fn swap(&self, next: Arc<CertifiedKey>) {
        *lock(&self.0) = next;
    }

    /// The certificate every handshake presents now.
    pub fn in_service(&self) -> Arc<CertifiedKey> {
        lock(&self.0).clone()
    }
}

impl ResolvesServerCert for Swappable {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.in_service())
    }
}
