//! Real reverse proxies in front of `lemonfiber-mcp http` for a test, each run from the recipe
//! docs/http.md gives for it: Debian's Caddy (its own internal authority for the public side) and
//! Debian's nginx (a test authority's certificate). Each forwards over TLS to the server, checking
//! the server's certificate against the file it is given. Both are stopped when the test ends.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::process::{Child, Command};

use super::debian;
use super::demo::{Scratch, collected, stop_gracefully};
use super::http_server::fresh_dir;
use super::pki::{TestAuthority, free_port, served_fingerprint, trusting};

/// The name clients reach every proxy by in these tests; the recipes say `mcp.example.net`.
pub const PUBLIC_NAME: &str = "localhost";

/// The placeholders of a recipe, and what a test puts in their place.
pub struct Placing<'a> {
    pub public_port: u16,
    /// Where the server listens: `127.0.0.1:9443` in the recipes.
    pub upstream: SocketAddr,
    /// The file the proxy checks the server's certificate against.
    pub server_certificate: &'a Path,
}

impl Placing<'_> {
    /// The recipe, with the server's address and certificate, and `public` for the public name.
    fn fill(&self, recipe: &str, public: &str) -> String {
        recipe
            .replace(
                "/var/lib/lemonfiber-mcp/http/server-certificate.pem",
                &self.server_certificate.display().to_string(),
            )
            .replace("127.0.0.1:9443", &self.upstream.to_string())
            .replace("mcp.example.net", public)
    }
}

/// The recipe docs/http.md gives in its block fenced as `language`.
pub fn recipe(language: &str) -> String {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/http.md"))
        .expect("docs/http.md");
    let fence = format!("```{language}\n");
    let start = docs
        .find(&fence)
        .unwrap_or_else(|| panic!("docs/http.md has a {language} recipe"))
        + fence.len();
    let length = docs[start..].find("```").expect("the recipe ends");
    docs[start..start + length].to_owned()
}

/// A proxy running from its recipe, at `https://localhost:<port>`.
pub struct Proxy {
    child: Child,
    pub port: u16,
    /// The root a client checks the proxy's certificate against.
    pub root_pem: String,
    pub root_file: PathBuf,
    stderr: Arc<Mutex<String>>,
    folder: Scratch,
}

impl Proxy {
    /// The public MCP URL clients use through it.
    pub fn url(&self) -> String {
        format!("https://{PUBLIC_NAME}:{}/mcp", self.port)
    }

    /// A client that checks the proxy's certificate and connects from `from` (any 127.x address
    /// is this machine, so tests can be several clients).
    pub fn client_from(&self, from: IpAddr) -> reqwest::Client {
        reqwest::Client::builder()
            .tls_backend_preconfigured(trusting(&self.root_pem))
            .resolve(PUBLIC_NAME, SocketAddr::from(([127, 0, 0, 1], self.port)))
            .local_address(from)
            .no_proxy()
            .build()
            .expect("an HTTPS client")
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr buffer").clone()
    }

