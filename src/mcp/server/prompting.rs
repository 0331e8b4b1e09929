//! The prompts a key is offered, listed and rendered: none for a key not connected.

use rmcp::model::{GetPromptRequestParams, GetPromptResponse, ListPromptsResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::LemonfiberServer;
use crate::access::standing::Position;
use crate::answer::sentences;
use crate::mcp::prompts;
use crate::mcp::versions::name_the_server;

impl LemonfiberServer {
    pub(super) async fn prompts_listed(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> ListPromptsResult {
        let position = self.position(Some(&context.peer)).await;
        let offered = match &position {
            Position::Connected(offer) => prompts::offered(offer).map(prompts::listed).collect(),
            _ => Vec::new(),
        };
        let mut listed = ListPromptsResult::with_all_items(offered);
        name_the_server(&mut listed.meta, context);
        listed
    }

    pub(super) async fn prompt_rendered(
        &self,
        request: GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let position = self.position(Some(&context.peer)).await;
        let found = match &position {
            Position::Connected(offer) => {
                prompts::offered(offer).find(|prompt| prompt.name == request.name)
            }
            _ => None,
        };
        let Some(prompt) = found else {
            return Err(McpError::invalid_params(sentences::no_such_prompt(), None));
        };
        let mut rendered =
            prompts::rendered(prompt, request.arguments.as_ref(), self.stack.withheld()).map_err(
                |fault| {
                    McpError::invalid_params(sentences::prompt_argument(prompt.name, &fault), None)
                },
            )?;
        name_the_server(&mut rendered.meta, context);
        Ok(rendered.into())
    }
}
