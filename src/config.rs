//! The settings a server is started with, from its environment. A key is never taken from the
//! command line (where other users of the machine can read it), and there is no password setting.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::stack::StackAddress;
use crate::stack::credential::{Key, KeyError};
use crate::stack::pin::{Pin, PinError, Trust};

pub const ADDRESS: &str = "LEMONFIBER_ADDRESS";
pub const PIN: &str = "LEMONFIBER_PIN";
pub const KEY_FILE: &str = "LEMONFIBER_KEY_FILE";
pub const KEY: &str = "LEMONFIBER_KEY";
pub const JOB_WAIT: &str = "LEMONFIBER_JOB_WAIT";
pub const LISTEN: &str = "LEMONFIBER_LISTEN";
pub const NAMES: &str = "LEMONFIBER_NAMES";
pub const STATE: &str = "LEMONFIBER_STATE";
pub const ORIGINS: &str = "LEMONFIBER_ORIGINS";
pub const RATE: &str = "LEMONFIBER_RATE";
pub const AT_ONCE: &str = "LEMONFIBER_AT_ONCE";
pub const SESSIONS: &str = "LEMONFIBER_SESSIONS";

pub const DEFAULT_JOB_WAIT: Duration = Duration::from_secs(10);
const LONGEST_JOB_WAIT_SECONDS: u64 = 300;
pub const DEFAULT_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// Where a server run from a checkout keeps the certificate it makes.
const DEFAULT_STATE: &str = "certs";

