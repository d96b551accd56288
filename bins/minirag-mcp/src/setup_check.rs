//! `setup <client> --check`: opens the index the client's entry names, as
//! the client's server would, and says whether it is the one these settings
//! (the ones `sync` was run with) name: same roots, same index, same model,
//! and how many chunks it holds.

use minirag_core::plural::counted;
use std::path::Path;

use crate::config_env::CliOverrides;
use anyhow::Result;
use serde::Serialize;

use crate::app::{index_location, App};
use crate::setup::{self, Client};

/// What the check found; `ok` when `problems` is empty.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Check {
    pub file: String,
    pub ok: bool,
    pub command: Option<String>,
    pub roots: Vec<String>,
    pub index: Option<String>,
    pub chunk_count: Option<u64>,
    pub source_count: Option<u64>,
    pub model: Option<String>,
    /// One sentence each, naming what differs or is missing and the fix.
    pub problems: Vec<String>,
}

/// Which settings this command was given, by flag or variable: only those
/// are compared with the entry's (`setup --check` alone checks that the
/// entry's index opens and holds chunks, wherever it is run from).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Given {
    pub roots: bool,
    pub index: bool,
    pub model: bool,
}

impl Given {
    /// What `flags`, the flag-set variables and the environment `env` name.
    pub(crate) fn from(
        flags: &CliOverrides,
        variables: &[(&str, String)],
        env: &std::collections::BTreeMap<String, String>,
    ) -> Self {
        let set = |keys: &[&str]| {
            keys.iter()
                .any(|k| env.contains_key(*k) || variables.iter().any(|(v, _)| v == k))
        };
        let roots = !flags.base_dirs.is_empty() || set(&["BASE_DIR", "BASE_DIRS"]);
        Self {
            roots,
            // The default index lies under the first root.
            index: roots || flags.db_path.is_some() || set(&["DB_PATH", "DB_URL", "DB_SCHEMA"]),
            model: flags.model_name.is_some()
                || set(&["MODEL_NAME", "MODEL_PATH", "EMBED_URL", "EMBED_MODEL"]),
        }
    }
}

/// Checks the entry in `file` against `here`, the app these flags and this
/// environment resolve to, comparing what `given` names.
pub(crate) fn run(client: Client, file: &Path, here: &App, given: Given) -> Result<Check> {
    let mut check = Check {
        file: file.display().to_string(),
        ok: false,
        command: None,
        roots: Vec::new(),
        index: None,
        chunk_count: None,
        source_count: None,
        model: None,
        problems: Vec::new(),
    };
    let again = format!(
        "run `minirag-mcp setup {} --write` with the flags you synced with",
        client_name(client)
    );
    let Some(entry) = setup::read(client, file)? else {
        check.problems.push(format!(
            "{} holds no {} entry: {again}",
            file.display(),
            setup::NAME
        ));
        return Ok(check);
    };
    check.command = Some(entry.command.clone());
    if !is_executable(Path::new(&entry.command)) {
        check.problems.push(format!(
            "the entry's command {} is not an executable file: {again}",
            entry.command
        ));
    }
    // The client starts the server with its own environment plus the
    // entry's variables, which win.
    let variables: Vec<(&str, String)> = entry
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let there = App::load_with(&CliOverrides::default(), &variables);
    let config = match there.config() {
        Ok(c) => c,
        Err(e) => {
            check.problems.push(format!("the entry's settings: {e}"));
            return Ok(check);
        }
    };
    check.roots = there.root_strings();
    check.index = Some(index_location(config));
    check.model = there.embedder().map(|e| e.name());
    match there.engine().and_then(|e| Ok(e.index_state()?)) {
        Ok(state) => {
            check.chunk_count = Some(state.stats.chunk_count);
            check.source_count = Some(state.stats.source_count);
            if state.stats.chunk_count == 0 {
                check.problems.push(format!(
                    "the entry's index {} holds no chunks: run `minirag-mcp sync` with the \
                     entry's settings, or {again}",
                    index_location(config)
                ));
            }
        }
        Err(e) => check.problems.push(format!(
            "the entry's index {} does not open ({e:#})",
            index_location(config)
        )),
    }
    if let Ok(mine) = here.config() {
        let differs = |what: &str, theirs: &str, ours: &str| {
            format!("the entry's {what} is {theirs}, these settings' is {ours}: {again}")
        };
        let (theirs, ours) = (index_location(config), index_location(mine));
        if given.index && theirs != ours {
            check.problems.push(differs("index", &theirs, &ours));
        }
        let (theirs, ours) = (check.roots.join(", "), here.root_strings().join(", "));
        if given.roots && theirs != ours {
            check.problems.push(differs("roots", &theirs, &ours));
        }
        let name = |a: &App| a.embedder().map(|e| e.name()).unwrap_or_default();
        let (theirs, ours) = (name(&there), name(here));
        if given.model && theirs != ours {
            check.problems.push(differs("model", &theirs, &ours));
        }
    }
    check.ok = check.problems.is_empty();
    Ok(check)
}

/// The check for people: one line per fact, then each problem.
pub(crate) fn human(c: &Check) -> String {
    let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let mut lines = vec![
        format!("entry:   {} in {}", setup::NAME, c.file),
        format!("command: {}", or_none(&c.command)),
        format!("roots:   {}", c.roots.join(", ")),
        format!("index:   {}", or_none(&c.index)),
        format!("model:   {}", or_none(&c.model)),
    ];
    if let (Some(chunks), Some(sources)) = (c.chunk_count, c.source_count) {
        let chunks = counted(chunks, "chunk", "chunks");
        let sources = counted(sources, "document", "documents");
        lines.push(format!("holds:   {chunks} from {sources}"));
    }
    if c.ok {
        lines.push("ok: the entry opens the index these settings name".into());
    }
    lines.extend(c.problems.iter().map(|p| format!("problem: {p}")));
    lines.join("\n")
}

fn client_name(client: Client) -> String {
    clap::ValueEnum::to_possible_value(&client)
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
