//! The project's contract (`contract/openapi.json`) against the core's facts
//! (`contract/core-facts.json`, taken from the core's published contract): every read with its
//! parameters, their types and its kinds; every key-callable action with its flags, arguments and
//! consent; the refusal registry; the kind names. Each difference is named.

use serde_json::{Value, json};

const CONTRACT: &str = include_str!("../contract/openapi.json");
const FACTS: &str = include_str!("../contract/core-facts.json");

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("JSON")
}

/// The JSON type a contract schema gives a value, as the facts write it.
fn type_of(schema: &Value) -> String {
    schema["type"].as_str().unwrap_or("any").to_owned()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item.as_str().map(str::to_owned))
        .collect()
}

/// Every way `contract` differs from `facts`.
fn differences(contract: &Value, facts: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if contract["info"]["version"] != json!(facts["api_version"].to_string()) {
        found.push(format!(
            "the contract's version is {}, the core's api_version {}",
            contract["info"]["version"], facts["api_version"]
        ));
    }
    reads(contract, facts, &mut found);
    actions(contract, facts, &mut found);
    refusals(contract, facts, &mut found);
    kinds(contract, facts, &mut found);
    found
}

fn reads(contract: &Value, facts: &Value, found: &mut Vec<String>) {
    let paths = contract["paths"].as_object().expect("paths");
    let ours: Vec<&String> = paths
        .iter()
        .filter(|(_, item)| strings(&item["get"]["tags"]).contains(&"read".to_owned()))
        .map(|(path, _)| path)
        .collect();
    let theirs: Vec<&Value> = facts["reads"].as_array().expect("reads").iter().collect();
    for path in &ours {
        if !theirs.iter().any(|read| read["path"] == json!(path)) {
            found.push(format!(
                "read {path} is in the contract and not among the core's reads"
            ));
        }
    }
    for read in theirs {
        let path = read["path"].as_str().expect("a path");
        let Some(get) = paths.get(path).map(|item| &item["get"]) else {
            found.push(format!(
                "the core's read {path} is missing from the contract"
            ));
            continue;
        };
        let parameters = get["parameters"].as_array().cloned().unwrap_or_default();
        let core_parameters = read["parameters"].as_array().expect("parameters");
        for fact in core_parameters {
            let name = fact["name"].as_str().expect("a name");
            let Some(ours) = parameters.iter().find(|p| p["name"] == fact["name"]) else {
                found.push(format!("{path}: the core's parameter {name} is missing"));
                continue;
            };
            if ours["in"] != fact["in"] {
                found.push(format!(
                    "{path}: parameter {name} is in {}, the core's in {}",
                    ours["in"], fact["in"]
                ));
            }
            let schema = &ours["schema"];
            let repeatable = type_of(schema) == "array";
            let ours_type = if repeatable {
                type_of(&schema["items"])
            } else {
                type_of(schema)
            };
            if ours_type != fact["type"].as_str().unwrap_or_default() {
                found.push(format!(
                    "{path}: parameter {name} is typed {ours_type}, the core's {}",
                    fact["type"]
                ));
            }
            if json!(repeatable) != fact["repeatable"] {
                found.push(format!(
                    "{path}: parameter {name} repeatable is {repeatable}, the core's {}",
                    fact["repeatable"]
                ));
            }
        }
        for ours in &parameters {
            if !core_parameters
                .iter()
                .any(|fact| fact["name"] == ours["name"])
            {
                found.push(format!(
                    "{path}: parameter {} is not one the core declares",
                    ours["name"]
                ));
            }
        }
        let kinds = strings(&get["x-lemonfiber-kinds"]);
        if kinds != strings(&read["kinds"]) {
            found.push(format!(
                "{path}: answers kinds {kinds:?}, the core's {:?}",
                strings(&read["kinds"])
            ));
        }
        let answers_json = get["responses"]["2XX"]["content"]
            .get("application/json")
            .is_some();
        if answers_json && !kinds.is_empty() {
            let answered = answered_kinds(contract, get);
            if answered != kinds {
                found.push(format!(
                    "{path}: its answer's schema is of kinds {answered:?}, not {kinds:?}"
                ));
            }
        }
        let is_file = read["file"] == json!(true);
        let lines = kinds.contains(&"log".to_owned());
        if is_file == (answers_json || lines) {
            found.push(format!(
                "{path}: the core says file is {is_file}, the contract answers {}",
                if answers_json { "JSON" } else { "no JSON" }
            ));
        }
    }
}

