//! What the server says of a request it does not carry out as sent: a message it cannot read, a
//! method, tool, prompt or resource it does not offer, and arguments it does not take.

use crate::catalogue::{ArgumentProblem, Fault, PromptArgumentFault};

pub fn path_outside_template() -> &'static str {
    "Nothing was sent to the stack: the request would not have gone to the path its operation names, with each \
     identifier one whole segment. An identifier is letters, digits, '-', '_' and '.'."
}

pub fn parameters_of_the_wrong_shape() -> &'static str {
    "The parameters are not of the shape this method takes; nothing was done. Check them against the protocol \
     (a tool's arguments, for one, are an object)."
}

pub fn no_such_method() -> &'static str {
    "This server does not serve that method."
}

/// A line over stdio that is not JSON, answered as JSON-RPC answers a parse error.
pub fn line_not_json() -> &'static str {
    "Parse error: the line is not JSON. Send one JSON-RPC message a line."
}

/// A line over stdio that is JSON but no JSON-RPC message this server reads.
pub fn line_not_a_message() -> &'static str {
    "Invalid Request: the line is not a JSON-RPC 2.0 message."
}

/// A line over stdio longer than the server reads; `most` in bytes.
pub fn line_too_long(most: usize) -> String {
    format!(
        "Invalid Request: the line is longer than {} MiB, so it was discarded unread. Send less in one message.",
        most / (1024 * 1024)
    )
}

/// A call over stdio past the number the server has under way at once.
pub fn too_many_calls(most: usize) -> String {
    format!(
        "This server already has {most} calls under way, the most it takes at once; nothing was done. Wait for \
         one to finish, then call again."
    )
}

pub fn no_such_tool() -> &'static str {
    "There is no tool by that name on this server; list the tools to see what this key is offered."
}

pub fn not_offered(tool: &str) -> String {
    format!("{tool} is not offered to this key: the stack's capabilities for it do not admit it.")
}

pub fn too_many_watches(per_key: usize, in_all: usize) -> String {
    format!(
        "This resource is not watched: a key may watch at most {per_key} resources at once, and this server at \
         most {in_all}. Unsubscribe from one first."
    )
}

pub fn no_such_prompt() -> &'static str {
    "This server offers no such prompt to this key; list the prompts to see the ones it does."
}

/// What a completion asked of that this key is not offered; what the client named, already
/// cleaned and shortened, or `None` where nothing of it could be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotCompletable {
    Prompt(Option<String>),
    Template(Option<String>),
    /// An argument the prompt does not take, the prompt by this server's own name.
    Argument {
        prompt: String,
        argument: Option<String>,
    },
    /// A parameter the template does not have, the template as this server lists it.
    Parameter {
        template: String,
        parameter: Option<String>,
    },
    /// A kind of reference other than a prompt or a resource template.
    Reference,
}

pub fn not_completable(what: &NotCompletable) -> String {
    let named = |name: &Option<String>| match name {
        Some(name) => format!(" \u{201C}{name}\u{201D}"),
        None => " by that name".to_owned(),
    };
    match what {
        NotCompletable::Prompt(name) => format!(
            "This server offers no prompt{} to this key; list the prompts to see the ones it does.",
            named(name)
        ),
        NotCompletable::Template(uri) => format!(
            "This server offers no resource template{} to this key; list the resource templates to \
             see the ones it does.",
            named(uri)
        ),
        NotCompletable::Argument { prompt, argument } => format!(
            "The prompt {prompt} takes no argument{}; list the prompts to see the ones it takes.",
            named(argument)
        ),
        NotCompletable::Parameter {
            template,
            parameter,
        } => format!(
            "The resource template {template} has no parameter{}; only those in braces in it \
             complete.",
            named(parameter)
        ),
        NotCompletable::Reference => {
            "This server completes only a prompt's arguments and a resource template's parameters."
                .to_owned()
        }
    }
}

pub fn prompt_argument(prompt: &str, fault: &PromptArgumentFault) -> String {
    match fault {
        PromptArgumentFault::NotTaken(name) => match plain_argument_name(name) {
            Some(name) => format!("The prompt {prompt} takes no argument {name}."),
            None => format!("The prompt {prompt} takes no argument of that name."),
        },
        PromptArgumentFault::NotText(name) => {
            format!("The prompt {prompt}'s argument {name} must be text.")
        }
        PromptArgumentFault::TooLong(name, most) => {
            format!("The prompt {prompt}'s argument {name} is longer than {most} characters.")
        }
    }
}

pub fn no_such_resource() -> &'static str {
    "There is no resource at that address on this server; list the resources to see what this key is offered."
}

/// An argument's name as the caller sent it, when it is plain enough to repeat: the caller is
/// untrusted, and only a name shaped like the ones this server takes cannot carry words of its own.
fn plain_argument_name(name: &str) -> Option<&str> {
    let plain = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    plain.then_some(name)
}

pub fn argument(problem: &ArgumentProblem, tool: &str) -> String {
    let name = match plain_argument_name(&problem.name) {
        Some(name) => format!("The argument {name}"),
        None => "An argument".to_owned(),
    };
    let what = match problem.fault {
        Fault::NotOffered => format!("is not one {tool} takes"),
        Fault::Missing => "is required".to_owned(),
        Fault::Empty => "must not be empty".to_owned(),
        Fault::NotText => "must be a string".to_owned(),
        Fault::NotTextList => "must be a list of strings".to_owned(),
        Fault::NotFlag => "must be true or false".to_owned(),
        Fault::NotCount => format!(
            "must be a whole number, from 0 to {}",
            crate::stack::parameters::COUNT_LIMIT
        ),
        Fault::TooLong => "is longer than any value the stack takes".to_owned(),
        Fault::TooMany => "lists more values than the stack takes".to_owned(),
        Fault::NotAnIdentifier => {
            "must be an identifier: letters, digits, '-', '_' and '.', as one whole name (not '.' or '..')"
                .to_owned()
        }
    };
    format!(
        "{name} {what}; nothing was sent to the stack. Check the tool's input schema and call it again."
    )
}
