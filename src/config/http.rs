//! `lemonfiber-mcp http`: where to serve, by which names, with which certificate and limits, and
//! the stack, but no key: each request brings its own.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use super::conduct::{Conduct, conduct};
use super::limits::{Limits, limits};
use super::stack_address::stack_address;
use super::values::{list, number};
use super::{
    ADDRESS, ConfigError, KEY, KEY_FILE, LISTEN, NAMES, ORIGINS, PIN, PUBLIC_PORT, PublicUrl,
    STATE, SignInSettings, TlsMode, TrustedProxies, proxy, sign_in, tls, tls_mode,
};
use crate::stack::StackAddress;

pub const DEFAULT_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// The HTTP mode's own folder inside the per-user state folder, when LEMONFIBER_STATE names none.
const HTTP_STATE: &str = "http";

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{PEER_NEW_KEYS, PEER_RATE, RATE};
    use std::collections::HashMap;

    const KEY_TEXT: &str = "lfk_00112233445566778899aabbccddeeff";
    const PIN_TEXT: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

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
}
