//! Every answer the demo gives is in the shape the core's contract declares: every read for
//! every scope that reaches it, every action rehearsed and carried out, its jobs, and its
//! refusals. The schemas come from the contract's kinds, not from anything the server makes, so
//! the server's own tests against the demo are not circular.

use serde_json::{Map, Value, json};

use super::actions::{Acted, Actions};
use super::api::{enveloped, problem_data};
use super::household::{Answer, Household, Query};
use super::keys::Scope;
use crate::answer::conformance::check_kind;
use crate::catalogue;

/// Reads asked again with these queries, besides with none.
const QUERIES: [(&str, &str); 20] = [
    ("/api/held", "most=2"),
    ("/api/held", "defaults=true"),
    ("/api/held", "member=theo"),
    ("/api/watching", "most=1"),
    ("/api/watching", "member=theo"),
    ("/api/playing", "member=theo"),
    ("/api/requests", "defaults=true"),
    ("/api/requests", "member=theo"),
    ("/api/forms", "form=movies"),
    ("/api/forms", "form=music&form=books"),
    ("/api/services", "form=shows"),
    ("/api/checks", "only=storage"),
    ("/api/config", "key=downloads"),
    ("/api/explain", "word=seed"),
    ("/api/trace", "term=Arrival&season=1"),
    ("/api/trace", "term=Blue+Lights&season=2"),
    ("/api/uninstall", "tier=media"),
    ("/api/update", "what=self"),
    ("/api/update", "what=jellyfin"),
    ("/api/logs", "service=sonarr&tail=3"),
];

fn answered(what: &str, answer: Answer) -> Vec<String> {
    let envelopes = match answer {
        Answer::Envelope { kind, data } => vec![enveloped(&kind, data)],
        Answer::Lines(lines) => lines,
        Answer::File { .. } => Vec::new(),
        Answer::Problem { code, summary, .. } => {
            vec![enveloped("error", problem_data(code, &summary, &[]))]
        }
    };
    envelopes
        .iter()
        .filter_map(|envelope| check_kind(envelope).err())
        .map(|difference| format!("{what}: {difference}"))
        .collect()
}

fn path_of(template: &str, household: &Household) -> String {
    template
        .replace("{id}", &household.first_held_id())
        .replace("{name}", super::household::BUNDLE_NAME)
}

#[test]
fn every_read_answers_in_its_kinds_shape() {
    let household = Household::load().expect("the household");
    let scopes = [Scope::Act, Scope::Member("maya".to_owned())];
    let mut differences = Vec::new();
    let mut read = 0;
    for tool in catalogue::reads() {
        let path = path_of(tool.capability, &household);
        let mut queries = vec![""];
        queries.extend(
            QUERIES
                .iter()
                .filter(|(template, _)| *template == tool.capability)
                .map(|(_, query)| *query),
        );
        for scope in &scopes {
            for query in &queries {
                for paused in [false, true] {
                    let what = format!("{path}?{query} for {} (paused {paused})", scope.label());
                    let answer = household.read(&path, &Query::parse(Some(query)), scope, paused);
                    differences.extend(answered(&what, answer));
                    read += 1;
                }
            }
        }
    }
    assert!(read > 140, "only {read} reads were asked");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

fn body(fields: Value) -> Map<String, Value> {
    fields.as_object().cloned().unwrap_or_default()
}

fn acted(what: &str, acted: Acted) -> (Vec<String>, Option<Value>) {
    let envelope = match acted {
        Acted::Answer { kind, data, .. } => enveloped(&kind, data),
        Acted::Refused { code, summary, .. } => {
            enveloped("error", problem_data(code, &summary, &[]))
        }
    };
    let differences = check_kind(&envelope)
        .err()
        .map(|difference| format!("{what}: {difference}"))
        .into_iter()
        .collect();
    (differences, Some(envelope))
}

#[test]
fn every_action_and_job_answers_in_its_kinds_shape() {
    let actions = Actions::default();
    actions.hold_jobs();
    let mut differences = Vec::new();
    let mut jobs = Vec::new();
    let cases = [
        ("restart", json!({"services": ["sonarr"]})),
        ("restart", json!({})),
        ("restart", json!({"forms": ["music"]})),
        ("update", json!({"service": "radarr"})),
        ("update", json!({"service": "jellyfin", "confirm": true})),
        ("update", json!({"service": "plex"})),
        ("update", json!({})),
        ("downloads-pause", json!({})),
        ("downloads-resume", json!({})),
    ];
    for (action, arguments) in &cases {
        let mut rehearsal = body(arguments.clone());
        rehearsal.insert("dry_run".to_owned(), json!(true));
        let (found, report) = acted(
            &format!("rehearse {action}"),
            actions.act(action, &rehearsal),
        );
        differences.extend(found);
        let offer = report
            .as_ref()
            .and_then(|report| report.pointer("/data/offer"))
            .and_then(Value::as_str)
            .expect("a rehearsal answers an offer")
            .to_owned();
        let mut act = body(arguments.clone());
        act.insert("offer".to_owned(), json!(offer));
        let (found, answer) = acted(&format!("act {action}"), actions.act(action, &act));
        differences.extend(found);
        if let Some(job) = answer
            .as_ref()
            .filter(|answer| answer["kind"] == "job")
            .and_then(|answer| answer.pointer("/data/job"))
            .and_then(Value::as_str)
        {
            jobs.push(job.to_owned());
        }
        // The same offer again is stale: the state moved when it was acted on.
        let (found, _) = acted(&format!("stale {action}"), actions.act(action, &act));
        differences.extend(found);
    }
    let (found, answer) = acted(
        "diagnose",
        actions.act("diagnose", &body(json!({"only": "disk-space"}))),
    );
    differences.extend(found);
    if let Some(job) = answer
        .as_ref()
        .and_then(|answer| answer.pointer("/data/job"))
        .and_then(Value::as_str)
    {
        jobs.push(job.to_owned());
    }
    for job in &jobs {
        differences.extend(acted(&format!("job {job} running"), actions.job(job)).0);
    }
    actions.release_jobs();
    for job in &jobs {
        differences.extend(acted(&format!("job {job} finished"), actions.job(job)).0);
    }
    differences.extend(acted("an unknown job", actions.job("job-unknown")).0);
    assert!(!jobs.is_empty(), "some action answers a job");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn every_refusal_is_a_problem_in_the_cores_shape() {
    for remedies in [
        &[][..],
        &["Ask the operator for a new integration key."][..],
    ] {
        let refusal = enveloped(
            "error",
            problem_data("ADMIT-4", "This key is not admitted.", remedies),
        );
        assert_eq!(check_kind(&refusal), Ok(()));
        assert!(
            refusal["data"]["remedies"]
                .as_array()
                .is_some_and(|remedies| remedies.iter().all(Value::is_object))
        );
    }
}
