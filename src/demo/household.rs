//! The household the demo stack serves: believable data behind every read, in the shapes the
//! core answers with, including text a stranger could have written (the demo exists to show that
//! such text stays data).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Value, json};

use super::keys::Scope;
pub use query::Query;

mod lookups;
mod members;
mod query;
mod services;
use services::diagnosed;
pub use services::diagnosis;
pub(super) use services::serves;

const HOUSEHOLD: &str = include_str!("household.json");
/// The held title whose name the demo makes 20 KB long.
const LONGEST_TITLE_ID: &str = "ttl-longest";
const LONGEST_TITLE_BYTES: usize = 20 * 1024;
pub const BUNDLE_NAME: &str = "support-2026-11-18.tar";

/// The household as the file holds it, for the actions: they read its services, its updates
/// and its checks.
static CANNED: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(HOUSEHOLD).unwrap_or(Value::Null));

/// The data the read of `path` answers with before anything changes it (null for none).
pub fn canned(path: &str) -> Value {
    CANNED["reads"][path]["data"].clone()
}

#[derive(Deserialize)]
pub struct Household {
    pub stack: String,
    /// The account a key that names no member answers for.
    operator: String,
    people: Vec<Value>,
    /// The household's policy, and the defaults a new member starts with.
    household: Value,
    reads: BTreeMap<String, Canned>,
    self_update: Value,
    traces: Vec<Trace>,
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

/// What `/api/trace` answers for a term that contains any of `matches`.
#[derive(Deserialize)]
struct Trace {
    matches: Vec<String>,
    report: Value,
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

fn field<'a>(item: &'a Value, name: &str) -> Option<&'a str> {
    item.get(name).and_then(Value::as_str)
}

fn envelope(kind: &str, data: Value) -> Answer {
    Answer::Envelope {
        kind: kind.to_owned(),
        data,
    }
}

pub(super) fn refused(status: u16, code: &'static str, summary: impl Into<String>) -> Answer {
    Answer::Problem {
        status,
        code,
        summary: summary.into(),
    }
}

/// `item` without the field the demo keeps it by.
fn without(item: &Value, name: &str) -> Value {
    let mut item = item.clone();
    if let Some(fields) = item.as_object_mut() {
        fields.remove(name);
    }
    item
}

impl Household {
    pub fn load() -> Result<Household, serde_json::Error> {
        let mut household: Household = serde_json::from_str(HOUSEHOLD)?;
        for title in household
            .held
            .iter_mut()
            .filter(|title| field(title, "id") == Some(LONGEST_TITLE_ID))
        {
            title["title"] = Value::from(longest_title());
        }
        Ok(household)
    }

    /// The identifier of the first title the library holds.
    #[cfg(test)]
    pub fn first_held_id(&self) -> String {
        self.held
            .iter()
            .find_map(|title| field(title, "id"))
            .unwrap_or_default()
            .to_owned()
    }

    fn person(&self, name: &str) -> Option<&Value> {
        self.people
            .iter()
            .find(|person| field(person, "name") == Some(name))
    }

    fn defaults(&self) -> &Value {
        &self.household["defaults"]
    }

    /// Whose things a household read answers with: a member key only ever its own account's;
    /// another key the member it names, the household's defaults, or the operator's own.
    fn whose(&self, scope: &Scope, query: &Query) -> Result<&Value, Answer> {
        let account = match scope {
            Scope::Member(account) => account.as_str(),
            _ => {
                let member = query.one("member");
                let defaults = query.flag("defaults");
                if defaults && member.is_some() {
                    return Err(refused(
                        400,
                        "READ-16",
                        "A read answers for one member or with the household's defaults, not both.",
                    ));
                }
                if defaults {
                    return Ok(self.defaults());
                }
                member.unwrap_or(&self.operator)
            }
        };
        self.person(account)
            .ok_or_else(|| refused(404, "PLAY-7", "No one by that name is in the household."))
    }

    fn data(&self, path: &str) -> Value {
        self.reads
            .get(path)
            .map(|canned| canned.data.clone())
            .unwrap_or(Value::Null)
    }

    /// Answers `GET <path>` (already without its query) for a key of this scope.
    pub fn read(&self, path: &str, query: &Query, scope: &Scope, downloads_paused: bool) -> Answer {
        match query
            .check()
            .and_then(|()| self.answer(path, query, scope, downloads_paused))
        {
            Ok(answer) | Err(answer) => answer,
        }
    }

