//! The stack's data as it is handed over: cleaned of hidden characters and withheld of secrets in
//! one walk, taken only when a look at its JSON shows something to change, and written as JSON
//! once, again only when it changes. Most answers need neither walk nor copy (issue 15).

use serde_json::Value;

use super::clean;
use crate::redact::{self, Secrets};

/// The data, and its JSON as last written.
pub struct Data {
    value: Value,
    json: String,
}

impl Data {
    pub fn handed(mut value: Value, withheld: &Secrets) -> Data {
        let mut json = to_json(&value);
        if clean::may_hide_in_json(&json) || redact::may_hold(&json, withheld) {
            clean_and_withhold(&mut value, withheld);
            json = to_json(&value);
        }
        Data { value, json }
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The value as compact JSON.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// Changes the value, and writes its JSON again.
    pub fn change(&mut self, change: impl FnOnce(Value) -> Value) {
        self.value = change(std::mem::take(&mut self.value));
        self.json = to_json(&self.value);
    }

    pub fn into_value(self) -> Value {
        self.value
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
    match clean::cleaned(text) {
        Some(cleaned) => Some(redact::redacted(&cleaned, withheld).unwrap_or(cleaned)),
        None => redact::redacted(text, withheld),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_secret_split_by_a_hidden_character_is_withheld_in_strings_and_keys() {
        let mut secrets = Secrets::default();
        secrets.add("lfk_00112233445566778899aabbccddeeff");
        let data = Data::handed(
            json!({
                "ti\u{200B}tle": ["The Qu\u{200B}iet H\u{2066}ours\u{FEFF}", 3],
                "echo": "key 0011223344\u{200D}5566778899AABBCCDDEEFF!",
                "lfk_\u{200B}0011223344556677": true,
            }),
            &secrets,
        );
        let expected = json!({
            "title": ["The Quiet Hours", 3],
            "echo": "key [withheld]!",
            "[withheld]": true,
        });
        assert_eq!(data.value(), &expected);
        assert_eq!(data.json(), expected.to_string());
    }

    #[test]
    fn clean_data_is_handed_over_as_it_came() {
        let value =
            json!({"title": "Amélie — 東京物語 🎬", "path": "C:\\users", "n": [1, 2.5, null]});
        let data = Data::handed(value.clone(), &Secrets::default());
        assert_eq!(data.value(), &value);
        assert_eq!(data.json(), value.to_string());
    }
}
