//! The catalogue's shape, as lines a person reads: each tool in order with its title, role,
//! hints and the outline of its input and output schemas, its words cut to their first few and
//! a hash. The golden copy of it (`tests/golden/catalogue.txt`) makes a change to what the
//! assistant is offered show in review as a few lines, not as the generated Rust.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Problems;
use super::naming::resource_uri;
use super::render::{Hints, ToolAnswers, hints, input_schema, tool_answers};
use super::tools::Role;
use super::vocabulary::Audience;
use super::words::WordedTool;

/// How many words of a description the shape keeps: enough to know it by, never the prose.
const WORDS_KEPT: usize = 6;

/// The shape of the catalogue, ending with every definition the output schemas share, outlined
/// once.
pub fn catalogue_shape(catalogue: &[WordedTool], document: &Value) -> Result<String, Problems> {
    let mut lines = Vec::new();
    let mut definitions = BTreeMap::new();
    for worded in catalogue {
        lines.extend(tool_shape(worded, document, &mut definitions)?);
        lines.push(String::new());
    }
    lines.push("definitions the output schemas share".to_owned());
    for (name, schema) in &definitions {
        lines.push(format!("  {name}: {}", kind_of(schema)));
        outline(schema, 2, false, &mut lines);
    }
    Ok(lines.join("\n") + "\n")
}

/// One tool's lines; the definitions its output schema holds are added to `definitions`.
fn tool_shape(
    worded: &WordedTool,
    document: &Value,
    definitions: &mut BTreeMap<String, Value>,
) -> Result<Vec<String>, Problems> {
    let WordedTool {
        tool,
        words,
        parameters,
    } = worded;
    let role = match tool.role {
        Role::Read(_) => "read",
        Role::Job => "job",
        Role::Connection => "connection",
        Role::Rehearse(_) => "rehearse",
        Role::Act(_) => "act",
    };
    let Hints {
        read_only,
        destructive,
        idempotent,
        open_world,
    } = hints(tool);
    let mut lines = vec![
        format!("tool {}", tool.name),
        format!("  title: {}", words.title.trim()),
        format!("  role: {role}, from {}", tool.path),
    ];
    if matches!(tool.role, Role::Read(_)) {
        lines.push(format!("  resource: {}", resource_uri(&tool.path)));
    }
    lines.push(format!(
        "  hints: read-only {}, destructive {}, idempotent {}, open-world {}",
        yes_no(read_only),
        yes_no(destructive),
        yes_no(idempotent),
        yes_no(open_world)
    ));
    lines.push(format!("  operator words: {}", gist(&words.operator)));
    lines.push(format!(
        "  household words: {}",
        words.household.as_deref().map_or("none".to_owned(), gist)
    ));
    let mut audiences = vec![("operator", Audience::Operator)];
    if words.household.is_some() {
        audiences.push(("household", Audience::Household));
    }
    for (whose, audience) in audiences {
        let schema: Value =
            serde_json::from_str(&input_schema(parameters, audience)).map_err(|error| {
                vec![format!(
                    "tool {}: its {whose} input schema is not JSON: {error}",
                    tool.name
                )]
            })?;
        lines.push(format!("  input for the {whose}: {}", kind_of(&schema)));
        outline(&schema, 2, true, &mut lines);
    }
    let ToolAnswers { output, .. } = tool_answers(tool, document)?;
    match output {
        Some(output) => {
            lines.push(format!("  output: {}", kind_of(&output)));
            outline(&output, 2, false, &mut lines);
            for (name, schema) in output
                .get("$defs")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                definitions
                    .entry(name.clone())
                    .or_insert_with(|| schema.clone());
            }
        }
        None => lines.push("  output: not declared".to_owned()),
    }
    Ok(lines)
}

/// What a schema is, in a few words: the definition it names, its alternatives, or its type.
fn kind_of(schema: &Value) -> String {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        return target.trim_start_matches("#/$defs/").to_owned();
    }
    for (key, said) in [
        ("anyOf", "any of"),
        ("oneOf", "one of"),
        ("allOf", "all of"),
    ] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let branches: Vec<String> = branches.iter().map(kind_of).collect();
            return format!("{said} {}", branches.join(" | "));
        }
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of {}", values.join(", "));
    }
    if let Some(value) = schema.get("const") {
        return format!("= {value}");
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".to_owned(),
    };
    match schema.get("items") {
        Some(items) => format!("{kind} of {}", kind_of(items)),
        None => kind,
    }
}

/// A line for each property of a schema, sorted by name, and for the properties of whatever it
/// holds inline (an object's fields, an array's items, the branches of a union), indented.
/// `worded`: the descriptions are the words file's, so each line carries their hash.
fn outline(schema: &Value, depth: usize, worded: bool, lines: &mut Vec<String>) {
    let indent = "  ".repeat(depth);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut properties: Vec<(&String, &Value)> = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .collect();
    properties.sort_by_key(|(name, _)| *name);
    for (name, property) in properties {
        let mut line = format!("{indent}{name}: {}", kind_of(property));
        if required.contains(&name.as_str()) {
            line.push_str(", required");
        }
        if let Some(default) = property.get("default") {
            line.push_str(&format!(", default {default}"));
        }
        if let Some(description) = property.get("description").and_then(Value::as_str)
            && worded
        {
            line.push_str(&format!(", words #{}", hash(description)));
        }
        lines.push(line);
        outline(property, depth + 1, worded, lines);
    }
    if let Some(items) = schema.get("items") {
        outline(items, depth, worded, lines);
    }
    // Each branch written out in place is outlined under a line of its own, so two branches'
    // fields never read as one object's.
    for key in ["anyOf", "oneOf", "allOf"] {
        let branches = schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for (number, branch) in branches.enumerate() {
            if branch.get("properties").is_some() {
                lines.push(format!(
                    "{indent}branch {}: {}",
                    number + 1,
                    kind_of(branch)
                ));
                outline(branch, depth + 1, worded, lines);
            }
        }
    }
}

fn yes_no(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

/// A description's first words and a hash of the whole: any change to it changes the line.
fn gist(text: &str) -> String {
    let text = text.trim();
    let words: Vec<&str> = text.split_whitespace().collect();
    let kept = words
        .iter()
        .take(WORDS_KEPT)
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let more = if words.len() > WORDS_KEPT { " …" } else { "" };
    format!("{kept}{more} #{}", hash(text))
}

/// FNV-1a, folded to 32 bits: stable from build to build and machine to machine, which the
/// standard library's hasher does not promise.
fn hash(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{:08x}", (hash ^ (hash >> 32)) & 0xffff_ffff)
}
