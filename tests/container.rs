//! The container image (issue 13): its Containerfile runs the HTTP mode as a user who is not
//! root, with a health check the image can run, the port it serves on exposed, a state volume,
//! and no key or secret copied in; and `lemonfiber-mcp health`, the check itself, against a real
//! server. (hadolint and actionlint run in .ci/run; the build is the release workflow's.)

#[path = "support/demo.rs"]
mod demo;
#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/https.rs"]
mod https;

use demo::{BINARY, DemoStack};
use http_server::http_server;

fn containerfile() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Containerfile"))
        .expect("Containerfile")
}

/// The instructions of the final stage, joined across continued lines.
fn runtime_stage(text: &str) -> Vec<String> {
    let joined = text.replace("\\\n", " ");
    let instructions: Vec<String> = joined
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    let last_from = instructions
        .iter()
        .rposition(|line| line.starts_with("FROM "))
        .expect("a FROM");
    instructions[last_from..].to_vec()
}

#[test]
fn the_image_runs_http_as_a_user_with_a_health_check_and_no_secret() {
    let text = containerfile();
    let runtime = runtime_stage(&text);
    let find = |word: &str| {
        runtime
            .iter()
            .filter(|line| line.starts_with(word))
            .cloned()
            .collect::<Vec<_>>()
    };

    assert!(
        runtime[0].contains("distroless"),
        "a minimal runtime stage: {}",
        runtime[0]
    );
    let user = find("USER ");
    assert_eq!(user.len(), 1);
    let who = user[0]
        .trim_start_matches("USER ")
        .split(':')
        .next()
        .expect("a user")
        .to_owned();
    assert!(who != "root" && who != "0", "not root: {who}");

    let health = find("HEALTHCHECK ");
    assert_eq!(health.len(), 1);
    assert!(
        health[0].contains("CMD [\"/usr/local/bin/lemonfiber-mcp\", \"health\"]"),
        "{}",
        health[0]
    );

    let listen = runtime
        .iter()
        .find_map(|line| line.split("LEMONFIBER_LISTEN=").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("LEMONFIBER_LISTEN is set");
    let port = listen.rsplit(':').next().expect("a port");
    assert_eq!(
        find("EXPOSE "),
        vec![format!("EXPOSE {port}")],
        "the port served on is exposed"
    );
    assert!(
        runtime
            .iter()
            .any(|line| line.starts_with("VOLUME ") && line.contains("/var/lib/lemonfiber-mcp"))
    );
    assert!(
        runtime
            .iter()
            .any(|line| line.contains("LEMONFIBER_STATE=/var/lib/lemonfiber-mcp"))
    );
    assert_eq!(find("CMD "), vec!["CMD [\"http\"]".to_owned()]);

    // No key, pin or secret in the image: nothing set, and nothing copied but the sources and the
    // program, built from them by default, or a release's own static binaries (issue 30).
    assert!(
        text.contains("\nARG BINARY=source\n"),
        "built from the sources by default"
    );
    for line in text
        .replace("\\\n", " ")
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
    {
        for secret in [
            "LEMONFIBER_KEY",
            "LEMONFIBER_PIN=",
            "lfk_",
            "PRIVATE KEY",
            "certs",
        ] {
            assert!(!line.contains(secret), "{secret} in: {line}");
        }
        if let Some(copied) = line.trim().strip_prefix("COPY ") {
            let allowed = [
                "Cargo.toml Cargo.lock build.rs ./",
                "contract ./contract",
                "src ./src",
                "released/${TARGETARCH}/lemonfiber-mcp /out/lemonfiber-mcp",
                "released/state /out/state",
            ];
            let from_build = copied.starts_with("--from=binary ") && copied.contains(" /out/");
            assert!(
                allowed.contains(&copied) || from_build,
                "copies only sources and the program: {line}"
            );
        }
    }
    let ignored = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.dockerignore"))
        .expect(".dockerignore");
    assert!(
        ignored.lines().any(|line| line.trim() == "*"),
        "the build context is only what is named"
    );
}

#[tokio::test]
async fn the_health_check_answers_for_a_running_server_and_fails_without_one() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[]).await;
    let listen = server.address().to_string();
    let probe = |listen: &str| {
        std::process::Command::new(BINARY)
            .arg("health")
            .env_clear()
            .env("LEMONFIBER_LISTEN", listen)
            .output()
            .expect("it runs")
    };
    let healthy = probe(&listen);
    assert!(
        healthy.status.success(),
        "{}",
        String::from_utf8_lossy(&healthy.stderr)
    );
    let wildcard = format!("0.0.0.0:{}", server.address().port());
    assert!(
        probe(&wildcard).status.success(),
        "a server on every address is asked on this machine"
    );
    drop(server);
    let gone = probe(&listen);
    assert_eq!(gone.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&gone.stderr).contains("nothing answered on port"));
}

/// Issue 27: `/health` answers only a served name at a served port, so the check names the
/// server as its settings do: the first of `LEMONFIBER_NAMES`, at the port it listens on.
#[tokio::test]
async fn the_health_check_names_the_server_as_its_settings_do() {
    let demo = DemoStack::start().await;
    let server = http_server(&demo, &[("LEMONFIBER_NAMES", "mcp.home.arpa,localhost")]).await;
    let listen = server.address().to_string();
    let probe = |names: Option<&str>| {
        let mut command = std::process::Command::new(BINARY);
        command
            .arg("health")
            .env_clear()
            .env("LEMONFIBER_LISTEN", &listen);
        if let Some(names) = names {
            command.env("LEMONFIBER_NAMES", names);
        }
        command.output().expect("it runs")
    };
    let named = probe(Some("mcp.home.arpa,localhost"));
    assert!(
        named.status.success(),
        "{}",
        String::from_utf8_lossy(&named.stderr)
    );
    let elsewhere = probe(Some("nas.home.arpa"));
    assert_eq!(elsewhere.status.code(), Some(1), "a name it does not serve");
    assert!(String::from_utf8_lossy(&elsewhere.stderr).contains("did not answer 200"));
}
