//! The tools build.rs made from the contract and the words, and what each is offered as: its
//! input schema, annotations and resource, in the operator's or the household's words.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use rmcp::model::{JsonObject, Resource, ResourceTemplate, Tool, ToolAnnotations};
use serde_json::Value;

include!(concat!(env!("OUT_DIR"), "/catalogue.rs"));

// The generator's own definitions, so the catalogue it writes and the server agree.
#[path = "contract/vocabulary.rs"]
mod vocabulary;
pub use vocabulary::{Audience, Completing, Shape, Streamed};

/// A refusal as the core's registry declares it: its code and the HTTP status it comes with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefusalCode {
    pub code: &'static str,
    pub status: u16,
}

/// Each read's `outputSchema`, parsed once: they are large, and listed on every `tools/list`.
static OUTPUT_SCHEMAS: LazyLock<HashMap<&'static str, Arc<JsonObject>>> = LazyLock::new(|| {
    TOOLS
        .iter()
        .filter_map(|tool| {
            let schema = serde_json::from_str(tool.output_schema?).ok()?;
            Some((tool.name, Arc::new(schema)))
        })
        .collect()
});

/// A prompt of the words file: what a person of its audience reaches for, answered with the
/// tools it uses.
#[derive(Debug)]
pub struct PromptSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub audience: Audience,
    pub description: &'static str,
    pub text: &'static str,
    /// Offered only to a key offered every one of these tools.
    pub uses: &'static [&'static str],
    pub arguments: &'static [PromptArgumentSpec],
}

#[derive(Debug)]
pub struct PromptArgumentSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// Added to the prompt's text when the argument is given, `{value}` standing for it.
    pub adds: &'static str,
    pub complete: Option<Completing>,
}

/// What is wrong with a prompt's arguments. Names the argument, never repeats its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptArgumentFault {
    NotTaken(String),
    NotText(String),
    /// Longer than the most characters it may be.
    TooLong(String, usize),
}

/// One tool: a read, a rehearsal or an action of the contract, joined to its words.
#[derive(Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub operator_words: &'static str,
    pub household_words: Option<&'static str>,
    /// The path `GET /api/capabilities` names when it says whether this key may use the tool.
    pub capability: &'static str,
    pub operation: Operation,
    pub annotations: Annotations,
    /// `lemonfiber://read/...`: a resource, or a template where the read has path segments.
    pub resource: Option<&'static str>,
    /// JSON Schema text for the operator, and for a household member where the tool has
    /// household words.
    pub input_schema: &'static str,
    pub household_input_schema: Option<&'static str>,
    /// JSON Schema text of the read's answer as the core declares it (the kinds it answers
    /// with), checked before the answer is cut; `None` where the read answers no kind.
    pub answer_schema: Option<&'static str>,
    /// The tool's `outputSchema`: the answer's schema as the server hands it over (cut answers
    /// may leave fields out; the `left_out` note may be added).
    pub output_schema: Option<&'static str>,
    pub parameters: &'static [ParameterSpec],
}

/// What calling a tool does, its read or action named by the generated `Read` and `Action`.
pub type Operation = vocabulary::Operation<Read, Action>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

#[derive(Debug)]
pub struct ParameterSpec {
    pub name: &'static str,
    pub shape: Shape,
    pub required: bool,
    pub in_path: bool,
    /// Whether a household member is offered it: the household words describe it.
    pub household: bool,
}

/// What is wrong with one argument. Names the argument, never repeats its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentProblem {
    pub name: String,
    pub fault: Fault,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    NotOffered,
    Missing,
    Empty,
    NotText,
    NotTextList,
    NotFlag,
    NotCount,
    TooLong,
    TooMany,
    /// A value put into the request's path that is not one plain identifier.
    NotAnIdentifier,
}

pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|tool| tool.name == name)
}

pub fn reads() -> impl Iterator<Item = &'static ToolSpec> {
    TOOLS
        .iter()
        .filter(|tool| matches!(tool.operation, Operation::Read(_)))
}

