//! The offer a rehearsal hands out, sealed by the server. The stack carries out an action that
//! comes with no offer at all, so the server's check is the only consent there is; a bare stack
//! offer would prove only that some rehearsal happened. Sealed, it binds the stack's offer to the
//! key that rehearsed, the action, the exact arguments rehearsed and an expiry, so the act runs
//! exactly what the person agreed to, and anything else is refused before the stack is asked.
//!
//! Sealing is authenticated encryption (ChaCha20-Poly1305) under a secret the server makes at
//! start, or keeps in its state folder so that HTTP replicas sharing it accept each other's
//! offers. The seal holds all it needs, so it works in every protocol version and on any
//! replica. Offers acted on are remembered until they expire: in memory for one process, or as
//! files in the state folder, made exclusively, so replicas sharing it refuse a replay too.

use std::collections::HashMap;
use std::fmt;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::lock::lock;
use sha2::{Digest, Sha256};

const PREFIX: &str = "lfmcp-offer1.";
const AAD: &[u8] = b"lemonfiber-mcp sealed offer 1";
const SECRET_FILE: &str = "offer-secret";
const SPENT_FOLDER: &str = "spent-offers";
/// A folder of spent offers is swept of expired ones after this many acts.
const SWEEP_EVERY: u64 = 64;
const SECRET_LEN: usize = 32;
/// Offers acted on are remembered until they expire; past this many at once, the oldest
/// expired ones are let go first, and no act is taken while none can be.
const SPENT_KEPT: usize = 100_000;
const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// What the server seals offers with, and the offers already acted on.
pub struct Seal {
    key: LessSafeKey,
    life: Duration,
    spent: Spent,
}

/// Where offers acted on are remembered, each until it expires.
enum Spent {
    InMemory(Mutex<HashMap<[u8; NONCE_LEN], u64>>),
    /// One file an offer, named by its expiry and nonce, made only if it is not there.
    InFolder {
        folder: PathBuf,
        acts: std::sync::atomic::AtomicU64,
    },
}

impl fmt::Debug for Seal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seal(life {:?})", self.life)
    }
}

/// What a sealed offer holds. Short names: it travels in every act call.
#[derive(Serialize, Deserialize)]
struct Sealed {
    /// The SHA-256 of the key that rehearsed, as hex.
    k: String,
    /// The act tool the offer is for.
    a: String,
    /// The arguments rehearsed, which are the ones acted with.
    r: Map<String, Value>,
    /// The stack's own offer.
    o: String,
    /// When it expires, in seconds since the epoch.
    x: u64,
}

/// A sealed offer opened for the key and action it was made for.
#[derive(Debug)]
pub struct Opened {
    /// The arguments the rehearsal was made with: the act is sent with these.
    pub arguments: Map<String, Value>,
    /// The stack's offer, sent back to it as the action's `offer`.
    pub stack_offer: String,
    nonce: [u8; NONCE_LEN],
    expires: u64,
}

impl Opened {
    /// The `Idempotency-Key` the act on this offer is sent with: one offer, one key. This server
    /// sends an act once (the offer is spent first); should the same request reach the stack
    /// again all the same (something between them sending it again, replicas that do not share
    /// their spent offers), the core carries it out once. It names the offer by its nonce's
    /// digest and says nothing of the offer itself.
    pub fn idempotency_key(&self) -> String {
        let digest = Sha256::new()
            .chain_update(b"lemonfiber-mcp idempotency key\0")
            .chain_update(self.nonce)
            .finalize();
        format!("lfmcp-{}", hex::encode(digest))
    }
}

/// The `Idempotency-Key` for an act no offer is needed for: a fresh one for each call, so the
/// request is carried out once should it reach the stack twice, and nothing sent later is
/// mistaken for it.
pub fn fresh_idempotency_key() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(format!("lfmcp-{}", hex::encode(bytes)))
}

/// Why an offer was refused before the stack was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfferRefused {
    /// Not an offer this server sealed: made up, changed, or sealed with another secret.
    NotSealedHere,
    /// Sealed for another key.
    OtherKey,
    /// Sealed for another action.
    OtherAction,
    Expired,
    /// Already acted on.
    Spent,
    /// Too many offers are waiting to expire to remember one more, or it could not be recorded.
    NotRecorded,
}

