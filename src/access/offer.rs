//! What a key is offered: the tools and resources its capabilities admit, in the words of its
//! audience (F13-R3).

use std::sync::Arc;

use rmcp::model::{Resource, ResourceTemplate, Tool};

use crate::catalogue::{self, Audience, Offered, Operation, ToolSpec, UNCONFIGURED_NOTE};
use crate::stack::{Capabilities, CapabilityState, Scope};

#[derive(Debug, Clone)]
pub struct Offer {
    capabilities: Arc<Capabilities>,
    pub audience: Audience,
}

impl Offer {
    pub fn new(capabilities: Arc<Capabilities>) -> Offer {
        let audience = match capabilities.scope {
            Scope::Member => Audience::Household,
            _ => Audience::Operator,
        };
        Offer {
            capabilities,
            audience,
        }
    }

    pub fn scope(&self) -> Scope {
        self.capabilities.scope
    }

    /// A key is offered a tool whose path the stack marks available or unconfigured (a member
    /// only one with household words), and the job tool whenever it is offered an action. The
    /// connection tool is for before the stack answers.
    pub fn admits(&self, tool: &ToolSpec) -> bool {
        if self.capabilities.scope == Scope::Unknown {
            return false;
        }
        match tool.operation {
            Operation::Connection => false,
            Operation::Job => catalogue::TOOLS
                .iter()
                .any(|other| matches!(other.operation, Operation::Act(_)) && self.admits(other)),
            _ => {
                (self.audience == Audience::Operator || tool.household_words.is_some())
                    && matches!(
                        self.capabilities.state_of(tool.capability),
                        Some(CapabilityState::Available | CapabilityState::Unconfigured)
                    )
            }
        }
    }

    /// Whether this key is offered `tool` and the stack says it answers now, not only once it is
    /// set up: what a question to the person may read beside the plan.
    pub fn answers(&self, tool: &ToolSpec) -> bool {
        self.admits(tool)
            && self.capabilities.state_of(tool.capability) == Some(CapabilityState::Available)
    }

    pub fn tools(&self) -> impl Iterator<Item = &'static ToolSpec> + '_ {
        catalogue::TOOLS.iter().filter(|tool| self.admits(tool))
    }

    /// A tool's description for this key, with a note when the stack must be set up first.
    pub fn description(&self, tool: &ToolSpec) -> String {
        let description = tool.description(self.audience);
        if self.capabilities.state_of(tool.capability) != Some(CapabilityState::Unconfigured) {
            return description.to_owned();
        }
        let note = match self.audience {
            Audience::Operator => UNCONFIGURED_NOTE.0,
            Audience::Household => UNCONFIGURED_NOTE.1,
        };
        format!("{description} {note}")
    }

    pub fn listed_tools(&self) -> Vec<Tool> {
        if self.capabilities.scope == Scope::Unknown {
            return before_the_stack_answers();
        }
        self.tools()
            .map(|tool| tool.tool(self.audience, self.description(tool)))
            .collect()
    }

    pub fn resources(&self) -> Vec<Resource> {
        self.offered_resources()
            .filter_map(|offered| match offered {
                Offered::Resource(resource) => Some(resource),
                Offered::Template(_) => None,
            })
            .collect()
    }

    pub fn resource_templates(&self) -> Vec<ResourceTemplate> {
        self.offered_resources()
            .filter_map(|offered| match offered {
                Offered::Template(template) => Some(template),
                Offered::Resource(_) => None,
            })
            .collect()
    }

    fn offered_resources(&self) -> impl Iterator<Item = Offered> + '_ {
        self.tools()
            .filter_map(|tool| tool.resource(self.description(tool)))
    }
}

/// The tools listed before the stack has answered: the connection tool alone.
pub fn before_the_stack_answers() -> Vec<Tool> {
    catalogue::TOOLS
        .iter()
        .filter(|tool| tool.operation == Operation::Connection)
        .map(|tool| {
            tool.tool(
                Audience::Operator,
                tool.description(Audience::Operator).to_owned(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(scope: Scope) -> Offer {
        let states = catalogue::TOOLS
            .iter()
            .map(|tool| (tool.capability.to_owned(), CapabilityState::Available))
            .collect();
        Offer::new(Arc::new(Capabilities { states, scope }))
    }

    /// A scope the server does not know fails closed: the connection tool alone, never the
    /// operator's tools, however much its capabilities say it may use (issue 10).
    #[test]
    fn a_scope_the_server_does_not_know_is_offered_only_the_connection_tool() {
        let unknown = offer(Scope::Unknown);
        assert!(catalogue::TOOLS.iter().all(|tool| !unknown.admits(tool)));
        let listed: Vec<String> = unknown
            .listed_tools()
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect();
        assert_eq!(listed, ["connection"]);
        assert!(unknown.resources().is_empty());
        for known in [Scope::Act, Scope::Unsaid] {
            assert!(offer(known).listed_tools().len() > 40, "{known:?}");
        }
        assert_eq!(offer(Scope::Member).audience, Audience::Household);
    }
}
