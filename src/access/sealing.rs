//! What the server seals and what it remembers as used once. Sealing is authenticated
//! encryption (ChaCha20-Poly1305) under one secret, made at start over stdio or kept in the state
//! folder (0600) in the HTTP mode, so replicas sharing the folder open each other's seals. Each
//! kind of sealed thing (an offer, an OAuth code or token) has a purpose of its own, bound in as
//! associated data, so one kind never opens as another.
//!
//! The record of things used once (an offer acted on, a code exchanged, a refresh token rotated)
//! keeps each until it expires: in memory for one process, or as files in the state folder, made
//! exclusively, so replicas sharing it refuse a replay too.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::lock::lock;

const SECRET_FILE: &str = "seal-secret";
const SECRET_LEN: usize = 32;
/// A folder of things used is swept of expired ones after this many uses.
const SWEEP_EVERY: u64 = 64;
/// Things used are remembered until they expire; past this many at once in memory, the
/// expired ones are let go first, and nothing more is used while none can be.
const KEPT_IN_MEMORY: usize = 100_000;
const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A sealed thing's nonce: also what names it once it is used.
pub type SealNonce = [u8; NONCE_LEN];

/// What a kind of sealed thing is: the text it starts with, and the associated data that binds
/// it to its kind.
pub struct Purpose {
    pub prefix: &'static str,
    pub bound_to: &'static [u8],
}

/// The key things are sealed with.
pub struct Sealer(LessSafeKey);

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer")
    }
}

/// Why the seal's secret could not be had. Names the file, never the secret.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("cannot make the key offers and tokens are sealed with")]
    NoKey,
    #[error("no randomness to seal offers and tokens with: {0}")]
    NoRandomness(getrandom::Error),
    #[error(
        "{file} can be read by others (mode {mode:04o}); make it yours alone with: chmod 600 {file}",
        file = .0.display(), mode = .1
    )]
    OpenToOthers(PathBuf, u32),
    #[error("{file} is not a secret this server made; remove it and a new one is made", file = .0.display())]
    NotOurs(PathBuf),
    #[error("cannot read {file}: {1}", file = .0.display())]
    Unreadable(PathBuf, #[source] std::io::Error),
    #[error("cannot make {folder}: {1}", folder = .0.display())]
    NoFolder(PathBuf, #[source] std::io::Error),
    #[error("cannot keep the sealing secret in {file}: {1}", file = .0.display())]
    NotKept(PathBuf, #[source] std::io::Error),
}

/// Seconds since the epoch, the unit every sealed expiry is in.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

impl Sealer {
    fn with_secret(secret: &[u8; SECRET_LEN]) -> Result<Sealer, SealError> {
        let key = UnboundKey::new(&CHACHA20_POLY1305, secret).map_err(|_| SealError::NoKey)?;
        Ok(Sealer(LessSafeKey::new(key)))
    }

    /// A sealer whose secret lives as long as the process: for one assistant over stdio.
    pub fn made_now() -> Result<Sealer, SealError> {
        Sealer::with_secret(&new_secret()?)
    }

    /// A sealer whose secret is kept in `state`, made there (readable by its owner only) the
    /// first time.
    pub fn kept_in(state: &Path) -> Result<Sealer, SealError> {
        let file = state.join(SECRET_FILE);
        let secret = match std::fs::read(&file) {
            Ok(_) => read_secret(&file)?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                make_folder(state)?;
                write_secret(&file, &new_secret()?)?
            }
            Err(error) => return Err(unreadable(&file, error)),
        };
        Sealer::with_secret(&secret)
    }

    /// `what`, sealed for `purpose`: its prefix, then the nonce and the sealed JSON in base64.
    pub fn seal(&self, purpose: &Purpose, what: &impl Serialize) -> Option<String> {
        let mut text = serde_json::to_vec(what).ok()?;
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).ok()?;
        self.0
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(purpose.bound_to),
                &mut text,
            )
            .ok()?;
        let mut sealed = nonce.to_vec();
        sealed.append(&mut text);
        Some(format!("{}{}", purpose.prefix, BASE64.encode(sealed)))
    }

    /// What `sealed` holds, with its nonce, if this server sealed it for `purpose` and no byte of
    /// it changed since.
    pub fn open<T: DeserializeOwned>(
        &self,
        purpose: &Purpose,
        sealed: &str,
    ) -> Option<(T, SealNonce)> {
        let bytes = BASE64
            .decode(sealed.trim().strip_prefix(purpose.prefix)?)
            .ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, text) = bytes.split_at(NONCE_LEN);
        let nonce: SealNonce = nonce.try_into().ok()?;
        let mut text = text.to_vec();
        let opened = self
            .0
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(purpose.bound_to),
                &mut text,
            )
            .ok()?;
        Some((serde_json::from_slice(opened).ok()?, nonce))
    }
}

/// Why something sealed could not be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotUsed {
    /// It was used already.
    Already,
    /// Too many are waiting to expire to remember one more, or it could not be recorded.
    NotRecorded,
}

/// The sealed things used, each remembered until it expires.
pub enum Used {
    InMemory(Mutex<HashMap<SealNonce, u64>>),
    /// One file each, named by its expiry and nonce, made only if it is not there.
    InFolder {
        folder: PathBuf,
        uses: AtomicU64,
    },
}

impl Used {
    pub fn in_memory() -> Used {
        Used::InMemory(Mutex::new(HashMap::new()))
    }

    /// Kept in `folder` (made the owner's alone), shared by every replica given it.
    pub fn in_folder(folder: PathBuf) -> Result<Used, SealError> {
        make_folder(&folder)?;
        Ok(Used::InFolder {
            folder,
            uses: AtomicU64::new(0),
        })
    }

