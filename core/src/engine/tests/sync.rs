//! Sync over the engine: phases, batches, cancel, model changes and settling.

use super::*;

// ------------------------------------------------------------ sync

fn states(f: &Fixture) -> Vec<&'static str> {
    f.engine
        .list_files(&[], Default::default())
        .unwrap()
        .files
        .iter()
        .map(|x| x.state.as_str())
        .collect()
}

fn sync(f: &Fixture) -> crate::sync::SyncReport {
    f.engine
        .sync(None, &|_| {}, &std::sync::atomic::AtomicBool::new(false))
        .unwrap()
}

#[test]
fn a_finished_sync_settles_the_index_and_a_cancelled_one_leaves_it_to_the_next() {
    let f = fixture();
    f.files.put("/docs/a.md", "# Alpha\n\nApples are red.", 1.0);
    let lines = Mutex::new(Vec::new());
    let cancelled = std::sync::atomic::AtomicBool::new(true);
    let progress = |s: crate::sync::run::Step<'_>| lines.lock().unwrap().push(s.line.to_string());
    assert!(f.engine.sync(None, &progress, &cancelled).is_err());
    assert_eq!(f.index.settled.load(Ordering::SeqCst), 0);

    let r = sync(&f);
    assert_eq!(f.index.settled.load(Ordering::SeqCst), 1);
    *f.index.settle_says.lock().unwrap() = Some("building the stand-in's graph".into());
    assert!(r.notices.is_empty(), "{:?}", r.notices);
    f.engine
        .sync(None, &progress, &std::sync::atomic::AtomicBool::new(false))
        .unwrap();
    assert!(lines
        .lock()
        .unwrap()
        .contains(&"building the stand-in's graph".to_string()));

    // A failed upkeep is a notice: the sync's files are in all the same.
    f.index.settle_fails.store(true, Ordering::SeqCst);
    f.files.put("/docs/b.md", "# Beta\n\nBananas.", 1.0);
    let r = sync(&f);
    assert_eq!(r.counts.ingested, 1);
    assert!(
        r.notices
            .iter()
            .any(|n| n.contains("the graph build ran out of memory") && n.contains("next sync")),
        "{:?}",
        r.notices
    );
}

#[test]
fn a_model_change_is_a_re_embed_that_sync_and_list_files_agree_on() {
    let f = fixture();
    f.files.put("/docs/a.md", "# Alpha\n\nApples are red.", 1.0);
    f.files
        .put("/docs/b.md", "# Beta\n\nBananas are yellow.", 1.0);
    let r = sync(&f);
    assert_eq!((r.counts.scanned, r.counts.ingested), (2, 2));
    assert_eq!(states(&f), ["ingested", "ingested"]);

    f.embedder.other_model.store(true, Ordering::SeqCst);
    assert_eq!(
        states(&f),
        ["stale", "stale"],
        "list_files sees the model change"
    );
    let q = f.engine.query(query("apples", 5, &[])).unwrap();
    assert!(
        q.notice.as_deref().unwrap_or("").contains("another model"),
        "old vectors are not compared with the new model's query: {:?}",
        q.notice
    );
    assert_eq!(
        q.results[0].source, "/docs/a.md",
        "keyword side still answers"
    );

    let embedded_before = f.embedder.embedded.load(Ordering::SeqCst);
    let r = sync(&f);
    assert_eq!(
        (r.counts.reembedded, r.counts.ingested, r.counts.failed),
        (2, 0, 0),
        "{r:?}"
    );
    assert!(f.embedder.embedded.load(Ordering::SeqCst) > embedded_before);
    assert_eq!(states(&f), ["ingested", "ingested"]);
    let rec = f
        .index
        .read()
        .unwrap()
        .source("/docs/b.md")
        .unwrap()
        .unwrap();
    assert_eq!(rec.embedded_with.as_deref(), Some("hash-16b"));
    let q = f.engine.query(query("apples", 5, &[])).unwrap();
    assert_eq!(q.notice, None);
    assert!(q.results[0].distance.is_some(), "vectors answer again");
    let r = sync(&f);
    assert_eq!((r.counts.skipped, r.counts.reembedded), (2, 0));
}

#[test]
fn sync_reports_too_large_files_moves_and_deletions() {
    let f = fixture_with(FakeEmbedder::new(), |s| s.max_file_size = 40);
    f.files.put("/docs/a/soup.md", "# Soup\n\nLeek soup.", 1.0);
    f.files.put("/docs/gone.md", "# Gone\n\nSoon gone.", 1.0);
    f.files.put("/docs/big.md", &"x".repeat(41), 1.0);
    let r = sync(&f);
    assert_eq!((r.counts.ingested, r.counts.failed), (2, 1));
    assert!(
        r.errors[0].1.contains("MAX_FILE_SIZE is 40"),
        "{:?}",
        r.errors
    );

    f.files.remove("/docs/a/soup.md");
    f.files.remove("/docs/gone.md");
    f.files.put("/docs/b/soup.md", "# Soup\n\nLeek soup.", 2.0);
    let r = sync(&f);
    // The stand-in index cannot move, so the move falls back to an ingest.
    assert_eq!((r.counts.deleted, r.counts.ingested), (2, 1), "{r:?}");
    assert_eq!(
        states(&f),
        ["ingested", "not_ingested"],
        "b/soup.md, big.md"
    );
}

