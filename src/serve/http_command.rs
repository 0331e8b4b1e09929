//! `lemonfiber-mcp http` and `lemonfiber-mcp certificate rotate` as commands: the settings read
//! from the environment, the HTTP mode started and what it serves said to the person who started
//! it, and its end. The HTTP mode itself (`serve::http`) knows nothing of the command line.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::json;

use super::Fatal;
use super::http::{self, Serving, StartError};
use super::tls;
use crate::config::{self, ConfigError, TlsMode};
use crate::fingerprint::Fingerprint;
use crate::mcp::audit;

/// How long a stopping server waits for the certificate's keeper to withdraw what it put out
/// (an ACME DNS record), which the operator's hook may take a while to do.
const KEEPER_FINISHES_WITHIN: Duration = Duration::from_secs(30);

/// The HTTP mode, started: what `run` says it serves, and the server.
pub struct Started {
    /// The URL a client uses.
    pub url: String,
    pub tls_mode: &'static str,
    pub serving: Serving,
}

/// Starts the HTTP mode with the settings read through `lookup`: the environment, for `run`; the
/// benchmark's own, for the server it runs in its process to count allocations.
pub async fn start(
    lookup: impl Fn(&str) -> Option<String>,
    listen: Option<SocketAddr>,
) -> Result<Started, Fatal> {
    let settings = config::http_settings(lookup, listen)?;
    settings.stack.pin.withhold_from_output();
    audit::write_to(settings.conduct.audit.as_deref()).map_err(Fatal::AuditFile)?;
    let names = settings.names.clone();
    let public_port = settings.public_port;
    let public_url = settings.public_url.as_ref().map(config::PublicUrl::mcp);
    let tls_mode = settings.tls.name();
    let stack = settings.stack.clone();
    let serving = http::serve(settings).await?;
    tokio::spawn(http::check_at_start(stack));
    let reached_at = SocketAddr::new(
        serving.address.ip(),
        public_port.unwrap_or(serving.address.port()),
    );
    Ok(Started {
        url: public_url.unwrap_or_else(|| mcp_url(&names, reached_at)),
        tls_mode,
        serving,
    })
}

pub async fn run(listen: Option<SocketAddr>, print_json: bool) -> Result<(), Fatal> {
    let Started {
        url,
        tls_mode,
        serving,
    } = start(|name| std::env::var(name).ok(), listen).await?;
    let spki = serving.spki.to_base64();
    tracing::info!(
        url = %url,
        fingerprint = %serving.fingerprint.to_hex(),
        spki_sha256 = %spki,
        "serving MCP over HTTPS"
    );
    tracing::info!(mode = tls_mode, "{}", serving.who_can_check);
    if print_json {
        let line = json!({
            "mcp_url": url,
            "mcp_pin": serving.fingerprint.to_hex(),
            "spki_sha256": spki,
            "root_fingerprint": serving.root_fingerprint.map(Fingerprint::to_hex),
            "certificate_file": serving.trust_file.display().to_string(),
            "tls_mode": tls_mode,
        });
        println!("{line}");
    } else {
        print_for_a_person(&url, tls_mode, &serving);
    }
    let Serving {
        ends,
        done,
        certificate_keeper,
        ..
    } = serving;
    tokio::select! {
        () = crate::serve::stop_requested() => {
            ends.cancel();
            let _ = tokio::time::timeout(KEEPER_FINISHES_WITHIN, certificate_keeper).await;
            Ok(())
        }
        served = done => match served {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(Fatal::HttpsStopped(error)),
            Err(error) => Err(Fatal::HttpsAbandoned(error)),
        },
    }
}

/// What `run` says it serves, for the person who started it: in private-ca mode the root first,
/// since that is what a device checks and installs, and the leaf it issues changes every week.
fn print_for_a_person(url: &str, tls_mode: &str, serving: &Serving) {
    if let Some(root) = serving.root_fingerprint {
        println!(
            "Private root fingerprint (SHA-256): {}",
            root.to_colon_pairs()
        );
        println!(
            "  Install the root ({}, also served at /root.pem) on each device, after checking that the device \
             shows this fingerprint for it.",
            serving.trust_file.display()
        );
    }
    println!("Serving MCP at {url}");
    println!(
        "Certificate fingerprint (SHA-256): {}",
        serving.fingerprint.to_hex()
    );
    let spki = serving.spki.to_base64();
    println!(
        "Public key pin (SPKI SHA-256, base64): {spki}   (curl: --pinnedpubkey sha256//{spki})"
    );
    println!("  {}", how_long_the_pins_last(tls_mode));
    println!("{}", serving.who_can_check);
}

/// Whether a client may pin what is printed, in the mode `tls_mode` names.
fn how_long_the_pins_last(tls_mode: &str) -> &'static str {
    match tls_mode {
        "private-ca" => {
            "Both change every week, when the certificate is renewed: pin or install the root above instead."
        }
        "acme" => {
            "Both change at every renewal (each brings a new key): let clients trust the authority rather than pin \
             these."
        }
        "files" => {
            "Both change when your files are replaced (the public key pin only if the key is replaced too)."
        }
        _ => {
            "Both stay the same across restarts, until `lemonfiber-mcp certificate rotate` or a change of \
             LEMONFIBER_NAMES replaces the certificate."
        }
    }
}

/// The URL a client uses: the address listened on when it is one of the served names, else the
/// first served name, at the port it is reached at (named only when it is not HTTPS's own).
pub fn mcp_url(names: &[String], address: SocketAddr) -> String {
    let ip = address.ip().to_string();
    let host = if names.contains(&ip) {
        ip
    } else {
        names.first().cloned().unwrap_or(ip)
    };
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    match address.port() {
        443 => format!("https://{host}/mcp"),
        port => format!("https://{host}:{port}/mcp"),
    }
}

/// `lemonfiber-mcp certificate rotate`: a new certificate in place of the one kept in the state
/// folder, which a running server serves within seconds, connections already open keeping theirs.
pub fn rotate() -> Result<(), Fatal> {
    let set = |name: &str| std::env::var(name).ok();
    let names = config::served_names(&set)?;
    let state = config::state_folder(&set)?;
    let mode = config::tls_mode(&set)?;
    if mode != TlsMode::Pinned {
        return Err(ConfigError::RotateIsPinned(mode.name()).into());
    }
    // A certificate made where no pinned server serves from would be a fingerprint nothing
    // serves, and in a folder that did not exist, a fresh one nobody asked for.
    let refused = match tls::what_is_in(&state) {
        tls::Holds::PinnedCertificate => None,
        tls::Holds::NoFolder => Some(ConfigError::RotateNoState(state.clone())),
        tls::Holds::PrivateRoot => Some(ConfigError::RotateHoldsPrivateRoot(state.clone())),
        tls::Holds::Acme => Some(ConfigError::RotateHoldsAcme(state.clone())),
        tls::Holds::NoCertificate => Some(ConfigError::RotateNoCertificate(state.clone())),
    };
    if let Some(refused) = refused {
        return Err(refused.into());
    }
    let presented = tls::make_and_keep(&state, &names).map_err(StartError::from)?;
    println!(
        "New certificate fingerprint (SHA-256): {}",
        presented.fingerprint.to_hex()
    );
    println!(
        "New public key pin (SPKI SHA-256, base64): {}",
        presented.spki.to_base64()
    );
    println!(
        "Every client that pins the old fingerprint or public key must be given the new one: until then \
         it cannot connect."
    );
    Ok(())
}
