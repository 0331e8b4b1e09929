//! The grants sign-in has handed out, kept in the state folder so that a grant can be ended
//! before its tokens expire: by the client signing out (RFC 7009 revocation), or by the operator
//! (`lemonfiber-mcp grants end`). Every token of a grant carries the grant's id, and a token is
//! taken only while its grant's record is there, so ending a grant ends its access token at the
//! next request and its refresh token at the next refresh, on every replica sharing the folder.
//!
//! A record holds nothing secret: the grant's id, the client's name as the client gave it, the
//! first eight hex digits of the key's digest (as the audit names a key), and its times.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::access::sealing::{now, random};
use crate::answer::handed_text;
use crate::redact::Secrets;

const FOLDER: &str = "grants";
const RECORD: &str = ".json";
/// How many hex digits a grant's id has.
const ID_LEN: usize = 16;
/// The most characters of a client's name a record keeps.
const CLIENT_LONGEST: usize = 80;

/// The grants of one state folder.
#[derive(Debug)]
pub struct Grants {
    folder: PathBuf,
}

/// What is kept of one grant.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Granted {
    pub id: String,
    /// What the client calls itself, cleaned: its own words, not the server's.
    pub client: String,
    /// The first eight hex digits of the key's SHA-256, as the audit names a key.
    pub key: String,
    /// When the person signed in, in seconds since the epoch.
    pub signed_in: u64,
    /// When its tokens were last renewed.
    pub renewed: u64,
    /// When its refresh token expires.
    pub expires: u64,
}

/// Why grants could not be read or changed. Names the folder or the id, never a token.
#[derive(Debug, thiserror::Error)]
pub enum GrantsError {
    #[error(
        "there is no state folder at {folder}: set LEMONFIBER_STATE to the folder the HTTP mode keeps its state in",
        folder = .0.display()
    )]
    NoStateFolder(PathBuf),
    #[error(transparent)]
    Settings(#[from] crate::config::ConfigError),
    #[error(
        "{0:?} is not a grant id: an id is {ID_LEN} lower-case hex digits, as `lemonfiber-mcp grants list` shows"
    )]
    NotAnId(String),
    #[error("no grant {0} is in {folder}: it has ended or expired already", folder = .1.display())]
    NoSuchGrant(String, PathBuf),
    #[error("cannot read the grants in {folder}: {1}", folder = .0.display())]
    Unreadable(PathBuf, #[source] std::io::Error),
    #[error("cannot end the grant in {file}: {1}", file = .0.display())]
    NotEnded(PathBuf, #[source] std::io::Error),
}

impl GrantsError {
    /// Whether what was asked is at fault (an id that is not one, or names no grant), not the
    /// folder.
    pub fn is_settings(&self) -> bool {
        matches!(
            self,
            GrantsError::NoStateFolder(_)
                | GrantsError::Settings(_)
                | GrantsError::NotAnId(_)
                | GrantsError::NoSuchGrant(..)
        )
    }
}

impl Grants {
    pub fn in_state(state: &Path) -> Grants {
        Grants {
            folder: state.join(FOLDER),
        }
    }

    /// A new grant's id, or `None` where no randomness could be had.
    pub fn new_id() -> Option<String> {
        random::<{ ID_LEN / 2 }>().ok().map(hex::encode)
    }

    fn file(&self, id: &str) -> Option<PathBuf> {
        is_an_id(id).then(|| self.folder.join(format!("{id}{RECORD}")))
    }

    /// Whether the grant `id` is still in force: an id from a token this server sealed, so
    /// only its record's presence is asked.
    pub fn is_live(&self, id: &str) -> bool {
        self.file(id).is_some_and(|file| file.is_file())
    }

    /// Records a grant handed out or renewed. A record that cannot be written leaves the grant
    /// unrecorded, and its tokens are then not taken: the caller refuses to hand them out.
    pub fn record(&self, granted: &Granted) -> bool {
        let Some(file) = self.file(&granted.id) else {
            return false;
        };
        let Ok(text) = serde_json::to_vec(granted) else {
            return false;
        };
        let kept = crate::state::make_folder(&self.folder)
            .and_then(|()| crate::state::write_whole(&file, &text));
        if let Err(error) = kept {
            tracing::warn!(%error, folder = %self.folder.display(), "a grant could not be recorded");
            return false;
        }
        true
    }

    /// The record of grant `id`, if it is in force.
    pub fn get(&self, id: &str) -> Option<Granted> {
        let text = std::fs::read(self.file(id)?).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Ends grant `id`: its tokens are taken no more.
    pub fn end(&self, id: &str) -> Result<Granted, GrantsError> {
        let file = self
            .file(id)
            .ok_or_else(|| GrantsError::NotAnId(id.chars().take(40).collect()))?;
        let granted = self
            .get(id)
            .ok_or_else(|| GrantsError::NoSuchGrant(id.to_owned(), self.folder.clone()))?;
        std::fs::remove_file(&file).map_err(|error| GrantsError::NotEnded(file, error))?;
        Ok(granted)
    }

    /// Every grant in force, longest-standing first; those expired are let go on the way.
    pub fn list(&self) -> Result<Vec<Granted>, GrantsError> {
        let entries = match std::fs::read_dir(&self.folder) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(GrantsError::Unreadable(self.folder.clone(), error)),
        };
        let now = now();
        let mut grants: Vec<Granted> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let id = name.strip_suffix(RECORD)?;
                let granted = self.get(id)?;
                if granted.expires <= now {
                    let _ = std::fs::remove_file(entry.path());
                    return None;
                }
                Some(granted)
            })
            .collect();
        grants.sort_by(|a, b| (a.signed_in, &a.id).cmp(&(b.signed_in, &b.id)));
        Ok(grants)
    }
}

