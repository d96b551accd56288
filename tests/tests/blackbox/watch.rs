//! The live index: `minirag-mcp watch` (and `RAG_WATCH=1` in the MCP
//! server) on real files, with real OS events, driven through the binary.
//! Each change is awaited through the watcher's own line for it, never a
//! sleep; the time from the last write to that line is measured.

use std::time::{Duration, Instant};

use minirag_blackbox::mcp_client::ListChanged;
use minirag_blackbox::watcher::WatchProcess;
use minirag_blackbox::Corpus;
use serde_json::{json, Value};

/// The bound: searchable, or gone, within 2 s of the last write.
const APPLIED_WITHIN: Duration = Duration::from_secs(2);
/// How long a test waits for a line before it fails (the catch-up sync
/// loads the model first).
const PATIENCE: Duration = Duration::from_secs(60);

fn applied(v: &Value) -> bool {
    v["event"] == "applied"
}

fn count(v: &Value, key: &str) -> u64 {
    v["counts"][key].as_u64().unwrap_or(0)
}

fn top_source(c: &Corpus, query: &str) -> Option<String> {
    let (code, v, err) = c.json(&["query", query, "--top-k", "1"]);
    assert_eq!(code, 0, "{err}");
    v["results"][0]["source"].as_str().map(str::to_string)
}

/// Runs `change`, waits for the applied line whose counts satisfy
/// `wanted`, and returns how long that took after the change returned.
fn apply(w: &WatchProcess, change: impl FnOnce(), wanted: impl Fn(&Value) -> bool) -> Duration {
    change();
    let written = Instant::now();
    w.until(PATIENCE, |v| applied(v) && wanted(v));
    written.elapsed()
}

#[test]
fn each_kind_of_change_is_applied_within_two_seconds() {
    let c = Corpus::new(&[("keep.md", "# Keep\n\nThe lighthouse keeper logs storms.")]);
    let outside = c.dir.path().join("outside");
    std::fs::create_dir_all(outside.join("album")).unwrap();
    std::fs::write(
        outside.join("album/tracks.md"),
        "# Tracks\n\nThe saxophone solo opens side two.",
    )
    .unwrap();
    let w = WatchProcess::start(&c, &[]);
    let first = w.until(PATIENCE, applied);
    assert_eq!(count(first.last().unwrap(), "ingested"), 1, "{first:?}");

    let mut took = Vec::new();
    let new = c.root.join("new.md");
    took.push((
        "create",
        apply(
            &w,
            || std::fs::write(&new, "# New\n\nA pelican crossed the harbour.").unwrap(),
            |v| count(v, "ingested") == 1,
        ),
    ));
    assert_eq!(top_source(&c, "pelican harbour"), Some(c.path("new.md")));

    took.push((
        "edit",
        apply(
            &w,
            || std::fs::write(&new, "# New\n\nA cormorant dried its wings.").unwrap(),
            |v| count(v, "ingested") == 1,
        ),
    ));
    let (_, q, _) = c.json(&["query", "cormorant wings", "--top-k", "1"]);
    assert!(
        q["results"][0]["text"]
            .as_str()
            .unwrap()
            .contains("cormorant"),
        "{q}"
    );

    // A rename changes the name: the spec's move rule needs the same name
    // and bytes, so it is a delete plus an ingest.
    let renamed = c.root.join("renamed.md");
    took.push((
        "rename",
        apply(
            &w,
            || std::fs::rename(&new, &renamed).unwrap(),
            |v| count(v, "ingested") == 1 && count(v, "deleted") == 1,
        ),
    ));
    assert_eq!(
        top_source(&c, "cormorant wings"),
        Some(c.path("renamed.md"))
    );

    // Into another folder under the same name: a move, nothing re-read.
    std::fs::create_dir(c.root.join("archive")).unwrap();
    let archived = c.root.join("archive/renamed.md");
    took.push((
        "move",
        apply(
            &w,
            || std::fs::rename(&renamed, &archived).unwrap(),
            |v| count(v, "moved") == 1,
        ),
    ));
    assert_eq!(
        top_source(&c, "cormorant wings"),
        Some(c.path("archive/renamed.md"))
    );

    took.push((
        "delete",
        apply(
            &w,
            || std::fs::remove_file(&archived).unwrap(),
            |v| count(v, "deleted") == 1,
        ),
    ));
    assert_ne!(
        top_source(&c, "cormorant wings"),
        Some(c.path("archive/renamed.md"))
    );

    let album = c.root.join("album");
    took.push((
        "folder in",
        apply(
            &w,
            || std::fs::rename(outside.join("album"), &album).unwrap(),
            |v| count(v, "ingested") == 1,
        ),
    ));
    assert_eq!(
        top_source(&c, "saxophone solo"),
        Some(c.path("album/tracks.md"))
    );

    took.push((
        "folder out",
        apply(
            &w,
            || std::fs::rename(&album, outside.join("album")).unwrap(),
            |v| count(v, "deleted") == 1,
        ),
    ));
    assert_ne!(
        top_source(&c, "saxophone solo"),
        Some(c.path("album/tracks.md"))
    );

    eprintln!("applied after the last write: {took:?}");
    for (what, t) in took {
        assert!(t <= APPLIED_WITHIN, "{what} took {t:?}");
    }
}