    /// Debian's Caddy from the recipe, its public side signed by its own internal authority, on
    /// `public_port` of 127.0.0.1.
    pub async fn caddy(placing: &Placing<'_>) -> Proxy {
        debian::installed(
            &["caddy"],
            &["caddy"],
            "the proxy tests need Debian's caddy",
        );
        let folder = Scratch::at(fresh_dir("caddy"));
        std::fs::create_dir_all(&*folder).expect("caddy folder");
        let public = format!("{PUBLIC_NAME}:{}", placing.public_port);
        let site = placing.fill(&recipe("caddyfile"), &public).replacen(
            "{\n",
            "{\n\tbind 127.0.0.1\n\ttls internal\n",
            1,
        );
        // A test's Caddy keeps everything in its folder, trusts nothing on the machine's behalf,
        // and listens nowhere but where it is told.
        let config = format!(
            "{{\n\tadmin off\n\tskip_install_trust\n\tauto_https disable_redirects\n\
             \thttp_port {}\n\thttps_port {}\n\tstorage file_system {}\n\tlog {{\n\t\tlevel ERROR\n\t}}\n}}\n\n{site}",
            free_port(),
            placing.public_port,
            folder.join("data").display(),
        );
        let caddyfile = folder.join("Caddyfile");
        std::fs::write(&caddyfile, config).expect("Caddyfile written");
        let child = Command::new("caddy")
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&caddyfile)
            .env_clear()
            .env("HOME", &*folder)
            .env("XDG_DATA_HOME", folder.join("xdg-data"))
            .env("XDG_CONFIG_HOME", folder.join("xdg-config"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("caddy starts");
        let root_file = folder.join("data/pki/authorities/local/root.crt");
        Proxy::running(child, placing.public_port, root_file, folder).await
    }

    /// Debian's nginx from the recipe, its public side signed by a test authority, on
    /// `public_port` of 127.0.0.1.
    pub async fn nginx(placing: &Placing<'_>) -> Proxy {
        debian::installed(
            &["nginx"],
            &["nginx"],
            "the proxy tests need Debian's nginx",
        );
        let folder = Scratch::at(fresh_dir("nginx"));
        std::fs::create_dir_all(folder.join("logs")).expect("nginx folder");
        let authority = TestAuthority::new("nginx test root");
        let root_file = folder.join("root.pem");
        authority.write(&root_file);
        let (chain, key) = (folder.join("public.pem"), folder.join("public-key.pem"));
        authority
            .leaf(&[PUBLIC_NAME], Duration::from_secs(3600))
            .write(&chain, &key);
        let recipe = recipe("nginx")
            .replace(
                "/etc/ssl/mcp.example.net/fullchain.pem",
                &chain.display().to_string(),
            )
            .replace(
                "/etc/ssl/mcp.example.net/privkey.pem",
                &key.display().to_string(),
            )
            .replace(
                "listen 443 ssl;",
                &format!("listen 127.0.0.1:{} ssl;", placing.public_port),
            );
        let server = placing.fill(&recipe, PUBLIC_NAME);
        // A test's nginx runs in the foreground as the test's own user, with every file it
        // writes in its folder.
        let folder_text = folder.display();
        let config = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {folder_text}/nginx.pid;\n\
             error_log stderr warn;\nevents {{\n    worker_connections 256;\n}}\nhttp {{\n\
             \x20   access_log off;\n    client_body_temp_path {folder_text}/body;\n\
             \x20   proxy_temp_path {folder_text}/proxy;\n    fastcgi_temp_path {folder_text}/fastcgi;\n\
             \x20   uwsgi_temp_path {folder_text}/uwsgi;\n    scgi_temp_path {folder_text}/scgi;\n{server}}}\n"
        );
        let file = folder.join("nginx.conf");
        std::fs::write(&file, config).expect("nginx.conf written");
        let child = Command::new("nginx")
            .args(["-e", "stderr", "-p"])
            .arg(&*folder)
            .arg("-c")
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("nginx starts");
        Proxy::running(child, placing.public_port, root_file, folder).await
    }

    /// The proxy `child`, once it serves on `port` under the root it writes to `root_file`.
    async fn running(mut child: Child, port: u16, root_file: PathBuf, folder: Scratch) -> Proxy {
        let stderr = collected(child.stderr.take().expect("stderr"), true);
        let root_pem = ready(&mut child, port, &root_file).await;
        Proxy {
            child,
            port,
            root_pem,
            root_file,
            stderr,
            folder,
        }
    }
}

/// Waits, a bounded time, until the proxy has written its root and completes a handshake under
/// it (Caddy has its own certificate issued only after it starts listening): the root.
async fn ready(child: &mut Child, port: u16, root_file: &Path) -> String {
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    for _ in 0..300 {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the proxy stopped at once: {status}");
        }
        if let Ok(root) = std::fs::read_to_string(root_file)
            && served_fingerprint(address, PUBLIC_NAME, &root).is_ok()
        {
            return root;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the proxy did not serve its certificate within 15 seconds");
}

impl Drop for Proxy {
    fn drop(&mut self) {
        stop_gracefully(&mut self.child);
    }
}
