//! Query argument validation.

/// Largest accepted `topK`; larger values are clamped, not refused.
pub(crate) const MAX_TOP_K: usize = 100;
/// Each side of the hybrid search fetches at least this many candidates,
/// what a `topK` of 30 fetches (the eval's setting, docs/quality.md): every
/// `topK` up to 30 then ranks alike, and the vector side is scaled over
/// the same nearest chunks whatever the `topK`.
pub(crate) const MIN_CANDIDATES: usize = 120;
/// Longest accepted query, in characters. The encoder reads only its first
/// 256 tokens, and every extra keyword term costs a postings walk: a longer
/// "query" is a document pasted by mistake, or load aimed at a shared server.
pub(crate) const MAX_QUERY_CHARS: usize = 4096;

/// Why a query's arguments cannot be searched.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryError {
    /// A blank query.
    EmptyQuery,
    /// Longer than [`MAX_QUERY_CHARS`]; its length.
    TooLong(usize),
    /// `topK` below 1; the value.
    TopKTooSmall(i64),
    /// A scope given but empty.
    EmptyScope,
    /// A format, date or path pattern that cannot narrow anything.
    Filter(super::FilterError),
}

impl From<super::FilterError> for QueryError {
    fn from(e: super::FilterError) -> Self {
        Self::Filter(e)
    }
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EmptyQuery => f.write_str("query must not be empty"),
            Self::TooLong(n) => write!(
                f,
                "query is too long: {n} characters (the limit is {MAX_QUERY_CHARS}); search with the key words or a sentence instead"
            ),
            Self::TopKTooSmall(k) => write!(f, "topK must be at least 1, got {k}"),
            Self::EmptyScope => f.write_str(
                "scope entries must not be empty; pass absolute folder paths (a result's `source`), or omit scope",
            ),
            Self::Filter(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for QueryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Filter(e) => Some(e),
            _ => None,
        }
    }
}

/// The query trimmed, or why it cannot be searched.
pub(crate) fn validate_query(query: &str) -> Result<&str, QueryError> {
    let q = query.trim();
    let chars = q.chars().count();
    if q.is_empty() {
        Err(QueryError::EmptyQuery)
    } else if chars > MAX_QUERY_CHARS {
        Err(QueryError::TooLong(chars))
    } else {
        Ok(q)
    }
}

/// `topK` < 1 is refused; above [`MAX_TOP_K`] it is clamped.
pub(crate) fn clamp_top_k(top_k: i64) -> Result<usize, QueryError> {
    if top_k < 1 {
        return Err(QueryError::TopKTooSmall(top_k));
    }
    Ok((top_k as u64).min(MAX_TOP_K as u64) as usize)
}

/// Candidates fetched per side: max(4·topK, 120).
pub(crate) fn candidate_window(top_k: usize) -> usize {
    (4 * top_k).max(MIN_CANDIDATES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_queries_are_refused() {
        assert_eq!(validate_query("   \t\n"), Err(QueryError::EmptyQuery));
        assert_eq!(
            QueryError::EmptyQuery.to_string(),
            "query must not be empty"
        );
        assert_eq!(validate_query(" x "), Ok("x"));
    }

    #[test]
    fn queries_over_the_limit_are_refused_by_characters_not_bytes() {
        let at_limit = "я".repeat(MAX_QUERY_CHARS);
        assert_eq!(validate_query(&at_limit), Ok(at_limit.as_str()));
        let over = "a".repeat(MAX_QUERY_CHARS + 1);
        let e = validate_query(&over).unwrap_err();
        assert_eq!(e, QueryError::TooLong(MAX_QUERY_CHARS + 1));
        assert!(e.to_string().contains("4096"), "{e}");
    }

    #[test]
    fn top_k_refused_below_one_and_clamped_above_100() {
        assert_eq!(clamp_top_k(0), Err(QueryError::TopKTooSmall(0)));
        assert_eq!(
            clamp_top_k(-5).unwrap_err().to_string(),
            "topK must be at least 1, got -5"
        );
        assert_eq!(clamp_top_k(100_000_000), Ok(100));
        assert_eq!(clamp_top_k(8), Ok(8));
    }

    #[test]
    fn candidate_window_examples() {
        assert_eq!(candidate_window(8), 120);
        assert_eq!(candidate_window(30), 120);
        assert_eq!(candidate_window(31), 124);
        assert_eq!(candidate_window(100), 400);
    }
}