impl ToolSpec {
    /// The parameters this audience is offered: a member only those the household words describe.
    pub fn parameters_for(
        &self,
        audience: Audience,
    ) -> impl Iterator<Item = &'static ParameterSpec> + Clone {
        self.parameters
            .iter()
            .filter(move |parameter| match audience {
                Audience::Operator => true,
                Audience::Household => parameter.household,
            })
    }

    /// The parameters that ask this tool for less: those of its audience that are not part of
    /// the path.
    pub fn narrowing(&self, audience: Audience) -> Vec<&'static str> {
        self.parameters_for(audience)
            .filter(|parameter| !parameter.in_path)
            .map(|parameter| parameter.name)
            .collect()
    }

    pub fn description(&self, audience: Audience) -> &'static str {
        match audience {
            Audience::Household => self.household_words.unwrap_or(self.operator_words),
            Audience::Operator => self.operator_words,
        }
    }

    /// The input schema build.rs wrote for this audience.
    pub fn input_schema(&self, audience: Audience) -> JsonObject {
        let text = match audience {
            Audience::Household => self.household_input_schema.unwrap_or(self.input_schema),
            Audience::Operator => self.input_schema,
        };
        // build.rs wrote it from a JSON value, so it parses.
        serde_json::from_str(text).unwrap_or_default()
    }

    /// The tool as listed, with the description its offer gives it.
    pub fn tool(&self, audience: Audience, description: String) -> Tool {
        let annotations = ToolAnnotations::with_title(self.title)
            .read_only(self.annotations.read_only)
            .destructive(self.annotations.destructive)
            .idempotent(self.annotations.idempotent)
            .open_world(self.annotations.open_world);
        let tool = Tool::new(self.name, description, self.input_schema(audience))
            .with_title(self.title)
            .with_annotations(annotations);
        match OUTPUT_SCHEMAS.get(self.name) {
            Some(schema) => tool.with_raw_output_schema(schema.clone()),
            None => tool,
        }
    }

    /// The resource or resource template a read is also offered as, with the description its
    /// offer gives it.
    pub fn resource(&self, description: String) -> Option<Offered> {
        let uri = self.resource?;
        Some(
            if self.parameters.iter().any(|parameter| parameter.in_path) {
                Offered::Template(
                    ResourceTemplate::new(uri, self.name)
                        .with_title(self.title)
                        .with_description(description)
                        .with_mime_type(RESOURCE_MIME_TYPE),
                )
            } else {
                Offered::Resource(
                    Resource::new(uri, self.name)
                        .with_title(self.title)
                        .with_description(description)
                        .with_mime_type(RESOURCE_MIME_TYPE),
                )
            },
        )
    }

    /// The resource a call of this read with `arguments` answers as: its template with each
    /// `{parameter}` filled with the call's value, encoded as [`ToolSpec::match_resource`]
    /// decodes it. Empty for a tool that is no resource, or a call missing a value it needs (whose
    /// answer is a refusal, naming no resource).
    pub fn resource_of(&self, arguments: Option<&JsonObject>) -> String {
        /// What a path segment keeps as it is (RFC 3986's unreserved characters).
        const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
            .remove(b'-')
            .remove(b'.')
            .remove(b'_')
            .remove(b'~');
        let Some(pattern) = self.resource else {
            return String::new();
        };
        let filled: Option<Vec<String>> = pattern
            .split('/')
            .map(|part| {
                match part
                    .strip_prefix('{')
                    .and_then(|rest| rest.strip_suffix('}'))
                {
                    Some(name) => {
                        let value = arguments?.get(name)?.as_str()?;
                        Some(percent_encoding::utf8_percent_encode(value, SEGMENT).to_string())
                    }
                    None => Some(part.to_owned()),
                }
            })
            .collect();
        filled.map(|parts| parts.join("/")).unwrap_or_default()
    }

    /// Matches a `resources/read` URI against this read's resource, answering its path values.
    pub fn match_resource(&self, uri: &str) -> Option<serde_json::Map<String, Value>> {
        let pattern = self.resource?;
        let mut values = serde_json::Map::new();
        let mut pattern_parts = pattern.split('/');
        let mut uri_parts = uri.split('/');
        loop {
            match (pattern_parts.next(), uri_parts.next()) {
                (None, None) => return Some(values),
                (Some(expected), Some(actual)) => {
                    match expected
                        .strip_prefix('{')
                        .and_then(|rest| rest.strip_suffix('}'))
                    {
                        Some(name) if !actual.is_empty() => {
                            values.insert(
                                name.to_owned(),
                                Value::from(
                                    percent_encoding::percent_decode_str(actual)
                                        .decode_utf8()
                                        .ok()?
                                        .into_owned(),
                                ),
                            );
                        }
                        Some(_) => return None,
                        None if expected == actual => {}
                        None => return None,
                    }
                }
                _ => return None,
            }
        }
    }
}

