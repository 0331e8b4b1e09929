//! Every answer the stack sends is read with a limit: past it the read stops and the call fails
//! saying so. A JSON answer is cut as it is read, so the server never holds more of one than it
//! would hand over, however large the stack made it.

use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::{CONTENT_LENGTH, HeaderMap, HeaderName, HeaderValue, TRANSFER_ENCODING};

use crate::cut::{self, LeftOut, StreamError};

/// How much of an answer the server will read, and how much of it it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerLimits {
    /// Bytes read from the wire before the read is abandoned.
    pub wire: u64,
    /// Bytes of JSON kept of an answer; the rest is counted as left out.
    pub keep: usize,
}

/// Where the door tells the reply what it cut: a header of its own making on the answer it
/// hands the SDK (one the stack sent by that name is dropped first).
pub const LEFT_OUT_HEADER: HeaderName = HeaderName::from_static("x-lemonfiber-mcp-left-out");

/// An answer that says it is no longer than this is read whole before it is cut: no thread is
/// worth starting for it.
const READ_WHOLE: u64 = 64 * 1024;

/// The stack's answer was longer than the limit; the read was abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the stack's answer is larger than {limit} bytes")]
pub struct AnswerTooLarge {
    pub limit: u64,
}

/// The answer the SDK is handed: for a stream (log lines, a file) the stack's bytes under the
/// limit, to be read as they come; for JSON, the answer already cut to what is kept.
pub async fn bounded(
    mut response: reqwest::Response,
    limits: AnswerLimits,
    streamed: bool,
) -> reqwest::Response {
    let status = response.status();
    let declared = response.content_length();
    let declared_within = |limit: u64| declared.is_some_and(|length| length <= limit);
    // A successful answer within both limits has nothing to cut, and the connection reads no
    // more of it than it declared: it goes on as the stack sent it, for the SDK to read and parse
    // once. (A refusal is still read here, so one that is not JSON stays a refusal with its
    // status.)
    if !streamed
        && status.is_success()
        && declared_within(limits.wire)
        && declared_within(limits.keep as u64)
    {
        response.headers_mut().remove(LEFT_OUT_HEADER);
        return response;
    }
    let mut headers = response.headers().clone();
    for name in [LEFT_OUT_HEADER, CONTENT_LENGTH, TRANSFER_ENCODING] {
        headers.remove(name);
    }
    let too_large = AnswerTooLarge { limit: limits.wire };
    if declared.is_some_and(|length| length > limits.wire) {
        return rebuilt(status, headers, failing(std::io::Error::other(too_large)));
    }
    if streamed && status.is_success() {
        let limited = limited(response.bytes_stream(), limits.wire);
        return rebuilt(status, headers, reqwest::Body::wrap_stream(limited));
    }
    let cut = if declared_within(READ_WHOLE) {
        match response.bytes().await {
            Ok(bytes) => cut::cut_stream(&bytes[..], limits.keep),
            Err(error) => Err(StreamError::Read(std::io::Error::other(error))),
        }
    } else {
        cut_json(limited(response.bytes_stream(), limits.wire), limits.keep).await
    };
    match cut {
        Ok((value, left_out)) => {
            if !left_out.is_empty()
                && let Ok(note) =
                    HeaderValue::from_str(&format!("{} {}", left_out.items, left_out.bytes))
            {
                headers.insert(LEFT_OUT_HEADER, note);
            }
            // A Value always serializes; "null" is an answer no envelope accepts, if it did not.
            let json = serde_json::to_vec(&value).unwrap_or_else(|_| b"null".to_vec());
            rebuilt(status, headers, reqwest::Body::from(json))
        }
        // An answer that is not JSON is handed on as one no envelope accepts.
        Err(StreamError::NotJson) => rebuilt(status, headers, reqwest::Body::from("null")),
        Err(StreamError::Read(error)) => rebuilt(status, headers, failing(error)),
    }
}

/// What the door noted it left out of an answer.
pub fn left_out(headers: &HeaderMap) -> LeftOut {
    let mut numbers = headers
        .get(LEFT_OUT_HEADER)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .split(' ')
        .map(|number| number.parse::<u64>().unwrap_or(0));
    LeftOut {
        items: numbers.next().unwrap_or(0),
        bytes: numbers.next().unwrap_or(0),
    }
}

/// The bytes of an answer, ending in an error once more than `limit` have come.
fn limited(
    bytes: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
    limit: u64,
) -> impl Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    let mut read = 0u64;
    bytes.map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        read += chunk.len() as u64;
        if read > limit {
            return Err(std::io::Error::other(AnswerTooLarge { limit }));
        }
        Ok(chunk)
    })
}

