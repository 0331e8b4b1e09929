//! A tape as jsonschema reads a value, so an answer is checked against the contract where it
//! lies. Numbers are read by serde_json, so every bound compares the very number a tree would
//! hold.

use std::borrow::Cow;

use jsonschema::json::{Array, Json, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use serde_json::{Number, Value};

use super::{At, Children, Kind, Members};

/// Values in a tape, for jsonschema.
pub struct OnTape;

impl Json for OnTape {
    type Node<'a> = View<'a>;
    type PreparedKey = String;
    type StringBuffer = ();

    // A lookup walks the members, so a walk of them all costs no more than one.
    const KEYS_PER_LOOKUP: usize = 64;
    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>((): &mut (), string: &str, f: impl FnOnce(View<'_>) -> T) -> T {
        f(View::Name(string))
    }
}

/// A value in a tape, or a key jsonschema asks about as a value of its own (`propertyNames`).
#[derive(Clone, Copy)]
pub enum View<'a> {
    At(At<'a>),
    Name(&'a str),
}

impl<'a> Node<'a, OnTape> for View<'a> {
    type Object = ObjectView<'a>;
    type Array = ArrayView<'a>;
    type Number = Number;

    fn as_object(&self) -> Option<ObjectView<'a>> {
        match self {
            View::At(at) if at.kind() == Kind::Object => Some(ObjectView(*at)),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<ArrayView<'a>> {
        match self {
            View::At(at) if at.kind() == Kind::Array => Some(ArrayView(*at)),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self {
            View::At(at) => at.as_str(),
            View::Name(name) => Some(Cow::Borrowed(name)),
        }
    }

    fn as_number(&self) -> Option<Number> {
        match self {
            View::At(at) if at.kind() == Kind::Number => serde_json::from_str(at.text()).ok(),
            _ => None,
        }
    }

    fn is_number(&self) -> bool {
        matches!(self, View::At(at) if at.kind() == Kind::Number)
    }

    fn as_boolean(&self) -> Option<bool> {
        match self {
            View::At(at) => match at.kind() {
                Kind::Bool(value) => Some(value),
                _ => None,
            },
            View::Name(_) => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, View::At(at) if at.kind() == Kind::Null)
    }

    fn json_type(&self) -> JsonType {
        match self {
            View::At(at) => match at.kind() {
                Kind::Null => JsonType::Null,
                Kind::Bool(_) => JsonType::Boolean,
                Kind::Number => JsonType::Number,
                Kind::String { .. } => JsonType::String,
                Kind::Array => JsonType::Array,
                Kind::Object => JsonType::Object,
            },
            View::Name(_) => JsonType::String,
        }
    }

    // Strings, booleans and null compared where they lie: an `enum` of words is asked of many
    // answers' strings.
    fn equals_value(&self, expected: &Value) -> bool {
        match (self, expected) {
            (_, Value::String(expected)) => self.as_string().as_deref() == Some(expected),
            (View::At(at), Value::Bool(expected)) => at.kind() == Kind::Bool(*expected),
            (View::At(at), Value::Null) => at.kind() == Kind::Null,
            _ => jsonschema::json::cmp::equal(&self.to_value(), expected),
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(match self {
            View::At(at) => at.to_value(),
            View::Name(name) => Value::from(*name),
        })
    }

    fn identity(&self) -> Option<NodeIdentity> {
        match self {
            View::At(at) => {
                let (tape, index) = at.identity();
                Some(NodeIdentity::tagged(tape, index))
            }
            View::Name(_) => None,
        }
    }
}

#[derive(Clone, Copy)]
pub struct ObjectView<'a>(At<'a>);

impl<'a> Object<'a, OnTape> for ObjectView<'a> {
    type Node = View<'a>;
    type MemberName = Cow<'a, str>;
    type MembersIter = MembersView<'a>;

    fn len(&self) -> usize {
        self.0.count()
    }

    fn get(&self, key: &String) -> Option<View<'a>> {
        self.0.get(key).map(View::At)
    }

    fn members(&self) -> MembersView<'a> {
        MembersView(self.0.members())
    }
}

pub struct MembersView<'a>(Members<'a>);

impl<'a> Iterator for MembersView<'a> {
    type Item = (Cow<'a, str>, View<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let (key, value) = self.0.next()?;
        Some((key.as_str().unwrap_or_default(), View::At(value)))
    }
}

#[derive(Clone, Copy)]
pub struct ArrayView<'a>(At<'a>);

impl<'a> Array<'a, OnTape> for ArrayView<'a> {
    type Node = View<'a>;
    type ElementsIter = ElementsView<'a>;

    fn len(&self) -> usize {
        self.0.count()
    }

    fn elements(&self) -> ElementsView<'a> {
        ElementsView(self.0.children())
    }
}

pub struct ElementsView<'a>(Children<'a>);

impl<'a> Iterator for ElementsView<'a> {
    type Item = View<'a>;

    fn next(&mut self) -> Option<View<'a>> {
        self.0.next().map(View::At)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::Tape;
    use proptest::prelude::*;
    use serde_json::json;

    /// Schemas using the keywords the contract does, and those that read values apart.
    fn schemas() -> Vec<Value> {
        vec![
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "integer", "minimum": 0}}}),
            json!({"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}}),
            json!({"type": "array", "items": {"enum": [1, "x", null, true]}, "uniqueItems": true}),
            json!({"propertyNames": {"pattern": "^[a-z]+$"}, "minProperties": 1}),
            json!({"oneOf": [{"type": "number", "multipleOf": 0.5}, {"type": "array", "maxItems": 2}]}),
            json!({"$defs": {"n": {"type": ["object", "null"], "properties": {"b": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}),
            json!({"const": {"a": 1, "b": [1.0, "x"]}}),
        ]
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..5).prop_map(Value::from),
            prop::sample::select(vec![0.5, 1.0, 2.25, -1.5]).prop_map(Value::from),
            prop::sample::select(vec!["a", "x", "abcd", "Ab", "é\n"]).prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop::sample::select(vec!["a", "b", "x", "B"]).prop_map(str::to_owned),
                    inner,
                    0..4
                )
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// A value checked on its tape is valid exactly when it is as a tree, and wrong at the
        /// same place.
        #[test]
        fn a_tape_is_checked_as_its_tree_is(value in any_value()) {
            let tape = Tape::index(value.to_string()).expect("indexed");
            for schema in schemas() {
                let on_tree = jsonschema::draft202012::new(&schema).expect("a schema");
                let on_tape = jsonschema::options_for::<OnTape>()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(&schema)
                    .expect("a schema");
                let root = View::At(tape.root());
                prop_assert_eq!(on_tape.is_valid(root), on_tree.is_valid(&value), "{}", schema);
                let where_tape = on_tape.validate(root).err().map(|error| error.instance_path().to_string());
                let where_tree = on_tree.validate(&value).err().map(|error| error.instance_path().to_string());
                prop_assert_eq!(where_tape, where_tree);
            }
        }
    }
}
