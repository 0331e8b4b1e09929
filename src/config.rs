//! The settings a server is started with, from its environment. A key is never taken from the
//! command line (where other users of the machine can read it), and there is no password setting.

use std::net::{IpAddr, SocketAddr};
use std::num::{NonZeroU32, NonZeroU64, NonZeroUsize};
use std::path::PathBuf;
use std::time::Duration;

use crate::fingerprint::{Fingerprint, FingerprintError};
use crate::stack::credential::{Key, KeyError};
use crate::stack::{AnswerLimits, StackAddress};

mod file;
mod proxy;
mod sign_in;
mod tls;
pub use file::{CONFIG, config_path, read_linked, remove_linked, reserve};
pub use proxy::{
    FORWARDED_HEADER, ForwardedHeader, PUBLIC_URL, PublicUrl, PublicUrlFault, TRUSTED_PROXIES,
    TrustedProxies,
};
pub use sign_in::{CLIENT_DOCUMENT_ROOTS, SignInSettings, sign_in};
pub use tls::{
    ACME_DIRECTORY, ACME_DNS_HOOK, ACME_HTTP, AcmeChallenge, AcmeSettings, TLS_MODE, TlsMode,
    tls_mode,
};

pub const ADDRESS: &str = "LEMONFIBER_ADDRESS";
pub const PIN: &str = "LEMONFIBER_PIN";
pub const KEY_FILE: &str = "LEMONFIBER_KEY_FILE";
pub const KEY: &str = "LEMONFIBER_KEY";
pub const LINK: &str = "LEMONFIBER_LINK";
pub const JOB_WAIT: &str = "LEMONFIBER_JOB_WAIT";
pub const LISTEN: &str = "LEMONFIBER_LISTEN";
pub const NAMES: &str = "LEMONFIBER_NAMES";
pub const STATE: &str = "LEMONFIBER_STATE";
pub const ORIGINS: &str = "LEMONFIBER_ORIGINS";
pub const PUBLIC_PORT: &str = "LEMONFIBER_PUBLIC_PORT";
pub const RATE: &str = "LEMONFIBER_RATE";
pub const AT_ONCE: &str = "LEMONFIBER_AT_ONCE";
pub const SESSIONS: &str = "LEMONFIBER_SESSIONS";
pub const KEY_SESSIONS: &str = "LEMONFIBER_KEY_SESSIONS";
pub const PEER_RATE: &str = "LEMONFIBER_PEER_RATE";
pub const PEER_NEW_KEYS: &str = "LEMONFIBER_PEER_NEW_KEYS";
pub const PEER_AT_ONCE: &str = "LEMONFIBER_PEER_AT_ONCE";
pub const UNDER_WAY: &str = "LEMONFIBER_UNDER_WAY";
pub const ANSWER_LIMIT: &str = "LEMONFIBER_ANSWER_LIMIT";
pub const RESULT_LIMIT: &str = "LEMONFIBER_RESULT_LIMIT";
pub const OFFER_LIFE: &str = "LEMONFIBER_OFFER_LIFE";
pub const AUDIT: &str = "LEMONFIBER_AUDIT";
pub const CONSENT: &str = "LEMONFIBER_CONSENT";
pub const WATCH_EVERY: &str = "LEMONFIBER_WATCH_EVERY";

pub const DEFAULT_JOB_WAIT: Duration = Duration::from_secs(10);
const LONGEST_JOB_WAIT_SECONDS: u64 = 300;
const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
/// Room in a result's text for the server's sentence and the boundary lines around the data.
const ROOM_FOR_THE_FRAME: u64 = KIB;
pub const DEFAULT_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// The HTTP mode's own folder inside the per-user state folder, when LEMONFIBER_STATE names none.
const HTTP_STATE: &str = "http";

