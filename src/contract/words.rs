//! The words file, joined to the tools: every tool has words, and every word names a tool.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::tools::{ContractParameter, ContractTool};
use super::vocabulary::Completing;
use super::{Problems, WORDS};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Words {
    #[serde(default)]
    pub parameters: BTreeMap<String, String>,
    pub notes: Notes,
    pub tools: BTreeMap<String, ToolWords>,
    #[serde(default)]
    pub prompts: BTreeMap<String, PromptWords>,
}

/// A prompt a person reaches for, in their audience's words, answered with the tools it uses.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptWords {
    pub title: String,
    /// `operator` or `household`.
    pub audience: String,
    pub description: String,
    /// What the prompt asks the assistant.
    pub text: String,
    /// The tools that answer it: it is offered only to a key offered every one of them.
    pub uses: Vec<String>,
    #[serde(default)]
    pub arguments: BTreeMap<String, PromptArgumentWords>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptArgumentWords {
    pub description: String,
    /// The sentence added to the prompt's text when the argument is given; `{value}` stands for
    /// what was given.
    pub adds: String,
    /// What completes it from the stack: `titles`, `services` or `forms`.
    pub complete: Option<String>,
}

/// The completions a prompt argument may name, by the word the words file uses.
pub const COMPLETIONS: [(&str, Completing); 3] = [
    ("titles", Completing::Titles),
    ("services", Completing::Services),
    ("forms", Completing::Forms),
];

/// Every problem with the prompts' words: each names tools that exist, in its audience's words,
/// and each argument says where its value goes.
pub fn prompt_problems(tools: &[ContractTool], words: &Words) -> Problems {
    let mut problems = Vec::new();
    for (name, prompt) in &words.prompts {
        if ![&prompt.title, &prompt.description, &prompt.text]
            .iter()
            .all(|text| present(text))
        {
            problems.push(format!(
                "prompt {name} needs a title, a description and a text in {WORDS}"
            ));
        }
        let household = match prompt.audience.as_str() {
            "operator" => false,
            "household" => true,
            _ => {
                problems.push(format!(
                    "prompt {name}: audience must be operator or household"
                ));
                false
            }
        };
        if prompt.uses.is_empty() {
            problems.push(format!("prompt {name} uses no tool"));
        }
        for used in &prompt.uses {
            let Some(tool_words) = words.tools.get(used) else {
                problems.push(format!("prompt {name} uses {used}, which is no tool"));
                continue;
            };
            if !tools.iter().any(|tool| &tool.name == used) {
                problems.push(format!("prompt {name} uses {used}, which is no tool"));
            }
            if household && tool_words.household.is_none() {
                problems.push(format!(
                    "prompt {name} is for the household, and uses {used}, which a member is never offered"
                ));
            }
        }
        for (argument, argument_words) in &prompt.arguments {
            if !present(&argument_words.description) || !argument_words.adds.contains("{value}") {
                problems.push(format!(
                    "prompt {name} argument {argument} needs a description, and words that add {{value}}"
                ));
            }
            if let Some(complete) = &argument_words.complete
                && !COMPLETIONS.iter().any(|(word, _)| word == complete)
            {
                problems.push(format!(
                    "prompt {name} argument {argument} completes {complete}: it may complete titles, services or forms"
                ));
            }
        }
    }
    problems
}

/// Words added to a tool's description in some states, for the operator and the household.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Notes {
    pub unconfigured: String,
    pub unconfigured_household: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolWords {
    pub title: String,
    pub operator: String,
    pub household: Option<String>,
    #[serde(default)]
    pub parameters: BTreeMap<String, String>,
    #[serde(default)]
    pub household_parameters: BTreeMap<String, String>,
}

/// A tool with its words: what the catalogue holds.
pub struct WordedTool<'a> {
    pub tool: &'a ContractTool,
    pub words: &'a ToolWords,
    pub parameters: Vec<(&'a ContractParameter, &'a str, Option<&'a str>)>,
}

pub fn present(text: &str) -> bool {
    !text.trim().is_empty()
}

pub fn join_words<'a>(
    tools: &'a [ContractTool],
    words: &'a Words,
) -> Result<Vec<WordedTool<'a>>, Problems> {
    let mut problems = Vec::new();
    let mut worded = Vec::new();
    for tool in tools {
        let Some(tool_words) = words.tools.get(&tool.name) else {
            problems.push(format!(
                "tool {} (from {}) has no words in {WORDS}",
                tool.name, tool.path
            ));
            continue;
        };
        if !present(&tool_words.title) || !present(&tool_words.operator) {
            problems.push(format!(
                "tool {} needs a title and operator words in {WORDS}",
                tool.name
            ));
        }
        match (tool.household, tool_words.household.is_some()) {
            (true, false) => problems.push(format!(
                "tool {} is a household read (x-lemonfiber-household) and has no household words in {WORDS}",
                tool.name
            )),
            (false, true) => problems.push(format!(
                "tool {} is not a household read, so it takes no household words: they would offer it to members",
                tool.name
            )),
            _ => {}
        }
        if tool_words.household.as_deref().is_some_and(|h| !present(h)) {
            problems.push(format!(
                "tool {} has empty household words in {WORDS}",
                tool.name
            ));
        }
        let mut parameters = Vec::new();
        for parameter in &tool.parameters {
            let operator = tool_words
                .parameters
                .get(&parameter.name)
                .or_else(|| words.parameters.get(&parameter.name))
                .filter(|text| present(text));
            match operator {
                Some(operator) => parameters.push((
                    parameter,
                    operator.as_str(),
                    tool_words
                        .household_parameters
                        .get(&parameter.name)
                        .map(String::as_str),
                )),
                None => problems.push(format!(
                    "tool {} parameter {} has no words in {WORDS}",
                    tool.name, parameter.name
                )),
            }
        }
        for name in tool_words
            .parameters
            .keys()
            .chain(tool_words.household_parameters.keys())
        {
            if !tool
                .parameters
                .iter()
                .any(|parameter| &parameter.name == name)
            {
                problems.push(format!(
                    "words for tool {} name parameter {name}, which it does not take",
                    tool.name
                ));
            }
        }
        if tool_words.household.is_none() && !tool_words.household_parameters.is_empty() {
            problems.push(format!(
                "tool {} has household parameter words but no household words",
                tool.name
            ));
        }
        worded.push(WordedTool {
            tool,
            words: tool_words,
            parameters,
        });
    }
    for name in words.tools.keys() {
        if !tools.iter().any(|tool| &tool.name == name) {
            problems.push(format!(
                "{WORDS} has words for {name}, which the contract makes no tool for"
            ));
        }
    }
    if problems.is_empty() {
        Ok(worded)
    } else {
        Err(problems)
    }
}
