//! How a setting's text is read: a whole number within bounds, a limit that is never zero, a
//! number of bytes, a comma-separated list.

use std::num::NonZeroU64;

use super::ConfigError;

pub(super) const KIB: u64 = 1024;
pub(super) const MIB: u64 = 1024 * KIB;

/// The items of a comma-separated setting.
pub(super) fn list(text: String) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

pub(super) fn number(
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
pub(super) fn at_least_one<N>(
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
pub(super) fn size(
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