/// What is wrong with the settings. Names the setting, never its value.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0} is not set")]
    Missing(&'static str),
    #[error(
        "there is no per-user folder to keep the HTTP mode's certificate and secrets in (HOME is not set): set \
         {STATE} to the folder to keep them in"
    )]
    NoStateFolder,
    #[error("{ADDRESS} is not a stack address ({0}); give it as https://host:port")]
    BadAddress(&'static str),
    #[error(
        "{PIN} is not set: without the pin the stack's certificate cannot be checked, and whatever answers at \
         {ADDRESS} (on this machine or not) would be trusted. Copy the pin the stack shows for its certificate \
         into {PIN}"
    )]
    PinMissing,
    #[error("{PIN} is not a pin: {0}")]
    BadPin(FingerprintError),
    #[error(
        "{KEY_FILE} names {}, which others can read or write (mode {:04o}); the key is not used. Make it \
         yours alone with: chmod 600 {}",
        .0.display(), .1, .0.display()
    )]
    KeyFileOpenToOthers(PathBuf, u32),
    #[error("{0} must be a number of bytes from {1} to {2}, such as 8MiB or 49152")]
    BadSize(&'static str, u64, u64),
    #[error("both {KEY_FILE} and {KEY} are set; set only one (preferably {KEY_FILE})")]
    BothKeys,
    #[error(
        "{LINK} is set, and so is {0}: a key link brings the stack and the key itself, so set either the \
         link or the stack and key, not both"
    )]
    LinkAndMore(&'static str),
    #[error("no key: set {KEY_FILE} to the file holding this assistant's integration key")]
    NoKey,
    #[error("{KEY_FILE} names {path}, which cannot be read ({1})", path = .0.display())]
    KeyFileUnreadable(PathBuf, std::io::ErrorKind),
    #[error("{0}: {1}")]
    BadKey(&'static str, KeyError),
    #[error("{0} must be a whole number from {1} to {2}")]
    BadNumber(&'static str, u64, u64),
    #[error(
        "{0} is set, but the HTTP mode holds no key of its own: each request brings its own key. Unset {0}"
    )]
    KeyInHttpMode(&'static str),
    #[error(
        "nothing is served until asked for: set {LISTEN} (or --listen) to the address to serve on, such as 0.0.0.0:9443"
    )]
    NoListen,
    #[error("{LISTEN} is not an address to listen on, such as 0.0.0.0:9443")]
    BadListen,
    #[error("{0} must be true or false")]
    BadSwitch(&'static str),
    #[error("{CONSENT} must be ask, offer or both")]
    BadConsent,
    #[error("{NAMES} must list the names this server is reached by, separated by commas")]
    BadNames,
    #[error(
        "{PUBLIC_URL} must be the https URL clients reach MCP at, such as https://mcp.example.net/mcp: {0}"
    )]
    BadPublicUrl(PublicUrlFault),
    #[error(
        "both {PUBLIC_URL} and {PUBLIC_PORT} are set; the public URL names the port clients use, so unset \
         {PUBLIC_PORT}"
    )]
    PublicUrlAndPort,
    #[error(
        "{TRUSTED_PROXIES} lists {0:?}, which is not an IP address or a CIDR block (such as 127.0.0.1 or \
         172.18.0.0/16)"
    )]
    BadTrustedProxy(String),
    #[error(
        "{TRUSTED_PROXIES} lists {0:?}, wider than a /8 (IPv4) or a /16 (IPv6): every machine in a trusted block \
         can say its requests come from any address. List only the addresses your proxy connects from"
    )]
    ProxyBlockTooWide(String),
    #[error(
        "{FORWARDED_HEADER} must be x-forwarded-for or forwarded: the header your proxy writes"
    )]
    BadForwardedHeader,
    #[error(
        "{FORWARDED_HEADER} is set, but {TRUSTED_PROXIES} is not, so no proxy's header is believed; set \
         {TRUSTED_PROXIES} to the addresses your proxy connects from"
    )]
    ForwardedHeaderAlone,
    #[error("{TLS_MODE} must be pinned, files, private-ca or acme")]
    BadTlsMode,
    #[error("{TLS_MODE} is {0}, which needs {1}")]
    ModeNeeds(&'static str, &'static str),
    #[error(
        "{0} is set, but {TLS_MODE} is {1}, which does not use it; unset it or choose its mode"
    )]
    NotThisMode(&'static str, &'static str),
    #[error("{ACME_DIRECTORY} must be the https URL of an ACME directory")]
    BadAcmeDirectory,
    #[error(
        "{} must list e-mail addresses, separated by commas",
        tls::ACME_CONTACT
    )]
    BadAcmeContact,
    #[error("{ACME_HTTP} is not an address to listen on for HTTP-01, such as [::]:80")]
    BadAcmeHttp,
    #[error(
        "both {ACME_HTTP} and {ACME_DNS_HOOK} are set; choose one challenge (or neither, for TLS-ALPN-01 on the \
         serving address)"
    )]
    TwoAcmeChallenges,
    #[error(
        "{TLS_MODE} is acme, which needs {NAMES}: the public names this server is reached by, which the \
         authority certifies"
    )]
    AcmeNeedsNames,
    #[error(
        "{NAMES} lists the address {0}, which acme mode does not ask an authority to certify; list domain names, \
         or use files or private-ca for addresses"
    )]
    AcmeAddress(String),
    #[error(
        "no stack is configured: {ADDRESS} is not set, and there is no linked config at {path}. Run \
         lemonfiber-mcp link with the key link the stack gave you, or set {ADDRESS}, {PIN} and {KEY_FILE}",
        path = .0.display()
    )]
    NothingConfigured(PathBuf),
    #[error("the linked config {path} cannot be read ({1})", path = .0.display())]
    ConfigUnreadable(PathBuf, std::io::ErrorKind),
    #[error(
        "the linked config {path} can be read or written by others (mode {mode:04o}); it is not used. Make it \
         yours alone with: chmod 600 {path}",
        path = .0.display(), mode = .1
    )]
    ConfigOpenToOthers(PathBuf, u32),
    #[error("the linked config {path} is not one lemonfiber-mcp link wrote; link again", path = .0.display())]
    ConfigMalformed(PathBuf),
    #[error("the linked config {path} cannot be written ({1})", path = .0.display())]
    ConfigNotWritten(PathBuf, std::io::ErrorKind),
    #[error(
        "the folder {path} can be written by others (mode {mode:04o}), who could replace the linked config \
         in it; nothing was claimed, and the folder is left as it is. Set {CONFIG} to a file in a folder \
         only you can write to",
        path = .0.display(), mode = .1
    )]
    ConfigFolderShared(PathBuf, u32),
    #[error(
        "{path} already holds a linked config; nothing was claimed. Move it away first, or set {CONFIG} to \
         another file",
        path = .0.display()
    )]
    AlreadyLinked(PathBuf),
    #[error(
        "certificate rotate replaces the certificate of the pinned mode, and {TLS_MODE} is {0}, whose certificate \
         comes from elsewhere"
    )]
    RotateIsPinned(&'static str),
    #[error(
        "certificate rotate found no state folder at {folder}, so no server serves a certificate from there and \
         nothing was made. Run it with the {STATE} the server runs with (without {STATE}, the server uses the \
         http folder in this user's state folder)",
        folder = .0.display()
    )]
    RotateNoState(PathBuf),
    #[error(
        "certificate rotate replaces the pinned mode's certificate, and {folder} holds a private root \
         (private-ca-root.pem), whose certificates renew by themselves; nothing was changed. To make a new root, \
         stop the server and move the private-ca-root files and private-ca-names away (every device must then \
         install the new root)",
        folder = .0.display()
    )]
    RotateHoldsPrivateRoot(PathBuf),
    #[error(
        "certificate rotate replaces the pinned mode's certificate, and {folder} holds an ACME account or issued \
         certificate (acme-account.json, acme-issued.json), which the authority renews; nothing was changed",
        folder = .0.display()
    )]
    RotateHoldsAcme(PathBuf),
    #[error(
        "certificate rotate found no server-certificate.pem in {folder}, so no pinned server serves from it and \
         nothing was made. Run it with the {STATE} the server runs with",
        folder = .0.display()
    )]
    RotateNoCertificate(PathBuf),
}

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

