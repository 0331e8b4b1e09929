//! The MCP server: the tools and resources a key is offered, made from the catalogue by hand
//! (no macros), answering through the stack and handing its answers over as data.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio::sync::Mutex;

use crate::arguments::Arguments;
use crate::catalogue::{self, Audience, Offered, Operation, ToolSpec};
use crate::outcome::{self, Framed};
use crate::sentences;
use crate::stack::{Capabilities, CapabilityState, Failure, Stack};

/// How long what the stack said a key may do is trusted before it is asked again.
const CAPABILITIES_FRESH_FOR: Duration = Duration::from_secs(30);

pub struct LemonfiberServer {
    stack: Stack,
    capabilities: Mutex<Option<(Instant, Arc<Capabilities>)>>,
}

/// What this key is offered, from its capabilities.
struct Offer {
    capabilities: Arc<Capabilities>,
    audience: Audience,
}

impl Offer {
    /// A key is offered a read the stack marks available; a member only one with household words.
    fn admits(&self, tool: &ToolSpec) -> bool {
        let household_may = self.audience == Audience::Operator || tool.household_words.is_some();
        matches!(tool.operation, Operation::Read(_))
            && household_may
            && self.capabilities.state_of(tool.capability) == Some(CapabilityState::Available)
    }

    fn tools(&self) -> impl Iterator<Item = &'static ToolSpec> + '_ {
        catalogue::TOOLS.iter().filter(|tool| self.admits(tool))
    }
}

impl LemonfiberServer {
    pub fn new(stack: Stack) -> LemonfiberServer {
        LemonfiberServer {
            stack,
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
    /// tool this key is not offered or for arguments the tool does not take.
    async fn run(
        &self,
        tool: &'static ToolSpec,
        given: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Framed {
        let offer = match self.offer().await {
            Ok(offer) => offer,
            Err(failure) => return outcome::failure(&failure),
        };
        if !offer.admits(tool) {
            return outcome::not_offered(tool.name);
        }
        let arguments = match Arguments::check(tool.parameters_for(offer.audience), given) {
            Ok(arguments) => arguments,
            Err(problem) => return outcome::argument_refused(&problem, tool.name),
        };
        let Operation::Read(read) = tool.operation else {
            return outcome::not_offered(tool.name);
        };
        match self.stack.read(read, &arguments).await {
            Ok(reply) => outcome::answer(tool.name, reply),
            Err(failure) => {
                tracing::info!(
                    tool = tool.name,
                    failure = failure_name(&failure),
                    "the stack did not answer the tool"
                );
                outcome::failure(&failure)
            }
        }
    }
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
