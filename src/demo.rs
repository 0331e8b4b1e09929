//! `lemonfiber-mcp demo`: an embedded stack on loopback that behaves like a lemonfiber stack for
//! this contract, with its own certificate and keys, for trying the server and for the tests.

mod actions;
mod again;
mod api;
mod claims;
mod control;
mod household;
mod kept;
mod keys;
mod pictures;
mod requests;
#[cfg(test)]
mod shapes;
mod tls;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum_server::accept::NoDelayAcceptor;
use axum_server::tls_rustls::RustlsConfig;
use serde_json::json;

use crate::config::{self, HttpSettings};
use crate::serve::{http, http_command};
use crate::stack::StackAddress;
use household::Household;
use keys::{DemoKey, Scope};
use requests::RequestLog;

/// How the demo is run: from the command line.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Where the stack listens; without it, where the last run from its folder listened.
    pub listen: Option<SocketAddr>,
    pub print_json: bool,
    /// Serve the certificate this seed makes (the same seed, the same certificate).
    pub certificate_seed: Option<u64>,
    /// Keep the keys here, and use again those already here, instead of the per-user folder.
    pub key_dir: Option<PathBuf>,
    /// New keys, certificate and addresses, in place of those an earlier run kept.
    pub fresh: bool,
}

pub struct Demo {
    household: Household,
    actions: actions::Actions,
    keys: Vec<DemoKey>,
    /// The key links' claims, one for each key.
    claims: claims::Claims,
    requests: RequestLog,
    /// The scopes whose keys the control endpoint revoked.
    revoked: Mutex<BTreeSet<String>>,
    /// Capability states the control endpoint set, by path, for every scope.
    capability_overrides: Mutex<BTreeMap<String, &'static str>>,
    /// Seconds the next request is told to wait, answered with `429`.
    throttle: Mutex<Option<u64>>,
    /// Whether the next request is answered as one whose key came over a connection the stack
    /// does not count as pinned (`ADMIT-11`).
    not_pinned_next: Mutex<bool>,
    /// Acts sent with an `Idempotency-Key`, and what they were answered.
    answered: again::Answered,
}

impl Demo {
    fn is_revoked(&self, scope: &Scope) -> bool {
        self.revoked
            .lock()
            .is_ok_and(|revoked| revoked.contains(&scope.label()))
    }

    fn revoke(&self, scope: &Scope) {
        if let Ok(mut revoked) = self.revoked.lock() {
            revoked.insert(scope.label());
        }
    }

    fn capability_override(&self, path: &str) -> Option<&'static str> {
        self.capability_overrides.lock().ok()?.get(path).copied()
    }

    fn set_capability(&self, path: &str, state: &'static str) {
        if let Ok(mut overrides) = self.capability_overrides.lock() {
            overrides.insert(path.to_owned(), state);
        }
    }

    fn take_not_pinned(&self) -> bool {
        self.not_pinned_next
            .lock()
            .is_ok_and(|mut next| std::mem::take(&mut *next))
    }

    fn not_pinned_next(&self) {
        if let Ok(mut next) = self.not_pinned_next.lock() {
            *next = true;
        }
    }

    fn take_throttle(&self) -> Option<u64> {
        self.throttle.lock().ok()?.take()
    }

    fn throttle_next(&self, seconds: u64) {
        if let Ok(mut throttle) = self.throttle.lock() {
            *throttle = Some(seconds);
        }
    }
}

