//! The resources a key is offered, listed and read: a read is the read tool's call, and an error
//! carries the server's sentence alone, in the codes of the protocol version spoken.

use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::json;

use super::LemonfiberServer;
use super::caller::Caller;
use super::ran::{ARGUMENTS_REFUSED, Called, Decided};
use crate::access::offer::Offer;
use crate::answer::sentences;
use crate::catalogue;
use crate::mcp::audit::Decision;
use crate::mcp::versions::{name_the_server, resource_not_found};

impl LemonfiberServer {
    pub(super) async fn resources_listed(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> ListResourcesResult {
        let position = self.position(Some(&context.peer)).await;
        let mut listed = ListResourcesResult::with_all_items(
            position.offered().map(Offer::resources).unwrap_or_default(),
        );
        name_the_server(&mut listed.meta, context);
        listed
    }

    pub(super) async fn resource_templates_listed(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> ListResourceTemplatesResult {
        let position = self.position(Some(&context.peer)).await;
        let mut listed = ListResourceTemplatesResult::with_all_items(
            position
                .offered()
                .map(Offer::resource_templates)
                .unwrap_or_default(),
        );
        name_the_server(&mut listed.meta, context);
        listed
    }

    /// A resource read: the call of the read whose template the URI matches.
    pub(super) async fn resource_read(
        &self,
        request: ReadResourceRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let found =
            catalogue::reads().find_map(|tool| Some((tool, tool.match_resource(&request.uri)?)));
        let Some((tool, path_values)) = found else {
            return Err(resource_not_found(
                &request.uri,
                sentences::no_such_resource(),
                context.protocol_version(),
            ));
        };
        let Called {
            framed, decided, ..
        } = self
            .call(tool, Some(path_values), "resource", &Caller::of(context))
            .await;
        // An error carries the server's sentence only: JSON-RPC errors are logged by clients
        // and proxies, where the stack's data must not go.
        if framed.is_error {
            return Err(resource_error(
                &request.uri,
                framed.sentence,
                decided,
                context.protocol_version(),
            ));
        }
        let mut read = ReadResourceResult::new(framed.into_resource_contents(&request.uri));
        name_the_server(&mut read.meta, context);
        Ok(read.into())
    }
}

/// A resource read that came to an error, in the codes of the protocol version spoken: what was
/// not offered to the key, or asked with a value the read does not take, is the caller's to
/// change (invalid params); what the stack says is not there is a resource not found (from
/// 2026-07-28 an invalid-params error naming the resource); anything else is the server's.
fn resource_error(
    uri: &str,
    sentence: String,
    decided: Decided,
    version: Option<ProtocolVersion>,
) -> McpError {
    let named = Some(json!({ "uri": uri }));
    match decided {
        Decided {
            decision: Decision::NotOffered | Decision::RefusedBeforeStack(ARGUMENTS_REFUSED),
            ..
        } => McpError::invalid_params(sentence, named),
        Decided {
            status: Some(404), ..
        } => resource_not_found(uri, sentence, version),
        _ => McpError::internal_error(sentence, None),
    }
}
