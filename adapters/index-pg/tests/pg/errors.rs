//! A database that cannot be reached keeps the client's error under the
//! index's and the engine's. Needs no server: nothing listens on the port.

use minirag_core::error::EngineError;
use minirag_index_pg::{PgIndex, PgOptions};

#[test]
fn an_unreachable_databases_cause_is_kept_to_the_client() {
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://minirag:secret@127.0.0.1:{port}/rag");
    let Err(err) = PgIndex::open(&url, "chains", &PgOptions::default()) else {
        panic!("nothing listens on {port}");
    };
    assert!(!err.to_string().contains("secret"), "{err}");
    let engine = EngineError::Index(err);
    let found = minirag_core::cause::in_chain::<postgres::Error>(&engine).is_some();
    assert!(found, "the walk from {engine} reaches postgres's error");
}
