//! What can be wrong with the settings, each named by the setting and never by its value.

use std::path::PathBuf;

use super::tls::ACME_CONTACT;
use super::{
    ACME_DIRECTORY, ACME_DNS_HOOK, ACME_HTTP, ADDRESS, CONFIG, CONSENT, FORWARDED_HEADER, KEY,
    KEY_FILE, LINK, LISTEN, NAMES, PIN, PUBLIC_PORT, PUBLIC_URL, PublicUrlFault, STATE, TLS_MODE,
    TRUSTED_PROXIES,
};
use crate::fingerprint::FingerprintError;
use crate::stack::credential::KeyError;

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
    #[error("{} must list e-mail addresses, separated by commas", ACME_CONTACT)]
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
