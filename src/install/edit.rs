//! Where in an assistant's file the one entry `install` writes goes, and the few bytes that put
//! it there: its value replaced where it is, or a member inserted after the last one, indented as
//! its neighbours are, or the servers object added to the top level, or a whole file where there
//! was none. Nothing else in the text is touched, and [`check`] holds each change to that before
//! it is written.

use super::jsonc::{self, Dialect, Node, SyntaxError};
use super::render::{self, Layout, Written};

/// What is written, and where: `entry` under `name` in the object under `servers` at the top.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub servers: &'a str,
    pub name: &'a str,
    pub entry: &'a Written,
    pub dialect: Dialect,
}

/// `removed` bytes from `at` in the old text replaced by `inserted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub at: usize,
    pub removed: usize,
    pub inserted: String,
}

/// What the edits do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// There was no value in the file: it is made, holding the servers object alone.
    Made,
    /// The top level had no servers object: one is added, holding the entry alone.
    AddedServers,
    /// The servers object had no entry by the name: it is added after the others.
    Added,
    /// The entry by the name was another: its value is replaced.
    Replaced,
}

/// What the file needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// The entry is there already, exactly: nothing to change. Where its name is.
    Same {
        at: usize,
    },
    Edits {
        change: Change,
        edits: Vec<Edit>,
    },
}

/// Why the file is not changed. Each names where in the old text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    Syntax(SyntaxError),
    /// The value at `at` is not an object.
    NotAnObject {
        at: usize,
        what: Level,
    },
    /// `key` is a key twice in the same object, at `first` and `second`.
    Twice {
        key: String,
        first: usize,
        second: usize,
    },
}

/// Which object a file was to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The file's top level.
    Top,
    /// The value of the servers key.
    Servers,
}

impl From<SyntaxError> for Refused {
    fn from(error: SyntaxError) -> Refused {
        Refused::Syntax(error)
    }
}

/// Indentation where the file shows none to follow.
const DEFAULT_UNIT: &str = "  ";

/// The edits that put `target` into `text`.
pub fn plan(text: &str, target: Target) -> Result<Planned, Refused> {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let servers_holding_entry =
        Written::Object(vec![(target.name.to_owned(), target.entry.clone())]);
    let Some(top) = jsonc::parse(text, target.dialect)? else {
        let document = Written::Object(vec![(target.servers.to_owned(), servers_holding_entry)]);
        let lines = Layout::Lines {
            indent: "",
            unit: DEFAULT_UNIT,
            newline,
        };
        let fresh = format!("{}{newline}", render::render(&document, lines));
        // White space alone is an empty file; comments (where allowed) are kept, before it.
        let edit = if text.trim().is_empty() {
            Edit {
                at: 0,
                removed: text.len(),
                inserted: fresh,
            }
        } else {
            let gap = if text.ends_with('\n') { "" } else { newline };
            Edit {
                at: text.len(),
                removed: 0,
                inserted: format!("{gap}{fresh}"),
            }
        };
        return Ok(Planned::Edits {
            change: Change::Made,
            edits: vec![edit],
        });
    };
    let unit = indent_unit(text, &top);
    let style = (unit.as_str(), newline);
    let Some(servers) = only_member(&top, target.servers, Level::Top)? else {
        let edits = insert_member(
            text,
            &top,
            (target.servers, &servers_holding_entry),
            style,
            target.dialect,
        );
        return Ok(Planned::Edits {
            change: Change::AddedServers,
            edits,
        });
    };
    let Some(existing) = only_member(&servers.value, target.name, Level::Servers)? else {
        let edits = insert_member(
            text,
            &servers.value,
            (target.name, target.entry),
            style,
            target.dialect,
        );
        return Ok(Planned::Edits {
            change: Change::Added,
            edits,
        });
    };
    if existing.value.to_value(text) == target.entry.to_value() {
        return Ok(Planned::Same {
            at: existing.key_start,
        });
    }
    let layout = if spans_lines(text, &servers.value) {
        Layout::Lines {
            indent: indent_of_line(text, existing.key_start),
            unit: &unit,
            newline,
        }
    } else {
        Layout::OneLine
    };
    Ok(Planned::Edits {
        change: Change::Replaced,
        edits: vec![Edit {
            at: existing.value.start,
            removed: existing.value.end - existing.value.start,
            inserted: render::render(target.entry, layout),
        }],
    })
}

