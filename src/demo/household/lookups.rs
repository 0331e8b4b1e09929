//! Reads that look up what the key names: where a title got to, a setting, a word of the
//! glossary, what an uninstall tier removes, and an update.

use serde_json::{Value, json};

use super::{Answer, Household, Query, envelope, field, refused};

/// The removal each uninstall tier makes: what it removes, what it keeps, and the bytes it frees.
const TIERS: [(&str, &str, &str, u64); 4] = [
    (
        "stop",
        "nothing: the services are stopped and left in place",
        "everything",
        0,
    ),
    (
        "services",
        "the services' containers, images and network",
        "settings, service databases, the household, media and backups",
        6_442_450_944,
    ),
    (
        "configuration",
        "the services, their settings and databases, the household and certificates",
        "media and backups",
        15_355_346_944,
    ),
    (
        "media",
        "the services, their configuration, and the media libraries",
        "backups",
        12_645_490_212_864,
    ),
];

impl Household {
    /// Where a title got to: the trace whose words the term holds (the first, with no term), its
    /// coverage narrowed to the season asked for.
    pub(super) fn trace(&self, query: &Query) -> Result<Answer, Answer> {
        let term = query.one("term").map(str::to_lowercase);
        if term.as_deref().is_some_and(|term| term.trim().is_empty()) {
            return Err(refused(400, "READ-4", "The term to trace is empty."));
        }
        let found = match term.as_deref() {
            None => self.traces.first(),
            Some(term) => self.traces.iter().find(|trace| {
                trace
                    .matches
                    .iter()
                    .any(|words| term.contains(words.as_str()))
            }),
        };
        let mut report = match found {
            Some(trace) => trace.report.clone(),
            None => json!({
                "item": query.one("term").unwrap_or_default(),
                "matched": false,
                "furthest": "not-monitored",
                "stages": [],
                "history": [],
                "confidence": "certain",
                "findings": ["Nothing the household holds or has asked for matches this."],
                "coverage": null,
                "stall": null,
            }),
        };
        if let (Some(season), Some(Value::Array(seasons))) = (
            query.number("season"),
            report.pointer_mut("/coverage/seasons"),
        ) {
            seasons.retain(|coverage| coverage["season"] == season);
        }
        Ok(envelope("trace", report))
    }

    /// The settings, or the one `key` names (with those under it).
    pub(super) fn config(&self, key: Option<&str>) -> Result<Answer, Answer> {
        let mut data = self.data("/api/config");
        if let (Some(key), Some(settings)) = (key, data["settings"].as_array_mut()) {
            let under = format!("{key}.");
            settings.retain(|setting| {
                field(setting, "key").is_some_and(|name| name == key || name.starts_with(&under))
            });
            if settings.is_empty() {
                return Err(refused(400, "READ-6", "There is no setting by that name."));
            }
        }
        Ok(envelope("config", data))
    }

    /// The glossary, or the one word asked about (by its name or another it is called).
    pub(super) fn explain(&self, word: Option<&str>) -> Result<Answer, Answer> {
        let data = self.data("/api/explain");
        let Some(word) = word else {
            return Ok(envelope("glossary", data));
        };
        let asked = word.trim().to_lowercase();
        data["words"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|term| {
                term["word"] == asked.as_str()
                    || term["also_called"]
                        .as_array()
                        .is_some_and(|names| names.iter().any(|name| name == asked.as_str()))
            })
            .map(|term| envelope("word", term.clone()))
            .ok_or_else(|| refused(404, "READ-3", "The glossary has no such word."))
    }

    /// What uninstalling would remove, at the tier asked for.
    pub(super) fn uninstall(&self, tier: Option<&str>) -> Result<Answer, Answer> {
        let mut data = self.data("/api/uninstall");
        if let Some(tier) = tier {
            let Some((name, removes, keeps, bytes)) = TIERS.iter().find(|(name, ..)| *name == tier)
            else {
                return Err(refused(400, "READ-12", "There is no removal by that name."));
            };
            let manifest = &mut data["manifest"];
            manifest["tier"] = json!(name);
            manifest["removes"] = json!(removes);
            manifest["keeps"] = json!(keeps);
            manifest["bytes"] = json!(bytes);
        }
        Ok(envelope("uninstall", data))
    }

    /// The stack's updates, one service's, or (for `what=self`) the core's own.
    pub(super) fn update(&self, what: Option<&str>) -> Result<Answer, Answer> {
        let mut data = self.data("/api/update");
        match what {
            None | Some("stack") => {}
            Some("self" | "core" | "lemonfiber") => {
                return Ok(envelope("self-update", self.self_update.clone()));
            }
            Some(service) => {
                let known = self.data("/api/status")["services"]
                    .as_array()
                    .is_some_and(|services| services.iter().any(|s| s["id"] == service));
                if !known {
                    return Err(refused(
                        400,
                        "READ-13",
                        "There is nothing by that name to update.",
                    ));
                }
                if let Some(changes) = data["changes"].as_array_mut() {
                    changes.retain(|change| change["service"] == service);
                    if changes.is_empty() {
                        data["state"] = json!("current");
                    }
                }
            }
        }
        Ok(envelope("update", data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::household::tests::{data_of, read};
    use crate::demo::keys::Scope;

    #[test]
    fn a_trace_narrows_to_the_season_asked_for() {
        let whole = data_of(read("/api/trace", "term=Blue+Lights", &Scope::Act));
        assert_eq!(
            whole["coverage"]["seasons"].as_array().map(Vec::len),
            Some(2)
        );
        let second = data_of(read("/api/trace", "term=blue+lights&season=2", &Scope::Act));
        assert_eq!(second["coverage"]["seasons"][0]["season"], 2);
        assert_eq!(
            second["coverage"]["seasons"].as_array().map(Vec::len),
            Some(1)
        );
        let film = data_of(read("/api/trace", "term=Arrival&season=1", &Scope::Act));
        assert_eq!(film["coverage"], Value::Null, "a film has no seasons");
        let nothing = data_of(read("/api/trace", "term=Nothing+Like+It", &Scope::Act));
        assert_eq!(nothing["matched"], false);
    }
}
