//! A reader of JSON, and of JSON with comments and trailing commas (as VS Code's settings files
//! are written), that keeps where each value and key lies in the text: so that `install` can
//! change one entry of an assistant's configuration and leave every other byte as it was, which
//! reading the file into a value and writing that value out again would not (it would lose the
//! comments, the order and the layout).

/// Which JSON a file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// JSON as RFC 8259 has it: no comments, no trailing commas.
    Strict,
    /// JSON with `//` and `/* */` comments and a comma allowed after the last member or item.
    WithComments,
}

/// A value, from the byte at `start` to the byte before `end`.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    /// The string as it reads, its escapes undone.
    String(String),
    Number,
    Bool(bool),
    Null,
}

/// One member of an object: its key as it reads, where the key's opening quote is, and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

impl Node {
    /// The members of an object, or `None` when this is not one.
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The value this node is, for comparing with another (numbers as `serde_json` reads them).
    pub fn to_value(&self, text: &str) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            Kind::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|member| (member.key.clone(), member.value.to_value(text)))
                    .collect(),
            ),
            Kind::Array(items) => {
                Value::Array(items.iter().map(|item| item.to_value(text)).collect())
            }
            Kind::String(string) => Value::String(string.clone()),
            Kind::Number => {
                serde_json::from_str(&text[self.start..self.end]).unwrap_or(Value::Null)
            }
            Kind::Bool(bool) => Value::Bool(*bool),
            Kind::Null => Value::Null,
        }
    }
}

/// Where a text stops being JSON, and what was found there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub at: usize,
    pub what: &'static str,
}

/// The line and column (both from 1, the column in characters) of byte `at` in `text`.
pub fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// The deepest nesting read: far beyond any configuration, and shallow enough that reading
/// cannot exhaust the stack.
const DEEPEST: usize = 256;

/// Reads `text` as one JSON document: its value, or `None` when it holds only white space (and
/// comments, where they are allowed). A byte order mark at the start is passed over.
pub fn parse(text: &str, dialect: Dialect) -> Result<Option<Node>, SyntaxError> {
    let mut reader = Reader {
        text: text.as_bytes(),
        at: 0,
        dialect,
    };
    if text.starts_with('\u{feff}') {
        reader.at = '\u{feff}'.len_utf8();
    }
    reader.blank()?;
    if reader.at == reader.text.len() {
        return Ok(None);
    }
    let value = reader.value(0)?;
    reader.blank()?;
    if reader.at != reader.text.len() {
        return Err(reader.error("more after the end of the document's one value"));
    }
    Ok(Some(value))
}

/// Where the white space and comments from `at` end in `text` (at the end of the text, too, for
/// a comment left open).
pub fn blank_end(text: &str, at: usize, dialect: Dialect) -> usize {
    let mut reader = Reader {
        text: text.as_bytes(),
        at,
        dialect,
    };
    match reader.blank() {
        Ok(()) => reader.at,
        Err(_) => text.len(),
    }
}

/// Where the comment that starts at `at` ends (after its closing `*/`, or before the newline,
/// `\n` or `\r\n`, that ends a `//` comment), or `None` when no comment starts there.
pub fn comment_end(text: &str, at: usize) -> Option<usize> {
    let rest = text.get(at..)?;
    if rest.starts_with("//") {
        let line = rest.find('\n').map_or(rest, |newline| &rest[..newline]);
        Some(at + line.strip_suffix('\r').unwrap_or(line).len())
    } else {
        rest.strip_prefix("/*").map(|inside| {
            inside
                .find("*/")
                .map_or(text.len(), |close| at + 2 + close + 2)
        })
    }
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
    dialect: Dialect,
}

