//! Prompts from the words file, offered to a key in its audience's words and only where its tools
//! can answer them; and the values the stack completes their arguments (and resource template
//! parameters) with, read under the asking key's own scope.

use rmcp::model::{
    CompletionInfo, GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::Value;

use crate::access::offer::Offer;
use crate::answer::is_hidden;
use crate::catalogue::{self, Completing, PromptArgumentFault as ArgumentFault, PromptSpec};
use crate::stack::{Body, Reply};

/// The longest value a prompt argument takes.
const LONGEST_VALUE: usize = 200;

/// The prompts offered to a key: its audience's, each only where the key is offered every tool
/// that answers it.
pub fn offered(offer: &Offer) -> impl Iterator<Item = &'static PromptSpec> + '_ {
    catalogue::PROMPTS.iter().filter(|prompt| {
        prompt.audience == offer.audience
            && prompt
                .uses
                .iter()
                .all(|used| catalogue::find(used).is_some_and(|tool| offer.admits(tool)))
    })
}

/// A prompt as `prompts/list` shows it.
pub fn listed(prompt: &PromptSpec) -> Prompt {
    let arguments = prompt
        .arguments
        .iter()
        .map(|argument| {
            let mut listed =
                PromptArgument::new(argument.name).with_description(argument.description);
            listed.required = Some(false);
            listed
        })
        .collect();
    Prompt::new(prompt.name, Some(prompt.description), Some(arguments)).with_title(prompt.title)
}

/// The prompt's text, with the words each given argument adds.
pub fn rendered(
    prompt: &PromptSpec,
    given: Option<&JsonObject>,
) -> Result<GetPromptResult, ArgumentFault> {
    let given = given.cloned().unwrap_or_default();
    if let Some(name) = given.keys().find(|name| {
        !prompt
            .arguments
            .iter()
            .any(|argument| argument.name == *name)
    }) {
        return Err(ArgumentFault::NotTaken(name.clone()));
    }
    let mut text = prompt.text.to_owned();
    for argument in prompt.arguments {
        let value = match given.get(argument.name) {
            None | Some(Value::Null) => continue,
            Some(Value::String(value)) => value,
            Some(_) => return Err(ArgumentFault::NotText(argument.name.to_owned())),
        };
        let value: String = value.chars().filter(|&c| !is_hidden(c)).collect();
        let value = value.trim();
        if value.is_empty() {
            continue;
        }
        if value.chars().count() > LONGEST_VALUE {
            return Err(ArgumentFault::TooLong(
                argument.name.to_owned(),
                LONGEST_VALUE,
            ));
        }
        text.push(' ');
        text.push_str(&argument.adds.replace("{value}", value));
    }
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(prompt.description),
    )
}

/// What completes a resource template's parameter: a title's identifier completes the library's
/// templates (`lemonfiber://read/held/{id}` and its pictures).
pub fn completing_parameter(uri_template: &str, parameter: &str) -> Option<Completing> {
    let template = catalogue::reads().find(|tool| tool.resource == Some(uri_template))?;
    (template.name.starts_with("read_held_by_id") && parameter == "id")
        .then_some(Completing::Titles)
}

/// The read a completion comes from, where in its answer the values are (the array under
/// `data`), and which field of each item.
pub fn source(completing: Completing) -> (&'static str, &'static str, &'static str) {
    match completing {
        Completing::Titles => ("read_held", "holdings", "id"),
        Completing::Services => ("read_status", "services", "id"),
        Completing::Forms => ("read_forms", "forms", "id"),
    }
}

/// The values of `field` in the items of the array `array` of an answer's data, that start with
/// what was typed (ignoring case), at most the protocol's hundred, and how many there were.
pub fn completion(reply: &Reply, array: &str, field: &str, typed: &str) -> CompletionInfo {
    let typed = typed.to_lowercase();
    let mut values: Vec<String> = match &reply.body {
        Body::Envelope(envelope) => envelope
            .pointer(&format!("/data/{array}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|item| item.get(field)?.as_str())
            .filter(|value| !value.chars().any(is_hidden))
            .filter(|value| value.to_lowercase().starts_with(&typed))
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    values.dedup();
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let mut info = CompletionInfo::default();
    info.has_more = Some(total > values.len());
    info.total = u32::try_from(total).ok();
    info.values = values;
    info
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::LeftOut;
    use serde_json::json;

    fn reply(data: Value) -> Reply {
        Reply {
            status: 200,
            body: Body::Envelope(json!({"api_version": 1, "kind": "held", "data": data})),
            left_out: LeftOut::default(),
        }
    }

    #[test]
    fn completions_narrow_by_what_was_typed_and_stop_at_a_hundred() {
        let holdings: Vec<Value> = (0..150)
            .map(|at| json!({"id": format!("ttl-{at:03}")}))
            .chain([json!({"id": "other"}), json!({"id": "ttl-\u{200b}hidden"})])
            .collect();
        let answer = reply(json!({"holdings": holdings}));
        let all = completion(&answer, "holdings", "id", "");
        assert_eq!(all.values.len(), 100);
        assert_eq!(
            all.total,
            Some(151),
            "a value with a hidden character is never offered"
        );
        assert_eq!(all.has_more, Some(true));
        let narrowed = completion(&answer, "holdings", "id", "TTL-14");
        assert_eq!(
            narrowed.values,
            [
                "ttl-140", "ttl-141", "ttl-142", "ttl-143", "ttl-144", "ttl-145", "ttl-146",
                "ttl-147", "ttl-148", "ttl-149"
            ]
        );
        assert_eq!(narrowed.has_more, Some(false));
    }

    #[test]
    fn a_prompt_renders_with_the_words_its_arguments_add_and_refuses_others() {
        let prompt = catalogue::PROMPTS
            .iter()
            .find(|prompt| prompt.name == "why_stuck")
            .expect("the words file's prompt");
        let given = json!({"title": "Arrival\u{202e}", "service": "  "});
        let result = rendered(prompt, given.as_object()).expect("renders");
        let text = serde_json::to_value(&result.messages[0].content).expect("json")["text"]
            .as_str()
            .expect("text")
            .to_owned();
        assert!(text.starts_with(prompt.text));
        assert!(
            text.ends_with("Look first at this title: Arrival."),
            "{text}"
        );
        let unknown = json!({"tool": "restart"});
        assert_eq!(
            rendered(prompt, unknown.as_object()).err(),
            Some(ArgumentFault::NotTaken("tool".into()))
        );
        let long = json!({"title": "x".repeat(201)});
        assert_eq!(
            rendered(prompt, long.as_object()).err(),
            Some(ArgumentFault::TooLong("title".into(), LONGEST_VALUE))
        );
    }

    #[test]
    fn the_library_templates_complete_title_ids() {
        assert_eq!(
            completing_parameter("lemonfiber://read/held/{id}", "id"),
            Some(Completing::Titles)
        );
        assert_eq!(
            completing_parameter("lemonfiber://read/held/{id}", "name"),
            None
        );
        assert_eq!(completing_parameter("lemonfiber://read/status", "id"), None);
    }
}
