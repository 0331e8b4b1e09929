//! The offer a rehearsal hands out, sealed by the server. The stack carries out an action that
//! comes with no offer at all, so the server's check is the only consent there is; a bare stack
//! offer would prove only that some rehearsal happened. Sealed, it binds the stack's offer to the
//! key that rehearsed, the action, the exact arguments rehearsed and an expiry, so the act runs
//! exactly what the person agreed to, and anything else is refused before the stack is asked.
//!
//! The seal (see `sealing`) holds all it needs, so it works in every protocol version and on any
//! replica; offers acted on are remembered until they expire.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::sealing::{NotUsed, Purpose, SealError, SealNonce, Sealer, Used, now};

const OFFER: Purpose = Purpose {
    prefix: "lfmcp-offer1.",
    bound_to: b"lemonfiber-mcp sealed offer 1",
};
/// The question a 2026-07-28 call hands the client to put to the person, sealed so the answer
/// it brings back is known to be to this question: this key, this action, this very offer.
const QUESTION: Purpose = Purpose {
    prefix: "lfmcp-ask1.",
    bound_to: b"lemonfiber-mcp consent question 1",
};
const SPENT_FOLDER: &str = "spent-offers";

/// What the server seals offers with, and the offers already acted on.
pub struct Seal {
    sealer: Sealer,
    life: Duration,
    spent: Used,
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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
    /// The digest of the plan the rehearsal reported (see `plan`), to tell whether it has moved.
    p: String,
    /// When it expires, in seconds since the epoch.
    x: u64,
}

/// What a sealed question holds.
#[derive(Serialize, Deserialize)]
struct Question {
    /// The SHA-256 of the key, as hex.
    k: String,
    /// The act tool.
    a: String,
    /// The SHA-256 of what the question is about (the sealed offer, or for an action with no
    /// rehearsal the arguments it is sent with), as hex.
    o: String,
    /// When the answer is no longer taken, in seconds since the epoch.
    x: u64,
}

/// A sealed question that opened for the key, action and subject it was put about: the yes it
/// brings is taken once.
#[derive(Debug)]
pub struct AskedAbout {
    nonce: SealNonce,
    expires: u64,
}

/// A sealed offer opened for the key and action it was made for.
#[derive(Debug)]
pub struct Opened {
    /// The arguments the rehearsal was made with: the act is sent with these.
    pub arguments: Map<String, Value>,
    /// The stack's offer, sent back to it as the action's `offer`.
    pub stack_offer: String,
    /// The digest of the plan the offer was made on.
    pub plan: String,
    nonce: SealNonce,
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

/// How the person's yes to an action was had, as the result and the audit line say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consent {
    /// The person answered yes when their client asked them.
    Asked,
    /// The rehearsal's offer alone, where the person was not heard from and the settings let
    /// the offer stand.
    Offer(Unheard),
    /// The assistant's call alone, for an action the core carries out with no offer, where the
    /// client cannot ask and the settings let the call stand.
    Call,
}

/// Why the person's own answer was not had, where the settings let acting go on without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unheard {
    /// Asked, and silent until the question lapsed.
    NoAnswer,
    /// Their client cannot put a question to them.
    CannotAsk,
}

impl Consent {
    pub fn word(self) -> &'static str {
        match self {
            Consent::Asked => "asked",
            Consent::Offer(_) => "offer",
            Consent::Call => "call",
        }
    }
}

/// Why there is no yes to act on, though the offer (if the action takes one) was good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoConsent {
    /// The person said no.
    Declined,
    /// The person (or the client) cancelled the question.
    Cancelled,
    /// A reply came that is not a verifiable answer to this very question: the question it
    /// brings back was changed, lapsed or put about something else, the answer is filed under
    /// another name or is not an answer at all, or the client answered with an error.
    Unmatched,
    /// The yes brought back was already acted on once.
    AnswerSpent,
    /// No answer in time, and without it nothing stands for the person's yes.
    NoAnswer,
    /// The client cannot ask its person, and the settings require the person's answer.
    CannotAsk,
}

impl NoConsent {
    /// The audit's word for it.
    pub fn word(self) -> &'static str {
        match self {
            NoConsent::Declined => "person-declined",
            NoConsent::Cancelled => "person-cancelled",
            NoConsent::Unmatched => "answer-not-to-this-question",
            NoConsent::AnswerSpent => "answer-already-used",
            NoConsent::NoAnswer => "person-did-not-answer",
            NoConsent::CannotAsk => "person-cannot-be-asked",
        }
    }

    /// Whether the no is the person's own (or comes in their name), so the offer is spent and
    /// acting again takes a new rehearsal.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            NoConsent::Declined | NoConsent::Cancelled | NoConsent::Unmatched
        )
    }
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

