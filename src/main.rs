//! lemonfiber-mcp: lets an AI assistant read and control a lemonfiber media stack through the
//! Model Context Protocol, with exactly the authority of the integration key it is given.

mod arguments;
mod catalogue;
mod config;
mod demo;
mod jobs;
mod outcome;
mod sentences;
mod server;
mod stack;
mod stdio;

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit code for settings that cannot work: the setting is named on stderr.
const EXIT_BAD_SETTINGS: u8 = 2;
const EXIT_FAILED: u8 = 1;

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
    /// LEMONFIBER_KEY_FILE (or LEMONFIBER_KEY) from the environment; a key is never an argument.
    Stdio,
    /// Run an embedded demo stack on loopback, with demo keys, to try the server against.
    Demo {
        /// Print one JSON line once listening, instead of instructions for a person.
        #[arg(long)]
        json: bool,
        /// The address the demo stack listens on.
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("lemonfiber-mcp: cannot start the async runtime: {error}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let outcome = runtime.block_on(async {
        match cli.command {
            Command::Stdio => stdio::run().await,
            Command::Demo { json, listen } => demo::run(listen, json)
                .await
                .map_err(|error| Fatal::Failed(error.to_string())),
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fatal::Settings(message)) => {
            eprintln!("lemonfiber-mcp: {message}");
            ExitCode::from(EXIT_BAD_SETTINGS)
        }
        Err(Fatal::Failed(message)) => {
            eprintln!("lemonfiber-mcp: {message}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// Why the program stopped: bad settings (exit 2) or a failure while running (exit 1).
pub enum Fatal {
    Settings(String),
    Failed(String),
}

/// Logs go to stderr: stdout belongs to the stdio transport.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("LEMONFIBER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,lemonfiber_mcp=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}
