//! Cutting an answer down to a budget at JSON boundaries: whole array items and whole fields are
//! left out, never part of a string, and what was left out is counted. Two ways in: a value
//! already in memory (cut exactly, the smallest fields kept first), and a stream of JSON read
//! once, which keeps no more than its budget whatever the stream's size.

use std::cell::Cell;
use std::fmt;
use std::io::Read;
use std::rc::Rc;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What a cut left out: array items and object fields (at any depth), and their size as JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeftOut {
    pub items: u64,
    pub bytes: u64,
}

impl LeftOut {
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    pub fn add(&mut self, other: LeftOut) {
        self.items += other.items;
        self.bytes += other.bytes;
    }

    fn one(bytes: usize) -> LeftOut {
        LeftOut {
            items: 1,
            bytes: bytes as u64,
        }
    }
}

/// The size of a value as compact JSON.
pub fn size_of(value: &Value) -> usize {
    let mut counter = Counter(0);
    // Writing to a counter cannot fail, and a Value always serializes.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A key and its separator as compact JSON: `"key":`.
fn field_overhead(key: &str) -> usize {
    size_of(&Value::String(key.to_owned())) + 1
}

/// `value` cut to at most `budget` bytes of compact JSON. Small fields are kept before large
/// ones, so the few words that say what an answer is survive its bulk; an array keeps its first
/// items whole, and is cut inside only when not even its first item fits.
pub fn cut(value: Value, budget: usize) -> (Value, LeftOut) {
    let size = size_of(&value);
    if size <= budget {
        return (value, LeftOut::default());
    }
    match value {
        Value::Object(fields) => cut_object(fields, budget),
        Value::Array(items) => cut_array(items, budget),
        _ => (Value::Null, LeftOut::one(size)),
    }
}

fn cut_object(fields: Map<String, Value>, budget: usize) -> (Value, LeftOut) {
    let mut sized: Vec<(usize, String, Value)> = fields
        .into_iter()
        .map(|(key, value)| (field_overhead(&key) + size_of(&value), key, value))
        .collect();
    sized.sort_by_key(|(size, ..)| *size);
    let mut left_out = LeftOut::default();
    let mut kept = Map::new();
    // `{}` and no comma before the first field.
    let mut used = 2usize;
    for (size, key, value) in sized {
        let comma = usize::from(!kept.is_empty());
        let room = budget.saturating_sub(used + comma);
        if size <= room {
            used += comma + size;
            kept.insert(key, value);
            continue;
        }
        let overhead = field_overhead(&key);
        let is_container = matches!(value, Value::Object(_) | Value::Array(_));
        if is_container && room > overhead + 2 {
            let (value, inner) = cut(value, room - overhead);
            used += comma + overhead + size_of(&value);
            left_out.add(inner);
            kept.insert(key, value);
        } else {
            left_out.add(LeftOut::one(size));
        }
    }
    (Value::Object(kept), left_out)
}

fn cut_array(items: Vec<Value>, budget: usize) -> (Value, LeftOut) {
    let mut left_out = LeftOut::default();
    let mut kept = Vec::new();
    let mut used = 2usize;
    let mut full = false;
    for item in items {
        let size = size_of(&item);
        if full {
            left_out.add(LeftOut::one(size));
            continue;
        }
        let comma = usize::from(!kept.is_empty());
        let room = budget.saturating_sub(used + comma);
        if size <= room {
            used += comma + size;
            kept.push(item);
            continue;
        }
        full = true;
        if kept.is_empty() && matches!(item, Value::Object(_) | Value::Array(_)) {
            let (item, inner) = cut(item, room);
            left_out.add(inner);
            kept.push(item);
        } else {
            left_out.add(LeftOut::one(size));
        }
    }
    (Value::Array(kept), left_out)
}

/// Why a stream could not be cut: it is not JSON, or reading it failed (its error kept, so the
/// caller can tell a limit or a timeout from a broken connection).
#[derive(Debug)]
pub enum StreamError {
    NotJson,
    Read(std::io::Error),
}

/// Room kept back, in an object at the top of a stream, for the small fields that may follow a
/// large one: a stack that writes `data` before `kind` still has its `kind` kept.
pub const ROOM_FOR_SMALL_FIELDS: usize = 1024;

/// Reads one JSON value from `reader` and keeps at most `budget` bytes of it, and of an object
/// at its top, up to [`ROOM_FOR_SMALL_FIELDS`] more for the small fields after a large one.
/// Everything past that is skipped as it is read, counted but never held: a string (or a key)
/// longer than anything that could be kept is shortened before the parser sees it, since the
/// parser holds a whole string before it hands it on.
pub fn cut_stream(reader: impl Read, budget: usize) -> Result<(Value, LeftOut), StreamError> {
    let position = Rc::new(Cell::new(0u64));
    let counted = CountingReader {
        inner: reader,
        position: position.clone(),
    };
    let shortened = LongStrings::new(counted, budget + ROOM_FOR_SMALL_FIELDS);
    let mut deserializer = serde_json::Deserializer::from_reader(shortened);
    let seed = Budgeted {
        budget: budget + ROOM_FOR_SMALL_FIELDS,
        reserve: ROOM_FOR_SMALL_FIELDS,
        position: &position,
    };
    let outcome = seed.deserialize(&mut deserializer).and_then(|cut| {
        deserializer.end()?;
        Ok(cut)
    });
    match outcome {
        Ok(cut) => Ok((cut.value, cut.left_out)),
        Err(error) => Err(match error.io_error_kind() {
            Some(_) => StreamError::Read(std::io::Error::from(error)),
            None => StreamError::NotJson,
        }),
    }
}

struct CountingReader<R> {
    inner: R,
    position: Rc<Cell<u64>>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.position.set(self.position.get() + read as u64);
        Ok(read)
    }
}

