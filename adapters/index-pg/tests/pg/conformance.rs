//! index-pg under the shared Index contract, on a real PostgreSQL server
//! with pgvector. `.ci/run` starts one and sets `MINIRAG_TEST_PG_URL`.

use std::sync::atomic::{AtomicUsize, Ordering};

use minirag_index_conformance::{run_all, Subject};
use minirag_index_pg::{PgIndex, PgOptions};

use crate::support;

use support::{test_url, Schema};

struct Pg;

static NEXT: AtomicUsize = AtomicUsize::new(0);

impl Subject for Pg {
    type Store = Schema;
    type Index = PgIndex;
    fn fresh(&self) -> Schema {
        let name = format!(
            "conf_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let ix = PgIndex::open(&test_url(), &name, &PgOptions::default()).unwrap();
        ix.drop_schema().unwrap();
        Schema { name }
    }
    fn open(&self, store: &Schema) -> PgIndex {
        PgIndex::open(&test_url(), &store.name, &PgOptions::default()).unwrap()
    }
}

#[test]
fn index_pg_keeps_the_index_contract() {
    // Fewer model cases than index-mem's 256: each step is a round trip to the server.
    run_all(&Pg, 128);
}
