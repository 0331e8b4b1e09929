//! How the server deals with the stack and the assistant, whichever way it is reached: how long
//! it follows a job, how much of an answer it reads and hands on, how long an offer lasts, where
//! the audit goes, what stands for the person's yes, and how often a watched resource is read.

use std::path::PathBuf;
use std::time::Duration;

use super::values::{KIB, MIB, number, size};
use super::{
    ANSWER_LIMIT, AUDIT, CONSENT, ConfigError, JOB_WAIT, OFFER_LIFE, RESULT_LIMIT, WATCH_EVERY,
};
use crate::stack::AnswerLimits;

pub const DEFAULT_JOB_WAIT: Duration = Duration::from_secs(10);
const LONGEST_JOB_WAIT_SECONDS: u64 = 300;

/// Room in a result's text for the server's sentence and the boundary lines around the data.
const ROOM_FOR_THE_FRAME: u64 = KIB;

/// How the server deals with the stack and the assistant, whichever way it is reached.
#[derive(Debug, Clone)]
pub struct Conduct {
    /// How long an action's job is followed before the answer says it is still running.
    pub job_wait: Duration,
    /// How much of a stack's answer is read, and how much of it kept.
    pub answers: AnswerLimits,
    /// The most text one result hands the assistant.
    pub result_limit: usize,
    /// How long an offer the rehearsal hands out can be acted on.
    pub offer_life: Duration,
    /// Where the audit lines go: a file, or stderr.
    pub audit: Option<PathBuf>,
    /// What stands for the person's yes when they cannot be asked.
    pub consent: ConsentMode,
    /// How often a watched resource is read again to see whether it changed.
    pub watch_every: Duration,
}

/// What stands for the person's yes to an action when the client cannot ask them, or they do not
/// answer (`LEMONFIBER_CONSENT`). An answer of no, or a cancelled question, refuses in every mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsentMode {
    /// The person's own answer, always: no answer, no action.
    Ask,
    /// The person is asked where the client can ask; otherwise the offer alone stands.
    Offer,
    /// The offer and the person's answer wherever the client can ask, so a question left
    /// unanswered refuses; the offer alone only where the client cannot ask at all.
    Both,
}

impl Conduct {
    pub const DEFAULT_ANSWER_LIMIT: u64 = 8 * MIB;
    pub const DEFAULT_RESULT_LIMIT: u64 = 48 * KIB;
    /// Seconds an offer can be acted on.
    pub const DEFAULT_OFFER_LIFE: u64 = 600;
    /// Seconds between two reads of a watched resource.
    pub const DEFAULT_WATCH_EVERY: u64 = 15;

    /// The defaults, as the demo serves them.
    pub fn default_conduct() -> Conduct {
        Conduct::with(
            DEFAULT_JOB_WAIT,
            Conduct::DEFAULT_ANSWER_LIMIT,
            Conduct::DEFAULT_RESULT_LIMIT,
            Conduct::DEFAULT_OFFER_LIFE,
            None,
        )
    }

    fn with(
        job_wait: Duration,
        answer_limit: u64,
        result_limit: u64,
        offer_life: u64,
        audit: Option<PathBuf>,
    ) -> Conduct {
        let result_limit = usize::try_from(result_limit).unwrap_or(usize::MAX);
        Conduct {
            job_wait,
            answers: AnswerLimits {
                wire: answer_limit,
                keep: result_limit.saturating_sub(ROOM_FOR_THE_FRAME as usize),
            },
            result_limit,
            offer_life: Duration::from_secs(offer_life),
            audit,
            consent: ConsentMode::Offer,
            watch_every: Duration::from_secs(Conduct::DEFAULT_WATCH_EVERY),
        }
    }
}

/// How the server deals with the stack and the assistant, from the settings `set` holds.
pub fn conduct(set: &impl Fn(&str) -> Option<String>) -> Result<Conduct, ConfigError> {
    let consent = match set(CONSENT).map(|mode| mode.trim().to_ascii_lowercase()) {
        None => ConsentMode::Offer,
        Some(mode) => match mode.as_str() {
            "ask" => ConsentMode::Ask,
            "offer" => ConsentMode::Offer,
            "both" => ConsentMode::Both,
            _ => return Err(ConfigError::BadConsent),
        },
    };
    let watch_every = number(set, WATCH_EVERY, Conduct::DEFAULT_WATCH_EVERY, 1, 3600)?;
    let conduct = Conduct::with(
        job_wait(set)?,
        size(
            set,
            ANSWER_LIMIT,
            Conduct::DEFAULT_ANSWER_LIMIT,
            64 * KIB,
            256 * MIB,
        )?,
        size(
            set,
            RESULT_LIMIT,
            Conduct::DEFAULT_RESULT_LIMIT,
            4 * KIB,
            4 * MIB,
        )?,
        number(set, OFFER_LIFE, Conduct::DEFAULT_OFFER_LIFE, 1, 3600)?,
        set(AUDIT).map(PathBuf::from),
    );
    Ok(Conduct {
        consent,
        watch_every: Duration::from_secs(watch_every),
        ..conduct
    })
}

fn job_wait(set: &impl Fn(&str) -> Option<String>) -> Result<Duration, ConfigError> {
    number(
        set,
        JOB_WAIT,
        DEFAULT_JOB_WAIT.as_secs(),
        0,
        LONGEST_JOB_WAIT_SECONDS,
    )
    .map(Duration::from_secs)
}
