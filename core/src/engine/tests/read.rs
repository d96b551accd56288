//! Reads: neighbours, whole documents and deletion.

use super::*;

#[test]
fn neighbors_read_and_delete() {
    let f = fixture_with(FakeEmbedder::new(), |s| s.budget = 16);
    let body: String = (0..40)
        .map(|i| format!("Sentence number {i} here."))
        .collect::<Vec<_>>()
        .join(" ");
    f.engine.ingest_data("long", &body, "text", None).unwrap();
    let n = f.engine.neighbors("long", 15, 2, 2).unwrap();
    assert_eq!(
        n.iter().map(|r| r.chunk_index).collect::<Vec<_>>(),
        [13, 14, 15, 16, 17]
    );
    assert!(n.iter().all(|r| r.score == 0.0 && r.distance.is_none()));
    let n = f.engine.neighbors("long", 0, 3, 1).unwrap();
    assert_eq!(n.iter().map(|r| r.chunk_index).collect::<Vec<_>>(), [0, 1]);
    assert!(f.engine.neighbors("missing", 0, 1, 1).unwrap().is_empty());

    let doc = f.engine.read_document("long").unwrap();
    assert_eq!(
        doc.text.split_whitespace().collect::<Vec<_>>(),
        body.split_whitespace().collect::<Vec<_>>()
    );

    assert!(f.engine.delete("long").unwrap() > 10);
    let e = f.engine.delete("long").unwrap_err();
    assert!(e.to_string().starts_with("Source not found in index: long"));
    assert!(matches!(
        f.engine.read_document("long"),
        Err(EngineError::NotFound { .. })
    ));
}

#[test]
fn clients_see_data_urls_and_the_files_under_their_roots_only() {
    let f = fixture();
    f.files.put("/docs/a.md", "# A\n\nApples.", 1.0);
    f.engine.sync(None, &|_| {}, &Default::default()).unwrap();
    f.engine
        .ingest_data("note", "Plain words.", "text", None)
        .unwrap();
    // Another machine's file in a shared index, outside this process's roots.
    f.files.put("/elsewhere/b.md", "Bananas.", 1.0);
    f.engine.ingest_path("/elsewhere/b.md").unwrap();
    let seen: Vec<String> = f
        .engine
        .visible_documents()
        .unwrap()
        .into_iter()
        .map(|r| r.source)
        .collect();
    assert_eq!(seen, ["/docs/a.md", "note"]);
    let state = f.engine.index_state().unwrap();
    assert_eq!(state.stats.source_count, 3);
    assert_eq!(state.vector_model.as_deref(), Some("hash-16"));
}

#[test]
fn ingest_targets_scan_folders_and_keep_files_as_given() {
    let f = fixture();
    f.files.put("/docs/sub/a.md", "A", 1.0);
    f.files.put("/docs/sub/deep/b.txt", "B", 1.0);
    f.files.put("/docs/sub/c.xyz", "C", 1.0);
    f.files.put("/docs/d.md", "D", 1.0);
    let t = f.engine.ingest_targets(&[
        "/docs/sub".into(),
        "/docs/sub/c.xyz".into(),
        "/docs/sub/a.md".into(),
    ]);
    assert_eq!(
        t.files,
        ["/docs/sub/a.md", "/docs/sub/c.xyz", "/docs/sub/deep/b.txt"]
    );
    assert!(t.blind.is_empty());
}

#[test]
fn a_passage_is_found_in_its_whole_document_even_under_a_repeated_table_header() {
    let f = fixture_with(FakeEmbedder::new(), |s| s.budget = 40);
    let mut doc =
        String::from("# Prices\n\nIntro text about the table.\n\n| item | price |\n|---|---|\n");
    for i in 0..30 {
        doc.push_str(&format!("| widget{i} | {i}.00 |\n"));
    }
    doc.push_str("\n## After\n\nClosing words here.");
    f.engine
        .ingest_file("/docs/t.md", doc.as_bytes(), "h", 1.0)
        .unwrap();
    let n = f.engine.neighbors("/docs/t.md", 0, 0, 50).unwrap();
    assert!(n.len() > 3, "the table is cut into several units");
    for hit in &n {
        let (read, at) = f
            .engine
            .read_passage("/docs/t.md", hit.chunk_index)
            .unwrap();
        let at = at.unwrap_or_else(|| panic!("unit {} not placed", hit.chunk_index));
        let passage = &read.text[at];
        // Its last line, and the first line that is the unit's own.
        let own: Vec<&str> = hit.text.lines().filter(|l| l.contains("widget")).collect();
        if let (Some(first), Some(last)) = (own.first(), own.last()) {
            assert!(passage.contains(first.trim()), "{passage:?} vs {first:?}");
            assert!(passage.ends_with(last.trim()));
            // Not from the table's header far above.
            assert!(passage.len() <= hit.text.len(), "{passage:?}");
        }
    }
    let (_, none) = f.engine.read_passage("/docs/t.md", 999).unwrap();
    assert!(none.is_none());
}

#[test]
fn the_documents_fingerprint_moves_with_the_visible_list_only() {
    let f = fixture();
    let sync = |f: &crate::testing::fixture::Fixture| {
        f.engine.sync(None, &|_| {}, &Default::default()).unwrap();
        f.engine.documents_fingerprint().unwrap()
    };
    let empty = f.engine.documents_fingerprint().unwrap();
    f.files.put("/docs/a.md", "# A\n\nApples.", 1.0);
    let one = sync(&f);
    assert_ne!(one, empty, "an ingest changes it");
    assert_eq!(sync(&f), one, "a sync that changed nothing keeps it");
    f.files.remove("/docs/a.md");
    f.files.put("/docs/moved/a.md", "# A\n\nApples.", 1.0);
    let moved = sync(&f);
    assert_ne!(moved, one, "a move changes it");
    f.engine.delete("/docs/moved/a.md").unwrap();
    assert_eq!(
        f.engine.documents_fingerprint().unwrap(),
        empty,
        "a delete changes it, back to the empty list's"
    );
}