/// The one member of `object` named `key`, if any; refused when `object` (`what`) is not an
/// object, or names `key` twice (a reader would take one of the two, and which one is not this
/// program's to guess).
fn only_member<'n>(
    object: &'n Node,
    key: &str,
    what: Level,
) -> Result<Option<&'n jsonc::Member>, Refused> {
    let members = object.members().ok_or(Refused::NotAnObject {
        at: object.start,
        what,
    })?;
    let mut named = members.iter().filter(|member| member.key == key);
    let first = named.next();
    if let (Some(first), Some(second)) = (first, named.next()) {
        return Err(Refused::Twice {
            key: key.to_owned(),
            first: first.key_start,
            second: second.key_start,
        });
    }
    Ok(first)
}

/// The edits that add `key: value` to `object` as its last member. In an object laid out over
/// lines the member goes on a line of its own after the last one (after a comma or a comment
/// that ends that line, so neither is taken from the member it belongs to), indented as that one
/// is; in an object on one line, on that line.
fn insert_member(
    text: &str,
    object: &Node,
    (key, value): (&str, &Written),
    (unit, newline): (&str, &str),
    dialect: Dialect,
) -> Vec<Edit> {
    let close = object.end - 1;
    let members = object.members().unwrap_or_default();
    let Some(last) = members.last() else {
        let outer = indent_of_line(text, object.start);
        let inner = format!("{outer}{unit}");
        let member = render::member(
            key,
            value,
            Layout::Lines {
                indent: &inner,
                unit,
                newline,
            },
        );
        // The closing brace on a line of its own stays there, below the new member.
        let brace_line = text[..close].rfind('\n').map(|newline| newline + 1);
        let inserted = match brace_line {
            Some(line) if line > object.start && is_indentation(&text[line..close]) => Edit {
                at: line,
                removed: 0,
                inserted: format!("{inner}{member}{newline}"),
            },
            _ => Edit {
                at: close,
                removed: 0,
                inserted: format!("{newline}{inner}{member}{newline}{outer}"),
            },
        };
        return vec![inserted];
    };
    let after_value = last.value.end;
    let after_blank = jsonc::blank_end(text, after_value, dialect);
    let trailing_comma = text.as_bytes().get(after_blank) == Some(&b',');
    let from = if trailing_comma {
        after_blank + 1
    } else {
        after_value
    };
    let comma = (!trailing_comma).then(|| Edit {
        at: after_value,
        removed: 0,
        inserted: ",".to_owned(),
    });
    let member_edit = if spans_lines(text, object) {
        let indent = indent_of_line(text, last.key_start);
        let member = render::member(
            key,
            value,
            Layout::Lines {
                indent,
                unit,
                newline,
            },
        );
        Edit {
            at: end_of_line(text, from),
            removed: 0,
            inserted: format!("{newline}{indent}{member}"),
        }
    } else {
        Edit {
            at: from,
            removed: 0,
            inserted: format!(" {}", render::member(key, value, Layout::OneLine)),
        }
    };
    match comma {
        Some(comma) if comma.at == member_edit.at => vec![Edit {
            inserted: format!("{}{}", comma.inserted, member_edit.inserted),
            ..member_edit
        }],
        Some(comma) => vec![comma, member_edit],
        None => vec![member_edit],
    }
}

/// Where the line `at` is on ends, past spaces and comments that end on it: before its newline,
/// or else at the first thing on it that is neither.
fn end_of_line(text: &str, mut at: usize) -> usize {
    loop {
        while matches!(text.as_bytes().get(at), Some(b' ' | b'\t')) {
            at += 1;
        }
        match jsonc::comment_end(text, at) {
            Some(end) if !text[at..end].contains('\n') => at = end,
            _ => break,
        }
    }
    at
}

