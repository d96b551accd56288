//! A real browser for the page's tests: Debian's chromium, headless,
//! driven through chromedriver (WebDriver) with fantoccini in the tests.
//! `.ci/run` installs both; a machine without them fails these tests with
//! the packages to install.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::json;

/// Debian's chromium.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Debian's chromedriver.
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A chromedriver child on a free loopback port.
pub struct Driver {
    child: Child,
    /// The WebDriver URL it listens on.
    pub url: String,
    /// The browser's profile, removed with the driver.
    pub profile: tempfile::TempDir,
}

impl Driver {
    /// Starts chromedriver and waits for the line that says it listens.
    pub fn start() -> Self {
        for program in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                std::path::Path::new(program).exists(),
                "{program} is missing: install Debian's chromium and chromium-driver (.ci/run does)"
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let mut child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let stdout = child.stdout.take().expect("chromedriver's stdout");
        let mut lines = BufReader::new(stdout).lines();
        let started = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.contains("started successfully"));
        assert!(started, "chromedriver did not start on port {port}");
        // Keep draining so the pipe never fills.
        std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
        Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            profile: tempfile::tempdir().expect("a profile folder"),
        }
    }

    /// Capabilities for headless chromium, light or dark.
    pub fn capabilities(&self, dark: bool) -> serde_json::Map<String, serde_json::Value> {
        let mut args = vec![
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-dev-shm-usage".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--window-size=1200,900".into(),
            format!("--user-data-dir={}", self.profile.path().display()),
        ];
        if dark {
            args.push("--force-dark-mode".into());
            args.push("--blink-settings=preferredColorScheme=0".into());
        }
        let caps = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
        });
        caps.as_object().cloned().unwrap_or_default()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the tests save their screenshots: `target/screenshots/`.
pub fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("screenshots");
    std::fs::create_dir_all(&dir).expect("the screenshot folder");
    dir
}