#[test]
fn a_thousand_new_files_arrive_in_a_few_batches() {
    let c = Corpus::new(&[("seed.md", "# Seed\n\nFirst note.")]);
    let w = WatchProcess::start(&c, &[]);
    w.until(PATIENCE, applied);
    let bulk = c.root.join("bulk");
    std::fs::create_dir(&bulk).unwrap();
    for i in 0..1000 {
        std::fs::write(
            bulk.join(format!("n{i:04}.md")),
            format!("# Note {i}\n\nItem number {i} of the bulk import."),
        )
        .unwrap();
    }
    let mut ingested = 0;
    let mut batches = 0;
    while ingested < 1000 {
        let lines = w.until(Duration::from_secs(300), applied);
        let last = lines.last().unwrap();
        ingested += count(last, "ingested");
        batches += 1;
    }
    eprintln!("1000 files applied in {batches} batches");
    assert_eq!(ingested, 1000);
    assert!(batches <= 5, "{batches} batches for one burst");
    let (_, status, _) = c.json(&["status"]);
    assert_eq!(status["sourceCount"], 1001, "{status}");
}

#[test]
fn an_editor_save_reindexes_once() {
    let c = Corpus::new(&[("draft.md", "# Draft\n\nThe first version.")]);
    let w = WatchProcess::start(&c, &[]);
    w.until(PATIENCE, applied);
    // vim/VS Code style: write a temp file beside, then rename it over the original.
    let tmp = c.root.join(".draft.md.swp");
    std::fs::write(&tmp, "# Draft\n\nThe second version mentions a walrus.").unwrap();
    std::fs::rename(&tmp, c.root.join("draft.md")).unwrap();
    let save = w.until(PATIENCE, applied);
    let save = save.last().unwrap();
    assert_eq!(count(save, "ingested"), 1, "{save}");
    // The next line belongs to the next change: the save caused one sync.
    std::fs::write(c.root.join("later.md"), "# Later\n\nAn unrelated note.").unwrap();
    let next: Vec<Value> = w
        .until(PATIENCE, applied)
        .into_iter()
        .filter(|v| v["event"] != "working")
        .collect();
    assert_eq!(
        next.len(),
        1,
        "extra syncs between the save and the next change: {next:?}"
    );
    assert_eq!(count(&next[0], "ingested"), 1, "{next:?}");
    assert_eq!(
        count(&next[0], "skipped"),
        1,
        "draft.md is not re-read: {next:?}"
    );
    assert_eq!(top_source(&c, "walrus"), Some(c.path("draft.md")));
}

