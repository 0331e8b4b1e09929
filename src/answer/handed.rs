//! The stack's data as it is handed over: cleaned of hidden characters and withheld of secrets in
//! one walk, taken only when a look at its JSON shows something to change, and written as JSON
//! once, again only when it changes. Most answers need neither walk nor copy (issue 15).
//!
//! [`handed_text`] is the one door for text someone else wrote: every string of a tool result
//! goes through it in the walk, and so do completions, prompt arguments, what `link` prints and
//! keeps, and what the sign-in page shows of a client. Nothing else cleans or withholds on its
//! own, so there is one place to get it right (issue 27).

use std::borrow::Cow;

use serde_json::Value;

use super::clean;
use crate::redact::{self, Secrets};
use crate::stack::envelope::Envelope;
use crate::tape::Tape;

/// The data a call came to, before it is handed over: a tree, or an envelope kept as the text
/// the stack wrote (`stack::envelope`).
pub enum Given {
    Tree(Value),
    Sent(Tape),
}

impl From<Envelope> for Given {
    fn from(envelope: Envelope) -> Given {
        match envelope.into_handed() {
            Ok(tape) => Given::Sent(tape),
            Err(value) => Given::Tree(value),
        }
    }
}

impl From<Value> for Given {
    fn from(value: Value) -> Given {
        Given::Tree(value)
    }
}

/// The data as it is handed over, and its JSON.
pub struct Data(Form);

enum Form {
    /// The stack's text, which needed nothing changed.
    Sent(Tape),
    /// A tree, and its JSON as last written.
    Tree { value: Value, json: String },
}

impl Data {
    pub fn handed(given: Given, withheld: &Secrets) -> Data {
        // JSON that could not be written, or may need it, is walked: the look only ever spares
        // a walk, never skips one that is needed. The stack's text is JSON as serde_json writes
        // it, so the look sees what it would in the tree's JSON.
        let needs_a_look =
            |json: &str| clean::may_hide_in_json(json) || redact::may_hold(json, withheld);
        let mut value = match given {
            Given::Sent(tape) if !needs_a_look(tape.text()) => return Data(Form::Sent(tape)),
            Given::Sent(tape) => tape.root().to_value(),
            Given::Tree(value) => value,
        };
        let unchanged = serde_json::to_string(&value)
            .ok()
            .filter(|json| !needs_a_look(json));
        let json = unchanged.unwrap_or_else(|| {
            clean_and_withhold(&mut value, withheld);
            to_json(&value)
        });
        Data(Form::Tree { value, json })
    }

    /// The value as a tree, read from its JSON when it is kept as that.
    #[cfg(test)]
    pub fn value(&self) -> Cow<'_, Value> {
        match &self.0 {
            Form::Sent(tape) => Cow::Owned(tape.root().to_value()),
            Form::Tree { value, .. } => Cow::Borrowed(value),
        }
    }

    /// The value as compact JSON.
    pub fn json(&self) -> &str {
        match &self.0 {
            Form::Sent(tape) => tape.text(),
            Form::Tree { json, .. } => json,
        }
    }

    /// The value's JSON indexed, or `None` past the depth serde_json reads to.
    pub fn tape(&self) -> Option<Cow<'_, Tape>> {
        match &self.0 {
            Form::Sent(tape) => Some(Cow::Borrowed(tape)),
            // serde_json wrote it, so it indexes.
            Form::Tree { json, .. } => Tape::index(json.clone()).ok().map(Cow::Owned),
        }
    }

    /// Changes the value, and writes its JSON again.
    pub fn change(&mut self, change: impl FnOnce(Value) -> Value) {
        let value = match &mut self.0 {
            Form::Sent(tape) => tape.root().to_value(),
            Form::Tree { value, .. } => std::mem::take(value),
        };
        let value = change(value);
        self.0 = Form::Tree {
            json: to_json(&value),
            value,
        };
    }

    pub fn into_value(self) -> Value {
        match self.0 {
            Form::Sent(tape) => tape.root().to_value(),
            Form::Tree { value, .. } => value,
        }
    }
}

