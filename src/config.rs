//! The settings a server is started with, from its environment. A key is never taken from the
//! command line (where other users of the machine can read it), and there is no password setting.

mod conduct;
mod error;
mod file;
mod http;
mod limits;
mod private_file;
mod proxy;
mod sign_in;
mod stack_address;
mod stdio;
mod tls;
mod values;
pub use conduct::{Conduct, ConsentMode, conduct};
pub use error::ConfigError;
pub use file::{CONFIG, config_path, read_linked, remove_linked, reserve};
pub use http::{DEFAULT_NAMES, HttpSettings, http_settings, served_names, state_folder};
pub use limits::{Limits, limits};
pub use proxy::{
    FORWARDED_HEADER, ForwardedHeader, PUBLIC_URL, PublicUrl, PublicUrlFault, TRUSTED_PROXIES,
    TrustedProxies,
};
pub use sign_in::{CLIENT_DOCUMENT_ROOTS, SignInSettings, sign_in};
pub use stack_address::stack_address;
pub use stdio::{StdioSettings, given_link, stdio_settings};
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
