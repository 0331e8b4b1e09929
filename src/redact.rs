//! Defence in depth for secrets: whatever else goes wrong, the configured key, the pin and
//! anything shaped like an integration key are withheld from every result and log line.

use std::borrow::Cow;
use std::io::Write;
use std::sync::{OnceLock, RwLock};

use serde_json::Value;

pub const WITHHELD: &str = "[withheld]";
const KEY_PREFIX: &str = "lfk_";
/// A key-shaped value: the prefix and at least this much hex.
const KEY_SHAPE_MIN_HEX: usize = 8;

fn secrets() -> &'static RwLock<Vec<String>> {
    static SECRETS: OnceLock<RwLock<Vec<String>>> = OnceLock::new();
    SECRETS.get_or_init(|| RwLock::new(Vec::new()))
}

/// From now on, `secret` is withheld wherever the server writes.
pub fn withhold(secret: &str) {
    if secret.is_empty() {
        return;
    }
    if let Ok(mut secrets) = secrets().write() {
        for form in [
            secret.to_owned(),
            secret.to_ascii_lowercase(),
            secret.to_ascii_uppercase(),
        ] {
            if !secrets.contains(&form) {
                secrets.push(form);
            }
        }
    }
}

pub fn redact(text: &str) -> Cow<'_, str> {
    let mut text = Cow::Borrowed(text);
    if let Ok(secrets) = secrets().read() {
        for secret in secrets.iter() {
            if text.contains(secret.as_str()) {
                text = Cow::Owned(text.replace(secret.as_str(), WITHHELD));
            }
        }
    }
    if text.contains(KEY_PREFIX) {
        text = Cow::Owned(withhold_key_shapes(&text));
    }
    text
}

fn withhold_key_shapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY_PREFIX) {
        out.push_str(&rest[..at]);
        let after = &rest[at + KEY_PREFIX.len()..];
        let hex = after.bytes().take_while(u8::is_ascii_hexdigit).count();
        if hex >= KEY_SHAPE_MIN_HEX {
            out.push_str(WITHHELD);
            rest = &after[hex..];
        } else {
            out.push_str(KEY_PREFIX);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

pub fn redact_value(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(redact(&text).into_owned()),
        Value::Array(items) => Value::Array(items.into_iter().map(redact_value).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| (redact(&key).into_owned(), redact_value(value)))
                .collect(),
        ),
        other => other,
    }
}

/// Where log lines go: stderr, redacted. (Stdout belongs to the stdio transport.)
pub struct RedactingStderr;

impl Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// A panic's message is written redacted, like any other line.
pub fn redact_panics() {
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            RedactingStderr,
            "lemonfiber-mcp stopped unexpectedly: {info}"
        );
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn withholds_key_shaped_values_and_registered_secrets() {
        withhold("0f1e2d3c4b5a69780f1e2d3c4b5a6978");
        let text = "key lfk_0123456789abcdef and pin 0F1E2D3C4B5A69780F1E2D3C4B5A6978, lfk_ and lfk_xyz stay";
        assert_eq!(
            redact(text),
            "key [withheld] and pin [withheld], lfk_ and lfk_xyz stay"
        );
        let value = redact_value(json!({"lfk_00112233445566": ["token lfk_aabbccddeeff0011"]}));
        assert_eq!(value, json!({"[withheld]": ["token [withheld]"]}));
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        assert!(matches!(redact("nothing secret here"), Cow::Borrowed(_)));
    }
}