impl Granted {
    /// A new grant of `key_digest` to the client that calls itself `client`, renewed now until
    /// `expires`.
    pub fn new(id: String, client: Option<&str>, key_digest: &[u8; 32], expires: u64) -> Granted {
        let client = client
            .map(|name| {
                // Through the one door, and then without tab or newline either: a record is
                // printed on one line of the operator's terminal.
                handed_text(name, &Secrets::default())
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(CLIENT_LONGEST)
                    .collect()
            })
            .filter(|name: &String| !name.trim().is_empty())
            .unwrap_or_else(|| "(a client that gave no name)".to_owned());
        let now = now();
        Granted {
            id,
            client,
            key: hex::encode(&key_digest[..4]),
            signed_in: now,
            renewed: now,
            expires,
        }
    }
}

fn is_an_id(id: &str) -> bool {
    id.len() == ID_LEN
        && id
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh(what: &str) -> (PathBuf, Grants) {
        let state =
            std::env::temp_dir().join(format!("lemonfiber-grants-{what}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        let grants = Grants::in_state(&state);
        (state, grants)
    }

    #[test]
    fn a_grant_is_live_from_its_record_until_ended() {
        let (state, grants) = fresh("live");
        let id = Grants::new_id().expect("an id");
        let granted = Granted::new(id.clone(), Some("Claude"), &[0xab; 32], now() + 60);
        assert!(!grants.is_live(&id));
        assert!(grants.record(&granted));
        assert!(grants.is_live(&id));
        assert_eq!(grants.list().expect("listed"), vec![granted.clone()]);
        assert_eq!(granted.key, "abababab");
        assert_eq!(grants.end(&id).expect("ended"), granted);
        assert!(!grants.is_live(&id));
        assert!(matches!(grants.end(&id), Err(GrantsError::NoSuchGrant(..))));
        let _ = std::fs::remove_dir_all(&state);
    }

    #[test]
    fn an_id_that_is_not_one_reaches_no_file() {
        let (state, grants) = fresh("ids");
        for not_an_id in ["../seal-secret", "", "0123456789abcdeF", "0123456789abcde/"] {
            assert!(!grants.is_live(not_an_id));
            assert!(matches!(
                grants.end(not_an_id),
                Err(GrantsError::NotAnId(_))
            ));
        }
        let _ = std::fs::remove_dir_all(&state);
    }

    #[test]
    fn a_clients_name_is_kept_cleaned_and_short_and_expired_grants_are_let_go() {
        let (state, grants) = fresh("names");
        let named = Granted::new(
            Grants::new_id().expect("an id"),
            Some("Evil\u{1b}[2J\u{202e}Client"),
            &[1; 32],
            now() + 60,
        );
        assert!(!named.client.contains('\u{1b}') && !named.client.contains('\u{202e}'));
        let unnamed = Granted::new(Grants::new_id().expect("an id"), None, &[1; 32], now());
        assert!(unnamed.client.contains("no name"));
        assert!(grants.record(&named) && grants.record(&unnamed));
        assert_eq!(grants.list().expect("listed"), vec![named]);
        assert!(!grants.is_live(&unnamed.id), "expired, and let go");
        let _ = std::fs::remove_dir_all(&state);
    }
}
