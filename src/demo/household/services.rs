//! The stack's services and what they report: status, the forms, bandwidth, news, the doctor's
//! checks, logs, and the support bundle; some of it as it stands while every download is paused.

use serde_json::{Value, json};

use super::{Answer, Household, Query, canned, envelope, field, without};

/// What the doctor finds now: `/api/checks` as it stands with downloads paused or not, narrowed
/// to one check or category of checks. None when `only` names none.
pub fn diagnosis(paused: bool, only: Option<&str>) -> Option<Value> {
    diagnosed(canned("/api/checks"), paused, only)
}

pub(super) fn diagnosed(mut report: Value, paused: bool, only: Option<&str>) -> Option<Value> {
    if let Some(findings) = report["findings"].as_array_mut() {
        if paused {
            for finding in findings
                .iter_mut()
                .filter(|finding| finding["check"] == "downloads-flowing")
            {
                finding["verdict"] = json!({
                    "outcome": "skipped",
                    "reason": "Every download is paused, so whether downloads flow was not checked.",
                });
            }
        }
        if let Some(only) = only {
            findings.retain(|finding| finding["check"] == only || finding["category"] == only);
            if findings.is_empty() {
                return None;
            }
        }
    }
    Some(report)
}

/// Whether `item` (a service, or anything else with `forms`) serves any of `wanted`.
pub fn serves(item: &Value, wanted: &[&str]) -> bool {
    item["forms"]
        .as_array()
        .is_some_and(|forms| forms.iter().any(|form| wanted.iter().any(|w| form == w)))
}

impl Household {
    /// The forms the stack knows, or a preview of the stack the named ones would make.
    pub(super) fn forms(&self, wanted: &[&str]) -> Answer {
        if wanted.is_empty() {
            return envelope("forms", self.data("/api/forms"));
        }
        let status = self.data("/api/status");
        let services: Vec<&Value> = status["services"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|service| serves(service, wanted))
            .collect();
        let mut profiles: Vec<&Value> = Vec::new();
        for service in &services {
            if !profiles.contains(&&service["profile"]) {
                profiles.push(&service["profile"]);
            }
        }
        let ids: Vec<&Value> = services.iter().map(|service| &service["id"]).collect();
        let filtered: Vec<&Value> = status["filtered"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|filtered| serves(filtered, wanted))
            .collect();
        envelope(
            "preview",
            json!({
                "forms": wanted,
                "profiles": profiles,
                "services": ids,
                "dropped": [],
                "filtered": filtered,
                "footprint": { "estimated_mib": 380 * services.len(), "unestimated": [] },
                "running": ids,
            }),
        )
    }

    /// The stack's status, its services narrowed to the wanted forms. While every download is
    /// paused, part of the stack is held: its condition says so.
    pub(super) fn status(&self, wanted: &[&str], paused: bool) -> Answer {
        let mut data = self.data("/api/status");
        if !wanted.is_empty() {
            for list in ["services", "filtered"] {
                if let Some(items) = data[list].as_array_mut() {
                    items.retain(|item| serves(item, wanted));
                }
            }
            for list in ["forms", "active_forms"] {
                if let Some(forms) = data[list].as_array_mut() {
                    forms.retain(|form| wanted.iter().any(|wanted| form == wanted));
                }
            }
        }
        if paused {
            data["condition"] = json!("partial");
        }
        envelope("status", data)
    }

    /// While every download is paused, the downloader pulls nothing and moves nothing.
    pub(super) fn bandwidth_paused(&self) -> Answer {
        let mut data = self.data("/api/bandwidth");
        for client in data["clients"].as_array_mut().into_iter().flatten() {
            client["pulling"] = json!("stopped");
            for way in ["down", "up"] {
                if client["answer"][way].is_object() {
                    client["answer"][way]["moving"] = json!(0);
                }
            }
        }
        envelope("bandwidth", data)
    }

    /// The news, with the requests that wait for the operator's answer.
    pub(super) fn news(&self) -> Answer {
        let mut data = self.data("/api/news");
        let waiting: Vec<Value> = self
            .requests
            .iter()
            .filter(|request| request["state"] == "waiting-for-approval")
            .map(|request| {
                json!({ "number": request["id"], "by": request["member"], "title": request["title"] })
            })
            .collect();
        data["requests"] = Value::from(waiting);
        envelope("news-items", data)
    }

    pub(super) fn log_lines(&self, query: &Query) -> Vec<Value> {
        let forms = query.all("form");
        let services = query.all("service");
        let lines: Vec<Value> = self
            .logs
            .iter()
            .filter(|line| {
                forms.is_empty() || field(line, "form").is_some_and(|form| forms.contains(&form))
            })
            .filter(|line| {
                services.is_empty() || field(line, "service").is_some_and(|s| services.contains(&s))
            })
            .map(|line| json!({ "api_version": 1, "kind": "log", "data": without(line, "form") }))
            .collect();
        let tail = query
            .number("tail")
            .and_then(|tail| usize::try_from(tail).ok())
            .unwrap_or(lines.len());
        lines[lines.len().saturating_sub(tail)..].to_vec()
    }

    /// A small support bundle: the demo's logs as text, as the real stack packs them.
    pub(super) fn bundle(&self) -> Vec<u8> {
        let mut text = format!("lemonfiber support bundle for {}\n", self.stack);
        for line in &self.logs {
            text.push_str(&line.to_string());
            text.push('\n');
        }
        text.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::household::tests::data_of;
    use crate::demo::keys::Scope;

    #[test]
    fn paused_downloads_show_in_status_stuck_and_bandwidth() {
        let household = Household::load().expect("the household");
        let read = |path: &str, paused: bool| {
            data_of(household.read(path, &Query::parse(None), &Scope::Act, paused))
        };
        assert_eq!(read("/api/status", false)["condition"], "degraded");
        assert_eq!(read("/api/status", true)["condition"], "partial");
        assert_eq!(
            read("/api/stuck", false)["items"].as_array().map(Vec::len),
            Some(3)
        );
        assert_eq!(read("/api/stuck", true)["items"], json!([]));
        assert_eq!(
            read("/api/bandwidth", true)["clients"][0]["pulling"],
            "stopped"
        );
    }

    #[test]
    fn logs_narrow_by_service_and_tail() {
        let household = Household::load().expect("the household");
        let lines =
            household.log_lines(&Query::parse(Some("service=sonarr&service=radarr&tail=2")));
        assert_eq!(lines.len(), 2);
        assert!(
            lines
                .iter()
                .all(|line| matches!(line["data"]["service"].as_str(), Some("sonarr" | "radarr")))
        );
    }
}
