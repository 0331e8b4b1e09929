//! Characters a reader cannot see are taken out of everything the stack wrote, so hidden text
//! cannot ride along and a client that splits lines sees no boundary the stack made up. Chosen by
//! Unicode property, not by a list that goes stale: every format character (Cf), line and
//! paragraph separators, control characters but tab and newline, and the default-ignorable
//! characters of other categories (variation selectors, fillers, invisible joiners).

use unicode_general_category::{GeneralCategory, get_general_category};

/// The text without its hidden characters, or `None` when it has none.
pub fn cleaned(text: &str) -> Option<String> {
    if !text.chars().any(is_hidden) {
        return None;
    }
    Some(text.chars().filter(|&c| !is_hidden(c)).collect())
}

/// Whether JSON, as serde_json writes it, may hold a hidden character in a string or key: one
/// written as it is, or a control character written as an escape (`\b`, `\f`, `\r`, `\u…`;
/// serde_json escapes nothing else that way). Never false when one is there, so JSON for which
/// it is false needs no cleaning.
pub fn may_hide_in_json(json: &str) -> bool {
    // Every answer is looked at, so the look runs over bytes and stops only at those that could
    // matter: a backslash, an ASCII control, or the first byte of a character past ASCII.
    let bytes = json.as_bytes();
    let mut at = 0;
    while let Some(here) = next_stop(bytes, at) {
        let rest = &json[here..];
        let mut characters = rest.chars();
        match characters.next() {
            Some('\\') => match characters.next() {
                Some('b' | 'f' | 'r' | 'u') => return true,
                // What a backslash escapes is part of the escape, not text to look at.
                Some(escaped) => at = here + 1 + escaped.len_utf8(),
                None => return false,
            },
            Some(c) if c.is_ascii_control() || is_hidden(c) => return true,
            Some(c) => at = here + c.len_utf8(),
            None => return false,
        }
    }
    false
}

/// A byte the look must stop at: a backslash, an ASCII control or DEL, or a byte past ASCII.
fn stops_the_look(byte: u8) -> bool {
    byte == b'\\' || !(0x20..0x7f).contains(&byte)
}

