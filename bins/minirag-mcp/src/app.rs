//! The wiring: configuration, the lazily built engine over the adapters,
//! and core's path containment over the local file system. What each tool answers is built in [`crate::payload`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Result};
use minirag_convert::Converters;
use minirag_core::config::Config;

use crate::config_env::{CliOverrides, ConfigContext, ConfigError};
use minirag_core::containment::Containment;
use minirag_core::engine::{Engine, Ports, Settings};
use minirag_core::ports::{Clock, Embedder, Index, TokenCounter};
use minirag_embed_candle::{HubOptions, LazyEmbedder, ModelSource};
use minirag_embed_http::HttpEmbedder;
use minirag_fetch_http::HttpFetcher;
use minirag_fs::LocalFiles;
use minirag_index_mem::MemIndex;
use minirag_index_pg::{PgIndex, PgOptions};
use minirag_language_whatlang::Whatlang;
use minirag_ocr_tesseract::Tesseract;

pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");

struct SystemClock;

impl Clock for SystemClock {
    fn now_unix_seconds(&self) -> i64 {
        now_unix()
    }
}

pub(crate) fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Everything a tool call needs; cheap to build (nothing is loaded until used).
pub(crate) struct App {
    pub config: Result<Config, ConfigError>,
    /// Roots with symlinks resolved, in configured order.
    pub roots: Vec<PathBuf>,
    pub cwd: PathBuf,
    embedder: Option<Encoder>,
    engine: Mutex<Option<Arc<Engine>>>,
    /// The index, when choosing the model opened it before the engine.
    opened: Mutex<Option<Arc<dyn Index>>>,
    /// Why the model in use is not the default one (an index that keeps
    /// the previous default), for status and doctor.
    pub model_notice: Option<String>,
    /// The live index's state, when this process watches the roots.
    pub watch: Arc<Mutex<minirag_core::watch::WatchState>>,
    /// The `EMBED_*` variables in force (flags included), for `setup`.
    pub remote_settings: Vec<(String, String)>,
}

pub(crate) fn env_map() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// Every root must be a folder that is there: a mistyped one would index
/// nothing, and its default index would be created inside it.
fn existing_roots(
    config: Config,
    flags: &CliOverrides,
    env: &BTreeMap<String, String>,
) -> Result<Config, ConfigError> {
    let variable = if !flags.base_dirs.is_empty() {
        "--base-dir"
    } else if env.contains_key("BASE_DIRS") {
        "BASE_DIRS"
    } else {
        "BASE_DIR"
    };
    match config.roots.iter().find(|r| !Path::new(r).is_dir()) {
        Some(missing) => Err(ConfigError {
            variable: variable.into(),
            value: missing.clone(),
            expected: "a folder that exists (check the spelling, or create it first); \
                       nothing is indexed or created under a folder that is not there"
                .into(),
        }),
        None => Ok(config),
    }
}

fn default_cache_dir() -> String {
    directories::ProjectDirs::from("", "", "minirag-mcp")
        .map(|d| d.cache_dir().join("models").display().to_string())
        .unwrap_or_else(|| "/tmp/minirag-mcp/models".into())
}

impl App {
    pub(crate) fn load(flags: &CliOverrides) -> Self {
        Self::load_with(flags, &[])
    }

