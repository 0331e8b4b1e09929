//! The generator (`src/contract.rs`) on small contracts of the tests' own, in memory: what it
//! makes of a read, a household read, an action and its rehearsal, and how it names what is
//! missing (F13-R2). The slow test that builds a copy of the whole project is `generation.rs`.

#[allow(dead_code)]
#[path = "../src/contract.rs"]
mod contract;

use quote::{ToTokens, quote};
use serde_json::{Value, json};

/// A contract of one read, `/api/status`, and whatever `more` adds to its paths.
fn contract_with(more: Value) -> String {
    let answer = json!({
        "2XX": {"description": "An envelope.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Envelope"}}}},
        "default": {"description": "A refusal.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Envelope"}}}}
    });
    let mut paths = json!({
        "/api/status": {"get": {"operationId": "read_status", "tags": ["read"], "responses": answer.clone(),
                                "x-lemonfiber-kinds": []}},
        "/api/jobs/{job}": {"get": {"operationId": "read_job", "tags": ["jobs"],
            "parameters": [{"name": "job", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": answer.clone()}}
    });
    for (path, item) in more.as_object().into_iter().flatten() {
        let mut item = item.clone();
        for operation in ["get", "post"] {
            if let Some(operation) = item.get_mut(operation) {
                operation["responses"] = answer.clone();
            }
        }
        paths[path] = item;
    }
    json!({
        "openapi": "3.0.3",
        "info": {"title": "a small contract", "version": "1"},
        "paths": paths,
        "x-lemonfiber-refusals": {
            "ADMIT-4": {"status": 403, "name": "NOT_ADMITTED"},
            "LIFE-10": {"status": 400, "name": "RESTART_MOVED"}
        },
        "components": {"schemas": {
            "Envelope": {"type": "object", "properties": {"kind": {"type": "string"}, "data": {}}},
            "RestartArguments": {"type": "object", "properties": {
                "offer": {"type": "string", "nullable": true, "default": null},
                "dry_run": {"type": "boolean", "default": false}}}
        }}
    })
    .to_string()
}

/// Words for the server's own tools and for `/api/status`, and whatever `more` adds.
fn words_with(more: &str) -> String {
    format!(
        r#"[parameters]
offer = "The offer."

[notes]
unconfigured = "Not turned on."
unconfigured_household = "Not switched on."

[tools.connection]
title = "Connection"
operator = "Where this server stands with the stack."

[tools.job]
title = "A job"
operator = "Where a job stands."
[tools.job.parameters]
job = "The job."

[tools.read_status]
title = "Status"
operator = "How the stack is."
{more}"#
    )
}

fn problems_of(contract: &str, words: &str) -> Vec<String> {
    match contract::generate(contract, words) {
        Ok(_) => Vec::new(),
        Err(problems) => problems,
    }
}

#[test]
fn a_read_becomes_a_tool_and_a_resource() {
    let generated = contract::generate(&contract_with(json!({})), &words_with(""))
        .unwrap_or_else(|problems| panic!("{problems:#?}"));
    assert!(generated.catalogue.contains(r#"name: "read_status""#));
    assert!(
        generated
            .catalogue
            .contains(r#""lemonfiber://read/status""#)
    );
    assert!(generated.sdk_calls.contains("client.read_status()"));
    assert!(generated.sdk.contains("pub fn read_status"));
}

/// Every JSON answer goes through the door's own parse (`stack::reply::parsed`), which its unit
/// tests hold to progenitor's, and never through progenitor's beside it.
#[test]
fn the_sdk_parses_answers_with_the_doors_own_parse() {
    let generated = contract::generate(&contract_with(json!({})), &words_with(""))
        .unwrap_or_else(|problems| panic!("{problems:#?}"));
    assert!(generated.sdk.contains(contract::OWN_PARSE));
    assert!(!generated.sdk.contains("ResponseValue::from_response"));
}

#[test]
fn a_read_gained_without_words_is_named() {
    let contract = contract_with(json!({
        "/api/stuck": {"get": {"operationId": "read_stuck", "tags": ["read"], "x-lemonfiber-kinds": []}}
    }));
    assert_eq!(
        problems_of(&contract, &words_with("")),
        ["tool read_stuck (from /api/stuck) has no words in src/words.toml"]
    );
}

#[test]
fn words_for_no_tool_and_a_household_read_without_household_words_are_named() {
    let contract = contract_with(json!({
        "/api/held": {"get": {"operationId": "read_held", "tags": ["read"], "x-lemonfiber-kinds": [],
                              "x-lemonfiber-household": true}}
    }));
    let words = words_with(
        "[tools.read_held]\ntitle = \"Library\"\noperator = \"What is held.\"\n\n[tools.read_gone]\ntitle = \"Gone\"\noperator = \"Nothing.\"\n",
    );
    let problems = problems_of(&contract, &words);
    assert!(
        problems.iter().any(|problem| problem
            == "tool read_held is a household read (x-lemonfiber-household) and has no household words in src/words.toml"),
        "{problems:#?}"
    );
    assert!(
        problems.iter().any(|problem| problem
            == "src/words.toml has words for read_gone, which the contract makes no tool for"),
        "{problems:#?}"
    );
}

#[test]
fn a_key_callable_action_with_a_rehearsal_becomes_two_tools_with_its_flags() {
    let contract = contract_with(json!({
        "/api/actions/restart": {"post": {
            "operationId": "act_restart", "tags": ["action"],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RestartArguments"}}}},
            "x-lemonfiber-key-callable": true, "x-lemonfiber-disturbs": true, "x-lemonfiber-rehearsal": true,
            "x-lemonfiber-idempotent": true, "x-lemonfiber-stale-offer": "LIFE-10", "x-lemonfiber-consent": ["offer"]
        }}
    }));
    let words = words_with(
        "[tools.rehearse_restart]\ntitle = \"Rehearse a restart\"\noperator = \"What a restart would do.\"\n\n[tools.restart]\ntitle = \"Restart\"\noperator = \"Restarts.\"\n",
    );
    let generated =
        contract::generate(&contract, &words).unwrap_or_else(|problems| panic!("{problems:#?}"));
    let restart = generated
        .catalogue
        .split("ToolSpec {")
        .find(|tool| tool.contains(r#"name: "restart""#))
        .expect("the act tool");
    assert!(
        restart
            .split_whitespace()
            .collect::<String>()
            .contains("read_only:false,destructive:true,idempotent:true"),
        "{restart}"
    );
    assert!(generated.catalogue.contains(r#"name: "rehearse_restart""#));
    assert!(generated.sdk_calls.contains("client.act_restart()"));
    assert!(
        generated
            .catalogue
            .split_whitespace()
            .collect::<String>()
            .contains("Action::Restart=>Some(refusals::RESTART_MOVED)"),
        "the stale offer's code is the registry's"
    );

    let unregistered = contract.replace(r#""LIFE-10":{"#, r#""LIFE-11":{"#);
    assert!(
        problems_of(&unregistered, &words).contains(
            &"/api/actions/restart: x-lemonfiber-stale-offer LIFE-10 is not in x-lemonfiber-refusals"
                .to_owned()
        ),
        "a stale-offer code the registry lacks is named"
    );

    let without_flag = contract.replace(r#""x-lemonfiber-disturbs":true,"#, "");
    assert!(
        problems_of(&without_flag, &words)
            .iter()
            .any(|problem| problem.contains("x-lemonfiber-disturbs")),
        "a missing flag is named"
    );
}

/// F13-R2: an action a key may not call is no tool, however it is described.
#[test]
fn an_action_a_key_may_not_call_is_no_tool() {
    let contract = contract_with(json!({
        "/api/actions/restart": {"post": {
            "operationId": "act_restart", "tags": ["action"],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RestartArguments"}}}},
            "x-lemonfiber-key-callable": false, "x-lemonfiber-disturbs": true, "x-lemonfiber-rehearsal": true,
            "x-lemonfiber-idempotent": true, "x-lemonfiber-stale-offer": "LIFE-10", "x-lemonfiber-consent": ["offer"]
        }}
    }));
    let generated = contract::generate(&contract, &words_with(""))
        .unwrap_or_else(|problems| panic!("{problems:#?}"));
    assert!(!generated.catalogue.contains(r#"name: "restart""#));
    assert!(!generated.catalogue.contains("rehearse_restart"));
    assert!(generated.catalogue.contains(r#"name: "read_status""#));
}

#[test]
fn the_catalogue_is_a_rust_file_holding_each_tool() {
    let generated = contract::generate(&contract_with(json!({})), &words_with(""))
        .unwrap_or_else(|problems| panic!("{problems:#?}"));
    let catalogue = syn::parse_file(&generated.catalogue)
        .unwrap_or_else(|error| panic!("{error}\n{}", generated.catalogue));
    let tools = catalogue
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Static(tools) if tools.ident == "TOOLS" => Some(&*tools.expr),
            _ => None,
        })
        .expect("the TOOLS static");
    let syn::Expr::Reference(syn::ExprReference { expr: tools, .. }) = tools else {
        panic!("TOOLS is not a reference: {}", tools.to_token_stream());
    };
    let syn::Expr::Array(tools) = &**tools else {
        panic!("TOOLS is not an array: {}", tools.to_token_stream());
    };
    let status = tools
        .elems
        .iter()
        .find(|tool| field(tool, "name") == quote!("read_status").to_string())
        .expect("the read_status tool");
    assert_eq!(
        field(status, "operation"),
        quote!(Operation::Read(Read::Status)).to_string()
    );
    assert_eq!(
        field(status, "resource"),
        quote!(Some("lemonfiber://read/status")).to_string()
    );
    let reads = catalogue
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Enum(reads) if reads.ident == "Read" => Some(reads),
            _ => None,
        })
        .expect("the Read enum");
    assert!(reads.variants.iter().any(|read| read.ident == "Status"));
    assert!(
        generated.catalogue.starts_with("// Generated by build.rs"),
        "the note leads the file, as a plain comment an include! accepts"
    );
    syn::parse_file(&generated.sdk_calls)
        .unwrap_or_else(|error| panic!("{error}\n{}", generated.sdk_calls));
}

/// A field of a generated `ToolSpec`, as token text.
fn field(tool: &syn::Expr, name: &str) -> String {
    let syn::Expr::Struct(tool) = tool else {
        return String::new();
    };
    tool.fields
        .iter()
        .find(|field| matches!(&field.member, syn::Member::Named(member) if member == name))
        .map(|field| field.expr.to_token_stream().to_string())
        .unwrap_or_default()
}

#[test]
fn two_reads_that_would_be_one_variant_are_named() {
    let contract = contract_with(json!({
        "/api/disk2": {"get": {"operationId": "read_disk2", "tags": ["read"], "x-lemonfiber-kinds": []}},
        "/api/disk-2": {"get": {"operationId": "read_disk_2", "tags": ["read"], "x-lemonfiber-kinds": []}}
    }));
    let words = words_with(
        "[tools.read_disk2]\ntitle = \"Disk 2\"\noperator = \"The second disk.\"\n\n[tools.read_disk_2]\ntitle = \"Disk 2\"\noperator = \"The second disk.\"\n",
    );
    let problems = problems_of(&contract, &words);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    for named in [
        "read_disk2 (from /api/disk2)",
        "read_disk_2 (from /api/disk-2)",
        "Read::Disk2",
        "change one's path in contract/openapi.json",
    ] {
        assert!(problems[0].contains(named), "{named} in {problems:#?}");
    }
}

#[test]
fn two_tools_of_one_name_and_two_actions_that_would_be_one_variant_are_named() {
    let action = |operation_id: &str| {
        json!({"post": {
            "operationId": operation_id, "tags": ["action"],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RestartArguments"}}}},
            "x-lemonfiber-key-callable": true, "x-lemonfiber-disturbs": true, "x-lemonfiber-rehearsal": false,
            "x-lemonfiber-idempotent": true, "x-lemonfiber-consent": []
        }})
    };
    let contract = contract_with(json!({
        "/api/actions/restart": action("act_restart"),
        "/api/actions/restart-now": action("restart"),
        "/api/actions/connection": action("act_connection")
    }));
    let words = words_with(
        "[tools.restart]\ntitle = \"Restart\"\noperator = \"Restarts.\"\n\n[tools.restart_now]\ntitle = \"Restart now\"\noperator = \"Restarts now.\"\n",
    );
    let problems = problems_of(&contract, &words);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(
        problems.iter().any(|problem| problem
            == "tools from /api/actions/connection and from (the server's own) are both named connection: change one in contract/openapi.json so each tool has a name of its own"),
        "{problems:#?}"
    );
    assert!(
        problems.iter().any(|problem| [
            "restart (from /api/actions/restart)",
            "restart_now (from /api/actions/restart-now)",
            "Action::Restart",
            "change one's operationId in contract/openapi.json",
        ]
        .iter()
        .all(|named| problem.contains(named))),
        "{problems:#?}"
    );
}

#[test]
fn a_prompt_becomes_part_of_the_catalogue_and_its_faults_are_named() {
    let prompt = |audience: &str, uses: &str, adds: &str, complete: &str| {
        format!(
            "[prompts.healthy]\ntitle = \"Healthy?\"\naudience = \"{audience}\"\ndescription = \"A look.\"\n\
             text = \"Is it healthy?\"\nuses = [{uses}]\n[prompts.healthy.arguments.service]\n\
             description = \"A service.\"\nadds = \"{adds}\"\ncomplete = \"{complete}\"\n"
        )
    };
    let good = prompt(
        "operator",
        "\"read_status\"",
        "Look at {value}.",
        "services",
    );
    let generated = contract::generate(&contract_with(json!({})), &words_with(&good))
        .unwrap_or_else(|problems| panic!("{problems:#?}"));
    assert!(generated.catalogue.contains(r#"name: "healthy""#));
    assert!(generated.catalogue.contains("Completing::Services"));

    let bad = prompt(
        "household",
        "\"read_status\", \"read_gone\"",
        "Look.",
        "songs",
    );
    let problems = problems_of(&contract_with(json!({})), &words_with(&bad));
    for expected in [
        "prompt healthy uses read_gone, which is no tool",
        "prompt healthy is for the household, and uses read_status, which a member is never offered",
        "prompt healthy argument service needs a description, and words that add {value}",
        "prompt healthy argument service completes songs: it may complete titles, services or forms",
    ] {
        assert!(
            problems.iter().any(|problem| problem == expected),
            "{expected}: {problems:#?}"
        );
    }
}
