//! What each read answers, as JSON Schema made from the kinds' schemas in the contract: the
//! `outputSchema` a tool publishes and the schema its answer is checked against.

use serde_json::{Map, Value, json};

use super::Problems;
use super::tools::ContractTool;
use super::vocabulary::Streamed;

/// A read's answer as JSON Schema (2020-12), made from the kind schemas its `2XX` answer names.
pub struct AnswerSchemas {
    /// The core's schema as it is: what the server checks an answer against before it cuts it.
    pub strict: Value,
    /// What a tool's `outputSchema` says: the same, with no field required (an answer cut to the
    /// result limit leaves whole fields out) and the `left_out` note the server adds.
    pub published: Value,
}

pub const SCHEMA_PREFIX: &str = "#/components/schemas/";

/// What a read answers: `None` for one that answers no kind (lines, a file, any envelope).
pub fn read_answer_schemas(
    document: &Value,
    path: &str,
) -> Result<Option<AnswerSchemas>, Problems> {
    let Some(answer) = document
        .pointer(&format!(
            "/paths/{}/get/responses/2XX/content/application~1json/schema",
            path.replace('~', "~0").replace('/', "~1")
        ))
        .filter(|answer| answer.get("$ref") != Some(&json!(format!("{SCHEMA_PREFIX}Envelope"))))
    else {
        return Ok(None);
    };
    Ok(Some(AnswerSchemas {
        strict: answer_schema(document, answer, path, false)?,
        published: answer_schema(document, answer, path, true)?,
    }))
}

/// Every kind's envelope the contract renders from the core's schemas, by kind name.
pub fn kind_schemas(document: &Value) -> Result<Vec<(String, Value)>, Problems> {
    let mut kinds = Vec::new();
    for (name, schema) in document["components"]["schemas"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let Some(kind) = schema
            .pointer("/properties/kind/enum/0")
            .and_then(Value::as_str)
            .filter(|_| schema.get("x-lemonfiber-from-kind") == Some(&Value::Bool(true)))
        else {
            continue;
        };
        let answer = json!({"$ref": format!("{SCHEMA_PREFIX}{name}")});
        kinds.push((
            kind.to_owned(),
            answer_schema(document, &answer, name, false)?,
        ));
    }
    Ok(kinds)
}

/// The JSON Schema of an answer: as the core declares it, or `relaxed` as a tool publishes it.
pub fn answer_schema(
    document: &Value,
    answer: &Value,
    path: &str,
    relaxed: bool,
) -> Result<Value, Problems> {
    let mut reached = std::collections::BTreeSet::new();
    let mut pending = schema_names_in(answer);
    while let Some(name) = pending.pop() {
        let schema = document
            .pointer(&format!("/components/schemas/{name}"))
            .ok_or_else(|| {
                vec![format!(
                    "{path}: its answer names {name}, which the contract lacks"
                )]
            })?;
        if reached.insert(name) {
            pending.extend(schema_names_in(schema));
        }
    }
    let defs: Map<String, Value> = reached
        .iter()
        .map(|name| {
            let schema = &document["components"]["schemas"][name.as_str()];
            (name.clone(), json_schema(schema, relaxed))
        })
        .collect();
    let mut root = Map::new();
    root.insert(
        "$schema".into(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    root.insert("type".into(), json!("object"));
    if let Value::Object(answer) = json_schema(answer, relaxed) {
        root.extend(answer);
    }
    if relaxed {
        root.insert(
            "properties".into(),
            json!({ "left_out": left_out_schema() }),
        );
    }
    root.insert("$defs".into(), Value::Object(defs));
    Ok(Value::Object(root))
}

/// The note an answer cut to the result limit carries.
fn left_out_schema() -> Value {
    json!({
        "description": "What the server left out to keep the result within its limit: whole array items and fields, and their size in bytes.",
        "type": "object",
        "properties": {"items": {"type": "integer", "minimum": 0}, "bytes": {"type": "integer", "minimum": 0}}
    })
}

/// The form a read that answers no envelope streams in.
pub fn streamed_form(tool: &ContractTool) -> Streamed {
    if tool.answers_image {
        Streamed::Image
    } else if tool.answers_lines {
        Streamed::Lines
    } else {
        Streamed::File
    }
}

/// The `outputSchema` of a read that streams lines or a file: the structured content the server
/// makes of it (`crate::answer::outcome`), not the stack's bytes. A line is handed over as the
/// stack wrote it, unchecked, so its items are held to nothing. No field is required, as a cut
/// answer may leave one out.
pub fn streamed_answer_schema(form: Streamed) -> Value {
    let answer = match form {
        Streamed::Lines => json!({
            "lines": {
                "description": "The log lines, in the stack's order: each the JSON the stack wrote on the line (an envelope of kind log, the contract says), or the line's text where it was not JSON. Not checked against the contract.",
                "type": "array"
            }
        }),
        Streamed::File | Streamed::Image => {
            let handed = match form {
                Streamed::Image => {
                    "the image itself is handed over beside this as image content, when attached"
                }
                _ => {
                    "the file itself is handed over beside this as an embedded resource, when attached"
                }
            };
            json!({
                "file": {
                    "description": format!("What the stack answered with: {handed}."),
                    "type": "object",
                    "properties": {
                        "media_type": {"description": "The media type, one the server names (by the image's own bytes for an image).", "type": "string"},
                        "size_bytes": {"description": "The size of the bytes handed over, or the stack's when they are not attached.", "type": "integer", "minimum": 0},
                        "sha256": {"description": "The SHA-256 of those bytes, in lowercase hex.", "type": "string", "pattern": "^[0-9a-f]{64}$"},
                        "attached": {"description": "Whether the bytes are handed over: not when too large, or for an image, not one by its own bytes.", "type": "boolean"}
                    },
                    "additionalProperties": false
                }
            })
        }
    };
    let Value::Object(mut properties) = answer else {
        return answer;
    };
    properties.insert("left_out".to_owned(), left_out_schema());
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": properties,
        "additionalProperties": false
    })
}

