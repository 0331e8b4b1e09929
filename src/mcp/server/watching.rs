//! Watching a resource: only a resource of a read the key is offered, at a path the read takes,
//! and no more watches than a key and the server may hold.

use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::LemonfiberServer;
use crate::access::standing::Position;
use crate::answer::sentences;
use crate::catalogue::{self, Operation};
use crate::mcp::arguments;
use crate::mcp::versions::resource_not_found;
use crate::mcp::watches::{self, Tell, Watch};

impl LemonfiberServer {
    /// A watch of the resource at `uri`, told through `tell`: only a resource of a read this key
    /// is offered, at a path the read takes.
    pub(super) async fn watch_of(
        &self,
        uri: &str,
        tell: Tell,
        context: &RequestContext<RoleServer>,
    ) -> Result<Watch, McpError> {
        let version = context.protocol_version();
        let found = catalogue::reads().find_map(|tool| match tool.operation {
            Operation::Read(read) => Some((tool, read, tool.match_resource(uri)?)),
            _ => None,
        });
        let Some((tool, read, path_values)) = found else {
            return Err(resource_not_found(
                uri,
                sentences::no_such_resource(),
                version,
            ));
        };
        let named = Some(json!({ "uri": uri }));
        let offer = match self.position(Some(&context.peer)).await {
            Position::Connected(offer) => offer,
            Position::Refused(_) => {
                return Err(McpError::invalid_request(
                    sentences::key_refused(self.via),
                    named,
                ));
            }
            Position::Unreachable(..) => {
                return Err(McpError::internal_error(
                    sentences::notice_unreachable(),
                    named,
                ));
            }
        };
        if !offer.admits(tool) {
            return Err(McpError::invalid_params(
                sentences::not_offered(tool.name),
                named,
            ));
        }
        let arguments = arguments::check(tool.parameters_for(offer.audience), Some(path_values))
            .map_err(|problem| {
                McpError::invalid_params(sentences::argument(&problem, tool.name), named.clone())
            })?;
        Ok(Watch {
            uri: uri.to_owned(),
            read,
            arguments,
            stack: self.stack.clone(),
            standing: self.standing.clone(),
            every: self.common.conduct.watch_every,
            tell,
        })
    }

    /// Starts a watch, or says why not.
    pub(super) fn start_watch(
        &self,
        watch: Watch,
        until: Option<CancellationToken>,
    ) -> Result<(), McpError> {
        let uri = watch.uri.clone();
        self.watches
            .start(watch, &self.common.watch_count, until)
            .map_err(|watches::NotWatched::TooMany| {
                McpError::invalid_request(
                    sentences::too_many_watches(watches::PER_KEY, watches::IN_ALL),
                    Some(json!({ "uri": uri })),
                )
            })
    }
}
