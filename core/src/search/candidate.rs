//! What each side of the hybrid search hands to fusion.

/// One chunk addressed by its source and position.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkKey {
    /// The source: a path, URL or data id.
    pub source: String,
    /// The chunk's index in the source.
    pub index: u32,
}

/// A scored candidate from one side of the hybrid search.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Which chunk.
    pub key: ChunkKey,
    /// Vector side: squared L2 distance on unit vectors (2 − 2·cos).
    /// Keyword side: the BM25 score (higher is better).
    pub value: f32,
}

/// A document from the whole-document list: its score and the chunk that
/// matched best, so a document found only as a whole still has an answer
/// to show.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentHit {
    /// The source.
    pub source: String,
    /// Whole-document BM25 (higher is better).
    pub score: f32,
    /// Index of the document's best keyword chunk.
    pub best_chunk: u32,
}