/// The component schemas a schema refers to.
pub fn schema_names_in(schema: &Value) -> Vec<String> {
    match schema {
        Value::Object(fields) => fields
            .iter()
            .flat_map(|(key, value)| match (key.as_str(), value) {
                ("$ref", Value::String(target)) => target
                    .strip_prefix(SCHEMA_PREFIX)
                    .map(|name| vec![name.to_owned()])
                    .unwrap_or_default(),
                _ => schema_names_in(value),
            })
            .collect(),
        Value::Array(items) => items.iter().flat_map(schema_names_in).collect(),
        _ => Vec::new(),
    }
}

/// An OpenAPI 3.0 schema as JSON Schema 2020-12: `nullable` becomes a `null` type (or a `null`
/// alternative beside a reference), references point into `$defs`, and the contract's own
/// `x-` extensions are dropped. `relaxed` drops every `required` and reads `oneOf` as `anyOf`.
pub fn json_schema(schema: &Value, relaxed: bool) -> Value {
    let Value::Object(fields) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in fields {
        let value = match key.as_str() {
            "nullable" => continue,
            "required" if relaxed => continue,
            "$ref" => match value
                .as_str()
                .and_then(|target| target.strip_prefix(SCHEMA_PREFIX))
            {
                Some(name) => json!(format!("#/$defs/{name}")),
                None => value.clone(),
            },
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, schema)| (name.clone(), json_schema(schema, relaxed)))
                    .collect(),
            ),
            "items" | "additionalProperties" | "not" => json_schema(value, relaxed),
            // A union told apart by a field the cut may leave out would match more than one
            // branch; relaxed, any branch will do.
            "oneOf" if relaxed => {
                out.insert(
                    "anyOf".to_owned(),
                    json_schema(&json!({ "allOf": value }), relaxed)["allOf"].take(),
                );
                continue;
            }
            "anyOf" | "oneOf" | "allOf" => Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|schema| json_schema(schema, relaxed))
                    .collect(),
            ),
            extension if extension.starts_with("x-") => continue,
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    if fields.get("nullable") != Some(&Value::Bool(true)) {
        return Value::Object(out);
    }
    if let Some(Value::String(kind)) = out.get("type").cloned() {
        out.insert("type".into(), json!([kind, "null"]));
        if let Some(Value::Array(values)) = out.get_mut("enum") {
            values.push(Value::Null);
        }
        return Value::Object(out);
    }
    json!({"anyOf": [Value::Object(out), {"type": "null"}]})
}
