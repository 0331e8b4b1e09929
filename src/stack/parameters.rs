//! The values a read's parameters or an action's arguments are sent with, as the stack takes them:
//! text, lists of text, true or false, whole numbers. Checked against what a tool offers before
//! they get here (by the argument check of the tool that sends them).

use serde_json::{Map, Value};

/// The largest whole number a parameter takes: far beyond any count the stack answers with.
pub const COUNT_LIMIT: u64 = u32::MAX as u64;

/// Values that passed a tool's check, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parameters(Map<String, Value>);

impl Parameters {
    /// Values a tool's check passed.
    pub(crate) fn checked(values: Map<String, Value>) -> Parameters {
        Parameters(values)
    }

    /// Values as given, unchecked: for tests of what lies beneath the check.
    #[cfg(test)]
    pub fn unchecked(given: Map<String, Value>) -> Parameters {
        Parameters(given)
    }

    /// The values as an action's JSON body.
    pub fn to_body(&self) -> Map<String, Value> {
        self.0.clone()
    }

    pub fn text(&self, name: &str) -> Option<String> {
        self.0.get(name)?.as_str().map(str::to_owned)
    }

    pub fn text_list(&self, name: &str) -> Option<Vec<String>> {
        let list = self.0.get(name)?.as_array()?;
        Some(
            list.iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect(),
        )
    }

    pub fn flag(&self, name: &str) -> Option<bool> {
        self.0.get(name)?.as_bool()
    }

    pub fn count(&self, name: &str) -> Option<u64> {
        whole_number(self.0.get(name)?)
    }
}

/// A whole number of at most [`COUNT_LIMIT`], however JSON writes it (`20` or `20.0`).
pub fn whole_number(value: &Value) -> Option<u64> {
    let number = value.as_u64().or_else(|| {
        let float = value.as_f64()?;
        // Exact: a whole float within the limit converts without loss.
        (float.fract() == 0.0 && (0.0..=COUNT_LIMIT as f64).contains(&float))
            .then_some(float as u64)
    })?;
    (number <= COUNT_LIMIT).then_some(number)
}
