//! Defence in depth for secrets: whatever else goes wrong, the keys, the pin and anything shaped
//! like an integration key are withheld from every result and log line, in any letter case, and
//! a key's hex part is withheld on its own too.

use std::borrow::Cow;
use std::io::Write;
use std::sync::{LazyLock, OnceLock, RwLock};

use memchr::memmem::Finder;

pub const WITHHELD: &str = "[withheld]";
const KEY_PREFIX: &str = "lfk_";
/// A key-shaped value: the prefix and at least this much hex.
const KEY_SHAPE_MIN_HEX: usize = 8;

/// Secrets to withhold, kept in lower case and matched in any case. Its `Debug` shows none. Each
/// is kept as its searcher, built once: every result is looked through for it, and building a
/// searcher costs more than a look through most results.
#[derive(Clone, Default)]
pub struct Secrets(Vec<Finder<'static>>);

static KEY_PREFIX_FINDER: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(KEY_PREFIX.as_bytes()));

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} withheld)", self.0.len())
    }
}

impl Secrets {
    /// `secret`, and for an integration key its hex part on its own.
    pub fn add(&mut self, secret: &str) {
        let secret = secret.to_ascii_lowercase();
        let hex = secret
            .strip_prefix(KEY_PREFIX)
            .filter(|hex| hex.len() >= KEY_SHAPE_MIN_HEX)
            .map(str::to_owned);
        for form in [Some(secret), hex].into_iter().flatten() {
            if !form.is_empty() && !self.0.iter().any(|known| known.needle() == form.as_bytes()) {
                self.0.push(Finder::new(form.as_bytes()).into_owned());
            }
        }
        // The longest first, so a key is withheld whole before its hex part is looked for.
        self.0
            .sort_by_key(|secret| std::cmp::Reverse(secret.needle().len()));
    }

    /// Whether any of these secrets is in `lowered` (text already in lower case).
    fn any_in(&self, lowered: &[u8]) -> bool {
        self.0.iter().any(|secret| secret.find(lowered).is_some())
    }

    /// Whether JSON writes any of these secrets escaped, so that it cannot be found as it is in
    /// the JSON's text.
    fn written_escaped(&self) -> bool {
        self.0.iter().any(|secret| {
            secret
                .needle()
                .iter()
                .any(|&b| b == b'"' || b == b'\\' || b < 0x20)
        })
    }

    /// `text` with these secrets withheld, or `None` when none is in it.
    fn withhold(&self, text: &[u8]) -> Option<Vec<u8>> {
        let mut changed: Option<Vec<u8>> = None;
        for secret in &self.0 {
            let current = changed.as_deref().unwrap_or(text);
            if let Some(replaced) = replace_ignoring_case(current, secret) {
                changed = Some(replaced);
            }
        }
        changed
    }
}

fn global() -> &'static RwLock<Secrets> {
    static SECRETS: OnceLock<RwLock<Secrets>> = OnceLock::new();
    SECRETS.get_or_init(|| RwLock::new(Secrets::default()))
}

/// From now on, `secret` is withheld wherever the server writes.
pub fn withhold(secret: &str) {
    if let Ok(mut secrets) = global().write() {
        secrets.add(secret);
    }
}

/// `text` with every secret withheld: those withheld everywhere, and `also` (a key's own).
pub fn redact<'a>(text: &'a str, also: &Secrets) -> Cow<'a, str> {
    match withheld(text.as_bytes(), also) {
        None => Cow::Borrowed(text),
        // Only ASCII was replaced, by ASCII, so the text is still UTF-8.
        Some(bytes) => Cow::Owned(
            String::from_utf8(bytes)
                .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()),
        ),
    }
}

/// Whether JSON text may hold a secret or a key-shaped value in one of its strings or keys.
/// Never false when one does, so JSON for which it is false needs nothing withheld, and its
/// strings need no look each.
pub fn may_hold(json: &str, also: &Secrets) -> bool {
    let Ok(everywhere) = global().read() else {
        return true;
    };
    also.written_escaped()
        || everywhere.written_escaped()
        || holds_one(json.as_bytes(), also, &everywhere)
}

/// `bytes` with every secret withheld, or `None` when none is in them. Secrets are ASCII, so
/// they are found whatever the bytes around them are: text or not, valid UTF-8 or not.
fn withheld(bytes: &[u8], also: &Secrets) -> Option<Vec<u8>> {
    let Ok(everywhere) = global().read() else {
        return withhold_all(bytes, also, &Secrets::default());
    };
    if !holds_one(bytes, also, &everywhere) {
        return None;
    }
    withhold_all(bytes, also, &everywhere)
}

/// One look, with no copy unless the bytes have upper case, that tells the (rare) text holding
/// a secret or the start of a key from the rest.
fn holds_one(bytes: &[u8], also: &Secrets, everywhere: &Secrets) -> bool {
    let lowered = if bytes.iter().any(u8::is_ascii_uppercase) {
        Cow::Owned(bytes.to_ascii_lowercase())
    } else {
        Cow::Borrowed(bytes)
    };
    also.any_in(&lowered)
        || everywhere.any_in(&lowered)
        || KEY_PREFIX_FINDER.find(&lowered).is_some()
}

fn withhold_all(bytes: &[u8], also: &Secrets, everywhere: &Secrets) -> Option<Vec<u8>> {
    let mut changed = also.withhold(bytes);
    if let Some(replaced) = everywhere.withhold(changed.as_deref().unwrap_or(bytes)) {
        changed = Some(replaced);
    }
    withhold_key_shapes(changed.as_deref().unwrap_or(bytes)).or(changed)
}