/// Cuts JSON on a blocking thread as it arrives, so what is read past the budget is never held.
async fn cut_json(
    bytes: impl Stream<Item = std::io::Result<Bytes>> + Send + Unpin + 'static,
    keep: usize,
) -> Result<(serde_json::Value, LeftOut), StreamError> {
    let reader = tokio_util::io::StreamReader::new(bytes);
    let bridge = tokio_util::io::SyncIoBridge::new(reader);
    let cut = tokio::task::spawn_blocking(move || {
        cut::cut_stream(std::io::BufReader::with_capacity(64 * 1024, bridge), keep)
    });
    match cut.await {
        Ok(outcome) => outcome,
        Err(error) => Err(StreamError::Read(std::io::Error::other(error))),
    }
}

fn failing(error: std::io::Error) -> reqwest::Body {
    reqwest::Body::wrap_stream(futures::stream::once(async move { Err::<Bytes, _>(error) }))
}

fn rebuilt(
    status: reqwest::StatusCode,
    headers: HeaderMap,
    body: reqwest::Body,
) -> reqwest::Response {
    let mut response = http::Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    reqwest::Response::from(response)
}

/// Whether an error, anywhere down its chain, is an answer past the limit.
pub fn too_large(error: &(dyn std::error::Error + 'static)) -> Option<AnswerTooLarge> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(found) = error.downcast_ref::<AnswerTooLarge>() {
            return Some(*found);
        }
        if let Some(inner) = error
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            && let Some(found) = too_large(inner)
        {
            return Some(found);
        }
        next = error.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stream_past_the_limit_ends_in_an_error_naming_it() {
        let chunks: Vec<reqwest::Result<Bytes>> =
            (0..10).map(|_| Ok(Bytes::from(vec![b'x'; 100]))).collect();
        let mut stream = Box::pin(limited(futures::stream::iter(chunks), 550));
        let mut read = 0;
        let error = loop {
            match stream.next().await {
                Some(Ok(chunk)) => read += chunk.len(),
                Some(Err(error)) => break error,
                None => panic!("the limit was not kept"),
            }
        };
        assert_eq!(read, 500);
        assert_eq!(too_large(&error), Some(AnswerTooLarge { limit: 550 }));
    }

    fn answer(status: u16, body: &'static str, forged_note: &'static str) -> reqwest::Response {
        let mut response = http::Response::new(reqwest::Body::from(body));
        *response.status_mut() = reqwest::StatusCode::from_u16(status).expect("a status");
        let headers = response.headers_mut();
        headers.insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
        headers.insert(LEFT_OUT_HEADER, HeaderValue::from_static(forged_note));
        reqwest::Response::from(response)
    }

    /// A small answer goes on as the stack sent it, but never with the door's own note on it:
    /// only the door says what it left out.
    #[tokio::test]
    async fn a_small_answer_passes_without_a_note_the_stack_forged() {
        let limits = AnswerLimits {
            wire: 1024,
            keep: 1024,
        };
        let body = r#"{"api_version":1,"kind":"status","data":{}}"#;
        let passed = bounded(answer(200, body, "99 12345"), limits, false).await;
        assert_eq!(left_out(passed.headers()), LeftOut { items: 0, bytes: 0 });
        assert_eq!(passed.text().await.expect("the body"), body);

        let refused = bounded(answer(403, body, "99 12345"), limits, false).await;
        assert_eq!(refused.status(), 403);
        assert_eq!(left_out(refused.headers()), LeftOut { items: 0, bytes: 0 });
    }

    /// An answer declared past the wire limit is not read, even when it is within what is kept.
    #[tokio::test]
    async fn an_answer_declared_past_the_wire_limit_is_not_read() {
        let limits = AnswerLimits {
            wire: 8,
            keep: 1024,
        };
        let body = r#"{"api_version":1}"#;
        let error = bounded(answer(200, body, "0 0"), limits, false)
            .await
            .bytes()
            .await
            .expect_err("past the limit");
        assert_eq!(too_large(&error), Some(AnswerTooLarge { limit: 8 }));
    }

    #[tokio::test]
    async fn json_is_cut_as_it_is_read() {
        let items: Vec<serde_json::Value> =
            (0..5000).map(|n| serde_json::json!({"n": n})).collect();
        let text = serde_json::to_vec(
            &serde_json::json!({"api_version": 1, "kind": "held", "data": items}),
        )
        .expect("json");
        let chunks: Vec<std::io::Result<Bytes>> = text
            .chunks(1000)
            .map(|chunk| Ok(Bytes::copy_from_slice(chunk)))
            .collect();
        let (value, left_out) = cut_json(futures::stream::iter(chunks), 2000)
            .await
            .expect("cut");
        assert_eq!(value["kind"], "held");
        assert!(left_out.items > 4000);
        assert!(crate::cut::size_of(&value) <= 2000 + crate::cut::ROOM_FOR_SMALL_FIELDS);
    }
}
