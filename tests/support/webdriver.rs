//! Debian's Chromium, driven headless through ChromeDriver's W3C WebDriver interface, with script
//! turned off: a person's browser for the sign-in page's tests. Installed by the tests themselves
//! when the machine has none.

// Each test crate uses its own part of the support.
#![allow(dead_code)]

use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use super::debian;
use super::demo::Scratch;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Installs Debian's Chromium and ChromeDriver, once, if they are not here.
fn installed() {
    debian::installed(
        &[CHROMIUM, CHROMEDRIVER],
        &["chromium", "chromium-driver"],
        "the browser tests need Debian's Chromium",
    );
}

/// A headless Chromium without script, `width` by `height`, that trusts the certificate whose
/// public key has `spki_sha256` (base64) as a pinned certificate, and nothing else it was not
/// built to trust.
pub struct Browser {
    driver: Child,
    http: reqwest::Client,
    session: String,
    base: String,
    /// The browser's temporary files and profile, removed once it has stopped.
    _temporary: Scratch,
}

impl Browser {
    pub async fn start(spki_sha256: &str, width: u32, height: u32) -> Browser {
        Self::started(spki_sha256, width, height, None).await
    }

    /// As `start`, with Chromium's own emulation of a phone whose screen is `width` by
    /// `height` CSS pixels (at two device pixels each): the page gets exactly that screen,
    /// which a headless window (500 pixels wide at the least, its frame counted) does not give.
    pub async fn phone(spki_sha256: &str, width: u32, height: u32) -> Browser {
        let emulation = json!({"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2.0, "touch": true}});
        Self::started(spki_sha256, width, height, Some(emulation)).await
    }

    async fn started(
        spki_sha256: &str,
        width: u32,
        height: u32,
        mobile_emulation: Option<Value>,
    ) -> Browser {
        installed();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let temporary = Scratch::at(std::env::temp_dir().join(format!(
            "lemonfiber-browser-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        )));
        std::fs::create_dir_all(&*temporary).expect("a folder for the browser");
        // A group of its own, so that the browser ChromeDriver starts is stopped with it however
        // the test ends; and its temporary files in a folder of the test's.
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .process_group(0)
            .env("TMPDIR", &*temporary)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver starts");
        let base = format!("http://127.0.0.1:{port}");
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("a client");
        let mut ready = false;
        for _ in 0..200 {
            let status = http.get(format!("{base}/status")).send().await;
            if let Ok(status) = status
                && let Ok(status) = status.json::<Value>().await
                && status["value"]["ready"] == true
            {
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(ready, "chromedriver is ready within ten seconds");
        let mut asked = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    format!("--window-size={width},{height}"),
                    format!("--ignore-certificate-errors-spki-list={spki_sha256}"),
                ],
                "prefs": {"profile.managed_default_content_settings.javascript": 2},
            },
        }}});
        if let Some(emulation) = mobile_emulation {
            asked["capabilities"]["alwaysMatch"]["goog:chromeOptions"]["mobileEmulation"] =
                emulation;
        }
        let started: Value = http
            .post(format!("{base}/session"))
            .json(&asked)
            .send()
            .await
            .expect("a session")
            .json()
            .await
            .expect("JSON");
        let session = started["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("a browser session: {started}"))
            .to_owned();
        Browser {
            driver,
            http,
            session,
            base,
            _temporary: temporary,
        }
    }

    async fn command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let mut request = self.http.request(method, url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request
            .send()
            .await
            .expect("chromedriver answers")
            .json()
            .await
            .expect("JSON");
        answer["value"].clone()
    }

    pub async fn go_to(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", Some(json!({"url": url})))
            .await;
    }

    pub async fn url(&self) -> String {
        let url = self.command(reqwest::Method::GET, "/url", None).await;
        url.as_str().expect("a URL").to_owned()
    }

    pub async fn title(&self) -> String {
        let title = self.command(reqwest::Method::GET, "/title", None).await;
        title.as_str().expect("a title").to_owned()
    }

    pub async fn source(&self) -> String {
        let source = self.command(reqwest::Method::GET, "/source", None).await;
        source.as_str().expect("the page").to_owned()
    }

    /// The PNG of what the window shows.
    pub async fn screenshot(&self) -> Vec<u8> {
        let shot = self
            .command(reqwest::Method::GET, "/screenshot", None)
            .await;
        base64::engine::general_purpose::STANDARD
            .decode(shot.as_str().expect("base64"))
            .expect("a PNG")
    }

    /// The element `css` selects, waiting a bounded time for it to be there.
    pub async fn find(&self, css: &str) -> String {
        for _ in 0..100 {
            let found = self
                .command(
                    reqwest::Method::POST,
                    "/element",
                    Some(json!({"using": "css selector", "value": css})),
                )
                .await;
            if let Some(element) = found[ELEMENT].as_str() {
                return element.to_owned();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no {css} on the page: {}", self.source().await);
    }

    /// Types `text` into the element `css` selects, as a person's keyboard would.
    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.find(css).await;
        self.command(
            reqwest::Method::POST,
            &format!("/element/{element}/value"),
            Some(json!({"text": text})),
        )
        .await;
    }

    /// Clicks the element `css` selects, as a person's pointer would.
    pub async fn click(&self, css: &str) {
        let element = self.find(css).await;
        self.command(
            reqwest::Method::POST,
            &format!("/element/{element}/click"),
            Some(json!({})),
        )
        .await;
    }

    /// What `script` (a function body) returns, run in the page by the driver itself: the
    /// page's own script stays off, but the driver can still measure what the browser laid out.
    pub async fn measure(&self, script: &str) -> Value {
        self.command(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
        .await
    }

    /// Ends the session, which closes the browser; ChromeDriver is stopped when `self` goes.
    pub async fn stop(self) {
        self.command(reqwest::Method::DELETE, "", None).await;
    }
}

impl Drop for Browser {
    /// Asks ChromeDriver and everything it started to stop (SIGTERM to its group), waits a
    /// bounded time, and only then kills what is left.
    fn drop(&mut self) {
        let Some(group) = self.driver.id() else {
            return;
        };
        let signal = |signal: &str| {
            let _ = std::process::Command::new("kill")
                .args([signal, "--", &format!("-{group}")])
                .status();
        };
        signal("-TERM");
        for _ in 0..100 {
            if matches!(self.driver.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // The browser's own processes may outlive ChromeDriver by a moment.
        std::thread::sleep(Duration::from_millis(200));
        signal("-KILL");
    }
}
