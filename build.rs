//! Writes the generated SDK, the calls through it and the tool catalogue to `OUT_DIR`, from the
//! contract and the words: the generator itself is `src/contract.rs`, tested on its own.

// As in src/lib.rs: the program says what went wrong, and opens no connection of its own.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_types,
    clippy::disallowed_methods
)]

#[path = "src/contract.rs"]
mod contract;

use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed={}", contract::CONTRACT);
    println!("cargo::rerun-if-changed={}", contract::WORDS);
    println!("cargo::rerun-if-changed=src/contract.rs");
    println!("cargo::rerun-if-changed=src/contract");
    if let Err(problems) = build() {
        for problem in problems {
            println!("cargo::error={problem}");
        }
    }
}

fn build() -> Result<(), contract::Problems> {
    let out_dir = PathBuf::from(
        std::env::var_os("OUT_DIR").ok_or_else(|| vec!["OUT_DIR is not set".to_owned()])?,
    );
    let read = |path: &str| {
        std::fs::read_to_string(path).map_err(|error| vec![format!("cannot read {path}: {error}")])
    };
    let generated = contract::generate(&read(contract::CONTRACT)?, &read(contract::WORDS)?)?;
    for (file, text) in [
        ("catalogue.rs", &generated.catalogue),
        ("sdk_calls.rs", &generated.sdk_calls),
        ("sdk.rs", &generated.sdk),
    ] {
        let path = out_dir.join(file);
        std::fs::write(&path, text)
            .map_err(|error| vec![format!("cannot write {}: {error}", path.display())])?;
    }
    Ok(())
}