    /// Marks the thing sealed with `nonce` as used, unless it was: the same thing is used once,
    /// even when two uses come at once, or to two replicas.
    pub fn use_once(&self, nonce: &SealNonce, expires: u64) -> Result<(), NotUsed> {
        match self {
            Used::InMemory(used) => {
                let mut used = lock(used);
                if used.contains_key(nonce) {
                    return Err(NotUsed::Already);
                }
                if used.len() >= KEPT_IN_MEMORY {
                    let now = now();
                    used.retain(|_, expires| *expires > now);
                    if used.len() >= KEPT_IN_MEMORY {
                        return Err(NotUsed::NotRecorded);
                    }
                }
                used.insert(*nonce, expires);
                Ok(())
            }
            Used::InFolder { folder, uses } => {
                if uses.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == 0 {
                    sweep(folder);
                }
                let made = crate::platform::owner_only(
                    std::fs::OpenOptions::new().write(true).create_new(true),
                )
                .open(folder.join(used_name(expires, nonce)));
                match made {
                    Ok(_) => Ok(()),
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                        Err(NotUsed::Already)
                    }
                    Err(error) => {
                        tracing::warn!(%error, "a sealed offer or token used could not be recorded, so it was not used");
                        Err(NotUsed::NotRecorded)
                    }
                }
            }
        }
    }

    pub fn was_used(&self, nonce: &SealNonce, expires: u64) -> bool {
        match self {
            Used::InMemory(used) => lock(used).contains_key(nonce),
            Used::InFolder { folder, .. } => folder.join(used_name(expires, nonce)).exists(),
        }
    }
}

/// A used thing's file: its expiry first, so a sweep can tell it is done with from its name.
fn used_name(expires: u64, nonce: &SealNonce) -> String {
    format!("{expires}-{}", hex::encode(nonce))
}

/// Removes the files of used things that have expired (they can no longer be opened anyway).
fn sweep(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let now = now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let expired = name
            .to_str()
            .and_then(|name| name.split('-').next()?.parse::<u64>().ok())
            .is_some_and(|expires| expires <= now);
        if expired {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Fresh random bytes, or the error that says there is no randomness to be had.
pub fn random<const N: usize>() -> Result<[u8; N], SealError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(SealError::NoRandomness)?;
    Ok(bytes)
}

fn new_secret() -> Result<[u8; SECRET_LEN], SealError> {
    random()
}

/// The secret kept in `file`, which must be its owner's alone.
fn read_secret(file: &Path) -> Result<[u8; SECRET_LEN], SealError> {
    if let Some(mode) =
        crate::state::open_to_others(file).map_err(|error| unreadable(file, error))?
    {
        return Err(SealError::OpenToOthers(file.to_owned(), mode));
    }
    let secret = std::fs::read(file).map_err(|error| unreadable(file, error))?;
    secret
        .try_into()
        .map_err(|_| SealError::NotOurs(file.to_owned()))
}

fn unreadable(file: &Path, error: std::io::Error) -> SealError {
    SealError::Unreadable(file.to_owned(), error)
}

fn make_folder(folder: &Path) -> Result<(), SealError> {
    crate::state::make_folder(folder).map_err(|error| SealError::NoFolder(folder.to_owned(), error))
}

/// Keeps `secret` in `file`, readable by its owner only, unless another replica got there first:
/// then that one's secret is the one used. Made whole under a name of its own first and linked
/// into place (which fails if the file is there), so no one ever reads half a secret.
fn write_secret(file: &Path, secret: &[u8; SECRET_LEN]) -> Result<[u8; SECRET_LEN], SealError> {
    let cannot = |error: std::io::Error| SealError::NotKept(file.to_owned(), error);
    let partial = file.with_extension(format!("{}.partial", hex::encode(random::<8>()?)));
    let written = (|| -> std::io::Result<()> {
        let mut handle =
            crate::platform::owner_only(std::fs::OpenOptions::new().write(true).create_new(true))
                .open(&partial)?;
        handle.write_all(secret)?;
        handle.sync_all()
    })();
    let linked = written.and_then(|()| std::fs::hard_link(&partial, file));
    let _ = std::fs::remove_file(&partial);
    match linked {
        Ok(()) => Ok(*secret),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => read_secret(file),
        Err(error) => Err(cannot(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFFER: Purpose = Purpose {
        prefix: "test-a.",
        bound_to: b"a",
    };
    const OTHER: Purpose = Purpose {
        prefix: "test-a.",
        bound_to: b"b",
    };

    #[test]
    fn a_seal_opens_for_its_own_purpose_only() {
        let sealer = Sealer::made_now().expect("a sealer");
        let sealed = sealer.seal(&OFFER, &"inside").expect("sealed");
        assert!(!sealed.contains("inside"));
        let (opened, _): (String, _) = sealer.open(&OFFER, &sealed).expect("opens");
        assert_eq!(opened, "inside");
        assert!(sealer.open::<String>(&OTHER, &sealed).is_none());
        let elsewhere = Sealer::made_now().expect("another sealer");
        assert!(elsewhere.open::<String>(&OFFER, &sealed).is_none());
    }

    #[test]
    fn a_thing_is_used_once_in_memory() {
        let used = Used::in_memory();
        let nonce = [1; NONCE_LEN];
        assert!(!used.was_used(&nonce, now() + 60));
        assert_eq!(used.use_once(&nonce, now() + 60), Ok(()));
        assert_eq!(used.use_once(&nonce, now() + 60), Err(NotUsed::Already));
        assert!(used.was_used(&nonce, now() + 60));
    }
}
