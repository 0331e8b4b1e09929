//! lemonfiber-mcp: lets an AI assistant read and control a lemonfiber media stack through the
//! Model Context Protocol, with exactly the authority of the integration key it is given.
//!
//! The command line (`main.rs`) calls [`serve`] and [`demo`]; the tests reach the pin verifier
//! ([`stack::pin`]) and the sentences the server says ([`sentences`]) from here rather than
//! copying them.

mod arguments;
mod audit;
mod by_digest;
mod catalogue;
mod certs;
mod config;
mod conformance;
mod consent;
mod cut;
pub mod demo;
mod lock;
mod offer;
mod outcome;
pub mod redact;
pub mod sentences;
pub mod serve;
mod server;
pub mod stack;
mod standing;
