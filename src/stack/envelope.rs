//! An envelope the stack answered with, holding the fields the contract names and no other (a
//! field a newer core adds is not handed on). Kept as the stack's own text, indexed, where that
//! text is JSON as serde_json writes it (most answers): then it is checked and handed over as it
//! is, never built into a tree and written out again (issue 32). Any other is read into a tree,
//! as every answer once was.

use std::borrow::Cow;

use serde_json::Value;

use crate::tape::{At, Kind, Tape};

/// The envelope's fields, in the order serde_json writes an object's keys: the contract's, which a
/// test holds them to.
const FIELDS: [&str; 5] = ["api_version", "data", "host", "job", "kind"];

#[derive(Clone)]
pub struct Envelope(Form);

#[derive(Clone)]
enum Form {
    Sent(Tape),
    Tree(Value),
}

/// The envelope as the SDK once read it: a text that does not read as this is not an envelope.
#[derive(serde::Deserialize)]
struct Fields {
    api_version: i64,
    data: Value,
    host: Option<String>,
    job: Option<String>,
    kind: String,
}

impl Envelope {
    /// The envelope the stack answered with, or why its answer is not one.
    pub fn read(bytes: &[u8]) -> serde_json::Result<Envelope> {
        match std::str::from_utf8(bytes).ok().and_then(as_sent) {
            Some(tape) => Ok(Envelope(Form::Sent(tape))),
            None => read_as_tree(bytes),
        }
    }

    /// The envelope as a tree, read from its text when it is kept as that.
    pub fn value(&self) -> Cow<'_, Value> {
        match &self.0 {
            Form::Sent(tape) => Cow::Owned(tape.root().to_value()),
            Form::Tree(value) => Cow::Borrowed(value),
        }
    }

    pub fn into_value(self) -> Value {
        match self.0 {
            Form::Sent(tape) => tape.root().to_value(),
            Form::Tree(value) => value,
        }
    }

    /// The envelope as it is handed over: its indexed text, or a tree.
    pub fn into_handed(self) -> Result<Tape, Value> {
        match self.0 {
            Form::Sent(tape) => Ok(tape),
            Form::Tree(value) => Err(value),
        }
    }
}

impl From<Value> for Envelope {
    fn from(value: Value) -> Envelope {
        Envelope(Form::Tree(value))
    }
}

impl PartialEq for Envelope {
    fn eq(&self, other: &Envelope) -> bool {
        self.value() == other.value()
    }
}

impl std::fmt::Debug for Envelope {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.value(), formatter)
    }
}

/// The envelope read into a tree, as the SDK once read every one.
fn read_as_tree(bytes: &[u8]) -> serde_json::Result<Envelope> {
    let Fields {
        api_version,
        data,
        host,
        job,
        kind,
    } = super::reply::read_json(bytes)?;
    let mut envelope = serde_json::Map::new();
    envelope.insert("api_version".to_owned(), api_version.into());
    envelope.insert("data".to_owned(), data);
    if let Some(host) = host {
        envelope.insert("host".to_owned(), host.into());
    }
    if let Some(job) = job {
        envelope.insert("job".to_owned(), job.into());
    }
    envelope.insert("kind".to_owned(), kind.into());
    Ok(Envelope(Form::Tree(Value::Object(envelope))))
}