/// Whether an object's first member starts on a line after its opening brace.
fn spans_lines(text: &str, object: &Node) -> bool {
    let first = object
        .members()
        .and_then(<[jsonc::Member]>::first)
        .map_or(object.end, |member| member.key_start);
    text[object.start..first].contains('\n')
}

/// The spaces and tabs the line holding byte `at` starts with.
fn indent_of_line(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
    let length = text[start..]
        .bytes()
        .take_while(|byte| matches!(byte, b' ' | b'\t'))
        .count();
    &text[start..start + length]
}

fn is_indentation(text: &str) -> bool {
    text.bytes()
        .all(|byte| matches!(byte, b' ' | b'\t' | b'\r'))
}

/// How much deeper each level is indented in the file: the top level's first member's
/// indentation, where it has one on a line of its own.
fn indent_unit(text: &str, top: &Node) -> String {
    match top.members().and_then(<[jsonc::Member]>::first) {
        Some(first) if spans_lines(text, top) => {
            let indent = indent_of_line(text, first.key_start);
            let outer = indent_of_line(text, top.start);
            match indent.strip_prefix(outer) {
                Some(unit) if !unit.is_empty() => unit.to_owned(),
                _ => DEFAULT_UNIT.to_owned(),
            }
        }
        _ => DEFAULT_UNIT.to_owned(),
    }
}

/// `text` with `edits` made (they are in order and do not overlap, as [`plan`] makes them).
pub fn apply(text: &str, edits: &[Edit]) -> String {
    let mut new = String::with_capacity(
        text.len() + edits.iter().map(|edit| edit.inserted.len()).sum::<usize>(),
    );
    let mut kept_to = 0;
    for edit in edits {
        new.push_str(&text[kept_to..edit.at]);
        new.push_str(&edit.inserted);
        kept_to = edit.at + edit.removed;
    }
    new.push_str(&text[kept_to..]);
    new
}

/// Why a change did not check out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unverified(pub &'static str);