impl Seal {
    /// A seal whose secret lives as long as the process: for one assistant over stdio.
    pub fn made_now(life: Duration) -> Result<Seal, SealError> {
        Ok(Seal {
            sealer: Sealer::made_now()?,
            life,
            spent: Used::in_memory(),
        })
    }

    /// A seal whose secret is kept in `state`, with the offers acted on beside it: replicas
    /// given the same folder accept each other's offers and refuse each other's replays.
    pub fn kept_in(state: &Path, life: Duration) -> Result<Seal, SealError> {
        Ok(Seal {
            sealer: Sealer::kept_in(state)?,
            life,
            spent: Used::in_folder(state.join(SPENT_FOLDER))?,
        })
    }

    /// The offer the assistant is handed for the stack's `stack_offer`, made by rehearsing
    /// `act_tool` with `arguments` under the key whose digest is `key_digest`, on the plan whose
    /// digest is `plan`.
    pub fn seal(
        &self,
        key_digest: &[u8; 32],
        act_tool: &str,
        arguments: &Map<String, Value>,
        stack_offer: &str,
        plan: &str,
    ) -> Option<String> {
        let sealed = Sealed {
            k: hex::encode(key_digest),
            a: act_tool.to_owned(),
            r: arguments.clone(),
            o: stack_offer.to_owned(),
            p: plan.to_owned(),
            x: now() + self.life.as_secs(),
        };
        self.sealer.seal(&OFFER, &sealed)
    }

    /// Opens `offer` for `act_tool` under the key whose digest is `key_digest`, or says why it is
    /// not an offer to act on.
    pub fn open(
        &self,
        offer: &str,
        key_digest: &[u8; 32],
        act_tool: &str,
    ) -> Result<Opened, OfferRefused> {
        let (sealed, nonce): (Sealed, _) = self
            .sealer
            .open(&OFFER, offer)
            .ok_or(OfferRefused::NotSealedHere)?;
        if sealed.k != hex::encode(key_digest) {
            return Err(OfferRefused::OtherKey);
        }
        if sealed.a != act_tool {
            return Err(OfferRefused::OtherAction);
        }
        if sealed.x <= now() {
            return Err(OfferRefused::Expired);
        }
        if self.spent.was_used(&nonce, sealed.x) {
            return Err(OfferRefused::Spent);
        }
        Ok(Opened {
            arguments: sealed.r,
            stack_offer: sealed.o,
            plan: sealed.p,
            nonce,
            expires: sealed.x,
        })
    }

    /// The question about acting with `act_tool` on `about` (a sealed offer, or the arguments an
    /// action with no rehearsal is sent with), sealed for the key whose digest is `key_digest`,
    /// to be answered within `answer_within`.
    pub fn question(
        &self,
        key_digest: &[u8; 32],
        act_tool: &str,
        about: &str,
        answer_within: Duration,
    ) -> Option<String> {
        let question = Question {
            k: hex::encode(key_digest),
            a: act_tool.to_owned(),
            o: hex::encode(Sha256::digest(about)),
            x: now() + answer_within.as_secs(),
        };
        self.sealer.seal(&QUESTION, &question)
    }

    /// `question` opened, if it is one this server sealed about acting with `act_tool` on
    /// `about` for this key, still in time to be answered.
    pub fn asked(
        &self,
        question: &str,
        key_digest: &[u8; 32],
        act_tool: &str,
        about: &str,
    ) -> Option<AskedAbout> {
        let (question, nonce) = self.sealer.open::<Question>(&QUESTION, question)?;
        let matches = question.k == hex::encode(key_digest)
            && question.a == act_tool
            && question.o == hex::encode(Sha256::digest(about))
            && question.x > now();
        matches.then_some(AskedAbout {
            nonce,
            expires: question.x,
        })
    }

    /// Marks the answer to a question as acted on: for an action with no offer to spend, the
    /// one yes acts once, however often it is brought back.
    pub fn spend_answer(&self, asked: &AskedAbout) -> Result<(), NoConsent> {
        self.spent
            .use_once(&asked.nonce, asked.expires)
            .map_err(|_| NoConsent::AnswerSpent)
    }

