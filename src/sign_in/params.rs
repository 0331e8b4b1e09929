//! The parameters of a sign-in request: its query or its form body, each name at most once (RFC
//! 6749 §3.1), read within a small cap and in time.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Body;

use crate::web::body::{NotRead as Unread, within};

/// The largest form or registration a sign-in endpoint reads.
pub const BODY_MOST: usize = 16 * 1024;
const BODY_TIME: Duration = Duration::from_secs(10);

/// Why a request's parameters were not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRead {
    TooLarge,
    /// Not framed as HTTP frames a body (a chunk's size that is not one).
    Malformed,
    TooSlow,
    Repeated(String),
}

impl NotRead {
    pub fn description(&self) -> String {
        match self {
            NotRead::TooLarge => format!("The request is larger than {} KiB.", BODY_MOST / 1024),
            NotRead::Malformed => {
                "The request's body could not be read: it is not framed as HTTP/1.1 frames a body."
                    .to_owned()
            }
            NotRead::TooSlow => "The request took too long to arrive.".to_owned(),
            NotRead::Repeated(name) => format!("The parameter {name} is given more than once."),
        }
    }
}

pub struct Params(HashMap<String, String>);

impl Params {
    /// The parameters of `text` (`a=1&b=2`, percent-encoded).
    pub fn of(text: &[u8]) -> Result<Params, NotRead> {
        let mut params = HashMap::new();
        for (name, value) in url::form_urlencoded::parse(text) {
            if params
                .insert(name.clone().into_owned(), value.into_owned())
                .is_some()
            {
                return Err(NotRead::Repeated(printable(&name)));
            }
        }
        Ok(Params(params))
    }

    /// A parameter's value, if given and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|value| !value.is_empty())
    }
}

/// A body of at most [`BODY_MOST`] bytes, in time.
pub async fn body(body: Body) -> Result<bytes::Bytes, NotRead> {
    match tokio::time::timeout(BODY_TIME, within(body, BODY_MOST)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(Unread::TooLarge)) => Err(NotRead::TooLarge),
        Ok(Err(Unread::Malformed)) => Err(NotRead::Malformed),
        Err(_) => Err(NotRead::TooSlow),
    }
}

/// A parameter's name as it may be repeated back: short, and only what is plainly a name.
fn printable(name: &str) -> String {
    let plain = name.len() <= 40
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_');
    if plain {
        name.to_owned()
    } else {
        "(unnamed)".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_given_twice_is_refused_and_empty_ones_are_absent() {
        let params = Params::of(b"a=1&b=&c=x%20y").expect("read");
        assert_eq!(params.get("a"), Some("1"));
        assert_eq!(params.get("b"), None);
        assert_eq!(params.get("c"), Some("x y"));
        assert_eq!(
            Params::of(b"code=1&code=2").err(),
            Some(NotRead::Repeated("code".into()))
        );
    }
}
