//! A read's query as the demo stack reads it: its parameters, and the refusals the core gives a
//! parameter of the wrong form.

use super::{Answer, refused};

/// The most entries one read answers with; asking for more is refused, as the core does.
const MOST_AT_ONCE: u64 = 1000;
/// The parameters a read takes once at most.
const GIVEN_ONCE: [&str; 13] = [
    "member", "defaults", "most", "term", "season", "key", "word", "tier", "what", "to", "tail",
    "follow", "only",
];

/// A read's query, with repeatable parameters kept in order.
pub struct Query(Vec<(String, String)>);

impl Query {
    pub fn parse(raw: Option<&str>) -> Query {
        Query(
            url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
                .into_owned()
                .collect(),
        )
    }

    pub(super) fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .collect()
    }

    pub(super) fn one(&self, name: &str) -> Option<&str> {
        self.all(name).into_iter().next()
    }

    /// A whole number the query gives (checked already by [`Query::check`]).
    pub(super) fn number(&self, name: &str) -> Option<u64> {
        self.one(name).and_then(|number| number.parse().ok())
    }

    pub(super) fn most(&self) -> usize {
        self.number("most")
            .and_then(|most| usize::try_from(most).ok())
            .unwrap_or(usize::MAX)
    }

    pub(super) fn flag(&self, name: &str) -> bool {
        self.one(name) == Some("true")
    }

    /// Refuses the query as the core does: a parameter given twice, a count or season that is
    /// not a whole number, more at once than a read answers with, a choice that is neither true
    /// nor false.
    pub(super) fn check(&self) -> Result<(), Answer> {
        if let Some(name) = GIVEN_ONCE.iter().find(|name| self.all(name).len() > 1) {
            return Err(refused(
                400,
                "READ-2",
                format!("The parameter {name} is given more than once."),
            ));
        }
        let wholes = [
            ("most", "READ-9", "a whole number of entries"),
            ("tail", "READ-14", "a whole number of lines"),
            ("season", "READ-5", "a season's number"),
        ];
        for (name, code, what) in wholes {
            let whole = match name {
                "season" => self.one(name).is_none_or(|v| v.parse::<u32>().is_ok()),
                _ => self.one(name).is_none_or(|v| v.parse::<u64>().is_ok()),
            };
            if !whole {
                return Err(refused(400, code, format!("{name} must be {what}.")));
            }
        }
        if self.number("most").is_some_and(|most| most > MOST_AT_ONCE) {
            return Err(refused(
                400,
                "READ-10",
                format!("One read answers with {MOST_AT_ONCE} entries at most."),
            ));
        }
        for name in ["defaults", "follow"] {
            if self
                .one(name)
                .is_some_and(|choice| !matches!(choice, "true" | "false"))
            {
                return Err(refused(
                    400,
                    "READ-15",
                    format!("{name} must be true or false."),
                ));
            }
        }
        Ok(())
    }
}
