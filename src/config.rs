//! The settings a server is started with, from its environment. A key is never taken from the
//! command line (where other users of the machine can read it), and there is no password setting.

use std::fmt;
use std::net::IpAddr;
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

const DEFAULT_JOB_WAIT_SECONDS: u64 = 10;
const LONGEST_JOB_WAIT_SECONDS: u64 = 300;

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
    BadJobWait,
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
            ConfigError::BadJobWait => write!(
                f,
                "{JOB_WAIT} is how many seconds an action's job is followed, a whole number from 0 to {LONGEST_JOB_WAIT_SECONDS}"
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
    let job_wait = match set(JOB_WAIT) {
        None => DEFAULT_JOB_WAIT_SECONDS,
        Some(text) => text
            .trim()
            .parse()
            .ok()
            .filter(|seconds| *seconds <= LONGEST_JOB_WAIT_SECONDS)
            .ok_or(ConfigError::BadJobWait)?,
    };
    Ok(StdioSettings {
        address,
        key,
        job_wait: Duration::from_secs(job_wait),
    })
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
