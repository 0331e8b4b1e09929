//! Turns the core's contract (`contract/openapi.json`) and the words (`src/words.toml`) into
//! the typed SDK client (by progenitor) and the tool catalogue, both written to `OUT_DIR`.
//!
//! The build fails, naming each one, when a read or key-callable action has no tool, when a
//! tool has no words, or when words name no tool (F13-R2).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use openapiv3::{
    OpenAPI, Operation, Parameter, ParameterSchemaOrContent, ReferenceOr, Schema, SchemaKind, Type,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

const CONTRACT: &str = "contract/openapi.json";
const WORDS: &str = "src/words.toml";
/// The SDK's inner value: the key every request carries and the limits of what is read, used by
/// the hooks `crate::stack::door` implements.
const SDK_INNER: &str = "crate::stack::door::Door";
const TOOL_NAME_LIMIT: usize = 64;

fn main() {
    println!("cargo::rerun-if-changed={CONTRACT}");
    println!("cargo::rerun-if-changed={WORDS}");
    if let Err(problems) = build() {
        for problem in problems {
            println!("cargo::error={problem}");
        }
    }
}

type Problems = Vec<String>;

fn build() -> Result<(), Problems> {
    let out_dir =
        PathBuf::from(std::env::var_os("OUT_DIR").ok_or(vec!["OUT_DIR is not set".to_owned()])?);
    let text = read(CONTRACT)?;
    let contract: OpenAPI = serde_json::from_str(&text).map_err(|error| {
        vec![format!(
            "{CONTRACT} is not an OpenAPI 3.0 document: {error}"
        )]
    })?;
    let document: Value = serde_json::from_str(&text)
        .map_err(|error| vec![format!("{CONTRACT} is not JSON: {error}")])?;
    let words: Words = toml::from_str(&read(WORDS)?)
        .map_err(|error| vec![format!("{WORDS} cannot be read: {error}")])?;

    let mut tools = tools_of(&contract)?;
    tools.extend(server_tools());
    let catalogue = join_words(&tools, &words)?;
    let notes = &words.notes;
    if !present(&notes.unconfigured) || !present(&notes.unconfigured_household) {
        return Err(vec![format!(
            "{WORDS} needs both notes, unconfigured and unconfigured_household"
        )]);
    }
    let notes = format!(
        "/// Added to a tool's description when its path is `unconfigured`: for the operator, and in the household's words.\npub const UNCONFIGURED_NOTE: (&str, &str) = ({:?}, {:?});\n\n",
        notes.unconfigured.trim(),
        notes.unconfigured_household.trim()
    );
    write(
        &out_dir.join("catalogue.rs"),
        &(notes + &render_catalogue(&catalogue, &document)?),
    )?;
    write(
        &out_dir.join("sdk_calls.rs"),
        &(render_sdk_calls(&tools) + &render_operations(&contract)),
    )?;
    write(&out_dir.join("sdk.rs"), &render_sdk(&contract)?)?;
    Ok(())
}

fn read(path: &str) -> Result<String, Problems> {
    std::fs::read_to_string(path).map_err(|error| vec![format!("cannot read {path}: {error}")])
}

fn write(path: &Path, text: &str) -> Result<(), Problems> {
    std::fs::write(path, text)
        .map_err(|error| vec![format!("cannot write {}: {error}", path.display())])
}

// ----- what the contract offers -----

