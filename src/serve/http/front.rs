//! What the HTTP mode lends sign-in ([`sign_in::Front`]): where a sign-in request came to, the
//! allowances of the peer that sent it, and what the stack says of a key, through the same
//! per-key check the MCP endpoint uses.

use std::net::IpAddr;

use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use super::{App, client_address};
use crate::access::offer::Offer;
use crate::access::standing::Verdict;
use crate::config::ConsentMode;
use crate::sign_in::{self, Arrival, Hold, SignIn};
use crate::stack::credential::Key;
use crate::web::refusing::{
    over_the_address_allowance, too_many, too_many_from_this_address, unread,
};

// A refusal is the answer itself, handed straight to the client: boxing it would only move it.
#[allow(clippy::result_large_err)]
impl sign_in::Front for App {
    fn sign_in(&self) -> &SignIn {
        &self.sign_in
    }

    fn consent(&self) -> ConsentMode {
        self.consent
    }

    /// Refused before its body is read, the connection closes after the answer, which says so.
    fn arrived(&self, parts: &Parts) -> Result<Arrival, Response> {
        let refused = |response| unread(&parts.headers, response);
        let peer = client_address::of(parts, &self.proxies);
        let Some(turn) = self.keyless.take(peer) else {
            return Err(refused(too_many_from_this_address()));
        };
        if let Err(seconds) = self.peers.request(peer) {
            return Err(refused(over_the_address_allowance(seconds)));
        }
        let host = self
            .checks
            .served_host(&parts.uri, &parts.headers)
            .map_err(|refusal| refused(refusal.into_response()))?;
        Ok(Arrival {
            issuer: self.checks.issuer(&host),
            peer,
            turn: Box::new(turn),
        })
    }

    fn answering(&self) -> Result<Hold, Response> {
        match self.signing_in.clone().try_acquire_owned() {
            Ok(answering) => Ok(Box::new(answering)),
            Err(_) => Err(too_many(
                1,
                "The server has too many sign-in requests under way; try again shortly.",
            )),
        }
    }

    fn take_a_new_key_turn(&self, peer: IpAddr) -> bool {
        self.peers.new_key(peer).is_ok()
    }

    async fn standing_of(&self, key: Key) -> Verdict<Option<Offer>> {
        match self.keys.now(key).await {
            Verdict::Accepted(service) => Verdict::Accepted(service.offer().await),
            other => other.map(|_| None),
        }
    }
}
