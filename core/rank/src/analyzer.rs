//! Text → index terms, shared by indexing and querying.
//!
//! - Words are runs of letters, digits and combining marks, lower-cased;
//!   `ё` folds to `е`.
//! - Latin words get the English Snowball stemmer, Cyrillic words the Russian
//!   one (`документы`/`документов`, `indexing`/`indexed` meet).
//! - Identifiers are indexed whole *and* by parts: `ERR_CONN_RESET`,
//!   `SPEC-112`, `3.4.2`, `os.WNOHANG`, `И-112` yield the whole lower-cased
//!   token plus `err`, `conn`, `reset`, …, so an exact identifier query ranks
//!   the chunk holding it first.
//! - CJK runs become overlapping character bigrams (no dictionary needed).

use rust_stemmers::{Algorithm, Stemmer};

use crate::word_memo;

/// Text → terms, the one analysis for documents and queries alike.
pub struct Analyzer {
    english: Stemmer,
    russian: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self {
            english: Stemmer::create(Algorithm::English),
            russian: Stemmer::create(Algorithm::Russian),
        }
    }
}

fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_mark(c)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

fn is_cyrillic(c: char) -> bool {
    matches!(c as u32, 0x0400..=0x04FF)
}

/// Characters that join the parts of an identifier.
fn is_joiner(c: char) -> bool {
    matches!(c, '_' | '-' | '.' | ':' | '/' | '#' | '+')
}

impl Analyzer {
    /// A query's distinct terms, sorted: BM25 counts each once per query.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        let mut terms = self.terms(query);
        terms.sort();
        terms.dedup();
        terms
    }

    /// Terms of `text`, in order, with repeats (term frequency counts them).
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for raw in text.split_whitespace() {
            let token = raw.trim_matches(|c: char| !is_word_char(c));
            if token.is_empty() {
                continue;
            }
            let parts = token
                .split(|c: char| !is_word_char(c))
                .filter(|p| !p.is_empty());
            if token.chars().any(is_joiner) && parts.clone().nth(1).is_some() {
                out.push(fold(token));
            }
            for part in parts {
                self.part_terms(part, &mut out);
            }
        }
        out
    }

    /// Byte ranges of the words of `text` that share a term with `query`'s
    /// content words: the words the keyword side matched, for highlighting.
    /// Stopwords (`the`, `we`, `что`, `при`) mark nothing, unless the query
    /// is only stopwords.
    pub fn matches(&self, query: &str, text: &str) -> Vec<std::ops::Range<usize>> {
        let content: Vec<&str> = query
            .split_whitespace()
            .filter(|w| !is_stopword(w.trim_matches(|c: char| !is_word_char(c))))
            .collect();
        let query = match content.is_empty() {
            true => query.to_string(),
            false => content.join(" "),
        };
        let wanted: std::collections::HashSet<String> = self.terms(&query).into_iter().collect();
        let mut out = Vec::new();
        if wanted.is_empty() {
            return out;
        }
        let base = text.as_ptr() as usize;
        for raw in text.split_whitespace() {
            let token = raw.trim_matches(|c: char| !is_word_char(c));
            if token.is_empty() || !self.terms(token).iter().any(|t| wanted.contains(t)) {
                continue;
            }
            let start = token.as_ptr() as usize - base;
            out.push(start..start + token.len());
        }
        out
    }

    fn part_terms(&self, part: &str, out: &mut Vec<String>) {
        if !part.chars().any(is_cjk) {
            out.push(word_memo::term_of(part, |w| self.stem(&fold(w))));
            return;
        }
        // Split into CJK runs (bigrams) and other runs (words).
        let chars: Vec<char> = part.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let cjk = is_cjk(chars[i]);
            let start = i;
            while i < chars.len() && is_cjk(chars[i]) == cjk {
                i += 1;
            }
            let run = &chars[start..i];
            if !cjk {
                out.push(self.stem(&fold(&run.iter().collect::<String>())));
            } else if run.len() == 1 {
                out.push(run[0].to_string());
            } else {
                out.extend(run.windows(2).map(|w| w.iter().collect::<String>()));
            }
        }
    }

    fn stem(&self, word: &str) -> String {
        if word.chars().any(is_cyrillic) {
            self.russian.stem(word).into_owned()
        } else if word.chars().any(|c| c.is_ascii_alphabetic()) {
            self.english.stem(word).into_owned()
        } else {
            word.to_string()
        }
    }
}

/// Whether a word is a stopword of English or Russian, the analyzer's
/// two stemmed languages (NLTK's lists).
pub(crate) fn is_stopword(word: &str) -> bool {
    static WORDS: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| {
        ["en", "ru"]
            .into_iter()
            .filter_map(stop_words::lookup)
            .flatten()
            .copied()
            .collect()
    });
    words.contains(word.to_lowercase().as_str())
}

fn fold(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let lower = s.to_lowercase();
    if lower.contains('ё') {
        lower.replace('ё', "е")
    } else {
        lower
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(t: &str) -> Vec<String> {
        Analyzer::default().terms(t)
    }

    #[test]
    fn matches_are_the_words_that_share_a_term_with_the_query() {
        let text = "Документы: indexing of ERR_CONN_RESET, and other words.";
        let found: Vec<&str> = Analyzer::default()
            .matches("документов indexed reset", text)
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(found, ["Документы", "indexing", "ERR_CONN_RESET"]);
        assert!(Analyzer::default().matches("", text).is_empty());
    }

    #[test]
    fn stems_meet_across_forms() {
        assert_eq!(terms("документы"), terms("документов"));
        assert_eq!(terms("indexing"), terms("indexed"));
        assert_eq!(terms("Ёлка"), terms("елка"));
    }

    #[test]
    fn identifiers_whole_and_in_parts() {
        let t = terms("see ERR_CONN_RESET now");
        assert!(t.contains(&"err_conn_reset".to_string()));
        assert!(t.contains(&"conn".to_string()) && t.contains(&"reset".to_string()));
        for (text, whole) in [
            ("SPEC-112", "spec-112"),
            ("3.4.2", "3.4.2"),
            ("os.WNOHANG,", "os.wnohang"),
            ("(И-112)", "и-112"),
        ] {
            assert!(
                terms(text).contains(&whole.to_string()),
                "{text}: {:?}",
                terms(text)
            );
        }
        assert_eq!(terms("3.4.2"), ["3.4.2", "3", "4", "2"]);
    }

    #[test]
    fn cjk_bigrams() {
        assert_eq!(terms("東京都"), ["東京", "京都"]);
        assert_eq!(terms("日"), ["日"]);
    }

    #[test]
    fn punctuation_alone_gives_nothing() {
        assert!(terms("-- ... | --- |").is_empty());
    }

    #[test]
    fn stopwords_mark_nothing_unless_they_are_the_whole_query() {
        let a = Analyzer::default();
        let text = "The harbour we built. Что при этом сказано о гавани?";
        let marked =
            |q: &str| -> Vec<&str> { a.matches(q, text).into_iter().map(|r| &text[r]).collect() };
        assert_eq!(marked("the harbour we built"), ["harbour", "built"]);
        assert_eq!(marked("что при гавани"), ["гавани"]);
        assert_eq!(marked("the"), ["The"]);
        assert!(is_stopword("The") && is_stopword("при") && !is_stopword("harbour"));
    }
}
