//! A read in a session, served in the request's own task. Through the MCP library a session's
//! call goes to the session's own task and back through channels, is read as a tree and written
//! out again, and is answered as a stream of events: two thirds more work than the same read
//! served statelessly (docs/performance.md, "A read in a session served by the server"). The
//! server takes a call here only when it is a read, of a session of the key's that has begun,
//! that the library would take as it comes, and answers it as the library would, as one JSON
//! body, which every client of a session takes as it takes a stream. Anything else goes on to
//! the library: an act (which may ask its person a question on the session's stream), a call
//! that asks for progress or names a version or capabilities of its own, and every call of a
//! session whose client asked for the server's notices (a read may tell one, on its own stream).
//!
//! The call reaches the session's client through the session's peer all the same, and is
//! counted as the session's while it is under way.

use std::net::IpAddr;

use axum::http::HeaderMap;
use rmcp::model::{CallToolRequestParams, RequestId, RequestMetaObject};
use rmcp::transport::common::http_header::{HEADER_MCP_PROTOCOL_VERSION, HEADER_SESSION_ID};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::stateless::{Posted, Ready, accepts_json_and_events, is_json, only};
use crate::catalogue::{self, Operation};
use crate::mcp::reach::SessionReach;
use crate::mcp::server::Caller;

/// One read of a session's, as it came.
pub struct SessionCall {
    pub session: String,
    pub id: RequestId,
    params: CallToolRequestParams,
    meta: RequestMetaObject,
    /// The version its `MCP-Protocol-Version` names, if it names one.
    named: Option<String>,
}

/// The read a POST makes in a session, when the library would take it as it comes: it accepts
/// both JSON and events, is JSON, names a session and at most one version, and calls a read
/// (or `connection`) with no progress asked for and no version or capabilities of its own in its
/// `_meta`.
pub fn served_here(headers: &HeaderMap, body: &[u8]) -> Option<SessionCall> {
    if !accepts_json_and_events(headers) || !is_json(headers) {
        return None;
    }
    let session = only(headers, HEADER_SESSION_ID)?.to_owned();
    let named = match headers.get_all(HEADER_MCP_PROTOCOL_VERSION).iter().count() {
        0 => None,
        _ => Some(only(headers, HEADER_MCP_PROTOCOL_VERSION)?.to_owned()),
    };
    let Posted { id, mut params, .. } = serde_json::from_slice::<Posted>(body).ok()?;
    let meta = params.meta.take().unwrap_or_default();
    let plain = meta.protocol_version().is_none()
        && meta.client_capabilities().is_none()
        && meta.client_info().is_none()
        && meta.get_progress_token().is_none();
    let reads = catalogue::find(&params.name)
        .is_some_and(|tool| matches!(tool.operation, Operation::Read(_) | Operation::Connection));
    (plain && reads).then_some(SessionCall {
        session,
        id,
        params,
        meta,
        named,
    })
}

impl SessionCall {
    /// The call, ready to run for a client at `client` in the session reached by `reach`:
    /// `None` when the version the request names is not the one the session speaks, or the
    /// session's client asked for notices (which a read may tell on its own stream), for the
    /// library to answer.
    pub fn ready(self, reach: &SessionReach, client: Option<IpAddr>) -> Option<Ready> {
        let version = reach.version()?;
        if self.named.is_some_and(|named| named != version.as_str()) || reach.hears_notices() {
            return None;
        }
        // As through the library, a read is never cut short by a cancellation: it changes
        // nothing, and its answer is the client's to ignore.
        let cancelled = CancellationToken::new();
        let caller = Caller::in_session(reach, &self.meta, client, cancelled.clone());
        // A read in a session tells its client nothing on its own response.
        let (_, told) = mpsc::channel(1);
        Some(Ready {
            id: self.id,
            params: self.params,
            version,
            caller,
            cancelled,
            told,
        })
    }
}
