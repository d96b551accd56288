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