/// The stack to reach and the key to reach it with.
#[derive(Debug)]
pub struct StdioSettings {
    pub address: StackAddress,
    pub key: Key,
    pub conduct: Conduct,
}

/// The key link `stdio` was given as a setting, if any; it may come with no other way of naming
/// the stack or the key, since two would have to agree.
pub fn given_link(set: &impl Fn(&str) -> Option<String>) -> Result<Option<String>, ConfigError> {
    let Some(link) = set(LINK) else {
        return Ok(None);
    };
    match [ADDRESS, PIN, KEY, KEY_FILE, CONFIG]
        .into_iter()
        .find(|other| set(other).is_some())
    {
        Some(other) => Err(ConfigError::LinkAndMore(other)),
        None => Ok(Some(link)),
    }
}

/// Reads the settings through `lookup` (the process environment, or a test's map).
pub fn stdio_settings(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<StdioSettings, ConfigError> {
    let set = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
    // The environment wins, whole: a stack from one place and a key from another is never mixed.
    let from_environment = [ADDRESS, PIN, KEY, KEY_FILE]
        .iter()
        .any(|setting| set(setting).is_some());
    if let Some(path) = config_path(&set).filter(|_| !from_environment) {
        if set(CONFIG).is_none() && !path.exists() {
            return Err(ConfigError::NothingConfigured(path));
        }
        let linked = read_linked(&path)?;
        return Ok(StdioSettings {
            address: linked.address,
            key: linked.key,
            conduct: conduct(&set)?,
        });
    }
    let address = stack_address(
        set(ADDRESS).ok_or(ConfigError::Missing(ADDRESS))?.trim(),
        set(PIN).as_deref(),
    )?;
    let key = match (set(KEY_FILE), set(KEY)) {
        (Some(_), Some(_)) => return Err(ConfigError::BothKeys),
        (None, None) => return Err(ConfigError::NoKey),
        (Some(path), None) => read_key_file(PathBuf::from(path))?,
        (None, Some(text)) => Key::parse(&text).map_err(|error| ConfigError::BadKey(KEY, error))?,
    };
    Ok(StdioSettings {
        address,
        key,
        conduct: conduct(&set)?,
    })
}

/// The key in a file that only its owner may read or write, as ssh insists of its own keys: a
/// key others could read is as good as theirs.
fn read_key_file(path: PathBuf) -> Result<Key, ConfigError> {
    let text = read_private(&path).map_err(|problem| match problem {
        NotPrivate::Unreadable(kind) => ConfigError::KeyFileUnreadable(path.clone(), kind),
        NotPrivate::OpenToOthers(mode) => ConfigError::KeyFileOpenToOthers(path.clone(), mode),
    })?;
    Key::parse(&text).map_err(|error| ConfigError::BadKey(KEY_FILE, error))
}

/// Why a file that must be its owner's alone is not used.
enum NotPrivate {
    Unreadable(std::io::ErrorKind),
    /// Others may read or write it: its mode.
    OpenToOthers(u32),
}

/// The text of `path`, if only its owner may read or write it.
fn read_private(path: &std::path::Path) -> Result<String, NotPrivate> {
    let unreadable = |error: std::io::Error| NotPrivate::Unreadable(error.kind());
    if let Some(mode) = crate::state::open_to_others(path).map_err(unreadable)? {
        return Err(NotPrivate::OpenToOthers(mode));
    }
    std::fs::read_to_string(path).map_err(unreadable)
}

/// The limits the HTTP mode keeps for each key, each peer, and in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests a minute one key may make.
    pub per_minute: NonZeroU32,
    /// Requests one key may have under way at once.
    pub at_once: NonZeroUsize,
    /// Sessions open at once, over every key.
    pub sessions: NonZeroUsize,
    /// Sessions one key may hold open at once.
    pub key_sessions: NonZeroUsize,
    /// Requests a minute one peer address may make.
    pub peer_per_minute: NonZeroU32,
    /// Keys a minute one peer address may bring that the server has not yet seen accepted.
    pub peer_new_keys_per_minute: NonZeroU32,
    /// Requests that carry no key (sign-in and the like) one peer address may have under way
    /// at once.
    pub peer_at_once: NonZeroUsize,
    /// Requests under way at once, over everyone.
    pub under_way: NonZeroUsize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        per_minute: a_minute(240),
        at_once: at_once(8),
        sessions: at_once(256),
        key_sessions: at_once(16),
        peer_per_minute: a_minute(600),
        peer_new_keys_per_minute: a_minute(10),
        peer_at_once: at_once(8),
        under_way: at_once(128),
    };
}