/// `text` with what `finder` looks for (lower-case ASCII) replaced wherever it appears in any
/// letter case, or `None` when it does not appear.
fn replace_ignoring_case(text: &[u8], finder: &Finder<'_>) -> Option<Vec<u8>> {
    // ASCII lower-casing keeps every byte where it was, so positions found in the lowered copy
    // are positions in the text.
    let lowered = text.to_ascii_lowercase();
    let needle = finder.needle();
    let found = |from: usize| Some(from + finder.find(lowered.get(from..)?)?);
    let mut at = found(0)?;
    let mut out = Vec::with_capacity(text.len());
    let mut from = 0;
    loop {
        out.extend_from_slice(&text[from..at]);
        out.extend_from_slice(WITHHELD.as_bytes());
        from = at + needle.len();
        match found(from) {
            Some(next) => at = next,
            None => break,
        }
    }
    out.extend_from_slice(&text[from..]);
    Some(out)
}

/// `text` with anything shaped like an integration key (its prefix in any case, then enough
/// hex) withheld, or `None` when there is none.
fn withhold_key_shapes(text: &[u8]) -> Option<Vec<u8>> {
    let prefix = KEY_PREFIX.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    let mut at = 0;
    let mut changed = false;
    while at + prefix.len() <= text.len() {
        if !text[at..at + prefix.len()].eq_ignore_ascii_case(prefix) {
            at += 1;
            continue;
        }
        let hex_start = at + prefix.len();
        let hex = text[hex_start..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        if hex >= KEY_SHAPE_MIN_HEX {
            out.extend_from_slice(&text[from..at]);
            out.extend_from_slice(WITHHELD.as_bytes());
            from = hex_start + hex;
            changed = true;
        }
        at = hex_start + hex;
    }
    if !changed {
        return None;
    }
    out.extend_from_slice(&text[from..]);
    Some(out)
}

/// `text` withheld of secrets, or `None` when it holds none.
pub fn redacted(text: &str, also: &Secrets) -> Option<String> {
    match redact(text, also) {
        Cow::Borrowed(_) => None,
        Cow::Owned(redacted) => Some(redacted),
    }
}

/// A file's bytes with every secret withheld, wherever it stands in them.
pub fn redact_bytes(bytes: Vec<u8>, also: &Secrets) -> Vec<u8> {
    withheld(&bytes, also).unwrap_or(bytes)
}

/// Where log lines go: stderr, redacted. (Stdout belongs to the stdio transport.)
pub struct RedactingStderr;

impl Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(redact(&text, &Secrets::default()).as_bytes())?;
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

    const KEY: &str = "lfk_00112233445566778899aabbccddeeff";

    fn key_secrets() -> Secrets {
        let mut secrets = Secrets::default();
        secrets.add(KEY);
        secrets
    }

    #[test]
    fn withholds_key_shaped_values_and_registered_secrets() {
        withhold("0f1e2d3c4b5a69780f1e2d3c4b5a6978");
        let text = "key lfk_0123456789abcdef and pin 0F1E2D3C4B5A69780F1E2D3C4B5a6978, lfk_ and lfk_xyz stay";
        assert_eq!(
            redact(text, &Secrets::default()),
            "key [withheld] and pin [withheld], lfk_ and lfk_xyz stay"
        );
        let json = json!({"lfk_00112233445566": ["token LFK_AABBCCDDEEFF0011"]}).to_string();
        assert!(may_hold(&json, &Secrets::default()));
        assert_eq!(
            redacted("token LFK_AABBCCDDEEFF0011", &Secrets::default()).as_deref(),
            Some("token [withheld]")
        );
    }

    #[test]
    fn a_keys_hex_part_is_withheld_on_its_own_in_any_case() {
        let secrets = key_secrets();
        for echoed in [
            "00112233445566778899aabbccddeeff",
            "00112233445566778899AABBCCDDEEFF",
            "00112233445566778899AaBbCcDdEeFf",
            KEY,
        ] {
            let text = format!("the stack said {echoed}.");
            assert_eq!(redact(&text, &secrets), "the stack said [withheld].");
        }
        assert!(matches!(
            redact("nothing secret here", &secrets),
            Cow::Borrowed(_)
        ));
        assert!(!may_hold(r#"{"nothing":"secret here"}"#, &secrets));
        assert!(!may_hold(
            r#"{"echo":"0011223344556677 8899AABBCCDDEEFF"}"#,
            &secrets
        ));
        assert!(may_hold(
            r#"{"echo":"00112233445566778899AABBCCDDEEFF"}"#,
            &secrets
        ));
    }

    #[test]
    fn a_file_is_redacted_whatever_its_bytes_around_the_secret() {
        let secrets = key_secrets();
        let text = format!("config:\n  token: {}\n", KEY.to_uppercase()).into_bytes();
        assert_eq!(
            redact_bytes(text, &secrets),
            b"config:\n  token: [withheld]\n".to_vec()
        );
        let mut binary = vec![0xff, 0xfe, 0x00];
        binary.extend_from_slice(b"00112233445566778899AABBCCDDEEFF");
        binary.push(0x80);
        assert_eq!(
            redact_bytes(binary, &secrets),
            b"\xff\xfe\x00[withheld]\x80".to_vec()
        );
        let nothing = vec![0xff, 0xfe, b'l', b'f', b'k'];
        assert_eq!(redact_bytes(nothing.clone(), &secrets), nothing);
    }

    #[test]
    fn debug_shows_no_secret() {
        assert!(!format!("{:?}", key_secrets()).contains("0011"));
    }
}
