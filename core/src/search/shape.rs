//! The response of `query_documents`: hits, the distinct
//! sources in rank order, and each hit's parent section once.

use crate::location::Location;

use super::display::display_path;

/// One result as answers carry it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultItem {
    /// The chunk's text.
    pub text: String,
    /// Its source.
    pub source: String,
    /// The source's title.
    pub title: String,
    /// The chunk's index in the source.
    pub chunk_index: u32,
    /// Its fused score, higher is better.
    pub score: f64,
    /// Its vector distance, when the vector list had it.
    pub distance: Option<f32>,
    /// Its parent section's id, when results group by section.
    pub parent_id: Option<String>,
    /// Where in the document the chunk is, when known.
    pub location: Option<Location>,
    /// Bytes of `text` before the unit's own body: its breadcrumb.
    pub prefix_len: usize,
}

impl ResultItem {
    /// `report.pdf, p. 12`: the file name (else the title) and the place.
    pub fn citation(&self) -> Option<String> {
        let name = match self.source.starts_with('/') {
            true => self.source.rsplit('/').next().unwrap_or(&self.source),
            false => self.title.as_str(),
        };
        Some(self.location.as_ref()?.citation(name))
    }

    /// The breadcrumb the chunker put before the body (`Guide > Errors`).
    pub fn breadcrumb(&self) -> &str {
        self.text.get(..self.prefix_len).unwrap_or("").trim()
    }

    /// The unit's own text, after its breadcrumb.
    pub fn body(&self) -> &str {
        self.text
            .get(self.prefix_len..)
            .unwrap_or(&self.text)
            .trim()
    }
}

/// One document of a query's results.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceItem {
    /// The source.
    pub source: String,
    /// Its title.
    pub title: String,
    /// Results from it.
    pub hits: usize,
    /// The source relative to its root.
    pub display_path: String,
}

/// A hit's place in one ranked list: 1-based rank and that list's score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ListRank {
    /// 1-based place in the list.
    pub rank: usize,
    /// Vector list: squared L2 distance of unit vectors (lower is nearer).
    /// Keyword list: the BM25 score (higher is better).
    pub score: f64,
}

/// Why a hit ranked where it did: its place in each list it was in, the
/// keyword weight fusion used, and the fused score.
#[derive(Debug, Clone, PartialEq)]
pub struct Explain {
    /// The hit's place in the vector list, if it was there.
    pub vector: Option<ListRank>,
    /// The hit's place in the keyword list, if it was there.
    pub keyword: Option<ListRank>,
    /// The hit's document in the whole-document list (BM25 over the whole
    /// document, from `IndexView::document_search`).
    pub document: Option<ListRank>,
    /// The keyword share of the fusion (`RAG_HYBRID_WEIGHT`, or 1 when the
    /// vector side was blind).
    pub keyword_weight: f64,
    /// The hit's score: its document's fused score, halved for each chunk
    /// of the same document ranked before it.
    pub fused: f64,
}

/// A query's answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryResponse {
    /// The results, best first.
    pub results: Vec<ResultItem>,
    /// Their documents, in order of first appearance.
    pub sources: Vec<SourceItem>,
    /// Parent id → rebuilt section text, in order of first appearance.
    pub parents: Vec<(String, String)>,
    /// Why the results are fewer or keyword-only, when they are.
    pub notice: Option<String>,
    /// One per result, in order, when the request asked for it.
    pub explain: Option<Vec<Explain>>,
}

/// Distinct sources in order of first appearance; `title` from the first hit.
pub(crate) fn sources_of<S: AsRef<str>>(results: &[ResultItem], roots: &[S]) -> Vec<SourceItem> {
    let mut out: Vec<SourceItem> = Vec::new();
    for r in results {
        match out.iter_mut().find(|s| s.source == r.source) {
            Some(s) => s.hits += 1,
            None => out.push(SourceItem {
                source: r.source.clone(),
                title: r.title.clone(),
                hits: 1,
                display_path: display_path(&r.source, roots),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(source: &str, title: &str) -> ResultItem {
        ResultItem {
            text: "t".into(),
            source: source.into(),
            title: title.into(),
            chunk_index: 0,
            prefix_len: 0,
            score: 1.0,
            distance: None,
            parent_id: None,
            location: None,
        }
    }

    #[test]
    fn sources_dedupe_in_rank_order_and_hits_sum_to_results() {
        let results = vec![
            item("/r/b.md", "B"),
            item("/r/a.md", "A"),
            item("/r/b.md", "B2"),
        ];
        let sources = sources_of(&results, &["/r"]);
        assert_eq!(sources.len(), 2);
        assert_eq!(
            (
                sources[0].source.as_str(),
                sources[0].hits,
                sources[0].title.as_str()
            ),
            ("/r/b.md", 2, "B")
        );
        assert_eq!(sources[0].display_path, "b.md");
        assert_eq!(sources.iter().map(|s| s.hits).sum::<usize>(), results.len());
    }
}