    fn answer(
        &self,
        path: &str,
        query: &Query,
        scope: &Scope,
        paused: bool,
    ) -> Result<Answer, Answer> {
        if let Some(id) = path.strip_prefix("/api/held/") {
            return self.title(id, self.whose(scope, query)?);
        }
        if let Some(name) = path.strip_prefix("/api/bundle/") {
            return if name == BUNDLE_NAME {
                Ok(Answer::File {
                    media_type: "application/octet-stream",
                    bytes: self.bundle(),
                })
            } else {
                Err(refused(404, "ASK-1", "No support bundle by that name."))
            };
        }
        Ok(match path {
            "/api/requests" => self.requests(scope, query)?,
            "/api/held" => self.held(self.whose(scope, query)?, query.most()),
            "/api/watching" => self.watching(self.whose(scope, query)?, query.most()),
            "/api/playing" => self.playing(self.whose(scope, query)?),
            "/api/logs" => Answer::Lines(self.log_lines(query)),
            "/api/forms" => self.forms(&query.all("form")),
            "/api/status" | "/api/services" => self.status(&query.all("form"), paused),
            "/api/checks" => {
                let report =
                    diagnosed(self.data(path), paused, query.one("only")).ok_or_else(|| {
                        refused(
                            400,
                            "READ-11",
                            "No check or group of checks goes by that name.",
                        )
                    })?;
                envelope("doctor", report)
            }
            "/api/stuck" if paused => envelope(
                "stuck",
                json!({
                    "items": [],
                    "incomplete": false,
                    "unsupported": [{
                        "what": "stuck downloads",
                        "because": "Every download is paused, so none counts as stuck.",
                    }],
                }),
            ),
            "/api/bandwidth" if paused => self.bandwidth_paused(),
            "/api/news" => self.news(),
            "/api/trace" => self.trace(query)?,
            "/api/config" => self.config(query.one("key"))?,
            "/api/explain" => self.explain(query.one("word"))?,
            "/api/uninstall" => self.uninstall(query.one("tier"))?,
            "/api/update" => self.update(query.one("what"))?,
            _ => match self.reads.get(path) {
                Some(canned) => envelope(&canned.kind, canned.data.clone()),
                None => return Err(no_such_read()),
            },
        })
    }
}

fn no_such_read() -> Answer {
    refused(404, "READ-3", "This stack serves no such read.")
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

    pub(super) fn read(path: &str, query: &str, scope: &Scope) -> Answer {
        let household = Household::load().expect("the household");
        household.read(path, &Query::parse(Some(query)), scope, false)
    }

    pub(super) fn data_of(answer: Answer) -> Value {
        match answer {
            Answer::Envelope { data, .. } => data,
            Answer::Problem { code, summary, .. } => panic!("refused: {code} {summary}"),
            _ => panic!("an envelope"),
        }
    }

    pub(super) fn code_of(answer: Answer) -> (u16, &'static str) {
        match answer {
            Answer::Problem { status, code, .. } => (status, code),
            _ => panic!("a refusal"),
        }
    }

    #[test]
    fn every_read_of_the_contract_has_an_answer() {
        let household = Household::load().expect("the household");
        for tool in crate::catalogue::reads() {
            let path = tool
                .capability
                .replace("{id}", "ttl-paddington-2")
                .replace("{name}", BUNDLE_NAME);
            if super::super::pictures::picture(&path).is_some() {
                // A title's pictures are answered beside the household, as images.
                continue;
            }
            let answer = household.read(&path, &Query::parse(None), &Scope::Read, false);
            assert!(
                !matches!(answer, Answer::Problem { .. }),
                "{path} has no answer"
            );
        }
    }

    #[test]
    fn the_longest_title_is_twenty_kilobytes() {
        let data = data_of(read("/api/held/ttl-longest", "", &Scope::Read));
        assert_eq!(
            data["title"]["title"].as_str().map(str::len),
            Some(LONGEST_TITLE_BYTES)
        );
        let held = data_of(read("/api/held", "", &Scope::Member("maya".into())));
        assert!(
            held["holdings"]
                .as_array()
                .expect("holdings")
                .iter()
                .any(|title| title["title"].as_str().map(str::len) == Some(LONGEST_TITLE_BYTES)),
            "the held list carries it too"
        );
    }

    #[test]
    fn parameters_are_refused_as_the_core_refuses_them() {
        for (path, query, refusal) in [
            ("/api/held", "most=two", (400, "READ-9")),
            ("/api/held", "most=-1", (400, "READ-9")),
            ("/api/watching", "most=1.5", (400, "READ-9")),
            ("/api/held", "most=1&most=2", (400, "READ-2")),
            ("/api/held", "most=100000", (400, "READ-10")),
            ("/api/logs", "tail=ten", (400, "READ-14")),
            (
                "/api/trace",
                "term=Blue+Lights&season=second",
                (400, "READ-5"),
            ),
            ("/api/requests", "defaults=yes", (400, "READ-15")),
            ("/api/logs", "follow=1", (400, "READ-15")),
            (
                "/api/requests",
                "member=theo&defaults=true",
                (400, "READ-16"),
            ),
            ("/api/held", "member=theo&defaults=true", (400, "READ-16")),
            ("/api/held", "member=nobody", (404, "PLAY-7")),
            ("/api/checks", "only=nothing", (400, "READ-11")),
            ("/api/config", "key=no.such", (400, "READ-6")),
            ("/api/uninstall", "tier=everything", (400, "READ-12")),
            ("/api/update", "what=plex", (400, "READ-13")),
            ("/api/explain", "word=nonsense", (404, "READ-3")),
        ] {
            assert_eq!(
                code_of(read(path, query, &Scope::Act)),
                refusal,
                "{path}?{query}"
            );
        }
        // A member key names no one else, so it is never refused for naming two.
        let data = data_of(read(
            "/api/requests",
            "member=theo&defaults=true",
            &Scope::Member("maya".into()),
        ));
        assert_eq!(data["members"][0]["name"], "maya");
    }
}
