//! The household the demo stack serves: believable data behind every read, including text a
//! stranger could have written (the demo exists to show that such text stays data).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use super::keys::Scope;

const HOUSEHOLD: &str = include_str!("household.json");
/// The held title whose name the demo makes 20 KB long.
const LONGEST_TITLE_ID: &str = "ttl-longest";
const LONGEST_TITLE_BYTES: usize = 20 * 1024;
pub const BUNDLE_NAME: &str = "support-2026-11-18.tar";

#[derive(Deserialize)]
pub struct Household {
    pub stack: String,
    reads: BTreeMap<String, Canned>,
    requests: Vec<Value>,
    held: Vec<Value>,
    watching: Vec<Value>,
    playing: Vec<Value>,
    logs: Vec<Value>,
}

#[derive(Deserialize)]
struct Canned {
    kind: String,
    data: Value,
}

/// What the demo answers one read with.
pub enum Answer {
    Envelope {
        kind: String,
        data: Value,
    },
    Lines(Vec<Value>),
    File {
        media_type: &'static str,
        bytes: Vec<u8>,
    },
    Problem {
        status: u16,
        code: &'static str,
        summary: String,
    },
}

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

    fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .collect()
    }

    fn one(&self, name: &str) -> Option<&str> {
        self.all(name).into_iter().next()
    }
}

fn field<'a>(item: &'a Value, name: &str) -> Option<&'a str> {
    item.get(name).and_then(Value::as_str)
}

fn envelope(kind: &str, data: Value) -> Answer {
    Answer::Envelope {
        kind: kind.to_owned(),
        data,
    }
}

impl Household {
    pub fn load() -> Result<Household, String> {
        let mut household: Household = serde_json::from_str(HOUSEHOLD)
            .map_err(|error| format!("the demo household does not parse: {error}"))?;
        for title in household
            .held
            .iter_mut()
            .filter(|title| field(title, "id") == Some(LONGEST_TITLE_ID))
        {
            title["title"] = Value::from(longest_title());
        }
        Ok(household)
    }

    /// The member a request is about: a member key only ever sees its own account.
    fn member<'a>(&self, scope: &'a Scope, query: &'a Query) -> Option<&'a str> {
        match scope {
            Scope::Member(account) => Some(account),
            _ => query.one("member"),
        }
    }

    fn mine(
        &self,
        items: &[Value],
        member_field: &str,
        member: Option<&str>,
        most: Option<usize>,
    ) -> Vec<Value> {
        items
            .iter()
            .filter(|item| member.is_none_or(|member| field(item, member_field) == Some(member)))
            .take(most.unwrap_or(usize::MAX))
            .cloned()
            .collect()
    }

    /// Answers `GET <path>` (already without its query) for a key of this scope.
    pub fn read(&self, path: &str, query: &Query, scope: &Scope, downloads_paused: bool) -> Answer {
        let member = self.member(scope, query);
        let most = query.one("most").and_then(|most| most.parse().ok());
        if let Some(id) = path.strip_prefix("/api/held/") {
            return match self
                .held
                .iter()
                .find(|title| field(title, "id") == Some(id))
            {
                Some(title) => envelope("title", title.clone()),
                None => Answer::Problem {
                    status: 404,
                    code: "ASK-1",
                    summary: "No title by that identifier is held.".into(),
                },
            };
        }
        if let Some(name) = path.strip_prefix("/api/bundle/") {
            return if name == BUNDLE_NAME {
                Answer::File {
                    media_type: "application/octet-stream",
                    bytes: self.bundle(),
                }
            } else {
                Answer::Problem {
                    status: 404,
                    code: "ASK-1",
                    summary: "No support bundle by that name.".into(),
                }
            };
        }
        match path {
            "/api/requests" => {
                let requests = self.mine(&self.requests, "member", member, None);
                envelope("household", json!({ "requests": requests }))
            }
            "/api/held" => {
                let titles: Vec<Value> = self
                    .held
                    .iter()
                    .take(most.unwrap_or(usize::MAX))
                    .cloned()
                    .collect();
                envelope("held", json!({ "titles": titles }))
            }
            "/api/watching" => envelope(
                "part-way",
                json!({ "part_way": self.mine(&self.watching, "member", member, most) }),
            ),
            "/api/playing" => envelope(
                "playing",
                json!({ "playing": self.mine(&self.playing, "member", member, None) }),
            ),
            "/api/logs" => Answer::Lines(self.log_lines(query)),
            "/api/forms" => self.filtered(path, "forms", "name", &query.all("form")),
            "/api/services" => self.filtered(path, "services", "form", &query.all("form")),
            "/api/status" | "/api/stuck" if downloads_paused => self.paused(path),
            _ => match self.reads.get(path) {
                Some(canned) => envelope(&canned.kind, canned.data.clone()),
                None => no_such_read(),
            },
        }
    }

