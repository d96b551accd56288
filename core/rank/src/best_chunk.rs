//! A document's best chunk: the one its hit points at.

/// The highest text score seen and its chunk index; the first (lowest
/// index) of equals. A document matched by its title alone keeps chunk 0,
/// so it starts there with a score of 0.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BestChunk {
    /// The best text score offered (compared as f32, as both adapters keep it).
    pub score: f32,
    /// Its chunk index.
    pub index: u32,
}

impl BestChunk {
    /// Offers chunk `index` with text score `score`; only a matched chunk
    /// (score above 0) can take the place.
    pub fn offer(&mut self, score: f32, index: u32) {
        if score > self.score || (score > 0.0 && score == self.score && index < self.index) {
            *self = Self { score, index };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_score_wins_and_the_first_of_equals() {
        let mut b = BestChunk::default();
        b.offer(0.0, 5);
        assert_eq!(b.index, 0, "an unmatched chunk never takes the place");
        b.offer(1.0, 7);
        b.offer(2.0, 9);
        b.offer(2.0, 3);
        b.offer(2.0, 4);
        b.offer(1.5, 1);
        assert_eq!(
            b,
            BestChunk {
                score: 2.0,
                index: 3
            }
        );
    }
}
