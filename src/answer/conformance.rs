//! Whether a read's answer is in the shape the core's contract declares for it: checked before
//! the answer is handed over, so structured content never breaks a client that validates it
//! against the tool's `outputSchema`, and a newer or foreign stack is named as such.

use std::collections::HashMap;
use std::sync::LazyLock;

use jsonschema::Validator;
use serde_json::{Value, json};

use super::handed::Data;
use crate::catalogue::{TOOLS, ToolSpec};
use crate::tape::{OnTape, View};

/// The web API version the contract describes.
pub const API_VERSION: u64 = 1;

/// Where an answer differs from what the contract declares for its read: the first difference
/// found, for one is enough to know, and looking for all of them could cost as much as the
/// answer is large.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The `api_version` the stack answered with, where it is a number other than
    /// [`API_VERSION`].
    pub api_version: Option<u64>,
    /// The schema keyword the answer breaks, as a location in the schema (the contract's words,
    /// never the stack's).
    pub first: String,
    /// Where in the answer (the stack's keys, so data) and which keyword of the schema.
    pub named: Value,
}

/// Checks read an answer where it lies, in its indexed text (`tape`).
struct Checks {
    /// The core's schema, every required field required: for an answer nothing was cut from.
    whole: Validator<OnTape>,
    /// The schema a tool's output is published with: for an answer the door already cut.
    cut: Validator<OnTape>,
}

/// Every read tool's checks, made once. A schema build.rs wrote that does not compile is a
/// build defect the tests catch; such a tool is left unchecked rather than taking the server
/// down.
static CHECKS: LazyLock<HashMap<&'static str, Checks>> = LazyLock::new(|| {
    TOOLS
        .iter()
        .filter_map(|tool| Some((tool.name, checks_of(tool)?)))
        .collect()
});

fn checks_of(tool: &ToolSpec) -> Option<Checks> {
    let compile = |text: &str| {
        let schema: Value = serde_json::from_str(text).ok()?;
        jsonschema::options_for::<OnTape>()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .ok()
    };
    Some(Checks {
        whole: compile(tool.answer_schema?)?,
        cut: compile(tool.output_schema?)?,
    })
}

/// Checks `answer` (an envelope the stack answered `tool`'s read with, as it is handed over).
/// `whole` says nothing was left out of it on the way in.
pub fn check(tool: &str, answer: &Data, whole: bool) -> Result<(), Mismatch> {
    let Some(checks) = CHECKS.get(tool) else {
        return Ok(());
    };
    let Some(tape) = answer.tape() else {
        // Deeper than any answer serde_json reads: nothing was checked, so nothing conforms.
        return Err(Mismatch {
            api_version: None,
            first: "/".to_owned(),
            named: json!({ "at": "", "schema": "/" }),
        });
    };
    let validator = if whole { &checks.whole } else { &checks.cut };
    let root = View::At(tape.root());
    // Nearly every answer conforms, and the yes-or-no check is the cheaper walk: where the
    // first difference lies is only asked of an answer that has one.
    if validator.is_valid(root) {
        return Ok(());
    }
    let Err(error) = validator.validate(root) else {
        return Ok(());
    };
    let first = error.schema_path().to_string();
    Err(Mismatch {
        api_version: tape
            .root()
            .get("api_version")
            .and_then(|version| version.text().parse::<u64>().ok())
            .filter(|version| *version != API_VERSION),
        named: json!({ "at": error.instance_path().to_string(), "schema": first }),
        first,
    })
}

/// Checks an envelope against the schema of the kind it names: for the demo's tests, which
/// hold every answer the demo gives to the core's contract.
#[cfg(test)]
pub fn check_kind(answer: &Value) -> Result<(), String> {
    use crate::catalogue::KIND_SCHEMAS;
    let kind = answer["kind"].as_str().ok_or("the answer names no kind")?;
    let (_, text) = KIND_SCHEMAS
        .iter()
        .find(|(name, _)| *name == kind)
        .ok_or_else(|| format!("the contract has no kind {kind}"))?;
    let schema: Value = serde_json::from_str(text).map_err(|error| error.to_string())?;
    let validator = jsonschema::draft202012::new(&schema).map_err(|error| error.to_string())?;
    let differences: Vec<String> = validator
        .iter_errors(answer)
        .take(8)
        .map(|error| {
            format!(
                "{} ({}): {error}",
                error.instance_path(),
                error.schema_path()
            )
        })
        .collect();
    if differences.is_empty() {
        Ok(())
    } else {
        Err(format!("{kind}: {}", differences.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;
    use crate::redact::Secrets;

    fn handed(answer: Value) -> Data {
        Data::handed(answer.into(), &Secrets::default())
    }

    #[test]
    fn every_read_answering_a_kind_has_schemas_that_compile() {
        let mut checked = 0;
        for tool in catalogue::reads() {
            if tool.answer_schema.is_none() {
                continue;
            }
            assert!(
                CHECKS.contains_key(tool.name),
                "{}: its schemas do not compile",
                tool.name
            );
            checked += 1;
        }
        assert!(checked >= 30, "only {checked} reads are checked");
    }

    #[test]
    fn an_answer_of_another_version_or_shape_is_named() {
        let answer = json!({"api_version": 2, "kind": "version", "data": {"surprise": true}});
        let mismatch = check("read_version", &handed(answer), true).expect_err("a mismatch");
        assert_eq!(mismatch.api_version, Some(2));
        assert!(
            mismatch.first.ends_with("/properties/api_version/enum"),
            "{}",
            mismatch.first
        );
        let shape = json!({"api_version": 1, "kind": "version", "data": {"binary": 7}});
        let mismatch = check("read_version", &handed(shape), true).expect_err("a mismatch");
        assert_eq!(mismatch.api_version, None);
        assert!(
            mismatch.named["at"]
                .as_str()
                .is_some_and(|at| at.starts_with("/data")),
            "{}",
            mismatch.named
        );
    }

    #[test]
    fn a_cut_answer_is_held_to_types_not_to_required_fields() {
        let cut = json!({"api_version": 1, "kind": "version", "data": {}, "left_out": {"items": 3, "bytes": 90}});
        let cut = handed(cut);
        assert!(check("read_version", &cut, false).is_ok());
        assert!(check("read_version", &cut, true).is_err());
        let wrong_type = json!({"api_version": 1, "kind": "version", "data": {"binary": 7}});
        assert!(check("read_version", &handed(wrong_type), false).is_err());
    }
}