/// JSON whose strings are each cut short past `longest` bytes: closed at a character boundary
/// (never inside an escape), the rest skipped up to the string's own closing quote. A shortened
/// string is still longer than anything kept, so it is left out whole as it would have been.
struct LongStrings<R> {
    inner: R,
    longest: usize,
    state: InJson,
}

#[derive(Clone, Copy)]
enum InJson {
    Outside,
    InString(Within),
    /// Past the end of a shortened string, up to its closing quote.
    Skipping {
        escaping: bool,
    },
}

/// Where a string has got to.
#[derive(Clone, Copy, Default)]
struct Within {
    length: usize,
    /// Bytes of an escape still to come: 1 after a backslash, then 4 hex digits after `\u`.
    escaping: u8,
    /// A `\u` escape's value so far.
    code: u16,
    /// The last escape was the first half of a surrogate pair, so the second must follow.
    pair_open: bool,
}

impl<R> LongStrings<R> {
    fn new(inner: R, longest: usize) -> LongStrings<R> {
        LongStrings {
            inner,
            longest,
            state: InJson::Outside,
        }
    }

    /// The byte to pass on for `byte`, if any; the state moves on past it.
    fn pass(&mut self, byte: u8) -> Option<u8> {
        match self.state {
            InJson::Outside => {
                if byte == b'"' {
                    self.state = InJson::InString(Within::default());
                }
                Some(byte)
            }
            InJson::InString(within) => {
                if within.escaping == 0 && byte == b'"' {
                    self.state = InJson::Outside;
                    return Some(byte);
                }
                // The string may end where a character starts (not inside an escape or a UTF-8
                // sequence, and not between the halves of a surrogate pair).
                let may_end = within.escaping == 0
                    && within.length >= self.longest
                    && !(0x80..0xC0).contains(&byte)
                    && !(byte == b'\\' && within.pair_open);
                if may_end {
                    self.state = InJson::Skipping {
                        escaping: byte == b'\\',
                    };
                    return Some(b'"');
                }
                self.state = InJson::InString(within.after(byte));
                Some(byte)
            }
            InJson::Skipping { escaping } => {
                self.state = match (escaping, byte) {
                    (false, b'"') => InJson::Outside,
                    (false, b'\\') => InJson::Skipping { escaping: true },
                    _ => InJson::Skipping { escaping: false },
                };
                None
            }
        }
    }
}