#[test]
fn the_watch_limit_falls_back_to_polling_and_says_so() {
    let c = Corpus::new(&[("a.md", "# A\n\nAnchors hold the ship.")]);
    let w = WatchProcess::start(&c, &[("MINIRAG_SIMULATE_WATCH_LIMIT", "1")]);
    let first = w.until(PATIENCE, applied);
    let first = first.last().unwrap();
    assert_eq!(first["mode"], "polling", "{first}");
    assert!(
        first["watchNotice"]
            .as_str()
            .unwrap()
            .contains("max_user_watches"),
        "{first}"
    );
    std::fs::write(c.root.join("b.md"), "# B\n\nBarnacles on the hull.").unwrap();
    w.until(PATIENCE, |v| applied(v) && count(v, "ingested") == 1);
    assert_eq!(top_source(&c, "barnacles hull"), Some(c.path("b.md")));
}

/// The server's `status` once its watcher's catch-up sync is done and it
/// listens.
async fn caught_up(client: &rmcp::Peer<rmcp::RoleClient>) -> Value {
    loop {
        let s = minirag_blackbox::mcp_client::call_json(client, "status", json!({})).await;
        if s["watch"]["lastChangeAt"].is_string() {
            return s;
        }
        tokio::task::yield_now().await;
    }
}

