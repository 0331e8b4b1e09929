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

#[cfg(test)]
mod tests {
    use super::*;

    use rmcp::model::ErrorCode;

    const URI: &str = "lemonfiber://read/downloads";

    fn decided(decision: Decision, status: Option<u16>) -> Decided {
        Decided { decision, status }
    }

    fn error(decided: Decided, version: ProtocolVersion) -> McpError {
        resource_error(URI, "the sentence".to_owned(), decided, Some(version))
    }

    /// F13-R3: a resource of a read the key is not offered is the caller's to change, and
    /// names the resource it asked for.
    #[test]
    fn a_resource_not_offered_is_invalid_params_naming_the_resource() {
        let error = error(
            decided(Decision::NotOffered, None),
            ProtocolVersion::V_2025_11_25,
        );
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(error.message, "the sentence");
        assert_eq!(error.data, Some(json!({ "uri": URI })));
    }

    #[test]
    fn a_resource_asked_with_a_value_its_read_does_not_take_is_invalid_params() {
        let error = error(
            decided(Decision::RefusedBeforeStack(ARGUMENTS_REFUSED), None),
            ProtocolVersion::V_2025_11_25,
        );
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(error.data, Some(json!({ "uri": URI })));
    }

    /// What the stack says is not there is a resource not found, in the code of the version
    /// spoken: its own code up to 2025-11-25, invalid params naming the resource from
    /// 2026-07-28.
    #[test]
    fn a_resource_the_stack_says_is_not_there_is_not_found_in_the_versions_code() {
        let not_there = decided(Decision::Sent, Some(404));
        let before = error(not_there, ProtocolVersion::V_2025_11_25);
        assert_eq!(before.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert_eq!(before.data, Some(json!({ "uri": URI })));
        let after = error(not_there, ProtocolVersion::V_2026_07_28);
        assert_eq!(after.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(after.data, Some(json!({ "uri": URI })));
    }

    /// F13-R9, F13-R10: anything else (a refused key, an unreachable stack, the stack's own
    /// refusal) is the server's error, and carries the server's sentence with nothing beside it.
    #[test]
    fn any_other_failed_read_is_the_servers_error_with_its_sentence_alone() {
        for other in [
            decided(Decision::RefusedBeforeStack("key-refused"), None),
            decided(Decision::RefusedBeforeStack("stack-unreachable"), None),
            decided(Decision::Sent, Some(500)),
            decided(Decision::Sent, Some(403)),
            decided(Decision::Sent, None),
        ] {
            let error = error(other, ProtocolVersion::V_2025_11_25);
            assert_eq!(
                error.code,
                ErrorCode::INTERNAL_ERROR,
                "{:?}",
                other.decision
            );
            assert_eq!(error.message, "the sentence");
            assert_eq!(error.data, None);
        }
    }
}
