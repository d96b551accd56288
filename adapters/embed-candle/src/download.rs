//! Model files from the hub, with a time limit on every wait: connecting, each
//! read, and the whole download. A proxy or captive network that accepts
//! connections and never answers costs one timeout, not a hung sync.
//!
//! Files land in the Hugging Face cache layout
//! (`models--org--name/snapshots/<rev>/file`), so a cache filled by earlier
//! versions or by Python's `huggingface_hub` is found without the network.
//! Each file is written beside its final name and renamed when complete: a
//! failed download leaves no partial file, and the next use tries again.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use minirag_core::cause::Cause;

use crate::error::LoadError;

/// Files a sentence-transformers model folder provides. Only the first three
/// are required; the others default to BERT mean pooling.
pub const REQUIRED: [&str; 2] = ["config.json", "tokenizer.json"];
/// Weight files, in order of preference: one is required.
pub const WEIGHTS: [&str; 2] = ["model.safetensors", "pytorch_model.bin"];
/// Files read when present.
pub const OPTIONAL: [&str; 3] = [
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
];

/// Where models come from unless HF_ENDPOINT says otherwise.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// How the hub is reached; the binary fills it from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubOptions {
    /// HF_ENDPOINT, without a trailing slash.
    pub endpoint: String,
    /// HF_TOKEN, sent as a bearer token.
    pub token: Option<String>,
    /// HF_HUB_OFFLINE: the cache only.
    pub offline: bool,
    /// Longest wait to connect or for the next bytes (HF_HUB_DOWNLOAD_TIMEOUT).
    pub stall: Duration,
    /// Longest the whole model may take.
    pub deadline: Duration,
}

impl Default for HubOptions {
    fn default() -> Self {
        Self {
            endpoint: DEFAULT_ENDPOINT.into(),
            token: None,
            offline: false,
            stall: Duration::from_secs(10),
            deadline: Duration::from_secs(30 * 60),
        }
    }
}

/// Bytes received and expected so far, readable while the download runs.
#[derive(Debug, Default)]
pub struct DownloadProgress {
    /// Bytes downloaded so far.
    pub done: AtomicU64,
    /// Bytes to download, 0 while unknown.
    pub total: AtomicU64,
}

impl DownloadProgress {
    /// Back to nothing, before another attempt.
    pub fn reset(&self) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(0, Ordering::Relaxed);
    }

    /// `(done, total)` bytes; total 0 while no file has announced its size.
    pub fn get(&self) -> (u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }
}

/// The cache folder of `name`'s files, whether or not they are there yet.
fn snapshot_dir(name: &str, cache_dir: &Path) -> PathBuf {
    let repo = cache_dir.join(format!("models--{}", name.replace('/', "--")));
    let rev = std::fs::read_to_string(repo.join("refs/main"))
        .ok()
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty() && !r.contains(['/', '\\', '.']))
        .unwrap_or_else(|| "main".into());
    repo.join("snapshots").join(rev)
}

fn has_weights(dir: &Path) -> bool {
    WEIGHTS.iter().any(|w| dir.join(w).is_file())
}

/// Whether `name` is complete in the cache (no network needed).
pub fn is_cached(name: &str, cache_dir: &Path) -> bool {
    complete(&snapshot_dir(name, cache_dir))
}

/// `name`'s folder in the cache, when it is complete there.
pub fn cached_dir(name: &str, cache_dir: &Path) -> Option<PathBuf> {
    let dir = snapshot_dir(name, cache_dir);
    complete(&dir).then_some(dir)
}

fn complete(dir: &Path) -> bool {
    REQUIRED.iter().all(|f| dir.join(f).is_file()) && has_weights(dir)
}

/// The model's folder in the cache, downloading what is missing.
pub fn fetch_model(
    name: &str,
    cache_dir: &Path,
    hub: &HubOptions,
    progress: &DownloadProgress,
) -> Result<PathBuf, LoadError> {
    let dir = snapshot_dir(name, cache_dir);
    if complete(&dir) {
        return Ok(dir);
    }
    if hub.offline {
        return Err(LoadError::Offline {
            model: name.into(),
            cache_dir: cache_dir.to_path_buf(),
        });
    }
    let fail = |reason: String, source: Option<Cause>| LoadError::Download {
        model: name.into(),
        cache_dir: cache_dir.to_path_buf(),
        reason,
        source,
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        fail(
            format!("cannot create {}: {e}", dir.display()),
            Some(Cause::new(e)),
        )
    })?;
    let client = Client::new(hub, name);
    let started = Instant::now();
    for file in REQUIRED {
        client.get_into(file, &dir, started, progress, &fail)?;
    }
    if !has_weights(&dir) {
        let mut found = false;
        for file in WEIGHTS {
            if client.get_into(file, &dir, started, progress, &fail)? {
                found = true;
                break;
            }
        }
        if !found {
            return Err(fail(
                "the repository has neither model.safetensors nor pytorch_model.bin".into(),
                None,
            ));
        }
    }
    for file in OPTIONAL {
        // Optional: their absence means BERT defaults.
        client.get_into(file, &dir, started, progress, &fail)?;
    }
    let refs = dir.parent().and_then(Path::parent).map(|r| r.join("refs"));
    if let Some(refs) = refs.filter(|r| !r.join("main").exists()) {
        let rev = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        let _ = std::fs::create_dir_all(&refs)
            .and_then(|()| std::fs::write(refs.join("main"), rev.unwrap_or_default()));
    }
    Ok(dir)
}