/// The first byte at or after `from` that [`stops_the_look`]. Eight bytes are tested at once,
/// as one word: a byte below 0x20, equal to a backslash or DEL, or with its high bit set marks
/// the word, and only a marked word is looked through byte by byte. Each word test is exact
/// (it marks a word if and only if a byte in it stops the look), so none is ever passed over.
fn next_stop(bytes: &[u8], from: usize) -> Option<usize> {
    const EACH_BYTE: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH_BITS: u64 = EACH_BYTE * 0x80;
    // The high bit of each byte of the result is set where `word`'s byte is below `limit`
    // (for bytes under 0x80, which the high bits of `word` itself catch otherwise).
    let below = |word: u64, limit: u8| word.wrapping_sub(EACH_BYTE * u64::from(limit)) & !word;
    let equal = |word: u64, byte: u8| below(word ^ (EACH_BYTE * u64::from(byte)), 1);
    let rest = bytes.get(from..)?;
    let mut words = rest.chunks_exact(8);
    let mut at = from;
    for chunk in &mut words {
        let mut eight = [0; 8];
        eight.copy_from_slice(chunk);
        let word = u64::from_ne_bytes(eight);
        let marked = word | below(word, 0x20) | equal(word, b'\\') | equal(word, 0x7f);
        if marked & HIGH_BITS != 0
            && let Some(found) = chunk.iter().position(|&byte| stops_the_look(byte))
        {
            return Some(at + found);
        }
        at += 8;
    }
    let tail = words.remainder();
    tail.iter()
        .position(|&byte| stops_the_look(byte))
        .map(|found| at + found)
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
    use proptest::prelude::*;
    use serde_json::json;

    fn clean_text(text: String) -> String {
        cleaned(&text).unwrap_or(text)
    }

    #[test]
    fn strips_hidden_characters() {
        assert_eq!(
            clean_text("The Qu\u{200B}iet \u{202E}eciov\u{202C} H\u{2066}ours\u{FEFF}".to_owned()),
            "The Quiet eciov Hours"
        );
    }

    /// Issue 15: the look at an answer's JSON that lets a clean one through unwalked must see
    /// every hidden character, whether written as it is or escaped, in a string or a key.
    #[test]
    fn json_holding_a_hidden_character_is_never_passed_as_clean() {
        for c in (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|&c| is_hidden(c))
        {
            let text = format!("a{c}b");
            for value in [
                json!({"k": text}),
                json!({ text.clone(): 1 }),
                json!([1, text]),
            ] {
                let json = serde_json::to_string(&value).expect("json");
                assert!(may_hide_in_json(&json), "U+{:04X} in {json}", c as u32);
            }
        }
        let clean = json!({"title": "Amélie — 東京物語 🎬 \"quoted\"\tcolumn\nnext", "path": "C:\\users\\bob", "n": [1, 2.5, null, true]});
        assert!(!may_hide_in_json(
            &serde_json::to_string(&clean).expect("json")
        ));
    }

    #[test]
    fn what_follows_an_escape_is_still_looked_at() {
        // An escaped quote or backslash, then a hidden character: the look goes on past the escape.
        for json in [
            "{\"k\":\"\\\"\u{200B}\"}",
            "{\"k\":\"\\\\é\u{2028}\"}",
            "{\"k\":\"\\\\\\b\"}",
        ] {
            assert!(may_hide_in_json(json), "{json}");
        }
        // An escape of nothing hidden, and JSON ending in a backslash, hide nothing.
        for json in ["{\"k\":\"\\\"é\\\\\"}", "{\"k\":\"\\/\"}", "\\"] {
            assert!(!may_hide_in_json(json), "{json}");
        }
    }

    /// Where a byte-by-byte search stops, which the word search must agree with.
    fn byte_search(bytes: &[u8], from: usize) -> Option<usize> {
        (from..bytes.len()).find(|&at| stops_the_look(bytes[at]))
    }

    /// The word-at-a-time search stops exactly where a byte-by-byte one would: every byte value,
    /// at every place in a word and in the tail, among bytes that never stop it.
    #[test]
    fn the_word_search_stops_where_a_byte_search_would() {
        for length in [1, 7, 8, 9, 16, 23] {
            for place in 0..length {
                for byte in 0..=u8::MAX {
                    let mut bytes = vec![b'a'; length];
                    bytes[place] = byte;
                    for from in [0, place] {
                        assert_eq!(
                            next_stop(&bytes, from),
                            byte_search(&bytes, from),
                            "byte {byte:#04x} at {place} of {length}, from {from}"
                        );
                    }
                }
            }
        }
        assert_eq!(next_stop(b"abc", 3), None);
        assert_eq!(next_stop(b"abc", 4), None);
    }

    /// Bytes on either side of each bound the word test draws, side by side, among ordinary
    /// text: where one byte's test could borrow from its neighbour's, if the test were wrong.
    fn bytes_near_the_bounds() -> impl Strategy<Value = Vec<u8>> {
        let near = prop::sample::select(vec![
            0x00, 0x01, 0x1f, 0x20, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0xff,
        ]);
        prop::collection::vec(prop_oneof![4 => 0x20u8..0x7f, 1 => near], 0..64)
    }

    proptest! {
        #[test]
        fn the_word_search_agrees_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64), from in 0usize..70) {
            prop_assert_eq!(next_stop(&bytes, from), byte_search(&bytes, from));
        }

        #[test]
        fn the_word_search_agrees_beside_its_bounds(bytes in bytes_near_the_bounds(), from in 0usize..70) {
            prop_assert_eq!(next_stop(&bytes, from), byte_search(&bytes, from));
        }
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