    /// A canned read whose list is narrowed to items whose `by` field is one of `wanted`; shared
    /// items (whose field is null) stay, as every form uses them.
    fn filtered(&self, path: &str, list: &str, by: &str, wanted: &[&str]) -> Answer {
        let Some(canned) = self.reads.get(path) else {
            return no_such_read();
        };
        let mut data = canned.data.clone();
        if !wanted.is_empty()
            && let Some(items) = data.get_mut(list).and_then(Value::as_array_mut)
        {
            items.retain(|item| match item.get(by) {
                Some(Value::String(value)) => wanted.contains(&value.as_str()),
                _ => true,
            });
        }
        envelope(&canned.kind, data)
    }

    /// What status and stuck say while every download is paused.
    fn paused(&self, path: &str) -> Answer {
        let Some(canned) = self.reads.get(path) else {
            return no_such_read();
        };
        let mut data = canned.data.clone();
        if let Some(downloads) = data.get_mut("downloads") {
            downloads["paused_all"] = Value::Bool(true);
            downloads["paused"] = json!(3);
            downloads["running"] = json!(0);
        }
        if data.get("stuck").is_some() {
            data["stuck"] = json!([]);
            data["note"] = json!("Every download is paused, so none counts as stuck.");
        }
        envelope(&canned.kind, data)
    }

    fn log_lines(&self, query: &Query) -> Vec<Value> {
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
            .map(|line| json!({ "api_version": 1, "kind": "log", "data": line }))
            .collect();
        let tail = query
            .one("tail")
            .and_then(|tail| tail.parse::<usize>().ok())
            .unwrap_or(lines.len());
        lines[lines.len().saturating_sub(tail)..].to_vec()
    }

    /// A small support bundle: the demo's logs as text, as the real stack packs them.
    fn bundle(&self) -> Vec<u8> {
        let mut text = format!("lemonfiber support bundle for {}\n", self.stack);
        for line in &self.logs {
            text.push_str(&line.to_string());
            text.push('\n');
        }
        text.into_bytes()
    }
}

fn no_such_read() -> Answer {
    Answer::Problem {
        status: 404,
        code: "ASK-1",
        summary: "This stack serves no such read.".into(),
    }
}

/// A title far longer than any real one: the server must carry it whole, as data.
fn longest_title() -> String {
    let phrase = "The Extremely Long Director's Cut of Everything, Part ";
    let mut title = String::with_capacity(LONGEST_TITLE_BYTES + phrase.len());
    let mut part = 1;
    while title.len() < LONGEST_TITLE_BYTES {
        title.push_str(phrase);
        title.push_str(&part.to_string());
        title.push_str("; ");
        part += 1;
    }
    title.truncate(LONGEST_TITLE_BYTES);
    title
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_read_of_the_contract_has_an_answer() {
        let household = Household::load().expect("the household");
        for tool in crate::catalogue::reads() {
            let path = tool
                .capability
                .replace("{id}", "ttl-paddington-2")
                .replace("{name}", BUNDLE_NAME);
            let answer = household.read(&path, &Query::parse(None), &Scope::Read, false);
            assert!(
                !matches!(answer, Answer::Problem { .. }),
                "{path} has no answer"
            );
        }
    }

    #[test]
    fn a_member_sees_only_their_own_requests() {
        let household = Household::load().expect("the household");
        let Answer::Envelope { data, .. } = household.read(
            "/api/requests",
            &Query::parse(Some("member=theo")),
            &Scope::Member("maya".into()),
            false,
        ) else {
            panic!("an envelope")
        };
        let requests = data["requests"].as_array().expect("requests");
        assert!(!requests.is_empty());
        assert!(requests.iter().all(|request| request["member"] == "maya"));
    }

    #[test]
    fn the_longest_title_is_twenty_kilobytes() {
        let household = Household::load().expect("the household");
        let Answer::Envelope { data, .. } = household.read(
            "/api/held/ttl-longest",
            &Query::parse(None),
            &Scope::Read,
            false,
        ) else {
            panic!("an envelope")
        };
        assert_eq!(
            data["title"].as_str().map(str::len),
            Some(LONGEST_TITLE_BYTES)
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