/// A default rate, written as a number: none of them is zero, so the fallback is never taken,
/// and it would still let one through a minute rather than none.
const fn at_once(count: usize) -> NonZeroUsize {
    match NonZeroUsize::new(count) {
        Some(count) => count,
        None => NonZeroUsize::MIN,
    }
}

const fn a_minute(count: u32) -> NonZeroU32 {
    match NonZeroU32::new(count) {
        Some(count) => count,
        None => NonZeroU32::MIN,
    }
}

/// `lemonfiber-mcp http`: where to serve, by which names, and the stack, but no key.
#[derive(Debug)]
pub struct HttpSettings {
    pub listen: SocketAddr,
    pub stack: StackAddress,
    pub names: Vec<String>,
    pub state: PathBuf,
    pub tls: TlsMode,
    /// Origins a browser may call from; `None`: the served names themselves.
    pub origins: Option<Vec<String>>,
    /// The port clients reach the server at, when a port forward puts it at another than the
    /// one listened on; `Host` may name either.
    pub public_port: Option<u16>,
    /// The URL clients use, when a proxy or tunnel puts the server at another.
    pub public_url: Option<PublicUrl>,
    pub proxies: TrustedProxies,
    pub conduct: Conduct,
    pub limits: Limits,
    pub sign_in: SignInSettings,
}

