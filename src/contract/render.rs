//! The Rust the build writes: the tool catalogue, each read sent through the SDK, and each
//! operation's path template.

use std::collections::BTreeMap;

use openapiv3::{OpenAPI, ReferenceOr};
use proc_macro2::{Ident, TokenStream};
use quote::quote;
use serde_json::{Value, json};

use super::answers::{kind_schemas, read_answer_schemas, streamed_answer_schema, streamed_form};
use super::client::sendable;
use super::naming::{DRY_RUN_ARGUMENT, OFFER_ARGUMENT, rehearsal_tool_name, resource_uri};
use super::tools::{ActionFlags, ContractParameter, ContractTool, Role};
use super::vocabulary::{Audience, Completing, Shape, Streamed};
use super::words::{COMPLETIONS, Notes, PromptWords, WordedTool};
use super::{CONTRACT, Problems};

/// A tool's JSON input schema, in the words of its audience: a member is offered only the
/// parameters the household words describe.
pub fn input_schema(
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

/// `read_front_door` → `FrontDoor`; `downloads_pause` → `DownloadsPause`.
pub fn variant(snake: &str) -> String {
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

pub fn read_variant(tool: &ContractTool) -> String {
    variant(tool.name.trim_start_matches("read_"))
}

pub fn action_variant(tool: &ContractTool) -> String {
    variant(tool.operation_id.trim_start_matches("act_"))
}

/// `catalogue.rs`: the notes, the tools, the reads and actions they name, and every kind's
/// schema.
pub fn render_catalogue(
    catalogue: &[WordedTool],
    notes: &Notes,
    prompts: &BTreeMap<String, PromptWords>,
    document: &Value,
) -> Result<String, Problems> {
    let prompts = prompts.iter().map(|(name, prompt)| {
        let audience = if prompt.audience == "household" {
            quote!(Audience::Household)
        } else {
            quote!(Audience::Operator)
        };
        let (title, description, text) = (
            prompt.title.trim(),
            prompt.description.trim(),
            prompt.text.trim(),
        );
        let uses = &prompt.uses;
        let arguments = prompt.arguments.iter().map(|(argument, words)| {
            let (description, adds) = (words.description.trim(), words.adds.trim());
            let complete = match COMPLETIONS
                .iter()
                .find(|(word, _)| Some(*word) == words.complete.as_deref())
            {
                Some((_, Completing::Titles)) => quote!(Some(Completing::Titles)),
                Some((_, Completing::Services)) => quote!(Some(Completing::Services)),
                Some((_, Completing::Forms)) => quote!(Some(Completing::Forms)),
                None => quote!(None),
            };
            quote! {
                PromptArgumentSpec { name: #argument, description: #description, adds: #adds, complete: #complete }
            }
        });
        quote! {
            PromptSpec {
                name: #name,
                title: #title,
                audience: #audience,
                description: #description,
                text: #text,
                uses: &[#(#uses),*],
                arguments: &[#(#arguments),*],
            }
        }
    });
    let unconfigured = notes.unconfigured.trim();
    let unconfigured_household = notes.unconfigured_household.trim();
    let tools = catalogue
        .iter()
        .map(|worded| tool_spec(worded, document))
        .collect::<Result<Vec<_>, _>>()?;
    let reads = catalogue
        .iter()
        .filter(|worded| worded.tool.role == Role::Read)
        .map(|worded| identifier(&read_variant(worded.tool), &worded.tool.path))
        .collect::<Result<Vec<_>, _>>()?;
    let mut actions: Vec<&ContractTool> = catalogue
        .iter()
        .map(|worded| worded.tool)
        .filter(|tool| tool.role == Role::Act)
        .collect();
    actions.sort_by_key(|tool| &tool.path);
    let action_variants = actions
        .iter()
        .map(|tool| identifier(&action_variant(tool), &tool.path))
        .collect::<Result<Vec<_>, _>>()?;
    let act_tools = actions.iter().map(|tool| &tool.name);
    let rehearsal_tools = actions.iter().map(|tool| {
        let rehearsed = tool.action.as_ref().is_some_and(|flags| flags.rehearsal);
        optional_text(rehearsed.then(|| rehearsal_tool_name(&tool.name)))
    });
    let disturbs = actions
        .iter()
        .map(|tool| tool.action.as_ref().is_some_and(|flags| flags.disturbs));
    let registry = refusal_registry(document)?;
    let stale_offers = actions
        .iter()
        .map(|tool| {
            let stale = tool
                .action
                .as_ref()
                .and_then(|flags| flags.stale_offer.as_ref());
            let Some(stale) = stale else {
                return Ok(quote!(None));
            };
            let registered = registry.iter().find(|(code, _, _)| code == stale);
            let Some((_, _, name)) = registered else {
                return Err(vec![format!(
                    "{}: x-lemonfiber-stale-offer {stale} is not in x-lemonfiber-refusals",
                    tool.path
                )]);
            };
            let name = identifier(name, &tool.path)?;
            Ok(quote!(Some(refusals::#name)))
        })
        .collect::<Result<Vec<_>, Problems>>()?;
    let refusals = registry
        .into_iter()
        .map(|(code, status, name)| {
            let name = identifier(&name, &format!("x-lemonfiber-refusals {code}"))?;
            Ok(quote! { pub const #name: RefusalCode = RefusalCode { code: #code, status: #status }; })
        })
        .collect::<Result<Vec<_>, Problems>>()?;
    let kind_schemas = kind_schemas(document)?.into_iter().map(|(kind, schema)| {
        let schema = schema.to_string();
        quote!((#kind, #schema))
    });
    rust_file(
        "catalogue.rs",
        "Generated by build.rs from contract/openapi.json and src/words.toml.",
        quote! {
            /// Added to a tool's description when its path is `unconfigured`: for the operator, and in the household's words.
            pub const UNCONFIGURED_NOTE: (&str, &str) = (#unconfigured, #unconfigured_household);

            pub static TOOLS: &[ToolSpec] = &[#(#tools),*];

            /// The prompts of the words file, each for its audience.
            pub static PROMPTS: &[PromptSpec] = &[#(#prompts),*];

            /// Every read the contract describes.
            #[derive(Clone, Copy, Debug, PartialEq, Eq)]
            pub enum Read {
                #(#reads,)*
            }

            /// Every action a key may call.
            #[derive(Clone, Copy, Debug, PartialEq, Eq)]
            pub enum Action {
                #(#action_variants,)*
            }

            impl Action {
                /// The tool that acts.
                pub fn act_tool(self) -> &'static str {
                    match self {
                        #(Action::#action_variants => #act_tools,)*
                    }
                }

                /// The tool that rehearses it, for an action that can be rehearsed.
                pub fn rehearsal_tool(self) -> Option<&'static str> {
                    match self {
                        #(Action::#action_variants => #rehearsal_tools,)*
                    }
                }

                /// Whether carrying it out disturbs the stack (the contract's `x-lemonfiber-disturbs`): an
                /// action that does and has no rehearsal is asked of the person all the same.
                pub fn disturbs(self) -> bool {
                    match self {
                        #(Action::#action_variants => #disturbs,)*
                    }
                }

                /// The code the stack refuses with when the offer was made on a state that has since moved.
                pub fn stale_offer(self) -> Option<RefusalCode> {
                    match self {
                        #(Action::#action_variants => #stale_offers,)*
                    }
                }
            }

            /// The consent argument a rehearsal answers and its act tool requires.
            pub const OFFER_ARGUMENT: &str = #OFFER_ARGUMENT;
            /// The action argument that asks the stack to rehearse rather than act.
            pub const DRY_RUN_ARGUMENT: &str = #DRY_RUN_ARGUMENT;

            /// Every refusal the core's registry names, under its name there.
            #[allow(dead_code)]
            pub mod refusals {
                use super::RefusalCode;
                #(#refusals)*
            }

            /// Every kind's envelope as the core's contract declares it, as JSON Schema text.
            #[cfg_attr(not(test), allow(dead_code))]
            pub static KIND_SCHEMAS: &[(&str, &str)] = &[#(#kind_schemas),*];
        },
    )
}

/// One tool's `ToolSpec`: its words, what it operates, its annotations and schemas.
fn tool_spec(worded: &WordedTool, document: &Value) -> Result<TokenStream, Problems> {
    let WordedTool {
        tool,
        words,
        parameters,
    } = worded;
    let operation = match tool.role {
        Role::Read => {
            let read = identifier(&read_variant(tool), &tool.path)?;
            quote!(Operation::Read(Read::#read))
        }
        Role::Rehearse => {
            let action = identifier(&action_variant(tool), &tool.path)?;
            quote!(Operation::Rehearse(Action::#action))
        }
        Role::Act => {
            let action = identifier(&action_variant(tool), &tool.path)?;
            quote!(Operation::Act(Action::#action))
        }
        Role::Job => quote!(Operation::Job),
        Role::Connection => quote!(Operation::Connection),
    };
    let (read_only, destructive, idempotent) = match (&tool.action, tool.role) {
        (Some(flags), Role::Act) => (false, flags.disturbs, flags.idempotent),
        _ => (true, false, true),
    };
    let resource = optional_text((tool.role == Role::Read).then(|| resource_uri(&tool.path)));
    let answers = match tool.role {
        Role::Read => read_answer_schemas(document, &tool.path)?,
        _ => None,
    };
    let answer_schema = optional_text(answers.as_ref().map(|answers| answers.strict.to_string()));
    // A read answering lines or a file is handed over as the server describes it: that
    // description is its output.
    let streamed = (tool.role == Role::Read && !tool.answers_json)
        .then(|| streamed_answer_schema(streamed_form(tool)));
    let output_schema = optional_text(
        answers
            .as_ref()
            .map(|answers| answers.published.clone())
            .or(streamed)
            .map(|schema| schema.to_string()),
    );
    let name = &tool.name;
    let title = words.title.trim();
    let operator_words = words.operator.trim();
    let household_words = optional_text(words.household.as_deref().map(str::trim));
    let capability = &tool.path;
    let operator_input_schema = input_schema(parameters, Audience::Operator);
    let household_input_schema = optional_text(
        words
            .household
            .as_ref()
            .map(|_| input_schema(parameters, Audience::Household)),
    );
    let parameters = parameters
        .iter()
        .map(|(parameter, _, household)| parameter_spec(parameter, household.is_some()));
    Ok(quote! {
        ToolSpec {
            name: #name,
            title: #title,
            operator_words: #operator_words,
            household_words: #household_words,
            capability: #capability,
            operation: #operation,
            annotations: Annotations { read_only: #read_only, destructive: #destructive, idempotent: #idempotent },
            resource: #resource,
            input_schema: #operator_input_schema,
            household_input_schema: #household_input_schema,
            answer_schema: #answer_schema,
            output_schema: #output_schema,
            parameters: &[#(#parameters),*],
        }
    })
}

fn parameter_spec(parameter: &ContractParameter, household: bool) -> TokenStream {
    let ContractParameter {
        name,
        required,
        in_path,
        ..
    } = parameter;
    let shape = match parameter.shape {
        Shape::Text => quote!(Shape::Text),
        Shape::TextList => quote!(Shape::TextList),
        Shape::Flag => quote!(Shape::Flag),
        Shape::Count => quote!(Shape::Count),
    };
    quote! {
        ParameterSpec { name: #name, shape: #shape, required: #required, in_path: #in_path, household: #household }
    }
}

/// `sdk_calls.rs`: each read and action sent through the SDK, and each operation's path
/// template.
pub fn render_sdk_calls(tools: &[ContractTool], contract: &OpenAPI) -> Result<String, Problems> {
    let reads = tools
        .iter()
        .filter(|tool| tool.role == Role::Read)
        .map(read_call)
        .collect::<Result<Vec<_>, _>>()?;
    let actions = tools
        .iter()
        .filter(|tool| tool.role == Role::Act)
        .filter_map(|tool| tool.action.as_ref().map(|flags| action_call(tool, flags)))
        .collect::<Result<Vec<_>, _>>()?;
    let operations = render_operations(contract);
    rust_file(
        "sdk_calls.rs",
        "Generated by build.rs: each read, sent through the generated client with a tool's arguments.",
        quote! {
            pub(super) async fn send_read(
                client: &Client,
                read: crate::catalogue::Read,
                arguments: &super::parameters::Parameters,
            ) -> Result<super::reply::Reply, Error<serde_json::Value>> {
                use crate::catalogue::Read;
                match read {
                    #(#reads)*
                }
            }

            pub(super) async fn send_action(
                client: &Client,
                action: crate::catalogue::Action,
                body: serde_json::Map<String, serde_json::Value>,
                idempotency_key: Option<&str>,
            ) -> Result<super::reply::Reply, Error<serde_json::Value>> {
                use crate::catalogue::Action;
                let body = serde_json::Value::Object(body);
                match action {
                    #(#actions)*
                }
            }

            #operations
        },
    )
}

/// A read's arm of `send_read`: its arguments set on the SDK's call, and the answer read as an
/// envelope or a stream.
fn read_call(tool: &ContractTool) -> Result<TokenStream, Problems> {
    let read = identifier(&read_variant(tool), &tool.path)?;
    let operation = identifier(&tool.operation_id, &tool.path)?;
    let arguments = tool
        .parameters
        .iter()
        .map(|parameter| {
            let getter = match parameter.shape {
                Shape::Text => quote!(text),
                Shape::TextList => quote!(text_list),
                Shape::Flag => quote!(flag),
                Shape::Count => quote!(count),
            };
            let name = &parameter.name;
            let setter = identifier(name, &tool.path)?;
            // A value put into the path must be one plain identifier, whoever passes it: a URL
            // parser would otherwise turn `\\` into `/` and resolve `.` and `..` away.
            let plain = parameter.in_path.then(|| {
                quote! {
                    if !super::path::is_plain_identifier(&value) {
                        return Err(Error::Custom(super::door::PATH_OUTSIDE_TEMPLATE.to_owned()));
                    }
                }
            });
            Ok(quote! {
                if let Some(value) = arguments.#getter(#name) {
                    #plain
                    call = call.#setter(value);
                }
            })
        })
        .collect::<Result<Vec<_>, Problems>>()?;
    let reply = if tool.answers_json {
        quote!(super::reply::Reply::from_envelope(call.send().await?))
    } else {
        let form = match streamed_form(tool) {
            Streamed::Lines => quote!(Lines),
            Streamed::File => quote!(File),
            Streamed::Image => quote!(Image),
        };
        quote! {
            super::reply::Reply::from_stream(call.send().await?, &ClientInfo::inner(client).limits, crate::catalogue::Streamed::#form).await
        }
    };
    Ok(quote! {
        Read::#read => {
            #[allow(unused_mut)]
            let mut call = client.#operation();
            #(#arguments)*
            #reply
        }
    })
}

/// An action's arm of `send_action`: its body read as the SDK's type for it, sent with the
/// idempotency key where one was given.
fn action_call(tool: &ContractTool, flags: &ActionFlags) -> Result<TokenStream, Problems> {
    let action = identifier(&action_variant(tool), &tool.path)?;
    let body_type = identifier(&flags.body_type, &tool.path)?;
    let operation = identifier(&tool.operation_id, &tool.path)?;
    Ok(quote! {
        Action::#action => {
            let body: types::#body_type = serde_json::from_value(body).map_err(|error| Error::InvalidRequest(error.to_string()))?;
            let mut call = client.#operation().body(body);
            if let Some(key) = idempotency_key {
                call = call.idempotency_key(key);
            }
            super::reply::Reply::from_envelope(call.send().await?)
        }
    })
}

/// Each operation's path template, which the door holds every request's path to, and whether its
/// success answers a stream (log lines, a file) rather than one JSON envelope.
pub fn render_operations(contract: &OpenAPI) -> TokenStream {
    let contract = sendable(contract);
    let mut templates = Vec::new();
    let mut streamed = Vec::new();
    for (path, item) in contract.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            continue;
        };
        for (_, operation) in item.iter() {
            let Some(operation_id) = &operation.operation_id else {
                continue;
            };
            templates.push(quote!(#operation_id => Some(#path),));
            let answers_json = operation.responses.responses.iter().any(|(status, response)| {
                status.to_string().starts_with('2')
                    && matches!(response, ReferenceOr::Item(response) if response.content.contains_key("application/json"))
            });
            if !answers_json {
                streamed.push(quote!(#operation_id => true,));
            }
        }
    }
    quote! {
        /// The path template of an operation, by its id.
        pub(super) fn template_of(operation_id: &str) -> Option<&'static str> {
            match operation_id {
                #(#templates)*
                _ => None,
            }
        }

        /// Whether an operation's success answers a stream rather than one JSON envelope.
        pub(super) fn answers_a_stream(operation_id: &str) -> bool {
            match operation_id {
                #(#streamed)*
                _ => false,
            }
        }
    }
}

/// `Some("text")` or `None`: quote writes an `Option` as its value alone, or as nothing.
fn optional_text(text: Option<impl AsRef<str>>) -> TokenStream {
    match text {
        Some(text) => {
            let text = text.as_ref();
            quote!(Some(#text))
        }
        None => quote!(None),
    }
}

/// A name from the contract as it must appear in the generated code, refused where Rust cannot
/// take it as an identifier (a keyword, a leading digit, a dash).
fn identifier(name: &str, origin: &str) -> Result<Ident, Problems> {
    syn::parse_str::<Ident>(name)
        .ok()
        .filter(|identifier| *identifier == name)
        .ok_or_else(|| {
            vec![format!(
                "{origin}: {name:?} is not a Rust identifier, so the generated code cannot name it; change it in {CONTRACT}"
            )]
        })
}

/// The generated items as the text of `file`, under a `//` note: prettyplease keeps no comments,
/// and an `include!`d file may not open with an inner doc comment.
fn rust_file(file: &str, note: &str, items: TokenStream) -> Result<String, Problems> {
    let parsed = syn::parse2::<syn::File>(items)
        .map_err(|error| vec![format!("the generated {file} does not parse: {error}")])?;
    Ok(format!("// {note}\n\n{}", prettyplease::unparse(&parsed)))
}

/// The core's refusal registry (`x-lemonfiber-refusals`): each code with its HTTP status and the
/// name the core gives it, in the registry's order.
pub fn refusal_registry(document: &Value) -> Result<Vec<(String, u16, String)>, Problems> {
    let Some(registry) = document
        .get("x-lemonfiber-refusals")
        .and_then(Value::as_object)
    else {
        return Err(vec![format!(
            "{CONTRACT} has no x-lemonfiber-refusals registry"
        )]);
    };
    let mut problems = Vec::new();
    let mut refusals = Vec::new();
    for (code, entry) in registry {
        let status = entry
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|status| u16::try_from(status).ok())
            .filter(|status| (400..600).contains(status));
        let name = entry.get("name").and_then(Value::as_str);
        match (status, name) {
            (Some(status), Some(name)) => refusals.push((code.clone(), status, name.to_owned())),
            _ => problems.push(format!(
                "x-lemonfiber-refusals {code}: needs a status from 400 to 599 and a name"
            )),
        }
    }
    if problems.is_empty() {
        Ok(refusals)
    } else {
        Err(problems)
    }
}
