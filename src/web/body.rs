//! A request's body, read within a cap. A body too large and one not sent as HTTP frames it (a
//! chunk whose size is not a number) are told apart, since the first is answered `413` and the
//! second `400`: taking the one for the other tells a client to send less of what it never sent
//! right.

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;

/// Why a body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRead {
    /// It grew past the cap; the rest was not read.
    TooLarge,
    /// It was not framed as HTTP frames a body, or ended before its end.
    Malformed,
}

/// The whole body, if it is at most `most` bytes and framed as HTTP frames one. A body that came
/// in one piece is handed on as it came, without a copy.
pub async fn within(body: Body, most: usize) -> Result<Bytes, NotRead> {
    let mut pieces = body.into_data_stream();
    let mut whole: Option<Bytes> = None;
    let mut joined: Option<BytesMut> = None;
    let mut length = 0usize;
    while let Some(piece) = pieces.next().await {
        let piece = piece.map_err(|_| NotRead::Malformed)?;
        length = length.saturating_add(piece.len());
        if length > most {
            return Err(NotRead::TooLarge);
        }
        match (&mut joined, whole.take()) {
            (Some(joined), _) => joined.extend_from_slice(&piece),
            (None, None) => whole = Some(piece),
            (None, Some(earlier)) => {
                let mut both = BytesMut::with_capacity(length);
                both.extend_from_slice(&earlier);
                both.extend_from_slice(&piece);
                joined = Some(both);
            }
        }
    }
    Ok(joined.map(BytesMut::freeze).or(whole).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_pieces(pieces: &[&'static [u8]]) -> Body {
        let pieces: Vec<Result<Bytes, std::io::Error>> = pieces
            .iter()
            .map(|piece| Ok(Bytes::from_static(piece)))
            .collect();
        Body::from_stream(futures::stream::iter(pieces))
    }

    #[tokio::test]
    async fn a_body_within_the_cap_is_read_whole_in_one_piece_or_many() {
        assert_eq!(
            within(in_pieces(&[b"{\"a\":", b"1", b"}"]), 7).await,
            Ok(Bytes::from_static(b"{\"a\":1}"))
        );
        assert_eq!(
            within(in_pieces(&[b"{}"]), 2).await,
            Ok(Bytes::from_static(b"{}"))
        );
        assert_eq!(within(Body::empty(), 0).await, Ok(Bytes::new()));
    }

    #[tokio::test]
    async fn a_body_past_the_cap_is_too_large_and_a_broken_one_is_malformed() {
        assert_eq!(
            within(in_pieces(&[b"{\"a\":", b"1", b"}"]), 6).await,
            Err(NotRead::TooLarge)
        );
        let broken: Vec<Result<Bytes, std::io::Error>> = vec![
            Ok(Bytes::from_static(b"{")),
            Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "Invalid chunk size line",
            )),
        ];
        let body = Body::from_stream(futures::stream::iter(broken));
        assert_eq!(within(body, 1024).await, Err(NotRead::Malformed));
    }
}
