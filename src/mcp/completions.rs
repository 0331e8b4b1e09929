//! `completion/complete`: what a request asks to complete, found among what this key is offered,
//! and the values read for it. A prompt, a resource template or an argument the key is not
//! offered is invalid params naming which (issue 29): an empty list would read as "nothing
//! matches" and hide a client's mistake. What the client named is said back only cleaned and
//! short, as a question shows the stack's names.

use rmcp::ErrorData as McpError;
use rmcp::model::{CompleteRequestParams, CompleteResult, Reference};

use super::arguments;
use super::prompts::{self, Source};
use super::question;
use crate::access::offer::Offer;
use crate::access::standing::Position;
use crate::answer::sentences::{self, NotCompletable};
use crate::catalogue::{self, Operation};
use crate::redact::Secrets;
use crate::stack::{Failure, Stack};

/// Where the values of what `request` asks to complete come from, if anywhere, among what `offer`
/// (the key's, as far as is known) offers; what it is not offered is refused. No offer known
/// offers nothing, as the lists then list nothing.
pub fn source(
    request: &CompleteRequestParams,
    offer: Option<&Offer>,
    withheld: &Secrets,
) -> Result<Option<Source>, NotCompletable> {
    let argument = request.argument.name.as_str();
    let shown = |text: &str| question::shown(text, withheld);
    match &request.r#ref {
        Reference::Prompt(named) => {
            let prompt = offer
                .and_then(|offer| prompts::offered(offer).find(|prompt| prompt.name == named.name))
                .ok_or_else(|| NotCompletable::Prompt(shown(&named.name)))?;
            let taken = prompt
                .arguments
                .iter()
                .find(|taken| taken.name == argument)
                .ok_or_else(|| NotCompletable::Argument {
                    prompt: prompt.name.to_owned(),
                    argument: shown(argument),
                })?;
            Ok(taken.complete.map(prompts::source))
        }
        Reference::Resource(template) => {
            let listed = offer
                .into_iter()
                .flat_map(Offer::resource_templates)
                .find(|listed| listed.uri_template == template.uri)
                .ok_or_else(|| NotCompletable::Template(shown(&template.uri)))?;
            if !listed.uri_template.contains(&format!("{{{argument}}}")) {
                return Err(NotCompletable::Parameter {
                    template: listed.uri_template.clone(),
                    parameter: shown(argument),
                });
            }
            Ok(prompts::completing_parameter(&template.uri, argument))
        }
        _ => Err(NotCompletable::Reference),
    }
}

/// The answer to `request`: what the stack answers this key (connected now) for its source, and
/// nothing where there is none or the stack cannot answer now.
pub async fn complete(
    stack: &Stack,
    position: &Position,
    request: &CompleteRequestParams,
    failure_name: fn(&Failure) -> &'static str,
) -> Result<CompleteResult, McpError> {
    let mut completed = CompleteResult::default();
    let source = source(request, position.offered(), stack.withheld())
        .map_err(|refused| McpError::invalid_params(sentences::not_completable(&refused), None))?;
    let (Some(source), Position::Connected(offer)) = (source, position) else {
        return Ok(completed);
    };
    let Some(tool) = catalogue::find(source.read).filter(|tool| offer.admits(tool)) else {
        return Ok(completed);
    };
    let Operation::Read(read) = tool.operation else {
        return Ok(completed);
    };
    let Ok(arguments) = arguments::check(tool.parameters_for(offer.audience), None) else {
        return Ok(completed);
    };
    match stack.read(read, &arguments).await {
        Ok(reply) => {
            completed.completion =
                prompts::completion(&reply, &source, &request.argument.value, stack.withheld());
        }
        Err(failure) => tracing::info!(
            failure = failure_name(&failure),
            "the stack did not answer a completion"
        ),
    }
    Ok(completed)
}
