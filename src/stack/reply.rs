//! What the stack answered a read with, in the three forms the contract has: an envelope, NDJSON
//! lines of envelopes, or a file.

use futures::StreamExt;
use progenitor_client::{ByteStream, Error, ResponseValue};
use serde_json::Value;

use super::sdk::types;

/// The most the server reads of one streamed answer (log lines or a file); the rest is dropped.
pub const ANSWER_LIMIT: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub body: Body,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Envelope(Value),
    /// One envelope a line; a line that is not JSON is kept as its text.
    Lines(Vec<Value>),
    File {
        media_type: String,
        bytes: Vec<u8>,
    },
}

type Sent<T> = Result<T, Error<types::ErrorEnvelope>>;

// The error is progenitor's own, as every generated call returns it; it is turned into a small
// `Failure` at once.
#[allow(clippy::result_large_err)]
impl Reply {
    pub(super) fn from_envelope(response: ResponseValue<types::Envelope>) -> Sent<Reply> {
        let status = response.status().as_u16();
        let envelope = serde_json::to_value(response.into_inner())
            .map_err(|error| Error::InvalidResponsePayload(Default::default(), error))?;
        Ok(Reply {
            status,
            body: Body::Envelope(envelope),
        })
    }

    pub(super) async fn from_stream(response: ResponseValue<ByteStream>) -> Sent<Reply> {
        let status = response.status().as_u16();
        let media_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("application/octet-stream")
            .to_owned();
        let mut stream = response.into_inner_stream();
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(Error::ResponseBodyError)?;
            let room = ANSWER_LIMIT.saturating_sub(bytes.len());
            bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if chunk.len() > room {
                break;
            }
        }
        let body = if media_type.starts_with("application/x-ndjson") {
            Body::Lines(
                String::from_utf8_lossy(&bytes)
                    .lines()
                    .filter(|line| !line.trim().is_empty())
                    .map(|line| {
                        serde_json::from_str(line)
                            .unwrap_or_else(|_| Value::String(line.to_owned()))
                    })
                    .collect(),
            )
        } else {
            Body::File { media_type, bytes }
        };
        Ok(Reply { status, body })
    }
}
