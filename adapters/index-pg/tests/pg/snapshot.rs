//! One read view, two threads: the engine runs the keyword lists beside the
//! vector search, and the view then lends the second thread another
//! connection that imports its snapshot. Both must see the index as it was
//! when the view began, not a write committed since.

use crate::support;

use minirag_core::ports::Index;
use minirag_core::search::Scope;
use minirag_index_conformance::synthetic::{source_record, vocabulary, zipf_chunk, Rng};
use minirag_index_pg::{PgIndex, PgOptions};
use support::{test_url, Schema};

#[test]
fn two_threads_of_one_view_see_its_snapshot_not_a_later_write() {
    let schema = Schema {
        name: format!("snapshot_{}", std::process::id()),
    };
    let vocab = vocabulary();
    let mut rng = Rng(11);
    let ix = PgIndex::open(&test_url(), &schema.name, &PgOptions::default()).unwrap();
    let writer = PgIndex::open(&test_url(), &schema.name, &PgOptions::default()).unwrap();
    let put = |ix: &PgIndex, n: usize, rng: &mut Rng| {
        let chunks: Vec<_> = (0..8).map(|i| zipf_chunk(rng, &vocab, i)).collect();
        ix.replace_source(source_record(n, chunks.len(), &vocab), chunks, None)
            .unwrap();
    };
    for n in 0..4 {
        put(&ix, n, &mut rng);
    }
    let query = vocab[..6].join(" ");
    for round in 0..20 {
        let view = ix.read().unwrap();
        // Committed after the view began, by another handle.
        put(&writer, 100 + round, &mut rng);
        let late = source_record(100 + round, 8, &vocab).source;
        std::thread::scope(|s| {
            let lists = || {
                let chunks = view.keyword_search(&query, 50, &Scope::all()).unwrap();
                let docs = view.document_search(&query, 50, &Scope::all()).unwrap();
                let sources = view.sources(&Scope::all()).unwrap();
                (chunks, docs, sources)
            };
            let other = s.spawn(lists);
            let here = lists();
            for (chunks, docs, sources) in [here, other.join().unwrap()] {
                assert_eq!(
                    sources.len(),
                    4 + round,
                    "round {round}: the view's sources"
                );
                assert!(chunks.iter().all(|c| c.key.source != late), "round {round}");
                assert!(docs.iter().all(|d| d.source != late), "round {round}");
            }
        });
    }
}
