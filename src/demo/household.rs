//! The household the demo stack serves: believable data behind every read, in the shapes the
//! core answers with, including text a stranger could have written (the demo exists to show that
//! such text stays data).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Value, json};

use super::keys::Scope;
pub use super::query::Query;

const HOUSEHOLD: &str = include_str!("household.json");
/// The held title whose name the demo makes 20 KB long.
const LONGEST_TITLE_ID: &str = "ttl-longest";
const LONGEST_TITLE_BYTES: usize = 20 * 1024;
pub const BUNDLE_NAME: &str = "support-2026-11-18.tar";
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

/// The household as the file holds it, for the actions: they read its services, its updates
/// and its checks.
static CANNED: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(HOUSEHOLD).unwrap_or(Value::Null));

/// The data the read of `path` answers with before anything changes it (null for none).
pub fn canned(path: &str) -> Value {
    CANNED["reads"][path]["data"].clone()
}

/// What the doctor finds now: `/api/checks` as it stands with downloads paused or not, narrowed
/// to one check or category of checks. None when `only` names none.
pub fn diagnosis(paused: bool, only: Option<&str>) -> Option<Value> {
    diagnosed(canned("/api/checks"), paused, only)
}

fn diagnosed(mut report: Value, paused: bool, only: Option<&str>) -> Option<Value> {
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

/// Whether `item` (a service, or anything else with `forms`) serves any of `wanted`.
pub(super) fn serves(item: &Value, wanted: &[&str]) -> bool {
    item["forms"]
        .as_array()
        .is_some_and(|forms| forms.iter().any(|form| wanted.iter().any(|w| form == w)))
}

/// Whether a member with this access has `title` on their shelf: in one of their libraries, and
/// (for films and series) of a rating they are allowed.
fn on_the_shelf(access: &Value, title: &Value) -> bool {
    let library = access["every_library"] == true
        || access["libraries"]
            .as_array()
            .is_some_and(|libraries| libraries.contains(&title["form"]));
    let rated = access.get("rated").filter(|rated| rated.is_object());
    let watched = matches!(field(title, "medium"), Some("film" | "series"));
    let allowed = match (rated, field(title, "certificate")) {
        (Some(_), _) if !watched => true,
        (None, _) => true,
        (Some(rated), Some(certificate)) => !rated["holds_back"]
            .as_array()
            .is_some_and(|held_back| held_back.iter().any(|held| held == certificate)),
        (Some(_), None) => access["unrated"] == "let-through",
    };
    library && allowed
}

/// One title as the held list names it.
fn holding(title: &Value) -> Value {
    json!({
        "id": title["id"],
        "title": title["title"],
        "medium": title["medium"],
        "year": title["year"],
    })
}

/// One title whole, its seasons listed.
fn title_of(raw: &Value) -> Value {
    let id = field(raw, "id").unwrap_or_default().to_owned();
    let mut title = without(raw, "form");
    if let Some(fields) = title.as_object_mut() {
        let count = fields
            .remove("seasons")
            .and_then(|count| count.as_u64())
            .unwrap_or(0);
        let seasons: Vec<Value> = (1..=count)
            .map(|number| {
                json!({
                    "id": format!("{id}-s{number:02}"),
                    "name": format!("Season {number}"),
                    "number": number,
                    "episodes": [],
                })
            })
            .collect();
        fields.insert("seasons".to_owned(), Value::from(seasons));
    }
    title
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

    /// The household's requests: a member's own, the named member's, the household's defaults,
    /// or every member's.
    fn requests(&self, scope: &Scope, query: &Query) -> Result<Answer, Answer> {
        let named = matches!(scope, Scope::Member(_))
            || query.one("member").is_some()
            || query.flag("defaults");
        let people: Vec<&Value> = if named {
            vec![self.whose(scope, query)?]
        } else {
            self.people.iter().collect()
        };
        let defaults = people
            .iter()
            .any(|person| std::ptr::eq(*person, self.defaults()));
        let members: Vec<Value> = if defaults {
            Vec::new()
        } else {
            people.iter().map(|person| self.member(person)).collect()
        };
        let findings = if defaults {
            self.defaults()["findings"].clone()
        } else {
            json!([])
        };
        Ok(envelope(
            "household",
            json!({
                "members": members,
                "available": true,
                "findings": findings,
                "rehearsed": false,
                "policy": self.household["policy"],
                "allows": self.household["allows"],
                "filtering": self.household["filtering"],
            }),
        ))
    }

    /// One member as the household's report names them, with their own requests.
    fn member(&self, person: &Value) -> Value {
        let name = field(person, "name");
        let requests: Vec<Value> = self
            .requests
            .iter()
            .filter(|request| field(request, "member") == name)
            .map(|request| without(request, "member"))
            .collect();
        let mut member = without(person, "id");
        member["requests"] = Value::from(requests);
        member
    }

    fn held(&self, whose: &Value, most: usize) -> Answer {
        let holdings: Vec<Value> = self
            .held
            .iter()
            .filter(|title| on_the_shelf(&whose["access"], title))
            .take(most)
            .map(holding)
            .collect();
        envelope(
            "held",
            json!({
                "member": whose["name"],
                "id": whose["id"],
                "holdings": holdings,
                "available": true,
                "findings": whose.get("findings").cloned().unwrap_or(json!([])),
                "rehearsed": false,
            }),
        )
    }

    fn title(&self, id: &str, whose: &Value) -> Result<Answer, Answer> {
        let Some(title) = self
            .held
            .iter()
            .find(|title| field(title, "id") == Some(id))
        else {
            return Err(refused(
                404,
                "ASK-1",
                "No title by that identifier is held.",
            ));
        };
        if !on_the_shelf(&whose["access"], title) {
            return Err(refused(
                404,
                "PLAY-2",
                "That title is not on this member's shelf.",
            ));
        }
        Ok(envelope(
            "title",
            json!({
                "member": whose["name"],
                "id": id,
                "rehearsed": false,
                "title": title_of(title),
            }),
        ))
    }

    fn watching(&self, whose: &Value, most: usize) -> Answer {
        let part_way: Vec<Value> = self
            .watching
            .iter()
            .filter(|item| item["member"] == whose["name"])
            .take(most)
            .map(|item| without(item, "member"))
            .collect();
        envelope(
            "part-way",
            json!({
                "member": whose["name"],
                "id": whose["id"],
                "part_way": part_way,
                "available": true,
                "findings": whose.get("findings").cloned().unwrap_or(json!([])),
                "rehearsed": false,
            }),
        )
    }

    /// What is playing: a member's own sessions; an administrator sees every session.
    fn playing(&self, whose: &Value) -> Answer {
        let everyone = whose["access"]["administrator"] == true;
        let sessions: Vec<Value> = self
            .playing
            .iter()
            .filter(|session| everyone || session["member"] == whose["name"])
            .map(|session| {
                let mut session = session.clone();
                session["member_id"] = field(&session, "member")
                    .and_then(|member| self.person(member))
                    .map(|person| person["id"].clone())
                    .unwrap_or(Value::Null);
                session
            })
            .collect();
        envelope(
            "playing",
            json!({
                "member": whose["name"],
                "sessions": sessions,
                "available": true,
                "findings": [],
            }),
        )
    }

    /// The forms the stack knows, or a preview of the stack the named ones would make.
    fn forms(&self, wanted: &[&str]) -> Answer {
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
    fn status(&self, wanted: &[&str], paused: bool) -> Answer {
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
    fn bandwidth_paused(&self) -> Answer {
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
    fn news(&self) -> Answer {
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

    /// Where a title got to: the trace whose words the term holds (the first, with no term), its
    /// coverage narrowed to the season asked for.
    fn trace(&self, query: &Query) -> Result<Answer, Answer> {
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
    fn config(&self, key: Option<&str>) -> Result<Answer, Answer> {
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
    fn explain(&self, word: Option<&str>) -> Result<Answer, Answer> {
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
    fn uninstall(&self, tier: Option<&str>) -> Result<Answer, Answer> {
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
    fn update(&self, what: Option<&str>) -> Result<Answer, Answer> {
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
            .map(|line| json!({ "api_version": 1, "kind": "log", "data": without(line, "form") }))
            .collect();
        let tail = query
            .number("tail")
            .and_then(|tail| usize::try_from(tail).ok())
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

    fn read(path: &str, query: &str, scope: &Scope) -> Answer {
        let household = Household::load().expect("the household");
        household.read(path, &Query::parse(Some(query)), scope, false)
    }

    fn data_of(answer: Answer) -> Value {
        match answer {
            Answer::Envelope { data, .. } => data,
            Answer::Problem { code, summary, .. } => panic!("refused: {code} {summary}"),
            _ => panic!("an envelope"),
        }
    }

    fn code_of(answer: Answer) -> (u16, &'static str) {
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
    fn a_member_sees_only_their_own_requests() {
        let data = data_of(read(
            "/api/requests",
            "member=theo",
            &Scope::Member("maya".into()),
        ));
        let members = data["members"].as_array().expect("members");
        assert_eq!(members.len(), 1);
        assert_eq!(members[0]["name"], "maya");
        let requests = members[0]["requests"].as_array().expect("requests");
        assert!(!requests.is_empty());
        let theirs = data_of(read("/api/requests", "", &Scope::Read));
        let everyone: usize = theirs["members"]
            .as_array()
            .expect("members")
            .iter()
            .map(|member| member["requests"].as_array().map_or(0, Vec::len))
            .sum();
        assert!(
            everyone > requests.len(),
            "an operator's key sees everyone's"
        );
    }

    #[test]
    fn a_member_sees_only_their_own_part_way_titles_and_sessions() {
        let maya = Scope::Member("maya".into());
        let watching = data_of(read("/api/watching", "member=theo", &maya));
        assert_eq!(watching["member"], "maya");
        assert!(
            !watching["part_way"]
                .as_array()
                .expect("part way")
                .is_empty()
        );
        let playing = data_of(read("/api/playing", "", &maya));
        let sessions = playing["sessions"].as_array().expect("sessions");
        assert!(!sessions.is_empty());
        assert!(sessions.iter().all(|session| session["member"] == "maya"));
        let most = data_of(read("/api/watching", "most=1", &maya));
        assert_eq!(most["part_way"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn a_member_shelf_holds_only_what_they_may_watch() {
        let theo = data_of(read("/api/held", "", &Scope::Member("theo".into())));
        let ids: Vec<&str> = theo["holdings"]
            .as_array()
            .expect("holdings")
            .iter()
            .filter_map(|title| title["id"].as_str())
            .collect();
        assert!(ids.contains(&"ttl-bluey"));
        assert!(!ids.contains(&"ttl-slow-horses"), "rated 15: {ids:?}");
        assert!(
            !ids.contains(&"ttl-piranesi"),
            "not theo's library: {ids:?}"
        );
        assert_eq!(
            code_of(read(
                "/api/held/ttl-severance",
                "",
                &Scope::Member("theo".into())
            )),
            (404, "PLAY-2")
        );
        let most = data_of(read("/api/held", "most=2", &Scope::Read));
        assert_eq!(most["holdings"].as_array().map(Vec::len), Some(2));
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
    fn an_unknown_title_is_refused() {
        assert_eq!(
            code_of(read("/api/held/ttl-no-such", "", &Scope::Read)),
            (404, "ASK-1")
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

    #[test]
    fn defaults_answer_what_a_new_member_starts_with() {
        let data = data_of(read("/api/requests", "defaults=true", &Scope::Act));
        assert_eq!(data["members"], json!([]));
        assert!(!data["findings"].as_array().expect("findings").is_empty());
        let held = data_of(read("/api/held", "defaults=true", &Scope::Act));
        assert_eq!(held["id"], "defaults");
    }

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
