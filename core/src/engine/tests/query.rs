//! Query: validation, fusion, scope, notices and explain.

use super::*;

#[test]
fn query_validation_happens_before_any_search() {
    let f = fixture();
    assert_eq!(
        f.engine.query(query("  ", 8, &[])).unwrap_err().to_string(),
        "query must not be empty"
    );
    for k in [0, -5] {
        let msg = f.engine.query(query("x", k, &[])).unwrap_err().to_string();
        assert_eq!(msg, format!("topK must be at least 1, got {k}"));
    }
    assert!(matches!(
        f.engine.query(query("x", 8, &["".into()])),
        Err(EngineError::Query(QueryError::EmptyScope))
    ));
    assert_eq!(f.index.searches.load(Ordering::SeqCst), 0);
    f.engine.query(query("x", 100_000_000, &[])).unwrap();
    assert_eq!(
        f.index.windows.lock().unwrap().as_slice(),
        [400],
        "topK clamped to 100 → window 400"
    );
}

#[test]
fn hits_carry_sources_display_paths_and_shared_parents() {
    let f = fixture_with(FakeEmbedder::new(), |s| s.budget = 30);
    f.engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h", 1.0)
        .unwrap();
    f.engine
        .ingest_file(
            "/docs/sub/other.md",
            b"# Other\n\nUnrelated gardening notes about tomatoes.",
            "h",
            1.0,
        )
        .unwrap();
    let r = f
        .engine
        .query(query("error socket server retry log", 8, &[]))
        .unwrap();
    assert!(r.results.len() >= 3);
    assert_eq!(r.results[0].source, "/docs/guide.md");
    assert_eq!(r.sources[0].source, "/docs/guide.md");
    assert_eq!(r.sources[0].display_path, "guide.md");
    assert_eq!(
        r.sources.iter().map(|s| s.hits).sum::<usize>(),
        r.results.len()
    );
    assert!(
        r.parents.len() < r.results.len(),
        "several hits share a parent"
    );
    for hit in &r.results {
        let pid = hit.parent_id.as_ref().unwrap();
        assert!(pid.starts_with(&format!("{}#p", hit.source)));
        let (_, text) = r
            .parents
            .iter()
            .find(|(id, _)| id == pid)
            .expect("parent of every hit");
        let body = hit.text.split("\n\n").last().unwrap();
        assert!(text.contains(body), "hit text lies in its section");
    }
    let ids: Vec<&String> = r.parents.iter().map(|(id, _)| id).collect();
    let mut dedup = ids.clone();
    dedup.dedup();
    assert_eq!(ids, dedup, "each parent once");
    assert_eq!(r.notice, None);
}

#[test]
fn keyword_weight_lifts_exact_identifiers() {
    let f = fixture_with(FakeEmbedder::new(), |s| s.hybrid_weight = 1.0);
    f.engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h", 1.0)
        .unwrap();
    let r = f.engine.query(query("ERR_CONN_RESET", 3, &[])).unwrap();
    assert!(r.results[0].text.contains("ERR_CONN_RESET"));
}

#[test]
fn scope_limits_results_and_explains_an_empty_scope() {
    let f = fixture();
    f.engine
        .ingest_file("/docs/proj/a.md", b"alpha beta gamma", "h", 1.0)
        .unwrap();
    f.engine
        .ingest_file("/docs/project-secret/b.md", b"alpha beta gamma", "h", 1.0)
        .unwrap();
    let scope = vec!["/docs/proj".to_string()];
    let r = f.engine.query(query("alpha", 8, &scope)).unwrap();
    assert!(!r.results.is_empty());
    assert!(r.results.iter().all(|h| h.source == "/docs/proj/a.md"));

    let scope = vec!["proj".to_string()];
    let r = f.engine.query(query("alpha", 8, &scope)).unwrap();
    assert!(r.results.is_empty());
    let notice = r.notice.unwrap();
    assert!(
        notice.contains("'proj'") && notice.contains("`source`") && notice.contains("displayPath"),
        "{notice}"
    );
}

#[test]
fn an_empty_index_says_how_to_fill_it() {
    let f = fixture();
    let r = f.engine.query(query("anything", 8, &[])).unwrap();
    assert!(r.results.is_empty() && r.sources.is_empty() && r.parents.is_empty());
    assert!(r.notice.unwrap().contains("sync_start"));
}

#[test]
fn a_scope_with_documents_but_no_match_has_no_notice() {
    let f = fixture_with(FakeEmbedder::new(), |s| s.max_distance = Some(0.0));
    f.engine
        .ingest_file("/docs/a.md", b"alpha", "h", 1.0)
        .unwrap();
    let scope = vec!["/docs".to_string()];
    let r = f.engine.query(query("zzz", 8, &scope)).unwrap();
    assert!(r.results.is_empty());
    assert_eq!(r.notice, None);
}

/// Three sources with the same text.
fn three_alike(f: &Fixture) {
    for i in 0..3 {
        f.engine
            .ingest_file(
                &format!("/docs/{i}.md"),
                b"shared words everywhere",
                "h",
                1.0,
            )
            .unwrap();
    }
}

