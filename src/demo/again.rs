//! The demo stack's memory of acts sent with an `Idempotency-Key`, as the core keeps it: a
//! repeat of the same act under the same key is answered with the first answer and not carried
//! out again; the key sent with anything else is refused.

use std::collections::VecDeque;
use std::sync::Mutex;

use axum::http::HeaderMap;
use serde_json::{Map, Value};

pub const HEADER: &str = "idempotency-key";
/// The longest key the core takes.
const LONGEST: usize = 255;
/// How many answered acts the core remembers for one caller.
const KEPT_PER_CALLER: usize = 256;

/// What a key's first send was, and what it was answered.
struct Sent {
    caller: String,
    key: String,
    action: String,
    body: Map<String, Value>,
    status: u16,
    answer: Value,
}

/// What became of an act sent under a key.
pub enum Claim {
    /// Not sent under this key before: carry it out.
    First,
    /// Sent before: answer as the first time.
    Again { status: u16, answer: Value },
    /// The key was sent before with another action or other arguments.
    Otherwise,
}

#[derive(Default)]
pub struct Answered(Mutex<VecDeque<Sent>>);

/// The request's key, if it carries one: `Err` for a key the core refuses (ASK-12).
pub fn key_of(headers: &HeaderMap) -> Result<Option<String>, ()> {
    let mut keys = headers.get_all(HEADER).iter();
    let Some(key) = keys.next() else {
        return Ok(None);
    };
    let key = key.to_str().map_err(|_| ())?;
    let visible =
        !key.is_empty() && key.len() <= LONGEST && key.bytes().all(|b| b.is_ascii_graphic());
    if !visible || keys.next().is_some() {
        return Err(());
    }
    Ok(Some(key.to_owned()))
}

impl Answered {
    pub fn claim(&self, caller: &str, key: &str, action: &str, body: &Map<String, Value>) -> Claim {
        let Ok(answered) = self.0.lock() else {
            return Claim::First;
        };
        match answered
            .iter()
            .find(|sent| sent.caller == caller && sent.key == key)
        {
            None => Claim::First,
            Some(sent) if sent.action == action && &sent.body == body => Claim::Again {
                status: sent.status,
                answer: sent.answer.clone(),
            },
            Some(_) => Claim::Otherwise,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn keep(
        &self,
        caller: &str,
        key: &str,
        action: &str,
        body: &Map<String, Value>,
        status: u16,
        answer: &Value,
    ) {
        let Ok(mut answered) = self.0.lock() else {
            return;
        };
        if answered.iter().filter(|sent| sent.caller == caller).count() >= KEPT_PER_CALLER
            && let Some(oldest) = answered.iter().position(|sent| sent.caller == caller)
        {
            answered.remove(oldest);
        }
        answered.push_back(Sent {
            caller: caller.to_owned(),
            key: key.to_owned(),
            action: action.to_owned(),
            body: body.clone(),
            status,
            answer: answer.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn a_key_is_one_to_255_visible_characters_given_once() {
        let with = |values: &[&str]| {
            let mut headers = HeaderMap::new();
            for value in values {
                headers.append(
                    HEADER,
                    HeaderValue::from_str(value).expect("a header value"),
                );
            }
            key_of(&headers)
        };
        assert_eq!(with(&[]), Ok(None));
        assert_eq!(with(&["lfmcp-00ff"]), Ok(Some("lfmcp-00ff".to_owned())));
        assert_eq!(with(&[&"k".repeat(255)]), Ok(Some("k".repeat(255))));
        assert!(with(&[&"k".repeat(256)]).is_err());
        assert!(with(&["with space"]).is_err());
        assert!(with(&[""]).is_err());
        assert!(with(&["a", "b"]).is_err());
    }

    #[test]
    fn the_same_act_again_is_answered_as_before_and_another_under_its_key_is_refused() {
        let answered = Answered::default();
        let body = Map::new();
        assert!(matches!(
            answered.claim("act", "k", "restart", &body),
            Claim::First
        ));
        answered.keep("act", "k", "restart", &body, 202, &Value::from("first"));
        assert!(matches!(
            answered.claim("act", "k", "restart", &body),
            Claim::Again { status: 202, .. }
        ));
        assert!(matches!(
            answered.claim("act", "k", "update", &body),
            Claim::Otherwise
        ));
        assert!(matches!(
            answered.claim("read", "k", "update", &body),
            Claim::First
        ));
    }
}