/// Why the seal's secret could not be had. Names the file, never the secret.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("cannot make the key offers are sealed with")]
    NoKey,
    #[error("no randomness to seal offers with: {0}")]
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
    #[error("cannot keep the offer secret in {file}: {1}", file = .0.display())]
    NotKept(PathBuf, #[source] std::io::Error),
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

impl Seal {
    fn with_secret(
        secret: &[u8; SECRET_LEN],
        life: Duration,
        spent: Spent,
    ) -> Result<Seal, SealError> {
        let key = UnboundKey::new(&CHACHA20_POLY1305, secret).map_err(|_| SealError::NoKey)?;
        Ok(Seal {
            key: LessSafeKey::new(key),
            life,
            spent,
        })
    }

    /// A seal whose secret lives as long as the process: for one assistant over stdio.
    pub fn made_now(life: Duration) -> Result<Seal, SealError> {
        Seal::with_secret(
            &new_secret()?,
            life,
            Spent::InMemory(Mutex::new(HashMap::new())),
        )
    }

    /// A seal whose secret is kept in `state`, made there (readable by its owner only) the
    /// first time, with the offers acted on beside it: replicas given the same folder accept
    /// each other's offers and refuse each other's replays.
    pub fn kept_in(state: &Path, life: Duration) -> Result<Seal, SealError> {
        let file = state.join(SECRET_FILE);
        let secret = match std::fs::read(&file) {
            Ok(_) => read_secret(&file)?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                make_folder(state)?;
                write_secret(&file, &new_secret()?)?
            }
            Err(error) => return Err(unreadable(&file, error)),
        };
        let folder = state.join(SPENT_FOLDER);
        make_folder(&folder)?;
        Seal::with_secret(
            &secret,
            life,
            Spent::InFolder {
                folder,
                acts: std::sync::atomic::AtomicU64::new(0),
            },
        )
    }

    /// The offer the assistant is handed for the stack's `stack_offer`, made by rehearsing
    /// `act_tool` with `arguments` under the key whose digest is `key_digest`.
    pub fn seal(
        &self,
        key_digest: &[u8; 32],
        act_tool: &str,
        arguments: &Map<String, Value>,
        stack_offer: &str,
    ) -> Option<String> {
        let sealed = Sealed {
            k: hex::encode(key_digest),
            a: act_tool.to_owned(),
            r: arguments.clone(),
            o: stack_offer.to_owned(),
            x: now() + self.life.as_secs(),
        };
        let mut text = serde_json::to_vec(&sealed).ok()?;
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).ok()?;
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(AAD),
                &mut text,
            )
            .ok()?;
        let mut token = nonce.to_vec();
        token.append(&mut text);
        Some(format!("{PREFIX}{}", BASE64.encode(token)))
    }

    /// Opens `offer` for `act_tool` under the key whose digest is `key_digest`, or says why it is
    /// not an offer to act on.
    pub fn open(
        &self,
        offer: &str,
        key_digest: &[u8; 32],
        act_tool: &str,
    ) -> Result<Opened, OfferRefused> {
        let token = offer
            .trim()
            .strip_prefix(PREFIX)
            .and_then(|rest| BASE64.decode(rest).ok())
            .ok_or(OfferRefused::NotSealedHere)?;
        if token.len() < NONCE_LEN {
            return Err(OfferRefused::NotSealedHere);
        }
        let (nonce, sealed) = token.split_at(NONCE_LEN);
        let nonce: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| OfferRefused::NotSealedHere)?;
        let mut sealed = sealed.to_vec();
        let opened = self
            .key
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(AAD),
                &mut sealed,
            )
            .map_err(|_| OfferRefused::NotSealedHere)?;
        let sealed: Sealed =
            serde_json::from_slice(opened).map_err(|_| OfferRefused::NotSealedHere)?;
        if sealed.k != hex::encode(key_digest) {
            return Err(OfferRefused::OtherKey);
        }
        if sealed.a != act_tool {
            return Err(OfferRefused::OtherAction);
        }
        if sealed.x <= now() {
            return Err(OfferRefused::Expired);
        }
        if self.is_spent(&nonce, sealed.x) {
            return Err(OfferRefused::Spent);
        }
        Ok(Opened {
            arguments: sealed.r,
            stack_offer: sealed.o,
            nonce,
            expires: sealed.x,
        })
    }

    /// Marks an opened offer as acted on, before the act is sent: the same offer cannot act
    /// twice, even when both calls come at once, or to two replicas.
    pub fn spend(&self, opened: &Opened) -> Result<(), OfferRefused> {
        match &self.spent {
            Spent::InMemory(spent) => {
                let mut spent = lock(spent);
                if spent.contains_key(&opened.nonce) {
                    return Err(OfferRefused::Spent);
                }
                if spent.len() >= SPENT_KEPT {
                    let now = now();
                    spent.retain(|_, expires| *expires > now);
                    if spent.len() >= SPENT_KEPT {
                        return Err(OfferRefused::NotRecorded);
                    }
                }
                spent.insert(opened.nonce, opened.expires);
                Ok(())
            }
            Spent::InFolder { folder, acts } => {
                if acts.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % SWEEP_EVERY == 0 {
                    sweep(folder);
                }
                let made = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(folder.join(spent_name(opened.expires, &opened.nonce)));
                match made {
                    Ok(_) => Ok(()),
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                        Err(OfferRefused::Spent)
                    }
                    Err(error) => {
                        tracing::warn!(%error, "an offer acted on could not be recorded, so it was not acted on");
                        Err(OfferRefused::NotRecorded)
                    }
                }
            }
        }
    }

    fn is_spent(&self, nonce: &[u8; NONCE_LEN], expires: u64) -> bool {
        match &self.spent {
            Spent::InMemory(spent) => lock(spent).contains_key(nonce),
            Spent::InFolder { folder, .. } => folder.join(spent_name(expires, nonce)).exists(),
        }
    }
}

