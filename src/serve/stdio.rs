//! `lemonfiber-mcp stdio`: one assistant, one key, over the process's stdin and stdout.

mod capped;
mod lines;

use std::sync::Arc;

use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

use crate::access::consent::Seal;
use crate::access::standing;
use crate::answer::sentences::Via;
use crate::mcp::audit;
use crate::mcp::server::{Common, LemonfiberServer};
use crate::serve::Fatal;
use crate::stack::Stack;
use capped::Capped;
use lines::Lines;

/// The most calls taken up at once; past it a call is refused until one finishes. An assistant
/// waits for most of its calls before the next, so this is room for many in parallel, and still
/// few enough connections to the stack.
pub const CALLS_AT_ONCE: usize = 64;

pub async fn run() -> Result<(), Fatal> {
    let settings = crate::link::stdio_settings().await?;
    settings.key.withhold_from_output();
    settings.address.pin.withhold_from_output();
    audit::write_to(settings.conduct.audit.as_deref()).map_err(Fatal::AuditFile)?;
    let seal = Seal::made_now(settings.conduct.offer_life)?;
    let standing = standing::shared(None);
    let stack = Stack::new(&settings.address, settings.key, settings.conduct.answers)?;
    let common = Arc::new(Common::new(settings.conduct, seal));
    tracing::info!(stack = %settings.address.base_url, "serving MCP over stdio");
    // Once stdin ends no request can come, and a listening stream is ended then: the protocol
    // library waits for the handlers still running before it lets the process exit.
    let read_ended = CancellationToken::new();
    let server = LemonfiberServer::new(Arc::new(stack), standing, common, Via::Stdio);
    let (stdin, stdout) = rmcp::transport::stdio();
    let running = Capped::new(server, CALLS_AT_ONCE, read_ended.clone())
        .serve(Lines::new(stdin, stdout, read_ended))
        .await
        .map_err(|error| Fatal::SessionNotStarted(Box::new(error)))?;
    let reason = running.waiting().await.map_err(Fatal::SessionFailed)?;
    tracing::info!(?reason, "the MCP session ended");
    Ok(())
}