/// Why the demo could not run.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("the demo stack cannot run: {what}: {source}")]
    Io {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("the demo stack cannot run: cannot {what} {file}: {source}", file = .path.display())]
    File {
        what: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("the demo stack cannot run: {what}: {source}")]
    Certificate {
        what: &'static str,
        source: rcgen::Error,
    },
    #[error("the demo stack cannot run: {0}")]
    Served(#[from] crate::serve::tls::CertError),
    #[error("the demo stack cannot run: no randomness for the demo: {0}")]
    NoRandomness(#[from] getrandom::Error),
    #[error("the demo stack cannot run: the demo household does not parse: {0}")]
    Household(#[from] serde_json::Error),
    #[error("the demo stack cannot run: {0}")]
    Mcp(#[from] http::StartError),
    #[error("the demo stack cannot run: {0}")]
    Settings(#[from] crate::config::ConfigError),
    #[error("the demo stack cannot run: the demo's MCP server stopped: {0}")]
    McpAbandoned(#[from] tokio::task::JoinError),
    #[error(
        "the demo stack cannot run: there is no per-user folder to keep its keys in: set XDG_STATE_HOME \
         or HOME, or name a folder with --key-dir"
    )]
    NowhereToKeep,
    #[error(
        "the demo stack cannot run: {address}, where its last run listened and where the configuration \
         you pasted then points, is taken: another demo keeping its things in {folder}, or another \
         program, is listening there. Stop that one and run the demo again; or run the demo with --fresh \
         for a new address, pin and keys, and paste the new configuration it prints",
        folder = .folder.display()
    )]
    KeptAddressTaken {
        address: SocketAddr,
        folder: PathBuf,
    },
}

impl DemoError {
    /// Whether what the person can change is at fault (the command line's exit 2).
    pub fn is_settings(&self) -> bool {
        matches!(
            self,
            DemoError::NowhereToKeep | DemoError::KeptAddressTaken { .. }
        )
    }
}

fn io(what: &'static str) -> impl Fn(std::io::Error) -> DemoError {
    move |source| DemoError::Io { what, source }
}

pub async fn run(options: DemoOptions) -> Result<(), DemoError> {
    let DemoOptions {
        listen,
        print_json,
        certificate_seed,
        key_dir,
        fresh,
    } = options;
    let folder = match key_dir {
        Some(folder) => folder,
        None => crate::places::state_folder(&|name| std::env::var(name).ok())
            .ok_or(DemoError::NowhereToKeep)?
            .join("demo"),
    };
    let folder = kept::Folder::open(&folder, fresh)?;
    let (certificate, certificate_kept) = match certificate_seed {
        Some(seed) => (tls::make(Some(seed))?, false),
        None => folder.certificate()?,
    };
    let keys = keys::keys_in(folder.path(), fresh)?;
    let last = folder.addresses();
    // Where the last run listened, unless told otherwise: that is where what was pasted points.
    let kept_stack = listen
        .is_none()
        .then_some(last.map(|last| last.stack))
        .flatten();
    let listen = listen.unwrap_or_else(|| kept_stack.unwrap_or(SocketAddr::new(LOOPBACK, 0)));
    let kept_mcp = last
        .map(|last| last.mcp)
        .filter(|mcp| mcp.ip() == listen.ip());
    let taken = |address: SocketAddr, kept: bool| {
        let folder = folder.path().to_owned();
        move |error: std::io::Error| {
            if kept && error.kind() == std::io::ErrorKind::AddrInUse {
                DemoError::KeptAddressTaken { address, folder }
            } else {
                DemoError::Io {
                    what: "cannot listen on the demo's address",
                    source: error,
                }
            }
        }
    };
    let scopes: Vec<Scope> = keys.iter().map(|key| key.scope.clone()).collect();
    let (claims, claimed) = claims::Claims::made_for(&scopes)?;
    let demo = Arc::new(Demo {
        household: Household::load()?,
        actions: actions::Actions::default(),
        keys,
        claims,
        requests: RequestLog::default(),
        revoked: Mutex::default(),
        capability_overrides: Mutex::default(),
        throttle: Mutex::default(),
        not_pinned_next: Mutex::default(),
        answered: again::Answered::default(),
    });

    let listener =
        std::net::TcpListener::bind(listen).map_err(taken(listen, kept_stack.is_some()))?;
    listener
        .set_nonblocking(true)
        .map_err(io("cannot listen on the demo's address"))?;
    let address = listener
        .local_addr()
        .map_err(io("cannot listen on the demo's address"))?;
    let stack =
        axum_server::from_tcp_rustls(listener, RustlsConfig::from_config(certificate.config))
            .map_err(io("cannot serve TLS"))?
            .map(|acceptor| acceptor.acceptor(NoDelayAcceptor))
            .serve(api::router(demo.clone()).into_make_service());
    let control_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(io("cannot listen for the demo's control endpoint"))?;
    let control_address = control_listener
        .local_addr()
        .map_err(io("cannot listen for the demo's control endpoint"))?;
    let control = axum::serve(control_listener, control::router(demo.clone())).into_future();

    let stack_url = format!("https://{address}");
    // MCP over HTTPS beside it, as an operator runs it next to a real stack.
    let names: Vec<String> = config::DEFAULT_NAMES
        .iter()
        .map(|name| name.to_string())
        .collect();
    let mcp_listen = kept_mcp.unwrap_or(SocketAddr::new(listen.ip(), 0));
    let mcp = http::serve(HttpSettings {
        listen: mcp_listen,
        stack: StackAddress {
            base_url: stack_url.clone(),
            pin: certificate.pin,
        },
        names: names.clone(),
        state: folder.mcp_state(),
        tls: config::TlsMode::Pinned,
        origins: None,
        public_port: None,
        public_url: None,
        proxies: config::TrustedProxies::default(),
        // How it deals with the assistant, and its limits, as the HTTP mode's settings give them:
        // a checker that opens many sessions can be given room for them, and a test a quicker
        // watch.
        conduct: config::conduct(&|name| std::env::var(name).ok())?,
        limits: config::limits(&|name| std::env::var(name).ok())?,
        sign_in: config::sign_in(&|name| std::env::var(name).ok())?,
    })
    .await
    .map_err(|error| match error {
        http::StartError::Listen(address, source)
            if kept_mcp.is_some() && source.kind() == std::io::ErrorKind::AddrInUse =>
        {
            DemoError::KeptAddressTaken {
                address,
                folder: folder.path().to_owned(),
            }
        }
        error => DemoError::Mcp(error),
    })?;
    let addresses = kept::Addresses {
        stack: address,
        mcp: mcp.address,
    };
    folder.keep_addresses(addresses)?;
    let all_kept = certificate_kept
        && demo.keys.iter().all(|key| key.kept)
        && last.is_some_and(|last| last == addresses);
    let pin = certificate.pin.to_hex();
    // A key link per key: the stack's address and pin, and that key's one-time claim.
    let links = scopes
        .iter()
        .zip(&claimed)
        .map(|(scope, claim)| {
            let link = format!("{stack_url}/link#claim={claim}&pin={pin}");
            (scope.kind(), link)
        })
        .collect();
    let served = Served {
        stack_url,
        pin,
        mcp_url: http_command::mcp_url(&names, mcp.address),
        mcp,
        links,
    };
    let key_file = |kind: &str| {
        demo.keys
            .iter()
            .find(|key| key.scope.kind() == kind)
            .map(|key| key.file.display().to_string())
    };
    if print_json {
        let line = json!({
            "address": served.stack_url,
            "pin": served.pin,
            "key_files": { "read": key_file("read"), "act": key_file("act"), "member": key_file("member") },
            "links": served.links,
            "control": format!("http://{control_address}"),
            "mcp_url": served.mcp_url,
            "mcp_pin": served.mcp.fingerprint.to_hex(),
            "mcp_spki_sha256": served.mcp.spki.to_base64(),
        });
        println!("{line}");
    } else {
        print_for_a_person(&demo, &served, folder.path(), all_kept);
    }

    let Served { mcp, .. } = served;
    let outcome = tokio::select! {
        served = stack => served.map_err(io("the demo stack stopped")),
        served = control => served.map_err(io("the demo's control endpoint stopped")),
        served = mcp.done => match served {
            Ok(served) => served.map_err(io("the demo's MCP server stopped")),
            Err(error) => Err(DemoError::McpAbandoned(error)),
        },
        () = crate::serve::stop_requested() => Ok(()),
    };
    outcome
}

/// What the demo serves, for the person who started it.
struct Served {
    stack_url: String,
    pin: String,
    mcp_url: String,
    mcp: http::Serving,
    /// A key link for each key, by scope (`read`, `act`, `member`).
    links: BTreeMap<&'static str, String>,
}

/// Where the demo listens when neither `--listen` nor a run before names a place.
const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn print_for_a_person(demo: &Demo, served: &Served, folder: &Path, all_kept: bool) {
    let program = std::env::current_exe().map_or_else(
        |_| "lemonfiber-mcp".to_owned(),
        |path| path.display().to_string(),
    );
    let key_of = |scope: &Scope| demo.keys.iter().find(|key| &key.scope == scope);
    println!(
        "A lemonfiber demo stack for {} is running.\n",
        demo.household.stack
    );
    println!("  address  {}", served.stack_url);
    println!("  pin      {}", served.pin);
    println!("  keys     (in {})", folder.display());
    for key in &demo.keys {
        println!("    {:<14} {}", key.scope.label(), key.file.display());
    }
    if all_kept {
        println!(
            "\nThe address, pin and key files are the last run's, so an assistant set up then still works."
        );
    } else {
        println!(
            "\nThese are kept for the next run, so what you paste from here keeps working (run the demo"
        );
        println!("with --fresh for new ones).");
    }
    if let Some(read) = key_of(&Scope::Read) {
        let config = json!({
            "mcpServers": {
                "lemonfiber-demo": {
                    "command": program,
                    "args": ["stdio"],
                    "env": {
                        "LEMONFIBER_ADDRESS": served.stack_url,
                        "LEMONFIBER_PIN": served.pin,
                        "LEMONFIBER_KEY_FILE": read.file.display().to_string(),
                    }
                }
            }
        });
        let pretty = serde_json::to_string_pretty(&config).unwrap_or_default();
        println!(
            "\nTo try it from a desktop assistant, add this to its MCP configuration (for Claude Desktop,"
        );
        println!(
            "claude_desktop_config.json), then restart the assistant. Use act.key for a key that may act,"
        );
        println!("or member.key to see what a household member sees.\n\n{pretty}\n");
    }
    println!(
        "Or set up from a key link, as with a real stack: run `{program} link -` and paste one"
    );
    println!("(each works once, for ten minutes):");
    for (scope, link) in &served.links {
        println!("  {scope:<7} {link}");
    }
    println!();
    println!(
        "MCP over HTTPS, as the HTTP mode serves a phone or browser assistant (this one listens on"
    );
    println!("loopback, so only a client on this machine reaches it):");
    println!("  url          {}", served.mcp_url);
    println!(
        "  fingerprint  {} (SHA-256; pin it, or trust {})",
        served.mcp.fingerprint.to_hex(),
        served.mcp.trust_file.display()
    );
    println!(
        "  public key   {} (SPKI SHA-256, base64; for curl: --pinnedpubkey sha256//<this>)",
        served.mcp.spki.to_base64()
    );
    println!("  key          send one of the keys above as: Authorization: Bearer <key>\n");
    println!(
        "The demo runs until you stop it (Ctrl-C). Its keys stay in their folder for the next run,"
    );
    println!("and work only while it runs: nothing else accepts them.");
}
