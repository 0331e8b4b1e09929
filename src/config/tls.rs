//! Which certificate the HTTP mode serves, and where it comes by it (F13-R12): the settings of
//! `LEMONFIBER_TLS_MODE` and of each mode. A setting that belongs to a mode not chosen is refused
//! rather than ignored, so an operator never believes a certificate is served that is not.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use super::{ConfigError, NAMES};

pub const TLS_MODE: &str = "LEMONFIBER_TLS_MODE";
pub const TLS_CERTIFICATE: &str = "LEMONFIBER_TLS_CERTIFICATE";
pub const TLS_PRIVATE_KEY: &str = "LEMONFIBER_TLS_PRIVATE_KEY";
pub const ACME_DIRECTORY: &str = "LEMONFIBER_ACME_DIRECTORY";
pub const ACME_CONTACT: &str = "LEMONFIBER_ACME_CONTACT";
pub const ACME_ROOTS: &str = "LEMONFIBER_ACME_ROOTS";
pub const ACME_HTTP: &str = "LEMONFIBER_ACME_HTTP";
pub const ACME_DNS_HOOK: &str = "LEMONFIBER_ACME_DNS_HOOK";

const FILES_SETTINGS: [&str; 2] = [TLS_CERTIFICATE, TLS_PRIVATE_KEY];
const ACME_SETTINGS: [&str; 5] = [
    ACME_DIRECTORY,
    ACME_CONTACT,
    ACME_ROOTS,
    ACME_HTTP,
    ACME_DNS_HOOK,
];

/// Where the served certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsMode {
    /// One the server makes and keeps; clients pin its fingerprint.
    Pinned,
    /// The operator's chain and key, reloaded when the files change.
    Files {
        certificate: PathBuf,
        private_key: PathBuf,
    },
    /// Leaves issued by a root of the server's own, which household devices install once.
    PrivateCa,
    /// Issued by an ACME authority, and renewed.
    Acme(AcmeSettings),
}

