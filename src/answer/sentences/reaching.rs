//! How reaching the stack went: where the key stands with it (connected, refused, out of its
//! scope, turned away for now), and a stack that could not be trusted or reached.

use crate::stack::{Scope, Unreachable};

/// How the assistant reaches this server, which decides what it is told to do about a refused
/// key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Stdio,
    Http,
}

pub fn key_refused(via: Via) -> &'static str {
    match via {
        Via::Stdio => {
            "The stack refused this server's key: it is wrong, revoked, or unknown to the stack (it does not say \
             which). Nothing more can be done with it, and it will not be sent again. A new key is needed: the \
             operator makes an integration key for this assistant on the stack, puts it in the file \
             LEMONFIBER_KEY_FILE names, and starts this server again."
        }
        Via::Http => {
            "The stack refused the key this assistant sends: it is wrong, revoked, or unknown to the stack (it does \
             not say which). Nothing more can be done with it, and it will not be sent on to the stack again. A new \
             key is needed: the operator makes an integration key for this assistant on the stack, and the \
             assistant's connection is set up again with it."
        }
    }
}

/// Where the server stands once the stack has answered; `scope` is what the stack said of the key.
pub fn connected(scope: Scope) -> String {
    let what = match scope {
        Scope::Read => "a key that may read",
        Scope::Act => "a key that may read and act",
        Scope::Operator => "an operator's key",
        Scope::Member => "a household member's key",
        Scope::Unsaid => "a key whose scope the stack did not say",
        Scope::Unknown => {
            return "Connected: the stack answered, but it names this key's scope in a way this server does not \
                    know, so no tool is offered for it but this one. The stack may be newer than this server."
                .to_owned();
        }
    };
    format!(
        "Connected: the stack answered, and this is {what}. The tools listed are what it may use."
    )
}

pub fn out_of_scope() -> &'static str {
    "The stack says this key's scope does not reach that; nothing was done. The tools on offer have been brought \
     up to date with what the key may use. Its code, summary and remedies follow as data, between the boundary lines."
}

pub fn not_pinned() -> &'static str {
    "The stack turned this request away as a setup problem, not a wrong key (ADMIT-11): it saw the key arrive \
     from another machine over a connection it does not count as pinned, so it did nothing. The operator should \
     check that this server reaches the stack at the address and pin the stack gave for this key (a key link \
     carries both), and that nothing between them re-encrypts the connection. Its code, summary and remedies \
     follow as data, between the boundary lines."
}

pub fn idempotency_key_refused() -> &'static str {
    "The stack did not accept the key this server sends with an act so that it is carried out only once \
     (ASK-12), so it did nothing. This is a fault of this server or of the stack, not of the request; the \
     operator should report it. Its code, summary and remedies follow as data, between the boundary lines."
}

pub fn idempotency_key_reused() -> &'static str {
    "The stack has already been sent this offer's act with another action or other arguments (ASK-13), so it \
     did nothing more. Rehearse again, ask the person again, and act on the new offer. Its code, summary and \
     remedies follow as data, between the boundary lines."
}

pub fn too_many(seconds: Option<u64>) -> String {
    let wait = match seconds {
        Some(seconds) => format!("wait {seconds} seconds before asking it anything more"),
        None => "wait a while before asking it anything more".to_owned(),
    };
    format!(
        "The stack is turning away requests from this key for now: {wait}. Nothing was done. Its code, summary and \
         remedies follow as data, between the boundary lines."
    )
}

pub fn refused(status: u16) -> String {
    format!(
        "The stack refused this request (HTTP {status}); nothing was done. Its code, summary and remedies follow as \
         data, between the boundary lines."
    )
}

pub fn pin_mismatch() -> &'static str {
    "The stack could not be trusted: the certificate it showed does not match the configured pin \
     (LEMONFIBER_PIN), so nothing was sent to it. If the stack's certificate was replaced on purpose, the operator \
     should set the new pin; otherwise something is standing between this server and the stack."
}

pub fn unreachable(why: Unreachable) -> &'static str {
    match why {
        Unreachable::TimedOut => {
            "The stack is unreachable: it did not answer in time. Nothing is known to have been done; try again \
             shortly, and if it keeps happening, check that the stack is running."
        }
        Unreachable::NoConnection => {
            "The stack is unreachable: nothing answered at the configured address (LEMONFIBER_ADDRESS). Check that \
             the stack is running and that the address is right; the next call tries again."
        }
        Unreachable::Broken => {
            "The stack is unreachable: the connection broke before it answered. The next call tries again."
        }
    }
}
