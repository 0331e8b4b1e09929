//! The two ways the server is reached: over stdio by a desktop assistant, and over Streamable
//! HTTP with TLS by an assistant on a phone or in a browser; and how either ends.

pub mod http;
pub mod stdio;
pub mod tls;

/// Why serving stopped: bad settings (the command line's exit 2) or a failure while running
/// (exit 1).
pub enum Fatal {
    Settings(String),
    Failed(String),
}

/// Waits until the process is asked to stop (Ctrl-C or SIGTERM).
pub async fn stop_requested() {
    let interrupt = tokio::signal::ctrl_c();
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = interrupt => {}
                _ = terminate.recv() => {}
            }
        }
        Err(_) => {
            let _ = interrupt.await;
        }
    }
}
