//! Where a shared index lives: `DB_URL` names a PostgreSQL server, and
//! `DB_SCHEMA` the schema of this index in it (several indexes share one
//! database). A password in the URL is never shown: every message and
//! status carries [`mask_password`]'s form.

use super::{err, ConfigError};

/// A shared index on a database server.
#[derive(Debug, Clone, PartialEq)]
pub struct Database {
    /// The URL as given (it may hold a password: show [`Database::masked`]).
    pub url: String,
    /// A plain lower-case schema name (it is spliced into SQL).
    pub schema: String,
}

impl Database {
    pub fn masked(&self) -> String {
        mask_password(&self.url)
    }
}

pub const DEFAULT_SCHEMA: &str = "minirag";

/// The URL with its password replaced by `***` (in the user-info part and
/// in a `password=` parameter).
pub fn mask_password(url: &str) -> String {
    let mut out = url.to_string();
    if let Some(scheme_end) = out.find("://") {
        let rest = &out[scheme_end + 3..];
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@') {
            if let Some(colon) = rest[..at].find(':') {
                let start = scheme_end + 3 + colon + 1;
                let end = scheme_end + 3 + at;
                out.replace_range(start..end, "***");
            }
        }
    }
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let masked: Vec<String> = query
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => kv.to_string(),
            })
            .collect();
        out = format!("{head}{}", masked.join("&"));
    }
    out
}

/// A schema name that is safe to splice into SQL: `[a-z_][a-z0-9_]*`, at
/// most 63 bytes (PostgreSQL's limit).
pub fn valid_schema_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `DB_URL` and `DB_SCHEMA`; `None` without `DB_URL` (the embedded index).
pub fn database(url: Option<&str>, schema: Option<&str>) -> Result<Option<Database>, ConfigError> {
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
    fn the_password_never_shows() {
        assert_eq!(
            mask_password("postgres://alice:s3cr%40t@db.example:5432/rag?sslmode=require"),
            "postgres://alice:***@db.example:5432/rag?sslmode=require"
        );
        assert_eq!(
            mask_password("postgresql://alice@db/rag?password=hunter2&sslmode=disable"),
            "postgresql://alice@db/rag?password=***&sslmode=disable"
        );
        assert_eq!(
            mask_password("postgres://bob@db/rag"),
            "postgres://bob@db/rag"
        );
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
        assert!(
            valid_schema_name("minirag") && valid_schema_name("team_a2") && valid_schema_name("_x")
        );
        for bad in ["Team", "a-b", "1abc", "a;drop", "a b", &"x".repeat(64)] {
            assert!(!valid_schema_name(bad), "{bad}");
            assert!(database(Some("postgres://u@h/d"), Some(bad)).is_err());
        }
        assert!(
            database(None, Some("team")).is_err(),
            "a schema without a server"
        );
        let db = database(Some("postgres://u:p@h/d"), None).unwrap().unwrap();
        assert_eq!(
            (db.schema.as_str(), db.masked().as_str()),
            ("minirag", "postgres://u:***@h/d")
        );
        assert_eq!(database(None, None).unwrap(), None);
    }
}
