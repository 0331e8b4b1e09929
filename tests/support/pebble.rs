//! Debian's Pebble, a real ACME server, on loopback for a test: `pebble` issuing, and
//! `pebble-challtestsrv` as the DNS it resolves names with (every name is 127.0.0.1, and a DNS
//! hook sets TXT records through its management port). Both are stopped when the test ends.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::process::{Child, Command};

use super::debian;
use super::demo::{Scratch, eventually, stop_gracefully};
use super::http_server::fresh_dir;
use super::pki::{TestAuthority, free_port};

pub struct Pebble {
    pebble: Child,
    dns: Child,
    pub directory: String,
    /// The root Pebble's own HTTPS is signed by, for `LEMONFIBER_ACME_ROOTS`.
    pub directory_roots: PathBuf,
    management: String,
    /// Where challtestsrv takes TXT records.
    pub dns_management: String,
    directory_authority: String,
    pub folder: Scratch,
}

/// Where the ports of one Pebble are, chosen by the test: the authority validates HTTP-01 and
/// TLS-ALPN-01 on these ports of 127.0.0.1.
pub struct Ports {
    pub http_01: u16,
    pub tls_alpn_01: u16,
}

/// Installs Debian's Pebble if it is not on this machine.
fn installed() {
    debian::installed(
        &["pebble", "pebble-challtestsrv"],
        &["pebble"],
        "the ACME tests need Debian's Pebble",
    );
}

impl Pebble {
    /// Pebble issuing certificates that live `life_seconds`, validating on `ports`.
    pub async fn start(ports: &Ports, life_seconds: u64) -> Pebble {
        installed();
        let folder = Scratch::at(fresh_dir("pebble"));
        std::fs::create_dir_all(&*folder).expect("pebble folder");
        let authority = TestAuthority::new("pebble test root");
        let directory_roots = folder.join("directory-root.pem");
        authority.write(&directory_roots);
        authority
            .leaf(&["127.0.0.1", "localhost"], Duration::from_secs(3600))
            .write(&folder.join("pebble.pem"), &folder.join("pebble-key.pem"));
        let (listen, manage, dns, dns_manage) =
            (free_port(), free_port(), free_port(), free_port());
        let config = json!({"pebble": {
            "listenAddress": format!("127.0.0.1:{listen}"),
            "managementListenAddress": format!("127.0.0.1:{manage}"),
            "certificate": folder.join("pebble.pem"),
            "privateKey": folder.join("pebble-key.pem"),
            "httpPort": ports.http_01,
            "tlsPort": ports.tls_alpn_01,
            "ocspResponderURL": "",
            "externalAccountBindingRequired": false,
            "certificateValidityPeriod": life_seconds,
        }});
        let config_file = folder.join("pebble-config.json");
        std::fs::write(&config_file, config.to_string()).expect("config written");

        let dns_child = Command::new("pebble-challtestsrv")
            .args([
                "-defaultIPv4",
                "127.0.0.1",
                "-defaultIPv6",
                "",
                "-dns01",
                &format!("127.0.0.1:{dns}"),
                "-management",
                &format!("127.0.0.1:{dns_manage}"),
                "-http01",
                "",
                "-https01",
                "",
                "-tlsalpn01",
                "",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("pebble-challtestsrv starts");
        let pebble = Command::new("pebble")
            .args([
                "-config",
                &config_file.display().to_string(),
                "-dnsserver",
                &format!("127.0.0.1:{dns}"),
            ])
            // No random waits or nonce refusals: the test is about this server, not Pebble's dice.
            .env("PEBBLE_VA_NOSLEEP", "1")
            .env("PEBBLE_WFE_NONCEREJECT", "0")
            .env("PEBBLE_AUTHZREUSE", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("pebble starts");
        let pebble = Pebble {
            pebble,
            dns: dns_child,
            directory: format!("https://127.0.0.1:{listen}/dir"),
            directory_roots,
            management: format!("https://127.0.0.1:{manage}"),
            dns_management: format!("http://127.0.0.1:{dns_manage}"),
            directory_authority: authority.pem.clone(),
            folder,
        };
        // Pebble opens its management port on its own, after the directory's: a test asking for
        // the issuing root as soon as the directory answers found it closed.
        let up = |port: u16| move || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
        assert!(
            eventually(up(listen)).await
                && eventually(up(manage)).await
                && eventually(up(dns_manage)).await,
            "Pebble listens"
        );
        pebble
    }

    /// Stops the authority (its DNS stays), as an authority that is down or unreachable.
    pub fn stop_authority(&mut self) {
        stop_gracefully(&mut self.pebble);
    }

    /// The root Pebble issues under, as PEM: what a client trusting Pebble trusts.
    pub async fn issuing_root(&self) -> String {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(super::pki::trusting(&self.directory_authority))
            .no_proxy()
            .build()
            .expect("a client");
        let answer = client
            .get(format!("{}/roots/0", self.management))
            .send()
            .await
            .expect("Pebble's root");
        assert!(answer.status().is_success());
        answer.text().await.expect("PEM")
    }

    /// A DNS hook for `LEMONFIBER_ACME_DNS_HOOK` that sets and clears TXT records in
    /// challtestsrv, as an operator's hook would at their DNS provider; it logs each call.
    pub fn dns_hook(&self) -> (PathBuf, PathBuf) {
        let hook = self.folder.join("dns-hook");
        let calls = self.folder.join("dns-hook-calls");
        let script = format!(
            "#!/bin/sh\nset -eu\necho \"$1 $2\" >> '{calls}'\ncase \"$1\" in\n  set) path=set-txt; body=\"{{\\\"host\\\":\\\"$2.\\\",\\\"value\\\":\\\"$3\\\"}}\" ;;\n  clear) path=clear-txt; body=\"{{\\\"host\\\":\\\"$2.\\\"}}\" ;;\n  *) exit 2 ;;\nesac\npython3 -c 'import sys, urllib.request; urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), method=\"POST\"))' '{management}/'\"$path\" \"$body\"\n",
            calls = calls.display(),
            management = self.dns_management,
        );
        std::fs::write(&hook, script).expect("hook written");
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .expect("hook executable");
        (hook, calls)
    }
}

impl Drop for Pebble {
    fn drop(&mut self) {
        stop_gracefully(&mut self.pebble);
        stop_gracefully(&mut self.dns);
    }
}

pub fn read(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap_or_default()
}
