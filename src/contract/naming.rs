//! How the contract's operations are named as tools and resources: one definition, for the
//! generator and for whoever checks what it made.

/// What a read's resource URI begins with; the rest is its path after `/api/`.
pub const RESOURCE_SCHEME: &str = "lemonfiber://read/";
/// What a rehearsal tool's name begins with; the rest is its action tool's name.
pub const REHEARSE_PREFIX: &str = "rehearse_";

/// The consent argument a rehearsal answers and its act tool requires: the stack's offer.
pub const OFFER_ARGUMENT: &str = "offer";
/// The action argument that asks the stack to rehearse rather than act.
pub const DRY_RUN_ARGUMENT: &str = "dry_run";

/// `/api/held/{id}` → `read_held_by_id`; `/api/front-door` → `read_front_door`.
pub fn read_tool_name(path: &str) -> String {
    let segments: Vec<String> = path
        .trim_start_matches("/api/")
        .split('/')
        .map(
            |segment| match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(variable) => format!("by_{variable}"),
                None => segment.to_owned(),
            },
        )
        .collect();
    format!("read_{}", segments.join("_").replace('-', "_"))
}

/// `/api/held/{id}` → `lemonfiber://read/held/{id}`: a resource, or a template where the read
/// has path segments.
pub fn resource_uri(path: &str) -> String {
    format!("{RESOURCE_SCHEME}{}", path.trim_start_matches("/api/"))
}

/// `read_front_door` → `FrontDoor`: the read's variant of the generated `Read`.
pub fn read_variant(tool_name: &str) -> String {
    variant(tool_name.trim_start_matches("read_"))
}

/// `act_downloads_pause` → `DownloadsPause`: the action's variant of the generated `Action`.
pub fn action_variant(operation_id: &str) -> String {
    variant(operation_id.trim_start_matches("act_"))
}

/// `front_door` → `FrontDoor`.
fn variant(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// `restart` → `rehearse_restart`.
pub fn rehearsal_tool_name(act_tool: &str) -> String {
    format!("{REHEARSE_PREFIX}{act_tool}")
}