pub fn http_settings(
    lookup: impl Fn(&str) -> Option<String>,
    listen: Option<SocketAddr>,
) -> Result<HttpSettings, ConfigError> {
    let set = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
    for setting in [KEY, KEY_FILE] {
        if set(setting).is_some() {
            return Err(ConfigError::KeyInHttpMode(setting));
        }
    }
    let listen = match (listen, set(LISTEN)) {
        (Some(listen), _) => listen,
        (None, Some(text)) => text.trim().parse().map_err(|_| ConfigError::BadListen)?,
        (None, None) => return Err(ConfigError::NoListen),
    };
    let stack = stack_address(
        set(ADDRESS).ok_or(ConfigError::Missing(ADDRESS))?.trim(),
        set(PIN).as_deref(),
    )?;
    let names = served_names(&set)?;
    let tls = tls_mode(&set)?;
    if matches!(tls, TlsMode::Acme(_)) {
        tls::acme_names(&set, &names)?;
    }
    Ok(HttpSettings {
        listen,
        stack,
        names,
        state: state_folder(&set)?,
        tls,
        origins: set(ORIGINS).map(list),
        public_port: public_port(&set)?,
        public_url: proxy::public_url(&set)?,
        proxies: proxy::trusted_proxies(&set)?,
        conduct: conduct(&set)?,
        limits: limits(&set)?,
        sign_in: sign_in(&set)?,
    })
}

/// The names the HTTP mode is reached by, which its certificate covers.
pub fn served_names(set: &impl Fn(&str) -> Option<String>) -> Result<Vec<String>, ConfigError> {
    let names = list(set(NAMES).unwrap_or_else(|| DEFAULT_NAMES.join(",")));
    let malformed =
        |name: &String| name.contains(['/', ' ', ':']) && name.parse::<IpAddr>().is_err();
    if names.is_empty() || names.iter().any(malformed) {
        return Err(ConfigError::BadNames);
    }
    Ok(names)
}

/// The port clients reach the HTTP mode at besides the one it listens on, if one is set.
pub fn public_port(set: &impl Fn(&str) -> Option<String>) -> Result<Option<u16>, ConfigError> {
    if set(PUBLIC_PORT).is_none() {
        return Ok(None);
    }
    let port = number(set, PUBLIC_PORT, 443, 1, u64::from(u16::MAX))?;
    Ok(u16::try_from(port).ok())
}

/// Where the HTTP mode keeps its certificate and its offer secret: LEMONFIBER_STATE, else its
/// folder in the per-user state folder, never one that depends on where the command was run.
pub fn state_folder(set: &impl Fn(&str) -> Option<String>) -> Result<PathBuf, ConfigError> {
    if let Some(state) = set(STATE) {
        return Ok(PathBuf::from(state));
    }
    crate::places::state_folder(set)
        .map(|folder| folder.join(HTTP_STATE))
        .ok_or(ConfigError::NoStateFolder)
}

/// The items of a comma-separated setting.
fn list(text: String) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The HTTP mode's limits, each from its setting or its default.
pub fn limits(set: &impl Fn(&str) -> Option<String>) -> Result<Limits, ConfigError> {
    Ok(Limits {
        per_minute: at_least_one(set, RATE, Limits::DEFAULT.per_minute, 100_000)?,
        at_once: at_least_one(set, AT_ONCE, Limits::DEFAULT.at_once, 1_000)?,
        sessions: at_least_one(set, SESSIONS, Limits::DEFAULT.sessions, 100_000)?,
        key_sessions: at_least_one(set, KEY_SESSIONS, Limits::DEFAULT.key_sessions, 10_000)?,
        peer_per_minute: at_least_one(set, PEER_RATE, Limits::DEFAULT.peer_per_minute, 1_000_000)?,
        peer_new_keys_per_minute: at_least_one(
            set,
            PEER_NEW_KEYS,
            Limits::DEFAULT.peer_new_keys_per_minute,
            1_000_000,
        )?,
        peer_at_once: at_least_one(set, PEER_AT_ONCE, Limits::DEFAULT.peer_at_once, 10_000)?,
        under_way: at_least_one(set, UNDER_WAY, Limits::DEFAULT.under_way, 100_000)?,
    })
}

