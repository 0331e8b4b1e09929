//! The MCP server: the tools and resources a key is offered, made from the catalogue by hand
//! (no macros), answering through the stack and handing its answers over as data.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};

use crate::arguments::Arguments;
use crate::catalogue::{self, Action, Operation, ToolSpec};
use crate::jobs;
use crate::offer::{self, Offer};
use crate::outcome::{self, Framed};
use crate::sentences;
use crate::stack::{Failure, Refusal, Stack};
use crate::standing::{self, Position, SharedStanding};

/// How the assistant reaches this server, which decides what it is told to do about a refused
/// key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Stdio,
    Http,
}

/// The protocol versions served: from 2025-06-18 on.
const PROTOCOL_VERSIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

pub struct LemonfiberServer {
    stack: Arc<Stack>,
    via: Via,
    standing: SharedStanding,
    /// How long an action's job is followed before the answer says it is still running.
    job_wait: Duration,
}

impl LemonfiberServer {
    pub fn new(
        stack: Arc<Stack>,
        standing: SharedStanding,
        job_wait: Duration,
        via: Via,
    ) -> LemonfiberServer {
        LemonfiberServer {
            stack,
            via,
            standing,
            job_wait,
        }
    }

    /// Where the server stands for this key, reading the capabilities again when they are stale
    /// (never for a refused key). Tells the client when what it is offered has changed, which can
    /// only happen when they are read.
    async fn position(&self, peer: &Peer<RoleServer>) -> Position {
        let mut standing = self.standing.lock().await;
        if !standing.needs_reading() {
            return standing.position();
        }
        let read = self.stack.capabilities().await;
        if let Err(failure) = &read {
            tracing::info!(
                failure = failure_name(failure),
                "the stack's capabilities could not be read"
            );
        }
        standing.record(read);
        let position = standing.position();
        let offered = listed(&position)
            .iter()
            .map(|tool| format!("{}\n{:?}", tool.name, tool.description))
            .collect();
        let changed = standing.note_offered(offered);
        drop(standing);
        if changed {
            tracing::info!("what this key is offered has changed");
            let _ = peer.notify_tool_list_changed().await;
            let _ = peer.notify_resource_list_changed().await;
        }
        position
    }

    /// Runs one tool: where the server stands, the offer, the arguments, then the stack. Nothing
    /// reaches the stack for a refused key, a tool this key is not offered, arguments the tool
    /// does not take, or an action without the offer that is the person's yes (F13-R4).
    async fn run(
        &self,
        tool: &'static ToolSpec,
        given: Option<JsonObject>,
        peer: &Peer<RoleServer>,
    ) -> Framed {
        let offer = match self.position(peer).await {
            Position::Refused(_) => return outcome::key_refused(self.via),
            Position::Unreachable(failure, _) => return outcome::failure(&failure),
            Position::Connected(offer) => offer,
        };
        if tool.operation == Operation::Connection {
            return outcome::connected(offer.scope());
        }
        if !offer.admits(tool) {
            return outcome::not_offered(tool.name);
        }
        if let Operation::Act(action) = tool.operation
            && let Some(rehearsal) = action.rehearsal_tool()
            && lacks_an_offer(given.as_ref())
        {
            return outcome::rehearse_first(tool.name, rehearsal);
        }
        let arguments = match Arguments::check(tool.parameters_for(offer.audience), given) {
            Ok(arguments) => arguments,
            Err(problem) => return outcome::argument_refused(&problem, tool.name),
        };
        let answered = match tool.operation {
            Operation::Read(read) => self
                .stack
                .read(read, &arguments)
                .await
                .map(|reply| outcome::answer(tool.name, reply)),
            Operation::Rehearse(action) => self
                .stack
                .act(action, &arguments, true)
                .await
                .map(|reply| outcome::rehearsed(tool.name, action.act_tool(), reply)),
            Operation::Act(action) => self.act(tool, action, &arguments).await,
            Operation::Job => {
                let job = arguments.text("job").unwrap_or_default();
                jobs::ask(&self.stack, &job)
                    .await
                    .map(|state| outcome::job(&job, state, None))
            }
            Operation::Connection => return outcome::connected(offer.scope()),
        };
        match answered {
            Ok(framed) => framed,
            Err(failure) => self.failed(tool, failure, peer).await,
        }
    }

