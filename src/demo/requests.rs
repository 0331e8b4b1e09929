//! The demo stack's log of what it received, for tests: never the key, only its scope.

use std::sync::Mutex;

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// An action's JSON body, as the stack received it.
    pub body: Option<serde_json::Value>,
    /// The scope of the key the request carried, or null when it carried none the stack knows.
    pub scope: Option<String>,
    /// Whether that key was admitted (false once it is revoked).
    pub admitted: bool,
    /// The `Idempotency-Key` an action was sent with.
    pub idempotency_key: Option<String>,
}

#[derive(Default)]
pub struct RequestLog(Mutex<Vec<Received>>);

impl RequestLog {
    pub fn record(&self, received: Received) {
        if let Ok(mut log) = self.0.lock() {
            log.push(received);
        }
    }

    /// Every request so far, one JSON object a line.
    pub fn json_lines(&self) -> String {
        let log = self.0.lock().map(|log| log.clone()).unwrap_or_default();
        log.iter()
            .filter_map(|received| serde_json::to_string(received).ok())
            .map(|line| line + "\n")
            .collect()
    }
}