/// What is wrong with the settings. Names the setting, never its value.
#[derive(Debug)]
pub enum ConfigError {
    Missing(&'static str),
    BadAddress(&'static str),
    PinNeeded,
    BadPin(PinError),
    BothKeys,
    NoKey,
    KeyFileUnreadable(PathBuf, std::io::ErrorKind),
    BadKey(&'static str, KeyError),
    BadNumber(&'static str, u64, u64),
    KeyInHttpMode(&'static str),
    NoListen,
    BadListen,
    BadNames,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Missing(setting) => write!(f, "{setting} is not set"),
            ConfigError::BadAddress(why) => write!(
                f,
                "{ADDRESS} is not a stack address ({why}); give it as https://host:port"
            ),
            ConfigError::PinNeeded => write!(
                f,
                "{PIN} is not set, and {ADDRESS} is not on this machine: without the pin the stack's certificate cannot \
                 be checked. Copy the pin the stack shows for its certificate into {PIN}"
            ),
            ConfigError::BadPin(error) => write!(f, "{PIN} is not a pin: {error}"),
            ConfigError::BothKeys => write!(
                f,
                "both {KEY_FILE} and {KEY} are set; set only one (preferably {KEY_FILE})"
            ),
            ConfigError::NoKey => write!(
                f,
                "no key: set {KEY_FILE} to the file holding this assistant's integration key"
            ),
            ConfigError::KeyFileUnreadable(path, kind) => {
                write!(
                    f,
                    "{KEY_FILE} names {}, which cannot be read ({kind})",
                    path.display()
                )
            }
            ConfigError::BadKey(setting, error) => write!(f, "{setting}: {error}"),
            ConfigError::BadNumber(setting, least, most) => {
                write!(f, "{setting} must be a whole number from {least} to {most}")
            }
            ConfigError::KeyInHttpMode(setting) => write!(
                f,
                "{setting} is set, but the HTTP mode holds no key of its own: each request brings its own key. \
                 Unset {setting}"
            ),
            ConfigError::NoListen => write!(
                f,
                "nothing is served until asked for: set {LISTEN} (or --listen) to the address to serve on, such as 0.0.0.0:8443"
            ),
            ConfigError::BadListen => write!(
                f,
                "{LISTEN} is not an address to listen on, such as 0.0.0.0:8443"
            ),
            ConfigError::BadNames => write!(
                f,
                "{NAMES} must list the names this server is reached by, separated by commas"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// The stack to reach and the key to reach it with.
#[derive(Debug)]
pub struct StdioSettings {
    pub address: StackAddress,
    pub key: Key,
    pub job_wait: Duration,
}

/// Reads the settings through `lookup` (the process environment, or a test's map).
pub fn stdio_settings(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<StdioSettings, ConfigError> {
    let set = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
    let address = stack_address(
        set(ADDRESS).ok_or(ConfigError::Missing(ADDRESS))?.trim(),
        set(PIN).as_deref(),
    )?;
    let key = match (set(KEY_FILE), set(KEY)) {
        (Some(_), Some(_)) => return Err(ConfigError::BothKeys),
        (None, None) => return Err(ConfigError::NoKey),
        (Some(path), None) => {
            let path = PathBuf::from(path);
            let text = std::fs::read_to_string(&path)
                .map_err(|error| ConfigError::KeyFileUnreadable(path.clone(), error.kind()))?;
            Key::parse(&text).map_err(|error| ConfigError::BadKey(KEY_FILE, error))?
        }
        (None, Some(text)) => Key::parse(&text).map_err(|error| ConfigError::BadKey(KEY, error))?,
    };
    Ok(StdioSettings {
        address,
        key,
        job_wait: job_wait(&set)?,
    })
}

/// The limits the HTTP mode keeps for each key and in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests a minute one key may make.
    pub per_minute: u64,
    /// Requests one key may have under way at once.
    pub at_once: u64,
    /// Sessions open at once, over every key.
    pub sessions: u64,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        per_minute: 240,
        at_once: 8,
        sessions: 256,
    };
}

/// `lemonfiber-mcp http`: where to serve, by which names, and the stack, but no key.
#[derive(Debug)]
pub struct HttpSettings {
    pub listen: SocketAddr,
    pub stack: StackAddress,
    pub names: Vec<String>,
    pub state: PathBuf,
    /// Origins a browser may call from; `None`: the served names themselves.
    pub origins: Option<Vec<String>>,
    pub job_wait: Duration,
    pub limits: Limits,
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
    let list = |text: String| -> Vec<String> {
        text.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let names = list(set(NAMES).unwrap_or_else(|| DEFAULT_NAMES.join(",")));
    if names.is_empty()
        || names
            .iter()
            .any(|name| name.contains(['/', ' ', ':']) && name.parse::<IpAddr>().is_err())
    {
        return Err(ConfigError::BadNames);
    }
    Ok(HttpSettings {
        listen,
        stack,
        names,
        state: PathBuf::from(set(STATE).unwrap_or_else(|| DEFAULT_STATE.to_owned())),
        origins: set(ORIGINS).map(list),
        job_wait: job_wait(&set)?,
        limits: Limits {
            per_minute: number(&set, RATE, Limits::DEFAULT.per_minute, 1, 100_000)?,
            at_once: number(&set, AT_ONCE, Limits::DEFAULT.at_once, 1, 1_000)?,
            sessions: number(&set, SESSIONS, Limits::DEFAULT.sessions, 1, 100_000)?,
        },
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

/// `https://host:port` (or `host:port`), and how its certificate is known: by the pin, which only
/// a stack on this machine may go without (F13-R7).
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
    let host = url
        .host()
        .ok_or(ConfigError::BadAddress("it names no host"))?;
    let loopback = match host {
        url::Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => IpAddr::V4(ip).is_loopback(),
        url::Host::Ipv6(ip) => IpAddr::V6(ip).is_loopback(),
    };
    let trust = match pin {
        Some(pin) => Trust::Pinned(Pin::parse(pin).map_err(ConfigError::BadPin)?),
        None if loopback => Trust::Loopback,
        None => return Err(ConfigError::PinNeeded),
    };
    let base_url = url.as_str().trim_end_matches('/').to_owned();
    Ok(StackAddress { base_url, trust })
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
    fn a_remote_stack_needs_a_pin_f13_r7() {
        let error = settings(&[(ADDRESS, "https://stack.example:8443"), (KEY, KEY_TEXT)])
            .expect_err("refused");
        assert!(matches!(error, ConfigError::PinNeeded));
        assert!(error.to_string().contains(PIN));
        assert!(
            settings(&[
                (ADDRESS, "stack.example:8443"),
                (KEY, KEY_TEXT),
                (PIN, PIN_TEXT)
            ])
            .is_ok()
        );
    }

    #[test]
    fn a_loopback_stack_may_go_without_a_pin() {
        for address in [
            "https://127.0.0.1:8443",
            "localhost:8443",
            "https://[::1]:8443/",
        ] {
            let parsed = settings(&[(ADDRESS, address), (KEY, KEY_TEXT)]).expect(address);
            assert!(matches!(parsed.address.trust, Trust::Loopback));
        }
    }

    #[test]
    fn refuses_two_keys_and_names_no_values() {
        let error = settings(&[
            (ADDRESS, "127.0.0.1:1"),
            (KEY, KEY_TEXT),
            (KEY_FILE, "/nonexistent"),
        ])
        .expect_err("both");
        assert!(matches!(error, ConfigError::BothKeys));
        let error = settings(&[(ADDRESS, "127.0.0.1:1"), (KEY, "lfk_secret-but-not-hex")])
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

    #[test]
    fn the_http_mode_takes_no_key_and_serves_only_when_asked_f13_r8() {
        let http = |pairs: &[(&str, &str)]| {
            let map: HashMap<String, String> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            http_settings(|name| map.get(name).cloned(), None)
        };
        let stack = (ADDRESS, "https://127.0.0.1:9");
        assert!(matches!(
            http(&[stack, (LISTEN, "127.0.0.1:0"), (KEY, KEY_TEXT)]),
            Err(ConfigError::KeyInHttpMode(KEY))
        ));
        assert!(matches!(
            http(&[stack, (LISTEN, "127.0.0.1:0"), (KEY_FILE, "/k")]),
            Err(ConfigError::KeyInHttpMode(KEY_FILE))
        ));
        assert!(matches!(http(&[stack]), Err(ConfigError::NoListen)));
        assert!(matches!(
            http(&[stack, (LISTEN, "127.0.0.1:0"), (RATE, "0")]),
            Err(ConfigError::BadNumber(RATE, 1, _))
        ));
        let settings = http(&[
            stack,
            (LISTEN, "127.0.0.1:0"),
            (NAMES, "mcp.home.arpa, 192.168.1.4"),
        ])
        .expect("settings");
        assert_eq!(settings.names, vec!["mcp.home.arpa", "192.168.1.4"]);
        assert_eq!(
            settings.limits,
            Limits {
                per_minute: 240,
                at_once: 8,
                sessions: 256
            }
        );
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
            let error = settings(&[(ADDRESS, address), (KEY, KEY_TEXT)]).expect_err(address);
            assert!(matches!(error, ConfigError::BadAddress(_)), "{address}");
            assert!(!error.to_string().contains("pw@"));
        }
    }
}
