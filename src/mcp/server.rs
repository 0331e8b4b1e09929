//! The MCP server: the tools and resources a key is offered, made from the catalogue by hand
//! (no macros), answering through the stack and handing its answers over as data. The handler
//! here is thin: where the server stands and what it lists is `listing`, a tool's run is
//! `running` (with `consenting` and `acting` for an action), and resources, prompts and watches
//! are each a file of their own.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CustomRequest,
    CustomResult, DiscoverResult, GetPromptRequestParams, GetPromptResponse, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
    SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio_util::sync::{CancellationToken, DropGuard};

mod acting;
mod caller;
mod consenting;
mod listening;
mod listing;
mod prompting;
mod ran;
mod resources;
mod running;
mod watching;

pub use caller::Caller;

use super::completions;
use super::notices::Notices;
use super::reach::{SessionReach, SessionsBegun};
use super::versions::{self, KNOWN_METHODS, PROTOCOL_VERSIONS, name_the_server_on, this_server};
use super::watches::{Tell, WatchCount, Watches};
use crate::access::consent::Seal;
use crate::access::standing::SharedStanding;
use crate::answer::outcome::ToolAnswer;
use crate::answer::sentences::{self, Via};
use crate::catalogue;
use crate::config::Conduct;
use crate::stack::{Failure, Stack};

/// What every session of the server shares, whichever key it serves: how it deals with the stack
/// and the assistant, the seal its offers are made with, and the watches every key holds.
#[derive(Debug)]
pub struct Common {
    pub conduct: Conduct,
    pub seal: Seal,
    watch_count: Arc<WatchCount>,
}

impl Common {
    pub fn new(conduct: Conduct, seal: Seal) -> Common {
        Common {
            conduct,
            seal,
            watch_count: Arc::default(),
        }
    }
}

pub struct LemonfiberServer {
    stack: Arc<Stack>,
    via: Via,
    standing: SharedStanding,
    common: Arc<Common>,
    notices: Notices,
    watches: Watches,
    /// Cancelled when the session this handler serves ends, so what it started for the session
    /// ends with it.
    session_ends: CancellationToken,
    _ends_with_the_session: DropGuard,
    /// Told when the session begins, over HTTP.
    sessions_begun: Option<Arc<dyn SessionsBegun>>,
}

impl LemonfiberServer {
    pub fn new(
        stack: Arc<Stack>,
        standing: SharedStanding,
        common: Arc<Common>,
        via: Via,
    ) -> LemonfiberServer {
        let session_ends = CancellationToken::new();
        LemonfiberServer {
            stack,
            via,
            standing,
            common,
            notices: Notices::default(),
            watches: Watches::default(),
            _ends_with_the_session: session_ends.clone().drop_guard(),
            session_ends,
            sessions_begun: None,
        }
    }

    /// This handler, telling `sessions` of the session it serves once its client has said it
    /// is initialized.
    pub fn telling(mut self, sessions: Arc<dyn SessionsBegun>) -> LemonfiberServer {
        self.sessions_begun = Some(sessions);
        self
    }

    /// This handler, for a call of the session reached by `reach`: its notices are the
    /// session's.
    pub fn in_session(mut self, reach: &SessionReach) -> LemonfiberServer {
        self.notices = reach.notices.clone();
        self
    }

    /// A `tools/call` for `caller`, speaking `version`: however the request reached the server,
    /// this is the one way a tool is called.
    pub async fn call_tool_for(
        &self,
        mut request: CallToolRequestParams,
        caller: Caller,
        version: Option<ProtocolVersion>,
    ) -> Result<ToolAnswer, McpError> {
        let Some(tool) = catalogue::find(&request.name) else {
            return Err(McpError::invalid_params(sentences::no_such_tool(), None));
        };
        let uri = tool.resource_of(request.arguments.as_ref());
        let caller = caller.calling(&mut request);
        let called = self.call(tool, request.arguments, "tool", &caller).await;
        if let Some(mut question) = called.pending {
            name_the_server_on(&mut question.meta, version);
            return Ok(ToolAnswer {
                response: question.into(),
                structured: None,
            });
        }
        let mut answer = called.framed.into_tool_result(&uri);
        if let CallToolResponse::Complete(result) = &mut answer.response {
            name_the_server_on(&mut result.meta, version);
        }
        Ok(answer)
    }
}

/// A failure's kind, as the log names it: never what the stack said with it.
pub(super) fn failure_name(failure: &Failure) -> &'static str {
    match failure {
        Failure::PinMismatch => "pin mismatch",
        Failure::Unreachable(_) => "unreachable",
        Failure::Refused(_) => "refused",
        Failure::Unexpected { .. } => "unexpected answer",
        Failure::TooLarge { .. } => "answer too large",
        Failure::PathOutsideTemplate => "path outside its template",
    }
}

impl ServerHandler for LemonfiberServer {
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&PROTOCOL_VERSIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let session = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|request| request.headers.get(HEADER_SESSION_ID))
            .and_then(|id| id.to_str().ok());
        if let (Some(sessions), Some(session)) = (&self.sessions_begun, session) {
            let reach = SessionReach {
                peer: context.peer.clone(),
                notices: self.notices.clone(),
            };
            sessions.begun(session, reach);
        }
        self.session_began(context.peer).await;
    }

    // Logging is deprecated from 2026-07-28 on, and served for the versions before it.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if versions::stateless(context.protocol_version()) {
            return Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                sentences::no_such_method(),
                None,
            ));
        }
        self.notices.asked(request);
        Ok(())
    }

    /// What `initialize` declares: the versions before 2026-07-28, logging among it.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(versions::capabilities(None))
            .with_server_info(this_server())
            .with_instructions(sentences::instructions())
    }

    /// What `server/discover` declares: only what the version it asks on is served.
    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        let mut info = self.get_info();
        info.capabilities = versions::capabilities(context.protocol_version());
        Ok(DiscoverResult::from_server_info(
            PROTOCOL_VERSIONS.to_vec(),
            info,
        ))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.accepted_filter(requested))
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        self.listening(subscription).await
    }

    /// A request the protocol library did not recognise: a method of the protocol whose
    /// parameters did not parse (it falls through to here), or a method no one serves.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let method = request.method.as_str();
        if KNOWN_METHODS.contains(&method) && !versions::removed(method, context.protocol_version())
        {
            Err(McpError::invalid_params(
                sentences::parameters_of_the_wrong_shape(),
                None,
            ))
        } else {
            Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                sentences::no_such_method(),
                None,
            ))
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(self.tools_listed(&context).await)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let version = context.protocol_version();
        let answer = self.call_tool_for(request, Caller::of(&context), version);
        answer.await.map(ToolAnswer::whole)
    }

    // Watching a resource one by one is `resources/subscribe` up to 2025-11-25, which the
    // protocol library names deprecated for the versions after.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let tell = Tell::Session(context.peer.clone());
        let watch = self.watch_of(&request.uri, tell, &context).await?;
        self.start_watch(watch, None)
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.watches.stop(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(self.prompts_listed(&context).await)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.prompt_rendered(request, &context).await
    }

    /// Values for a prompt's argument or a resource template's parameter, from what the stack
    /// answers this key: nothing the key could not read itself, and only identifiers the door
    /// hands over unchanged (issue 27). What the key is not offered is refused (issue 29).
    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let position = self.position(Some(&context.peer)).await;
        completions::complete(&self.stack, &position, &request, failure_name).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(self.resources_listed(&context).await)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(self.resource_templates_listed(&context).await)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.resource_read(request, &context).await
    }
}
