//! `lemonfiber-mcp stdio`: one assistant, one key, over the process's stdin and stdout.

use rmcp::ServiceExt;

use crate::Fatal;
use crate::config;
use std::sync::Arc;

use crate::server::{LemonfiberServer, Via};
use crate::stack::Stack;
use crate::stack::pin::Trust;
use crate::standing::Standings;

pub async fn run() -> Result<(), Fatal> {
    let settings = config::stdio_settings(|name| std::env::var(name).ok())
        .map_err(|error| Fatal::Settings(error.to_string()))?;
    if matches!(settings.address.trust, Trust::Loopback) {
        tracing::warn!(
            "no pin is set: the stack on this machine is trusted without checking its certificate"
        );
    }
    settings.key.withhold_from_output();
    if let Trust::Pinned(pin) = settings.address.trust {
        pin.withhold_from_output();
    }
    let standing = Standings::new(1).of(settings.key.digest());
    let stack = Stack::new(&settings.address, settings.key)
        .map_err(|error| Fatal::Failed(error.to_string()))?;
    tracing::info!(stack = %settings.address.base_url, "serving MCP over stdio");
    let running = LemonfiberServer::new(Arc::new(stack), standing, settings.job_wait, Via::Stdio)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| Fatal::Failed(format!("the MCP session did not start: {error}")))?;
    let reason = running
        .waiting()
        .await
        .map_err(|error| Fatal::Failed(format!("the MCP session failed: {error}")))?;
    tracing::info!(?reason, "the MCP session ended");
    Ok(())
}