impl Within {
    /// Where the string has got to once `byte` (not its closing quote) is passed on.
    fn after(self, byte: u8) -> Within {
        let length = self.length + 1;
        match (self.escaping, byte) {
            (0, b'\\') => Within {
                length,
                escaping: 1,
                ..self
            },
            (0, _) => Within {
                length,
                pair_open: false,
                ..self
            },
            (1, b'u') => Within {
                length,
                escaping: 4,
                code: 0,
                ..self
            },
            (1, _) => Within {
                length,
                escaping: 0,
                pair_open: false,
                ..self
            },
            (left, digit) => {
                let value = char::from(digit).to_digit(16).unwrap_or(0) as u16;
                let code = (self.code << 4) | value;
                Within {
                    length,
                    escaping: left - 1,
                    code,
                    pair_open: left == 1 && (0xD800..=0xDBFF).contains(&code),
                }
            }
        }
    }
}

impl<R: Read> Read for LongStrings<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let read = self.inner.read(buf)?;
            if read == 0 {
                return Ok(0);
            }
            let mut kept = 0;
            for at in 0..read {
                if let Some(byte) = self.pass(buf[at]) {
                    buf[kept] = byte;
                    kept += 1;
                }
            }
            // Only a read that skipped everything goes round again: 0 would say the end.
            if kept > 0 {
                return Ok(kept);
            }
        }
    }
}

/// What one value came to: the part kept, its size, and what was left out of it.
struct Cut {
    value: Value,
    size: usize,
    left_out: LeftOut,
}

#[derive(Clone, Copy)]
struct Budgeted<'a> {
    budget: usize,
    /// What a container in this object leaves of its room for the fields after it.
    reserve: usize,
    position: &'a Cell<u64>,
}

impl Budgeted<'_> {
    fn scalar(&self, value: Value) -> Cut {
        let size = size_of(&value);
        if size <= self.budget {
            Cut {
                value,
                size,
                left_out: LeftOut::default(),
            }
        } else {
            Cut {
                value: Value::Null,
                size: 4,
                left_out: LeftOut::one(size),
            }
        }
    }

    fn with_budget(&self, budget: usize) -> Budgeted<'_> {
        Budgeted {
            budget,
            reserve: 0,
            position: self.position,
        }
    }

    /// Skips the next value, counting its bytes as the reader passes over them.
    fn skipped_bytes<E>(&self, skip: impl FnOnce() -> Result<(), E>) -> Result<u64, E> {
        let before = self.position.get();
        skip()?;
        Ok(self.position.get().saturating_sub(before))
    }
}