/// Holds `new` to what `edits` were to make of `old`: it reads in the file's dialect, holds
/// `target`'s entry exactly once, and outside the edited ranges is `old` byte for byte. Answers
/// where the entry's name is in `new`.
pub fn check(old: &str, new: &str, edits: &[Edit], target: Target) -> Result<usize, Unverified> {
    let mut old_at = 0;
    let mut new_at = 0;
    for edit in edits {
        let kept = old
            .get(old_at..edit.at)
            .ok_or(Unverified("the edits are out of order"))?;
        if new.get(new_at..new_at + kept.len()) != Some(kept) {
            return Err(Unverified("text outside the edits changed"));
        }
        new_at += kept.len() + edit.inserted.len();
        old_at = edit.at + edit.removed;
    }
    if new.get(new_at..) != old.get(old_at..) {
        return Err(Unverified("text outside the edits changed"));
    }
    let top = jsonc::parse(new, target.dialect)
        .map_err(|_| Unverified("the new text does not read"))?
        .ok_or(Unverified("the new text holds no value"))?;
    let refused = |_| Unverified("the new text does not hold one servers object and one entry");
    let servers = only_member(&top, target.servers, Level::Top)
        .map_err(refused)?
        .ok_or(Unverified("the new text has no servers object"))?;
    let entry = only_member(&servers.value, target.name, Level::Servers)
        .map_err(refused)?
        .ok_or(Unverified("the new text has no entry"))?;
    if entry.value.to_value(new) != target.entry.to_value() {
        return Err(Unverified("the new entry is not the one meant"));
    }
    Ok(entry.key_start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn entry() -> Written {
        Written::Object(vec![
            (
                "command".into(),
                Written::String("/bin/lemonfiber-mcp".into()),
            ),
            (
                "args".into(),
                Written::List(vec![Written::String("stdio".into())]),
            ),
        ])
    }

    fn target(entry: &Written, dialect: Dialect) -> Target<'_> {
        Target {
            servers: "mcpServers",
            name: "lemonfiber",
            entry,
            dialect,
        }
    }

    /// The text with the entry in it, held to what it should be.
    fn edited(text: &str, dialect: Dialect) -> String {
        let entry = entry();
        let target = target(&entry, dialect);
        let Planned::Edits { edits, .. } = plan(text, target).expect("planned") else {
            panic!("an edit was needed: {text}");
        };
        let new = apply(text, &edits);
        check(text, &new, &edits, target).expect("it checks out");
        assert_eq!(
            plan(&new, target).expect("planned again"),
            Planned::Same {
                at: check(text, &new, &edits, target).expect("checked")
            },
            "a second run changes nothing"
        );
        new
    }

    #[test]
    fn a_file_with_nothing_in_it_is_made() {
        let made = "{\n  \"mcpServers\": {\n    \"lemonfiber\": {\n      \"command\": \"/bin/lemonfiber-mcp\",\n      \"args\": [\"stdio\"]\n    }\n  }\n}\n";
        assert_eq!(edited("", Dialect::Strict), made);
        assert_eq!(edited(" \n", Dialect::Strict), made);
        assert_eq!(
            edited("// mine\n", Dialect::WithComments),
            format!("// mine\n{made}")
        );
    }

    #[test]
    fn a_member_goes_after_the_last_indented_as_it_is() {
        let text = "{\n    \"mcpServers\": {\n        \"files\": {\"command\": \"npx\"}\n    },\n    \"theme\": \"dark\"\n}\n";
        assert_eq!(
            edited(text, Dialect::Strict),
            "{\n    \"mcpServers\": {\n        \"files\": {\"command\": \"npx\"},\n        \"lemonfiber\": {\n            \"command\": \"/bin/lemonfiber-mcp\",\n            \"args\": [\"stdio\"]\n        }\n    },\n    \"theme\": \"dark\"\n}\n"
        );
        let text = "{\n  \"theme\": \"dark\"\n}";
        assert_eq!(
            edited(text, Dialect::Strict),
            "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"lemonfiber\": {\n      \"command\": \"/bin/lemonfiber-mcp\",\n      \"args\": [\"stdio\"]\n    }\n  }\n}"
        );
    }

    #[test]
    fn comments_and_a_trailing_comma_stay_with_what_they_were_beside() {
        let text =
            "{\r\n\t// mine\r\n\t\"mcpServers\": {\r\n\t\t\"a\": {} // the first\r\n\t},\r\n}\r\n";
        assert_eq!(
            edited(text, Dialect::WithComments),
            "{\r\n\t// mine\r\n\t\"mcpServers\": {\r\n\t\t\"a\": {}, // the first\r\n\t\t\"lemonfiber\": {\r\n\t\t\t\"command\": \"/bin/lemonfiber-mcp\",\r\n\t\t\t\"args\": [\"stdio\"]\r\n\t\t}\r\n\t},\r\n}\r\n"
        );
        let text = "{\n\t\"mcpServers\": {\n\t\t\"a\": {}, /* kept */\n\t}\n}";
        assert_eq!(
            edited(text, Dialect::WithComments),
            "{\n\t\"mcpServers\": {\n\t\t\"a\": {}, /* kept */\n\t\t\"lemonfiber\": {\n\t\t\t\"command\": \"/bin/lemonfiber-mcp\",\n\t\t\t\"args\": [\"stdio\"]\n\t\t}\n\t}\n}"
        );
    }

    #[test]
    fn an_empty_object_gets_its_member_on_a_line_of_its_own() {
        assert_eq!(
            edited("{\"mcpServers\": {}}", Dialect::Strict),
            "{\"mcpServers\": {\n  \"lemonfiber\": {\n    \"command\": \"/bin/lemonfiber-mcp\",\n    \"args\": [\"stdio\"]\n  }\n}}"
        );
        assert_eq!(
            edited("{\n  \"mcpServers\": {\n  }\n}", Dialect::Strict),
            "{\n  \"mcpServers\": {\n    \"lemonfiber\": {\n      \"command\": \"/bin/lemonfiber-mcp\",\n      \"args\": [\"stdio\"]\n    }\n  }\n}"
        );
        assert_eq!(
            edited("{}", Dialect::Strict),
            "{\n  \"mcpServers\": {\n    \"lemonfiber\": {\n      \"command\": \"/bin/lemonfiber-mcp\",\n      \"args\": [\"stdio\"]\n    }\n  }\n}"
        );
    }

    #[test]
    fn an_object_on_one_line_stays_on_one_line() {
        assert_eq!(
            edited(
                "{\"numStartups\":3,\"mcpServers\":{\"a\":{}}}",
                Dialect::Strict
            ),
            "{\"numStartups\":3,\"mcpServers\":{\"a\":{}, \"lemonfiber\": {\"command\": \"/bin/lemonfiber-mcp\", \"args\": [\"stdio\"]}}}"
        );
        assert_eq!(
            edited("{\"mcpServers\": {\"a\": 1, }}", Dialect::WithComments),
            "{\"mcpServers\": {\"a\": 1, \"lemonfiber\": {\"command\": \"/bin/lemonfiber-mcp\", \"args\": [\"stdio\"]} }}"
        );
    }

    #[test]
    fn an_entry_by_the_name_is_replaced_where_it_is_and_one_the_same_is_left() {
        let text = "{\n  \"mcpServers\": {\n    \"lemonfiber\": {\"command\": \"old\", \"env\": {\"LEMONFIBER_KEY\": \"x\"}},\n    \"b\": {}\n  }\n}";
        assert_eq!(
            edited(text, Dialect::Strict),
            "{\n  \"mcpServers\": {\n    \"lemonfiber\": {\n      \"command\": \"/bin/lemonfiber-mcp\",\n      \"args\": [\"stdio\"]\n    },\n    \"b\": {}\n  }\n}"
        );
        let same = "{\"mcpServers\": {\"lemonfiber\": {\"args\": [\"stdio\"], \"command\": \"/bin/lemonfiber-mcp\"}}}";
        let entry = entry();
        assert_eq!(
            plan(same, target(&entry, Dialect::Strict)),
            Ok(Planned::Same { at: 16 })
        );
    }

    #[test]
    fn servers_of_one_project_are_not_taken_for_the_users() {
        let text = "{\n  \"projects\": {\n    \"/home/ann/src\": {\n      \"mcpServers\": {}\n    }\n  }\n}\n";
        let new = edited(text, Dialect::Strict);
        let read: Value = serde_json::from_str(&new).expect("JSON");
        assert_eq!(read["projects"]["/home/ann/src"]["mcpServers"], json!({}));
        assert_eq!(read["mcpServers"]["lemonfiber"], entry().to_value());
    }

    #[test]
    fn what_is_not_an_object_or_is_named_twice_is_refused() {
        let entry = entry();
        let strict = target(&entry, Dialect::Strict);
        assert_eq!(
            plan("[]", strict),
            Err(Refused::NotAnObject {
                at: 0,
                what: Level::Top
            })
        );
        assert_eq!(
            plan("{\"mcpServers\": null}", strict),
            Err(Refused::NotAnObject {
                at: 15,
                what: Level::Servers
            })
        );
        assert!(matches!(
            plan("{\"mcpServers\": {\"lemonfiber\": 1, \"lemonfiber\": 2}}", strict),
            Err(Refused::Twice { ref key, first: 16, second: 33 }) if key == "lemonfiber"
        ));
        assert!(matches!(
            plan("{\"mcpServers\": {}, \"mcpServers\": {}}", strict),
            Err(Refused::Twice { .. })
        ));
        assert!(matches!(
            plan("{\"mcpServers\": {},}", strict),
            Err(Refused::Syntax(_))
        ));
    }

    #[test]
    fn a_change_that_touches_anything_else_does_not_check_out() {
        let entry = entry();
        let strict = target(&entry, Dialect::Strict);
        let old = "{\"a\": 1}";
        let edits = [Edit {
            at: 7,
            removed: 0,
            inserted: ", \"mcpServers\": {\"lemonfiber\": {\"command\": \"/bin/lemonfiber-mcp\", \"args\": [\"stdio\"]}}".into(),
        }];
        let new = apply(old, &edits);
        assert!(check(old, &new, &edits, strict).is_ok());
        let changed = new.replace("\"a\": 1", "\"a\": 2");
        assert_eq!(
            check(old, &changed, &edits, strict),
            Err(Unverified("text outside the edits changed"))
        );
        let other = new.replace("stdio", "http");
        assert!(check(old, &other, &edits, strict).is_err());
    }

    /// Whether every byte of `old` is in `new`, in order.
    fn kept_in(old: &str, new: &str) -> bool {
        let mut new = new.bytes();
        old.bytes().all(|byte| new.any(|other| other == byte))
    }

    fn small_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i16>().prop_map(|number| json!(number)),
            "[a-z \"/]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    /// A document as a person or an assistant might have written it: its top-level settings,
    /// perhaps the servers (perhaps with an old lemonfiber among them), laid out one way or another.
    fn document() -> impl Strategy<Value = String> {
        let servers = prop::option::of(prop::collection::btree_map(
            "[a-z]{1,6}|lemonfiber",
            small_value(),
            0..4,
        ));
        (
            prop::collection::btree_map("[a-z]{1,6}", small_value(), 0..4),
            servers,
            0..4usize,
        )
            .prop_map(|(settings, servers, layout)| {
                let mut top: serde_json::Map<String, Value> = settings.into_iter().collect();
                if let Some(servers) = servers {
                    top.insert(
                        "mcpServers".into(),
                        Value::Object(servers.into_iter().collect()),
                    );
                }
                let top = Value::Object(top);
                let indent: &[u8] = match layout {
                    0 => return serde_json::to_string(&top).expect("written"),
                    1 => b"  ",
                    2 => b"    ",
                    _ => b"\t",
                };
                let mut written = Vec::new();
                let formatter = serde_json::ser::PrettyFormatter::with_indent(indent);
                let mut serializer =
                    serde_json::Serializer::with_formatter(&mut written, formatter);
                serde::Serialize::serialize(&top, &mut serializer).expect("written");
                String::from_utf8(written).expect("UTF-8")
            })
    }

    proptest! {
        /// However the file was laid out and whatever it held, the entry is added or replaced,
        /// every other byte is kept in order, every other value is as it was, and a second run
        /// changes nothing.
        #[test]
        fn the_entry_goes_in_and_nothing_else_moves(plain in document(), comments in any::<bool>()) {
            let (dialect, text) = if comments {
                // A note at the end of every line, and one inside every opening brace.
                let noted = plain.replace('\n', " // a note\n").replace('{', "{/* here */");
                (Dialect::WithComments, noted)
            } else {
                (Dialect::Strict, plain.clone())
            };
            let old: Value = serde_json::from_str(&plain).expect("JSON");
            let had = old.get("mcpServers").and_then(|servers| servers.get("lemonfiber")).is_some();
            let new = edited(&text, dialect);
            let mut read = jsonc::parse(&new, dialect)
                .expect("it reads")
                .expect("a value")
                .to_value(&new);
            let servers = read["mcpServers"].as_object_mut().expect("servers");
            prop_assert_eq!(servers.remove("lemonfiber"), Some(entry().to_value()));
            let mut without = old.clone();
            if let Some(servers) = without.get_mut("mcpServers").and_then(Value::as_object_mut) {
                servers.remove("lemonfiber");
            } else {
                without["mcpServers"] = json!({});
            }
            prop_assert_eq!(read, without);
            if !had {
                prop_assert!(kept_in(&text, &new), "{}\n=>\n{}", text, new);
            }
        }
    }
}