fn to_json(value: &Value) -> String {
    // A Value always serializes.
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

/// Every string and key of `value` cleaned, then withheld of secrets (so a secret split by a
/// hidden character is still found), in place: only what changes is replaced.
pub fn clean_and_withhold(value: &mut Value, withheld: &Secrets) {
    match value {
        Value::String(text) => {
            if let Some(mended) = mended(text, withheld) {
                *text = mended;
            }
        }
        Value::Array(items) => {
            for item in items {
                clean_and_withhold(item, withheld);
            }
        }
        Value::Object(fields) => {
            for field in fields.values_mut() {
                clean_and_withhold(field, withheld);
            }
            if fields.keys().any(|key| mended(key, withheld).is_some()) {
                *fields = std::mem::take(fields)
                    .into_iter()
                    .map(|(key, value)| (mended(&key, withheld).unwrap_or(key), value))
                    .collect();
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `text` cleaned and withheld, or `None` when neither changes it.
fn mended(text: &str, withheld: &Secrets) -> Option<String> {
    match handed_text(text, withheld) {
        Cow::Borrowed(_) => None,
        Cow::Owned(mended) => Some(mended),
    }
}

/// Text the stack (or a client) wrote, as the server may pass it on to anyone: without the
/// characters a reader cannot see, then with every secret withheld (those withheld everywhere,
/// and `withheld`), so that a secret split by a hidden character is still found. Borrowed when
/// it needed neither, which tells a caller the text is exactly as it was written.
pub fn handed_text<'a>(text: &'a str, withheld: &Secrets) -> Cow<'a, str> {
    match clean::cleaned(text) {
        Some(cleaned) => Cow::Owned(redact::redacted(&cleaned, withheld).unwrap_or(cleaned)),
        None => redact::redact(text, withheld),
    }
}

/// Whether `text` holds nothing a reader cannot see (tab and newline aside): what is shown of it
/// is what it is.
pub fn shows_as_written(text: &str) -> bool {
    clean::cleaned(text).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const KEY: &str = "lfk_00112233445566778899aabbccddeeff";

    /// Text made of pieces that need cleaning or withholding, whole or split, among harmless ones.
    fn hostile_text() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "a",
            "é",
            "東",
            " ",
            "\\",
            "\"",
            "\n",
            "\t",
            "\r",
            "\u{0}",
            "\u{7F}",
            "\u{85}",
            "\u{200B}",
            "\u{202E}",
            "\u{2028}",
            "\u{FEFF}",
            "\u{E0041}",
            "lfk_",
            "LFK_",
            "Lfk_",
            "0011223344556677",
            "8899AABBCCDDEEFF",
            "8899aabbccddeeff",
            "deadbeef",
            KEY,
        ]);
        prop::collection::vec(pieces, 0..6).prop_map(|pieces| pieces.concat())
    }

    /// `value` as serde_json writes it, but each object's keys in the opposite order.
    fn keys_reversed(value: &Value) -> String {
        match value {
            Value::Object(fields) => {
                let members: Vec<String> = fields
                    .iter()
                    .rev()
                    .map(|(key, field)| {
                        format!("{}:{}", Value::from(key.as_str()), keys_reversed(field))
                    })
                    .collect();
                format!("{{{}}}", members.join(","))
            }
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(keys_reversed).collect();
                format!("[{}]", items.join(","))
            }
            other => other.to_string(),
        }
    }

    fn hostile_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::from),
            hostile_text().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(hostile_text(), inner, 0..6)
                    .prop_map(|fields| Value::Object(fields.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Issue 15: whatever the stack answers, what is handed over is what the walk makes of
        /// it, whether the look at its JSON spared the walk or not.
        #[test]
        fn the_look_never_spares_a_walk_that_changes_anything(value in hostile_json()) {
            let mut secrets = Secrets::default();
            secrets.add(KEY);
            let mut walked = value.clone();
            clean_and_withhold(&mut walked, &secrets);
            let data = Data::handed(value.into(), &secrets);
            let handed = data.value();
            prop_assert_eq!(handed.as_ref(), &walked);
            prop_assert_eq!(data.json(), walked.to_string());
        }

        /// Issue 32: the stack's text handed on as it came is what its tree would have been,
        /// whatever order the stack wrote its keys in.
        #[test]
        fn the_stacks_text_is_handed_over_as_its_tree_would_be(value in hostile_json()) {
            let mut secrets = Secrets::default();
            secrets.add(KEY);
            let tree = Data::handed(Given::Tree(value.clone()), &secrets);
            let walked = tree.value().into_owned();
            for text in [value.to_string(), keys_reversed(&value)] {
                let tape = Tape::index(text).expect("serde_json's text indexes");
                let sent = Data::handed(Given::Sent(tape), &secrets);
                prop_assert_eq!(sent.value().into_owned(), walked.clone());
                let json: Value = serde_json::from_str(sent.json()).expect("JSON");
                prop_assert_eq!(&json, &walked);
            }
        }
    }

    #[test]
    fn a_secret_split_by_a_hidden_character_is_withheld_in_strings_and_keys() {
        let mut secrets = Secrets::default();
        secrets.add("lfk_00112233445566778899aabbccddeeff");
        let data = Data::handed(
            Given::Tree(json!({
                "ti\u{200B}tle": ["The Qu\u{200B}iet H\u{2066}ours\u{FEFF}", 3],
                "echo": "key 0011223344\u{200D}5566778899AABBCCDDEEFF!",
                "lfk_\u{200B}0011223344556677": true,
            })),
            &secrets,
        );
        let expected = json!({
            "title": ["The Quiet Hours", 3],
            "echo": "key [withheld]!",
            "[withheld]": true,
        });
        assert_eq!(data.value().as_ref(), &expected);
        assert_eq!(data.json(), expected.to_string());
    }

    #[test]
    fn clean_data_is_handed_over_as_it_came() {
        let value =
            json!({"title": "Amélie — 東京物語 🎬", "path": "C:\\users", "n": [1, 2.5, null]});
        let data = Data::handed(value.clone().into(), &Secrets::default());
        assert_eq!(data.value().as_ref(), &value);
        assert_eq!(data.json(), value.to_string());
    }
}
