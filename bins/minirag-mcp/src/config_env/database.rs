//! Where a shared index lives: `DB_URL` names a PostgreSQL server, and
//! `DB_SCHEMA` the schema of this index in it (several indexes share one
//! database). A password in the URL is never shown: an error carries the
//! index adapter's masked form.

use minirag_core::config::Database;
use minirag_index_pg::{mask_password, valid_schema_name, DEFAULT_SCHEMA};

use super::{err, ConfigError};

/// `DB_URL` and `DB_SCHEMA`; `None` without `DB_URL` (the embedded index).
pub(super) fn database(
    url: Option<&str>,
    schema: Option<&str>,
) -> Result<Option<Database>, ConfigError> {
    let schema = schema.map(str::trim).filter(|s| !s.is_empty());
    let Some(url) = url.map(str::trim).filter(|u| !u.is_empty()) else {
        if let Some(s) = schema {
            return Err(err(
                "DB_SCHEMA",
                s,
                "to be set only with DB_URL (the embedded index under DB_PATH has no schema)",
            ));
        }
        return Ok(None);
    };
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(err(
            "DB_URL",
            &mask_password(url),
            "postgres://user[:password]@host[:port]/database[?sslmode=require], or unset for the embedded index under DB_PATH",
        ));
    }
    let schema = schema.unwrap_or(DEFAULT_SCHEMA);
    if !valid_schema_name(schema) {
        return Err(err(
            "DB_SCHEMA",
            schema,
            "a lower-case name of letters, digits and '_' (at most 63), e.g. minirag or team_docs",
        ));
    }
    Ok(Some(Database {
        url: url.to_string(),
        schema: schema.to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_url_is_named_without_its_password() {
        let e = database(Some("mysql://alice:pw@db/rag"), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("DB_URL") && !e.contains(":pw@") && e.contains("postgres://"),
            "{e}"
        );
    }

    #[test]
    fn schema_names_are_plain() {
        for bad in ["Team", "a-b", "1abc", "a;drop", "a b", &"x".repeat(64)] {
            assert!(database(Some("postgres://u@h/d"), Some(bad)).is_err());
        }
        assert!(
            database(None, Some("team")).is_err(),
            "a schema without a server"
        );
        let db = database(Some("postgres://u:p@h/d"), None).unwrap().unwrap();
        assert_eq!(
            (db.schema.as_str(), mask_password(&db.url).as_str()),
            ("minirag", "postgres://u:***@h/d")
        );
        assert_eq!(database(None, None).unwrap(), None);
    }
}
