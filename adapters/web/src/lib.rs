//! The search page: a driving adapter beside MCP and the CLI. It renders
//! search results, documents and the index's status as HTML on the server
//! (the page works without script; `page.js` only makes it quicker), over
//! core's [`Engine`] and [`Jobs`]. The binary supplies a [`Backend`] and
//! mounts [`router`] beside `/mcp`.
//!
//! Security: every route passes [`guard`] (allowed `Host`, the token from a
//! cookie or bearer header, `Origin` on every POST), every answer carries a
//! strict Content-Security-Policy, and document text is escaped by the
//! templates.

#![forbid(unsafe_code)]

mod guard;
mod highlight;
mod markdown;
mod routes;
mod sign_in;
mod signed_in;
mod views;

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use minirag_core::engine::Engine;
use minirag_core::jobs::Jobs;

pub use guard::{bearer_token, Guard, TokenCheck};
pub use signed_in::SignedIn;

/// What the page needs from the process that serves it.
pub trait Backend: Send + Sync + 'static {
    /// The engine, opening the index on first use.
    fn engine(&self) -> Result<Arc<Engine>, String>;
    /// This process's sync jobs (shared with the MCP front end).
    fn jobs(&self) -> Arc<Jobs>;
    /// The configured roots, in order.
    fn roots(&self) -> Vec<String>;
    /// The `status` tool's answer.
    fn status(&self) -> serde_json::Value;
    /// Starts a background sync of every root; its job id.
    fn start_sync(&self) -> Result<String, String>;
    /// The local file behind `source`, when it is one under a root.
    fn original(&self, source: &str) -> Option<PathBuf>;
}

/// The page's routes (`/`, `/doc`, `/status`, …), each behind `guard`.
pub fn router(backend: Arc<dyn Backend>, guard: Guard) -> Router {
    routes::router(backend, Arc::new(guard))
}

/// The page's static assets and their sizes in bytes, for `doctor` and tests.
pub fn asset_sizes() -> Vec<(&'static str, usize)> {
    routes::ASSETS
        .iter()
        .map(|(n, _, b)| (*n, b.len()))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_weighs_under_100_kb() {
        let total: usize = super::asset_sizes().iter().map(|(_, n)| n).sum();
        // The largest HTML shell around results is a few KB more.
        assert!(total < 90 * 1024, "assets are {total} bytes");
    }
}