impl TlsMode {
    /// The name `LEMONFIBER_TLS_MODE` gives it.
    pub fn name(&self) -> &'static str {
        match self {
            TlsMode::Pinned => "pinned",
            TlsMode::Files { .. } => "files",
            TlsMode::PrivateCa => "private-ca",
            TlsMode::Acme(_) => "acme",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcmeSettings {
    pub directory: url::Url,
    /// `mailto:` addresses the authority may write to about the certificates.
    pub contact: Vec<String>,
    /// The roots a private directory's own certificate is checked against; `None`: the
    /// machine's.
    pub roots: Option<PathBuf>,
    pub challenge: AcmeChallenge,
}

/// How the authority is shown that the server holds its names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcmeChallenge {
    /// TLS-ALPN-01, answered on the serving listener: needs nothing more.
    TlsAlpn,
    /// HTTP-01, on a listener opened at this address only while an order is pending.
    Http(SocketAddr),
    /// DNS-01, through the operator's command that sets and clears the TXT record.
    Dns(PathBuf),
}

/// The mode `LEMONFIBER_TLS_MODE` chooses (pinned when unset), with its settings.
pub fn tls_mode(set: &impl Fn(&str) -> Option<String>) -> Result<TlsMode, ConfigError> {
    let chosen = set(TLS_MODE).map(|mode| mode.trim().to_ascii_lowercase());
    let mode = match chosen.as_deref() {
        None | Some("pinned") => TlsMode::Pinned,
        Some("files") => TlsMode::Files {
            certificate: path(set, TLS_CERTIFICATE, "files")?,
            private_key: path(set, TLS_PRIVATE_KEY, "files")?,
        },
        Some("private-ca") => TlsMode::PrivateCa,
        Some("acme") => TlsMode::Acme(acme(set)?),
        Some(_) => return Err(ConfigError::BadTlsMode),
    };
    let belongs = |setting: &&str| match &mode {
        TlsMode::Files { .. } => FILES_SETTINGS.contains(setting),
        TlsMode::Acme(_) => ACME_SETTINGS.contains(setting),
        TlsMode::Pinned | TlsMode::PrivateCa => false,
    };
    let stray = FILES_SETTINGS
        .iter()
        .chain(&ACME_SETTINGS)
        .find(|setting| !belongs(setting) && set(setting).is_some());
    match stray {
        Some(setting) => Err(ConfigError::NotThisMode(setting, mode.name())),
        None => Ok(mode),
    }
}

/// The names an ACME authority is asked to certify: domain names, each one the server must be
/// reachable by (an authority refuses `localhost`, and this server does not ask for addresses).
pub fn acme_names(
    set: &impl Fn(&str) -> Option<String>,
    names: &[String],
) -> Result<(), ConfigError> {
    if set(NAMES).is_none() {
        return Err(ConfigError::AcmeNeedsNames);
    }
    match names.iter().find(|name| name.parse::<IpAddr>().is_ok()) {
        Some(address) => Err(ConfigError::AcmeAddress(address.clone())),
        None => Ok(()),
    }
}

fn path(
    set: &impl Fn(&str) -> Option<String>,
    setting: &'static str,
    mode: &'static str,
) -> Result<PathBuf, ConfigError> {
    set(setting)
        .map(|text| PathBuf::from(text.trim()))
        .ok_or(ConfigError::ModeNeeds(mode, setting))
}

fn acme(set: &impl Fn(&str) -> Option<String>) -> Result<AcmeSettings, ConfigError> {
    let directory = set(ACME_DIRECTORY).ok_or(ConfigError::ModeNeeds("acme", ACME_DIRECTORY))?;
    let directory = url::Url::parse(directory.trim())
        .ok()
        .filter(|url| url.scheme() == "https" && url.host().is_some())
        .ok_or(ConfigError::BadAcmeDirectory)?;
    let contact = set(ACME_CONTACT)
        .map(super::values::list)
        .unwrap_or_default()
        .into_iter()
        .map(|address| {
            let address = address.strip_prefix("mailto:").unwrap_or(&address);
            let (user, domain) = address.split_once('@').ok_or(ConfigError::BadAcmeContact)?;
            if user.is_empty() || domain.is_empty() || address.contains([' ', ',', '?']) {
                return Err(ConfigError::BadAcmeContact);
            }
            Ok(format!("mailto:{address}"))
        })
        .collect::<Result<_, _>>()?;
    let http = set(ACME_HTTP)
        .map(|text| text.trim().parse().map_err(|_| ConfigError::BadAcmeHttp))
        .transpose()?;
    let hook = set(ACME_DNS_HOOK).map(|text| PathBuf::from(text.trim()));
    let challenge = match (http, hook) {
        (Some(_), Some(_)) => return Err(ConfigError::TwoAcmeChallenges),
        (Some(address), None) => AcmeChallenge::Http(address),
        (None, Some(hook)) => AcmeChallenge::Dns(hook),
        (None, None) => AcmeChallenge::TlsAlpn,
    };
    Ok(AcmeSettings {
        directory,
        contact,
        roots: set(ACME_ROOTS).map(|text| PathBuf::from(text.trim())),
        challenge,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn mode(pairs: &[(&str, &str)]) -> Result<TlsMode, ConfigError> {
        let map: HashMap<&str, &str> = pairs.iter().copied().collect();
        tls_mode(&|name: &str| map.get(name).map(|value| (*value).to_owned()))
    }

    #[test]
    fn pinned_unless_another_mode_is_chosen_f13_r12() {
        assert_eq!(mode(&[]).expect("default"), TlsMode::Pinned);
        assert_eq!(
            mode(&[(TLS_MODE, "Private-CA")]).expect("chosen"),
            TlsMode::PrivateCa
        );
        let error = mode(&[(TLS_MODE, "letsencrypt")]).expect_err("unknown");
        assert!(
            error
                .to_string()
                .contains("pinned, files, private-ca or acme")
        );
    }

    #[test]
    fn files_needs_both_files() {
        let error =
            mode(&[(TLS_MODE, "files"), (TLS_CERTIFICATE, "/etc/chain.pem")]).expect_err("no key");
        assert!(error.to_string().contains(TLS_PRIVATE_KEY), "{error}");
    }

    #[test]
    fn a_setting_of_a_mode_not_chosen_is_refused() {
        let error = mode(&[(TLS_CERTIFICATE, "/etc/chain.pem")]).expect_err("stray");
        let said = error.to_string();
        assert!(
            said.contains(TLS_CERTIFICATE) && said.contains("pinned"),
            "{said}"
        );
        let error = mode(&[
            (TLS_MODE, "files"),
            (TLS_CERTIFICATE, "/c"),
            (TLS_PRIVATE_KEY, "/k"),
            (ACME_HTTP, "[::]:80"),
        ])
        .expect_err("stray");
        assert!(error.to_string().contains(ACME_HTTP));
    }

    #[test]
    fn acme_settings_are_checked() {
        let acme = |extra: &[(&'static str, &'static str)]| {
            let mut pairs = vec![
                (TLS_MODE, "acme"),
                (ACME_DIRECTORY, "https://acme.example/directory"),
            ];
            pairs.extend_from_slice(extra);
            mode(&pairs)
        };
        let Ok(TlsMode::Acme(settings)) = acme(&[(ACME_CONTACT, "ops@home.example")]) else {
            panic!("acme");
        };
        assert_eq!(settings.contact, vec!["mailto:ops@home.example"]);
        assert_eq!(settings.challenge, AcmeChallenge::TlsAlpn);
        assert!(matches!(
            acme(&[(ACME_HTTP, "[::]:80"), (ACME_DNS_HOOK, "/hook")]),
            Err(ConfigError::TwoAcmeChallenges)
        ));
        assert!(matches!(
            acme(&[(ACME_CONTACT, "not an address")]),
            Err(ConfigError::BadAcmeContact)
        ));
        assert!(matches!(
            acme(&[(ACME_HTTP, "port 80")]),
            Err(ConfigError::BadAcmeHttp)
        ));
        assert!(matches!(
            mode(&[
                (TLS_MODE, "acme"),
                (ACME_DIRECTORY, "http://acme.example/dir")
            ]),
            Err(ConfigError::BadAcmeDirectory)
        ));
    }

    #[test]
    fn acme_certifies_only_names_the_operator_gave() {
        let names = |list: &[&str]| {
            list.iter()
                .map(|name| (*name).to_owned())
                .collect::<Vec<_>>()
        };
        let unset = |_: &str| None;
        assert!(matches!(
            acme_names(&unset, &names(&["localhost"])),
            Err(ConfigError::AcmeNeedsNames)
        ));
        let given = |name: &str| (name == NAMES).then(|| "x".to_owned());
        assert!(matches!(
            acme_names(&given, &names(&["mcp.home.example", "192.0.2.4"])),
            Err(ConfigError::AcmeAddress(_))
        ));
        assert!(acme_names(&given, &names(&["mcp.home.example"])).is_ok());
    }
}
