//! The search page's view of this process: the same engine, jobs and
//! containment as the MCP tools (see `minirag_web`).

use std::path::PathBuf;
use std::sync::Arc;

use minirag_core::engine::Engine;
use minirag_core::jobs::Jobs;

use crate::app::App;

pub(crate) struct PageBackend {
    pub app: Arc<App>,
    pub jobs: Arc<Jobs>,
    pub changes: Arc<crate::changes::Changes>,
}

impl minirag_web::Backend for PageBackend {
    fn engine(&self) -> Result<Arc<Engine>, String> {
        self.app.engine().map_err(|e| format!("{e:#}"))
    }

    fn jobs(&self) -> Arc<Jobs> {
        self.jobs.clone()
    }

    fn roots(&self) -> Vec<String> {
        self.app.root_strings()
    }

    fn status(&self) -> serde_json::Value {
        crate::payload::value(&self.app.status())
    }

    fn start_sync(&self) -> Result<String, String> {
        let engine = self.engine()?;
        let admitted = self
            .jobs
            .admit(engine, None, Arc::default())
            .map_err(|e| e.to_string())?;
        let changes = self.changes.clone();
        Ok(admitted.spawn(move |job| {
            if job.changed_documents() {
                changes.nudge();
            }
        }))
    }

    /// A file sync indexed, that the scan rules admit now, at its path and
    /// where its symlinks lead.
    fn original(&self, source: &str) -> Option<PathBuf> {
        let path = self.app.contain(source, true).ok()?;
        let served = self
            .engine()
            .ok()?
            .serves_original(source, &path.display().to_string())
            .ok()?;
        (served && path.is_file()).then_some(path)
    }
}
