//! Wiring of the live index: the notify feed over the roots, filtered by
//! core's relevance rule, handed to `Engine::watch`. Used by `minirag-mcp
//! watch` (foreground, a line per change) and by the MCP server under
//! `RAG_WATCH=1` (in the background, seen in `status.watch`).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use minirag_core::watch::{relevant, WatchEvent};
use minirag_watch_notify::{FeedOptions, NotifyFeed};

use crate::app::App;

/// Watches the roots until `stop` is set; `on` hears of every applied batch.
pub(crate) fn run(
    app: &App,
    on: &(dyn Fn(WatchEvent<'_>) + Sync),
    stop: &AtomicBool,
) -> Result<()> {
    let engine = app.engine()?;
    let roots: Vec<PathBuf> = app.roots.clone();
    let root_strings = app.root_strings();
    let options = FeedOptions {
        // A test hook: behave as if inotify's max_user_watches were spent.
        simulate_watch_limit: std::env::var_os("MINIRAG_SIMULATE_WATCH_LIMIT").is_some(),
        ..FeedOptions::default()
    };
    let mut feed = NotifyFeed::start(&roots, move |p| relevant(p, &root_strings), options)
        .context("cannot watch the roots")?;
    engine.watch(&mut feed, &app.watch, on, stop);
    Ok(())
}
