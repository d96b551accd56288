//! Loading on first use, so the MCP server answers `initialize` before any
//! model is touched, and stays useful when the model cannot be loaded.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use minirag_core::cause::Cause;
use minirag_core::models::{Precision, PromptOverride, Prompts};
use minirag_core::ports::{
    EmbedError, Embedder, EmbedderState, Embeddings, Readiness, TokenCounter,
};
use minirag_core::tokens::estimate;

use crate::download::DownloadProgress;
use crate::model::CandleEmbedder;
use crate::source::{content_id, ModelSource};

/// After a failed load, wait this long before trying again (a download that
/// times out should not stall every call).
const RETRY_AFTER: Duration = Duration::from_secs(30);

enum State {
    NotLoaded,
    Loading,
    Loaded(Arc<CandleEmbedder>),
    Failed {
        reason: String,
        cause: Cause,
        at: Instant,
    },
}

/// Loads on first use; cheap to share (the state is behind an `Arc`), so a
/// download can run on a thread of its own while the caller goes on.
#[derive(Clone)]
pub struct LazyEmbedder {
    inner: Arc<Inner>,
}

struct Inner {
    source: ModelSource,
    /// How people name the model (hub id or folder), for messages.
    name: String,
    /// The loaded model's content id ([`crate::source::content_id`]).
    id: OnceLock<String>,
    /// Held only to read or change the state, never across a load, so
    /// `status` answers while a download runs.
    state: Mutex<State>,
    /// One load at a time; the others wait here for its outcome.
    loading: Mutex<()>,
    download: DownloadProgress,
    /// MODEL_QUERY_PREFIX / MODEL_PASSAGE_PREFIX.
    prompt_override: PromptOverride,
    /// MODEL_PRECISION.
    precision: Precision,
}

impl LazyEmbedder {
    /// An embedder that loads `source` on first use.
    pub fn new(source: ModelSource) -> Self {
        Self::build(source, PromptOverride::default(), Precision::default())
    }

    fn build(source: ModelSource, prompt_override: PromptOverride, precision: Precision) -> Self {
        let name = source.id();
        Self {
            inner: Arc::new(Inner {
                source,
                name,
                id: OnceLock::new(),
                state: Mutex::new(State::NotLoaded),
                loading: Mutex::new(()),
                download: DownloadProgress::default(),
                prompt_override,
                precision,
            }),
        }
    }

    /// Prefixes set by configuration, winning over the model's own and the
    /// known-model table's.
    pub fn with_prompt_override(self, prompts: PromptOverride) -> Self {
        Self::build(self.inner.source.clone(), prompts, self.inner.precision)
    }

    /// The dense layers' arithmetic once loaded (int8 is part of the id).
    pub fn with_precision(self, precision: Precision) -> Self {
        let prompts = self.inner.prompt_override.clone();
        Self::build(self.inner.source.clone(), prompts, precision)
    }

    /// The precision its dense layers run in.
    pub fn precision(&self) -> Precision {
        self.inner.precision
    }

    /// The loaded model, loading it now if needed.
    pub fn get(&self) -> Result<Arc<CandleEmbedder>, EmbedError> {
        self.inner.get()
    }

    /// How people name the model: the hub id or the folder.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Whether the model is loaded (without loading it).
    pub fn is_loaded(&self) -> bool {
        matches!(*self.inner.lock_state(), State::Loaded(_))
    }
}

impl Inner {
    fn lock_state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The outcome already known: the model, or a failure too recent to retry.
    fn settled(&self) -> Option<Result<Arc<CandleEmbedder>, EmbedError>> {
        match &*self.lock_state() {
            State::Loaded(m) => Some(Ok(m.clone())),
            State::Failed { reason, cause, at } if at.elapsed() < RETRY_AFTER => {
                Some(Err(EmbedError::Unavailable {
                    reason: reason.clone(),
                    cause: Some(cause.clone()),
                }))
            }
            _ => None,
        }
    }

