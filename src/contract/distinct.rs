//! Each tool, read and action named apart: a name or variant the generated code holds twice
//! would not build, or would leave the assistant one of two tools.

use std::collections::BTreeMap;

use super::tools::{ContractTool, Role};
use super::{CONTRACT, Problems};

/// Refuses, naming both, two tools with one name, two reads with one `Read` variant and two
/// actions with one `Action` variant.
pub fn distinct_names(tools: &[ContractTool]) -> Result<(), Problems> {
    let mut problems = Vec::new();
    let mut names = BTreeMap::new();
    let mut reads = BTreeMap::new();
    let mut actions = BTreeMap::new();
    for tool in tools {
        let taken = claim(&mut names, tool.name.clone(), tool);
        if let Some(first) = taken {
            problems.push(format!(
                "tools from {} and from {} are both named {}: change one in {CONTRACT} so each tool has a name of its own",
                first.path, tool.path, tool.name
            ));
        }
        let (claimed, enumeration, variant, source) = match &tool.role {
            // A read's variant is made from its name: a clash of both is said once, as the name's.
            Role::Read(_) if taken.is_some() => continue,
            Role::Read(read) => (&mut reads, "Read", read, "path"),
            Role::Act(action) => (&mut actions, "Action", action, "operationId"),
            Role::Rehearse(_) | Role::Job | Role::Connection => continue,
        };
        if let Some(first) = claim(claimed, variant.clone(), tool) {
            problems.push(format!(
                "{} (from {}) and {} (from {}) would both be {enumeration}::{variant} in the generated code: change one's {source} in {CONTRACT}",
                first.name, first.path, tool.name, tool.path
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Claims a name for a tool: answers the tool that claimed it first, if one did.
fn claim<'a>(
    claimed: &mut BTreeMap<String, &'a ContractTool>,
    name: String,
    tool: &'a ContractTool,
) -> Option<&'a ContractTool> {
    match claimed.entry(name) {
        std::collections::btree_map::Entry::Occupied(first) => Some(*first.get()),
        std::collections::btree_map::Entry::Vacant(free) => {
            free.insert(tool);
            None
        }
    }
}
