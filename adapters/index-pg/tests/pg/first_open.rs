//! Several processes opening a fresh database at once (three servers
//! started together, or tests in parallel): each creates its schema, and
//! the one `vector` extension they all need is created once, without a
//! unique violation for the others.

// This test makes a database of its own, not a schema per index.
#[allow(dead_code)]
use crate::support;

use minirag_index_pg::{PgIndex, PgOptions};
use support::test_url;

#[test]
fn eight_openers_of_a_fresh_database_all_succeed() {
    let base = test_url();
    let name = format!("fresh_{}", std::process::id());
    let mut admin = postgres::Client::connect(&base, postgres::NoTls).unwrap();
    // Two statements: a multi-statement string would be one transaction.
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    // The same server, the new database (the URL's path names it).
    let head = base.split_once('?').map_or(base.as_str(), |(h, _)| h);
    let url = format!("{}/{name}", head.rsplit_once('/').unwrap().0);
    let outcomes: Vec<Result<(), String>> = std::thread::scope(|s| {
        let openers: Vec<_> = (0..8)
            .map(|i| {
                let url = url.clone();
                s.spawn(move || {
                    PgIndex::open(&url, &format!("opener_{i}"), &PgOptions::default())
                        .map(drop)
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        openers.into_iter().map(|h| h.join().unwrap()).collect()
    });
    admin
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .unwrap();
    for (i, outcome) in outcomes.iter().enumerate() {
        assert!(outcome.is_ok(), "opener {i}: {outcome:?}");
    }
}
