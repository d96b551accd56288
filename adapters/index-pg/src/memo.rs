//! What one query's chunk list leaves for its document list on the same
//! read view (see `keyword.rs`).

use std::collections::HashMap;

use minirag_rank::BestChunk;

/// What the chunk list of one query learned that its document list needs
/// again: every matched source's title score and best chunk. The engine
/// asks for the chunks first, then the documents, on one view.
pub(crate) struct KeywordMemo {
    pub terms: Vec<String>,
    pub allowed: Option<Vec<i64>>,
    pub titles: HashMap<i64, f64>,
    /// Source id → its best chunk by text score.
    pub best: HashMap<i64, BestChunk>,
}
