//! lemonfiber-mcp: lets an AI assistant read and control a lemonfiber media stack through the
//! Model Context Protocol, with exactly the authority of the integration key it is given.
//!
//! The command line (`main.rs`) calls [`serve`] and [`demo`]; the tests reach the pin verifier
//! ([`stack::pin`]) and a certificate's [`fingerprint`] from here rather than copying them, and
//! the read benchmark the HTTP mode ([`serve::http_command`]) and its [`threads`].

// The allocator is the one place that must be unsafe; nowhere else may be.
#![deny(unsafe_code)]
// Only tests may unwrap (clippy.toml allows it in unit tests; Cargo.toml in tests/ and benches/):
// the program says what went wrong. Only the door to the stack and the named clients in
// clippy.toml open connections; each allows it where it does.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_types,
    clippy::disallowed_methods
)]

mod access;
#[allow(unsafe_code)]
pub mod allocator;
pub mod answer;
mod backoff;
mod catalogue;
pub mod check;
mod config;
mod cut;
pub mod demo;
pub mod fingerprint;
pub mod grants;
pub mod install;
pub mod link;
mod lock;
mod mcp;
mod places;
mod platform;
pub mod redact;
pub mod serve;
mod sign_in;
pub mod stack;
mod state;
mod tape;
pub mod threads;
pub mod unlink;
mod web;
