//! Characters a reader cannot see are taken out of everything the stack wrote, so hidden text
//! cannot ride along and a client that splits lines sees no boundary the stack made up. Chosen by
//! Unicode property, not by a list that goes stale: every format character (Cf), line and
//! paragraph separators, control characters but tab and newline, and the default-ignorable
//! characters of other categories (variation selectors, fillers, invisible joiners).

use serde_json::Value;
use unicode_general_category::{GeneralCategory, get_general_category};

/// Removes hidden characters from every string and key.
pub fn clean(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(clean_text(text)),
        Value::Array(items) => Value::Array(items.into_iter().map(clean).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| (clean_text(key), clean(value)))
                .collect(),
        ),
        other => other,
    }
}

/// The text without its hidden characters; text that has none is handed back as it is.
fn clean_text(text: String) -> String {
    if !text.chars().any(is_hidden) {
        return text;
    }
    text.chars().filter(|&c| !is_hidden(c)).collect()
}

pub fn is_hidden(c: char) -> bool {
    match get_general_category(c) {
        GeneralCategory::Format
        | GeneralCategory::LineSeparator
        | GeneralCategory::ParagraphSeparator => true,
        GeneralCategory::Control => c != '\t' && c != '\n',
        _ => is_default_ignorable_outside_format(c),
    }
}

/// Default_Ignorable_Code_Point characters whose general category is not Cf: shown as nothing,
/// yet letters or marks by category (and the code points Unicode reserves as ignorable).
fn is_default_ignorable_outside_format(c: char) -> bool {
    matches!(c,
        '\u{034F}'                  // combining grapheme joiner
        | '\u{115F}' | '\u{1160}'   // Hangul choseong and jungseong fillers
        | '\u{17B4}' | '\u{17B5}'   // Khmer inherent vowels
        | '\u{180B}'..='\u{180D}' | '\u{180F}' // Mongolian free variation selectors
        | '\u{2065}'                // reserved among the invisible operators
        | '\u{3164}' | '\u{FFA0}'   // Hangul fillers
        | '\u{FE00}'..='\u{FE0F}'   // variation selectors
        | '\u{FFF0}'..='\u{FFF8}'   // reserved specials
        | '\u{E0000}'..='\u{E0FFF}' // tags, supplementary variation selectors, reserved
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strips_hidden_characters_from_strings_and_keys() {
        let dirty = json!({"ti\u{200B}tle": ["The Qu\u{200B}iet \u{202E}eciov\u{202C} H\u{2066}ours\u{FEFF}", 3]});
        assert_eq!(clean(dirty), json!({"title": ["The Quiet eciov Hours", 3]}));
    }

    #[test]
    fn keeps_visible_text_tab_and_newline() {
        let text = "Amélie — 東京物語 🎬 \"quoted\"\tcolumn\nnext line";
        assert_eq!(clean_text(text.to_owned()), text);
        assert_eq!(
            clean_text("Ünïcödé and emoji 👍🏽".to_owned()),
            "Ünïcödé and emoji 👍🏽"
        );
    }

    /// Item 7 of the safety issue: separators, C1 controls and the format characters a hand
    /// list missed.
    #[test]
    fn strips_by_property_what_a_hand_list_missed() {
        for c in [
            '\u{2028}',
            '\u{2029}',
            '\u{0085}',
            '\r',
            '\u{0000}',
            '\u{001B}',
            '\u{009B}',
            '\u{0600}',
            '\u{0605}',
            '\u{06DD}',
            '\u{070F}',
            '\u{0890}',
            '\u{0891}',
            '\u{08E2}',
            '\u{110BD}',
            '\u{110CD}',
            '\u{13430}',
            '\u{1343F}',
            '\u{1BCA0}',
            '\u{1BCA3}',
            '\u{FFF9}',
            '\u{1D173}',
            '\u{E0001}',
            '\u{FE0F}',
            '\u{3164}',
            '\u{00AD}',
            '\u{061C}',
        ] {
            assert!(is_hidden(c), "U+{:04X} passes", c as u32);
            assert_eq!(clean_text(format!("a{c}b")), "ab", "U+{:04X}", c as u32);
        }
    }
}