/// The kinds a read's success schema names: the envelopes it refers to, one or any of several.
fn answered_kinds(contract: &Value, get: &Value) -> Vec<String> {
    let schema = &get["responses"]["2XX"]["content"]["application/json"]["schema"];
    let references = match schema.get("anyOf") {
        Some(any) => any.as_array().cloned().unwrap_or_default(),
        None => vec![schema.clone()],
    };
    references
        .iter()
        .filter_map(|reference| reference["$ref"].as_str())
        .filter_map(|reference| {
            let name = reference.trim_start_matches("#/components/schemas/");
            contract["components"]["schemas"][name]
                .pointer("/properties/kind/enum/0")?
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

fn actions(contract: &Value, facts: &Value, found: &mut Vec<String>) {
    let paths = contract["paths"].as_object().expect("paths");
    let callable: Vec<(&String, &Value)> = paths
        .iter()
        .filter(|(_, item)| item["post"]["x-lemonfiber-key-callable"] == json!(true))
        .map(|(path, item)| (path, &item["post"]))
        .collect();
    let theirs = facts["actions"].as_array().expect("actions");
    for (path, _) in &callable {
        let name = path.trim_start_matches("/api/actions/");
        if !theirs.iter().any(|action| action["name"] == json!(name)) {
            found.push(format!(
                "action {name} is key-callable in the contract, not in the core"
            ));
        }
    }
    for fact in theirs {
        let name = fact["name"].as_str().expect("a name");
        let Some((_, post)) = callable
            .iter()
            .find(|(path, _)| path.trim_start_matches("/api/actions/") == name)
        else {
            found.push(format!("the core's key-callable action {name} is missing"));
            continue;
        };
        for (flag, extension) in [
            ("disturbs", "x-lemonfiber-disturbs"),
            ("rehearsal", "x-lemonfiber-rehearsal"),
            ("idempotent", "x-lemonfiber-idempotent"),
            ("moved", "x-lemonfiber-stale-offer"),
            ("consent", "x-lemonfiber-consent"),
        ] {
            if post[extension] != fact[flag] {
                found.push(format!(
                    "action {name}: {extension} is {}, the core's {flag} {}",
                    post[extension], fact[flag]
                ));
            }
        }
        let reference = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .unwrap_or_default();
        let body = &contract["components"]["schemas"]
            [reference.trim_start_matches("#/components/schemas/")]["properties"];
        let declared: Vec<(&String, &Value)> = body
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, schema)| schema.get("x-lemonfiber-extension").is_none())
            .collect();
        let arguments = fact["arguments"].as_array().expect("arguments");
        for argument in arguments {
            let argument_name = argument["name"].as_str().expect("a name");
            let Some((_, schema)) = declared.iter().find(|(n, _)| *n == argument_name) else {
                found.push(format!(
                    "action {name}: the core's argument {argument_name} is missing"
                ));
                continue;
            };
            let nullable = schema["nullable"] == json!(true);
            let same = type_of(schema) == argument["type"].as_str().unwrap_or_default()
                && json!(nullable) == argument["nullable"]
                && schema.get("default").unwrap_or(&Value::Null) == &argument["default"]
                && argument
                    .get("items")
                    .is_none_or(|items| json!(type_of(&schema["items"])) == *items);
            if !same {
                found.push(format!(
                    "action {name}: argument {argument_name} is {} (nullable {nullable}, default {}), the core's {} (nullable {}, default {})",
                    type_of(schema),
                    schema.get("default").unwrap_or(&Value::Null),
                    argument["type"],
                    argument["nullable"],
                    argument["default"]
                ));
            }
        }
        for (argument_name, _) in &declared {
            if !arguments
                .iter()
                .any(|argument| argument["name"] == json!(argument_name))
            {
                found.push(format!(
                    "action {name}: argument {argument_name} is not the core's; mark it x-lemonfiber-extension if it is the project's"
                ));
            }
        }
    }
}

fn refusals(contract: &Value, facts: &Value, found: &mut Vec<String>) {
    let ours = contract["x-lemonfiber-refusals"]
        .as_object()
        .expect("x-lemonfiber-refusals");
    let theirs = facts["refusals"].as_object().expect("refusals");
    for (code, status) in theirs {
        match ours.get(code) {
            None => found.push(format!("refusal {code} is missing from the contract")),
            Some(refusal) if refusal["status"] != *status => found.push(format!(
                "refusal {code} has status {}, the core's {status}",
                refusal["status"]
            )),
            Some(_) => {}
        }
    }
    for code in ours.keys().filter(|code| !theirs.contains_key(*code)) {
        found.push(format!("refusal {code} is not in the core's registry"));
    }
    for path in contract["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, item)| item)
    {
        if let Some(code) = path["post"]["x-lemonfiber-stale-offer"].as_str()
            && !theirs.contains_key(code)
        {
            found.push(format!(
                "stale-offer code {code} is not in the core's registry"
            ));
        }
    }
}

fn kinds(contract: &Value, facts: &Value, found: &mut Vec<String>) {
    let theirs = strings(&facts["kinds"]);
    let rendered: Vec<String> = contract["components"]["schemas"]
        .as_object()
        .expect("schemas")
        .values()
        .filter(|schema| schema["x-lemonfiber-from-kind"] == json!(true))
        .filter_map(|schema| schema.pointer("/properties/kind/enum/0"))
        .filter_map(|kind| kind.as_str().map(str::to_owned))
        .collect();
    for kind in &rendered {
        if !theirs.contains(kind) {
            found.push(format!(
                "kind {kind} is rendered in the contract and is not one of the core's"
            ));
        }
    }
    for read in facts["reads"].as_array().into_iter().flatten() {
        for kind in strings(&read["kinds"]) {
            if !rendered.contains(&kind) {
                found.push(format!(
                    "kind {kind}, which {} answers, has no schema in the contract",
                    read["path"]
                ));
            }
        }
    }
}

#[test]
fn the_contract_agrees_with_the_cores_published_facts() {
    let found = differences(&parse(CONTRACT), &parse(FACTS));
    assert!(
        found.is_empty(),
        "the contract has drifted from the core:\n{}",
        found.join("\n")
    );
}

/// A fact changed, by what, and the difference that must be named for it.
type Change = (&'static str, fn(&mut Value), &'static str);

/// Each kind of fact, changed, is named: the check would catch the core moving.
#[test]
fn a_changed_fact_is_named() {
    let contract = parse(CONTRACT);
    let facts = parse(FACTS);
    let changes: [Change; 8] = [
        (
            "a parameter's type",
            |f| f["reads"][7]["parameters"][2]["type"] = json!("string"),
            "/api/held: parameter most is typed integer, the core's \"string\"",
        ),
        (
            "a new read",
            |f| {
                f["reads"].as_array_mut().expect("reads").push(
                    json!({"path": "/api/future", "parameters": [], "kinds": [], "file": false}),
                )
            },
            "the core's read /api/future is missing",
        ),
        (
            "a read's kinds",
            |f| f["reads"][0]["kinds"] = json!(["version", "preview"]),
            "/api/version: answers kinds [\"version\"], the core's [\"version\", \"preview\"]",
        ),
        (
            "an action's flag",
            |f| f["actions"][0]["idempotent"] = json!(false),
            "action restart: x-lemonfiber-idempotent is true, the core's idempotent false",
        ),
        (
            "an action's stale code",
            |f| f["actions"][2]["moved"] = json!("UPDATE-6"),
            "action update: x-lemonfiber-stale-offer is \"UPDATE-5\", the core's moved \"UPDATE-6\"",
        ),
        (
            "an argument's default",
            |f| f["actions"][2]["arguments"][0]["default"] = json!(true),
            "action update: argument wait is boolean",
        ),
        (
            "a refusal's status",
            |f| f["refusals"]["ADMIT-11"] = json!(401),
            "refusal ADMIT-11 has status 403, the core's 401",
        ),
        (
            "a kind's name",
            |f| f["kinds"] = json!([]),
            "kind held is rendered in the contract and is not one of the core's",
        ),
    ];
    for (what, change, named) in changes {
        let mut changed = facts.clone();
        change(&mut changed);
        let found = differences(&contract, &changed);
        assert!(
            found.iter().any(|difference| difference.contains(named)),
            "changing {what} was not named as {named:?}; found: {found:#?}"
        );
    }
}