/// Resources answer the same framed text a tool does (F13-R14).
pub const RESOURCE_MIME_TYPE: &str = "text/plain";

pub enum Offered {
    Resource(Resource),
    Template(ResourceTemplate),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_their_uris_and_nothing_else() {
        let held = find("read_held_by_id").expect("read_held_by_id");
        let values = held
            .match_resource("lemonfiber://read/held/ttl-a%20b")
            .expect("matches");
        assert_eq!(values.get("id"), Some(&Value::from("ttl-a b")));
        assert!(held.match_resource("lemonfiber://read/held/").is_none());
        assert!(held.match_resource("lemonfiber://read/held/a/b").is_none());
        assert!(held.match_resource("lemonfiber://read/held").is_none());
        let status = find("read_status").expect("read_status");
        assert!(status.match_resource("lemonfiber://read/status").is_some());
        assert!(
            status
                .match_resource("lemonfiber://read/status/x")
                .is_none()
        );
    }

    /// Issue 27: a call's answer names its resource with the call's values in it, as a read
    /// of that resource would name it, never the template.
    #[test]
    fn a_calls_resource_is_its_template_filled_with_its_values() {
        let bundle = find("read_bundle_by_name").expect("read_bundle_by_name");
        let arguments = |value: Value| {
            let Value::Object(arguments) = serde_json::json!({ "name": value }) else {
                unreachable!("an object")
            };
            arguments
        };
        let plain = arguments(Value::from("support-2026-11-18.tar"));
        let uri = bundle.resource_of(Some(&plain));
        assert_eq!(uri, "lemonfiber://read/bundle/support-2026-11-18.tar");
        assert_eq!(
            bundle
                .match_resource(&uri)
                .and_then(|values| values.get("name").cloned()),
            Some(Value::from("support-2026-11-18.tar"))
        );
        let odd = arguments(Value::from("a b/{c}"));
        let uri = bundle.resource_of(Some(&odd));
        assert_eq!(uri, "lemonfiber://read/bundle/a%20b%2F%7Bc%7D");
        assert_eq!(
            bundle
                .match_resource(&uri)
                .and_then(|values| values.get("name").cloned()),
            Some(Value::from("a b/{c}"))
        );
        assert_eq!(bundle.resource_of(None), "");
        assert_eq!(bundle.resource_of(Some(&arguments(Value::from(3)))), "");
        let status = find("read_status").expect("read_status");
        assert_eq!(status.resource_of(None), "lemonfiber://read/status");
        let act = TOOLS
            .iter()
            .find(|tool| tool.resource.is_none())
            .expect("a tool that is no resource");
        assert_eq!(act.resource_of(Some(&plain)), "");
    }

    #[test]
    fn household_schema_offers_only_household_parameters() {
        let held = find("read_held").expect("read_held");
        let schema = held.input_schema(Audience::Household);
        let properties = schema["properties"].as_object().expect("properties");
        assert_eq!(properties.keys().collect::<Vec<_>>(), vec!["most"]);
        let operator = held.input_schema(Audience::Operator);
        assert!(
            operator["properties"]
                .as_object()
                .expect("properties")
                .contains_key("member")
        );
    }
}
