//! The JSON `install` writes into an assistant's file, laid out as the text around it is: on lines
//! of their own, indented as its neighbours are, or on one line where they are on one line.

/// A value `install` writes: its members in the order they are written (a `serde_json` object
/// would sort them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    String(String),
    List(Vec<Written>),
    Object(Vec<(String, Written)>),
}

impl Written {
    /// The value, for comparing with what a file holds.
    pub fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Written::String(string) => Value::String(string.clone()),
            Written::List(items) => Value::Array(items.iter().map(Written::to_value).collect()),
            Written::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(key, value)| (key.clone(), value.to_value()))
                    .collect(),
            ),
        }
    }
}

/// How a value is laid out.
#[derive(Debug, Clone, Copy)]
pub enum Layout<'a> {
    /// All on one line: `{"a": ["b"]}`.
    OneLine,
    /// Each member of an object on a line of its own, one `unit` deeper than `indent`, the
    /// indentation of the line the value starts on; a list of strings stays on one line.
    Lines {
        indent: &'a str,
        unit: &'a str,
        newline: &'a str,
    },
}

/// `"key": value`, laid out as `layout` says.
pub fn member(key: &str, value: &Written, layout: Layout) -> String {
    format!("{}: {}", quoted(key), render(value, layout))
}

/// `value`, laid out as `layout` says.
pub fn render(value: &Written, layout: Layout) -> String {
    let (open, close, parts): (char, char, Vec<(Option<&str>, &Written)>) = match value {
        Written::String(string) => return quoted(string),
        Written::List(items) => {
            if items.iter().all(|item| matches!(item, Written::String(_))) {
                let items: Vec<String> = items
                    .iter()
                    .map(|item| render(item, Layout::OneLine))
                    .collect();
                return format!("[{}]", items.join(", "));
            }
            ('[', ']', items.iter().map(|item| (None, item)).collect())
        }
        Written::Object(members) => (
            '{',
            '}',
            members
                .iter()
                .map(|(key, value)| (Some(key.as_str()), value))
                .collect(),
        ),
    };
    if parts.is_empty() {
        return format!("{open}{close}");
    }
    let part = |(key, value): (Option<&str>, &Written), layout| match key {
        Some(key) => member(key, value, layout),
        None => render(value, layout),
    };
    match layout {
        Layout::OneLine => {
            let parts: Vec<String> = parts
                .into_iter()
                .map(|each| part(each, Layout::OneLine))
                .collect();
            format!("{open}{}{close}", parts.join(", "))
        }
        Layout::Lines {
            indent,
            unit,
            newline,
        } => {
            let inner = format!("{indent}{unit}");
            let deeper = Layout::Lines {
                indent: &inner,
                unit,
                newline,
            };
            let parts: Vec<String> = parts
                .into_iter()
                .map(|each| format!("{newline}{inner}{}", part(each, deeper)))
                .collect();
            format!("{open}{}{newline}{indent}{close}", parts.join(","))
        }
    }
}

/// `text` as a JSON string.
fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Written {
        Written::Object(vec![
            ("command".into(), Written::String("/bin/lf \"x\"".into())),
            (
                "args".into(),
                Written::List(vec![Written::String("stdio".into())]),
            ),
            ("env".into(), Written::Object(vec![])),
        ])
    }

    #[test]
    fn a_value_is_laid_out_as_asked_its_members_in_order() {
        assert_eq!(
            member("lemonfiber", &entry(), Layout::OneLine),
            r#""lemonfiber": {"command": "/bin/lf \"x\"", "args": ["stdio"], "env": {}}"#
        );
        let lines = Layout::Lines {
            indent: "\t",
            unit: "\t",
            newline: "\r\n",
        };
        assert_eq!(
            render(&entry(), lines),
            "{\r\n\t\t\"command\": \"/bin/lf \\\"x\\\"\",\r\n\t\t\"args\": [\"stdio\"],\r\n\t\t\"env\": {}\r\n\t}"
        );
        let written = render(&entry(), lines);
        let read: serde_json::Value = serde_json::from_str(&written).expect("JSON");
        assert_eq!(read, entry().to_value());
    }
}
