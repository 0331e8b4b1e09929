//! What the household's members see: their requests, the titles on their shelf, what they are
//! part way through and what is playing, each narrowed to whose it is.

use serde_json::{Value, json};

use super::{Answer, Household, Query, envelope, field, refused, without};
use crate::demo::keys::Scope;

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
    /// The household's requests: a member's own, the named member's, the household's defaults,
    /// or every member's.
    pub(super) fn requests(&self, scope: &Scope, query: &Query) -> Result<Answer, Answer> {
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

    pub(super) fn held(&self, whose: &Value, most: usize) -> Answer {
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

    pub(super) fn title(&self, id: &str, whose: &Value) -> Result<Answer, Answer> {
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

    pub(super) fn watching(&self, whose: &Value, most: usize) -> Answer {
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
    pub(super) fn playing(&self, whose: &Value) -> Answer {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::household::tests::{code_of, data_of, read};

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
    fn an_unknown_title_is_refused() {
        assert_eq!(
            code_of(read("/api/held/ttl-no-such", "", &Scope::Read)),
            (404, "ASK-1")
        );
    }

    #[test]
    fn defaults_answer_what_a_new_member_starts_with() {
        let data = data_of(read("/api/requests", "defaults=true", &Scope::Act));
        assert_eq!(data["members"], json!([]));
        assert!(!data["findings"].as_array().expect("findings").is_empty());
        let held = data_of(read("/api/held", "defaults=true", &Scope::Act));
        assert_eq!(held["id"], "defaults");
    }
}
