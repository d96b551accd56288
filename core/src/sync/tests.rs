//! The sync plan over plain records and scans: no files, no index.

use std::cell::RefCell;
use std::collections::BTreeMap;

use super::*;

fn record(source: &str, hash: &str, mtime: f64, model: Option<&str>) -> SourceRecord {
    SourceRecord {
        source: source.into(),
        source_type: SourceType::File,
        title: "t".into(),
        title_seeded: false,
        file_hash: hash.into(),
        mtime,
        ingested_at: "2026-11-30T00:00:00Z".into(),
        chunk_count: 2,
        scheme_version: CHUNK_SCHEME,
        embedded_with: model.map(str::to_string),
        ocr_engine: String::new(),
        attributes: Default::default(),
    }
}

fn file(path: &str, mtime: f64) -> ScannedFile {
    ScannedFile {
        path: path.into(),
        size: 10,
        mtime,
    }
}

/// Hashes from a table; records which paths were hashed.
struct Table {
    hashes: BTreeMap<&'static str, &'static str>,
    asked: RefCell<Vec<String>>,
}

impl Table {
    fn new(pairs: &[(&'static str, &'static str)]) -> Self {
        Self {
            hashes: pairs.iter().copied().collect(),
            asked: RefCell::new(Vec::new()),
        }
    }
}

impl Hasher for Table {
    fn sha256(&self, path: &str) -> Option<String> {
        self.asked.borrow_mut().push(path.into());
        self.hashes.get(path).map(|h| h.to_string())
    }
}

fn plan_of(scan: &Scan, indexed: &[SourceRecord], model: Option<&str>, hashes: &Table) -> SyncPlan {
    plan(
        &PlanInput {
            scan,
            indexed,
            scope: None,
            roots: &["/r".to_string()],
            shared: false,
            model,
            max_file_size: 100,
            images: false,
        },
        hashes,
    )
}

#[test]
fn each_file_gets_one_verdict_by_the_staleness_rule() {
    let mut old_scheme = record("/r/old.md", "h-old", 1.0, Some("m"));
    old_scheme.scheme_version = CHUNK_SCHEME - 1;
    let indexed = vec![
        record("/r/same.md", "h-same", 1.0, Some("m")),
        record("/r/touched.md", "h-touched", 1.0, Some("m")),
        record("/r/edited.md", "h-before", 1.0, Some("m")),
        old_scheme,
        record("/r/other-model.md", "h-om", 1.0, Some("m0")),
        record("/r/vectorless.md", "h-vl", 1.0, None),
    ];
    let scan = Scan {
        files: vec![
            file("/r/edited.md", 2.0),
            file("/r/new.md", 1.0),
            file("/r/old.md", 1.0),
            file("/r/other-model.md", 1.0),
            file("/r/same.md", 1.0),
            file("/r/touched.md", 2.0),
            file("/r/vectorless.md", 1.0),
        ],
        blind: vec![],
    };
    let hashes = Table::new(&[
        ("/r/touched.md", "h-touched"),
        ("/r/edited.md", "h-after"),
        ("/r/new.md", "h-new"),
    ]);
    let p = plan_of(&scan, &indexed, Some("m"), &hashes);
    assert_eq!(p.scanned, 7);
    assert_eq!(p.ingest, ["/r/edited.md", "/r/new.md", "/r/old.md"]);
    assert_eq!(p.reembed, ["/r/other-model.md", "/r/vectorless.md"]);
    assert_eq!(p.skipped, 2, "same bytes (mtime or hash) are skipped");
    assert!(p.delete.is_empty() && p.moves.is_empty());
    assert!(
        !hashes.asked.borrow().contains(&"/r/same.md".to_string()),
        "a file whose mtime did not move is not read"
    );

    // Without a loadable model, missing or foreign vectors are not stale.
    let p = plan_of(
        &scan,
        &indexed,
        None,
        &Table::new(&[("/r/touched.md", "h-touched")]),
    );
    assert!(p.reembed.is_empty());
    assert_eq!(p.skipped, 4);
}

#[test]
fn list_labels_follow_the_same_rule() {
    let r = record("/r/a.md", "h", 1.0, Some("m0"));
    let f = file("/r/a.md", 1.0);
    let none = Table::new(&[]);
    assert_eq!(
        file_state(&r, &f, Some("m0"), &none).label().as_str(),
        "ingested"
    );
    assert_eq!(
        file_state(&r, &f, Some("m1"), &none).label().as_str(),
        "stale"
    );
    assert_eq!(file_state(&r, &f, None, &none).label().as_str(), "ingested");
    let moved = file("/r/a.md", 9.0);
    assert_eq!(
        file_state(&r, &moved, Some("m0"), &none),
        FileState::Changed
    );
}

