//! The facts of the question put to the person before an action: what the fresh rehearsal's
//! report says will happen, by the names the stack gives (through the one door for the stack's
//! text, then on one line, short, and only the first few), how long the stack's own bounds say
//! things are down, and what is playing now where the key may read it (read through the stack's
//! one module, as every tool's read is). The words are the sentences'.

use serde_json::{Map, Value};

use super::arguments;
use crate::access::offer::Offer;
use crate::answer::handed_text;
use crate::answer::sentences::{self, DownFor, Named, Plan, VersionChange};
use crate::catalogue::{self, Action, Operation, Read, ToolSpec};
use crate::redact::Secrets;
use crate::stack::{Body, Reply, Stack};

/// The most characters of one name a question shows: a phone's line, about.
const NAME_LONGEST: usize = 60;
/// The most names of one list a question shows; the rest are counted.
const NAMES_SHOWN: usize = 5;

/// Text the stack wrote, as a question may show it: through the one door (nothing hidden, no
/// secret), then on one line, without the quotation marks a question puts around it (so it cannot
/// seem to end its own quote), and short. `None` when nothing is left.
pub fn shown(text: &str, withheld: &Secrets) -> Option<String> {
    let handed = handed_text(text, withheld);
    let one_line: String = handed
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .filter(|c| !matches!(c, '"' | '\u{201C}' | '\u{201D}'))
        .collect();
    let words = one_line.split_whitespace().collect::<Vec<_>>().join(" ");
    if words.is_empty() {
        return None;
    }
    if words.chars().count() <= NAME_LONGEST {
        return Some(words);
    }
    let mut short: String = words.chars().take(NAME_LONGEST - 1).collect();
    short.push('\u{2026}');
    Some(short)
}

/// The first few names shown, and how many more there are.
fn named<'a>(names: impl Iterator<Item = &'a str>, withheld: &Secrets) -> Named {
    let mut listed = Named::default();
    for name in names.filter_map(|name| shown(name, withheld)) {
        if listed.shown.len() < NAMES_SHOWN {
            listed.shown.push(name);
        } else {
            listed.more += 1;
        }
    }
    listed
}

fn texts(value: Option<&Value>) -> impl Iterator<Item = &str> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Whether the arguments leave a list out or empty: the stack plans all of what it concerns.
fn left_empty(arguments: &Map<String, Value>, name: &str) -> bool {
    texts(arguments.get(name)).next().is_none()
}

/// What the action will do: from the data of the fresh rehearsal's report (`report`), or for an
/// action with no rehearsal from the arguments it is sent with.
pub fn plan(
    action: Action,
    arguments: &Map<String, Value>,
    report: Option<&Value>,
    withheld: &Secrets,
) -> Plan {
    match (action, report) {
        (Action::Diagnose, _) => Plan::Diagnose {
            only: arguments
                .get("only")
                .and_then(Value::as_str)
                .and_then(|only| shown(only, withheld)),
            disruptive: arguments.get("disruptive").and_then(Value::as_bool) == Some(true),
        },
        (Action::Restart, Some(report)) if report.pointer("/plan/services").is_some() => {
            Plan::Restart {
                every: left_empty(arguments, "services") && left_empty(arguments, "forms"),
                services: named(texts(report.pointer("/plan/services")), withheld),
            }
        }
        (Action::Update, Some(report)) if report.get("changes").is_some_and(Value::is_array) => {
            update(report, withheld)
        }
        (Action::DownloadsPause | Action::DownloadsResume, Some(report))
            if report.get("clients").is_some_and(Value::is_array) =>
        {
            let clients = report["clients"].as_array().into_iter().flatten();
            let already = clients.clone().next().is_some()
                && clients.clone().all(|client| {
                    client.get("was").is_some() && client.get("was") == client.get("now")
                });
            let names = clients.filter_map(|client| client.get("client").and_then(Value::as_str));
            Plan::Downloads {
                pause: action == Action::DownloadsPause,
                clients: named(names, withheld),
                already,
            }
        }
        _ => Plan::Unread,
    }
}

