//! What every index-pg test needs: the test server and a schema per test.

use minirag_index_pg::{PgIndex, PgOptions};

/// The test server's URL; a test that needs it fails without it, naming
/// how to start one (it is never skipped).
pub(crate) fn test_url() -> String {
    std::env::var("MINIRAG_TEST_PG_URL").unwrap_or_else(|_| {
        panic!(
            "MINIRAG_TEST_PG_URL is not set: these tests need PostgreSQL with pgvector. \
             Run .ci/run, which starts one, or point the variable at a server, e.g. \
             postgres://minirag@%2Ftmp%2Fminirag-pg/postgres"
        )
    })
}

/// A schema of its own per index, dropped at the end.
pub(crate) struct Schema {
    pub name: String,
}

impl Drop for Schema {
    fn drop(&mut self) {
        if let Ok(ix) = PgIndex::open(&test_url(), &self.name, &PgOptions::default()) {
            let _ = ix.drop_schema();
        }
    }
}
