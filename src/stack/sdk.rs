//! The SDK client progenitor generates from the contract, and the generated table that sends
//! each read through it. Nothing outside `stack` may use it.

#![allow(
    unreachable_patterns,
    clippy::all,
    clippy::pedantic,
    dead_code,
    unused_imports,
    // progenitor's code compiles the contract's patterns with `unwrap`; they are the contract's
    // own, checked when the contract is.
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

include!(concat!(env!("OUT_DIR"), "/sdk.rs"));
include!(concat!(env!("OUT_DIR"), "/sdk_calls.rs"));