#[test]
fn the_mcp_server_watches_under_rag_watch_and_reports_it() {
    let c = Corpus::new(&[("a.md", "# A\n\nAnchors hold the ship.")]);
    let mut env = c.env.clone();
    env.push(("RAG_WATCH".into(), "1".into()));
    env.push(("MINIRAG_SIMULATE_WATCH_LIMIT".into(), "1".into()));
    let server = minirag_blackbox::http_server::HttpServer::start(&env, &c.root, &[]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = minirag_blackbox::mcp_client::connect_http((), &server.url, None).await;
        // The watcher's catch-up sync indexes a.md; then a new file follows.
        let status = caught_up(&client).await;
        assert_eq!(status["watch"]["active"], true, "{status}");
        assert_eq!(status["watch"]["mode"], "polling", "{status}");
        assert!(status["watch"]["notice"]
            .as_str()
            .unwrap()
            .contains("max_user_watches"));
        std::fs::write(c.root.join("b.md"), "# B\n\nBarnacles on the hull.").unwrap();
        loop {
            let q = minirag_blackbox::mcp_client::call_json(
                &client,
                "query_documents",
                json!({"query": "barnacles hull", "topK": 1}),
            )
            .await;
            if q["results"][0]["source"] == c.path("b.md") {
                break;
            }
            tokio::task::yield_now().await;
        }
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_restarted_watcher_catches_up_after_kill_9() {
    let c = Corpus::new(&[
        ("stay.md", "# Stay\n\nThe orchard grows pears."),
        ("gone.md", "# Gone\n\nThe quarry closed."),
    ]);
    let mut w = WatchProcess::start(&c, &[]);
    w.until(PATIENCE, applied);
    w.child.kill().unwrap();
    w.child.wait().unwrap();
    std::fs::remove_file(c.root.join("gone.md")).unwrap();
    std::fs::write(
        c.root.join("while-down.md"),
        "# Down\n\nA heron waited by the weir.",
    )
    .unwrap();
    let w = WatchProcess::start(&c, &[]);
    let lines = w.until(PATIENCE, applied);
    let catch_up = lines.last().unwrap();
    assert_eq!(
        (
            count(catch_up, "ingested"),
            count(catch_up, "deleted"),
            count(catch_up, "skipped")
        ),
        (1, 1, 1),
        "{catch_up}"
    );
    assert_eq!(top_source(&c, "heron weir"), Some(c.path("while-down.md")));
}

#[test]
fn another_process_can_sync_while_a_watcher_runs() {
    let c = Corpus::new(&[("a.md", "# A\n\nAnchors hold the ship.")]);
    let w = WatchProcess::start(&c, &[]);
    w.until(PATIENCE, applied);
    // An idle watcher holds no lock.
    let (code, done, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(done["counts"]["skipped"], 1, "{done}");
    // While another process syncs, the watcher waits, then catches up.
    let held = c.hold_sync_lock();
    std::fs::write(c.root.join("b.md"), "# B\n\nBarnacles on the hull.").unwrap();
    let waiting = w.until(PATIENCE, |v| v["event"] == "waiting");
    assert!(
        waiting.last().unwrap()["reason"]
            .as_str()
            .unwrap()
            .contains("4242"),
        "{waiting:?}"
    );
    drop(held);
    w.until(PATIENCE, |v| applied(v) && count(v, "ingested") == 1);
    assert_eq!(top_source(&c, "barnacles hull"), Some(c.path("b.md")));
}

/// Makes `change`, then waits for announcements made after it until
/// `list_files` satisfies `wanted`; fails if none comes within [`PATIENCE`].
async fn announced(
    client: &rmcp::Peer<rmcp::RoleClient>,
    heard: &mut tokio::sync::watch::Receiver<u64>,
    change: impl FnOnce(),
    wanted: impl Fn(&Value) -> bool,
) {
    heard.borrow_and_update();
    change();
    loop {
        tokio::time::timeout(PATIENCE, heard.changed())
            .await
            .expect("no notifications/resources/list_changed")
            .unwrap();
        let list = minirag_blackbox::mcp_client::call_json(client, "list_files", json!({})).await;
        if wanted(&list) {
            return;
        }
    }
}

fn lists(name: &'static str) -> impl Fn(&Value) -> bool {
    move |list| {
        list["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["source"].as_str().unwrap().ends_with(name) && f["state"] != "not_ingested")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_2025_session_hears_the_changes_the_watcher_makes() {
    use rmcp::ServiceExt;
    let c = Corpus::new(&[("a.md", "# A\n\nAnchors hold the ship.")]);
    let (tx, mut heard) = tokio::sync::watch::channel(0);
    let client = ListChanged {
        heard: tx,
        version: Some(rmcp::model::ProtocolVersion::V_2025_11_25),
    }
    .serve(minirag_blackbox::mcp_client::transport(
        &c,
        &[("RAG_WATCH", "1")],
    ))
    .await
    .unwrap();
    caught_up(&client).await;
    let b = c.root.join("b.md");
    let write = || std::fs::write(&b, "# B\n\nBarnacles on the hull.").unwrap();
    announced(&client, &mut heard, write, lists("b.md")).await;
    let delete = || std::fs::remove_file(&b).unwrap();
    announced(&client, &mut heard, delete, |l| !lists("b.md")(l)).await;
    client.cancel().await.unwrap();
}

/// `watch` says what it does while it does it: during the catch-up sync a
/// line per file, naming it, and the same for each later change (issue 76,
/// item 11).
#[test]
fn watch_names_each_file_while_it_works() {
    let c = Corpus::new(&[
        ("a.md", "# A\n\nAnchors hold the ship."),
        ("b.md", "# B\n\nBuoys mark the channel."),
    ]);
    let w = WatchProcess::start(&c, &[]);
    let first = w.until(PATIENCE, applied);
    let working: Vec<&str> = first
        .iter()
        .filter(|v| v["event"] == "working")
        .filter_map(|v| v["line"].as_str())
        .collect();
    for name in ["a.md", "b.md"] {
        assert!(
            working
                .iter()
                .any(|l| l.starts_with("ingested ") && l.ends_with(&c.path(name))),
            "{name}: {first:?}"
        );
    }
    let seen = {
        std::fs::write(c.root.join("c.md"), "# C\n\nCranes lift the crates.").unwrap();
        w.until(PATIENCE, |v| applied(v) && count(v, "ingested") == 1)
    };
    assert!(
        seen.iter()
            .any(|v| v["line"] == format!("ingested {}", c.path("c.md"))),
        "{seen:?}"
    );
}
