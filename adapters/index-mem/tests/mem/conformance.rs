//! index-mem under the shared Index contract.

use minirag_index_conformance::{run_all, Subject};
use minirag_index_mem::MemIndex;

struct Mem;

impl Subject for Mem {
    type Store = tempfile::TempDir;
    type Index = MemIndex;
    fn fresh(&self) -> Self::Store {
        tempfile::tempdir().unwrap()
    }
    fn open(&self, store: &Self::Store) -> MemIndex {
        MemIndex::open(store.path()).unwrap()
    }
    fn compact(&self, index: &MemIndex) {
        index.compact().unwrap();
    }
}

#[test]
fn index_mem_keeps_the_index_contract() {
    run_all(&Mem, 256);
}
