//! The server's own notices (`notifications/message`) to a client that asked for them with
//! `logging/setLevel`: that the stack could not be reached, refused the key, or changed what the
//! key is offered. Only the server's sentences: never stack data, a key or a session.
//!
//! The protocol deprecates logging from 2026-07-28 on; clients of the versions before it still
//! use it, so this module speaks it knowingly.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use crate::lock::lock;

/// How severe a notice of the server's is.
#[derive(Debug, Clone, Copy)]
pub enum Severity {
    Info,
    Warning,
}

/// The least severe notice a client asked to hear; none until it asks.
#[derive(Default, Clone)]
pub struct Notices(Arc<Mutex<Option<LoggingLevel>>>);

impl Notices {
    /// What `logging/setLevel` asked for.
    pub fn asked(&self, request: SetLevelRequestParams) {
        *lock(&self.0) = Some(request.level);
    }

    /// Whether the client has asked for notices.
    pub fn asked_for(&self) -> bool {
        lock(&self.0).is_some()
    }

    /// Tells the client `sentence`, if it asked for notices this severe.
    pub async fn tell(&self, peer: &Peer<RoleServer>, severity: Severity, sentence: &str) {
        let level = match severity {
            Severity::Info => LoggingLevel::Info,
            Severity::Warning => LoggingLevel::Warning,
        };
        let wanted = *lock(&self.0);
        if wanted.is_some_and(|wanted| rank(level) >= rank(wanted)) {
            let notice = LoggingMessageNotificationParam::new(level, Value::from(sentence))
                .with_logger(env!("CARGO_PKG_NAME"));
            let _ = peer.notify_logging_message(notice).await;
        }
    }
}

/// The protocol's levels, least severe first.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
