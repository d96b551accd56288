//! A first run that explains itself: `doctor`, `setup`, completions, and a
//! sync that says when it ran without a model. Real binary, real model.

use minirag_blackbox::Corpus;
use serde_json::Value;

fn doctor(c: &Corpus, extra: &[(&str, &str)]) -> (i32, Value) {
    let out = c.cli_env(&["doctor", "--json"], extra);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

fn level<'a>(v: &'a Value, name: &str) -> (&'a str, String) {
    let c = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {v}"));
    (
        c["level"].as_str().unwrap(),
        format!("{} {}", c["message"], c["fix"]),
    )
}

#[test]
fn doctor_passes_a_healthy_set_up_and_names_each_fault() {
    let c = Corpus::new(&[("a.md", "# A\n\nalpha beta")]);
    let (code, v) = doctor(&c, &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(level(&v, "model").0, "ok", "{v}");
    assert_eq!(level(&v, "disk").0, "ok", "{v}");

    // A missing model: fail, with the fix.
    let (code, v) = doctor(&c, &[("MODEL_PATH", "/nowhere/model")]);
    assert_eq!(code, 1);
    let (l, text) = level(&v, "model");
    assert_eq!(l, "fail");
    assert!(
        text.contains("/nowhere/model") && text.contains("MODEL_PATH"),
        "{text}"
    );

    // A bad config value: fail, naming the variable.
    let (code, v) = doctor(&c, &[("RAG_HYBRID_WEIGHT", "7")]);
    assert_eq!(code, 1);
    let (l, text) = level(&v, "config");
    assert_eq!(l, "fail");
    assert!(text.contains("RAG_HYBRID_WEIGHT"), "{text}");

    // A held sync lock: named with its holder.
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let lock = c.hold_sync_lock();
    let (code, v) = doctor(&c, &[]);
    assert_eq!(code, 0, "a held lock is a warning: {v}");
    let (l, text) = level(&v, "sync lock");
    assert_eq!(l, "warn");
    assert!(text.contains("4242"), "{text}");
    drop(lock);

    // A corrupt snapshot without the history to rebuild it: fail, with the file.
    let db = c.dir.path().join("index");
    std::fs::write(db.join("snapshot.meta"), b"MRSNAP02 this is not a snapshot").unwrap();
    let (code, v) = doctor(&c, &[]);
    assert_eq!(code, 1, "{v}");
    let (l, text) = level(&v, "index");
    assert_eq!(l, "fail");
    assert!(
        text.contains("snapshot.meta") && text.contains("corrupt"),
        "{text}"
    );
}

#[test]
fn setup_write_merges_into_an_existing_client_file() {
    let c = Corpus::new(&[("a.md", "# A\n\nalpha")]);
    let file = c.dir.path().join("client/.mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        r#"{"mcpServers": {"other": {"command": "/bin/other"}}, "keep": true}"#,
    )
    .unwrap();
    let f = file.display().to_string();
    let out = c.cli(&["setup", "claude", "--write", "--file", &f]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["mcpServers"]["other"]["command"], "/bin/other", "{v}");
    assert_eq!(v["keep"], true);
    let ours = &v["mcpServers"]["minirag"];
    assert!(
        ours["command"].as_str().unwrap().ends_with("minirag-mcp"),
        "{v}"
    );
    let roots: Vec<String> =
        serde_json::from_str(ours["env"]["BASE_DIRS"].as_str().unwrap()).unwrap();
    assert_eq!(roots, [c.root.display().to_string()]);
    // Writing again replaces our entry only.
    let out = c.cli(&["setup", "claude", "--write", "--file", &f]);
    assert_eq!(out.status.code(), Some(0));
    let again: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(again, v);

    // A broken file is named and left alone.
    std::fs::write(&file, "{broken").unwrap();
    let out = c.cli(&["setup", "cursor", "--write", "--file", &f]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{broken");
}

#[test]
fn a_sync_without_a_model_says_so_on_stderr_and_in_json() {
    let c = Corpus::new(&[("a.md", "# A\n\nalpha")]);
    let out = c.cli_env(&["sync", "--json"], &[("MODEL_PATH", "/nowhere/model")]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].contains("without the embedding model") && notes[0].contains("MODEL_PATH"));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["notice"]
            .as_str()
            .unwrap()
            .contains("next sync with a working model"),
        "{v}"
    );
    assert_eq!(v["counts"]["ingested"], 1);
}

#[test]
fn completions_and_man_page_come_from_clap() {
    let c = Corpus::new(&[]);
    for shell in ["bash", "zsh", "fish"] {
        let out = c.cli(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(
            script.contains("doctor") && script.contains("setup"),
            "{shell}"
        );
    }
    let out = c.cli(&["man"]);
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains(".TH minirag-mcp 1") && page.contains("doctor"),
        "{page}"
    );
    assert!(
        page.contains(".SH ENVIRONMENT")
            && page.contains("HF_HUB_OFFLINE")
            && page.contains("EMBED_URL"),
        "{page}"
    );
    // A page per command, each with its own flags and the environment.
    for (command, flag) in [
        ("query", "top\\-k"),
        ("sync", "db\\-path"),
        ("setup", "write"),
    ] {
        let out = c.cli(&["man", command]);
        let page = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{command}");
        assert!(
            page.contains(&format!(".TH minirag-mcp-{command} 1"))
                && page.contains(flag)
                && page.contains(".SH ENVIRONMENT"),
            "{command}: {page}"
        );
    }
    let out = c.cli(&["man", "nonsense"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no command 'nonsense'") && err.contains("query"),
        "{err}"
    );
}

/// A flag is offered only where it acts, and every flag says what it does.
#[test]
fn flags_are_offered_where_they_act_each_with_help() {
    let c = Corpus::new(&[]);
    let help = |args: &[&str]| {
        let mut all = args.to_vec();
        all.push("--help");
        String::from_utf8_lossy(&c.cli(&all).stdout).into_owned()
    };
    for command in ["man", "completions"] {
        let text = help(&[command]);
        for flag in ["--db-path", "--model-name", "--json", "--base-dir"] {
            assert!(!text.contains(flag), "{command} offers {flag}: {text}");
        }
    }
    let setup = help(&["setup"]);
    assert!(
        setup.contains("--db-path") && !setup.contains("--json"),
        "{setup}"
    );
    for command in [
        "query",
        "read",
        "read-neighbors",
        "list",
        "delete",
        "ingest-url",
        "sync",
    ] {
        let text = help(&[command]);
        let options = text.split("Options:").nth(1).unwrap_or_default();
        let mut lines = options.lines().filter(|l| !l.trim().is_empty()).peekable();
        while let Some(line) = lines.next() {
            let flag = line.trim_start();
            if flag.starts_with('-') {
                let own_help = flag.split("  ").filter(|p| !p.trim().is_empty()).count() > 1;
                let next_is_help = lines
                    .peek()
                    .is_some_and(|n| !n.trim_start().starts_with('-'));
                assert!(own_help || next_is_help, "{command}: {flag} has no help");
            }
        }
    }
}

#[test]
fn a_reader_that_goes_away_ends_the_cli_quietly() {
    let c = Corpus::new(&[("a.md", "# A\n\nalpha")]);
    for args in [&["man"][..], &["status", "--json"][..]] {
        let mut child = std::process::Command::new(minirag_blackbox::binary())
            .args(args)
            .current_dir(&c.root)
            .env_clear()
            .envs(c.env.iter().cloned())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before anything is written
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
}

/// `doctor` names the prefixes in use and where they came from, and a
/// changed prefix is a changed model: the next sync re-embeds every file
/// and converts none again.
#[test]
fn doctor_shows_the_prefixes_and_a_changed_prefix_re_embeds() {
    let c = Corpus::new(&[
        ("a.md", "# A\n\nalpha beta"),
        ("b.md", "# B\n\ngamma delta"),
    ]);
    let (code, v) = doctor(&c, &[]);
    assert_eq!(code, 0, "{v}");
    let (_, text) = level(&v, "model");
    assert!(
        text.contains("query prefix \\\"\\\"") && text.contains("known-model table (all-minilm)"),
        "{text}"
    );
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");

    let prefix = [("MODEL_PASSAGE_PREFIX", "passage: ")];
    let (code, v) = doctor(&c, &prefix);
    assert_eq!(code, 0, "{v}");
    let (_, text) = level(&v, "model");
    assert!(
        text.contains("passage prefix \\\"passage: \\\"") && text.contains("MODEL_PASSAGE_PREFIX"),
        "{text}"
    );
    let out = c.cli_env(&["sync", "--json"], &prefix);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let counts = &v["counts"];
    assert_eq!(counts["ingested"], 0, "nothing converted again: {counts}");
    assert_eq!(counts["reembedded"], 2, "every file re-embedded: {counts}");
    // The same prefix again: nothing to do.
    let out = c.cli_env(&["sync", "--json"], &prefix);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["counts"]["reembedded"], 0, "{}", v["counts"]);
}

/// MODEL_PRECISION=int8 is a changed model: the next sync re-embeds every
/// file and converts none again, `doctor` names the precision, search
/// still finds the document, and a value it does not know is refused by
/// name with the accepted ones.
#[test]
fn int8_precision_re_embeds_and_doctor_names_it() {
    let c = Corpus::new(&[
        ("a.md", "# Tides\n\nThe moon pulls the oceans into tides."),
        ("b.md", "# Bread\n\nYeast makes the dough rise overnight."),
    ]);
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let int8 = [("MODEL_PRECISION", "int8")];
    let out = c.cli_env(&["sync", "--json"], &int8);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["counts"]["ingested"], 0, "{}", v["counts"]);
    assert_eq!(v["counts"]["reembedded"], 2, "{}", v["counts"]);
    let (code, d) = doctor(&c, &int8);
    assert_eq!(code, 0, "{d}");
    let (_, text) = level(&d, "model");
    assert!(text.contains("dense layers in int8"), "{text}");
    let out = c.cli_env(&["query", "lunar gravity and sea water", "--json"], &int8);
    let q: Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = q["results"][0]["source"].as_str().unwrap_or_default();
    assert!(first.ends_with("a.md"), "the tides file ranks first: {q}");
    let out = c.cli_env(&["sync"], &[("MODEL_PRECISION", "int4")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("MODEL_PRECISION") && err.contains("int4") && err.contains("int8"),
        "{err}"
    );
}
