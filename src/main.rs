//! The `lemonfiber-mcp` command: `stdio`, `http`, `link`, `unlink`, `install`, `check`,
//! `certificate` and `demo`, each calling the library, and the logging every one of them writes
//! to stderr.

// As in src/lib.rs: the program says what went wrong, and opens no connection of its own.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_types,
    clippy::disallowed_methods
)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use lemonfiber_mcp::serve::{self, Fatal};
use lemonfiber_mcp::{check, demo, grants, install, link, redact, threads, unlink};

#[global_allocator]
static ALLOCATOR: lemonfiber_mcp::allocator::Allocator = lemonfiber_mcp::allocator::Allocator;

/// Exit code for settings that cannot work: the setting is named on stderr.
const EXIT_BAD_SETTINGS: u8 = 2;
const EXIT_FAILED: u8 = 1;
/// `check`: the stack refused the key.
const EXIT_REFUSED: u8 = 3;
/// `check`: the stack could not be reached, or was not the pinned one.
const EXIT_UNREACHABLE: u8 = 4;

#[derive(Parser)]
#[command(
    name = "lemonfiber-mcp",
    version,
    about = "An MCP server for a lemonfiber media stack"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio, for a desktop assistant. Reads LEMONFIBER_ADDRESS, LEMONFIBER_PIN and
    /// LEMONFIBER_KEY_FILE (or LEMONFIBER_KEY) from the environment, or LEMONFIBER_LINK (a key
    /// link, traded once and kept), or else the config `link` wrote (LEMONFIBER_CONFIG names
    /// another); a key is never an argument.
    Stdio,
    /// Serve MCP Streamable HTTP over TLS, for an assistant on a phone or in a browser. Reads
    /// LEMONFIBER_LISTEN, LEMONFIBER_ADDRESS, LEMONFIBER_PIN, LEMONFIBER_NAMES and LEMONFIBER_STATE
    /// (the folder for its certificates and secrets; by default $XDG_STATE_HOME/lemonfiber-mcp/http,
    /// or ~/.local/state/lemonfiber-mcp/http); every request brings its own key, or a sign-in
    /// token that seals one, as `Authorization: Bearer`. Behind a reverse proxy or a tunnel, set
    /// LEMONFIBER_PUBLIC_URL and LEMONFIBER_TRUSTED_PROXIES too (docs/http.md).
    Http {
        /// The address to serve on (instead of LEMONFIBER_LISTEN).
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// Print one JSON line once listening: the MCP URL, the certificate's fingerprint
        /// (mcp_pin), its public key pin (spki_sha256, base64 as curl's --pinnedpubkey takes it)
        /// and, in private-ca mode, the root's fingerprint (root_fingerprint).
        #[arg(long)]
        json: bool,
    },
    /// Set up from a key link: claim the key it offers (once), keep it with the stack's address and
    /// pin in a config file only you can read, and print the assistant configuration to use.
    Link {
        /// The key link the stack gave you, or - to read it from standard input (so it stays out
        /// of the shell's history).
        link: String,
        /// Also print the configuration for an assistant that reaches the HTTPS mode at this URL.
        #[arg(long, value_name = "MCP_URL")]
        https: Option<String>,
    },
    /// Undo link: remove the config it wrote (LEMONFIBER_CONFIG names another), so nothing here
    /// uses its key. The key still works on the stack until it is revoked there. Exits 2 when
    /// there is no linked config.
    Unlink,
    /// Add lemonfiber to Claude Desktop's, Claude Code's, Cursor's or VS Code's MCP configuration
    /// for you.
    ///
    /// It writes one "lemonfiber" entry that runs this program with the config link wrote
    /// (LEMONFIBER_CONFIG names another), so the key stays out of the assistant's file, and keeps
    /// everything else in the file byte for byte; the file as it was is kept beside it as
    /// <file>.lemonfiber-backup. A file that does not read as JSON (with comments, for VS Code) is
    /// left as it is, and the line named. Exits 2 when there is no linked config, or when the
    /// assistant's file cannot be changed as it is.
    Install {
        /// The assistant whose configuration to add lemonfiber to.
        client: ClientName,
        /// Print what would be written, and where, and write nothing.
        #[arg(long)]
        print: bool,
    },
    /// Say what the configured key reaches: connected, refused or unreachable (and why), its
    /// scope, and the tools and resources an assistant is offered. Writes nothing. Exits 0 when
    /// connected, 3 when the key is refused, 4 when the stack cannot be reached, and 2 when the
    /// settings are wrong.
    Check {
        /// Print one JSON object, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Ask the HTTP mode serving on LEMONFIBER_LISTEN on this machine for /health: the
    /// container's health check. Exits 0 when it answers 200.
    Health,
    /// The certificate the HTTP mode serves (kept in LEMONFIBER_STATE, for LEMONFIBER_NAMES). Without
    /// LEMONFIBER_STATE the folder is $XDG_STATE_HOME/lemonfiber-mcp/http, or
    /// ~/.local/state/lemonfiber-mcp/http (on Windows, %LOCALAPPDATA%\lemonfiber-mcp\http).
    Certificate {
        #[command(subcommand)]
        action: CertificateAction,
    },
    /// The sign-ins the HTTP mode has handed out to hosted assistants (kept in LEMONFIBER_STATE):
    /// list them, or end one before it expires.
    Grants {
        #[command(subcommand)]
        action: GrantsAction,
    },
    /// Run an embedded demo stack on loopback, with demo keys, to try the server against. Its
    /// address, certificate (so its pin) and key files are kept for the next run, in
    /// $XDG_STATE_HOME/lemonfiber-mcp/demo (or ~/.local/state/lemonfiber-mcp/demo), so that a
    /// configuration pasted from one run keeps working; the keys work only while it runs. Exits 2
    /// when the address it kept is taken.
    Demo {
        /// Print one JSON line once listening, instead of instructions for a person.
        #[arg(long)]
        json: bool,
        /// The address the demo stack listens on (without it, the last run's, or any free port
        /// on 127.0.0.1 the first time).
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// Serve the certificate this number makes, the same each time (a different number, a
        /// different certificate); without it, a new certificate at each start.
        #[arg(long, value_name = "N")]
        certificate_seed: Option<u64>,
        /// Keep the demo's key files, certificate and addresses in this folder, and use again
        /// those already there, instead of the per-user folder.
        #[arg(long, value_name = "DIR")]
        key_dir: Option<PathBuf>,
        /// Make new keys, a new certificate and a new address in place of the kept ones (an
        /// assistant set up before must then be given the new configuration).
        #[arg(long)]
        fresh: bool,
    },
}

