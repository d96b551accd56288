//! `minirag-mcp doctor`: is this set-up healthy? One line per check (ok,
//! warn or fail) with the fix; the exit code is non-zero when any fails.

use minirag_core::plural::counted;
use std::path::Path;
use std::time::Instant;

use minirag_core::ports::{Index, IndexError};
use minirag_index_mem::MemIndex;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

use crate::app::{App, Encoder};
use crate::download_progress::while_downloading;

/// Below this much free space under DB_PATH a sync may fail half-way.
const LOW_DISK: u64 = 1 << 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Level {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Check {
    pub name: &'static str,
    pub level: Level,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Report {
    pub ok: bool,
    pub checks: Vec<Check>,
}

fn check(name: &'static str, level: Level, message: String, fix: Option<&str>) -> Check {
    Check {
        name,
        level,
        message,
        fix: fix.map(str::to_string),
    }
}

/// `deep`: also cross-check the whole index ([`MemIndex::verify`]).
pub(crate) fn run(app: &App, deep: bool) -> Report {
    let mut checks = Vec::new();
    let config = match &app.config {
        Ok(c) => {
            checks.push(check(
                "config",
                Level::Ok,
                format!(
                    "roots {}; index at {}",
                    app.root_strings().join(", "),
                    crate::app::index_location(c)
                ),
                None,
            ));
            c
        }
        Err(e) => {
            checks.push(check(
                "config",
                Level::Fail,
                e.to_string(),
                Some("correct the variable or flag named above"),
            ));
            return finish(checks);
        }
    };
    checks.push(model(app));
    if let Some(notice) = &app.model_notice {
        checks.push(check(
            "model choice",
            Level::Warn,
            notice.clone(),
            Some("set MODEL_NAME to the model you want; the notice names both"),
        ));
    }
    if config.database.is_some() {
        checks.extend(shared(config, deep));
    } else {
        let db = Path::new(&config.db_path);
        checks.extend(index(db, deep));
        checks.push(disk(db));
    }
    finish(checks)
}

fn finish(checks: Vec<Check>) -> Report {
    Report {
        ok: checks.iter().all(|c| c.level != Level::Fail),
        checks,
    }
}

fn model(app: &App) -> Check {
    let Some(encoder) = app.embedder() else {
        return check("model", Level::Fail, "no model configured".into(), None);
    };
    let embedder = encoder.embedder();
    let started = Instant::now();
    let (answer, downloaded) = while_downloading(embedder, &None, || {
        embedder.embed_query("Is this set-up healthy?")
    });
    match answer {
        Ok(v) => {
            let how = match encoder {
                Encoder::Local(local) => local.get().map_or_else(
                    |_| String::new(),
                    |m| {
                        format!(
                            "{}; dense layers in {} (MODEL_PRECISION)",
                            m.prompts().describe(),
                            local.precision().name()
                        )
                    },
                ),
                Encoder::Remote(remote) => format!(
                    "texts and queries are sent to {}; prefixes: {}; chunk sizes: {}{}",
                    remote.endpoint(),
                    remote.prefix_policy(),
                    remote.token_counting(),
                    remote
                        .probe_latency()
                        .map_or_else(String::new, |d| format!(
                            "; the identity probe took {} ms",
                            d.as_millis()
                        ))
                ),
            };
            check(
                "model",
                Level::Ok,
                format!(
                    "{} ({}) embeds one sentence in {} ms{}, {} dimensions; {how}",
                    encoder.name(),
                    embedder.model_id(),
                    started.elapsed().as_millis(),
                    downloaded.map_or_else(String::new, |d| format!(
                        " (downloading {} MB first)",
                        d.total >> 20
                    )),
                    v.len(),
                ),
                None,
            )
        }
        Err(e) => check(
            "model",
            Level::Fail,
            match downloaded {
                Some(d) => format!("{e} (the download had reached {})", d.describe()),
                None => e.to_string(),
            },
            Some(match encoder {
                Encoder::Local(_) => {
                    "without network access, point MODEL_PATH at a local copy of the model folder \
                     (config.json, tokenizer.json, model.safetensors); until then search is keyword-only"
                }
                Encoder::Remote(_) => {
                    "start the embedding server, or check EMBED_URL, EMBED_MODEL and EMBED_API_KEY; \
                     until it answers, sync stores chunks keyword-searchable and search is keyword-only"
                }
            }),
        ),
    }
}

fn index(db: &Path, deep: bool) -> Vec<Check> {
    if !db.exists() {
        return vec![check(
            "index",
            Level::Ok,
            format!(
                "{} does not exist yet; the first sync creates it",
                db.display()
            ),
            None,
        )];
    }
    let index = match MemIndex::open(db) {
        Ok(i) => i,
        Err(e) => {
            return vec![check(
                "index",
                Level::Fail,
                e.to_string(),
                Some("move the index folder away and run `minirag-mcp sync` to rebuild it"),
            )]
        }
    };
    let opened = if deep {
        "opens and its checksums verify".to_string()
    } else {
        format!(
            "opens and its checksums verify (those of vector files over {} MB: with --deep)",
            minirag_index_mem::disk::CHECKED_AT_OPEN >> 20
        )
    };
    let mut checks = inspect(&index, &opened, deep);
    if deep {
        checks.push(match index.verify() {
            Ok(problems) if problems.is_empty() => check(
                "verify",
                Level::Ok,
                "every chunk, posting and vector agrees with the rest, and no damage is kept".into(),
                None,
            ),
            Ok(problems) => check(
                "verify",
                Level::Fail,
                problems.join("; "),
                Some("run `minirag-mcp sync` to rebuild what is named from the files; if it persists, move the index folder away and sync again"),
            ),
            Err(e) => check("verify", Level::Fail, e.to_string(), None),
        });
    }
    checks
}

/// The shared index on PostgreSQL: it connects, its schema is ours, and
/// the same checks as the embedded one.
fn shared(config: &minirag_core::config::Config, deep: bool) -> Vec<Check> {
    match crate::app::open_index(config) {
        Ok(index) => inspect(index.as_ref(), "connects", deep),
        Err(e) => vec![check(
            "index",
            Level::Fail,
            e.to_string(),
            Some("check DB_URL, DB_SCHEMA and that the server runs with pgvector"),
        )],
    }
}

/// `deep`: damage the index found and contained fails the check (until
/// its report is read and deleted), as anything else `--deep` finds does.
fn inspect(index: &dyn Index, opened: &str, deep: bool) -> Vec<Check> {
    let mut out = Vec::new();
    let read = index
        .read()
        .and_then(|v| Ok((v.stats()?, v.vector_model())));
    match read {
        Ok((s, model)) => {
            let stale = s.stale_chunk_count + s.vectorless_chunk_count;
            out.push(check(
                "index",
                if stale > 0 { Level::Warn } else { Level::Ok },
                format!(
                    "{opened}: {}, {}, {} to be rebuilt from their files (an older chunking scheme, or marked after damage), {} without vectors{}",
                    counted(s.source_count, "source", "sources"),
                    counted(s.chunk_count, "chunk", "chunks"),
                    s.stale_chunk_count,
                    s.vectorless_chunk_count,
                    model.map(|m| format!(", vectors of {m}")).unwrap_or_default()
                ),
                (stale > 0).then_some("run `minirag-mcp sync` to rebuild or embed them"),
            ));
            for message in s.damage {
                out.push(check(
                    "damage",
                    if deep { Level::Fail } else { Level::Warn },
                    message,
                    Some("run `minirag-mcp sync` to rebuild what was lost from the files; delete the .damage.txt beside the kept file once you have read this"),
                ));
            }
        }
        Err(e) => out.push(check("index", Level::Fail, e.to_string(), None)),
    }
    out.push(match index.lock_sync() {
        Ok(lease) => match lease.warning {
            None => check("sync lock", Level::Ok, "free".into(), None),
            Some(w) => check("sync lock", Level::Warn, w, Some("make DB_PATH writable")),
        },
        Err(IndexError::Busy { reason, .. }) => check("sync lock", Level::Warn, reason, None),
        Err(e) => check("sync lock", Level::Fail, e.to_string(), None),
    });
    out
}

fn disk(db: &Path) -> Check {
    let mut at = db;
    while !at.exists() {
        match at.parent() {
            Some(p) => at = p,
            None => break,
        }
    }
    match rustix::fs::statvfs(at) {
        Ok(s) => {
            let free = s.f_bavail.saturating_mul(s.f_frsize);
            let text = format!(
                "{:.1} GiB free under {}",
                free as f64 / (1u64 << 30) as f64,
                at.display()
            );
            if free < LOW_DISK {
                check(
                    "disk",
                    Level::Warn,
                    text,
                    Some("free some space, or point DB_PATH at a roomier disk"),
                )
            } else {
                check("disk", Level::Ok, text, None)
            }
        }
        Err(e) => check(
            "disk",
            Level::Warn,
            format!("cannot read the free space of {}: {e}", at.display()),
            None,
        ),
    }
}

/// The report for people: one line per check.
pub(crate) fn human(r: &Report) -> String {
    r.checks
        .iter()
        .map(|c| {
            let level = match c.level {
                Level::Ok => "ok  ",
                Level::Warn => "warn",
                Level::Fail => "FAIL",
            };
            match &c.fix {
                Some(fix) => format!("{level} {}: {} (fix: {fix})", c.name, c.message),
                None => format!("{level} {}: {}", c.name, c.message),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