/// One tool the contract calls for, before its words are joined.
struct ContractTool {
    name: String,
    operation_id: String,
    path: String,
    role: Role,
    parameters: Vec<ContractParameter>,
    /// Whether a success answers an envelope (JSON) rather than lines or a file.
    answers_json: bool,
    /// Whether a success answers an image (`image/*`), handed over as one.
    answers_image: bool,
    action: Option<ActionFlags>,
    /// A read a household member's key may reach (`x-lemonfiber-household`).
    household: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Role {
    Read,
    /// Asks after a job an action started: offered whenever an action is.
    Job,
    /// The server's own: where it stands with the stack, offered before the stack answers.
    Connection,
    Rehearse,
    Act,
}

#[derive(Clone)]
struct ContractParameter {
    name: String,
    shape: Shape,
    required: bool,
    in_path: bool,
    consent: bool,
    default: Option<serde_json::Value>,
}

#[derive(Clone, Copy)]
enum Shape {
    Text,
    TextList,
    Flag,
    /// A whole number, 0 or more.
    Count,
}

/// The flags an action carries in the contract's `x-lemonfiber-*` extensions.
#[derive(Clone)]
struct ActionFlags {
    /// The schema its JSON body is, which names the SDK's type for it.
    body_type: String,
    stale_offer: Option<String>,
    disturbs: bool,
    rehearsal: bool,
    idempotent: bool,
    consent: Vec<String>,
}

fn tools_of(contract: &OpenAPI) -> Result<Vec<ContractTool>, Problems> {
    let mut tools = Vec::new();
    let mut problems = Vec::new();
    for (path, item) in contract.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            problems.push(format!(
                "{path}: path items must be written out, not referenced"
            ));
            continue;
        };
        if let Some(get) = &item.get
            && get.tags.iter().any(|tag| tag == "read")
        {
            match read_tool(path, get) {
                Ok(tool) => tools.push(tool),
                Err(mut more) => problems.append(&mut more),
            }
        }
        if let Some(get) = &item.get
            && get.tags.iter().any(|tag| tag == "jobs")
        {
            match read_tool(path, get) {
                Ok(tool) => tools.push(ContractTool {
                    name: "job".to_owned(),
                    role: Role::Job,
                    ..tool
                }),
                Err(mut more) => problems.append(&mut more),
            }
        }
        if let Some(post) = &item.post
            && extension_bool(post, "x-lemonfiber-key-callable") == Some(true)
        {
            match action_tools(contract, path, post) {
                Ok(mut more) => tools.append(&mut more),
                Err(mut more) => problems.append(&mut more),
            }
        }
    }
    for tool in &tools {
        if tool.name.is_empty()
            || tool.name.len() > TOOL_NAME_LIMIT
            || !tool
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            problems.push(format!(
                "tool name {:?} (from {}) is not 1 to {TOOL_NAME_LIMIT} characters of [a-z0-9_]",
                tool.name, tool.path
            ));
        }
    }
    if problems.is_empty() {
        Ok(tools)
    } else {
        Err(problems)
    }
}

fn operation_id(path: &str, operation: &Operation) -> Result<String, Problems> {
    operation
        .operation_id
        .clone()
        .ok_or_else(|| vec![format!("{path}: every operation needs an operationId")])
}

/// Tools the server offers of its own, beside the contract's: they need words like any other.
fn server_tools() -> Vec<ContractTool> {
    vec![ContractTool {
        name: "connection".to_owned(),
        operation_id: String::new(),
        path: "(the server's own)".to_owned(),
        role: Role::Connection,
        parameters: Vec::new(),
        answers_json: true,
        answers_image: false,
        action: None,
        household: false,
    }]
}

