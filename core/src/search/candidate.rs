//! What each side of the hybrid search hands to fusion.

/// One chunk addressed by its source and position.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkKey {
    pub source: String,
    pub index: u32,
}

/// A scored candidate from one side of the hybrid search.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub key: ChunkKey,
    /// Vector side: squared L2 distance on unit vectors (2 − 2·cos).
    /// Keyword side: the BM25 score (higher is better).
    pub value: f32,
}