    /// [`App::load`] with variables set by flags (`--embed-url`), which win
    /// over the environment's.
    pub(crate) fn load_with(flags: &CliOverrides, variables: &[(&str, String)]) -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let ctx = ConfigContext {
            cwd: cwd.display().to_string(),
            home: std::env::var("HOME").ok(),
            default_cache_dir: default_cache_dir(),
        };
        let mut env = env_map();
        for (k, v) in variables {
            env.insert(k.to_string(), v.clone());
        }
        let mut config =
            crate::config_env::load(&env, flags, &ctx).and_then(|c| existing_roots(c, flags, &env));
        let remote = match config.as_ref().map(|c| crate::remote::options(&env, c)) {
            Ok(Ok(remote)) => remote,
            Ok(Err(e)) => {
                config = Err(e);
                None
            }
            Err(_) => None,
        };
        let (opened, model_notice) = match config.as_mut() {
            Ok(c) if remote.is_none() => settle_default_model(c),
            _ => (None, None),
        };
        let roots = config
            .as_ref()
            .map(|c| {
                c.roots
                    .iter()
                    .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| PathBuf::from(r)))
                    .collect()
            })
            .unwrap_or_default();
        let embedder = config.as_ref().ok().map(|c| match remote {
            // EMBED_URL wins over the in-process encoder.
            Some(options) => Encoder::Remote(Arc::new(HttpEmbedder::new(options))),
            None => {
                let source = ModelSource::choose(
                    &c.model_name,
                    c.model_path.as_deref().map(Path::new),
                    Path::new(&c.cache_dir),
                    hub_options(c),
                );
                Encoder::Local(Arc::new(
                    LazyEmbedder::new(source)
                        .with_prompt_override(c.prompts.clone())
                        .with_precision(c.precision),
                ))
            }
        });
        let remote_settings = crate::remote::VARIABLES
            .iter()
            .filter_map(|k| Some((k.to_string(), env.get(*k)?.clone())))
            .collect();
        Self {
            remote_settings,
            config,
            roots,
            cwd,
            embedder,
            engine: Mutex::new(None),
            opened: Mutex::new(opened),
            model_notice,
            watch: Arc::default(),
        }
    }

    pub(crate) fn config(&self) -> Result<&Config> {
        self.config
            .as_ref()
            .map_err(|e| anyhow!("Configuration error: {e}"))
    }

    pub(crate) fn root_strings(&self) -> Vec<String> {
        self.roots.iter().map(|r| r.display().to_string()).collect()
    }

    /// The engine, opening the index on first use.
    pub(crate) fn engine(&self) -> Result<Arc<Engine>> {
        let config = self.config()?;
        let mut slot = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = slot.as_ref() {
            return Ok(e.clone());
        }
        let opened = self.opened.lock().unwrap_or_else(|p| p.into_inner()).take();
        let index = match opened {
            Some(index) => index,
            None => open_index(config)?,
        };
        let embedder = self
            .embedder
            .clone()
            .ok_or_else(|| anyhow!("no embedder without a configuration"))?;
        let ports = Ports {
            converter: Arc::new(Converters),
            embedder: embedder.port(),
            tokens: embedder.tokens(),
            index,
            fetcher: Arc::new(HttpFetcher::new(
                config.url_max_bytes,
                config.allow_private_urls,
            )),
            files: Arc::new(LocalFiles),
            clock: Arc::new(SystemClock),
            ocr: Arc::new(Tesseract::new(&config.ocr_lang)),
            languages: Arc::new(Whatlang),
        };
        let mut settings = Settings::from(config);
        settings.roots = self.root_strings();
        let engine = Arc::new(Engine::new(settings, ports));
        *slot = Some(engine.clone());
        Ok(engine)
    }

    pub(crate) fn embedder(&self) -> Option<&Encoder> {
        self.embedder.as_ref()
    }

    /// The containment rule over this process's roots (see
    /// [`Containment`]).
    pub(crate) fn containment(&self) -> Containment {
        Containment {
            roots: self.root_strings(),
            cwd: self.cwd.display().to_string(),
            home: std::env::var("HOME").ok(),
        }
    }

    /// A path argument resolved and checked to lie under a root.
    /// `require_absolute`: MCP paths must be absolute; CLI paths may be relative.
    pub(crate) fn contain(&self, raw: &str, require_absolute: bool) -> Result<PathBuf> {
        self.config()?;
        let path = self
            .containment()
            .contain(raw, require_absolute, &LocalFiles)?;
        Ok(PathBuf::from(path))
    }

    /// The index key of a file or source argument (files are contained).
    pub(crate) fn key(
        &self,
        path: Option<&str>,
        source: Option<&str>,
        require_absolute: bool,
    ) -> Result<String> {
        self.config()?;
        Ok(self
            .containment()
            .key(path, source, require_absolute, &LocalFiles)?)
    }
}

/// The encoder the configuration names: in process, or a server's.
#[derive(Clone)]
pub(crate) enum Encoder {
    Local(Arc<LazyEmbedder>),
    Remote(Arc<HttpEmbedder>),
}

impl Encoder {
    fn port(&self) -> Arc<dyn Embedder> {
        match self {
            Self::Local(e) => e.clone(),
            Self::Remote(e) => e.clone(),
        }
    }

    fn tokens(&self) -> Arc<dyn TokenCounter> {
        match self {
            Self::Local(e) => e.clone(),
            Self::Remote(e) => e.clone(),
        }
    }

    pub(crate) fn embedder(&self) -> &dyn Embedder {
        match self {
            Self::Local(e) => e.as_ref(),
            Self::Remote(e) => e.as_ref(),
        }
    }