/// The assistants `install` knows, by the names given on the command line.
#[derive(Clone, Copy, ValueEnum)]
enum ClientName {
    /// Claude Desktop's claude_desktop_config.json
    ClaudeDesktop,
    /// Claude Code's ~/.claude.json (its servers for every project)
    ClaudeCode,
    /// Cursor's ~/.cursor/mcp.json
    Cursor,
    /// VS Code's user mcp.json
    #[value(name = "vscode")]
    VsCode,
}

impl From<ClientName> for install::Client {
    fn from(name: ClientName) -> install::Client {
        match name {
            ClientName::ClaudeDesktop => install::Client::ClaudeDesktop,
            ClientName::ClaudeCode => install::Client::ClaudeCode,
            ClientName::Cursor => install::Client::Cursor,
            ClientName::VsCode => install::Client::VsCode,
        }
    }
}

#[derive(Subcommand)]
enum GrantsAction {
    /// List every sign-in in force: its id, the client's name for itself, the key (the first
    /// digits of its digest, as the audit names it) and when it was made, renewed and ends.
    List {
        /// Print one JSON object a line, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// End a sign-in by its id: its assistant's next request is refused, and it must sign in
    /// again. A running server takes it at once.
    End {
        /// The sign-in's id, as `grants list` shows it.
        id: String,
    },
}

#[derive(Subcommand)]
enum CertificateAction {
    /// Replace it with a new one and print its fingerprint and public key pin; a running server
    /// serves the new one within seconds, and every client pinning the old one must be given the
    /// new one. Only in the pinned mode's state folder: it refuses (exit 2), changing nothing,
    /// where the folder does not exist, holds no pinned certificate, or holds a private root or an
    /// ACME certificate.
    Rotate,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    redact::redact_panics();
    init_logging();
    let runtime = match cli.command {
        Command::Stdio => Ok(threads::for_stdio()),
        Command::Http { .. } => threads::for_http(),
        _ => threads::for_the_rest(),
    };
    let mut runtime = match runtime {
        Ok(runtime) => runtime,
        Err(bad) => {
            eprintln!("lemonfiber-mcp: {bad}");
            return ExitCode::from(EXIT_BAD_SETTINGS);
        }
    };
    let runtime = match runtime.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("lemonfiber-mcp: cannot start the async runtime: {error}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    runtime.block_on(async {
        match cli.command {
            Command::Stdio => exit_code(serve::stdio::run().await),
            Command::Link { link, https } => match link::run(&link, https.as_deref()).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(failure) if failure.is_settings() => failed(&failure, EXIT_BAD_SETTINGS),
                Err(failure) => failed(&failure, EXIT_FAILED),
            },
            Command::Unlink => match unlink::run() {
                Ok(()) => ExitCode::SUCCESS,
                Err(failure) if failure.is_settings() => failed(&failure, EXIT_BAD_SETTINGS),
                Err(failure) => failed(&failure, EXIT_FAILED),
            },
            Command::Install { client, print } => match install::run(client.into(), print) {
                Ok(()) => ExitCode::SUCCESS,
                Err(failure) if failure.is_settings() => failed(&failure, EXIT_BAD_SETTINGS),
                Err(failure) => failed(&failure, EXIT_FAILED),
            },
            Command::Health => match serve::health::run() {
                Ok(()) => ExitCode::SUCCESS,
                Err(unhealthy) => failed(&unhealthy, EXIT_FAILED),
            },
            Command::Check { json } => match check::run(json).await {
                Ok(check::Checked::Connected) => ExitCode::SUCCESS,
                Ok(check::Checked::Refused) => ExitCode::from(EXIT_REFUSED),
                Ok(check::Checked::Unreachable) => ExitCode::from(EXIT_UNREACHABLE),
                Err(fatal) => exit_code(Err(fatal)),
            },
            Command::Http { listen, json } => {
                exit_code(serve::http_command::run(listen, json).await)
            }
            Command::Certificate {
                action: CertificateAction::Rotate,
            } => exit_code(serve::http_command::rotate()),
            Command::Grants { action } => {
                let done = match action {
                    GrantsAction::List { json } => grants::list(json),
                    GrantsAction::End { id } => grants::end(&id),
                };
                match done {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(error) if error.is_settings() => failed(&error, EXIT_BAD_SETTINGS),
                    Err(error) => failed(&error, EXIT_FAILED),
                }
            }
            Command::Demo {
                json,
                listen,
                certificate_seed,
                key_dir,
                fresh,
            } => match demo::run(demo::DemoOptions {
                listen,
                print_json: json,
                certificate_seed,
                key_dir,
                fresh,
            })
            .await
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) if error.is_settings() => failed(&error, EXIT_BAD_SETTINGS),
                Err(error) => failed(&error, EXIT_FAILED),
            },
        }
    })
}

