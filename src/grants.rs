//! `lemonfiber-mcp grants list` and `grants end <id>`: the operator's view of the sign-ins the
//! HTTP mode has handed out to hosted assistants, read from its state folder (LEMONFIBER_STATE),
//! and a way to end one before it expires, on a running server too. Nothing secret is printed: a
//! grant is named by its id, the client's own name for itself, and the first digits of the key's
//! digest, as the audit names a key.

use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;

use crate::config;
use crate::sign_in::grants::{Grants, GrantsError};

/// The HTTP mode's state folder, as LEMONFIBER_STATE (or its default) names it; it must be there, since a
/// mistyped one would otherwise read as a server that handed out nothing.
fn state_folder() -> Result<PathBuf, GrantsError> {
    let state = config::state_folder(&|name| std::env::var(name).ok())?;
    if state.is_dir() {
        Ok(state)
    } else {
        Err(GrantsError::NoStateFolder(state))
    }
}

/// Prints every grant in force, as a person reads them or as JSON lines for a script.
pub fn list(print_json: bool) -> Result<(), GrantsError> {
    let state = state_folder()?;
    let grants = Grants::in_state(&state).list()?;
    if print_json {
        for granted in &grants {
            println!("{}", json!(granted));
        }
        return Ok(());
    }
    if grants.is_empty() {
        println!(
            "No sign-in is in force in {}: no hosted assistant holds a grant from this server.",
            state.display()
        );
        return Ok(());
    }
    println!(
        "Sign-ins in force ({} in {}):",
        grants.len(),
        state.display()
    );
    println!(
        "{:<16}  {:<24}  {:<8}  {:<20}  {:<20}  {:<20}",
        "ID", "CLIENT", "KEY", "SIGNED IN", "RENEWED", "ENDS BY"
    );
    for granted in &grants {
        println!(
            "{:<16}  {:<24}  {:<8}  {:<20}  {:<20}  {:<20}",
            granted.id,
            shortened(&granted.client, 24),
            granted.key,
            when(granted.signed_in),
            when(granted.renewed),
            when(granted.expires),
        );
    }
    println!("End one with: lemonfiber-mcp grants end <ID>");
    Ok(())
}

/// Ends grant `id`: its assistant's next request is refused and sent back to sign in.
pub fn end(id: &str) -> Result<(), GrantsError> {
    let state = state_folder()?;
    let granted = Grants::in_state(&state).end(id)?;
    println!(
        "Ended the sign-in {} of {} (key {}): its assistant's next request is refused, and it has to \
         sign in again.",
        granted.id, granted.client, granted.key
    );
    Ok(())
}

fn when(seconds: u64) -> String {
    let at = UNIX_EPOCH + Duration::from_secs(seconds);
    let written = humantime::format_rfc3339_seconds(at).to_string();
    written.replacen('T', " ", 1).replace('Z', " UTC")
}

fn shortened(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(most - 1).collect();
    short.push('…');
    short
}
