//! How `lemonfiber-mcp stdio` takes its settings: refusals name the setting and never its value.

use std::process::Output;

const BINARY: &str = env!("CARGO_BIN_EXE_lemonfiber-mcp");

fn stdio(env: &[(&str, &str)], args: &[&str]) -> Output {
    std::process::Command::new(BINARY)
        .arg("stdio")
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the binary runs")
}

const KEY: &str = "lfk_0123456789abcdef0123456789abcdef";

#[test]
fn refuses_a_remote_stack_without_a_pin_f13_r7() {
    let output = stdio(
        &[
            ("LEMONFIBER_ADDRESS", "https://stack.example.net:8443"),
            ("LEMONFIBER_KEY", KEY),
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("LEMONFIBER_PIN"), "{stderr}");
    assert!(!stderr.contains(KEY));
    assert!(
        output.stdout.is_empty(),
        "nothing is said on the MCP channel"
    );
}

#[test]
fn refuses_two_keys_a_bad_key_and_no_key_naming_the_setting() {
    let key_file = std::env::temp_dir().join(format!("lemonfiber-test-key-{}", std::process::id()));
    std::fs::write(&key_file, format!("{KEY}\n")).expect("write key file");
    std::fs::set_permissions(
        &key_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .expect("open to others");
    let key_file = key_file.display().to_string();
    let pin = "ab".repeat(32);
    let pin = pin.as_str();
    for (env, named) in [
        (
            vec![
                ("LEMONFIBER_ADDRESS", "127.0.0.1:9"),
                ("LEMONFIBER_PIN", pin),
                ("LEMONFIBER_KEY", KEY),
                ("LEMONFIBER_KEY_FILE", key_file.as_str()),
            ],
            "LEMONFIBER_KEY_FILE",
        ),
        (
            vec![
                ("LEMONFIBER_ADDRESS", "127.0.0.1:9"),
                ("LEMONFIBER_PIN", pin),
                ("LEMONFIBER_KEY", "operator-password-hunter2"),
            ],
            "LEMONFIBER_KEY",
        ),
        (
            vec![
                ("LEMONFIBER_ADDRESS", "127.0.0.1:9"),
                ("LEMONFIBER_PIN", pin),
            ],
            "LEMONFIBER_KEY_FILE",
        ),
        (vec![("LEMONFIBER_KEY", KEY)], "LEMONFIBER_ADDRESS"),
        // A stack on this machine needs its pin too: anything on the machine could answer there.
        (
            vec![
                ("LEMONFIBER_ADDRESS", "127.0.0.1:9"),
                ("LEMONFIBER_KEY", KEY),
            ],
            "LEMONFIBER_PIN",
        ),
        // A key file others can read is refused, as ssh refuses such a key (the file written
        // above has the umask's 0644).
        (
            vec![
                ("LEMONFIBER_ADDRESS", "127.0.0.1:9"),
                ("LEMONFIBER_PIN", pin),
                ("LEMONFIBER_KEY_FILE", key_file.as_str()),
            ],
            "chmod 600",
        ),
        (
            vec![
                ("LEMONFIBER_ADDRESS", "stack.example.net:1"),
                ("LEMONFIBER_KEY", KEY),
                ("LEMONFIBER_PIN", "not-a-pin-secret"),
            ],
            "LEMONFIBER_PIN",
        ),
    ] {
        let output = stdio(&env, &[]);
        assert_eq!(output.status.code(), Some(2), "{env:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(named), "{stderr}");
        for secret in [KEY, "hunter2", "not-a-pin-secret"] {
            assert!(!stderr.contains(secret), "{stderr}");
        }
    }
    let _ = std::fs::remove_file(key_file);
}

#[test]
fn takes_no_key_on_the_command_line() {
    let output = stdio(&[("LEMONFIBER_ADDRESS", "127.0.0.1:9")], &["--key", KEY]);
    assert_eq!(output.status.code(), Some(2));
    let help = std::process::Command::new(BINARY)
        .args(["stdio", "--help"])
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        !help.contains("--key") && !help.contains("--password"),
        "{help}"
    );
}
