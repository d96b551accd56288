//! A Unigram (SentencePiece) model: the Viterbi segmentation of the
//! `tokenizers` crate's optimised path, over one hash map instead of a trie.

use ahash::AHashMap;
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use tokenizers::models::unigram::UnigramTrainer;
use tokenizers::{Model, Token};

/// What an unknown character scores below the rarest piece, as in
/// SentencePiece and the `tokenizers` crate.
const UNK_PENALTY: f64 = 10.0;

/// A Unigram vocabulary and its segmentation.
///
/// The pieces at a position are found by looking up every prefix that ends
/// at a character boundary, up to the longest piece; a trie would find them
/// with fewer lookups at four times the memory.
#[derive(Clone)]
pub struct CompactUnigram {
    /// Each piece and its log-probability, by id.
    pieces: Vec<(Box<str>, f64)>,
    /// A piece's id; for a piece listed twice, the last (as the crate does).
    ids: AHashMap<Box<str>, u32>,
    longest_piece: usize,
    min_score: f64,
    unk_id: Option<u32>,
    byte_fallback: bool,
}

/// The fields of a Unigram model in `tokenizer.json`.
#[derive(Deserialize)]
pub(crate) struct UnigramFile {
    #[serde(default)]
    unk_id: Option<usize>,
    vocab: Vec<(String, f64)>,
    #[serde(default)]
    byte_fallback: bool,
}

/// A model file the Unigram model cannot use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnigramError {
    EmptyVocabulary,
    UnkIdOutOfRange {
        unk_id: usize,
        pieces: usize,
    },
    /// A character no piece covers, and no unknown token to stand for it.
    MissingUnk,
}

impl fmt::Display for UnigramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyVocabulary => write!(f, "the Unigram model's vocab is empty"),
            Self::UnkIdOutOfRange { unk_id, pieces } => write!(
                f,
                "the Unigram model's unk_id {unk_id} is past its {pieces} pieces"
            ),
            Self::MissingUnk => write!(
                f,
                "a character matches no piece and the Unigram model has no unk_id"
            ),
        }
    }
}

impl std::error::Error for UnigramError {}

impl CompactUnigram {
    pub(crate) fn from_file(file: UnigramFile) -> Result<Self, UnigramError> {
        Self::new(file.vocab, file.unk_id, file.byte_fallback)
    }

    /// The same checks as the crate's `Unigram::from`.
    pub fn new(
        vocab: Vec<(String, f64)>,
        unk_id: Option<usize>,
        byte_fallback: bool,
    ) -> Result<Self, UnigramError> {
        if let Some(unk_id) = unk_id {
            if vocab.is_empty() {
                return Err(UnigramError::EmptyVocabulary);
            }
            if unk_id >= vocab.len() {
                return Err(UnigramError::UnkIdOutOfRange {
                    unk_id,
                    pieces: vocab.len(),
                });
            }
        }
        let mut ids = AHashMap::with_capacity(vocab.len());
        let mut pieces = Vec::with_capacity(vocab.len());
        let mut min_score = f64::INFINITY;
        let mut longest_piece = 0;
        for (id, (piece, score)) in vocab.into_iter().enumerate() {
            min_score = min_score.min(score);
            longest_piece = longest_piece.max(piece.len());
            let piece = piece.into_boxed_str();
            ids.insert(piece.clone(), id as u32);
            pieces.push((piece, score));
        }
        Ok(Self {
            pieces,
            ids,
            longest_piece,
            min_score,
            unk_id: unk_id.map(|u| u as u32),
            byte_fallback,
        })
    }

    /// The best segmentation of `text`: pieces as byte ranges, runs of
    /// unknown characters fused into one.
    fn segment(&self, text: &str) -> Result<Vec<(usize, usize)>, UnigramError> {
        #[derive(Clone, Copy)]
        struct Best {
            id: u32,
            score: f64,
            start: Option<usize>,
        }
        let unk_score = self.min_score - UNK_PENALTY;
        let mut best = vec![
            Best {
                id: 0,
                score: 0.0,
                start: None
            };
            text.len() + 1
        ];
        let offer = |best: &mut [Best], start: usize, end: usize, id: u32, score: f64| {
            let candidate = best[start].score + score;
            let node = &mut best[end];
            if node.start.is_none() || candidate > node.score {
                *node = Best {
                    id,
                    score: candidate,
                    start: Some(start),
                };
            }
        };
        for (start, first) in text.char_indices() {
            let first_len = first.len_utf8();
            let mut single = false;
            let rest = &text[start..];
            let ends = rest
                .char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .take_while(|&len| len <= self.longest_piece);
            for len in ends {
                if let Some(&id) = self.ids.get(&rest[..len]) {
                    offer(
                        &mut best,
                        start,
                        start + len,
                        id,
                        self.pieces[id as usize].1,
                    );
                    single |= len == first_len;
                }
            }
            if !single {
                let unk = self.unk_id.ok_or(UnigramError::MissingUnk)?;
                offer(&mut best, start, start + first_len, unk, unk_score);
            }
        }
        let mut out = Vec::new();
        let mut end = text.len();
        let mut unk_run_end = None;
        while end > 0 {
            let node = best[end];
            let start = node
                .start
                .expect("every boundary is reached from the one before");
            if Some(node.id) == self.unk_id {
                unk_run_end.get_or_insert(end);
            } else {
                if let Some(run_end) = unk_run_end.take() {
                    out.push((end, run_end));
                }
                out.push((start, end));
            }
            end = start;
        }
        if let Some(run_end) = unk_run_end {
            out.push((0, run_end));
        }
        out.reverse();
        Ok(out)
    }

