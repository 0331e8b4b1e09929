//! JSON kept as the text it came in, with an index of where each value lies: so an answer the
//! stack wrote can be checked against the contract and handed over without being built into a
//! tree and written out again, which was two fifths of a read's work (issue 32).
//!
//! Only text exactly as serde_json writes a value is indexed: compact, each string escaped only
//! where serde_json escapes and in its way, each number as serde_json writes the number it reads,
//! and no object naming a key twice. Such text *is* what the same answer read into a
//! `serde_json::Value` and written again would be, keys' order aside, so everything that looks at
//! written JSON (the looks for hidden characters and secrets) sees what it always saw. Anything
//! else is not indexed, and its reader takes the slow way through a tree.

mod schema;

use std::borrow::Cow;

pub use schema::{OnTape, View};

/// The bytes a string's text is read up to: its end, an escape, or a control character (which
/// JSON writes only as an escape).
const STOPS_A_STRING: [bool; 256] = {
    let mut stops = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        stops[byte] = true;
        byte += 1;
    }
    stops[b'"' as usize] = true;
    stops[b'\\' as usize] = true;
    stops
};

/// The depth serde_json stops reading at, so text it would refuse is never indexed.
const DEEPEST: usize = 128;

/// Text and its index.
#[derive(Clone)]
pub struct Tape {
    text: String,
    nodes: Vec<Node>,
}

// The text is the stack's, so it is never shown where a log or error could carry it.
impl std::fmt::Debug for Tape {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "Tape({} bytes)", self.text.len())
    }
}

/// One value: where its text lies, where the value after it (and all it holds) begins, and, for
/// an array or object, how many elements or members it has. A member is its key's node followed
/// by its value's.
#[derive(Debug, Clone, Copy)]
struct Node {
    start: u32,
    end: u32,
    after: u32,
    count: u32,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool(bool),
    Number,
    /// Whether the text holds an escape, so that reading it means undoing them.
    String {
        escaped: bool,
    },
    Array,
    Object,
}

impl Tape {
    /// `text` indexed, or given back when it is not JSON as serde_json writes it.
    pub fn index(text: String) -> Result<Tape, String> {
        if u32::try_from(text.len()).is_err() {
            return Err(text);
        }
        let mut indexer = Indexer {
            bytes: text.as_bytes(),
            at: 0,
            nodes: Vec::with_capacity(text.len() / 12),
            keys: Vec::new(),
        };
        match indexer.value(0) {
            Some(()) if indexer.at == text.len() => {
                let nodes = indexer.nodes;
                Ok(Tape { text, nodes })
            }
            _ => Err(text),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The first value, which holds the others.
    pub fn root(&self) -> At<'_> {
        At {
            tape: self,
            index: 0,
        }
    }
}

/// A value in a tape.
#[derive(Clone, Copy)]
pub struct At<'a> {
    tape: &'a Tape,
    index: u32,
}

impl<'a> At<'a> {
    fn node(&self) -> Node {
        self.tape.nodes[self.index as usize]
    }

    pub fn kind(&self) -> Kind {
        self.node().kind
    }

    /// The value's text, as it is in the tape.
    pub fn text(&self) -> &'a str {
        let node = self.node();
        &self.tape.text[node.start as usize..node.end as usize]
    }

    /// How many elements or members an array or object has.
    pub fn count(&self) -> usize {
        self.node().count as usize
    }

    /// A string's value, with its escapes undone.
    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        let node = self.node();
        let Kind::String { escaped } = node.kind else {
            return None;
        };
        if !escaped {
            // Inside its quotes, which are a byte each.
            let inside = node.start as usize + 1..node.end as usize - 1;
            return self.tape.text.get(inside).map(Cow::Borrowed);
        }
        // Indexed strings hold only escapes serde_json writes, which serde_json reads back.
        serde_json::from_str(self.text()).ok().map(Cow::Owned)
    }

    /// An array's elements, or an object's members' values with their keys (as strings).
    pub fn children(&self) -> Children<'a> {
        Children {
            tape: self.tape,
            next: self.index + 1,
            left: self.count() * if self.kind() == Kind::Object { 2 } else { 1 },
        }
    }

    /// An object's members, keys with their values.
    pub fn members(&self) -> Members<'a> {
        Members(self.children())
    }

    /// The value of an object's member named `key`.
    pub fn get(&self, key: &str) -> Option<At<'a>> {
        if self.kind() != Kind::Object {
            return None;
        }
        self.members()
            .find(|(name, _)| match name.kind() {
                Kind::String { escaped: false } => {
                    let text = name.text();
                    text.len() == key.len() + 2 && &text[1..text.len() - 1] == key
                }
                _ => name.as_str().as_deref() == Some(key),
            })
            .map(|(_, value)| value)
    }

    /// The value as serde_json reads its text.
    pub fn to_value(self) -> serde_json::Value {
        serde_json::from_str(self.text()).unwrap_or_default()
    }

    /// What tells this value from every other in the tapes alive.
    fn identity(&self) -> (usize, u32) {
        (std::ptr::from_ref(self.tape) as usize, self.index)
    }
}

