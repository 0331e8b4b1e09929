//! The SDK client progenitor generates from the contract, and the generated table that sends
//! each read through it. Nothing outside `stack` may use it.

#![allow(
    unreachable_patterns,
    clippy::all,
    clippy::pedantic,
    dead_code,
    unused_imports
)]

include!(concat!(env!("OUT_DIR"), "/sdk.rs"));
include!(concat!(env!("OUT_DIR"), "/sdk_calls.rs"));
