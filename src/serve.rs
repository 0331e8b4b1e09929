//! The two ways the server is reached: over stdio by a desktop assistant, and over Streamable
//! HTTP with TLS by an assistant on a phone or in a browser; and how either ends.

pub mod health;
pub mod http;
pub mod http_command;
pub mod stdio;
pub mod tls;

use crate::access::sealing::SealError;
use crate::config::{AUDIT, ConfigError};
use crate::stack::SetupError;

/// Why serving stopped: bad settings (the command line's exit 2, [`Fatal::is_settings`]) or a
/// failure while running (exit 1). Each names what went wrong, never a key.
#[derive(Debug, thiserror::Error)]
pub enum Fatal {
    #[error(transparent)]
    Settings(#[from] ConfigError),
    #[error(transparent)]
    Link(#[from] crate::link::LinkFailure),
    #[error("{AUDIT} cannot be written: {0}")]
    AuditFile(#[source] std::io::Error),
    #[error(transparent)]
    Seal(#[from] SealError),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Start(#[from] http::StartError),
    #[error("the MCP session did not start: {0}")]
    SessionNotStarted(#[source] Box<rmcp::service::ServerInitializeError>),
    #[error("the MCP session failed: {0}")]
    SessionFailed(#[source] tokio::task::JoinError),
    #[error("the HTTPS server stopped: {0}")]
    HttpsStopped(#[source] std::io::Error),
    #[error("the HTTPS server stopped: {0}")]
    HttpsAbandoned(#[source] tokio::task::JoinError),
}

impl Fatal {
    /// Whether the settings are at fault, so that fixing them is what to do.
    pub fn is_settings(&self) -> bool {
        match self {
            Fatal::Link(failure) => failure.is_settings(),
            other => matches!(other, Fatal::Settings(_) | Fatal::AuditFile(_)),
        }
    }
}

pub use crate::platform::stop_requested;
