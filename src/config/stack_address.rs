//! The stack's address as a setting gives it, with the pin its certificate must match.

use super::ConfigError;
use crate::fingerprint::Fingerprint;
use crate::stack::StackAddress;

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
