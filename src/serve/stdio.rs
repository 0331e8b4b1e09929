//! `lemonfiber-mcp stdio`: one assistant, one key, over the process's stdin and stdout.

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::access::consent::Seal;
use crate::access::standing;
use crate::answer::sentences::Via;
use crate::config;
use crate::mcp::audit;
use crate::mcp::server::{Common, LemonfiberServer};
use crate::serve::Fatal;
use crate::stack::Stack;

pub async fn run() -> Result<(), Fatal> {
    let settings = config::stdio_settings(|name| std::env::var(name).ok())?;
    settings.key.withhold_from_output();
    settings.address.pin.withhold_from_output();
    audit::write_to(settings.conduct.audit.as_deref()).map_err(Fatal::AuditFile)?;
    let seal = Seal::made_now(settings.conduct.offer_life)?;
    let standing = standing::shared(None);
    let stack = Stack::new(&settings.address, settings.key, settings.conduct.answers)?;
    let common = Arc::new(Common::new(settings.conduct, seal));
    tracing::info!(stack = %settings.address.base_url, "serving MCP over stdio");
    let running = LemonfiberServer::new(Arc::new(stack), standing, common, Via::Stdio)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| Fatal::SessionNotStarted(Box::new(error)))?;
    let reason = running.waiting().await.map_err(Fatal::SessionFailed)?;
    tracing::info!(?reason, "the MCP session ended");
    Ok(())
}