/// `text` indexed as the envelope it is, with the contract's fields alone: as it came when those
/// are all it holds, in serde_json's order; written again from their texts when it holds others.
/// `None` when it is not JSON as serde_json writes it, or a field is not of the type the SDK
/// reads it as, so that the SDK's reading decides.
fn as_sent(text: &str) -> Option<Tape> {
    let tape = Tape::index(text.to_owned()).ok()?;
    let root = tape.root();
    if root.kind() != Kind::Object {
        return None;
    }
    let mut fields: [Option<At<'_>>; 5] = [None; 5];
    let mut only_the_fields_in_order = true;
    let mut last = None;
    for (key, value) in root.members() {
        let name = key
            .text()
            .strip_prefix('"')
            .and_then(|key| key.strip_suffix('"'));
        let Some(field) = FIELDS.iter().position(|field| name == Some(field)) else {
            only_the_fields_in_order = false;
            continue;
        };
        only_the_fields_in_order &= last.is_none_or(|last| last < field);
        last = Some(field);
        fields[field] = Some(value);
    }
    let [api_version, data, host, job, kind] = fields;
    let api_version = api_version.filter(|at| at.text().parse::<i64>().is_ok())?;
    let data = data?;
    let kind = kind.filter(|at| matches!(at.kind(), Kind::String { .. }))?;
    // The SDK reads a null host or job as none, and the envelope is then written without it.
    let is_null = |at: &Option<At<'_>>| at.is_some_and(|at| at.kind() == Kind::Null);
    if is_null(&host) || is_null(&job) {
        only_the_fields_in_order = false;
    }
    let [host, job] = [host, job].map(|at| at.filter(|at| at.kind() != Kind::Null));
    if [host, job]
        .iter()
        .flatten()
        .any(|at| !matches!(at.kind(), Kind::String { .. }))
    {
        return None;
    }
    if only_the_fields_in_order {
        return Some(tape);
    }
    let mut written = String::with_capacity(text.len());
    written.push('{');
    let present = [Some(api_version), Some(data), host, job, Some(kind)];
    for (field, at) in FIELDS.iter().zip(present) {
        let Some(at) = at else { continue };
        if written.len() > 1 {
            written.push(',');
        }
        written.push('"');
        written.push_str(field);
        written.push_str("\":");
        written.push_str(at.text());
    }
    written.push('}');
    Tape::index(written).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// A value for a field, of the type the SDK reads it as or not.
    fn field_value() -> impl Strategy<Value = Value> {
        prop::sample::select(vec![
            json!(1),
            json!(-1),
            json!(2),
            json!(1.0),
            json!(9_223_372_036_854_775_808_u64),
            json!("1"),
            json!("status"),
            json!("a \"quoted\" name\n"),
            json!("a/b"),
            json!(null),
            json!({"items": [1, "two", {"three": 3.5}], "zero": 0}),
            json!([]),
        ])
    }

    /// An envelope as any writer might send it: fields the contract names or not, in any order,
    /// any of them missing or named twice, and written as serde_json would or otherwise.
    fn any_text() -> impl Strategy<Value = String> {
        let names = prop::sample::select(vec![
            "api_version",
            "data",
            "host",
            "job",
            "kind",
            "served_by",
        ]);
        let members = prop::collection::vec((names, field_value()), 0..8);
        let ways = prop::sample::select(vec!["", " ", "\\/"]);
        (members, ways).prop_map(|(members, way)| {
            let written: Vec<String> = members
                .iter()
                .map(|(name, value)| format!("\"{name}\":{value}").replace('/', way))
                .collect();
            let separator = if way == " " { ", " } else { "," };
            format!("{{{}}}", written.join(separator))
        })
    }

    proptest! {
        /// Issue 32: whatever the stack sends, the envelope read from its text where it lies is
        /// the envelope the SDK's reading gives, and text the SDK refuses is refused the same.
        #[test]
        fn an_envelope_kept_as_text_is_the_one_read_as_a_tree(text in any_text()) {
            let kept = Envelope::read(text.as_bytes()).map(Envelope::into_value);
            let tree = read_as_tree(text.as_bytes()).map(Envelope::into_value);
            prop_assert_eq!(kept.as_ref().ok(), tree.as_ref().ok());
            prop_assert_eq!(kept.is_err(), tree.is_err());
        }
    }

    /// A field the contract adds is not handed on until it is named here (and in `Fields`).
    #[test]
    fn the_fields_kept_are_the_contracts() {
        let contract: Value = serde_json::from_str(include_str!("../../contract/openapi.json"))
            .expect("the contract");
        let properties = contract["components"]["schemas"]["Envelope"]["properties"]
            .as_object()
            .expect("the envelope's fields");
        let mut named: Vec<&str> = properties.keys().map(String::as_str).collect();
        named.sort_unstable();
        assert_eq!(named, FIELDS);
    }

    #[test]
    fn an_envelope_as_serde_json_writes_it_is_kept_as_it_came() {
        let text =
            json!({"api_version": 1, "data": {"b": 1, "a": [true]}, "kind": "status"}).to_string();
        let envelope = Envelope::read(text.as_bytes()).expect("an envelope");
        let Ok(tape) = envelope.into_handed() else {
            panic!("read as a tree");
        };
        assert_eq!(tape.text(), text);
    }

    #[test]
    fn fields_the_contract_does_not_name_are_left_out_of_the_text_kept() {
        let text = r#"{"kind":"status","served_by":"a newer core","data":{"z":1,"a":2},"host":null,"api_version":1}"#;
        let envelope = Envelope::read(text.as_bytes()).expect("an envelope");
        let Ok(tape) = envelope.into_handed() else {
            panic!("read as a tree");
        };
        assert_eq!(
            tape.text(),
            r#"{"api_version":1,"data":{"z":1,"a":2},"kind":"status"}"#
        );
    }
}