impl Reader<'_> {
    fn error(&self, what: &'static str) -> SyntaxError {
        SyntaxError { at: self.at, what }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    /// Passes white space, and comments where the dialect allows them.
    fn blank(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.at += 1,
                Some(b'/') if matches!(self.text.get(self.at + 1), Some(b'/' | b'*')) => {
                    if self.dialect == Dialect::Strict {
                        return Err(
                            self.error("a comment, which this file's strict JSON does not allow")
                        );
                    }
                    self.comment()?;
                }
                _ => return Ok(()),
            }
        }
    }

    fn comment(&mut self) -> Result<(), SyntaxError> {
        let rest = &self.text[self.at..];
        if rest.starts_with(b"//") {
            let length = rest
                .iter()
                .position(|&byte| byte == b'\n')
                .unwrap_or(rest.len());
            self.at += length;
            return Ok(());
        }
        match rest[2..].windows(2).position(|pair| pair == b"*/") {
            Some(close) => {
                self.at += 2 + close + 2;
                Ok(())
            }
            None => Err(self.error("a comment that is never closed with */")),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        if depth > DEEPEST {
            return Err(self.error("values nested too deeply to be a configuration"));
        }
        let start = self.at;
        let kind = match self.peek() {
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Kind::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') => self.word("true", Kind::Bool(true))?,
            Some(b'f') => self.word("false", Kind::Bool(false))?,
            Some(b'n') => self.word("null", Kind::Null)?,
            None => return Err(self.error("the end of the file where a value should be")),
            Some(_) => {
                return Err(self.error("something other than a value where a value should be"));
            }
        };
        Ok(Node {
            start,
            end: self.at,
            kind,
        })
    }

    fn object(&mut self, depth: usize) -> Result<Kind, SyntaxError> {
        self.at += 1;
        let mut members = Vec::new();
        loop {
            self.blank()?;
            match self.peek() {
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Kind::Object(members));
                }
                Some(b'"') => {}
                None => {
                    return Err(self.error("the end of the file inside an object: a } is missing"));
                }
                Some(_) => {
                    return Err(
                        self.error("something other than a key in quotes where a key should be")
                    );
                }
            }
            let key_start = self.at;
            let key = self.string()?;
            self.blank()?;
            if self.peek() != Some(b':') {
                return Err(self.error("no : after a key"));
            }
            self.at += 1;
            self.blank()?;
            let value = self.value(depth + 1)?;
            members.push(Member {
                key,
                key_start,
                value,
            });
            self.blank()?;
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.trailing_comma_allowed(b'}')?;
                }
                Some(b'}') => {}
                None => {
                    return Err(self.error("the end of the file inside an object: a } is missing"));
                }
                Some(_) => return Err(self.error("no , or } after a member of an object")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Kind, SyntaxError> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.blank()?;
            if self.peek() == Some(b']') {
                self.at += 1;
                return Ok(Kind::Array(items));
            }
            items.push(self.value(depth + 1)?);
            self.blank()?;
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.trailing_comma_allowed(b']')?;
                }
                Some(b']') => {}
                None => return Err(self.error("the end of the file inside a list: a ] is missing")),
                Some(_) => return Err(self.error("no , or ] after an item of a list")),
            }
        }
    }

    /// After a comma: refuses a `close` that follows it in strict JSON.
    fn trailing_comma_allowed(&mut self, close: u8) -> Result<(), SyntaxError> {
        let comma = self.at - 1;
        self.blank()?;
        if self.peek() == Some(close) && self.dialect == Dialect::Strict {
            return Err(SyntaxError {
                at: comma,
                what: "a trailing comma, which this file's strict JSON does not allow",
            });
        }
        Ok(())
    }

    fn word(&mut self, word: &'static str, kind: Kind) -> Result<Kind, SyntaxError> {
        if self.text[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(kind)
        } else {
            Err(self.error("something other than a value where a value should be"))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Kind, SyntaxError> {
        const NOT_A_NUMBER: &str = "a number not written as JSON writes numbers";
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error(NOT_A_NUMBER)),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.error(NOT_A_NUMBER));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.error(NOT_A_NUMBER));
            }
        }
        Ok(Kind::Number)
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let open = self.at;
        self.at += 1;
        let mut read = String::new();
        loop {
            let run = self.at;
            while matches!(self.peek(), Some(byte) if byte != b'"' && byte != b'\\' && byte >= 0x20)
            {
                self.at += 1;
            }
            // The text is a str, and the run stops only at ASCII bytes, so it is whole characters.
            read.push_str(&String::from_utf8_lossy(&self.text[run..self.at]));
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(read);
                }
                Some(b'\\') => read.push(self.escape()?),
                Some(_) => {
                    return Err(self
                        .error("a control character (such as a tab or newline) inside a string"));
                }
                None => {
                    return Err(SyntaxError {
                        at: open,
                        what: "a string that is never closed with \"",
                    });
                }
            }
        }
    }

    /// The character an escape stands for, the reader at its backslash.
    fn escape(&mut self) -> Result<char, SyntaxError> {
        self.at += 1;
        let escaped = self.peek();
        self.at += 1;
        Ok(match escaped {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let unit = self.hex_unit()?;
                if (0xd800..0xdc00).contains(&unit) && self.text[self.at..].starts_with(b"\\u") {
                    let back = self.at;
                    self.at += 2;
                    let low = self.hex_unit()?;
                    if (0xdc00..0xe000).contains(&low) {
                        let code = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
                        return Ok(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                    }
                    self.at = back;
                }
                char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER)
            }
            _ => {
                self.at -= 2;
                return Err(self.error("a backslash in a string that is not one of JSON's escapes"));
            }
        })
    }

    fn hex_unit(&mut self) -> Result<u32, SyntaxError> {
        let hex = self
            .text
            .get(self.at..self.at + 4)
            .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
            .ok_or_else(|| self.error("a \\u escape without four hexadecimal digits"))?;
        let unit = hex.iter().fold(0, |unit, &digit| {
            unit * 16 + char::from(digit).to_digit(16).unwrap_or(0)
        });
        self.at += 4;
        Ok(unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn value_of(text: &str, dialect: Dialect) -> serde_json::Value {
        parse(text, dialect)
            .expect("it parses")
            .expect("a value")
            .to_value(text)
    }

    #[test]
    fn a_key_and_its_value_are_found_where_they_are() {
        let text = "{\n  \"a\": [1, true],\n  \"b\\u00e9\": {\"c\": null}\n}\n";
        let top = parse(text, Dialect::Strict)
            .expect("parses")
            .expect("a value");
        assert_eq!((top.start, top.end), (0, text.len() - 1));
        let members = top.members().expect("an object");
        assert_eq!(members[1].key, "bé");
        assert_eq!(&text[members[1].key_start..members[1].key_start + 1], "\"");
        assert_eq!(
            &text[members[1].value.start..members[1].value.end],
            "{\"c\": null}"
        );
        assert_eq!(
            &text[members[0].value.start..members[0].value.end],
            "[1, true]"
        );
    }

    #[test]
    fn comments_and_trailing_commas_only_where_allowed() {
        let text = "// servers\n{\n\t\"servers\": { /* none */ },\n\t\"inputs\": [1,],\n}\n";
        assert_eq!(
            value_of(text, Dialect::WithComments),
            json!({"servers": {}, "inputs": [1]})
        );
        let error = parse(text, Dialect::Strict).expect_err("strict refuses a comment");
        assert_eq!(line_and_column(text, error.at), (1, 1));
        let error = parse("{\"a\": 1,\n}", Dialect::Strict).expect_err("and a trailing comma");
        assert_eq!(line_and_column("{\"a\": 1,\n}", error.at), (1, 8));
        assert!(error.what.contains("trailing comma"), "{error:?}");
        assert!(parse("[,]", Dialect::WithComments).is_err());
        assert!(parse("{,}", Dialect::WithComments).is_err());
        assert!(parse("{} /* open", Dialect::WithComments).is_err());
    }

    #[test]
    fn an_error_names_its_line_and_column() {
        let text = "{\n  \"a\": 1\n  \"é\": 2\n}";
        let error = parse(text, Dialect::Strict).expect_err("a missing comma");
        assert_eq!(line_and_column(text, error.at), (3, 3));
        let text = "{\n  \"naïve\": tru }";
        let error = parse(text, Dialect::Strict).expect_err("not a word");
        assert_eq!(line_and_column(text, error.at), (2, 12));
    }

    #[test]
    fn a_file_of_white_space_and_comments_holds_no_value() {
        assert_eq!(parse("", Dialect::Strict), Ok(None));
        assert_eq!(parse(" \r\n\t", Dialect::Strict), Ok(None));
        assert_eq!(parse("// nothing yet\n", Dialect::WithComments), Ok(None));
        assert_eq!(
            parse("\u{feff}{}", Dialect::Strict).map(|node| node.is_some()),
            Ok(true)
        );
    }

    #[test]
    fn nesting_deeper_than_any_configuration_is_refused_not_overflowed() {
        let deep = "[".repeat(100_000);
        let error = parse(&deep, Dialect::Strict).expect_err("too deep");
        assert!(error.what.contains("nested too deeply"));
    }

    #[test]
    fn escapes_are_read_as_json_reads_them() {
        let text = r#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\ud800x""#;
        assert_eq!(
            value_of(text, Dialect::Strict),
            json!("a\"\\/\u{8}\u{c}\n\r\té😀\u{fffd}x")
        );
        assert!(parse(r#""\x""#, Dialect::Strict).is_err());
        assert!(parse(r#""\u12""#, Dialect::Strict).is_err());
        assert!(parse("\"a\tb\"", Dialect::Strict).is_err());
    }

    #[test]
    fn comments_are_found_to_their_end() {
        let text = "1 // to the end\n/* a\nb */ 2";
        assert_eq!(comment_end(text, 2), Some(15));
        assert_eq!(comment_end("// crlf\r\n", 0), Some(7));
        assert_eq!(comment_end(text, 16), Some(text.len() - 2));
        assert_eq!(comment_end(text, 0), None);
        assert_eq!(blank_end(text, 1, Dialect::WithComments), text.len() - 1);
        assert_eq!(blank_end(text, 1, Dialect::Strict), text.len());
    }

    /// Pieces that JSON is made of, and pieces that break it.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            "\"a\"",
            "\"\\n\"",
            "\"\\u00e9\"",
            "\"é\"",
            "1",
            "-2.5e3",
            "0",
            "01",
            "1.",
            ".5",
            "-",
            "true",
            "null",
            "nul",
            " ",
            "\n",
            "\t",
            "\"",
            "\\",
            "/",
            "*",
            "//",
            "/*",
            "*/",
            "x",
            "\u{1}",
        ])
    }

    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i32>().prop_map(|number| json!(number)),
            "[a-zé\"\\\\/\n\t\u{1}😀 ]{0,8}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
                prop::collection::btree_map("[a-z\"]{0,5}", inner, 0..5)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Strict JSON is exactly what serde_json takes, to the value.
        #[test]
        fn strict_reading_agrees_with_serde_json(pieces in prop::collection::vec(piece(), 0..24)) {
            let text = pieces.concat();
            let ours = parse(&text, Dialect::Strict);
            match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(value) => {
                    let node = ours.expect("serde_json took it").expect("a value");
                    prop_assert_eq!(node.to_value(&text), value);
                }
                // A number too large for a float is serde_json's limit, not JSON's.
                Err(error) if error.to_string().contains("out of range") => {}
                // serde_json refuses a text with no value, which is read here as no value.
                Err(_) => prop_assert!(!matches!(ours, Ok(Some(_)))),
            }
        }

        /// Any value, written compactly or laid out, reads back as itself; with a comment
        /// between every two pieces, it reads back as itself where comments are allowed only.
        #[test]
        fn a_written_value_reads_back(value in json_value()) {
            for text in [
                serde_json::to_string(&value).expect("written"),
                serde_json::to_string_pretty(&value).expect("written"),
            ] {
                prop_assert_eq!(value_of(&text, Dialect::Strict), value.clone());
                let commented = text.replace('\n', " // a note\n").replace(": ", ": /* here */ ");
                prop_assert_eq!(value_of(&commented, Dialect::WithComments), value.clone());
                if commented != text {
                    prop_assert!(parse(&commented, Dialect::Strict).is_err());
                }
            }
        }
    }
}