fn update(report: &Value, withheld: &Secrets) -> Plan {
    let mut changes = Vec::new();
    let mut more = 0;
    let mut held_back = 0;
    for change in report["changes"].as_array().into_iter().flatten() {
        if change.get("refused").and_then(Value::as_bool) == Some(true) {
            held_back += 1;
            continue;
        }
        let field = |name: &str| {
            change
                .get(name)
                .and_then(Value::as_str)
                .and_then(|text| shown(text, withheld))
                .unwrap_or_else(|| "?".to_owned())
        };
        if changes.len() < NAMES_SHOWN {
            changes.push(VersionChange {
                service: field("service"),
                from: field("current"),
                to: field("target"),
                for_good: change.get("irreversible").and_then(Value::as_bool) == Some(true),
            });
        } else {
            more += 1;
        }
    }
    Plan::Update {
        changes,
        more,
        held_back,
    }
}

/// One of the stack's `TakesAway` bounds: `Ok` with the seconds of a bounded one, `Err` for one
/// open-ended until downloads finish; `None` when it is not there or not one.
fn takes_away(disturbs: &Value, what: &str) -> Option<Result<u64, ()>> {
    let bound = disturbs.get(what)?;
    match bound.get("bound").and_then(Value::as_str)? {
        "bounded" => bound.get("seconds").and_then(Value::as_u64).map(Ok),
        "open-ended" => Some(Err(())),
        _ => None,
    }
}

/// How long what the plan touches is down, by the stack's own bounds (`disturbs`, from its
/// status, when the key could read it): `None` for a plan that takes nothing down.
pub fn down_for(
    plan: &Plan,
    arguments: &Map<String, Value>,
    disturbs: Option<&Value>,
) -> Option<DownFor> {
    let takes_down = match plan {
        Plan::Restart { services, .. } => !services.shown.is_empty(),
        Plan::Update { changes, .. } => !changes.is_empty(),
        _ => false,
    };
    if !takes_down {
        return None;
    }
    let Some(disturbs) = disturbs else {
        return Some(DownFor::Untold);
    };
    let bound = |what| takes_away(disturbs, what);
    let down = match plan {
        Plan::Restart { .. } => match bound("restarting") {
            Some(Ok(seconds)) => DownFor::UpTo(seconds),
            Some(Err(())) => DownFor::AfterDownloads(None),
            None => DownFor::Untold,
        },
        _ => {
            let waits = arguments.get("wait").and_then(Value::as_bool) == Some(true);
            let stopping = if waits {
                bound("stopping_after_downloads")
            } else {
                bound("stopping")
            };
            let starting = bound("starting").and_then(Result::ok);
            match (stopping, starting) {
                (Some(Ok(stop)), Some(start)) => DownFor::UpTo(stop.saturating_add(start)),
                (Some(Err(())), start) => DownFor::AfterDownloads(start),
                _ => DownFor::Untold,
            }
        }
    };
    Some(down)
}

/// What is playing now, from the data of the stack's `playing` read: who, what, and where.
pub fn playing(report: &Value, withheld: &Secrets) -> Option<Named> {
    let sessions = report.get("sessions")?.as_array()?;
    let said: Vec<String> = sessions
        .iter()
        .map(|session| {
            let field = |name: &str| session.get(name).and_then(Value::as_str).unwrap_or("?");
            let paused = if session.get("paused").and_then(Value::as_bool) == Some(true) {
                " (paused)"
            } else {
                ""
            };
            format!(
                "{}: {} on {}{paused}",
                field("member"),
                field("title"),
                field("device")
            )
        })
        .collect();
    Some(named(said.iter().map(String::as_str), withheld))
}