/// `/api/held/{id}` → `read_held_by_id`; `/api/front-door` → `read_front_door`.
fn read_tool_name(path: &str) -> String {
    let rest = path.trim_start_matches("/api/");
    let segments: Vec<String> = rest
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

fn read_tool(path: &str, get: &Operation) -> Result<ContractTool, Problems> {
    let mut parameters = Vec::new();
    let mut problems = Vec::new();
    for parameter in &get.parameters {
        let ReferenceOr::Item(parameter) = parameter else {
            problems.push(format!(
                "{path}: parameters must be written out, not referenced"
            ));
            continue;
        };
        let (data, in_path) = match parameter {
            Parameter::Query { parameter_data, .. } => (parameter_data, false),
            Parameter::Path { parameter_data, .. } => (parameter_data, true),
            _ => {
                problems.push(format!(
                    "{path}: only query and path parameters can become tool input"
                ));
                continue;
            }
        };
        // A parameter that turns the answer into a job is not a read a tool can answer.
        if data.extensions.get("x-lemonfiber-answers-job") == Some(&serde_json::Value::Bool(true)) {
            continue;
        }
        let ParameterSchemaOrContent::Schema(ReferenceOr::Item(schema)) = &data.format else {
            problems.push(format!(
                "{path}: parameter {} needs an inline schema",
                data.name
            ));
            continue;
        };
        match shape_of(schema) {
            Some(shape) => parameters.push(ContractParameter {
                name: data.name.clone(),
                shape,
                required: data.required,
                in_path,
                consent: false,
                default: schema.schema_data.default.clone(),
            }),
            None => problems.push(format!(
                "{path}: parameter {} is not a string, a list of strings, a boolean or a whole number of at least 0",
                data.name
            )),
        }
    }
    let operation_id = operation_id(path, get)?;
    if !problems.is_empty() {
        return Err(problems);
    }
    let answers_image = get.responses.responses.iter().any(|(_, response)| {
        matches!(response, ReferenceOr::Item(response) if response.content.keys().any(|media| media.starts_with("image/")))
    });
    let answers_json = get.responses.responses.iter().any(|(_, response)| {
        matches!(response, ReferenceOr::Item(response) if response.content.contains_key("application/json"))
    });
    Ok(ContractTool {
        name: read_tool_name(path),
        operation_id,
        path: path.to_owned(),
        role: Role::Read,
        parameters,
        answers_json,
        answers_image,
        action: None,
        household: extension_bool(get, "x-lemonfiber-household") == Some(true),
    })
}

fn shape_of(schema: &Schema) -> Option<Shape> {
    match &schema.schema_kind {
        SchemaKind::Type(Type::String(_)) => Some(Shape::Text),
        SchemaKind::Type(Type::Boolean(_)) => Some(Shape::Flag),
        SchemaKind::Type(Type::Integer(integer))
            if integer.minimum.is_some_and(|minimum| minimum >= 0) =>
        {
            Some(Shape::Count)
        }
        SchemaKind::Type(Type::Array(array)) => match array.items.as_ref()? {
            ReferenceOr::Item(items)
                if matches!(items.schema_kind, SchemaKind::Type(Type::String(_))) =>
            {
                Some(Shape::TextList)
            }
            _ => None,
        },
        _ => None,
    }
}

fn extension_bool(operation: &Operation, name: &str) -> Option<bool> {
    operation
        .extensions
        .get(name)
        .and_then(serde_json::Value::as_bool)
}

fn action_flags(
    path: &str,
    operation: &Operation,
    body_type: String,
) -> Result<ActionFlags, Problems> {
    let flag = |name: &str| {
        extension_bool(operation, name)
            .ok_or_else(|| format!("{path}: {name} must be true or false"))
    };
    let consent = operation
        .extensions
        .get("x-lemonfiber-consent")
        .and_then(serde_json::Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .ok_or_else(|| {
            vec![format!(
                "{path}: x-lemonfiber-consent must list argument names"
            )]
        })?;
    let stale_offer = operation
        .extensions
        .get("x-lemonfiber-stale-offer")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    Ok(ActionFlags {
        body_type,
        stale_offer,
        disturbs: flag("x-lemonfiber-disturbs").map_err(|p| vec![p])?,
        rehearsal: flag("x-lemonfiber-rehearsal").map_err(|p| vec![p])?,
        idempotent: flag("x-lemonfiber-idempotent").map_err(|p| vec![p])?,
        consent,
    })
}

/// The name of an action's body schema and the arguments it takes.
fn action_arguments(
    contract: &OpenAPI,
    path: &str,
    operation: &Operation,
) -> Result<(String, Vec<ContractParameter>), Problems> {
    let missing = || {
        vec![format!(
            "{path}: the action needs an application/json request body naming its arguments schema"
        )]
    };
    let Some(ReferenceOr::Item(body)) = &operation.request_body else {
        return Err(missing());
    };
    let Some(ReferenceOr::Reference { reference }) = body
        .content
        .get("application/json")
        .and_then(|media| media.schema.as_ref())
    else {
        return Err(missing());
    };
    let name = reference
        .strip_prefix("#/components/schemas/")
        .ok_or_else(|| {
            vec![format!(
                "{path}: {reference} is not a schema of this contract"
            )]
        })?;
    let schema = contract
        .components
        .as_ref()
        .and_then(|components| components.schemas.get(name))
        .ok_or_else(|| vec![format!("{path}: {reference} does not resolve")])?;
    let ReferenceOr::Item(Schema {
        schema_kind: SchemaKind::Type(Type::Object(object)),
        ..
    }) = schema
    else {
        return Err(vec![format!(
            "{path}: {reference} must be an object schema"
        )]);
    };
    let mut arguments = Vec::new();
    let mut problems = Vec::new();
    for (name, property) in &object.properties {
        let ReferenceOr::Item(property) = property else {
            problems.push(format!("{path}: argument {name} must be written out"));
            continue;
        };
        match shape_of(property) {
            Some(shape) => arguments.push(ContractParameter {
                name: name.clone(),
                shape,
                required: object.required.contains(name),
                in_path: false,
                consent: false,
                default: property.schema_data.default.clone(),
            }),
            None => problems.push(format!(
                "{path}: argument {name} is not a string, a list of strings or a boolean"
            )),
        }
    }
    if problems.is_empty() {
        Ok((name.to_owned(), arguments))
    } else {
        Err(problems)
    }
}

/// A rehearsable action is two tools, `rehearse_<name>` and `<name>`; any other is one act tool
/// (F13-R4). Consent arguments belong to the act tool only, where the offer is required.
fn action_tools(
    contract: &OpenAPI,
    path: &str,
    post: &Operation,
) -> Result<Vec<ContractTool>, Problems> {
    let Some(action) = path.strip_prefix("/api/actions/") else {
        return Err(vec![format!(
            "{path}: key-callable actions live under /api/actions/"
        )]);
    };
    let name = action.replace('-', "_");
    let (body_type, arguments) = action_arguments(contract, path, post)?;
    let flags = action_flags(path, post, body_type)?;
    let operation_id = operation_id(path, post)?;
    let arguments: Vec<ContractParameter> = arguments
        .into_iter()
        .filter(|argument| argument.name != "dry_run")
        .map(|mut argument| {
            argument.consent = flags.consent.contains(&argument.name);
            argument
        })
        .collect();
    for consent in &flags.consent {
        if !arguments.iter().any(|argument| &argument.name == consent) {
            return Err(vec![format!(
                "{path}: consent argument {consent} is not among its arguments"
            )]);
        }
    }
    let tool = |name: String, role, parameters| ContractTool {
        name,
        operation_id: operation_id.clone(),
        path: path.to_owned(),
        role,
        parameters,
        answers_json: true,
        answers_image: false,
        action: Some(flags.clone()),
        household: false,
    };
    if !flags.rehearsal {
        return Ok(vec![tool(name, Role::Act, arguments)]);
    }
    // The act tool takes only the person's yes: the arguments it acts with are the ones sealed
    // in the offer the rehearsal handed out.
    let rehearsal_arguments = arguments.iter().filter(|a| !a.consent).cloned().collect();
    let act_arguments = arguments
        .into_iter()
        .filter(|argument| argument.consent)
        .map(|mut argument| {
            if argument.name == "offer" {
                argument.required = true;
            }
            argument
        })
        .collect();
    Ok(vec![
        tool(
            format!("rehearse_{name}"),
            Role::Rehearse,
            rehearsal_arguments,
        ),
        tool(name, Role::Act, act_arguments),
    ])
}

// ----- the words -----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Words {
    #[serde(default)]
    parameters: BTreeMap<String, String>,
    notes: Notes,
    tools: BTreeMap<String, ToolWords>,
}

/// Words added to a tool's description in some states, for the operator and the household.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Notes {
    unconfigured: String,
    unconfigured_household: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolWords {
    title: String,
    operator: String,
    household: Option<String>,
    #[serde(default)]
    parameters: BTreeMap<String, String>,
    #[serde(default)]
    household_parameters: BTreeMap<String, String>,
}

/// A tool with its words: what the catalogue holds.
struct WordedTool<'a> {
    tool: &'a ContractTool,
    words: &'a ToolWords,
    parameters: Vec<(&'a ContractParameter, &'a str, Option<&'a str>)>,
}

fn present(text: &str) -> bool {
    !text.trim().is_empty()
}

fn join_words<'a>(
    tools: &'a [ContractTool],
    words: &'a Words,
) -> Result<Vec<WordedTool<'a>>, Problems> {
    let mut problems = Vec::new();
    let mut worded = Vec::new();
    for tool in tools {
        let Some(tool_words) = words.tools.get(&tool.name) else {
            problems.push(format!(
                "tool {} (from {}) has no words in {WORDS}",
                tool.name, tool.path
            ));
            continue;
        };
        if !present(&tool_words.title) || !present(&tool_words.operator) {
            problems.push(format!(
                "tool {} needs a title and operator words in {WORDS}",
                tool.name
            ));
        }
        match (tool.household, tool_words.household.is_some()) {
            (true, false) => problems.push(format!(
                "tool {} is a household read (x-lemonfiber-household) and has no household words in {WORDS}",
                tool.name
            )),
            (false, true) => problems.push(format!(
                "tool {} is not a household read, so it takes no household words: they would offer it to members",
                tool.name
            )),
            _ => {}
        }
        if tool_words.household.as_deref().is_some_and(|h| !present(h)) {
            problems.push(format!(
                "tool {} has empty household words in {WORDS}",
                tool.name
            ));
        }
        let mut parameters = Vec::new();
        for parameter in &tool.parameters {
            let operator = tool_words
                .parameters
                .get(&parameter.name)
                .or_else(|| words.parameters.get(&parameter.name))
                .filter(|text| present(text));
            match operator {
                Some(operator) => parameters.push((
                    parameter,
                    operator.as_str(),
                    tool_words
                        .household_parameters
                        .get(&parameter.name)
                        .map(String::as_str),
                )),
                None => problems.push(format!(
                    "tool {} parameter {} has no words in {WORDS}",
                    tool.name, parameter.name
                )),
            }
        }
        for name in tool_words
            .parameters
            .keys()
            .chain(tool_words.household_parameters.keys())
        {
            if !tool
                .parameters
                .iter()
                .any(|parameter| &parameter.name == name)
            {
                problems.push(format!(
                    "words for tool {} name parameter {name}, which it does not take",
                    tool.name
                ));
            }
        }
        if tool_words.household.is_none() && !tool_words.household_parameters.is_empty() {
            problems.push(format!(
                "tool {} has household parameter words but no household words",
                tool.name
            ));
        }
        worded.push(WordedTool {
            tool,
            words: tool_words,
            parameters,
        });
    }
    for name in words.tools.keys() {
        if !tools.iter().any(|tool| &tool.name == name) {
            problems.push(format!(
                "{WORDS} has words for {name}, which the contract makes no tool for"
            ));
        }
    }
    if problems.is_empty() {
        Ok(worded)
    } else {
        Err(problems)
    }
}