#[test]
fn max_files_and_top_k_cut_results() {
    let f = fixture_with(FakeEmbedder::new(), |s| s.max_files = Some(1));
    three_alike(&f);
    let r = f.engine.query(query("shared words", 8, &[])).unwrap();
    assert_eq!(r.sources.len(), 1);
    let f = fixture();
    three_alike(&f);
    assert_eq!(
        f.engine
            .query(query("shared words", 1, &[]))
            .unwrap()
            .results
            .len(),
        1
    );
}

#[test]
fn a_failing_keyword_side_is_a_notice_not_silence() {
    let f = fixture();
    f.engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h", 1.0)
        .unwrap();
    f.index.keyword_fails.store(true, Ordering::SeqCst);
    let q = f.engine.query(query("ERR_CONN_RESET", 5, &[])).unwrap();
    assert!(!q.results.is_empty(), "the vector side still answers");
    let notice = q.notice.unwrap_or_default();
    assert!(
        notice.contains("keyword search failed") && notice.contains("postings unreadable"),
        "{notice}"
    );
}

#[test]
fn explain_gives_each_result_its_ranks_and_fused_score() {
    let f = fixture();
    f.engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h", 1.0)
        .unwrap();
    let plain = f
        .engine
        .query(query("ERR_CONN_RESET socket", 5, &[]))
        .unwrap();
    assert_eq!(plain.explain, None, "no explain unless asked");
    let mut request = query("ERR_CONN_RESET socket", 5, &[]);
    request.explain = true;
    let r = f.engine.query(request).unwrap();
    let explain = r.explain.expect("explained");
    assert_eq!(explain.len(), r.results.len());
    for (hit, e) in r.results.iter().zip(&explain) {
        assert_eq!(e.fused, hit.score);
        assert_eq!(e.keyword_weight, 0.6);
        assert_eq!(e.vector.map(|v| v.score as f32), hit.distance);
    }
    assert!(
        explain.windows(2).all(|w| w[0].fused >= w[1].fused),
        "results in fused order"
    );
    // Chunks follow their document: the j-th of one document scores the
    // first one's score × ½^j.
    let mut seen: HashMap<&str, (f64, i32)> = HashMap::new();
    let mut followers = 0;
    for (hit, e) in r.results.iter().zip(&explain) {
        let (first, j) = seen.entry(hit.source.as_str()).or_insert((e.fused, 0));
        let expect = *first * crate::search::documents::NEXT_CHUNK_DECAY.powi(*j);
        assert!((e.fused - expect).abs() < 1e-12, "{e:?}, expected {expect}");
        followers += i32::from(*j > 0);
        *j += 1;
    }
    assert!(followers > 0, "a document contributed several chunks");
    let top = &explain[0];
    assert!(
        top.keyword.is_some_and(|k| k.rank == 1 && k.score > 0.0),
        "{top:?}"
    );
    assert!(
        top.document.is_some_and(|d| d.rank == 1 && d.score > 0.0),
        "the document that holds the best chunk leads the document list: {top:?}"
    );
}

#[test]
fn the_model_is_loaded_before_the_read_view_is_taken() {
    let f = fixture();
    f.engine.ingest_data("n", GUIDE, "markdown", None).unwrap();
    f.embedder.ready_at.store(0, Ordering::SeqCst);
    f.engine
        .query(query("restart the service", 3, &[]))
        .unwrap();
    let ready = f.embedder.ready_at.load(Ordering::SeqCst);
    let read = f.index.read_at.load(Ordering::SeqCst);
    assert!(
        ready > 0 && read > ready,
        "ready at {ready}, view at {read}"
    );
}

#[test]
fn a_format_filter_keeps_only_hits_of_those_formats() {
    let f = fixture();
    f.engine
        .ingest_file(
            "/docs/a.md",
            b"# A\n\nInvoices are archived yearly.",
            "h",
            1.0,
        )
        .unwrap();
    f.engine
        .ingest_file("/docs/b.txt", b"Invoices are archived monthly.", "h", 1.0)
        .unwrap();
    let all = f.engine.query(query("invoices archived", 8, &[])).unwrap();
    assert_eq!(
        crate::search::shape::sources_of(&all.results, &[""; 0]).len(),
        2
    );
    let wanted = ["txt".to_string()];
    let r = f
        .engine
        .query(QueryRequest {
            filter: crate::search::FilterRequest {
                formats: &wanted,
                ..Default::default()
            },
            ..query("invoices archived", 8, &[])
        })
        .unwrap();
    assert!(!r.results.is_empty());
    assert!(r.results.iter().all(|h| h.source == "/docs/b.txt"), "{r:?}");
    assert_eq!(
        crate::formats::of_source("https://x.org/a/Report.PDF?x=1")
            .unwrap()
            .key,
        "pdf"
    );
    assert!(crate::formats::of_source("data:notes").is_none());
}
