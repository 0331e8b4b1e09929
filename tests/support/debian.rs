//! Debian packages the tests run for real (Pebble, Chromium, Caddy, nginx), installed by the tests
//! themselves, once a test process, when the machine lacks them.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::process::Stdio;
use std::sync::Mutex;

/// Installs `packages` unless every one of `programs` is on the PATH; `needing` says who needs
/// them when they cannot be had ("the ACME tests need Debian's Pebble").
pub fn installed(programs: &[&str], packages: &[&str], needing: &str) {
    static INSTALLED: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut done = INSTALLED.lock().expect("the installed list");
    let wanted = packages.join(" ");
    if done.contains(&wanted) {
        return;
    }
    let found = |program: &&str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .is_ok_and(|found| found.status.success())
    };
    if !programs.iter().all(found) {
        let status = std::process::Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status();
        assert!(
            status.is_ok_and(|status| status.success()),
            "{needing}: apt-get install -y {wanted}"
        );
    }
    done.push(wanted);
}
