//! The default model: a new index gets intfloat/multilingual-e5-small with
//! its prefixes; an index embedded with the previous default keeps it after
//! the upgrade, says how to switch, and re-embeds only when told to.
//!
//! Both models come from a hub cache laid out as huggingface_hub lays it
//! (`models--org--name/snapshots/<rev>`), with the hub switched off: the
//! previous default's files are real MiniLM weights under its name (its own
//! are unreachable here), the new default's the converted e5.

use std::path::Path;

use minirag_blackbox::{model_dir, multilingual_model_dir, Corpus};
use serde_json::Value;

const NEW: &str = "intfloat/multilingual-e5-small";
const PREVIOUS: &str = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2";

/// `files` copied into the cache as hub model `name`.
fn cache(cache_dir: &Path, name: &str, files: &Path) {
    let snapshot = cache_dir
        .join(format!("models--{}", name.replace('/', "--")))
        .join("snapshots/main");
    copy_tree(files, &snapshot);
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A corpus whose model comes from its hub cache only, MODEL_NAME unset.
fn from_the_cache(files: &[(&str, &str)]) -> Corpus {
    let mut c = Corpus::new(files);
    c.env
        .retain(|(k, _)| k != "MODEL_PATH" && k != "MODEL_NAME");
    c.env.push(("HF_HUB_OFFLINE".into(), "1".into()));
    c
}

fn cache_dir(c: &Corpus) -> std::path::PathBuf {
    c.dir.path().join("cache")
}

/// `minirag-mcp <command> --json` with `extra` variables, which must succeed.
fn run_json(c: &Corpus, command: &str, extra: &[(&str, &str)]) -> Value {
    let out = c.cli_env(&[command, "--json"], extra);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn status(c: &Corpus, extra: &[(&str, &str)]) -> Value {
    run_json(c, "status", extra)
}

fn sync(c: &Corpus, extra: &[(&str, &str)]) -> Value {
    run_json(c, "sync", extra)
}

#[test]
fn a_new_index_gets_multilingual_e5_with_its_prefixes() {
    let c = from_the_cache(&[("a.md", "# Отчёт\n\nГодовой отчёт о продажах.")]);
    cache(&cache_dir(&c), NEW, &multilingual_model_dir());
    let s = status(&c, &[]);
    assert_eq!(s["model"], NEW, "{s}");
    assert_eq!(s["queryPrefix"], "query: ", "{s}");
    assert_eq!(s["passagePrefix"], "passage: ", "{s}");
    assert!(s.get("modelNotice").is_none(), "{s}");
    sync(&c, &[]);
    let s = status(&c, &[]);
    assert_eq!(s["model"], NEW, "{s}");
    assert_eq!(s["vectorlessChunkCount"], 0, "{s}");
    let out = c.cli(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let model = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "model")
        .unwrap();
    let detail = model["message"].as_str().unwrap();
    assert!(detail.starts_with(NEW), "{model}");
    assert!(detail.contains("\"query: \""), "{model}");
}

#[test]
fn an_index_of_the_previous_default_keeps_it_until_told_to_switch() {
    let c = from_the_cache(&[
        ("a.md", "# Alpha\n\nThe quarterly sales report."),
        ("b.md", "# Bravo\n\nNotes on the garden."),
    ]);
    cache(&cache_dir(&c), PREVIOUS, &model_dir());
    cache(&cache_dir(&c), NEW, &multilingual_model_dir());
    // What the previous release did with MODEL_NAME unset.
    sync(&c, &[("MODEL_NAME", PREVIOUS)]);
    let before = status(&c, &[("MODEL_NAME", PREVIOUS)]);
    let old_vectors = before["vectorModel"].clone();
    assert!(old_vectors.is_string(), "{before}");
    assert!(before.get("modelNotice").is_none(), "{before}");

    // After the upgrade, MODEL_NAME still unset: the index keeps its model.
    let s = status(&c, &[]);
    assert_eq!(s["model"], PREVIOUS, "{s}");
    let notice = s["modelNotice"].as_str().unwrap_or_default();
    assert!(
        notice.contains(&format!("MODEL_NAME={NEW}")) && notice.contains("re-embeds 2 chunks"),
        "{s}"
    );
    let synced = sync(&c, &[]);
    assert_eq!(status(&c, &[])["vectorModel"], old_vectors, "{synced}");
    let out = c.cli(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(out.status.success(), "{report}");
    let choice = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "model choice")
        .unwrap_or_else(|| panic!("no model choice check: {report}"));
    assert_eq!(choice["level"], "warn", "{choice}");
    assert!(
        choice["message"].as_str().unwrap().contains(PREVIOUS),
        "{choice}"
    );
    // A query still finds by meaning with the kept model's vectors.
    let out = c.cli(&["query", "revenue figures", "--json"]);
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = hits["results"][0]["source"].as_str().unwrap_or_default();
    assert!(first.ends_with("a.md"), "{hits}");
    assert!(
        hits.get("notice").is_none(),
        "vectors in use, no keyword-only notice: {hits}"
    );

    // Told to switch: the next sync re-embeds with the new default.
    sync(&c, &[("MODEL_NAME", NEW)]);
    let after = status(&c, &[("MODEL_NAME", NEW)]);
    assert_eq!(after["model"], NEW, "{after}");
    assert_ne!(after["vectorModel"], old_vectors, "{after}");
    assert_eq!(after["vectorlessChunkCount"], 0, "{after}");
    assert!(after.get("modelNotice").is_none(), "{after}");
    // And with MODEL_NAME unset again, the index now holds the default's.
    let s = status(&c, &[]);
    assert_eq!(s["model"], NEW, "{s}");
    assert!(s.get("modelNotice").is_none(), "{s}");
}
