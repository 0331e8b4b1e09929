//! The generator: the core's contract (`contract/openapi.json`) and the words (`src/words.toml`)
//! made into the typed SDK client (by progenitor), each read sent through it, and the tool
//! catalogue. `build.rs` calls [`generate`] and writes what it answers to `OUT_DIR`; the unit
//! tests (`tests/generator.rs`) call it on small contracts of their own.
//!
//! It refuses, naming each one, a read or key-callable action with no tool, a tool with no words,
//! words that name no tool (F13-R2), and two tools, reads or actions named alike.

// Loaded by path from build.rs and from the generator's tests, so each child is named by its path.
#[path = "contract/answers.rs"]
mod answers;
#[path = "contract/client.rs"]
mod client;
#[path = "contract/distinct.rs"]
mod distinct;
#[path = "contract/naming.rs"]
mod naming;
#[path = "contract/render.rs"]
mod render;
#[path = "contract/sdk_calls.rs"]
mod sdk_calls;
#[path = "contract/shape.rs"]
mod shape;
#[path = "contract/tools.rs"]
mod tools;
#[path = "contract/vocabulary.rs"]
mod vocabulary;
#[path = "contract/words.rs"]
mod words;

use openapiv3::OpenAPI;
use serde_json::Value;

use client::render_sdk;
use distinct::distinct_names;
use render::render_catalogue;
use sdk_calls::render_sdk_calls;
use tools::{ContractTool, server_tools, tools_of};
use words::{Words, join_words, present, prompt_problems};

// Named by the generator's tests, which look for it in the SDK; the build never names it.
#[allow(unused_imports)]
pub use client::OWN_PARSE;

pub const CONTRACT: &str = "contract/openapi.json";
pub const WORDS: &str = "src/words.toml";
/// The SDK's inner value: the key every request carries and the limits of what is read, used by
/// the hooks `crate::stack::door` implements.
pub const SDK_INNER: &str = "crate::stack::door::Door";
pub const TOOL_NAME_LIMIT: usize = 64;

/// Every problem found, each said once, naming what to fix.
pub type Problems = Vec<String>;

/// The Rust the build writes to `OUT_DIR`, by file.
pub struct Generated {
    /// `catalogue.rs`: the tools, their schemas and words, every kind's schema.
    pub catalogue: String,
    /// `sdk_calls.rs`: each read and action sent through the SDK, and each operation's path
    /// template.
    pub sdk_calls: String,
    /// `sdk.rs`: the SDK itself.
    pub sdk: String,
}

/// The generated code for a contract (OpenAPI 3.0 as JSON) and words (TOML).
pub fn generate(contract: &str, words: &str) -> Result<Generated, Problems> {
    let Sources {
        document,
        contract,
        words,
        tools,
    } = read_sources(contract, words)?;
    let catalogue = join_words(&tools, &words)?;
    let prompt_problems = prompt_problems(&tools, &words);
    if !prompt_problems.is_empty() {
        return Err(prompt_problems);
    }
    let notes = &words.notes;
    if !present(&notes.unconfigured) || !present(&notes.unconfigured_household) {
        return Err(vec![format!(
            "{WORDS} needs both notes, unconfigured and unconfigured_household"
        )]);
    }
    Ok(Generated {
        catalogue: render_catalogue(&catalogue, notes, &words.prompts, &document)?,
        sdk_calls: render_sdk_calls(&tools, &contract)?,
        sdk: render_sdk(&contract)?,
    })
}

/// The shape of the catalogue the contract and the words make: each tool's name, title, role,
/// hints and schemas' outline, as the golden copy `tests/golden/catalogue.txt` holds it.
// Only the golden test reads it: the build writes no shape.
#[allow(dead_code)]
pub fn catalogue_shape(contract: &str, words: &str) -> Result<String, Problems> {
    let Sources {
        document,
        words,
        tools,
        ..
    } = read_sources(contract, words)?;
    let catalogue = join_words(&tools, &words)?;
    shape::catalogue_shape(&catalogue, &document)
}

/// The contract and the words as read, and the tools the contract calls for, each named apart.
struct Sources {
    document: Value,
    contract: OpenAPI,
    words: Words,
    tools: Vec<ContractTool>,
}

fn read_sources(contract: &str, words: &str) -> Result<Sources, Problems> {
    let document: Value = serde_json::from_str(contract)
        .map_err(|error| vec![format!("{CONTRACT} is not JSON: {error}")])?;
    // From the text, not the value: the contract's order is the tools' order.
    let contract: OpenAPI = serde_json::from_str(contract).map_err(|error| {
        vec![format!(
            "{CONTRACT} is not an OpenAPI 3.0 document: {error}"
        )]
    })?;
    let words: Words =
        toml::from_str(words).map_err(|error| vec![format!("{WORDS} cannot be read: {error}")])?;
    let mut tools = tools_of(&contract)?;
    tools.extend(server_tools());
    distinct_names(&tools)?;
    Ok(Sources {
        document,
        contract,
        words,
        tools,
    })
}