fn number(
    set: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: u64,
    least: u64,
    most: u64,
) -> Result<u64, ConfigError> {
    match set(name) {
        None => Ok(default),
        Some(text) => text
            .trim()
            .parse()
            .ok()
            .filter(|value| (least..=most).contains(value))
            .ok_or(ConfigError::BadNumber(name, least, most)),
    }
}

/// A limit from one to `most` (times a minute, or things at once): never zero, so that a limit
/// always lets something through.
fn at_least_one<N>(
    set: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: N,
    most: u32,
) -> Result<N, ConfigError>
where
    N: TryFrom<NonZeroU64> + TryInto<NonZeroU64>,
{
    let most = u64::from(most);
    let default = default.try_into().map_or(most, NonZeroU64::get);
    let count = number(set, name, default, 1, most)?;
    NonZeroU64::new(count)
        .and_then(|count| N::try_from(count).ok())
        .ok_or(ConfigError::BadNumber(name, 1, most))
}

/// A number of bytes, plain or with a `KiB` or `MiB` suffix.
fn size(
    set: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: u64,
    least: u64,
    most: u64,
) -> Result<u64, ConfigError> {
    let Some(text) = set(name) else {
        return Ok(default);
    };
    let text = text.trim();
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, ""),
    };
    let unit = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => KIB,
        "m" | "mib" => MIB,
        _ => return Err(ConfigError::BadSize(name, least, most)),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|number| number.checked_mul(unit))
        .filter(|bytes| (least..=most).contains(bytes))
        .ok_or(ConfigError::BadSize(name, least, most))
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

