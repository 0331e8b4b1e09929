//! A tool's arguments, checked against what the tool offers before anything reaches the stack.

use serde_json::{Map, Value};

use crate::catalogue::{ParameterSpec, Shape};

/// The longest text an argument may carry: far beyond any name or identifier the stack uses.
const TEXT_LIMIT: usize = 4096;
const LIST_LIMIT: usize = 64;
/// The largest whole number a parameter takes: far beyond any count the stack answers with.
pub const COUNT_LIMIT: u64 = u32::MAX as u64;

/// Arguments that passed [`Arguments::check`]: every name offered, every value of its shape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Arguments(Map<String, Value>);

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

impl Arguments {
    pub fn check<'a>(
        offered: impl IntoIterator<Item = &'a ParameterSpec> + Clone,
        given: Option<Map<String, Value>>,
    ) -> Result<Arguments, ArgumentProblem> {
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
        Ok(Arguments(checked))
    }

    /// Arguments as given, unchecked: for tests of what lies beneath the check.
    #[cfg(test)]
    pub fn unchecked(given: Map<String, Value>) -> Arguments {
        Arguments(given)
    }

    /// The arguments as an action's JSON body.
    pub fn to_body(&self) -> Map<String, Value> {
        self.0.clone()
    }

    pub fn text(&self, name: &str) -> Option<String> {
        self.0.get(name)?.as_str().map(str::to_owned)
    }

    pub fn text_list(&self, name: &str) -> Option<Vec<String>> {
        let list = self.0.get(name)?.as_array()?;
        Some(
            list.iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect(),
        )
    }

    pub fn flag(&self, name: &str) -> Option<bool> {
        self.0.get(name)?.as_bool()
    }

    pub fn count(&self, name: &str) -> Option<u64> {
        whole_number(self.0.get(name)?)
    }
}

/// A whole number of at most [`COUNT_LIMIT`], however JSON writes it (`20` or `20.0`).
fn whole_number(value: &Value) -> Option<u64> {
    let number = value.as_u64().or_else(|| {
        let float = value.as_f64()?;
        // Exact: a whole float within the limit converts without loss.
        (float.fract() == 0.0 && (0.0..=COUNT_LIMIT as f64).contains(&float))
            .then_some(float as u64)
    })?;
    (number <= COUNT_LIMIT).then_some(number)
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

    fn check(tool: &str, given: Value) -> Result<Arguments, ArgumentProblem> {
        let tool = find(tool).expect("a tool");
        let Value::Object(given) = given else {
            panic!("given must be an object")
        };
        Arguments::check(tool.parameters, Some(given))
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
            Ok(Arguments::default())
        );
    }
}
