//! The connection layer against a real TLS server: Debian's PostgreSQL 15,
//! started by `.ci/postgres` with a certificate from a throw-away CA for the
//! name `localhost`, TLS-only over TCP and a scram password. It has no
//! pgvector, so these tests stop at the connection (and at the named error
//! an index gets there).

use std::path::PathBuf;

use minirag_index_pg::connect::Target;
use minirag_index_pg::{PgIndex, PgOptions};

struct Tls {
    url: String,
    ca: PathBuf,
    password: String,
}

fn tls() -> Tls {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!(
                "{name} is not set: these tests need the TLS server that .ci/postgres starts \
                 (Debian's postgresql-15); run .ci/run, or eval \"$(.ci/postgres start)\""
            )
        })
    };
    Tls {
        url: var("MINIRAG_TEST_PG_TLS_URL"),
        ca: PathBuf::from(var("MINIRAG_TEST_PG_TLS_CA")),
        password: var("MINIRAG_TEST_PG_TLS_PASSWORD"),
    }
}

/// The URL with `user:password@` and the host replaced.
fn with(url: &str, password: Option<&str>, host: &str) -> String {
    let rest = url.trim_start_matches("postgres://minirag@localhost");
    match password {
        Some(p) => format!("postgres://minirag:{p}@{host}{rest}"),
        None => format!("postgres://minirag@{host}{rest}"),
    }
}

fn connect_error(url: &str, root_cert: Option<&std::path::Path>) -> String {
    let target = Target::new(url, None).unwrap();
    match target.connect_once(root_cert) {
        Ok(_) => panic!("{url} connected"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_given_ca_and_a_pgpass_password_give_an_encrypted_verified_session() {
    let t = tls();
    let dir = tempfile::tempdir().unwrap();
    let passfile = dir.path().join("pgpass");
    let port = t.url.split(':').nth(2).unwrap().split('/').next().unwrap();
    std::fs::write(
        &passfile,
        format!("localhost:{port}:*:minirag:{}\n", t.password),
    )
    .unwrap();
    let target = Target::new(&t.url, Some(&passfile)).unwrap();
    let mut client = target.connect_once(Some(&t.ca)).unwrap();
    let row = client
        .query_one(
            "SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap();
    assert!(row.get::<_, bool>(0), "the session is not encrypted");
    assert!(row.get::<_, String>(1).starts_with("TLSv1."));
    // libpq's verify-full is read as require: the certificate is verified.
    let full = with(&t.url, Some(&t.password), "localhost").replace("require", "verify-full");
    let pool = Target::new(&full, None).unwrap().pool(Some(&t.ca)).unwrap();
    let mut pooled = pool.get().unwrap();
    let ssl: bool = pooled
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(ssl);
}

#[test]
fn a_certificate_of_an_unknown_ca_or_another_name_is_refused_with_the_fix() {
    let t = tls();
    let url = with(&t.url, Some(&t.password), "localhost");
    let e = connect_error(&url, None);
    assert!(
        e.contains("UnknownIssuer") && e.contains("PGSSLROOTCERT") && !e.contains(&t.password),
        "{e}"
    );
    // The certificate names localhost only.
    let e = connect_error(&with(&t.url, Some(&t.password), "127.0.0.1"), Some(&t.ca));
    assert!(
        e.contains("certificate") && e.contains("name the certificate carries"),
        "{e}"
    );
}

#[test]
fn without_tls_or_with_a_wrong_password_the_server_refuses_and_no_password_shows() {
    let t = tls();
    let plain = with(&t.url, Some(&t.password), "localhost").replace("require", "disable");
    let e = connect_error(&plain, Some(&t.ca));
    assert!(
        e.contains("no encryption") && !e.contains(&t.password),
        "{e}"
    );
    let wrong = with(&t.url, Some("not-the-password"), "localhost");
    let e = connect_error(&wrong, Some(&t.ca));
    assert!(
        e.contains("password authentication failed")
            && e.contains("minirag:***@")
            && !e.contains("not-the-password"),
        "{e}"
    );
}

#[test]
fn an_index_on_a_server_without_pgvector_names_the_fix() {
    let t = tls();
    let options = PgOptions {
        root_cert: Some(t.ca.clone()),
        ..PgOptions::default()
    };
    let url = with(&t.url, Some(&t.password), "localhost");
    let e = match PgIndex::open(&url, "minirag", &options) {
        Ok(_) => panic!("an index opened without pgvector"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("pgvector") && e.contains("CREATE EXTENSION vector") && !e.contains(&t.password),
        "{e}"
    );
}