/// `https://host:port` (or `host:port`), and the pin its certificate must match. F13-R7 requires
/// the pin for a stack elsewhere; it is required here for one on this machine too, since any
/// process on the machine could answer on its port.
pub fn stack_address(text: &str, pin: Option<&str>) -> Result<StackAddress, ConfigError> {
    let with_scheme = if text.contains("://") {
        text.to_owned()
    } else {
        format!("https://{text}")
    };
    let url = reqwest::Url::parse(&with_scheme)
        .map_err(|_| ConfigError::BadAddress("it does not parse"))?;
    if url.scheme() != "https" {
        return Err(ConfigError::BadAddress("only https is spoken to a stack"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ConfigError::BadAddress(
            "it must not carry a user name or password",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() || !matches!(url.path(), "" | "/") {
        return Err(ConfigError::BadAddress(
            "it must be only scheme, host and port",
        ));
    }
    if url.host().is_none() {
        return Err(ConfigError::BadAddress("it names no host"));
    }
    let pin =
        Fingerprint::parse(pin.ok_or(ConfigError::PinMissing)?).map_err(ConfigError::BadPin)?;
    let base_url = url.as_str().trim_end_matches('/').to_owned();
    Ok(StackAddress { base_url, pin })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const KEY_TEXT: &str = "lfk_00112233445566778899aabbccddeeff";
    const PIN_TEXT: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

    fn settings(pairs: &[(&str, &str)]) -> Result<StdioSettings, ConfigError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        stdio_settings(|name| map.get(name).cloned())
    }

    #[test]
    fn consent_and_the_watch_interval_are_read_and_a_bad_one_is_named() {
        let with = |pairs: &[(&str, &str)]| {
            let mut all = vec![
                (ADDRESS, "stack.example:8443"),
                (KEY, KEY_TEXT),
                (PIN, PIN_TEXT),
            ];
            all.extend_from_slice(pairs);
            settings(&all)
        };
        let defaults = with(&[]).expect("the defaults").conduct;
        assert_eq!(defaults.consent, ConsentMode::Offer);
        assert_eq!(defaults.watch_every, Duration::from_secs(15));
        for (word, mode) in [
            ("ask", ConsentMode::Ask),
            (" Both ", ConsentMode::Both),
            ("offer", ConsentMode::Offer),
        ] {
            let conduct = with(&[(CONSENT, word)]).expect(word).conduct;
            assert_eq!(conduct.consent, mode, "{word}");
        }
        let refused = with(&[(CONSENT, "yes")]).expect_err("not a mode");
        assert_eq!(
            refused.to_string(),
            "LEMONFIBER_CONSENT must be ask, offer or both"
        );
        let quick = with(&[(WATCH_EVERY, "1")]).expect("a second").conduct;
        assert_eq!(quick.watch_every, Duration::from_secs(1));
        let refused = with(&[(WATCH_EVERY, "0")]).expect_err("never");
        assert!(refused.to_string().contains(WATCH_EVERY), "{refused}");
    }

    #[test]
    fn a_stack_needs_a_pin_wherever_it_is_f13_r7() {
        for address in [
            "https://stack.example:8443",
            "https://127.0.0.1:8443",
            "localhost:8443",
            "https://[::1]:8443/",
        ] {
            let error = settings(&[(ADDRESS, address), (KEY, KEY_TEXT)]).expect_err(address);
            assert!(matches!(error, ConfigError::PinMissing), "{address}");
            assert!(error.to_string().contains(PIN));
        }
        assert!(
            settings(&[
                (ADDRESS, "stack.example:8443"),
                (KEY, KEY_TEXT),
                (PIN, PIN_TEXT)
            ])
            .is_ok()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_key_file_others_can_read_is_refused_naming_its_mode_and_the_fix() {
        use std::os::unix::fs::PermissionsExt as _;
        let file = std::env::temp_dir().join(format!("lemonfiber-key-mode-{}", std::process::id()));
        std::fs::write(&file, format!("{KEY_TEXT}\n")).expect("written");
        let path = file.display().to_string();
        let with_mode = |mode| {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).expect("mode");
            settings(&[(ADDRESS, "127.0.0.1:1"), (PIN, PIN_TEXT), (KEY_FILE, &path)])
        };
        let error = with_mode(0o644).expect_err("open to others");
        let said = error.to_string();
        assert!(
            said.contains("0644") && said.contains("chmod 600"),
            "{said}"
        );
        assert!(!said.contains("00112233"), "{said}");
        assert!(with_mode(0o640).is_err());
        assert!(with_mode(0o600).is_ok());
        assert!(with_mode(0o400).is_ok());
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn sizes_take_a_unit_and_stay_in_their_bounds() {
        let conduct_of = |value: &str| {
            settings(&[
                (ADDRESS, "127.0.0.1:1"),
                (PIN, PIN_TEXT),
                (KEY, KEY_TEXT),
                (ANSWER_LIMIT, value),
            ])
            .map(|settings| settings.conduct.answers.wire)
        };
        assert_eq!(conduct_of("8MiB").ok(), Some(8 * MIB));
        assert_eq!(conduct_of("65536").ok(), Some(64 * KIB));
        assert_eq!(conduct_of("512 KiB").ok(), Some(512 * KIB));
        for bad in ["1", "lots", "9GiB", "8 MB"] {
            assert!(
                matches!(conduct_of(bad), Err(ConfigError::BadSize(ANSWER_LIMIT, ..))),
                "{bad}"
            );
        }
        let defaults = settings(&[(ADDRESS, "127.0.0.1:1"), (PIN, PIN_TEXT), (KEY, KEY_TEXT)])
            .expect("defaults");
        assert_eq!(defaults.conduct.answers.wire, 8 * MIB);
        assert_eq!(defaults.conduct.result_limit, 48 * 1024);
    }

    #[test]
    fn refuses_two_keys_and_names_no_values() {
        let error = settings(&[
            (ADDRESS, "127.0.0.1:1"),
            (PIN, PIN_TEXT),
            (KEY, KEY_TEXT),
            (KEY_FILE, "/nonexistent"),
        ])
        .expect_err("both");
        assert!(matches!(error, ConfigError::BothKeys));
        let error = settings(&[
            (ADDRESS, "127.0.0.1:1"),
            (PIN, PIN_TEXT),
            (KEY, "lfk_secret-but-not-hex"),
        ])
        .expect_err("bad key");
        assert!(!error.to_string().contains("secret-but"));
        let error = settings(&[
            (ADDRESS, "stack.example:1"),
            (KEY, KEY_TEXT),
            (PIN, "deadbeefnothex"),
        ])
        .expect_err("bad pin");
        assert!(!error.to_string().contains("deadbeef"));
    }

    /// A home folder that is absolute on every platform, as `HOME` must be to be used.
    fn home() -> std::path::PathBuf {
        std::env::temp_dir().join("ann")
    }

    #[test]
    fn the_http_mode_takes_no_key_and_serves_only_when_asked_f13_r8() {
        let http = |pairs: &[(&str, &str)]| {
            let mut map: HashMap<String, String> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            map.insert("HOME".to_owned(), home().display().to_string());
            http_settings(|name| map.get(name).cloned(), None)
        };
        let stack = (ADDRESS, "https://127.0.0.1:9");
        let pin = (PIN, PIN_TEXT);
        assert!(matches!(
            http(&[stack, pin, (LISTEN, "127.0.0.1:0"), (KEY, KEY_TEXT)]),
            Err(ConfigError::KeyInHttpMode(KEY))
        ));
        assert!(matches!(
            http(&[stack, pin, (LISTEN, "127.0.0.1:0"), (KEY_FILE, "/k")]),
            Err(ConfigError::KeyInHttpMode(KEY_FILE))
        ));
        assert!(matches!(http(&[stack, pin]), Err(ConfigError::NoListen)));
        assert!(matches!(
            http(&[stack, pin, (LISTEN, "127.0.0.1:0"), (RATE, "0")]),
            Err(ConfigError::BadNumber(RATE, 1, _))
        ));
        let settings = http(&[
            stack,
            pin,
            (LISTEN, "127.0.0.1:0"),
            (NAMES, "mcp.home.arpa, 192.168.1.4"),
        ])
        .expect("settings");
        assert_eq!(settings.names, vec!["mcp.home.arpa", "192.168.1.4"]);
        assert_eq!(settings.limits, Limits::DEFAULT);
        assert_eq!(Limits::DEFAULT.key_sessions.get(), 16);
        assert_eq!(settings.public_port, None);
        assert_eq!(
            settings.state,
            home().join(".local/state/lemonfiber-mcp/http")
        );
        let listen = (LISTEN, "127.0.0.1:8443");
        let public = http(&[stack, pin, listen, (PUBLIC_PORT, "443")]).expect("settings");
        assert_eq!(public.public_port, Some(443));
        for port in ["0", "65536", "https"] {
            assert!(
                matches!(
                    http(&[stack, pin, listen, (PUBLIC_PORT, port)]),
                    Err(ConfigError::BadNumber(PUBLIC_PORT, 1, 65535))
                ),
                "{port}"
            );
        }
    }

    #[test]
    fn rates_are_never_zero_and_stay_in_their_bounds() {
        let limits = |pairs: &[(&str, &str)]| {
            let mut map: HashMap<String, String> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            for (name, value) in [
                (ADDRESS, "https://127.0.0.1:9"),
                (PIN, PIN_TEXT),
                (LISTEN, "127.0.0.1:0"),
            ] {
                map.insert(name.to_owned(), value.to_owned());
            }
            map.insert("HOME".to_owned(), home().display().to_string());
            http_settings(|name| map.get(name).cloned(), None).map(|settings| settings.limits)
        };
        let lifted = limits(&[
            (RATE, "100000"),
            (PEER_RATE, "1000000"),
            (PEER_NEW_KEYS, " 1 "),
        ])
        .expect("within bounds");
        assert_eq!(lifted.per_minute.get(), 100_000);
        assert_eq!(lifted.peer_per_minute.get(), 1_000_000);
        assert_eq!(lifted.peer_new_keys_per_minute.get(), 1);
        for (name, most) in [
            (RATE, 100_000),
            (PEER_RATE, 1_000_000),
            (PEER_NEW_KEYS, 1_000_000),
        ] {
            for bad in ["0", "-1", "many", &(most + 1).to_string()] {
                let refused = match limits(&[(name, bad)]) {
                    Err(ConfigError::BadNumber(named, least, at_most)) => (named, least, at_most),
                    other => panic!("{name}={bad} gave {other:?}"),
                };
                assert_eq!(refused, (name, 1, most), "{name}={bad}");
            }
        }
        assert_eq!(Limits::DEFAULT.per_minute.get(), 240);
        assert_eq!(Limits::DEFAULT.peer_per_minute.get(), 600);
        assert_eq!(Limits::DEFAULT.peer_new_keys_per_minute.get(), 10);
        assert_eq!(Limits::DEFAULT.peer_at_once.get(), 8);
    }

    #[test]
    fn refuses_addresses_that_are_not_a_stack() {
        for address in [
            "http://127.0.0.1:1",
            "https://user:pw@127.0.0.1:1",
            "https://127.0.0.1:1/api",
            "https://127.0.0.1:1/?key=x",
            "::::",
        ] {
            let error = settings(&[(ADDRESS, address), (PIN, PIN_TEXT), (KEY, KEY_TEXT)])
                .expect_err(address);
            assert!(matches!(error, ConfigError::BadAddress(_)), "{address}");
            assert!(!error.to_string().contains("pw@"));
        }
    }
}
