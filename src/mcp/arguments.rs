//! A tool's arguments, checked against what the tool offers before anything reaches the stack.

use serde_json::{Map, Value};

use crate::catalogue::{ArgumentProblem, Fault, ParameterSpec, Shape};
use crate::stack::parameters::{Parameters, whole_number};

/// The longest text an argument may carry: far beyond any name or identifier the stack uses.
const TEXT_LIMIT: usize = 4096;
const LIST_LIMIT: usize = 64;

/// Checks a tool's arguments against what the tool offers: every name offered, every value of
/// its shape, every required one given.
pub fn check<'a>(
    offered: impl IntoIterator<Item = &'a ParameterSpec> + Clone,
    given: Option<Map<String, Value>>,
) -> Result<Parameters, ArgumentProblem> {
    let given = given.unwrap_or_default();
    let problem = |name: &str, fault| ArgumentProblem {
        name: name.to_owned(),
        fault,
    };
    for name in given.keys() {
        if !offered
            .clone()
            .into_iter()
            .any(|parameter| parameter.name == name)
        {
            return Err(problem(name, Fault::NotOffered));
        }
    }
    let mut checked = Map::new();
    for parameter in offered {
        let value = given.get(parameter.name).filter(|value| !value.is_null());
        let Some(value) = value else {
            if parameter.required {
                return Err(problem(parameter.name, Fault::Missing));
            }
            continue;
        };
        check_shape(parameter, value).map_err(|fault| problem(parameter.name, fault))?;
        checked.insert(parameter.name.to_owned(), value.clone());
    }
    Ok(Parameters::checked(checked))
}

fn check_text(value: &Value, required: bool) -> Result<(), Fault> {
    let text = value.as_str().ok_or(Fault::NotText)?;
    if text.len() > TEXT_LIMIT {
        return Err(Fault::TooLong);
    }
    if required && text.trim().is_empty() {
        return Err(Fault::Empty);
    }
    Ok(())
}

fn check_shape(parameter: &ParameterSpec, value: &Value) -> Result<(), Fault> {
    if parameter.in_path {
        check_text(value, true)?;
        return match value.as_str() {
            Some(text) if crate::stack::path::is_plain_identifier(text) => Ok(()),
            _ => Err(Fault::NotAnIdentifier),
        };
    }
    match parameter.shape {
        Shape::Text => check_text(value, parameter.required),
        Shape::Flag => value.as_bool().map(|_| ()).ok_or(Fault::NotFlag),
        Shape::Count => whole_number(value).map(|_| ()).ok_or(Fault::NotCount),
        Shape::TextList => {
            let list = value.as_array().ok_or(Fault::NotTextList)?;
            if list.len() > LIST_LIMIT {
                return Err(Fault::TooMany);
            }
            list.iter()
                .try_for_each(|item| check_text(item, false).map_err(|_| Fault::NotTextList))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::find;
    use serde_json::json;

    fn check(tool: &str, given: Value) -> Result<Parameters, ArgumentProblem> {
        let tool = find(tool).expect("a tool");
        let Value::Object(given) = given else {
            panic!("given must be an object")
        };
        super::check(tool.parameters, Some(given))
    }

    #[test]
    fn takes_offered_arguments_of_the_right_shape() {
        let arguments = check(
            "read_logs",
            json!({"form": ["movies", "shows"], "tail": 20}),
        )
        .expect("valid");
        assert_eq!(
            arguments.text_list("form"),
            Some(vec!["movies".into(), "shows".into()])
        );
        assert_eq!(arguments.count("tail"), Some(20));
        let flagged = check("read_requests", json!({"defaults": true})).expect("valid");
        assert_eq!(flagged.flag("defaults"), Some(true));
        assert_eq!(arguments.text("service"), None);
    }

    #[test]
    fn names_the_argument_that_is_wrong() {
        let wrong = |tool, given, name: &str, fault| {
            assert_eq!(
                check(tool, given),
                Err(ArgumentProblem {
                    name: name.into(),
                    fault
                })
            );
        };
        wrong(
            "read_logs",
            json!({"follow": true}),
            "follow",
            Fault::NotOffered,
        );
        wrong(
            "read_logs",
            json!({"form": "movies"}),
            "form",
            Fault::NotTextList,
        );
        assert_eq!(
            check("read_logs", json!({"tail": 20.0})).map(|given| given.count("tail")),
            Ok(Some(20))
        );
        for not_a_count in [json!("20"), json!(-1), json!(2.5), json!(u64::MAX)] {
            wrong(
                "read_logs",
                json!({"tail": not_a_count}),
                "tail",
                Fault::NotCount,
            );
        }
        wrong(
            "read_requests",
            json!({"defaults": "true"}),
            "defaults",
            Fault::NotFlag,
        );
        wrong("read_held_by_id", json!({}), "id", Fault::Missing);
        wrong("read_held_by_id", json!({"id": "  "}), "id", Fault::Empty);
        for escaping in ["..", ".", "..\\credentials", "a/b", "%2f", "a%2fb", "a b"] {
            wrong(
                "read_held_by_id",
                json!({"id": escaping}),
                "id",
                Fault::NotAnIdentifier,
            );
            wrong(
                "job",
                json!({"job": escaping}),
                "job",
                Fault::NotAnIdentifier,
            );
        }
        wrong(
            "read_held_by_id",
            json!({"id": "x".repeat(TEXT_LIMIT + 1)}),
            "id",
            Fault::TooLong,
        );
    }

    #[test]
    fn null_is_the_same_as_leaving_an_argument_out() {
        assert_eq!(
            check("read_held", json!({"most": null})),
            Ok(Parameters::default())
        );
    }
}