// ----- rendering -----

#[derive(Clone, Copy, PartialEq)]
enum Audience {
    Operator,
    Household,
}

/// A tool's JSON input schema, in the words of its audience: a member is offered only the
/// parameters the household words describe.
fn input_schema(
    parameters: &[(&ContractParameter, &str, Option<&str>)],
    audience: Audience,
) -> String {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for (parameter, operator, household) in parameters {
        let words = match (audience, household) {
            (Audience::Operator, _) => operator,
            (Audience::Household, Some(household)) => household,
            (Audience::Household, None) => continue,
        };
        let mut schema = match parameter.shape {
            Shape::Text => json!({"type": "string"}),
            Shape::TextList => json!({"type": "array", "items": {"type": "string"}}),
            Shape::Flag => json!({"type": "boolean"}),
            Shape::Count => json!({"type": "integer", "minimum": 0, "maximum": u32::MAX}),
        };
        schema["description"] = json!(words.trim());
        if let Some(default) = parameter
            .default
            .as_ref()
            .filter(|default| !default.is_null())
        {
            schema["default"] = default.clone();
        }
        if parameter.required {
            if matches!(parameter.shape, Shape::Text) {
                schema["minLength"] = json!(1);
            }
            required.push(json!(parameter.name));
        }
        properties.insert(parameter.name.clone(), schema);
    }
    let mut schema =
        json!({"type": "object", "properties": properties, "additionalProperties": false});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema.to_string()
}

