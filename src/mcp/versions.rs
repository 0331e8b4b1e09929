//! What differs by protocol version: the versions served, the methods each knows, how a result
//! names the server, and how a missing resource is said.

use std::borrow::Cow;

use rmcp::model::{Implementation, MetaObject, ProtocolVersion, ServerCapabilities};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::json;

/// The methods a client may ask of a server, each with parameters of a shape the protocol sets:
/// one of these whose parameters do not parse is invalid params, not an unknown method. Named by
/// the protocol library's own constants, so the list is its own.
pub const KNOWN_METHODS: [&str; 21] = {
    use rmcp::model::{
        CallToolRequestMethod, CancelTaskMethod, CompleteRequestMethod, ConstString,
        DiscoverRequestMethod, GetPromptRequestMethod, GetSkillRequestMethod, GetTaskMethod,
        InitializeResultMethod, ListPromptsRequestMethod, ListResourceTemplatesRequestMethod,
        ListResourcesRequestMethod, ListSkillsRequestMethod, ListToolsRequestMethod,
        PingRequestMethod, ReadResourceDirectoryRequestMethod, ReadResourceRequestMethod,
        SetLevelRequestMethod, SubscribeRequestMethod, SubscriptionsListenRequestMethod,
        UnsubscribeRequestMethod, UpdateTaskMethod,
    };
    [
        InitializeResultMethod::VALUE,
        PingRequestMethod::VALUE,
        DiscoverRequestMethod::VALUE,
        CompleteRequestMethod::VALUE,
        SetLevelRequestMethod::VALUE,
        GetPromptRequestMethod::VALUE,
        ListPromptsRequestMethod::VALUE,
        ListResourcesRequestMethod::VALUE,
        ListResourceTemplatesRequestMethod::VALUE,
        ReadResourceRequestMethod::VALUE,
        SubscribeRequestMethod::VALUE,
        UnsubscribeRequestMethod::VALUE,
        ReadResourceDirectoryRequestMethod::VALUE,
        SubscriptionsListenRequestMethod::VALUE,
        CallToolRequestMethod::VALUE,
        ListToolsRequestMethod::VALUE,
        GetTaskMethod::VALUE,
        UpdateTaskMethod::VALUE,
        CancelTaskMethod::VALUE,
        ListSkillsRequestMethod::VALUE,
        GetSkillRequestMethod::VALUE,
    ]
};

/// The methods 2026-07-28 removed: asked on that version, each is an unknown method.
const REMOVED_IN_2026_07_28: [&str; 4] = {
    use rmcp::model::{
        ConstString, InitializeResultMethod, SetLevelRequestMethod, SubscribeRequestMethod,
        UnsubscribeRequestMethod,
    };
    [
        InitializeResultMethod::VALUE,
        SetLevelRequestMethod::VALUE,
        SubscribeRequestMethod::VALUE,
        UnsubscribeRequestMethod::VALUE,
    ]
};

/// Where a 2026-07-28 result's `_meta` names the server.
const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// The protocol versions served, over either transport: from 2025-03-26 on, which assistants in
/// the field (provider-hosted ones among them) still speak.
pub const PROTOCOL_VERSIONS: [ProtocolVersion; 4] = [
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// Whether a request speaks 2026-07-28 or later: no handshake, per-request metadata.
pub fn stateless(version: Option<ProtocolVersion>) -> bool {
    version.is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
}

/// Whether `method`, asked on `version`, is one the version removed.
pub fn removed(method: &str, version: Option<ProtocolVersion>) -> bool {
    REMOVED_IN_2026_07_28.contains(&method) && stateless(version)
}

/// What the server offers a client of `version`. Logging (`logging/setLevel` and the notices it
/// asks for) only before 2026-07-28: that version deprecates it and moves the level into each
/// request, which this server does not serve, so a 2026 client is not told of it.
// The protocol library names logging deprecated for the versions that still have it.
#[allow(deprecated)]
pub fn capabilities(version: Option<ProtocolVersion>) -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::builder()
        .enable_tools()
        .enable_tool_list_changed()
        .enable_resources()
        .enable_resources_list_changed()
        .enable_resources_subscribe()
        .enable_prompts()
        .enable_completions()
        .build();
    if !stateless(version) {
        capabilities.logging = Some(Default::default());
    }
    capabilities
}

/// This server, as it names itself to clients.
pub fn this_server() -> Implementation {
    Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")).with_title("lemonfiber")
}

/// From 2026-07-28 every result names the server in its `_meta`, as `server/discover` does.
pub fn name_the_server(meta: &mut Option<MetaObject>, context: &RequestContext<RoleServer>) {
    name_the_server_on(meta, context.protocol_version());
}

/// As [`name_the_server`], for a request speaking `version`.
pub fn name_the_server_on(meta: &mut Option<MetaObject>, version: Option<ProtocolVersion>) {
    if stateless(version) {
        meta.get_or_insert_with(MetaObject::new)
            .insert(SERVER_INFO_META.to_owned(), json!(this_server()));
    }
}

/// No resource at `uri`: `-32002` up to 2025-11-25, an invalid-params error from 2026-07-28;
/// either way naming the resource.
pub fn resource_not_found(
    uri: &str,
    sentence: impl Into<Cow<'static, str>>,
    version: Option<ProtocolVersion>,
) -> McpError {
    let named = Some(json!({ "uri": uri }));
    if stateless(version) {
        McpError::invalid_params(sentence, named)
    } else {
        McpError::resource_not_found(sentence, named)
    }
}
