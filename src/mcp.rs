//! The MCP side: the server handler (`server`), which checks a tool's arguments (`arguments`)
//! before anything reaches the stack and writes one audit line for every call (`audit`).

pub mod arguments;
pub mod asking;
pub mod audit;
mod completions;
mod notices;
pub mod prompts;
mod question;
pub mod reach;
pub mod server;
pub mod versions;
pub mod watches;
