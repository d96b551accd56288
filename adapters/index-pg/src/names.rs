//! What this adapter shows of a database URL, and which schema names it
//! accepts: a password in the URL is never shown, and a schema name is
//! spliced into SQL, so only plain names pass.

/// The schema an index gets when `DB_SCHEMA` names none.
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
    }

    #[test]
    fn schema_names_are_plain() {
        assert!(
            valid_schema_name("minirag") && valid_schema_name("team_a2") && valid_schema_name("_x")
        );
        for bad in ["Team", "a-b", "1abc", "a;drop", "a b", &"x".repeat(64)] {
            assert!(!valid_schema_name(bad), "{bad}");
        }
    }
}
