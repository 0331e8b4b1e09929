//! What the contract offers as tools: each read, each key-callable action with its rehearsal,
//! and the server's own tools, with their parameters, flags and names.

use openapiv3::{
    OpenAPI, Operation, Parameter, ParameterSchemaOrContent, ReferenceOr, Schema, SchemaKind, Type,
};

use super::naming::{
    DRY_RUN_ARGUMENT, OFFER_ARGUMENT, action_variant, read_tool_name, read_variant,
    rehearsal_tool_name,
};
use super::vocabulary::{self, Shape};
use super::{Problems, TOOL_NAME_LIMIT};

/// One tool the contract calls for, before its words are joined.
pub struct ContractTool {
    pub name: String,
    pub operation_id: String,
    pub path: String,
    pub role: Role,
    pub parameters: Vec<ContractParameter>,
    /// Whether a success answers an envelope (JSON) rather than lines or a file.
    pub answers_json: bool,
    /// Whether a success answers an image (`image/*`), handed over as one.
    pub answers_image: bool,
    /// Whether a success answers log lines (`application/x-ndjson`), one envelope a line.
    pub answers_lines: bool,
    pub action: Option<ActionFlags>,
    /// A read a household member's key may reach (`x-lemonfiber-household`).
    pub household: bool,
}

/// What a tool does, its read or action named by the variant the generated code gives it.
pub type Role = vocabulary::Operation<String, String>;

#[derive(Clone)]
pub struct ContractParameter {
    pub name: String,
    pub shape: Shape,
    pub required: bool,
    pub in_path: bool,
    pub consent: bool,
    pub default: Option<serde_json::Value>,
}

/// The flags an action carries in the contract's `x-lemonfiber-*` extensions.
#[derive(Clone)]
pub struct ActionFlags {
    /// The schema its JSON body is, which names the SDK's type for it.
    pub body_type: String,
    pub stale_offer: Option<String>,
    pub disturbs: bool,
    pub rehearsal: bool,
    pub idempotent: bool,
    pub consent: Vec<String>,
}

pub fn tools_of(contract: &OpenAPI) -> Result<Vec<ContractTool>, Problems> {
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

pub fn operation_id(path: &str, operation: &Operation) -> Result<String, Problems> {
    operation
        .operation_id
        .clone()
        .ok_or_else(|| vec![format!("{path}: every operation needs an operationId")])
}

/// Tools the server offers of its own, beside the contract's: they need words like any other.
pub fn server_tools() -> Vec<ContractTool> {
    vec![ContractTool {
        name: "connection".to_owned(),
        operation_id: String::new(),
        path: "(the server's own)".to_owned(),
        role: Role::Connection,
        parameters: Vec::new(),
        answers_json: true,
        answers_image: false,
        answers_lines: false,
        action: None,
        household: false,
    }]
}

pub fn read_tool(path: &str, get: &Operation) -> Result<ContractTool, Problems> {
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
    let answers_lines = get.responses.responses.iter().any(|(_, response)| {
        matches!(response, ReferenceOr::Item(response) if response.content.contains_key("application/x-ndjson"))
    });
    let name = read_tool_name(path);
    Ok(ContractTool {
        role: Role::Read(read_variant(&name)),
        name,
        operation_id,
        path: path.to_owned(),
        parameters,
        answers_json,
        answers_image,
        answers_lines,
        action: None,
        household: extension_bool(get, "x-lemonfiber-household") == Some(true),
    })
}

pub fn shape_of(schema: &Schema) -> Option<Shape> {
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

pub fn extension_bool(operation: &Operation, name: &str) -> Option<bool> {
    operation
        .extensions
        .get(name)
        .and_then(serde_json::Value::as_bool)
}

pub fn action_flags(
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
pub fn action_arguments(
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
pub fn action_tools(
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
    if flags.rehearsal {
        let rehearses = arguments
            .iter()
            .any(|argument| argument.name == DRY_RUN_ARGUMENT);
        let offered = flags
            .consent
            .iter()
            .any(|consent| consent == OFFER_ARGUMENT);
        if !rehearses || !offered {
            return Err(vec![format!(
                "{path}: a rehearsed action takes {DRY_RUN_ARGUMENT} and has {OFFER_ARGUMENT} among its consent arguments"
            )]);
        }
    }
    let arguments: Vec<ContractParameter> = arguments
        .into_iter()
        .filter(|argument| argument.name != DRY_RUN_ARGUMENT)
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
    let action = action_variant(&operation_id);
    let tool = |name: String, role, parameters| ContractTool {
        name,
        operation_id: operation_id.clone(),
        path: path.to_owned(),
        role,
        parameters,
        answers_json: true,
        answers_image: false,
        answers_lines: false,
        action: Some(flags.clone()),
        household: false,
    };
    if !flags.rehearsal {
        return Ok(vec![tool(name, Role::Act(action), arguments)]);
    }
    // The act tool takes only the person's yes: the arguments it acts with are the ones sealed
    // in the offer the rehearsal handed out.
    let rehearsal_arguments = arguments.iter().filter(|a| !a.consent).cloned().collect();
    let act_arguments = arguments
        .into_iter()
        .filter(|argument| argument.consent)
        .map(|mut argument| {
            if argument.name == OFFER_ARGUMENT {
                argument.required = true;
            }
            argument
        })
        .collect();
    Ok(vec![
        tool(
            rehearsal_tool_name(&name),
            Role::Rehearse(action.clone()),
            rehearsal_arguments,
        ),
        tool(name, Role::Act(action), act_arguments),
    ])
}