// ----- what each read answers -----

/// A read's answer as JSON Schema (2020-12), made from the kind schemas its `2XX` answer names.
struct AnswerSchemas {
    /// The core's schema as it is: what the server checks an answer against before it cuts it.
    strict: Value,
    /// What a tool's `outputSchema` says: the same, with no field required (an answer cut to the
    /// result limit leaves whole fields out) and the `left_out` note the server adds.
    published: Value,
}

const SCHEMA_PREFIX: &str = "#/components/schemas/";

/// What a read answers: `None` for one that answers no kind (lines, a file, any envelope).
fn read_answer_schemas(document: &Value, path: &str) -> Result<Option<AnswerSchemas>, Problems> {
    let Some(answer) = document
        .pointer(&format!(
            "/paths/{}/get/responses/2XX/content/application~1json/schema",
            path.replace('~', "~0").replace('/', "~1")
        ))
        .filter(|answer| answer.get("$ref") != Some(&json!(format!("{SCHEMA_PREFIX}Envelope"))))
    else {
        return Ok(None);
    };
    answer_schemas(document, answer, path).map(Some)
}

/// Every kind's envelope the contract renders from the core's schemas, by kind name.
fn kind_schemas(document: &Value) -> Result<Vec<(String, Value)>, Problems> {
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
            answer_schemas(document, &answer, name)?.strict,
        ));
    }
    Ok(kinds)
}

fn answer_schemas(document: &Value, answer: &Value, path: &str) -> Result<AnswerSchemas, Problems> {
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
    let schema = |relaxed: bool| {
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
                json!({"left_out": {
                    "description": "What the server left out to keep the result within its limit: whole array items and fields, and their size in bytes.",
                    "type": "object",
                    "properties": {"items": {"type": "integer", "minimum": 0}, "bytes": {"type": "integer", "minimum": 0}}
                }}),
            );
        }
        root.insert("$defs".into(), Value::Object(defs));
        Value::Object(root)
    };
    Ok(AnswerSchemas {
        strict: schema(false),
        published: schema(true),
    })
}