struct Client<'a> {
    agent: ureq::Agent,
    hub: &'a HubOptions,
    name: &'a str,
}

impl<'a> Client<'a> {
    fn new(hub: &'a HubOptions, name: &'a str) -> Self {
        // No pool: ureq 2 drops a pooled connection's read limit, so a
        // reused one could wait on a stalled hub for ever; a few files cost
        // a few more handshakes.
        let agent = ureq::AgentBuilder::new()
            .try_proxy_from_env(true)
            .max_idle_connections(0)
            .timeout_connect(hub.stall)
            .timeout_read(hub.stall)
            .timeout_write(hub.stall)
            .user_agent(concat!("minirag-mcp/", env!("CARGO_PKG_VERSION")))
            .build();
        Self { agent, hub, name }
    }

    /// Downloads `file` into `dir` unless it is there; `false` when the
    /// repository has no such file.
    fn get_into(
        &self,
        file: &str,
        dir: &Path,
        started: Instant,
        progress: &DownloadProgress,
        fail: &dyn Fn(String, Option<Cause>) -> LoadError,
    ) -> Result<bool, LoadError> {
        let target = dir.join(file);
        if target.is_file() {
            return Ok(true);
        }
        let url = format!(
            "{}/{}/resolve/main/{file}",
            self.hub.endpoint.trim_end_matches('/'),
            self.name
        );
        let mut request = self.agent.get(&url);
        if let Some(token) = &self.hub.token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        let response = match request.call() {
            Ok(r) => r,
            Err(ureq::Error::Status(404, _)) => return Ok(false),
            Err(ureq::Error::Status(code, r)) => {
                return Err(fail(
                    format!("{url} answered HTTP {code} {}", r.status_text()),
                    None,
                ))
            }
            Err(e) => {
                return Err(fail(
                    format!(
                        "{url}: {} (no answer within {} s; HF_HUB_DOWNLOAD_TIMEOUT sets the wait)",
                        e.kind(),
                        self.hub.stall.as_secs()
                    ),
                    Some(Cause::new(e)),
                ))
            }
        };
        if let Some(len) = response
            .header("Content-Length")
            .and_then(|l| l.parse::<u64>().ok())
        {
            progress.total.fetch_add(len, Ordering::Relaxed);
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| fail(format!("cannot create {}: {e}", parent.display()), None))?;
        }
        // Per process: two processes may fetch the same model at once.
        let part = target.with_extension(format!("{}.part", std::process::id()));
        let copied = copy_body(
            response.into_reader(),
            &part,
            started,
            self.hub.deadline,
            progress,
        );
        match copied.and_then(|()| std::fs::rename(&part, &target)) {
            Ok(()) => Ok(true),
            Err(e) => {
                let _ = std::fs::remove_file(&part);
                Err(fail(
                    format!("{url}: {e} after {} s", started.elapsed().as_secs()),
                    Some(Cause::new(e)),
                ))
            }
        }
    }
}

/// Copies the body into `part`, counting bytes, until the deadline.
fn copy_body(
    mut body: impl Read,
    part: &Path,
    started: Instant,
    deadline: Duration,
    progress: &DownloadProgress,
) -> std::io::Result<()> {
    let mut out = std::fs::File::create(part)?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        if started.elapsed() > deadline {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "the download took longer than its {} s deadline",
                    deadline.as_secs()
                ),
            ));
        }
        let n = body.read(&mut buf)?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n])?;
        progress.done.fetch_add(n as u64, Ordering::Relaxed);
    }
    out.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn a_server_that_never_answers_costs_one_stall_and_leaves_nothing() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let cache = tempfile::tempdir().unwrap();
        let hub = HubOptions {
            endpoint,
            stall: Duration::from_secs(1),
            ..HubOptions::default()
        };
        let started = Instant::now();
        let err = fetch_model(
            "org/model",
            cache.path(),
            &hub,
            &DownloadProgress::default(),
        )
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(matches!(err, LoadError::Download { .. }), "{err}");
        assert!(err.to_string().contains("HF_HUB_DOWNLOAD_TIMEOUT"), "{err}");
        let dir = snapshot_dir("org/model", cache.path());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        drop(listener);
    }

    #[test]
    fn offline_finds_a_cached_model_and_names_a_missing_one() {
        let cache = tempfile::tempdir().unwrap();
        let hub = HubOptions {
            offline: true,
            endpoint: "http://127.0.0.1:9".into(),
            ..HubOptions::default()
        };
        let err = fetch_model(
            "org/model",
            cache.path(),
            &hub,
            &DownloadProgress::default(),
        )
        .unwrap_err();
        assert!(matches!(err, LoadError::Offline { .. }), "{err}");
        let dir = snapshot_dir("org/model", cache.path());
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["config.json", "tokenizer.json", "model.safetensors"] {
            std::fs::write(dir.join(f), b"{}").unwrap();
        }
        let found = fetch_model(
            "org/model",
            cache.path(),
            &hub,
            &DownloadProgress::default(),
        );
        assert_eq!(found.unwrap(), dir);
    }
}
