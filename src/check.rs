//! `lemonfiber-mcp check` (F13-R6): with the stack and key `stdio` would use, what does this key
//! reach? It asks the stack for the key's capabilities (a read; nothing is written) and says the
//! state, the key's scope, and the tools and resources an assistant is offered, as a person reads
//! them, or as JSON for a script. Exit codes: 0 connected, 3 refused, 4 unreachable.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::access::offer::Offer;
use crate::access::standing::Verdict;
use crate::serve::Fatal;
use crate::stack::{Failure, Stack, Unreachable};

/// What `check` found.
pub enum Checked {
    Connected,
    Refused,
    Unreachable,
}

/// Runs the check and prints what it found.
pub async fn run(print_json: bool) -> Result<Checked, Fatal> {
    let settings = crate::link::stdio_settings().await?;
    settings.key.withhold_from_output();
    settings.address.pin.withhold_from_output();
    let address = settings.address.base_url.clone();
    let stack = Stack::new(&settings.address, settings.key, settings.conduct.answers)?;
    let (checked, mut report) = match stack.capabilities().await {
        Ok(capabilities) => {
            let offer = Offer::new(Arc::new(capabilities));
            let tools: Vec<Value> = offer
                .listed_tools()
                .into_iter()
                .map(|tool| {
                    let title = tool.title.clone().unwrap_or_default();
                    let writes = tool
                        .annotations
                        .as_ref()
                        .and_then(|annotations| annotations.read_only_hint)
                        .map(|read_only| !read_only);
                    json!({"name": tool.name, "title": title, "writes": writes})
                })
                .collect();
            let resources: Vec<Value> =
                offer
                    .resources()
                    .into_iter()
                    .map(|resource| json!({"uri": resource.uri, "name": resource.name}))
                    .chain(offer.resource_templates().into_iter().map(
                        |template| json!({"uri": template.uri_template, "name": template.name}),
                    ))
                    .collect();
            let scope = offer.scope().word().unwrap_or("unknown");
            (
                Checked::Connected,
                json!({"state": "connected", "address": address, "scope": scope,
                       "tools": tools, "resources": resources}),
            )
        }
        Err(failure) if Verdict::<()>::of_failure(&failure).is_refused() => (
            Checked::Refused,
            json!({"state": "refused", "address": address,
                   "why": "The stack refused this key: it was revoked, or never admitted. A new key is needed: ask the stack for a key link and run lemonfiber-mcp link again."}),
        ),
        Err(failure) => (
            Checked::Unreachable,
            json!({"state": "unreachable", "address": address, "why": unreachable_because(&failure)}),
        ),
    };
    report["key_file_privacy_checked"] = Value::Bool(crate::platform::PRIVACY_CHECKED);
    let said = if print_json {
        format!("{report}\n")
    } else {
        for_a_person(&report)
    };
    // A reader that stops early (`check | head`) is no failure of the check, and the exit code
    // still says what it found.
    let mut out = std::io::stdout().lock();
    let _ = std::io::Write::write_all(&mut out, said.as_bytes())
        .and_then(|()| std::io::Write::flush(&mut out));
    Ok(checked)
}

fn unreachable_because(failure: &Failure) -> String {
    match failure {
        Failure::PinMismatch => "The stack showed a certificate that does not match the pin, so nothing was sent. If the stack's certificate was replaced, link again with a new key link.".to_owned(),
        Failure::Unreachable(Unreachable::TimedOut) => "The stack did not answer in time.".to_owned(),
        Failure::Unreachable(Unreachable::NoConnection) => "Nothing answered at the stack's address: is the stack running, and is the address right?".to_owned(),
        Failure::Unreachable(Unreachable::Broken) => "The connection to the stack broke.".to_owned(),
        Failure::Refused(refusal) => format!("The stack refused to say what this key may use (status {}).", refusal.status),
        _ => "The stack answered something this server does not understand.".to_owned(),
    }
}

fn for_a_person(report: &Value) -> String {
    use std::fmt::Write as _;
    let mut said = String::new();
    let text = |field: &str| report[field].as_str().unwrap_or_default().to_owned();
    match text("state").as_str() {
        "connected" => {
            let _ = writeln!(said, "Connected to the stack at {}.", text("address"));
            let _ = writeln!(said, "This key's scope: {}.\n", text("scope"));
            let tools = report["tools"].as_array().cloned().unwrap_or_default();
            let _ = writeln!(
                said,
                "An assistant with this key is offered {} tools:",
                tools.len()
            );
            for tool in &tools {
                let what = match tool["writes"].as_bool() {
                    Some(true) => "changes the stack",
                    _ => "reads only",
                };
                let _ = writeln!(
                    said,
                    "  {:<28} {} ({what})",
                    tool["name"].as_str().unwrap_or_default(),
                    tool["title"].as_str().unwrap_or_default()
                );
            }
            let resources = report["resources"].as_array().cloned().unwrap_or_default();
            let _ = writeln!(said, "\nand {} resources:", resources.len());
            for resource in &resources {
                let _ = writeln!(said, "  {}", resource["uri"].as_str().unwrap_or_default());
            }
        }
        state => {
            let _ = writeln!(
                said,
                "The key is {state} at the stack at {}.",
                text("address")
            );
            let _ = writeln!(said, "{}", text("why"));
        }
    }
    if report["key_file_privacy_checked"] == Value::Bool(false) {
        let _ = writeln!(
            said,
            "\nOn Windows this server does not check who else may read the key file. Keep it in \
             your own profile (where link puts it), which only you and Windows itself can read."
        );
    }
    said
}