/// The component schemas a schema refers to.
fn schema_names_in(schema: &Value) -> Vec<String> {
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
fn json_schema(schema: &Value, relaxed: bool) -> Value {
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

/// `read_front_door` → `FrontDoor`; `downloads_pause` → `DownloadsPause`.
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

fn read_variant(tool: &ContractTool) -> String {
    variant(tool.name.trim_start_matches("read_"))
}

fn action_variant(tool: &ContractTool) -> String {
    variant(tool.operation_id.trim_start_matches("act_"))
}

fn render_catalogue(catalogue: &[WordedTool], document: &Value) -> Result<String, Problems> {
    let mut out =
        String::from("// Generated by build.rs from contract/openapi.json and src/words.toml.\n\n");
    out.push_str("pub static TOOLS: &[ToolSpec] = &[\n");
    for WordedTool {
        tool,
        words,
        parameters,
    } in catalogue
    {
        let operation = match tool.role {
            Role::Read => format!("Operation::Read(Read::{})", read_variant(tool)),
            Role::Rehearse => format!("Operation::Rehearse(Action::{})", action_variant(tool)),
            Role::Act => format!("Operation::Act(Action::{})", action_variant(tool)),
            Role::Job => "Operation::Job".to_owned(),
            Role::Connection => "Operation::Connection".to_owned(),
        };
        let (read_only, destructive, idempotent) = match (&tool.action, tool.role) {
            (Some(flags), Role::Act) => (false, flags.disturbs, flags.idempotent),
            _ => (true, false, true),
        };
        let resource = match tool.role {
            Role::Read => format!(
                "Some({:?})",
                format!(
                    "lemonfiber://read/{}",
                    tool.path.trim_start_matches("/api/")
                )
            ),
            _ => "None".to_owned(),
        };
        let household_schema = words
            .household
            .as_ref()
            .map(|_| input_schema(parameters, Audience::Household));
        let answers = match tool.role {
            Role::Read => read_answer_schemas(document, &tool.path)?,
            _ => None,
        };
        let _ = writeln!(
            out,
            "    ToolSpec {{\n        name: {:?},\n        title: {:?},\n        operator_words: {:?},\n        household_words: {:?},\n        capability: {:?},\n        operation: {operation},\n        annotations: Annotations {{ read_only: {read_only}, destructive: {destructive}, idempotent: {idempotent} }},\n        resource: {resource},\n        input_schema: {:?},\n        household_input_schema: {:?},\n        answer_schema: {:?},\n        output_schema: {:?},\n        parameters: &[",
            tool.name,
            words.title.trim(),
            words.operator.trim(),
            words.household.as_deref().map(str::trim),
            tool.path,
            input_schema(parameters, Audience::Operator),
            household_schema,
            answers.as_ref().map(|answers| answers.strict.to_string()),
            answers
                .as_ref()
                .map(|answers| answers.published.to_string()),
        );
        for (parameter, _, household) in parameters {
            let shape = match parameter.shape {
                Shape::Text => "Shape::Text",
                Shape::TextList => "Shape::TextList",
                Shape::Flag => "Shape::Flag",
                Shape::Count => "Shape::Count",
            };
            let _ = writeln!(
                out,
                "            ParameterSpec {{ name: {:?}, shape: {shape}, required: {}, in_path: {}, household: {} }},",
                parameter.name,
                parameter.required,
                parameter.in_path,
                household.is_some(),
            );
        }
        out.push_str("        ],\n    },\n");
    }
    out.push_str("];\n\n");

    out.push_str("/// Every read the contract describes.\n#[derive(Clone, Copy, Debug, PartialEq, Eq)]\npub enum Read {\n");
    for WordedTool { tool, .. } in catalogue.iter().filter(|w| w.tool.role == Role::Read) {
        let _ = writeln!(out, "    {},", read_variant(tool));
    }
    out.push_str("}\n\n/// Every action a key may call.\n#[derive(Clone, Copy, Debug, PartialEq, Eq)]\npub enum Action {\n");
    let mut actions: Vec<&ContractTool> = catalogue
        .iter()
        .map(|w| w.tool)
        .filter(|t| t.role == Role::Act)
        .collect();
    actions.sort_by_key(|tool| &tool.path);
    for tool in &actions {
        let _ = writeln!(out, "    {},", action_variant(tool));
    }
    out.push_str("}\n\nimpl Action {\n");
    let mut method = |doc: &str, signature: &str, value: &dyn Fn(&ContractTool) -> String| {
        let _ = writeln!(
            out,
            "    /// {doc}\n    pub fn {signature} {{\n        match self {{"
        );
        for tool in &actions {
            let _ = writeln!(
                out,
                "            Action::{} => {},",
                action_variant(tool),
                value(tool)
            );
        }
        out.push_str("        }\n    }\n\n");
    };
    method(
        "The tool that acts.",
        "act_tool(self) -> &'static str",
        &|tool| format!("{:?}", tool.name),
    );
    method(
        "The tool that rehearses it, for an action that can be rehearsed.",
        "rehearsal_tool(self) -> Option<&'static str>",
        &|tool| match tool.action.as_ref().is_some_and(|flags| flags.rehearsal) {
            true => format!("Some({:?})", format!("rehearse_{}", tool.name)),
            false => "None".to_owned(),
        },
    );
    method(
        "The code the stack refuses with when the offer was made on a state that has since moved.",
        "stale_offer_code(self) -> Option<&'static str>",
        &|tool| {
            format!(
                "{:?}",
                tool.action
                    .as_ref()
                    .and_then(|flags| flags.stale_offer.as_deref())
            )
        },
    );
    out.push_str("}\n");
    out.push_str("\n/// Every kind's envelope as the core's contract declares it, as JSON Schema text.\n#[cfg_attr(not(test), allow(dead_code))]\npub static KIND_SCHEMAS: &[(&str, &str)] = &[\n");
    for (kind, schema) in kind_schemas(document)? {
        let _ = writeln!(out, "    ({kind:?}, {:?}),", schema.to_string());
    }
    out.push_str("];\n");
    Ok(out)
}

fn render_sdk_calls(tools: &[ContractTool]) -> String {
    let mut out = String::from(
        "// Generated by build.rs: each read, sent through the generated client with a tool's arguments.\n\n\
         pub(super) async fn send_read(\n    client: &Client,\n    read: crate::catalogue::Read,\n    arguments: &super::parameters::Parameters,\n) -> Result<super::reply::Reply, Error<serde_json::Value>> {\n    use crate::catalogue::Read;\n    match read {\n",
    );
    for tool in tools.iter().filter(|tool| tool.role == Role::Read) {
        let _ = writeln!(out, "        Read::{} => {{", read_variant(tool));
        let _ = writeln!(
            out,
            "            #[allow(unused_mut)]\n            let mut call = client.{}();",
            tool.operation_id
        );
        for parameter in &tool.parameters {
            let getter = match parameter.shape {
                Shape::Text => "text",
                Shape::TextList => "text_list",
                Shape::Flag => "flag",
                Shape::Count => "count",
            };
            // A value put into the path must be one plain identifier, whoever passes it: a URL
            // parser would otherwise turn `\\` into `/` and resolve `.` and `..` away.
            let check = if parameter.in_path {
                "                if !super::path::is_plain_identifier(&value) {\n                    return Err(Error::Custom(super::door::PATH_OUTSIDE_TEMPLATE.to_owned()));\n                }\n"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "            if let Some(value) = arguments.{getter}({:?}) {{\n{check}                call = call.{}(value);\n            }}",
                parameter.name, parameter.name
            );
        }
        let convert = if tool.answers_json {
            "super::reply::Reply::from_envelope(call.send().await?)".to_owned()
        } else {
            format!(
                "super::reply::Reply::from_stream(call.send().await?, &ClientInfo::inner(client).limits, {}).await",
                tool.answers_image
            )
        };
        let _ = writeln!(out, "            {convert}\n        }}");
    }
    out.push_str("    }\n}\n\n");
    out.push_str(
        "pub(super) async fn send_action(\n    client: &Client,\n    action: crate::catalogue::Action,\n    body: serde_json::Map<String, serde_json::Value>,\n    idempotency_key: Option<&str>,\n) -> Result<super::reply::Reply, Error<serde_json::Value>> {\n    use crate::catalogue::Action;\n    let body = serde_json::Value::Object(body);\n    match action {\n",
    );
    for tool in tools.iter().filter(|tool| tool.role == Role::Act) {
        let Some(flags) = &tool.action else { continue };
        let _ = writeln!(
            out,
            "        Action::{} => {{\n            let body: types::{} = serde_json::from_value(body).map_err(|error| Error::InvalidRequest(error.to_string()))?;\n            let mut call = client.{}().body(body);\n            if let Some(key) = idempotency_key {{\n                call = call.idempotency_key(key);\n            }}\n            super::reply::Reply::from_envelope(call.send().await?)\n        }}",
            action_variant(tool),
            flags.body_type,
            tool.operation_id
        );
    }
    out.push_str("    }\n}\n");
    out
}

/// Each operation's path template, which the door holds every request's path to, and whether its
/// success answers a stream (log lines, a file) rather than one JSON envelope.
fn render_operations(contract: &OpenAPI) -> String {
    let contract = sendable(contract);
    let mut templates = String::new();
    let mut streamed = String::new();
    for (path, item) in contract.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            continue;
        };
        for (_, operation) in item.iter() {
            let Some(operation_id) = &operation.operation_id else {
                continue;
            };
            let _ = writeln!(templates, "        {operation_id:?} => Some({path:?}),");
            let answers_json = operation.responses.responses.iter().any(|(status, response)| {
                status.to_string().starts_with('2')
                    && matches!(response, ReferenceOr::Item(response) if response.content.contains_key("application/json"))
            });
            if !answers_json {
                let _ = writeln!(streamed, "        {operation_id:?} => true,");
            }
        }
    }
    format!(
        "\n/// The path template of an operation, by its id.\npub(super) fn template_of(operation_id: &str) -> Option<&'static str> {{\n    match operation_id {{\n{templates}        _ => None,\n    }}\n}}\n\n\
         /// Whether an operation's success answers a stream rather than one JSON envelope.\npub(super) fn answers_a_stream(operation_id: &str) -> bool {{\n    match operation_id {{\n{streamed}        _ => false,\n    }}\n}}\n"
    )
}