    /// Marks an opened offer as acted on, before the act is sent: the same offer cannot act
    /// twice, even when both calls come at once, or to two replicas.
    pub fn spend(&self, opened: &Opened) -> Result<(), OfferRefused> {
        self.spent
            .use_once(&opened.nonce, opened.expires)
            .map_err(|not_used| match not_used {
                NotUsed::Already => OfferRefused::Spent,
                NotUsed::NotRecorded => OfferRefused::NotRecorded,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

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
            .seal(&KEY, "restart", &arguments(), "lfo-stack-1", "plan")
            .expect("sealed");
        let opened = seal.open(&offer, &KEY, "restart").expect("opens");
        assert_eq!(opened.arguments, arguments());
        assert_eq!(opened.stack_offer, "lfo-stack-1");
        assert_eq!(opened.plan, "plan");
        assert!(!offer.contains("sonarr") && !offer.contains("lfo-stack"));
    }

    #[test]
    fn another_keys_another_actions_made_up_and_spent_offers_are_refused() {
        let seal = seal();
        let offer = seal
            .seal(&KEY, "restart", &arguments(), "lfo-1", "plan")
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
    fn a_question_is_answered_only_for_its_key_action_and_offer_in_time() {
        let seal = seal();
        let within = Duration::from_secs(120);
        let question = seal
            .question(&KEY, "restart", "lfmcp-offer1.a", within)
            .expect("sealed");
        assert!(
            seal.asked(&question, &KEY, "restart", "lfmcp-offer1.a")
                .is_some()
        );
        assert!(
            seal.asked(&question, &OTHER_KEY, "restart", "lfmcp-offer1.a")
                .is_none()
        );
        assert!(
            seal.asked(&question, &KEY, "update", "lfmcp-offer1.a")
                .is_none()
        );
        assert!(
            seal.asked(&question, &KEY, "restart", "lfmcp-offer1.b")
                .is_none()
        );
        let offer = seal
            .seal(&KEY, "restart", &arguments(), "lfo-1", "plan")
            .expect("an offer");
        assert!(
            seal.asked(&offer, &KEY, "restart", "lfmcp-offer1.a")
                .is_none(),
            "an offer is not a question"
        );
        let late = seal
            .question(&KEY, "restart", "lfmcp-offer1.a", Duration::ZERO)
            .expect("sealed");
        assert!(
            seal.asked(&late, &KEY, "restart", "lfmcp-offer1.a")
                .is_none()
        );
    }

    #[test]
    fn a_yes_to_a_question_acts_once() {
        let seal = seal();
        let about = r#"{"disruptive":true}"#;
        let question = seal
            .question(&KEY, "diagnose", about, Duration::from_secs(120))
            .expect("sealed");
        let asked = seal
            .asked(&question, &KEY, "diagnose", about)
            .expect("opens");
        assert_eq!(seal.spend_answer(&asked), Ok(()));
        let again = seal
            .asked(&question, &KEY, "diagnose", about)
            .expect("still opens");
        assert_eq!(seal.spend_answer(&again), Err(NoConsent::AnswerSpent));
    }

    #[test]
    fn an_expired_offer_is_refused() {
        let seal = Seal::made_now(Duration::ZERO).expect("a seal");
        let offer = seal
            .seal(&KEY, "restart", &arguments(), "lfo-1", "plan")
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

    // The secret is kept its owner's alone by mode, which only Unix has.
    #[cfg(unix)]
    #[test]
    fn a_kept_secret_and_the_offers_spent_are_shared_and_the_secret_its_owners_alone() {
        let state = fresh_state("kept");
        let first = Seal::kept_in(&state, Duration::from_secs(600)).expect("made");
        let second = Seal::kept_in(&state, Duration::from_secs(600)).expect("kept");
        let offer = first
            .seal(&KEY, "restart", &arguments(), "lfo-1", "plan")
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
        let file = state.join("seal-secret");
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
            .seal(&KEY, "restart", &arguments(), "lfo-1", "plan")
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
            let offer = seal.seal(&KEY, "restart", &arguments(), "lfo-1", "plan").expect("sealed");
            let mut bytes = offer.clone().into_bytes();
            let at = at.index(bytes.len());
            prop_assume!(bytes[at] != to);
            bytes[at] = to;
            let changed = String::from_utf8_lossy(&bytes).into_owned();
            prop_assert_eq!(seal.open(&changed, &KEY, "restart").err(), Some(OfferRefused::NotSealedHere));
        }
    }
}