#[test]
fn a_cancelled_sync_stops_between_files_and_keeps_what_it_did() {
    let f = fixture();
    for i in 0..5 {
        f.files.put(
            &format!("/docs/{i}.md"),
            &format!("# N{i}\n\nnote {i}"),
            1.0,
        );
    }
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let err = f
        .engine
        .sync(
            None,
            &|step| {
                if step.done == 2 {
                    cancel.store(true, Ordering::SeqCst)
                }
            },
            &cancel,
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("cancelled after 2 of 5 files"),
        "{err}"
    );
    // The two kept files were stored keyword-only (their embedding phase
    // never came): the next sync embeds them without converting them again.
    let r = sync(&f);
    assert_eq!((r.counts.reembedded, r.counts.ingested), (2, 3), "{r:?}");
    let r = sync(&f);
    assert_eq!(r.counts.skipped, 5);
}

#[test]
fn a_sync_without_a_model_says_so_and_stores_text_only() {
    let mut e = FakeEmbedder::new();
    e.unavailable = true;
    let f = fixture_with(e, |_| {});
    f.files.put("/docs/a.md", "# Alpha\n\nApples are red.", 1.0);
    let r = sync(&f);
    assert_eq!(r.counts.ingested, 1);
    let notice = r.notices.join(" ");
    assert!(
        notice.contains("without the embedding model") && notice.contains("MODEL_PATH"),
        "{notice}"
    );
    let rec = f
        .index
        .read()
        .unwrap()
        .source("/docs/a.md")
        .unwrap()
        .unwrap();
    assert_eq!(rec.embedded_with, None);
}

#[test]
fn a_sync_indexes_every_new_file_for_keywords_before_embedding_any() {
    let f = fixture();
    for i in 0..3 {
        f.files.put(
            &format!("/docs/{i}.md"),
            &format!("# N{i}\n\nnote {i}"),
            1.0,
        );
    }
    let steps = Mutex::new(Vec::new());
    let r = f
        .engine
        .sync(
            None,
            &|s| {
                let vectorless = f
                    .index
                    .read()
                    .unwrap()
                    .stats()
                    .unwrap()
                    .vectorless_chunk_count;
                steps
                    .lock()
                    .unwrap()
                    .push((s.phase, s.done, s.total, vectorless));
            },
            &std::sync::atomic::AtomicBool::new(false),
        )
        .unwrap();
    assert_eq!((r.counts.ingested, r.counts.reembedded), (3, 0), "{r:?}");
    let steps = steps.into_inner().unwrap();
    let phases: Vec<_> = steps.iter().map(|s| s.0).collect();
    use crate::sync::run::Phase::{Embedding, Indexing};
    assert_eq!(
        phases,
        [Indexing, Indexing, Indexing, Embedding, Embedding, Embedding]
    );
    // When indexing ends every chunk is stored, none embedded yet; the
    // embedding phase counts chunks up to the total.
    assert_eq!(steps[2].3, 3, "all three keyword-only before any vector");
    assert_eq!((steps[5].1, steps[5].2), (3, 3));
    assert_eq!(
        f.index
            .read()
            .unwrap()
            .stats()
            .unwrap()
            .vectorless_chunk_count,
        0
    );
}

#[test]
fn a_large_source_is_embedded_in_batches_that_report_progress_and_stop_on_cancel() {
    let f = fixture();
    // One heading per paragraph: each paragraph is its own unit.
    let body: String = (0..600)
        .map(|i| format!("## Part {i}\n\nRow {i} of the large export.\n\n"))
        .collect();
    f.files.put("/docs/big.md", &body, 1.0);
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let lines = Mutex::new(Vec::new());
    let err = f
        .engine
        .sync(
            None,
            &|s| {
                if s.line.starts_with("embedding ") {
                    lines
                        .lock()
                        .unwrap()
                        .push((s.done, s.total, s.line.to_string()));
                    // Cancel after the first batch: the sync stops within one.
                    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            },
            &cancel,
        )
        .unwrap_err();
    let lines = lines.into_inner().unwrap();
    let total = f.index.read().unwrap().stats().unwrap().chunk_count;
    assert!(
        total > 2 * crate::engine::EMBED_BATCH as u64,
        "{total} chunks"
    );
    let batch = crate::engine::EMBED_BATCH as u64;
    assert_eq!(
        lines,
        [(
            batch,
            total,
            format!("embedding /docs/big.md: {batch} / {total} chunks")
        )]
    );
    assert!(
        matches!(err, EngineError::Cancelled { done, total: t, .. } if done == batch && t == total),
        "{err:?}"
    );
    // The fake index keeps batches until the last: nothing embedded yet,
    // and the next sync embeds the whole source again, converting nothing.
    let r = sync(&f);
    assert_eq!((r.counts.ingested, r.counts.reembedded), (0, 1), "{r:?}");
    assert_eq!(
        f.index
            .read()
            .unwrap()
            .stats()
            .unwrap()
            .vectorless_chunk_count,
        0
    );
}