/// The values an array or object holds, in order (an object's keys among them).
pub struct Children<'a> {
    tape: &'a Tape,
    next: u32,
    left: usize,
}

impl<'a> Iterator for Children<'a> {
    type Item = At<'a>;

    fn next(&mut self) -> Option<At<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let at = At {
            tape: self.tape,
            index: self.next,
        };
        self.next = at.node().after;
        Some(at)
    }
}

pub struct Members<'a>(Children<'a>);

impl<'a> Iterator for Members<'a> {
    type Item = (At<'a>, At<'a>);

    fn next(&mut self) -> Option<(At<'a>, At<'a>)> {
        Some((self.0.next()?, self.0.next()?))
    }
}

struct Indexer<'a> {
    bytes: &'a [u8],
    at: usize,
    nodes: Vec<Node>,
    /// The keys of the objects being read, outermost first, to find one named twice.
    keys: Vec<(u32, u32)>,
}

impl Indexer<'_> {
    fn value(&mut self, depth: usize) -> Option<()> {
        let start = self.at;
        let kind = match *self.bytes.get(self.at)? {
            b'{' => return self.container(depth, Kind::Object),
            b'[' => return self.container(depth, Kind::Array),
            b'"' => Kind::String {
                escaped: self.string()?,
            },
            b'-' | b'0'..=b'9' => {
                self.number()?;
                Kind::Number
            }
            b't' => self.literal(b"true", Kind::Bool(true))?,
            b'f' => self.literal(b"false", Kind::Bool(false))?,
            b'n' => self.literal(b"null", Kind::Null)?,
            _ => return None,
        };
        let after = u32::try_from(self.nodes.len() + 1).ok()?;
        self.nodes.push(Node {
            start: start as u32,
            end: self.at as u32,
            after,
            count: 0,
            kind,
        });
        Some(())
    }

    fn container(&mut self, depth: usize, kind: Kind) -> Option<()> {
        if depth >= DEEPEST {
            return None;
        }
        let start = self.at;
        let index = self.nodes.len();
        self.nodes.push(Node {
            start: start as u32,
            end: 0,
            after: 0,
            count: 0,
            kind,
        });
        let (close, object) = if kind == Kind::Object {
            (b'}', true)
        } else {
            (b']', false)
        };
        let keys_before = self.keys.len();
        self.at += 1;
        let mut count = 0u32;
        if self.bytes.get(self.at) == Some(&close) {
            self.at += 1;
        } else {
            loop {
                if object {
                    let key_start = self.at;
                    if self.bytes.get(self.at) != Some(&b'"') {
                        return None;
                    }
                    self.value(depth + 1)?;
                    self.keys.push((key_start as u32, self.at as u32));
                    if self.bytes.get(self.at) != Some(&b':') {
                        return None;
                    }
                    self.at += 1;
                }
                self.value(depth + 1)?;
                count = count.checked_add(1)?;
                match self.bytes.get(self.at) {
                    Some(b',') => self.at += 1,
                    Some(&byte) if byte == close => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        if object && self.names_a_key_twice(keys_before) {
            return None;
        }
        self.keys.truncate(keys_before);
        let after = u32::try_from(self.nodes.len()).ok()?;
        self.nodes[index] = Node {
            start: start as u32,
            end: self.at as u32,
            after,
            count,
            kind,
        };
        Some(())
    }

    /// Whether the object whose keys begin at `first` names one twice. An indexed key has one
    /// way of being written, so keys are the same exactly when their text is.
    fn names_a_key_twice(&self, first: usize) -> bool {
        let text = |(start, end): (u32, u32)| &self.bytes[start as usize..end as usize];
        let keys = &self.keys[first..];
        if keys.len() <= 16 {
            return keys
                .iter()
                .enumerate()
                .any(|(at, key)| keys[..at].iter().any(|other| text(*other) == text(*key)));
        }
        let mut sorted: Vec<&[u8]> = keys.iter().map(|key| text(*key)).collect();
        sorted.sort_unstable();
        sorted.windows(2).any(|pair| pair[0] == pair[1])
    }

    /// Reads a string as serde_json writes one, saying whether it holds an escape.
    fn string(&mut self) -> Option<bool> {
        self.at += 1;
        let mut escaped = false;
        loop {
            let rest = self.bytes.get(self.at..)?;
            self.at += rest
                .iter()
                .position(|&byte| STOPS_A_STRING[usize::from(byte)])?;
            let byte = self.bytes[self.at];
            self.at += 1;
            match byte {
                b'"' => return Some(escaped),
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                // A control character, which JSON writes only as an escape.
                _ => return None,
            }
        }
    }

    /// An escape after its backslash, only as serde_json writes it: a short one where there is
    /// one, else `\u00` and two lowercase hex digits, for a control character only.
    fn escape(&mut self) -> Option<()> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        match byte {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some(()),
            b'u' => {
                let digits = self.bytes.get(self.at..self.at + 4)?;
                self.at += 4;
                let hex = |digit: u8| match digit {
                    b'0'..=b'9' => Some(digit - b'0'),
                    b'a'..=b'f' => Some(digit - b'a' + 10),
                    _ => None,
                };
                if digits[0] != b'0' || digits[1] != b'0' || digits[2] > b'1' {
                    return None;
                }
                let control = hex(digits[2])? * 16 + hex(digits[3])?;
                let has_short_form = matches!(control, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D);
                (!has_short_form).then_some(())
            }
            _ => None,
        }
    }

    /// Reads a number whose text is the text serde_json writes for the number it reads there.
    fn number(&mut self) -> Option<()> {
        let start = self.at;
        let digits = |indexer: &mut Self| {
            let first = indexer.at;
            while indexer
                .bytes
                .get(indexer.at)
                .is_some_and(u8::is_ascii_digit)
            {
                indexer.at += 1;
            }
            indexer.at > first
        };
        if self.bytes[self.at] == b'-' {
            self.at += 1;
        }
        let whole_start = self.at;
        if !digits(self) {
            return None;
        }
        if self.bytes[whole_start] == b'0' && self.at - whole_start > 1 {
            return None;
        }
        let mut integer = true;
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            integer = false;
            if !digits(self) {
                return None;
            }
        }
        if matches!(self.bytes.get(self.at), Some(b'e' | b'E')) {
            self.at += 1;
            integer = false;
            if matches!(self.bytes.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !digits(self) {
                return None;
            }
        }
        // The grammar holds; only the bytes checked above are in it.
        let text = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
        if integer {
            // Past i64 or u64 serde_json reads a float, and `-0` as 0: written otherwise.
            let fits = if text.starts_with('-') {
                text.parse::<i64>().is_ok_and(|value| value != 0)
            } else {
                text.parse::<u64>().is_ok()
            };
            return fits.then_some(());
        }
        let read: f64 = serde_json::from_str(text).ok()?;
        let written = serde_json::to_string(&read).ok()?;
        (written == text).then_some(())
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Option<Kind> {
        if self.bytes.get(self.at..self.at + word.len())? != word {
            return None;
        }
        self.at += word.len();
        Some(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn indexed(text: &str) -> Option<Tape> {
        Tape::index(text.to_owned()).ok()
    }

    /// Any JSON value, with the strings and numbers an answer can hold at their most awkward.
    fn any_json() -> impl Strategy<Value = Value> {
        let text = prop::collection::vec(
            prop::sample::select(vec![
                "a", "é", "東", "🎬", " ", "\\", "\"", "/", "\n", "\t", "\r", "\u{8}", "\u{c}",
                "\u{0}", "\u{1f}", "\u{7f}", "\u{2028}", "\u{200B}", "\u{FEFF}", "lfk_",
            ]),
            0..5,
        )
        .prop_map(|pieces| pieces.concat());
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            prop::sample::select(vec![0.1, 1.0, -0.0, 1e300, 5e-324, 1.5e16, 123456.789])
                .prop_map(Value::from),
            text.clone().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((text.clone(), inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    /// The ways another writer might put a piece of JSON that serde_json would write otherwise.
    fn rewritten(text: &str, choice: u8) -> String {
        match choice % 6 {
            0 => text.replacen(':', ": ", 1),
            1 => text.replacen('/', "\\/", 1),
            2 => text.replacen('a', "\\u0061", 1),
            3 => text.replacen("\\n", "\\u000a", 1),
            4 => text.replacen('1', "1.0", 1),
            _ => format!(" {text}"),
        }
    }

    proptest! {
        /// Whatever serde_json writes is indexed, and each value's text reads back as the
        /// value it is.
        #[test]
        fn all_serde_json_writes_is_indexed(value in any_json()) {
            let text = value.to_string();
            let tape = Tape::index(text.clone()).expect("indexed");
            prop_assert_eq!(tape.root().to_value(), value.clone());
            prop_assert_eq!(tape.text(), text.as_str());
            fn walk(at: At<'_>, value: &Value) -> Result<(), TestCaseError> {
                match value {
                    Value::Object(fields) => {
                        prop_assert_eq!(at.kind(), Kind::Object);
                        prop_assert_eq!(at.count(), fields.len());
                        for (key, field) in fields {
                            walk(at.get(key).expect("a member"), field)?;
                        }
                    }
                    Value::Array(items) => {
                        prop_assert_eq!(at.kind(), Kind::Array);
                        prop_assert_eq!(at.children().count(), items.len());
                        for (child, item) in at.children().zip(items) {
                            walk(child, item)?;
                        }
                    }
                    Value::String(text) => {
                        let read = at.as_str();
                        prop_assert_eq!(read.as_deref(), Some(text.as_str()));
                    }
                    other => prop_assert_eq!(&at.to_value(), other),
                }
                Ok(())
            }
            walk(tape.root(), &value)?;
        }

        /// Text another writer would write otherwise is indexed only when serde_json, reading
        /// it and writing it again, writes that very text.
        #[test]
        fn only_what_serde_json_writes_is_indexed(value in any_json(), choice in any::<u8>()) {
            let text = rewritten(&value.to_string(), choice);
            let again = serde_json::from_str::<Value>(&text).map(|value| value.to_string());
            if indexed(&text).is_some() {
                prop_assert_eq!(again.ok(), Some(text));
            }
        }
    }

    #[test]
    fn an_object_naming_a_key_twice_is_not_indexed() {
        assert!(indexed(r#"{"a":1,"b":2,"a":3}"#).is_none());
        let many: Vec<String> = (0..40).map(|n| format!("\"k{}\":{n}", n % 39)).collect();
        assert!(indexed(&format!("{{{}}}", many.join(","))).is_none());
        assert!(indexed(r#"{"a":{"a":1},"b":{"a":2}}"#).is_some());
    }

    #[test]
    fn numbers_serde_json_writes_otherwise_are_not_indexed() {
        for text in [
            "-0",
            "01",
            "1e2",
            "1E+2",
            "1.50",
            "18446744073709551616",
            "1e999",
            "+1",
        ] {
            assert!(indexed(text).is_none(), "{text}");
        }
        for text in [
            "0",
            "-1",
            "18446744073709551615",
            "-9223372036854775808",
            "1.5",
        ] {
            assert!(indexed(text).is_some(), "{text}");
        }
        let large = serde_json::to_string(&1e300).expect("a number");
        assert!(indexed(&large).is_some(), "{large}");
    }

    #[test]
    fn too_deep_to_read_is_not_indexed() {
        let deep = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(indexed(&deep(DEEPEST)).is_some());
        assert!(indexed(&deep(DEEPEST + 1)).is_none());
        assert!(serde_json::from_str::<Value>(&deep(DEEPEST + 1)).is_err());
    }

    #[test]
    fn members_and_elements_are_found_past_what_they_hold() {
        let tape =
            indexed(&json!({"a": [1, {"b": [2, 3]}], "c": "d\"e"}).to_string()).expect("indexed");
        let root = tape.root();
        let c = root.get("c").and_then(|c| c.as_str());
        assert_eq!(c.as_deref(), Some("d\"e"));
        let a: Vec<String> = root
            .get("a")
            .expect("a")
            .children()
            .map(|at| at.text().to_owned())
            .collect();
        assert_eq!(a, ["1", r#"{"b":[2,3]}"#]);
        assert!(root.get("b").is_none());
    }
}
