//! The stdio transport: one JSON-RPC message a line, each way. The MCP library's own passes over
//! a line that is not JSON without a word, and over one past its cap too, so a client that sent
//! either waits for an answer that never comes. Here a line that is not JSON is answered with a
//! parse error (`-32700`), JSON that is no message with an invalid request (`-32600`), each with
//! a null id since none can be read; and a line longer than [`LINE_LIMIT`] with an error as soon
//! as it is found to be, the rest of it read past and never kept. The session goes on after each.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::ErrorCode;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::answer::sentences;

/// The longest line read, in bytes: far beyond any message a client sends this server, and small
/// enough that holding one costs the machine little.
pub const LINE_LIMIT: usize = 4 * 1024 * 1024;

/// A UTF-8 byte order mark, which JSON lets a reader pass over (RFC 8259 §8.1).
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// The transport over a reader and a writer: the process's stdin and stdout.
pub struct Lines<R, W> {
    read: BufReader<R>,
    /// The line read so far, never more than [`LINE_LIMIT`] bytes and its end.
    line: Vec<u8>,
    /// Set once a line has gone past the limit, until its end has been read past.
    discarding: bool,
    /// `None` once closed. Whole lines are written under the lock, so none is split by another.
    write: Arc<Mutex<Option<W>>>,
    /// The answer to a line that was no message, being written. It is waited for before the
    /// next line is read, so that a client sending only such lines is answered at the pace it
    /// reads, and never piles answers up in the server.
    answering: Option<JoinHandle<()>>,
    /// Cancelled once nothing more can be read, so what waits on the client (a listening
    /// stream) ends then, rather than hold the process open.
    read_ended: CancellationToken,
}

/// What reading a line came to.
enum Read {
    Line,
    TooLong,
    End,
    Failed(std::io::Error),
}

/// What a whole line is.
enum Parsed {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to answer: an empty line, or a notification (which is never answered, even
    /// when the server cannot read it).
    Nothing,
    NotJson,
    /// JSON, but no message this server reads; the id it gives, if one can be read.
    NotAMessage(Value),
}

impl<R, W> Lines<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W, read_ended: CancellationToken) -> Lines<R, W> {
        Lines {
            read_ended,
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            write: Arc::new(Mutex::new(Some(write))),
            answering: None,
        }
    }

    /// Reads up to the end of a line into `line`, never keeping more than the limit. Safe to
    /// stop at any wait (the library races reading against writing): nothing read is lost, and
    /// the next call goes on with the same line.
    async fn read_line(&mut self) -> Read {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(available) => available,
                Err(error) => return Read::Failed(error),
            };
            if available.is_empty() {
                return Read::End;
            }
            let end = memchr::memchr(b'\n', available);
            let taken = end.map_or(available.len(), |at| at + 1);
            let read = if self.discarding {
                self.discarding = end.is_none();
                None
            } else if self.line.len() + end.unwrap_or(taken) > LINE_LIMIT {
                self.line.clear();
                self.discarding = end.is_none();
                Some(Read::TooLong)
            } else {
                self.line.extend_from_slice(&available[..taken]);
                end.map(|_| Read::Line)
            };
            self.read.consume(taken);
            if let Some(read) = read {
                return read;
            }
        }
    }

    /// Writes the JSON-RPC error `code`, for a line with `id`, in the background.
    fn answer(&mut self, id: Value, code: ErrorCode, message: &str) {
        let error =
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}});
        let mut line = error.to_string().into_bytes();
        line.push(b'\n');
        let write = self.write.clone();
        self.answering = Some(tokio::spawn(async move {
            if let Err(error) = write_line(&write, &line).await {
                tracing::warn!(%error, "could not answer a line that was no message");
            }
        }));
    }
}

/// What a whole line (without its end) is.
fn parse(line: &[u8]) -> Parsed {
    let line = line.strip_prefix(BYTE_ORDER_MARK).unwrap_or(line);
    if line.trim_ascii().is_empty() {
        return Parsed::Nothing;
    }
    let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(message) => return Parsed::Message(Box::new(message)),
        Err(error) => error,
    };
    if matches!(
        error.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    ) {
        return Parsed::NotJson;
    }
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return Parsed::NotJson;
    };
    let id = value.get("id");
    if id.is_none() && value.get("method").is_some() {
        return Parsed::Nothing;
    }
    let id = id
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    Parsed::NotAMessage(id)
}

async fn write_line<W: AsyncWrite + Unpin>(
    write: &Mutex<Option<W>>,
    line: &[u8],
) -> std::io::Result<()> {
    let mut write = write.lock().await;
    let Some(write) = write.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    write.write_all(line).await?;
    write.flush().await
}

impl<R, W> Transport<RoleServer> for Lines<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), std::io::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            write_line(&write, &line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(answering) = &mut self.answering {
                // A write that failed was logged; the next line is read all the same.
                let _ = answering.await;
                self.answering = None;
            }
            match self.read_line().await {
                Read::Line => {}
                Read::TooLong => {
                    self.answer(
                        Value::Null,
                        ErrorCode::INVALID_REQUEST,
                        &sentences::line_too_long(LINE_LIMIT),
                    );
                    continue;
                }
                Read::End => {
                    self.read_ended.cancel();
                    return None;
                }
                Read::Failed(error) => {
                    tracing::error!(%error, "stdin could not be read");
                    self.read_ended.cancel();
                    return None;
                }
            }
            let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            let parsed = parse(line);
            self.line.clear();
            match parsed {
                Parsed::Message(message) => return Some(*message),
                Parsed::Nothing => {}
                Parsed::NotJson => self.answer(
                    Value::Null,
                    ErrorCode::PARSE_ERROR,
                    sentences::line_not_json(),
                ),
                Parsed::NotAMessage(id) => self.answer(
                    id,
                    ErrorCode::INVALID_REQUEST,
                    sentences::line_not_a_message(),
                ),
            }
        }
    }

    async fn close(&mut self) -> Result<(), std::io::Error> {
        let mut write = self.write.lock().await;
        match write.take() {
            Some(mut write) => write.flush().await,
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart_as_messages_nothing_not_json_and_not_messages() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Parsed::Message(_)
        ));
        assert!(matches!(
            parse(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r"),
            Parsed::Message(_)
        ));
        assert!(matches!(parse(b"  \r"), Parsed::Nothing));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"$/lsp/thing","params":7}"#),
            Parsed::Nothing
        ));
        assert!(matches!(parse(b"this is not json"), Parsed::NotJson));
        assert!(matches!(parse(b"{\"jsonrpc\":"), Parsed::NotJson));
        assert!(
            matches!(parse(br#"{"jsonrpc":"2.0","id":7}"#), Parsed::NotAMessage(id) if id == 7)
        );
        assert!(matches!(
            parse(br#"[1, 2]"#),
            Parsed::NotAMessage(Value::Null)
        ));
    }
}