    /// What a failed call says, and what it changes: a refused key is refused for good; a scope
    /// that does not reach means the capabilities are read again (and the client told).
    async fn failed(&self, tool: &ToolSpec, failure: Failure, peer: &Peer<RoleServer>) -> Framed {
        tracing::info!(
            tool = tool.name,
            failure = failure_name(&failure),
            "the stack did not answer the tool"
        );
        if let Failure::Refused(refusal) = &failure {
            if standing::refuses_the_key(refusal) {
                self.standing.lock().await.refuse();
                return outcome::key_refused(self.via);
            }
            if standing::out_of_scope(refusal) {
                self.standing.lock().await.forget_capabilities();
                self.position(peer).await;
            }
        }
        outcome::failure(&failure)
    }

    /// Acts once, never again on its own: a stale offer is said as such, and a job the action
    /// started is followed for a while.
    async fn act(
        &self,
        tool: &ToolSpec,
        action: Action,
        arguments: &Arguments,
    ) -> Result<Framed, Failure> {
        let reply = match self.stack.act(action, arguments, false).await {
            Ok(reply) => reply,
            Err(Failure::Refused(refusal)) if is_stale(action, &refusal) => {
                let rehearsal = action.rehearsal_tool().unwrap_or(tool.name);
                return Ok(outcome::stale(tool.name, rehearsal, &refusal));
            }
            Err(failure) => return Err(failure),
        };
        tracing::info!(
            tool = tool.name,
            status = reply.status,
            "the stack took the action"
        );
        let Some(job) = jobs::started(&reply) else {
            return Ok(outcome::acted(tool.name, reply));
        };
        let started = Instant::now();
        match jobs::follow(&self.stack, &job, self.job_wait).await {
            Ok(state) => Ok(outcome::job(
                &job,
                state,
                Some((tool.name, started.elapsed())),
            )),
            Err(failure) => {
                tracing::info!(
                    tool = tool.name,
                    failure = failure_name(&failure),
                    "the job could not be followed"
                );
                Ok(outcome::job_not_followed(tool.name, reply))
            }
        }
    }
}

/// The tools listed in a position: what the key is offered, or, before the stack has ever
/// answered, the connection tool alone.
fn listed(position: &Position) -> Vec<Tool> {
    match position.offer() {
        Some(offer) => offer.listed_tools(),
        None => offer::before_the_stack_answers(),
    }
}

/// Whether an act tool was called with no offer at all (left out, null or blank): the one thing
/// the server asks of an action before anything else. An offer of the wrong type is left to the
/// argument check, which says so.
fn lacks_an_offer(given: Option<&JsonObject>) -> bool {
    match given.and_then(|given| given.get("offer")) {
        None | Some(serde_json::Value::Null) => true,
        Some(serde_json::Value::String(offer)) => offer.trim().is_empty(),
        Some(_) => false,
    }
}

fn is_stale(action: Action, refusal: &Refusal) -> bool {
    refusal.status == 400
        && action.stale_offer_code().is_some()
        && refusal.code() == action.stale_offer_code()
}

fn failure_name(failure: &Failure) -> &'static str {
    match failure {
        Failure::PinMismatch => "pin mismatch",
        Failure::Unreachable(_) => "unreachable",
        Failure::Refused(_) => "refused",
        Failure::Unexpected { .. } => "unexpected answer",
    }
}

impl ServerHandler for LemonfiberServer {
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&PROTOCOL_VERSIONS)
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
                    .with_title("lemonfiber"),
            )
            .with_instructions(sentences::instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(listed(
            &self.position(&context.peer).await,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = catalogue::find(&request.name) else {
            return Err(McpError::invalid_params(sentences::no_such_tool(), None));
        };
        let uri = tool.resource.unwrap_or_default();
        Ok(self
            .run(tool, request.arguments, &context.peer)
            .await
            .into_tool_result(uri)
            .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let position = self.position(&context.peer).await;
        Ok(ListResourcesResult::with_all_items(
            position.offer().map(Offer::resources).unwrap_or_default(),
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let position = self.position(&context.peer).await;
        Ok(ListResourceTemplatesResult::with_all_items(
            position
                .offer()
                .map(Offer::resource_templates)
                .unwrap_or_default(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let found =
            catalogue::reads().find_map(|tool| Some((tool, tool.match_resource(&request.uri)?)));
        let Some((tool, path_values)) = found else {
            return Err(McpError::resource_not_found(
                sentences::no_such_resource(),
                None,
            ));
        };
        let framed = self.run(tool, Some(path_values), &context.peer).await;
        if framed.is_error {
            return Err(McpError::internal_error(framed.text, None));
        }
        Ok(ReadResourceResult::new(framed.into_resource_contents(&request.uri)).into())
    }
}