impl<'de> DeserializeSeed<'de> for Budgeted<'_> {
    type Value = Cut;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Cut, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Budgeted<'_> {
    type Value = Cut;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Cut, E> {
        Ok(self.scalar(Value::Bool(value)))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Cut, E> {
        Ok(self.scalar(Value::from(value)))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Cut, E> {
        Ok(self.scalar(Value::from(value)))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Cut, E> {
        Ok(self.scalar(Value::from(value)))
    }

    fn visit_str<E>(self, value: &str) -> Result<Cut, E> {
        // Measured before it is copied: one too large is counted, never kept.
        let size = size_of(&Value::String(String::new())) + value.len();
        if size > self.budget {
            return Ok(Cut {
                value: Value::Null,
                size: 4,
                left_out: LeftOut::one(size),
            });
        }
        Ok(self.scalar(Value::String(value.to_owned())))
    }

    fn visit_unit<E>(self) -> Result<Cut, E> {
        Ok(self.scalar(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Cut, A::Error> {
        let mut kept = Vec::new();
        let mut used = 2usize;
        let mut left_out = LeftOut::default();
        let mut full = false;
        loop {
            if full {
                let mut ended = false;
                let bytes = self.skipped_bytes(|| {
                    ended = items.next_element::<IgnoredAny>()?.is_none();
                    Ok(())
                })?;
                if ended {
                    break;
                }
                left_out.add(LeftOut::one(bytes as usize));
                continue;
            }
            let comma = usize::from(!kept.is_empty());
            let room = self.budget.saturating_sub(used + comma);
            let Some(item) = items.next_element_seed(self.with_budget(room))? else {
                break;
            };
            if item.left_out.is_empty() {
                used += comma + item.size;
                kept.push(item.value);
                continue;
            }
            full = true;
            if kept.is_empty() && matches!(item.value, Value::Object(_) | Value::Array(_)) {
                used += comma + item.size;
                left_out.add(item.left_out);
                kept.push(item.value);
            } else {
                left_out.add(LeftOut::one(item.size + item.left_out.bytes as usize));
            }
        }
        Ok(Cut {
            value: Value::Array(kept),
            size: used,
            left_out,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut fields: A) -> Result<Cut, A::Error> {
        let mut kept = Map::new();
        let mut used = 2usize;
        let mut left_out = LeftOut::default();
        while let Some(key) = fields.next_key::<String>()? {
            let comma = usize::from(!kept.is_empty());
            let overhead = field_overhead(&key);
            let room = self.budget.saturating_sub(used + comma + overhead);
            if room == 0 {
                let bytes = self.skipped_bytes(|| fields.next_value::<IgnoredAny>().map(|_| ()))?;
                left_out.add(LeftOut::one(overhead + bytes as usize));
                continue;
            }
            let value = fields.next_value_seed(ValueInField {
                container_room: room.saturating_sub(self.reserve),
                seed: self.with_budget(room),
            })?;
            if value.value.is_null() && !value.left_out.is_empty() {
                left_out.add(LeftOut::one(overhead + value.left_out.bytes as usize));
                continue;
            }
            used += comma + overhead + value.size;
            left_out.add(value.left_out);
            kept.insert(key, value.value);
        }
        Ok(Cut {
            value: Value::Object(kept),
            size: used,
            left_out,
        })
    }
}

/// A field's value: a container is given its room less what the small fields after it may
/// need; a scalar may use all of it.
struct ValueInField<'a> {
    container_room: usize,
    seed: Budgeted<'a>,
}

impl<'de> DeserializeSeed<'de> for ValueInField<'_> {
    type Value = Cut;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Cut, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueInField<'_> {
    type Value = Cut;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Cut, E> {
        self.seed.visit_bool(value)
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Cut, E> {
        self.seed.visit_i64(value)
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Cut, E> {
        self.seed.visit_u64(value)
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<Cut, E> {
        self.seed.visit_f64(value)
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Cut, E> {
        self.seed.visit_str(value)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Cut, E> {
        self.seed.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, items: A) -> Result<Cut, A::Error> {
        self.seed.with_budget(self.container_room).visit_seq(items)
    }

    fn visit_map<A: MapAccess<'de>>(self, fields: A) -> Result<Cut, A::Error> {
        self.seed.with_budget(self.container_room).visit_map(fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn what_fits_is_left_alone() {
        let value = json!({"kind": "status", "data": [1, 2, 3]});
        assert_eq!(cut(value.clone(), 1000), (value, LeftOut::default()));
    }

    #[test]
    fn an_array_keeps_its_first_whole_items_and_counts_the_rest() {
        let items: Vec<Value> = (0..100)
            .map(|n| json!({"n": n, "title": "x".repeat(20)}))
            .collect();
        let value = json!({"api_version": 1, "kind": "held", "data": {"items": items}});
        let (kept, left_out) = cut(value.clone(), 500);
        assert!(size_of(&kept) <= 500);
        assert_eq!(kept["kind"], "held", "small fields survive");
        let kept_items = kept["data"]["items"].as_array().expect("items").len();
        assert!(kept_items > 0 && kept_items < 100);
        assert_eq!(left_out.items, 100 - kept_items as u64);
        assert_eq!(kept["data"]["items"][0], value["data"]["items"][0]);
    }

    #[test]
    fn a_string_too_large_is_left_out_whole() {
        let value = json!({"kind": "title", "data": {"title": "y".repeat(5000), "id": "ttl-1"}});
        let (kept, left_out) = cut(value, 200);
        assert_eq!(kept["data"]["id"], "ttl-1");
        assert!(kept["data"].get("title").is_none());
        assert_eq!(left_out.items, 1);
        assert!(left_out.bytes >= 5000);
    }

    #[test]
    fn a_stream_is_cut_without_being_held_and_keeps_small_fields_after_large_ones() {
        let items: Vec<Value> = (0..10_000)
            .map(|n| json!({"line": n, "text": "z".repeat(50)}))
            .collect();
        let value = json!({"api_version": 1, "data": {"lines": items}, "kind": "log"});
        let text = serde_json::to_vec(&value).expect("json");
        let (kept, left_out) = cut_stream(&text[..], 4096).expect("cut");
        assert!(
            size_of(&kept) <= 4096 + ROOM_FOR_SMALL_FIELDS,
            "{}",
            size_of(&kept)
        );
        assert_eq!(kept["kind"], "log");
        assert_eq!(kept["api_version"], 1);
        let kept_lines = kept["data"]["lines"].as_array().expect("lines").len() as u64;
        assert_eq!(kept_lines + left_out.items, 10_000);
        let whole = text.len() as u64;
        assert!(left_out.bytes > whole / 2 && left_out.bytes < whole);
    }

    #[test]
    fn a_string_or_key_too_long_to_keep_is_shortened_before_it_is_read_and_left_out() {
        let long = "é\\\"\\u00e9x".repeat(20_000);
        let value = json!({"kind": "title", "data": {"title": long.clone(), "id": "ttl-1"}, long.clone(): 1});
        let text = serde_json::to_vec(&value).expect("json");
        let (kept, left_out) = cut_stream(&text[..], 1000).expect("cut");
        assert_eq!(kept, json!({"kind": "title", "data": {"id": "ttl-1"}}));
        assert_eq!(left_out.items, 2);
        let mut shortened = Vec::new();
        LongStrings::new(&text[..], 100)
            .read_to_end(&mut shortened)
            .expect("read");
        let shortened: Value = serde_json::from_slice(&shortened).expect("still JSON");
        let title = shortened["data"]["title"].as_str().expect("a string");
        // Cut past 100 bytes as written (escapes count as written), at a character's start.
        assert!((50..110).contains(&title.len()), "{}", title.len());
        assert!(long.starts_with(title));
    }

    #[test]
    fn a_stream_that_is_not_json_is_said_so() {
        assert!(matches!(
            cut_stream(&b"{\"a\": [1, 2"[..], 100),
            Err(StreamError::NotJson)
        ));
        assert!(matches!(
            cut_stream(&b"{} trailing"[..], 100),
            Err(StreamError::NotJson)
        ));
    }

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            ".{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::btree_map(".{0,12}", inner, 0..8)
                    .prop_map(|fields| Value::Object(fields.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Shortening strings never makes JSON invalid, and leaves a string that fits as it is.
        #[test]
        fn shortened_json_is_json(value in any_json(), longest in 1usize..64) {
            let text = serde_json::to_vec(&value).expect("json");
            let mut shortened = Vec::new();
            LongStrings::new(&text[..], longest).read_to_end(&mut shortened).expect("read");
            let shortened: Value = serde_json::from_slice(&shortened).expect("still JSON");
            if text.len() <= longest {
                prop_assert_eq!(shortened, value);
            }
        }

        /// Whatever the answer and the budget, the cut fits the budget, and what fits whole is
        /// handed over unchanged.
        #[test]
        fn a_cut_always_fits_its_budget(value in any_json(), budget in 8usize..2048) {
            let whole = size_of(&value);
            let (kept, left_out) = cut(value.clone(), budget);
            prop_assert!(size_of(&kept) <= budget.max(4));
            if whole <= budget {
                prop_assert_eq!(kept, value);
                prop_assert!(left_out.is_empty());
            } else {
                prop_assert!(!left_out.is_empty());
            }
        }

        /// Read as a stream, the same answer keeps no more than its budget and is whole when it
        /// fits.
        #[test]
        fn a_streamed_cut_fits_its_budget(value in any_json(), budget in 8usize..2048) {
            let text = serde_json::to_vec(&value).expect("json");
            let (kept, left_out) = cut_stream(&text[..], budget).expect("cut");
            let most = budget + ROOM_FOR_SMALL_FIELDS;
            prop_assert!(size_of(&kept) <= most, "{} > {}", size_of(&kept), most);
            if text.len() <= budget {
                prop_assert_eq!(kept, value);
                prop_assert!(left_out.is_empty());
            }
        }
    }
}