/// The contract less the actions a key may not call, with every JSON answer read leniently: a
/// success as any envelope, a refusal as any JSON. The server reads a refusal by its status and
/// code alone, and checks an answer against its kind's schema itself, so a newer core's extra
/// fields or a Problem of another shape never turn into "a form this server does not understand".
fn sendable(contract: &OpenAPI) -> OpenAPI {
    let mut contract = contract.clone();
    for (_, item) in contract.paths.paths.iter_mut() {
        let ReferenceOr::Item(item) = item else {
            continue;
        };
        if let Some(post) = &item.post
            && extension_bool(post, "x-lemonfiber-key-callable") == Some(false)
        {
            item.post = None;
        }
        for operation in [&mut item.get, &mut item.post].into_iter().flatten() {
            read_leniently(operation);
        }
    }
    contract.paths.paths.retain(|_, item| match item {
        ReferenceOr::Item(item) => item.iter().next().is_some(),
        ReferenceOr::Reference { .. } => true,
    });
    reached_schemas_only(contract)
}

/// The contract with only the schemas its operations still reach: the kinds' schemas are the
/// server's to check answers against, not types for the SDK to parse them into.
fn reached_schemas_only(mut contract: OpenAPI) -> OpenAPI {
    let Ok(paths) = serde_json::to_value(&contract.paths) else {
        return contract;
    };
    let Some(components) = contract.components.as_mut() else {
        return contract;
    };
    let mut reached = std::collections::BTreeSet::new();
    let mut pending = schema_names_in(&paths);
    while let Some(name) = pending.pop() {
        if let Some(schema) = components.schemas.get(&name)
            && let Ok(schema) = serde_json::to_value(schema)
            && reached.insert(name)
        {
            pending.extend(schema_names_in(&schema));
        }
    }
    components.schemas.retain(|name, _| reached.contains(name));
    contract
}