/// The question put to the person: what `tool` will do with `arguments`, from the fresh
/// rehearsal's report where there is one, how long the stack's bounds say things are down,
/// and what is playing now where the key may read it. A read that fails leaves its part out;
/// it never keeps the person from being asked.
pub async fn put(
    stack: &Stack,
    tool: &ToolSpec,
    action: Action,
    arguments: &serde_json::Map<String, Value>,
    fresh: Option<&Reply>,
    offer: &Offer,
) -> String {
    let withheld = stack.withheld();
    let report = fresh.and_then(|reply| match &reply.body {
        Body::Envelope(envelope) => Some(envelope.value()),
        _ => None,
    });
    let report = report.as_deref().and_then(|envelope| envelope.get("data"));
    let plan = plan(action, arguments, report, withheld);
    let takes_down = matches!(plan, Plan::Restart { .. } | Plan::Update { .. });
    let disturbs = if takes_down {
        read_data(stack, Read::Status, offer).await
    } else {
        None
    };
    let down_for = down_for(
        &plan,
        arguments,
        disturbs.as_ref().and_then(|status| status.get("disturbs")),
    );
    let disturbing = match plan {
        Plan::Diagnose { disruptive, .. } => disruptive,
        Plan::Downloads { .. } => false,
        _ => action.disturbs(),
    };
    let playing = if disturbing {
        read_data(stack, Read::Playing, offer)
            .await
            .and_then(|answered| playing(&answered, withheld))
    } else {
        None
    };
    sentences::consent_question(&sentences::Question {
        title: tool.title,
        act: tool.name,
        disturbs: disturbing,
        plan,
        down_for,
        playing,
    })
}

/// The data of a read this key is offered and the stack answers now, with no arguments; `None`
/// when it is not, or the stack did not answer it.
async fn read_data(stack: &Stack, read: Read, offer: &Offer) -> Option<Value> {
    let tool = catalogue::reads()
        .find(|tool| tool.operation == Operation::Read(read))
        .filter(|tool| offer.answers(tool))?;
    let arguments = arguments::check(tool.parameters_for(offer.audience), None).ok()?;
    match stack.read(read, &arguments).await {
        Ok(Reply {
            body: Body::Envelope(envelope),
            ..
        }) => Some(envelope.into_value().get_mut("data")?.take()),
        Ok(_) => None,
        Err(failure) => {
            tracing::info!(
                tool = tool.name,
                failure = super::server::failure_name(&failure),
                "a read for the question to the person was not answered"
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_stack_name_is_shown_clean_on_one_line_short_and_unquoted() {
        let secrets = Secrets::default();
        assert_eq!(
            shown("jelly\u{200B}fin\n\"now\u{201D}", &secrets).as_deref(),
            Some("jellyfin now")
        );
        let long = "x".repeat(200);
        let short = shown(&long, &secrets).unwrap_or_default();
        assert_eq!(short.chars().count(), NAME_LONGEST);
        assert!(short.ends_with('\u{2026}'));
        assert_eq!(shown("\u{200B}\n", &secrets), None);
    }

    #[test]
    fn empty_lists_plan_everything_and_long_ones_are_counted() {
        let secrets = Secrets::default();
        let report = json!({"plan": {"services": ["a", "b", "c", "d", "e", "f", "g", "h"]}});
        let everything = plan(
            Action::Restart,
            &object(json!({"services": []})),
            Some(&report),
            &secrets,
        );
        let Plan::Restart { every, services } = everything else {
            panic!("a restart")
        };
        assert!(every);
        assert_eq!((services.shown.len(), services.more), (NAMES_SHOWN, 3));
        let narrowed = plan(
            Action::Restart,
            &object(json!({"services": ["a"]})),
            Some(&report),
            &secrets,
        );
        assert!(matches!(narrowed, Plan::Restart { every: false, .. }));
    }

    #[test]
    fn an_update_is_down_for_stopping_and_starting_or_until_downloads_finish() {
        let disturbs = json!({
            "starting": {"bound": "bounded", "seconds": 40},
            "stopping": {"bound": "bounded", "seconds": 15},
            "stopping_after_downloads": {"bound": "open-ended", "until": "downloads"},
            "restarting": {"bound": "bounded", "seconds": 55},
        });
        let report = json!({"changes": [{"service": "jellyfin", "current": "1", "target": "2"}]});
        let update = plan(
            Action::Update,
            &Map::new(),
            Some(&report),
            &Secrets::default(),
        );
        assert_eq!(
            down_for(&update, &Map::new(), Some(&disturbs)),
            Some(DownFor::UpTo(55))
        );
        assert_eq!(
            down_for(&update, &object(json!({"wait": true})), Some(&disturbs)),
            Some(DownFor::AfterDownloads(Some(40)))
        );
        assert_eq!(down_for(&update, &Map::new(), None), Some(DownFor::Untold));
    }
}
