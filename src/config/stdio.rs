//! `lemonfiber-mcp stdio`: the stack to reach and the key to reach it with, from the environment
//! or from the config a key link left.

use std::path::PathBuf;

use super::conduct::{Conduct, conduct};
use super::private_file::{NotPrivate, read_private};
use super::stack_address::stack_address;
use super::{ADDRESS, CONFIG, ConfigError, KEY, KEY_FILE, LINK, PIN, config_path, read_linked};
use crate::stack::StackAddress;
use crate::stack::credential::Key;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::values::{KIB, MIB};
    use crate::config::{ANSWER_LIMIT, CONSENT, ConsentMode, WATCH_EVERY};
    use std::collections::HashMap;
    use std::time::Duration;

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