fn read_leniently(operation: &mut Operation) {
    let answers = operation
        .responses
        .responses
        .iter_mut()
        .map(|(status, response)| (status.to_string().starts_with('2'), response))
        .chain(
            operation
                .responses
                .default
                .iter_mut()
                .map(|response| (false, response)),
        );
    for (success, response) in answers {
        let ReferenceOr::Item(response) = response else {
            continue;
        };
        if let Some(json) = response.content.get_mut("application/json") {
            json.schema = Some(if success {
                ReferenceOr::ref_("#/components/schemas/Envelope")
            } else {
                ReferenceOr::Item(Schema {
                    schema_data: Default::default(),
                    schema_kind: SchemaKind::Any(Default::default()),
                })
            });
        }
    }
}

/// The SDK is generated from the contract less the actions a key may not call, so nothing in
/// this program can even name one of them.
fn render_sdk(contract: &OpenAPI) -> Result<String, Problems> {
    let contract = sendable(contract);
    let tokens = |text: &str| -> Result<proc_macro2::TokenStream, Problems> {
        text.parse()
            .map_err(|error| vec![format!("cannot parse {text:?} as Rust: {error}")])
    };
    let mut settings = progenitor::GenerationSettings::default();
    settings
        .with_interface(progenitor::InterfaceStyle::Builder)
        .with_tag(progenitor::TagStyle::Merged)
        .with_inner_type(tokens(SDK_INNER)?)
        .with_hooks(progenitor::HooksMode::Expected);
    let mut generator = progenitor::Generator::new(&settings);
    let generated = generator.generate_tokens(&contract).map_err(|error| {
        vec![format!(
            "progenitor cannot generate the SDK from {CONTRACT}: {error}"
        )]
    })?;
    let file = syn::parse2(generated)
        .map_err(|error| vec![format!("the generated SDK does not parse: {error}")])?;
    Ok(prettyplease::unparse(&file))
}
