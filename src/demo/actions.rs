//! The demo stack's actions, as the core takes them: a rehearsal answers the action's report with
//! an unguessable offer bound to the action and the current state; an action carried out answers
//! a job (`202`, the core's `Started`) and moves the state, so older offers go stale; the job
//! finishes after a short while with the action's report, or stops with a refusal.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::household;

/// How long a demo job runs before it finishes.
const JOB_TAKES: Duration = Duration::from_millis(800);
/// What the stack would cost to restart, for each service restarted, in MiB of memory.
const MIB_A_SERVICE: usize = 380;

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

/// What a job ends with: the kind and data of the action's report, or the code and summary of
/// the refusal it stopped with.
type Outcome = Result<(&'static str, Value), (&'static str, String)>;

struct Job {
    action: &'static str,
    finishes: Option<Instant>,
    outcome: Outcome,
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

/// The stack's services, as its status names them.
fn stack_services() -> Vec<Value> {
    household::canned("/api/status")["services"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The restart `body` asks for, as the core's lifecycle report says it: rehearsed, what would be
/// restarted; carried out, what was.
fn restart(body: &Map<String, Value>, rehearsed: bool) -> Value {
    let asked = texts(body, "services");
    let forms = texts(body, "forms");
    let wanted: Vec<&str> = forms.iter().map(String::as_str).collect();
    let stack = stack_services();
    let every = asked.is_empty() && forms.is_empty();
    let mut chosen: Vec<Value> = stack
        .iter()
        .filter(|service| {
            every
                || asked.iter().any(|name| service["id"] == name.as_str())
                || household::serves(service, &wanted)
        })
        .cloned()
        .collect();
    for name in asked
        .iter()
        .filter(|name| !stack.iter().any(|service| service["id"] == name.as_str()))
    {
        chosen.push(json!({
            "id": name,
            "name": name,
            "describes": "Not a service of this stack.",
            "profile": "unknown",
            "forms": [],
            "state": "absent",
            "criticality": "optional",
            "depends_on": [],
        }));
    }
    if !rehearsed {
        for service in chosen
            .iter_mut()
            .filter(|service| service["state"] != "absent")
        {
            service["state"] = json!("running");
        }
    }
    let ids: Vec<Value> = chosen.iter().map(|service| service["id"].clone()).collect();
    let running: Vec<Value> = chosen
        .iter()
        .filter(|service| service["state"] != "absent")
        .map(|service| service["id"].clone())
        .collect();
    let mut profiles: Vec<Value> = Vec::new();
    let mut served: Vec<Value> = Vec::new();
    for service in &chosen {
        if !profiles.contains(&service["profile"]) {
            profiles.push(service["profile"].clone());
        }
        for form in service["forms"].as_array().into_iter().flatten() {
            if !served.contains(form) {
                served.push(form.clone());
            }
        }
    }
    let plan_forms = if forms.is_empty() {
        served
    } else {
        forms.iter().map(|form| json!(form)).collect()
    };
    let mut command: Vec<Value> = [
        "podman",
        "compose",
        "--project-name",
        "lemonfiber",
        "restart",
    ]
    .iter()
    .map(|word| json!(word))
    .collect();
    command.extend(ids.iter().cloned());
    json!({
        "action": "restart",
        "plan": {
            "forms": plan_forms,
            "profiles": profiles,
            "services": ids,
            "dropped": [],
            "filtered": [],
            "footprint": { "estimated_mib": MIB_A_SERVICE * running.len(), "unestimated": [] },
            "running": running,
        },
        "command": command,
        "rehearsed": rehearsed,
        "services": chosen,
        "stack_edits": [],
        "port_conflicts": [],
        "status": if rehearsed { Value::Null } else { json!(0) },
    })
}

/// The update `body` asks for, as the core's stack update report says it: rehearsed, what would
/// change; carried out, what was applied (the `applied`-th update, after a backup), or why it
/// stopped.
fn update(body: &Map<String, Value>, rehearsed: bool, applied: u32) -> Outcome {
    let service = body.get("service").and_then(Value::as_str);
    let mut report = household::canned("/api/update");
    report["rehearsed"] = json!(rehearsed);
    report["confirmed"] = json!(
        body.get("confirm")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    );
    let unknown =
        service.filter(|service| !stack_services().iter().any(|known| known["id"] == *service));
    if let Some(service) = unknown {
        if !rehearsed {
            return Err((
                "UPDATE-2",
                format!("The update stopped: this stack has no service named {service}."),
            ));
        }
        report["changes"] = json!([]);
        report["state"] = json!("current");
        report["halted"] =
            json!("This stack has no service by that name, so nothing would be updated.");
        return Ok(("update", report));
    }
    let changes: Vec<Value> = report["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|change| service.is_none_or(|service| change["service"] == service))
        .cloned()
        .collect();
    let state = match (changes.is_empty(), rehearsed) {
        (true, _) => "current",
        (false, true) => "updates-available",
        (false, false) => "updated",
    };
    if !rehearsed && !changes.is_empty() {
        let done: Vec<Value> = changes
            .iter()
            .map(|change| {
                json!({
                    "service": change["service"],
                    "from": change["current"],
                    "to": change["target"],
                    "ending": "updated",
                    "reversal": "rollback",
                    "detail": null,
                })
            })
            .collect();
        report["applied"] = Value::from(done);
        report["backup"] = json!(format!("lf-2026-11-18-before-update-{applied}"));
    }
    report["changes"] = Value::from(changes);
    report["state"] = json!(state);
    Ok(("update", report))
}

/// Pausing or resuming every download, as the core's pausing report says it: the downloader as
/// it was, and as it is (or would be) after.
fn pausing(pause: bool, was_paused: bool, rehearsed: bool) -> Value {
    let pulling = |stopped: bool| if stopped { "stopped" } else { "fetching" };
    let caution = match (rehearsed, pause, was_paused) {
        (true, true, false) => {
            json!(
                "2 running downloads and 1 queued wait until downloads are resumed; seeding stops too."
            )
        }
        (true, _, _) if pause == was_paused => json!("Nothing would change."),
        _ => Value::Null,
    };
    json!({
        "asked": if pause { "pause" } else { "resume" },
        "clients": [{ "client": "transmission", "was": pulling(was_paused), "now": pulling(pause) }],
        "rehearsed": rehearsed,
        "caution": caution,
    })
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

    /// Pauses or resumes every download as if someone else had, so what the status answers
    /// changes under a running server.
    pub fn set_downloads_paused(&self, paused: bool) {
        if let Ok(mut state) = self.0.lock() {
            state.downloads_paused = paused;
            let what = if paused { "paused" } else { "resumed" };
            state.moved(format!("someone else {what} the downloads"));
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
            return match state.rehearse(action.name, body) {
                Ok((kind, mut report)) => {
                    report["offer"] = Value::from(offer);
                    Acted::Answer {
                        status: 200,
                        kind: kind.to_owned(),
                        data: report,
                    }
                }
                Err((code, summary)) => Acted::Refused {
                    status: 400,
                    code,
                    summary,
                },
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

    /// Where a job stands: `202` with the job while it runs, then the action's report, or the
    /// refusal it stopped with.
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
            (Some(at), Ok((kind, report))) if Instant::now() >= *at => Acted::Answer {
                status: 200,
                kind: (*kind).to_owned(),
                data: report.clone(),
            },
            (Some(at), Err((code, summary))) if Instant::now() >= *at => Acted::Refused {
                status: 500,
                code,
                summary: summary.clone(),
            },
            _ => started(id, job.action),
        }
    }
}

/// The core's answer to an action it has started: the job to ask after.
fn started(job: &str, action: &str) -> Acted {
    Acted::Answer {
        status: 202,
        kind: "job".into(),
        data: json!({ "job": job, "action": action }),
    }
}

impl State {
    fn moved(&mut self, what: String) {
        self.generation += 1;
        self.last_move = Some(what);
        // Every offer made before is stale now; none is kept.
        self.offers.clear();
    }

    /// The report a rehearsal answers with: what the action would do, writing nothing.
    fn rehearse(&self, action: &str, body: &Map<String, Value>) -> Outcome {
        match action {
            "restart" => Ok(("lifecycle", restart(body, true))),
            "update" => update(body, true, self.updates_applied),
            "downloads-pause" => Ok(("pausing", pausing(true, self.downloads_paused, true))),
            _ => Ok(("pausing", pausing(false, self.downloads_paused, true))),
        }
    }

    fn carry_out(&mut self, action: &'static str, body: &Map<String, Value>) -> Acted {
        let outcome = match action {
            "diagnose" => {
                let only = body.get("only").and_then(Value::as_str);
                let Some(report) = household::diagnosis(self.downloads_paused, only) else {
                    return Acted::Refused {
                        status: 400,
                        code: "READ-11",
                        summary: "No check or group of checks goes by that name.".into(),
                    };
                };
                self.moved("the doctor ran".to_owned());
                Ok(("doctor", report))
            }
            "downloads-pause" | "downloads-resume" => {
                let pause = action == "downloads-pause";
                let report = pausing(pause, self.downloads_paused, false);
                self.downloads_paused = pause;
                self.moved(
                    if pause {
                        "downloads were paused"
                    } else {
                        "downloads were resumed"
                    }
                    .to_owned(),
                );
                Ok(("pausing", report))
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
                Ok(("lifecycle", restart(body, false)))
            }
            _ => {
                self.updates_applied += 1;
                self.moved(format!(
                    "an update was applied ({} so far)",
                    self.updates_applied
                ));
                update(body, false, self.updates_applied)
            }
        };
        self.start_job(action, outcome)
    }

    fn start_job(&mut self, action: &'static str, outcome: Outcome) -> Acted {
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
        started(&id, action)
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

    fn job_of(acted: Acted) -> String {
        let Acted::Answer {
            status: 202,
            kind,
            data,
        } = acted
        else {
            panic!("a job")
        };
        assert_eq!(kind, "job");
        data["job"].as_str().expect("the job's name").to_owned()
    }

    /// The report a held job finishes with, once released.
    fn finished(actions: &Actions, job: &str) -> (String, Value) {
        actions.release_jobs();
        let Acted::Answer {
            status: 200,
            kind,
            data,
        } = actions.job(job)
        else {
            panic!("finished")
        };
        (kind, data)
    }

    #[test]
    fn a_rehearsal_writes_nothing_and_an_action_moves_the_state() {
        let actions = Actions::default();
        let rehearsed = actions.act("downloads-pause", &body(json!({"dry_run": true})));
        let Acted::Answer {
            status: 200,
            kind,
            data,
        } = &rehearsed
        else {
            panic!("a report")
        };
        assert_eq!(kind, "pausing");
        assert_eq!(data["rehearsed"], true);
        let offer = offer_of(rehearsed);
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
        actions.hold_jobs();
        let job = job_of(actions.act("downloads-pause", &body(json!({"offer": offer}))));
        assert!(actions.downloads_paused());
        let (kind, report) = finished(&actions, &job);
        assert_eq!(kind, "pausing");
        assert_eq!(report["clients"][0]["now"], "stopped");
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
        job_of(actions.act("downloads-pause", &body(json!({}))));
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
    fn a_restart_restarts_exactly_what_was_asked() {
        let actions = Actions::default();
        actions.hold_jobs();
        let job = job_of(actions.act("restart", &body(json!({"services": ["sonarr"]}))));
        assert!(
            matches!(actions.job(&job), Acted::Answer { status: 202, kind, .. } if kind == "job"),
            "running at first"
        );
        let (kind, report) = finished(&actions, &job);
        assert_eq!(kind, "lifecycle");
        assert_eq!(report["plan"]["services"], json!(["sonarr"]));
        assert_eq!(report["rehearsed"], false);
        let every = offer_of(actions.act("restart", &body(json!({"dry_run": true}))));
        assert!(every.starts_with("lfo-"));
    }

    #[test]
    fn a_diagnosis_is_a_job_narrowed_to_what_was_asked() {
        let actions = Actions::default();
        actions.hold_jobs();
        let job = job_of(actions.act("diagnose", &body(json!({"only": "disk-space"}))));
        let (kind, report) = finished(&actions, &job);
        assert_eq!(kind, "doctor");
        assert_eq!(report["findings"].as_array().map(Vec::len), Some(1));
        assert!(matches!(
            actions.act("diagnose", &body(json!({"only": "nothing-by-this-name"}))),
            Acted::Refused {
                status: 400,
                code: "READ-11",
                ..
            }
        ));
    }

    #[test]
    fn an_update_is_a_job_that_finishes_and_is_not_idempotent() {
        let actions = Actions::default();
        let job = job_of(actions.act("update", &body(json!({}))));
        assert!(
            matches!(actions.job(&job), Acted::Answer { status: 202, .. }),
            "running at first"
        );
        std::thread::sleep(JOB_TAKES + Duration::from_millis(50));
        let Acted::Answer {
            status: 200,
            kind,
            data,
        } = actions.job(&job)
        else {
            panic!("finished")
        };
        assert_eq!(kind, "update");
        assert_eq!(data["state"], "updated");
        assert_eq!(data["applied"].as_array().map(Vec::len), Some(2));
        assert_ne!(
            job_of(actions.act("update", &body(json!({})))),
            job,
            "a second update is a second job"
        );
        assert!(matches!(
            actions.job("job-9999"),
            Acted::Refused {
                status: 404,
                code: "ASK-7",
                ..
            }
        ));
    }

    #[test]
    fn an_update_of_no_such_service_is_rehearsed_then_stops() {
        let actions = Actions::default();
        let rehearsed = actions.act("update", &body(json!({"service": "plex", "dry_run": true})));
        let Acted::Answer { data, .. } = rehearsed else {
            panic!("a report")
        };
        assert_eq!(data["changes"], json!([]));
        actions.hold_jobs();
        let job = job_of(actions.act("update", &body(json!({"service": "plex"}))));
        actions.release_jobs();
        assert!(matches!(
            actions.job(&job),
            Acted::Refused {
                status: 500,
                code: "UPDATE-2",
                ..
            }
        ));
    }
}
