//! The words file, joined to the tools: every tool has words, and every word names a tool.

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Words {
    #[serde(default)]
    pub parameters: BTreeMap<String, String>,
    pub notes: Notes,
    pub tools: BTreeMap<String, ToolWords>,
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