fn exit_code(served: Result<(), Fatal>) -> ExitCode {
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(fatal) if fatal.is_settings() => failed(&fatal, EXIT_BAD_SETTINGS),
        Err(fatal) => failed(&fatal, EXIT_FAILED),
    }
}

fn failed(error: &dyn std::error::Error, code: u8) -> ExitCode {
    eprintln!("lemonfiber-mcp: {error}");
    ExitCode::from(code)
}

/// Logs go to stderr: stdout belongs to the stdio transport. Whatever level is asked for, the
/// crates beneath the server say no more than warnings, and the MCP library nothing at all: at
/// finer levels they log whole messages and session identifiers, which carry the stack's answers
/// and would let a reader of the log into a session.
fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    use tracing_subscriber::{Layer as _, filter};
    let asked = tracing_subscriber::EnvFilter::try_from_env("LEMONFIBER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,lemonfiber_mcp=info"));
    let beneath = filter::filter_fn(|metadata| {
        let target = metadata.target();
        if target.starts_with(env!("CARGO_CRATE_NAME")) {
            true
        } else if target.starts_with("rmcp") {
            false
        } else {
            *metadata.level() <= tracing::Level::WARN
        }
    });
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(|| redact::RedactingStderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(asked)
        .with_filter(beneath);
    tracing_subscriber::registry().with(layer).init();
}
