//! The offer a rehearsal hands out, sealed by the server. The stack carries out an action that
//! comes with no offer at all, so the server's check is the only consent there is; a bare stack
//! offer would prove only that some rehearsal happened. Sealed, it binds the stack's offer to the
//! key that rehearsed, the action, the exact arguments rehearsed and an expiry, so the act runs
//! exactly what the person agreed to, and anything else is refused before the stack is asked.
//!
//! Sealing is authenticated encryption (ChaCha20-Poly1305) under a secret the server makes at
//! start, or keeps in its state folder so that HTTP replicas sharing it accept each other's
//! offers. The seal holds all it needs, so it works in every protocol version and on any
//! replica; only the record of offers already acted on is the process's own.

use std::collections::HashMap;
use std::fmt;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

const PREFIX: &str = "lfmcp-offer1.";
const AAD: &[u8] = b"lemonfiber-mcp sealed offer 1";
const SECRET_FILE: &str = "offer-secret";
const SECRET_LEN: usize = 32;
/// Offers acted on are remembered until they expire; past this many at once, the oldest
/// expired ones are let go first, and no act is taken while none can be.
const SPENT_KEPT: usize = 100_000;
const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// What the server seals offers with, and the offers already acted on.
pub struct Seal {
    key: LessSafeKey,
    life: Duration,
    spent: Mutex<HashMap<[u8; NONCE_LEN], u64>>,
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
    /// Too many offers are waiting to expire to remember one more.
    TooManyInUse,
}

/// Why the seal's secret could not be had. Names the file, never the secret.
#[derive(Debug)]
pub struct SealError(String);

impl fmt::Display for SealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SealError {}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

impl Seal {
    fn with_secret(secret: &[u8; SECRET_LEN], life: Duration) -> Result<Seal, SealError> {
        let key = UnboundKey::new(&CHACHA20_POLY1305, secret)
            .map_err(|_| SealError("cannot make the key offers are sealed with".to_owned()))?;
        Ok(Seal {
            key: LessSafeKey::new(key),
            life,
            spent: Mutex::new(HashMap::new()),
        })
    }

    /// A seal whose secret lives as long as the process: for one assistant over stdio.
    pub fn made_now(life: Duration) -> Result<Seal, SealError> {
        let mut secret = [0u8; SECRET_LEN];
        getrandom::fill(&mut secret)
            .map_err(|error| SealError(format!("no randomness to seal offers with: {error}")))?;
        Seal::with_secret(&secret, life)
    }

    /// A seal whose secret is kept in `state`, made there (readable by its owner only) the
    /// first time: replicas given the same folder accept each other's offers.
    pub fn kept_in(state: &Path, life: Duration) -> Result<Seal, SealError> {
        let file = state.join(SECRET_FILE);
        match std::fs::read(&file) {
            Ok(secret) => {
                let mode = std::fs::metadata(&file)
                    .map_err(|error| unreadable(&file, error))?
                    .permissions()
                    .mode();
                if mode & 0o077 != 0 {
                    return Err(SealError(format!(
                        "{} can be read by others (mode {:04o}); make it yours alone with: chmod 600 {}",
                        file.display(),
                        mode & 0o7777,
                        file.display()
                    )));
                }
                let secret: [u8; SECRET_LEN] = secret.try_into().map_err(|_| {
                    SealError(format!(
                        "{} is not a secret this server made; remove it and a new one is made",
                        file.display()
                    ))
                })?;
                Seal::with_secret(&secret, life)
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let mut secret = [0u8; SECRET_LEN];
                getrandom::fill(&mut secret).map_err(|error| {
                    SealError(format!("no randomness to seal offers with: {error}"))
                })?;
                write_secret(&file, &secret)?;
                Seal::with_secret(&secret, life)
            }
            Err(error) => Err(unreadable(&file, error)),
        }
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
            k: hex(key_digest),
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
        if sealed.k != hex(key_digest) {
            return Err(OfferRefused::OtherKey);
        }
        if sealed.a != act_tool {
            return Err(OfferRefused::OtherAction);
        }
        if sealed.x <= now() {
            return Err(OfferRefused::Expired);
        }
        if self.is_spent(&nonce) {
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
    /// twice, even when both calls come at once.
    pub fn spend(&self, opened: &Opened) -> Result<(), OfferRefused> {
        let mut spent = match self.spent.lock() {
            Ok(spent) => spent,
            Err(poisoned) => poisoned.into_inner(),
        };
        if spent.contains_key(&opened.nonce) {
            return Err(OfferRefused::Spent);
        }
        if spent.len() >= SPENT_KEPT {
            let now = now();
            spent.retain(|_, expires| *expires > now);
            if spent.len() >= SPENT_KEPT {
                return Err(OfferRefused::TooManyInUse);
            }
        }
        spent.insert(opened.nonce, opened.expires);
        Ok(())
    }

    fn is_spent(&self, nonce: &[u8; NONCE_LEN]) -> bool {
        match self.spent.lock() {
            Ok(spent) => spent.contains_key(nonce),
            Err(poisoned) => poisoned.into_inner().contains_key(nonce),
        }
    }
}

fn unreadable(file: &Path, error: std::io::Error) -> SealError {
    SealError(format!("cannot read {}: {error}", file.display()))
}

/// Writes the secret to a file only its owner may read, made whole under another name first so
/// a crash never leaves half a secret.
fn write_secret(file: &Path, secret: &[u8]) -> Result<(), SealError> {
    let folder = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let cannot = |error: std::io::Error| {
        SealError(format!(
            "cannot keep the offer secret in {}: {error}",
            folder.display()
        ))
    };
    if !folder.as_os_str().is_empty() && !folder.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&folder)
            .map_err(cannot)?;
    }
    let partial: PathBuf = file.with_extension("partial");
    let mut handle = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&partial)
        .map_err(cannot)?;
    handle.write_all(secret).map_err(cannot)?;
    handle.sync_all().map_err(cannot)?;
    std::fs::rename(&partial, file).map_err(cannot)
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

    #[test]
    fn a_kept_secret_is_shared_and_its_owners_alone() {
        let state = std::env::temp_dir().join(format!("lemonfiber-seal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        let first = Seal::kept_in(&state, Duration::from_secs(600)).expect("made");
        let second = Seal::kept_in(&state, Duration::from_secs(600)).expect("kept");
        let offer = first
            .seal(&KEY, "restart", &arguments(), "lfo-1")
            .expect("sealed");
        assert!(
            second.open(&offer, &KEY, "restart").is_ok(),
            "a replica opens it"
        );
        let file = state.join(SECRET_FILE);
        let mode = std::fs::metadata(&file).expect("kept").permissions().mode();
        assert_eq!(mode & 0o077, 0);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("mode");
        let refused = Seal::kept_in(&state, Duration::from_secs(600)).expect_err("open to others");
        assert!(refused.to_string().contains("chmod 600"));
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
