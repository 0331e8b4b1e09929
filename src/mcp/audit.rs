//! One audit line for every tool call and resource read: when, which key (the first 8 hex of its
//! digest), its scope, the client's address (over HTTP), what was called, what the server
//! decided, what the stack answered and how long it took. Never the arguments, an offer or an
//! answer. JSON, one object a line, on stderr or appended to the file `LEMONFIBER_AUDIT` names.

use std::fs::File;
use std::io::Write;
use std::net::IpAddr;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

/// What the server decided about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Sent to the stack (whether or not it answered).
    Sent,
    /// Refused before anything was sent, and why, in a word of the server's.
    RefusedBeforeStack(&'static str),
    /// Not offered to this key.
    NotOffered,
    /// Answered by the server itself, from what it knows (the connection tool).
    AnsweredByServer,
    /// Nothing sent yet: the person is asked first, through their client (2026-07-28).
    AwaitingPerson,
}

/// The address an HTTP request came from, as the HTTP mode counts it (behind a trusted proxy,
/// the client it names): handed along with the request, for the audit line of what it calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

/// What one call came to, for its audit line.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    pub key_digest: &'a [u8; 32],
    pub scope: Option<&'a str>,
    /// Where the call came from, over HTTP.
    pub client: Option<IpAddr>,
    /// `tool` for a tool call, `resource` for a resource read.
    pub event: &'static str,
    pub tool: &'a str,
    pub decision: Decision,
    pub status: Option<u16>,
    /// How the person's yes to an action was had: `asked` or `offer`.
    pub consent: Option<&'a str>,
    pub took: Duration,
}

enum Sink {
    Stderr,
    File(Mutex<File>),
}

static SINK: OnceLock<Sink> = OnceLock::new();

/// Sends audit lines to `file` (appended, readable by its owner only) from now on; without one,
/// they go to stderr.
pub fn write_to(file: Option<&Path>) -> std::io::Result<()> {
    let sink = match file {
        None => Sink::Stderr,
        Some(path) => Sink::File(Mutex::new(
            crate::platform::owner_only(std::fs::OpenOptions::new().append(true).create(true))
                .open(path)?,
        )),
    };
    // Set once at start; a second call (the demo beside a server) keeps the first.
    let _ = SINK.set(sink);
    Ok(())
}

pub fn record(entry: &Entry<'_>) {
    let mut line = line(entry, SystemTime::now());
    line.push('\n');
    match SINK.get().unwrap_or(&Sink::Stderr) {
        Sink::Stderr => {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
        Sink::File(file) => {
            if let Ok(mut file) = file.lock() {
                let _ = file.write_all(line.as_bytes());
            }
        }
    }
}

fn line(entry: &Entry<'_>, at: SystemTime) -> String {
    let (decision, why) = match entry.decision {
        Decision::Sent => ("sent", None),
        Decision::RefusedBeforeStack(why) => ("refused-before-stack", Some(why)),
        Decision::NotOffered => ("not-offered", None),
        Decision::AnsweredByServer => ("answered-by-server", None),
        Decision::AwaitingPerson => ("awaiting-person", None),
    };
    let key = hex::encode(&entry.key_digest[..4]);
    // The scope is the stack's word: only the ones the web API names are written as they are.
    let scope = entry.scope.map(|scope| match scope {
        "operator" | "read" | "act" | "member" => scope,
        _ => "other",
    });
    let client = entry.client.map(|address| address.to_string());
    let line = Line {
        audit: entry.event,
        client: client.as_deref(),
        consent: entry.consent,
        decision,
        key: &key,
        ms: entry.took.as_millis() as u64,
        scope,
        status: entry.status,
        time: &humantime::format_rfc3339_millis(at).to_string(),
        tool: entry.tool,
        why,
    };
    // Only strings and numbers: it always serializes.
    serde_json::to_string(&line).unwrap_or_default()
}

/// One audit line, its fields in the order a reader has always seen them.
#[derive(serde::Serialize)]
struct Line<'a> {
    audit: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    client: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    consent: Option<&'a str>,
    decision: &'a str,
    key: &'a str,
    ms: u64,
    scope: Option<&'a str>,
    status: Option<u16>,
    time: &'a str,
    tool: &'a str,
    why: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_line_says_who_what_and_how_it_went_and_nothing_else() {
        let digest = [0xab; 32];
        let entry = Entry {
            key_digest: &digest,
            scope: Some("act"),
            client: None,
            event: "tool",
            tool: "restart",
            decision: Decision::RefusedBeforeStack("offer-expired"),
            status: None,
            consent: None,
            took: Duration::from_millis(3),
        };
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_000_000);
        let echoed = Entry {
            scope: Some("act lfk_00112233445566778899aabbccddeeff"),
            ..entry
        };
        let echoed: serde_json::Value = serde_json::from_str(&line(&echoed, at)).expect("json");
        assert_eq!(
            echoed["scope"], "other",
            "a scope the stack made up is not written"
        );
        let line: serde_json::Value = serde_json::from_str(&line(&entry, at)).expect("json");
        assert_eq!(
            line,
            json!({"audit": "tool", "time": "2025-11-24T16:00:00.000Z", "key": "abababab",
                   "scope": "act", "tool": "restart", "decision": "refused-before-stack",
                   "why": "offer-expired", "status": null, "ms": 3})
        );
        let acted = Entry {
            decision: Decision::Sent,
            status: Some(202),
            consent: Some("asked"),
            ..entry
        };
        let acted: serde_json::Value =
            serde_json::from_str(&super::line(&acted, at)).expect("json");
        assert_eq!(acted["consent"], "asked", "how the person's yes was had");
        let over_http = Entry {
            client: Some(IpAddr::from([192, 0, 2, 7])),
            ..entry
        };
        let over_http: serde_json::Value =
            serde_json::from_str(&super::line(&over_http, at)).expect("json");
        assert_eq!(
            over_http["client"], "192.0.2.7",
            "where an HTTP call came from"
        );
    }
}