#[test]
fn a_vanished_file_with_the_same_name_and_bytes_is_a_move() {
    let indexed = vec![
        record("/r/a/soup.md", "h-soup", 1.0, Some("m")),
        record("/r/gone.md", "h-gone", 1.0, Some("m")),
    ];
    let scan = Scan {
        files: vec![file("/r/b/soup.md", 5.0), file("/r/b/renamed.md", 5.0)],
        blind: vec![],
    };
    let hashes = Table::new(&[("/r/b/soup.md", "h-soup"), ("/r/b/renamed.md", "h-gone")]);
    let p = plan_of(&scan, &indexed, Some("m"), &hashes);
    assert_eq!(
        p.moves,
        [Move {
            from: "/r/a/soup.md".into(),
            to: "/r/b/soup.md".into(),
            mtime: 5.0
        }]
    );
    assert_eq!(p.ingest, ["/r/b/renamed.md"], "another name is not a move");
    assert_eq!(p.delete, ["/r/gone.md"]);
}

#[test]
fn blind_folders_hold_their_files_and_roots_count_as_failures() {
    let indexed = vec![
        record("/r/locked/a.md", "h", 1.0, Some("m")),
        record("/r/x.md", "h", 1.0, Some("m")),
    ];
    let scan = Scan {
        files: vec![],
        blind: vec![
            BlindFolder {
                path: "/r/locked".into(),
                error: Some("Permission denied".into()),
            },
            BlindFolder {
                path: "/r/empty-sub".into(),
                error: Some("Permission denied".into()),
            },
        ],
    };
    let p = plan_of(&scan, &indexed, Some("m"), &Table::new(&[]));
    assert_eq!(p.delete, ["/r/x.md"], "only the visible vanished file goes");
    let counted: Vec<bool> = p.blind.iter().map(|(_, c)| *c).collect();
    assert_eq!(
        counted,
        [true, false],
        "a folder holding indexed files fails the sync"
    );
}

#[test]
fn too_large_files_are_reported_and_scope_limits_deletions() {
    let indexed = vec![
        record("/r/in/a.md", "h", 1.0, Some("m")),
        record("/r/out/b.md", "h", 1.0, Some("m")),
    ];
    let scan = Scan {
        files: vec![ScannedFile {
            path: "/r/in/big.md".into(),
            size: 101,
            mtime: 1.0,
        }],
        blind: vec![],
    };
    let p = plan(
        &PlanInput {
            scan: &scan,
            indexed: &indexed,
            scope: Some("/r/in"),
            roots: &["/r".to_string()],
            shared: false,
            model: Some("m"),
            max_file_size: 100,
            images: false,
        },
        &Table::new(&[]),
    );
    assert_eq!(p.too_large, [("/r/in/big.md".to_string(), 101)]);
    assert!(p.ingest.is_empty());
    assert_eq!(
        p.delete,
        ["/r/in/a.md"],
        "a source outside the scope is not touched"
    );
}

#[test]
fn a_shared_index_keeps_the_files_of_other_roots() {
    let indexed = vec![
        record("/r/a.md", "h", 1.0, Some("m")),
        record("/other-machine/b.md", "h", 1.0, Some("m")),
    ];
    let scan = Scan::default();
    let roots = ["/r".to_string()];
    let input = |shared| PlanInput {
        scan: &scan,
        indexed: &indexed,
        scope: None,
        roots: &roots,
        shared,
        model: Some("m"),
        max_file_size: 100,
        images: false,
    };
    let own = plan(&input(false), &Table::new(&[]));
    assert_eq!(
        own.delete,
        ["/other-machine/b.md", "/r/a.md"],
        "an index of one's own follows the roots"
    );
    let shared = plan(&input(true), &Table::new(&[]));
    assert_eq!(
        shared.delete,
        ["/r/a.md"],
        "another machine's file is not ours to delete"
    );
}

#[test]
fn data_and_url_sources_are_never_planned() {
    let mut data = record("notes-1", "", 0.0, Some("m"));
    data.source_type = SourceType::Data;
    let p = plan_of(&Scan::default(), &[data], Some("m"), &Table::new(&[]));
    assert!(p.delete.is_empty());
}

#[test]
fn without_ocr_indexed_images_on_disk_are_kept_and_gone_ones_deleted() {
    let scan = Scan::default();
    let indexed = vec![
        record("/r/scan.png", "h1", 1.0, Some("m")),
        record("/r/gone.jpg", "h2", 1.0, Some("m")),
        record("/r/note.md", "h3", 1.0, Some("m")),
    ];
    let p = plan_of(
        &scan,
        &indexed,
        Some("m"),
        &Table::new(&[("/r/scan.png", "h1")]),
    );
    assert_eq!(p.kept_unreadable, ["/r/scan.png"]);
    assert_eq!(p.delete, ["/r/gone.jpg", "/r/note.md"]);
}
