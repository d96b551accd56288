//! What one query's chunk list leaves for its document list on the same
//! read view (see `keyword.rs`).

use std::collections::HashMap;

/// What the chunk list of one query learned that its document list needs
/// again: every matched source's title score and best chunk. The engine
/// asks for the chunks first, then the documents, on one view.
pub(crate) struct KeywordMemo {
    pub terms: Vec<String>,
    pub allowed: Option<Vec<i64>>,
    pub titles: HashMap<i64, f64>,
    /// Source id → (best text score as f32, its chunk index).
    pub best: HashMap<i64, (f32, u32)>,
}

/// Keeps a source's best chunk: the highest text score (compared as f32),
/// the first of equals.
pub(crate) fn keep_best(best: &mut HashMap<i64, (f32, u32)>, id: i64, score: f64, idx: u32) {
    let score = score as f32;
    let slot = best.entry(id).or_insert((score, idx));
    if score > slot.0 || (score == slot.0 && idx < slot.1) {
        *slot = (score, idx);
    }
}
