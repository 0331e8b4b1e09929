//! How assistants hosted by their provider sign in over HTTPS: whether a raw integration key is
//! still taken as a bearer beside the access tokens this server issues, and how far a client ID
//! metadata document may be fetched from.

use std::path::PathBuf;

use super::ConfigError;

pub const RAW_KEYS: &str = "LEMONFIBER_RAW_KEYS";
pub const PRIVATE_CLIENT_DOCUMENTS: &str = "LEMONFIBER_PRIVATE_CLIENT_DOCUMENTS";
pub const CLIENT_DOCUMENT_ROOTS: &str = "LEMONFIBER_CLIENT_DOCUMENT_ROOTS";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInSettings {
    /// Whether a request may bring an `lfk_` key itself as its bearer (`true` unless set false).
    pub raw_keys: bool,
    /// Whether a client ID metadata document may be fetched from this machine or its private
    /// networks (`false` unless the operator allows it).
    pub private_client_documents: bool,
    /// The roots a client ID metadata document's server is checked against instead of the
    /// machine's.
    pub client_document_roots: Option<PathBuf>,
}

pub fn sign_in(set: &impl Fn(&str) -> Option<String>) -> Result<SignInSettings, ConfigError> {
    Ok(SignInSettings {
        raw_keys: switch(set, RAW_KEYS, true)?,
        private_client_documents: switch(set, PRIVATE_CLIENT_DOCUMENTS, false)?,
        client_document_roots: set(CLIENT_DOCUMENT_ROOTS).map(|file| PathBuf::from(file.trim())),
    })
}

fn switch(
    set: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    unset: bool,
) -> Result<bool, ConfigError> {
    match set(name)
        .map(|value| value.trim().to_ascii_lowercase())
        .as_deref()
    {
        None => Ok(unset),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(_) => Err(ConfigError::BadSwitch(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Result<SignInSettings, ConfigError> {
        sign_in(&|name| {
            pairs
                .iter()
                .find(|(set, _)| *set == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn raw_keys_are_taken_and_private_documents_refused_unless_said_otherwise() {
        let default = settings(&[]).expect("defaults");
        assert!(default.raw_keys && !default.private_client_documents);
        let set =
            settings(&[(RAW_KEYS, "false"), (PRIVATE_CLIENT_DOCUMENTS, "TRUE")]).expect("set");
        assert!(!set.raw_keys && set.private_client_documents);
        let refused = settings(&[(RAW_KEYS, "no")]).expect_err("not a switch");
        assert_eq!(
            refused.to_string(),
            "LEMONFIBER_RAW_KEYS must be true or false"
        );
    }
}
