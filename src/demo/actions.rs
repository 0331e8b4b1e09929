//! The demo stack's actions: rehearsals that answer unguessable offers bound to the action and
//! the current state, actions that move it (so older offers go stale), and jobs that finish
//! after a short while.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

/// How long a demo job runs before it finishes.
const JOB_TAKES: Duration = Duration::from_millis(800);
const SERVICES: [&str; 8] = [
    "transmission",
    "prowlarr",
    "jellyfin",
    "jellyseerr",
    "radarr",
    "sonarr",
    "lidarr",
    "readarr",
];

/// What an action answered: the status and an envelope's kind and data, or a refusal.
pub enum Acted {
    Answer {
        status: u16,
        kind: String,
        data: Value,
    },
    Refused {
        status: u16,
        code: &'static str,
        summary: String,
    },
}

#[derive(Default)]
pub struct Actions(Mutex<State>);

#[derive(Default)]
struct State {
    /// Moves on with every action; an offer is bound to the generation it was made in.
    generation: u64,
    /// The offers rehearsals made: each for its action, in the generation it was made in.
    offers: BTreeMap<String, (&'static str, u64)>,
    last_move: Option<String>,
    downloads_paused: bool,
    updates_applied: u32,
    jobs: BTreeMap<String, Job>,
    next_job: u64,
    hold_jobs: bool,
}

struct Job {
    action: &'static str,
    finishes: Option<Instant>,
    outcome: Result<(String, Value), (&'static str, String)>,
}

struct Action {
    name: &'static str,
    rehearsal: bool,
    stale_code: &'static str,
}

const ACTIONS: [Action; 5] = [
    Action {
        name: "restart",
        rehearsal: true,
        stale_code: "LIFE-10",
    },
    Action {
        name: "diagnose",
        rehearsal: false,
        stale_code: "",
    },
    Action {
        name: "update",
        rehearsal: true,
        stale_code: "UPDATE-5",
    },
    Action {
        name: "downloads-pause",
        rehearsal: true,
        stale_code: "RATE-6",
    },
    Action {
        name: "downloads-resume",
        rehearsal: true,
        stale_code: "RATE-6",
    },
];

pub fn is_key_callable(name: &str) -> bool {
    ACTIONS.iter().any(|action| action.name == name)
}

fn texts(body: &Map<String, Value>, name: &str) -> Vec<String> {
    body.get(name)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

impl Actions {
    pub fn downloads_paused(&self) -> bool {
        self.0
            .lock()
            .map(|state| state.downloads_paused)
            .unwrap_or(false)
    }

    /// Moves the state as if someone else had acted, so that offers made before go stale.
    pub fn move_state(&self, what: &str) {
        if let Ok(mut state) = self.0.lock() {
            state.moved(what.to_owned());
        }
    }

    /// Jobs started from now on run until released.
    pub fn hold_jobs(&self) {
        if let Ok(mut state) = self.0.lock() {
            state.hold_jobs = true;
        }
    }

    /// Every held job finishes now, and jobs run their usual time again.
    pub fn release_jobs(&self) {
        if let Ok(mut state) = self.0.lock() {
            state.hold_jobs = false;
            let now = Instant::now();
            for job in state.jobs.values_mut() {
                job.finishes.get_or_insert(now);
            }
        }
    }

    pub fn act(&self, name: &str, body: &Map<String, Value>) -> Acted {
        let Some(action) = ACTIONS.iter().find(|action| action.name == name) else {
            return Acted::Refused {
                status: 404,
                code: "ASK-1",
                summary: "No such action.".into(),
            };
        };
        let Ok(mut state) = self.0.lock() else {
            return Acted::Refused {
                status: 500,
                code: "LIFE-1",
                summary: "The demo stack is broken.".into(),
            };
        };
        let rehearse = body
            .get("dry_run")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if rehearse && action.rehearsal {
            // 128 random bits, as a real core's offers carry.
            let Ok(offer) = super::keys::random_hex(16).map(|hex| format!("lfo-{hex}")) else {
                return Acted::Refused {
                    status: 500,
                    code: "LIFE-1",
                    summary: "The demo stack has no randomness to make an offer with.".into(),
                };
            };
            let made_in = state.generation;
            state.offers.insert(offer.clone(), (action.name, made_in));
            let report = state.rehearse(action.name, body);
            let mut data = json!({ "action": action.name, "rehearsed": true, "offer": offer });
            if let (Some(data), Value::Object(report)) = (data.as_object_mut(), report) {
                data.extend(report);
            }
            return Acted::Answer {
                status: 200,
                kind: "report".into(),
                data,
            };
        }
        // An action that comes with an offer must come with one made for it in the state as it
        // is now.
        if let Some(offer) = body.get("offer").and_then(Value::as_str) {
            let current = state.offers.get(offer) == Some(&(action.name, state.generation));
            if !current {
                let moved = state
                    .last_move
                    .clone()
                    .unwrap_or_else(|| "the offer was not made by this stack".to_owned());
                return Acted::Refused {
                    status: 400,
                    code: action.stale_code,
                    summary: format!("The state this offer was made on has moved: {moved}."),
                };
            }
        }
        // As the real core does, an action with no offer at all is simply carried out.
        state.carry_out(action.name, body)
    }

    pub fn job(&self, id: &str) -> Acted {
        let Ok(state) = self.0.lock() else {
            return Acted::Refused {
                status: 500,
                code: "LIFE-1",
                summary: "The demo stack is broken.".into(),
            };
        };
        let Some(job) = state.jobs.get(id) else {
            return Acted::Refused {
                status: 404,
                code: "ASK-7",
                summary: "No job by that identifier.".into(),
            };
        };
        match (&job.finishes, &job.outcome) {
            (Some(at), Ok((kind, output))) if Instant::now() >= *at => Acted::Answer {
                status: 200,
                kind: kind.clone(),
                data: output.clone(),
            },
            (Some(at), Err((code, summary))) if Instant::now() >= *at => Acted::Refused {
                status: 500,
                code,
                summary: summary.clone(),
            },
            _ => Acted::Answer {
                status: 202,
                kind: "job".into(),
                data: json!({ "job": id, "action": job.action, "state": "running" }),
            },
        }
    }
}

impl State {
    fn moved(&mut self, what: String) {
        self.generation += 1;
        self.last_move = Some(what);
        // Every offer made before is stale now; none is kept.
        self.offers.clear();
    }

    fn rehearse(&self, action: &str, body: &Map<String, Value>) -> Value {
        match action {
            "restart" => {
                let services = texts(body, "services");
                let which = if services.is_empty() {
                    "every service".to_owned()
                } else {
                    services.join(", ")
                };
                json!({ "would": format!("restart {which}; what is playing pauses for about 20 seconds"), "playing_interrupted": 2 })
            }
            "update" => match body.get("service").and_then(Value::as_str) {
                Some(service) => {
                    json!({ "would": format!("update {service} to its newest version and restart it"), "service": service })
                }
                None => {
                    json!({ "would": "update the lemonfiber core; it is current, so nothing would change" })
                }
            },
            "downloads-pause" => {
                json!({ "would": "pause every download", "running": 2, "queued": 1 })
            }
            _ => {
                json!({ "would": "resume every paused download", "paused": if self.downloads_paused { 3 } else { 0 } })
            }
        }
    }

    fn carry_out(&mut self, action: &'static str, body: &Map<String, Value>) -> Acted {
        match action {
            "diagnose" => {
                self.moved("the doctor ran".to_owned());
                let only = body.get("only").and_then(Value::as_str);
                let checks = json!([
                    {"id": "disk-space", "state": "warn", "summary": "media-b is 91% full"},
                    {"id": "downloads", "state": if self.downloads_paused { "warn" } else { "pass" }, "summary": "downloads are moving"},
                    {"id": "readarr", "state": "warn", "summary": "readarr answers slowly"},
                ]);
                let checks: Vec<Value> = checks
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|check| only.is_none_or(|only| check["id"] == only))
                    .cloned()
                    .collect();
                Acted::Answer {
                    status: 200,
                    kind: "doctor".into(),
                    data: json!({ "checks": checks, "disruptive": body.get("disruptive") }),
                }
            }
            "downloads-pause" => {
                self.downloads_paused = true;
                self.moved("downloads were paused".to_owned());
                Acted::Answer {
                    status: 200,
                    kind: "report".into(),
                    data: json!({ "paused": true, "downloads_paused": 3 }),
                }
            }
            "downloads-resume" => {
                self.downloads_paused = false;
                self.moved("downloads were resumed".to_owned());
                Acted::Answer {
                    status: 200,
                    kind: "report".into(),
                    data: json!({ "paused": false, "downloads_resumed": 3 }),
                }
            }
            "restart" => {
                let services = texts(body, "services");
                self.moved(format!(
                    "{} restarted",
                    if services.is_empty() {
                        "every service was".to_owned()
                    } else {
                        services.join(", ") + " was"
                    }
                ));
                let restarted = if services.is_empty() {
                    SERVICES.iter().map(|s| s.to_string()).collect()
                } else {
                    services
                };
                self.start_job(
                    action,
                    Ok(("restart".to_owned(), json!({ "restarted": restarted }))),
                )
            }
            _ => {
                let service = body
                    .get("service")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.updates_applied += 1;
                self.moved(format!(
                    "an update was applied ({} so far)",
                    self.updates_applied
                ));
                let outcome = match service {
                    Some(service) if !SERVICES.contains(&service.as_str()) => Err((
                        "UPDATE-2",
                        format!("The update stopped: this stack has no service named {service}."),
                    )),
                    Some(service) => Ok((
                        "update".to_owned(),
                        json!({ "updated": service, "updates_applied": self.updates_applied }),
                    )),
                    None => Ok((
                        "update".to_owned(),
                        json!({ "updated": "core", "changed": false, "updates_applied": self.updates_applied }),
                    )),
                };
                self.start_job(action, outcome)
            }
        }
    }

    fn start_job(
        &mut self,
        action: &'static str,
        outcome: Result<(String, Value), (&'static str, String)>,
    ) -> Acted {
        self.next_job += 1;
        let id = format!("job-{:04}", self.next_job);
        let finishes = (!self.hold_jobs).then(|| Instant::now() + JOB_TAKES);
        self.jobs.insert(
            id.clone(),
            Job {
                action,
                finishes,
                outcome,
            },
        );
        Acted::Answer {
            status: 202,
            kind: "job".into(),
            data: json!({ "job": id, "action": action }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(value: Value) -> Map<String, Value> {
        let Value::Object(body) = value else {
            panic!("an object")
        };
        body
    }

    fn offer_of(acted: Acted) -> String {
        let Acted::Answer { data, .. } = acted else {
            panic!("a report")
        };
        data["offer"].as_str().expect("an offer").to_owned()
    }

    #[test]
    fn a_rehearsal_writes_nothing_and_an_action_moves_the_state() {
        let actions = Actions::default();
        let offer = offer_of(actions.act("downloads-pause", &body(json!({"dry_run": true}))));
        assert!(!actions.downloads_paused(), "a rehearsal changes nothing");
        assert_ne!(
            offer,
            offer_of(actions.act("downloads-pause", &body(json!({"dry_run": true})))),
            "offers cannot be guessed from one another"
        );
        assert!(
            matches!(
                actions.act("downloads-resume", &body(json!({"offer": offer}))),
                Acted::Refused { status: 400, .. }
            ),
            "an offer acts only for the action it was made for"
        );
        assert!(matches!(
            actions.act("downloads-pause", &body(json!({"offer": offer}))),
            Acted::Answer { status: 200, .. }
        ));
        assert!(actions.downloads_paused());
        let again = actions.act("downloads-pause", &body(json!({"offer": offer})));
        assert!(
            matches!(
                again,
                Acted::Refused {
                    status: 400,
                    code: "RATE-6",
                    ..
                }
            ),
            "the old offer is stale"
        );
    }

    #[test]
    fn an_action_without_an_offer_is_carried_out_as_the_core_does() {
        let actions = Actions::default();
        assert!(matches!(
            actions.act("downloads-pause", &body(json!({}))),
            Acted::Answer { status: 200, .. }
        ));
        assert!(actions.downloads_paused());
    }

    #[test]
    fn someone_else_acting_makes_an_offer_stale_naming_what_moved() {
        let actions = Actions::default();
        let offer = offer_of(actions.act("restart", &body(json!({"dry_run": true}))));
        actions.move_state("someone else restarted transmission");
        let Acted::Refused {
            status: 400,
            code: "LIFE-10",
            summary,
        } = actions.act("restart", &body(json!({"offer": offer})))
        else {
            panic!("stale")
        };
        assert!(summary.contains("someone else restarted transmission"));
    }

    #[test]
    fn an_update_is_a_job_that_finishes_and_is_not_idempotent() {
        let actions = Actions::default();
        let Acted::Answer {
            status: 202, data, ..
        } = actions.act("update", &body(json!({})))
        else {
            panic!("a job")
        };
        let job = data["job"].as_str().expect("job").to_owned();
        assert!(
            matches!(actions.job(&job), Acted::Answer { status: 202, .. }),
            "running at first"
        );
        std::thread::sleep(JOB_TAKES + Duration::from_millis(50));
        let Acted::Answer {
            status: 200, data, ..
        } = actions.job(&job)
        else {
            panic!("finished")
        };
        assert_eq!(data["updates_applied"], 1);
        let Acted::Answer { data, .. } = actions.act("update", &body(json!({}))) else {
            panic!("a job")
        };
        assert_ne!(data["job"], json!(job), "a second update is a second job");
        assert!(matches!(
            actions.job("job-9999"),
            Acted::Refused {
                status: 404,
                code: "ASK-7",
                ..
            }
        ));
    }
}