    fn byte_tokens(&self, piece: &str, offsets: (usize, usize)) -> Option<Vec<Token>> {
        piece
            .bytes()
            .map(|b| {
                let name = format!("<0x{b:02X}>");
                let id = *self.ids.get(name.as_str())?;
                Some(Token::new(id, name, offsets))
            })
            .collect()
    }
}

impl Model for CompactUnigram {
    type Trainer = UnigramTrainer;

    fn tokenize(&self, text: &str) -> tokenizers::Result<Vec<Token>> {
        let mut tokens = Vec::new();
        for (start, end) in self.segment(text)? {
            let piece = &text[start..end];
            let offsets = (start, end);
            let id = match self.ids.get(piece) {
                Some(&id) => id,
                None => {
                    if self.byte_fallback {
                        if let Some(bytes) = self.byte_tokens(piece, offsets) {
                            tokens.extend(bytes);
                            continue;
                        }
                    }
                    self.unk_id.ok_or(UnigramError::MissingUnk)?
                }
            };
            tokens.push(Token::new(id, piece.to_string(), offsets));
        }
        Ok(tokens)
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.pieces.get(id as usize).map(|(p, _)| p.to_string())
    }

    fn get_vocab(&self) -> HashMap<String, u32> {
        self.ids
            .iter()
            .map(|(p, &id)| (p.to_string(), id))
            .collect()
    }

    fn get_vocab_size(&self) -> usize {
        self.pieces.len()
    }

    /// Saving is training's business, which this model does not do.
    fn save(&self, _folder: &Path, _prefix: Option<&str>) -> tokenizers::Result<Vec<PathBuf>> {
        Ok(Vec::new())
    }

    fn get_trainer(&self) -> UnigramTrainer {
        UnigramTrainer::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenizers::models::unigram::Unigram;

    fn both(
        vocab: &[(&str, f64)],
        unk: Option<usize>,
        fallback: bool,
    ) -> (CompactUnigram, Unigram) {
        let v: Vec<(String, f64)> = vocab.iter().map(|(p, s)| (p.to_string(), *s)).collect();
        (
            CompactUnigram::new(v.clone(), unk, fallback).unwrap(),
            Unigram::from(v, unk, fallback).unwrap(),
        )
    }

    fn ids(m: &impl Model, text: &str) -> Vec<(u32, String, (usize, usize))> {
        m.tokenize(text)
            .unwrap()
            .into_iter()
            .map(|t| (t.id, t.value, t.offsets))
            .collect()
    }

    #[test]
    fn segments_as_the_crate_does_with_unknowns_fused_and_ties_to_the_first() {
        let (ours, theirs) = both(
            &[
                ("<unk>", 0.0),
                ("a", -1.0),
                ("b", -2.0),
                ("ab", -3.0),
                ("abc", -3.5),
                ("cd", -1.0),
                ("d", -1.5),
                ("ab", -0.5),
                ("é", -1.0),
            ],
            Some(0),
            false,
        );
        for text in [
            "abcd",
            "ab",
            "xxab",
            "abxx",
            "éxéyzé",
            "a",
            "dcba",
            "zzz",
            "abcdab",
        ] {
            assert_eq!(ids(&ours, text), ids(&theirs, text), "{text}");
        }
    }

    #[test]
    fn byte_fallback_spells_an_unknown_run_in_bytes() {
        let (ours, theirs) = both(
            &[
                ("<unk>", 0.0),
                ("a", -1.0),
                ("<0xC3>", -5.0),
                ("<0xA9>", -5.0),
            ],
            Some(0),
            true,
        );
        for text in ["aéa", "é", "aa", "a\u{1F600}"] {
            assert_eq!(ids(&ours, text), ids(&theirs, text), "{text}");
        }
    }

    #[test]
    fn a_bad_vocabulary_is_refused_and_a_missing_unk_is_an_error_not_a_panic() {
        assert_eq!(
            CompactUnigram::new(vec![("a".into(), 0.0)], Some(3), false).err(),
            Some(UnigramError::UnkIdOutOfRange {
                unk_id: 3,
                pieces: 1
            })
        );
        assert_eq!(
            CompactUnigram::new(vec![], Some(0), false).err(),
            Some(UnigramError::EmptyVocabulary)
        );
        let m = CompactUnigram::new(vec![("a".into(), 0.0)], None, false).unwrap();
        assert!(m.tokenize("ab").is_err());
        assert_eq!(m.tokenize("aa").unwrap().len(), 2);
    }
}