    /// How people name it: the hub id or folder, or the served model and
    /// the endpoint's host.
    pub(crate) fn name(&self) -> String {
        match self {
            Self::Local(e) => e.name().to_string(),
            Self::Remote(e) => format!("{} at {}", e.options().model, e.endpoint()),
        }
    }

    /// The prefixes in force for an encoder in this process: the loaded
    /// model's, else what its name and the configuration give (a folder's
    /// own declaration is read when it loads); `None` for a server's.
    pub(crate) fn prompts(
        &self,
        configured: &minirag_core::models::PromptOverride,
    ) -> Option<minirag_core::models::Prompts> {
        match self {
            Self::Local(e) if e.is_loaded() => e.get().ok().map(|m| m.prompts().clone()),
            Self::Local(e) => Some(minirag_core::models::Prompts::resolve(
                e.name(),
                None,
                configured,
            )),
            Self::Remote(_) => None,
        }
    }

    /// The remote endpoint (host only), when chunk text leaves the machine.
    pub(crate) fn endpoint(&self) -> Option<String> {
        match self {
            Self::Local(_) => None,
            Self::Remote(e) => Some(e.endpoint()),
        }
    }
}

/// How the model hub is reached: Hugging Face's own variables.
fn hub_options(config: &Config) -> HubOptions {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let stall = std::time::Duration::from_secs(config.download_timeout_secs);
    HubOptions {
        endpoint: var("HF_ENDPOINT").unwrap_or_else(|| HubOptions::default().endpoint),
        token: var("HF_TOKEN"),
        offline: config.hub_offline,
        stall,
        ..HubOptions::default()
    }
}

/// With no model configured, the model core's rule picks for this index
/// (see [`minirag_core::default_model`]), written into `config`; the index
/// comes back when it had to be opened to tell. Only an index beside a
/// cached copy of the previous default can keep it, so only then is it
/// opened here.
fn settle_default_model(config: &mut Config) -> (Option<Arc<dyn Index>>, Option<String>) {
    use minirag_core::default_model::{unconfigured, IndexModel, PREVIOUS_DEFAULT_MODEL};
    if config.model_name_set || config.model_path.is_some() {
        return (None, None);
    }
    let Some(previous) = minirag_embed_candle::source::cached_content_id(
        PREVIOUS_DEFAULT_MODEL,
        Path::new(&config.cache_dir),
    ) else {
        return (None, None);
    };
    if config.database.is_none() && !Path::new(&config.db_path).exists() {
        return (None, None);
    }
    let Ok(index) = open_index(config) else {
        return (None, None);
    };
    let held = index.read().ok().map(|view| {
        (
            view.vector_model(),
            view.stats().map_or(0, |s| s.chunk_count),
        )
    });
    let (vector_model, chunk_count) = held.unwrap_or_default();
    // The previous default declares no prefixes, so its vectors carry its
    // content id as it is (no prefix suffix).
    let choice = unconfigured(IndexModel {
        vector_model: vector_model.as_deref(),
        previous_default_id: Some(&previous),
        chunk_count,
    });
    config.model_name = choice.name;
    (Some(index), choice.notice)
}

/// The index the configuration names: PostgreSQL with `DB_URL`, else the
/// embedded one under `DB_PATH`.
pub(crate) fn open_index(config: &Config) -> Result<Arc<dyn Index>> {
    Ok(match &config.database {
        Some(db) => Arc::new(PgIndex::open(&db.url, &db.schema, &pg_options())?),
        None => Arc::new(MemIndex::open(&config.db_path)?),
    })
}

/// libpq's variables for what the URL does not say: a pgpass file
/// (`PGPASSFILE`, else `~/.pgpass`) and extra CA certificates
/// (`PGSSLROOTCERT`).
fn pg_options() -> PgOptions {
    let passfile = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")));
    PgOptions {
        passfile,
        root_cert: std::env::var_os("PGSSLROOTCERT").map(PathBuf::from),
        min_ef_search: None,
    }
}

/// Where the index lives, for status and messages: the masked URL and
/// schema, or the folder.
pub(crate) fn index_location(config: &Config) -> String {
    match &config.database {
        Some(db) => format!(
            "{} (schema {})",
            minirag_index_pg::mask_password(&db.url),
            db.schema
        ),
        None => config.db_path.clone(),
    }
}
