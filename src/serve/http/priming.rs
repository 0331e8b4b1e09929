//! The SSE priming event: an event with an `id`, a `retry` and empty data, which prepares a client
//! to resume a stream. Clients know it from 2025-11-25 on; those of earlier versions read its empty
//! data as a broken message, so their answers go without it.

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};

use crate::mcp::versions::PROTOCOL_VERSIONS;

/// The first version whose clients expect the priming event.
const FIRST_PRIMED: &str = "2025-11-25";
/// How much of a stream is looked at for its first event; past it, the stream passes as it is.
const LOOKED_AT: usize = 64 * 1024;

/// Whether a request's answer may carry the priming event: by the version its
/// `MCP-Protocol-Version` names, or for an `initialize` by the version it asks for (one this
/// server does not speak is answered with 2025-11-25). A request that names no version is of
/// 2025-03-26, which sends none.
pub fn expected(header: Option<&str>, initialize_asks: Option<&str>) -> bool {
    match (header, initialize_asks) {
        (Some(version), _) => version >= FIRST_PRIMED,
        (None, Some(asked)) => {
            asked >= FIRST_PRIMED
                || !PROTOCOL_VERSIONS
                    .iter()
                    .any(|spoken| spoken.as_str() == asked)
        }
        (None, None) => false,
    }
}

/// `stream` (an SSE body) without its first event when that event carries no data.
pub fn without_priming<E>(
    stream: impl Stream<Item = Result<Bytes, E>> + Unpin,
) -> impl Stream<Item = Result<Bytes, E>> {
    futures::stream::unfold(
        (stream, Some(BytesMut::new())),
        |(mut stream, mut looking)| async move {
            loop {
                let Some(seen) = looking.as_mut() else {
                    let next = stream.next().await?;
                    return Some((next, (stream, None)));
                };
                match stream.next().await {
                    Some(Ok(chunk)) => {
                        seen.extend_from_slice(&chunk);
                        if let Some(rest) = after_first_event(seen) {
                            return Some((Ok(rest), (stream, None)));
                        }
                        if seen.len() > LOOKED_AT {
                            let seen = seen.split().freeze();
                            return Some((Ok(seen), (stream, None)));
                        }
                    }
                    Some(Err(error)) => return Some((Err(error), (stream, None))),
                    // The stream ended before its first event did: what came passes as it came.
                    None => {
                        let seen = looking.take().map(BytesMut::freeze).unwrap_or_default();
                        return (!seen.is_empty()).then_some((Ok(seen), (stream, None)));
                    }
                }
            }
        },
    )
}

/// Once the first event is whole: what follows it if it carried no data, else all that was seen.
fn after_first_event(seen: &mut BytesMut) -> Option<Bytes> {
    let text = &seen[..];
    let end = text
        .windows(2)
        .position(|pair| pair == b"\n\n")
        .map(|at| at + 2)?;
    let carries_data = text[..end]
        .split(|byte| *byte == b'\n')
        .filter_map(|line| line.strip_prefix(b"data:"))
        .any(|data| !data.trim_ascii().is_empty());
    let mut seen = seen.split().freeze();
    if carries_data {
        Some(seen)
    } else {
        Some(seen.split_off(end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn filtered(chunks: &[&str]) -> String {
        let chunks: Vec<Result<Bytes, ()>> = chunks
            .iter()
            .map(|chunk| Ok(Bytes::copy_from_slice(chunk.as_bytes())))
            .collect();
        let out: Vec<Result<Bytes, ()>> = without_priming(futures::stream::iter(chunks))
            .collect()
            .await;
        out.into_iter()
            .map(|chunk| String::from_utf8(chunk.expect("a chunk").to_vec()).expect("text"))
            .collect()
    }

    #[tokio::test]
    async fn the_priming_event_goes_and_every_message_stays() {
        let message = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let primed = format!("data: \nid: 0/0\nretry: 3000\n\n{message}");
        assert_eq!(filtered(&[&primed]).await, message);
        // However the stream is split.
        let (head, tail) = primed.split_at(7);
        assert_eq!(filtered(&[head, tail]).await, message);
        // A first event with data is a message, and stays.
        assert_eq!(
            filtered(&[message, message]).await,
            format!("{message}{message}")
        );
        // A stream that ends early passes as it came.
        assert_eq!(filtered(&["data: {}"]).await, "data: {}");
    }

    #[test]
    fn only_clients_of_2025_11_25_and_later_expect_it() {
        assert!(expected(Some("2025-11-25"), None));
        assert!(expected(Some("2026-07-28"), None));
        assert!(!expected(Some("2025-06-18"), None));
        assert!(!expected(None, None));
        assert!(expected(None, Some("2025-11-25")));
        assert!(!expected(None, Some("2025-06-18")));
        assert!(!expected(None, Some("2025-03-26")));
        assert!(expected(None, Some("1999-01-01")));
    }
}