    /// The loaded model, loading it now if needed.
    fn get(&self) -> Result<Arc<CandleEmbedder>, EmbedError> {
        if let Some(known) = self.settled() {
            return known;
        }
        let _one_load = self.loading.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = self.settled() {
            return known;
        }
        *self.lock_state() = State::Loading;
        self.download.reset();
        let loaded = self.source.materialize(&self.download).and_then(|dir| {
            let id = content_id(&dir)?;
            let model = CandleEmbedder::load(id, &dir)?;
            let prompts = Prompts::resolve(
                &self.name,
                model.settings().declared_prompts.clone(),
                &self.prompt_override,
            );
            Ok(model.with_prompts(prompts).with_precision(self.precision))
        });
        match loaded {
            Ok(m) => {
                let _ = self.id.set(m.model_id().to_string());
                let m = Arc::new(m);
                *self.lock_state() = State::Loaded(m.clone());
                Ok(m)
            }
            Err(e) => {
                let reason = e.to_string();
                let cause = Cause::new(e);
                *self.lock_state() = State::Failed {
                    reason: reason.clone(),
                    cause: cause.clone(),
                    at: Instant::now(),
                };
                Err(EmbedError::Unavailable {
                    reason,
                    cause: Some(cause),
                })
            }
        }
    }
}

impl Embedder for LazyEmbedder {
    fn state(&self) -> EmbedderState {
        match &*self.inner.lock_state() {
            State::NotLoaded => EmbedderState::NotLoaded,
            State::Loading => {
                let (done, total) = self.inner.download.get();
                EmbedderState::Loading { done, total }
            }
            State::Loaded(_) => EmbedderState::Ready,
            State::Failed { reason, .. } => EmbedderState::Failed {
                reason: reason.clone(),
            },
        }
    }

    /// A model on disk (a folder, or complete in the cache) is loaded now;
    /// one that must be downloaded first loads on a thread of its own, and
    /// the caller hears `Pending` until it is there.
    fn start(&self) -> Readiness {
        if let Some(known) = self.inner.settled() {
            return known.map_or_else(Readiness::Failed, |_| Readiness::Ready);
        }
        {
            let mut state = self.inner.lock_state();
            match *state {
                State::Loading => return Readiness::Pending,
                _ if self.inner.source.needs_download() => *state = State::Loading,
                _ => {
                    drop(state);
                    return self
                        .ready()
                        .map_or_else(Readiness::Failed, |()| Readiness::Ready);
                }
            }
        }
        let inner = self.inner.clone();
        let spawned = std::thread::Builder::new()
            .name("minirag-model-download".into())
            .spawn(move || {
                let _ = inner.get();
            });
        match spawned {
            Ok(_) => Readiness::Pending,
            Err(_) => self
                .ready()
                .map_or_else(Readiness::Failed, |()| Readiness::Ready),
        }
    }

    /// The content id, loading the model if needed; the name while it
    /// cannot be loaded (nothing is embedded then, so nothing is stored
    /// under it).
    fn model_id(&self) -> &str {
        let _ = self.get();
        self.inner.id.get().map_or(&self.inner.name, String::as_str)
    }

    fn ready(&self) -> Result<(), EmbedError> {
        self.get().map(|_| ())
    }

    /// The model's width, or 0 when it cannot be loaded.
    fn dimension(&self) -> usize {
        self.get().map_or(0, |m| m.dimension())
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Embeddings, EmbedError> {
        self.get()?.embed_documents(texts)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.get()?.embed_query(text)
    }
}

impl TokenCounter for LazyEmbedder {
    /// The model tokenizer's count; the character estimate while no model
    /// loads, or while one downloads (chunking does not wait for it).
    fn count(&self, text: &str) -> usize {
        match self.loaded_or_not_waiting() {
            Some(m) => m.count(text),
            None => estimate(text),
        }
    }
    /// The model's answer; the estimate (no model) does not add up.
    fn additive(&self) -> bool {
        self.loaded_or_not_waiting().is_some_and(|m| m.additive())
    }
}

impl LazyEmbedder {
    /// The model, loading it now unless a load is already running.
    fn loaded_or_not_waiting(&self) -> Option<Arc<CandleEmbedder>> {
        if matches!(*self.inner.lock_state(), State::Loading) {
            return None;
        }
        self.get().ok()
    }
}
