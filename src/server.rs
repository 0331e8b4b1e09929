//! The MCP server: the tools and resources a key is offered, made from the catalogue by hand
//! (no macros), answering through the stack and handing its answers over as data.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio::sync::Mutex;

use crate::arguments::Arguments;
use crate::catalogue::{self, Action, Audience, Offered, Operation, ToolSpec};
use crate::jobs;
use crate::outcome::{self, Framed};
use crate::sentences;
use crate::stack::{Capabilities, CapabilityState, Failure, Refusal, Stack};

/// How long what the stack said a key may do is trusted before it is asked again.
const CAPABILITIES_FRESH_FOR: Duration = Duration::from_secs(30);

pub struct LemonfiberServer {
    stack: Stack,
    /// How long an action's job is followed before the answer says it is still running.
    job_wait: Duration,
    capabilities: Mutex<Option<(Instant, Arc<Capabilities>)>>,
}

/// What this key is offered, from its capabilities.
struct Offer {
    capabilities: Arc<Capabilities>,
    audience: Audience,
}

impl Offer {
    /// A key is offered a read the stack marks available; a member only one with household words.
    /// A key is offered a tool whose path the stack marks available (a member only one with
    /// household words), and the job tool whenever it is offered an action.
    fn admits(&self, tool: &ToolSpec) -> bool {
        match tool.operation {
            Operation::Job => catalogue::TOOLS
                .iter()
                .any(|other| matches!(other.operation, Operation::Act(_)) && self.admits(other)),
            _ => {
                (self.audience == Audience::Operator || tool.household_words.is_some())
                    && self.capabilities.state_of(tool.capability)
                        == Some(CapabilityState::Available)
            }
        }
    }

    fn tools(&self) -> impl Iterator<Item = &'static ToolSpec> + '_ {
        catalogue::TOOLS.iter().filter(|tool| self.admits(tool))
    }
}

impl LemonfiberServer {
    pub fn new(stack: Stack, job_wait: Duration) -> LemonfiberServer {
        LemonfiberServer {
            stack,
            job_wait,
            capabilities: Mutex::new(None),
        }
    }

    async fn offer(&self) -> Result<Offer, Failure> {
        let mut cached = self.capabilities.lock().await;
        let capabilities = match cached.as_ref() {
            Some((at, capabilities)) if at.elapsed() < CAPABILITIES_FRESH_FOR => {
                capabilities.clone()
            }
            _ => {
                let capabilities = Arc::new(self.stack.capabilities().await?);
                *cached = Some((Instant::now(), capabilities.clone()));
                capabilities
            }
        };
        let audience = if capabilities.scope.as_deref() == Some("member") {
            Audience::Household
        } else {
            Audience::Operator
        };
        Ok(Offer {
            capabilities,
            audience,
        })
    }

    /// Runs one tool: the offer, the arguments, then the stack. Nothing reaches the stack for a
    /// tool this key is not offered, for arguments the tool does not take, or for an action
    /// without the offer that is the person's yes (F13-R4).
    async fn run(&self, tool: &'static ToolSpec, given: Option<JsonObject>) -> Framed {
        let offer = match self.offer().await {
            Ok(offer) => offer,
            Err(failure) => return outcome::failure(&failure),
        };
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
        };
        answered.unwrap_or_else(|failure| {
            tracing::info!(
                tool = tool.name,
                failure = failure_name(&failure),
                "the stack did not answer the tool"
            );
            outcome::failure(&failure)
        })
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
        && refusal
            .problem
            .get("code")
            .and_then(serde_json::Value::as_str)
            == action.stale_offer_code()
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
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(
            Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
                .with_title("lemonfiber"),
        )
        .with_instructions(sentences::instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = match self.offer().await {
            Ok(offer) => offer
                .tools()
                .map(|tool| tool.tool(offer.audience))
                .collect(),
            Err(failure) => {
                tracing::warn!(
                    failure = failure_name(&failure),
                    "the stack's capabilities could not be read; no tools offered yet"
                );
                Vec::new()
            }
        };
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = catalogue::find(&request.name) else {
            return Err(McpError::invalid_params(sentences::no_such_tool(), None));
        };
        let uri = tool.resource.unwrap_or_default();
        Ok(self
            .run(tool, request.arguments)
            .await
            .into_tool_result(uri)
            .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resources = match self.offer().await {
            Ok(offer) => offer
                .tools()
                .filter_map(|tool| match tool.resource(offer.audience)? {
                    Offered::Resource(resource) => Some(resource),
                    Offered::Template(_) => None,
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let templates = match self.offer().await {
            Ok(offer) => offer
                .tools()
                .filter_map(|tool| match tool.resource(offer.audience)? {
                    Offered::Template(template) => Some(template),
                    Offered::Resource(_) => None,
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let found =
            catalogue::reads().find_map(|tool| Some((tool, tool.match_resource(&request.uri)?)));
        let Some((tool, path_values)) = found else {
            return Err(McpError::resource_not_found(
                sentences::no_such_resource(),
                None,
            ));
        };
        let framed = self.run(tool, Some(path_values)).await;
        if framed.is_error {
            return Err(McpError::internal_error(framed.text, None));
        }
        Ok(ReadResourceResult::new(framed.into_resource_contents(&request.uri)).into())
    }
}
