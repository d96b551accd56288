//! Loading on first use, so the MCP server answers `initialize` before any
//! model is touched, and stays useful when the model cannot be loaded.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use minirag_core::cause::Cause;
use minirag_core::models::{PromptOverride, Prompts};
use minirag_core::ports::{EmbedError, Embedder, EmbedderState, Embeddings, TokenCounter};
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

pub struct LazyEmbedder {
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
}

impl LazyEmbedder {
    pub fn new(source: ModelSource) -> Self {
        let name = source.id();
        Self {
            source,
            name,
            id: OnceLock::new(),
            state: Mutex::new(State::NotLoaded),
            loading: Mutex::new(()),
            download: DownloadProgress::default(),
            prompt_override: PromptOverride::default(),
        }
    }

    /// Prefixes set by configuration, winning over the model's own and the
    /// known-model table's.
    pub fn with_prompt_override(mut self, prompts: PromptOverride) -> Self {
        self.prompt_override = prompts;
        self
    }

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
    pub fn get(&self) -> Result<Arc<CandleEmbedder>, EmbedError> {
        if let Some(known) = self.settled() {
            return known;
        }
        let _one_load = self.loading.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = self.settled() {
            return known;
        }
        *self.lock_state() = State::Loading;
        let loaded = self.source.materialize(&self.download).and_then(|dir| {
            let id = content_id(&dir)?;
            let model = CandleEmbedder::load(id, &dir)?;
            let prompts = Prompts::resolve(
                &self.name,
                model.settings().declared_prompts.clone(),
                &self.prompt_override,
            );
            Ok(model.with_prompts(prompts))
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

    /// How people name the model: the hub id or the folder.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the model is loaded (without loading it).
    pub fn is_loaded(&self) -> bool {
        matches!(*self.lock_state(), State::Loaded(_))
    }
}

impl Embedder for LazyEmbedder {
    fn state(&self) -> EmbedderState {
        match &*self.lock_state() {
            State::NotLoaded => EmbedderState::NotLoaded,
            State::Loading => {
                let (done, total) = self.download.get();
                EmbedderState::Loading { done, total }
            }
            State::Loaded(_) => EmbedderState::Ready,
            State::Failed { reason, .. } => EmbedderState::Failed {
                reason: reason.clone(),
            },
        }
    }

    /// The content id, loading the model if needed; the name while it
    /// cannot be loaded (nothing is embedded then, so nothing is stored
    /// under it).
    fn model_id(&self) -> &str {
        let _ = self.get();
        self.id.get().map_or(&self.name, String::as_str)
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
    /// The model tokenizer's count; the character estimate while no model loads.
    fn count(&self, text: &str) -> usize {
        match self.get() {
            Ok(m) => m.count(text),
            Err(_) => estimate(text),
        }
    }
    /// The model's answer; the estimate (no model) does not add up.
    fn additive(&self) -> bool {
        self.get().is_ok_and(|m| m.additive())
    }
}