/// A spent offer's file: its expiry first, so a sweep can tell it is done with from its name.
fn spent_name(expires: u64, nonce: &[u8; NONCE_LEN]) -> String {
    format!("{expires}-{}", hex::encode(nonce))
}

/// Removes the files of spent offers that have expired (they can no longer be opened anyway).
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

fn new_secret() -> Result<[u8; SECRET_LEN], SealError> {
    let mut secret = [0u8; SECRET_LEN];
    getrandom::fill(&mut secret).map_err(SealError::NoRandomness)?;
    Ok(secret)
}

/// The secret kept in `file`, which must be its owner's alone.
fn read_secret(file: &Path) -> Result<[u8; SECRET_LEN], SealError> {
    let mode = std::fs::metadata(file)
        .map_err(|error| unreadable(file, error))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(SealError::OpenToOthers(file.to_owned(), mode & 0o7777));
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
    let partial = file.with_extension(format!("{}.partial", hex::encode(&new_secret()?[..8])));
    let written = (|| -> std::io::Result<()> {
        let mut handle = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
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
    use proptest::prelude::*;
    use serde_json::json;

    const KEY: [u8; 32] = [7; 32];
    const OTHER_KEY: [u8; 32] = [8; 32];

    fn seal() -> Seal {
        Seal::made_now(Duration::from_secs(600)).expect("a seal")
    }

    fn arguments() -> Map<String, Value> {
        let Value::Object(arguments) = json!({"services": ["sonarr"]}) else {
            unreachable!()
        };
        arguments
    }

    #[test]
    fn an_offer_opens_for_its_key_and_action_with_what_was_rehearsed() {
        let seal = seal();
        let offer = seal
            .seal(&KEY, "restart", &arguments(), "lfo-stack-1")
            .expect("sealed");
        let opened = seal.open(&offer, &KEY, "restart").expect("opens");
        assert_eq!(opened.arguments, arguments());
        assert_eq!(opened.stack_offer, "lfo-stack-1");
        assert!(!offer.contains("sonarr") && !offer.contains("lfo-stack"));
    }

    #[test]
    fn another_keys_another_actions_made_up_and_spent_offers_are_refused() {
        let seal = seal();
        let offer = seal
            .seal(&KEY, "restart", &arguments(), "lfo-1")
            .expect("sealed");
        assert_eq!(
            seal.open(&offer, &OTHER_KEY, "restart").err(),
            Some(OfferRefused::OtherKey)
        );
        assert_eq!(
            seal.open(&offer, &KEY, "update").err(),
            Some(OfferRefused::OtherAction)
        );
        for made_up in ["lfo-restart-3", "", "lfmcp-offer1.", "lfmcp-offer1.AAAA"] {
            assert_eq!(
                seal.open(made_up, &KEY, "restart").err(),
                Some(OfferRefused::NotSealedHere),
                "{made_up}"
            );
        }
        let elsewhere = Seal::made_now(Duration::from_secs(600)).expect("another seal");
        assert_eq!(
            elsewhere.open(&offer, &KEY, "restart").err(),
            Some(OfferRefused::NotSealedHere),
            "another secret"
        );
        let opened = seal.open(&offer, &KEY, "restart").expect("opens");
        seal.spend(&opened).expect("spent once");
        assert_eq!(seal.spend(&opened).err(), Some(OfferRefused::Spent));
        assert_eq!(
            seal.open(&offer, &KEY, "restart").err(),
            Some(OfferRefused::Spent)
        );
    }

    #[test]
    fn an_expired_offer_is_refused() {
        let seal = Seal::made_now(Duration::ZERO).expect("a seal");
        let offer = seal
            .seal(&KEY, "restart", &arguments(), "lfo-1")
            .expect("sealed");
        assert_eq!(
            seal.open(&offer, &KEY, "restart").err(),
            Some(OfferRefused::Expired)
        );
    }

    fn fresh_state(what: &str) -> PathBuf {
        let state =
            std::env::temp_dir().join(format!("lemonfiber-seal-{what}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        state
    }

    #[test]
    fn a_kept_secret_and_the_offers_spent_are_shared_and_the_secret_its_owners_alone() {
        let state = fresh_state("kept");
        let first = Seal::kept_in(&state, Duration::from_secs(600)).expect("made");
        let second = Seal::kept_in(&state, Duration::from_secs(600)).expect("kept");
        let offer = first
            .seal(&KEY, "restart", &arguments(), "lfo-1")
            .expect("sealed");
        let opened = second
            .open(&offer, &KEY, "restart")
            .expect("a replica opens it");
        second.spend(&opened).expect("spent on one replica");
        assert_eq!(
            first.open(&offer, &KEY, "restart").err(),
            Some(OfferRefused::Spent),
            "and refused as spent on the other"
        );
        let file = state.join(SECRET_FILE);
        let mode = std::fs::metadata(&file).expect("kept").permissions().mode();
        assert_eq!(mode & 0o077, 0);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("mode");
        let refused = Seal::kept_in(&state, Duration::from_secs(600)).expect_err("open to others");
        assert!(refused.to_string().contains("chmod 600"));
        let _ = std::fs::remove_dir_all(&state);
    }

    #[test]
    fn replicas_starting_together_end_with_one_secret() {
        let state = fresh_state("together");
        let seals: Vec<Seal> = std::thread::scope(|scope| {
            let starting: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| Seal::kept_in(&state, Duration::from_secs(600))))
                .collect();
            starting
                .into_iter()
                .map(|started| started.join().expect("started").expect("a seal"))
                .collect()
        });
        let offer = seals[0]
            .seal(&KEY, "restart", &arguments(), "lfo-1")
            .expect("sealed");
        for seal in &seals {
            assert!(seal.open(&offer, &KEY, "restart").is_ok());
        }
        let _ = std::fs::remove_dir_all(&state);
    }

    proptest! {
        /// Whatever byte of a sealed offer is changed, and to whatever, it no longer opens.
        #[test]
        fn a_sealed_offer_changed_in_any_byte_is_refused(at in any::<prop::sample::Index>(), to in any::<u8>()) {
            let seal = seal();
            let offer = seal.seal(&KEY, "restart", &arguments(), "lfo-1").expect("sealed");
            let mut bytes = offer.clone().into_bytes();
            let at = at.index(bytes.len());
            prop_assume!(bytes[at] != to);
            bytes[at] = to;
            let changed = String::from_utf8_lossy(&bytes).into_owned();
            prop_assert_eq!(seal.open(&changed, &KEY, "restart").err(), Some(OfferRefused::NotSealedHere));
        }
    }
}
