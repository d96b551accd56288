//! The minirag domain.
//!
//! Everything here is pure: no file system, no network, no clock; the only
//! threads are scoped ones a use case joins before it returns, and a
//! background sync job's, which [`jobs::Jobs::drain`] stops and joins.
//! The outside world reaches the domain only through the traits in [`ports`],
//! which the crates under `adapters/` implement and `bins/` wires together.
//!
//! Map:
//! - [`chunk`]: Markdown → sections → retrieval units.
//! - [`reconstruct`]: units → parent sections and whole documents.
//! - [`location`]: where a chunk is (page, slide, rows, lines) and its citation.
//! - [`title`]: document titles and [`datauri`] image stripping.
//! - [`search`]: query validation, weighted RRF, filters, result shaping.
//! - [`containment`]: the rule that keeps path arguments under the roots.
//! - [`config`]: the typed settings ([`config::Config`]), their defaults and bounds.
//! - [`formats`]: the one table of formats the product knows.
//! - [`sync`]: the staleness rule, the sync plan and its runner.
//! - [`watch`]: which file changes matter, and the live index's loop.
//! - [`engine`]: the ingest and query use cases, generic over the ports.
//! - [`jobs`]: sync jobs: admission, state, progress, cancel and drain.
//! - [`progress`]: what a sync reports and how it is stopped (a leaf).
//! - [`models`]: known embedding models and the prefixes they were trained with.

#![forbid(unsafe_code)]

pub mod cause;
pub mod chunk;
pub mod config;
pub mod containment;
pub mod datauri;
pub mod default_model;
pub mod engine;
pub mod error;
pub mod formats;
pub mod jobs;
pub mod location;
pub mod markdown;
pub mod meta;
pub mod models;
pub mod plural;
pub mod ports;
pub mod progress;
pub mod reconstruct;
pub mod scan_rules;
pub mod search;
pub mod source;
pub mod sync;
pub mod time;
pub mod title;
pub mod tokens;
pub mod unreadable;
pub mod watch;

#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod testing;

/// Version of the chunking rules. Stored with every source so that a change of
/// rules can mark old chunks stale and have sync rebuild them. 4: every
/// chunk carries its location (vectors come back from the chunk-text cache).
/// 5: a numbered step keeps its number, PDF text that looks like Markdown
/// stays text, HTML titles decode every character reference.
/// 6: short paragraphs share units (documents without headings are no longer
/// one section per paragraph; a unit under 16 tokens joins a neighbour),
/// table-of-contents lines are left out.
/// 7: a PDF without an outline takes headings from its type, and its
/// monospaced lines are code blocks.
/// 8: sources carry their language and declared fields (front matter,
/// core properties, PDF Info, HTML `<meta>`); a Markdown file's front
/// matter is no longer text; PDF words printed with a filler around every
/// letter read as their letters.
pub const CHUNK_SCHEME: u32 = 8;
