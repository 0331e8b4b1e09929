//! What the assistant is handed. Text the stack wrote is cleaned of what a reader cannot see
//! (`clean`) and withheld of secrets in one walk, taken only when a look at its JSON finds
//! something to change (`handed`, whose `handed_text` is the one door every other path that
//! passes on someone else's words goes through too), checked against the shape its kind declares (`conformance`),
//! and framed as data after the server's own words (`outcome`); every sentence the server says is
//! in `sentences`. Secrets are withheld by `crate::redact` and answers cut by `crate::cut`, which
//! the stack's reading uses too.

mod clean;
pub(crate) mod conformance;
mod handed;
pub(crate) mod outcome;
pub mod sentences;

/// The one door for text the stack or a client wrote, wherever the server passes it on.
pub(crate) use handed::{handed_text, shows_as_written};
