//! The keyword lists, scored here. PostgreSQL hands over the query terms'
//! postings in one read each: chunk postings packed one row per (term,
//! source) (see [`crate::packed`]), document and title postings one row per
//! (term, source). BM25 is summed in hash maps and the top k taken here, so
//! a frequent term costs one row per document that holds it, not one per
//! chunk, and nothing is sorted in SQL. Scores use the analyzer's formula and
//! constants, as index-mem does (N and average lengths from `stats`, document
//! frequencies over the whole index, also for a scoped query).

use std::collections::{HashMap, HashSet};

use minirag_core::ports::IndexError;
use minirag_core::search::{Candidate, ChunkKey, DocumentHit};
use minirag_rank::{best_first, idf, tf_part, title_score, BestChunk, TopK};

use crate::memo::KeywordMemo;
use crate::packed::unpack;
use crate::view::PgView;

/// BM25 of one posting by the shared formula, its two parts multiplied
/// and summed here in f64.
fn bm25(n: f64, df: f64, tf: f64, len: f64, avg: f64) -> f64 {
    f64::from(idf(n as f32, df as f32)) * f64::from(tf_part(tf as f32, len as f32, avg as f32))
}

fn damaged(source_id: i64, term: &str) -> IndexError {
    IndexError::storage(format!(
        "the packed postings of term '{term}' in source id {source_id} are damaged; \
         re-ingest that source (or run sync) to rewrite them"
    ))
}

impl PgView<'_> {
    /// The rows of `table` for the query terms (`$1`), only those of the
    /// sources `ids` when given.
    fn term_rows(
        &self,
        doing: &str,
        select: &str,
        terms: &[String],
        ids: Option<&[i64]>,
    ) -> Result<Vec<postgres::Row>, IndexError> {
        match ids {
            Some(ids) => self.query(
                doing,
                &format!("{select} WHERE term = ANY($1) AND source_id = ANY($2)"),
                &[&terms, &ids],
            ),
            None => self.query(doing, &format!("{select} WHERE term = ANY($1)"), &[&terms]),
        }
    }

    /// Each term's chunk frequency over the whole index (a sum over the
    /// primary key's included counts: an index-only scan).
    fn chunk_df(&self, terms: &[String]) -> Result<HashMap<String, f64>, IndexError> {
        let s = self.schema();
        let rows = self.query(
            "counting term frequencies",
            &format!("SELECT term, sum(n)::float8 FROM {s}.chunk_postings WHERE term = ANY($1) GROUP BY term"),
            &[&terms],
        )?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Each allowed source's title score (BM25 × the title weight).
    fn title_scores(
        &self,
        terms: &[String],
        allowed: Option<&HashSet<i64>>,
    ) -> Result<HashMap<i64, f64>, IndexError> {
        let s = self.schema();
        let rows = self.query(
            "scoring titles",
            &format!("SELECT term, source_id, tf, len FROM {s}.title_terms WHERE term = ANY($1)"),
            &[&terms],
        )?;
        let mut df: HashMap<&str, f64> = HashMap::new();
        for r in &rows {
            *df.entry(r.get::<_, &str>(0)).or_default() += 1.0;
        }
        let (_, _, ns, _, tavg) = self.averages();
        let mut sum: HashMap<i64, f64> = HashMap::new();
        for r in &rows {
            let id: i64 = r.get(1);
            if allowed.is_some_and(|a| !a.contains(&id)) {
                continue;
            }
            let term: &str = r.get(0);
            let tf = f64::from(r.get::<_, i32>(2));
            let len = f64::from(r.get::<_, i32>(3));
            *sum.entry(id).or_default() += bm25(ns, df[term], tf, len, tavg);
        }
        Ok(sum
            .into_iter()
            .map(|(id, s)| (id, title_score(s)))
            .collect())
    }

    /// Text BM25 of the chunks of the allowed sources (`ids`, or all)
    /// holding a query term, one source at a time: `each` gets the source
    /// id and a dense slice by chunk index (0 where no term matched).
    fn chunk_text_by_source(
        &self,
        terms: &[String],
        ids: Option<&[i64]>,
        mut each: impl FnMut(i64, &[f64]),
    ) -> Result<(), IndexError> {
        let s = self.schema();
        let select = format!("SELECT term, source_id, n, data FROM {s}.chunk_postings");
        let rows = self.term_rows("reading postings", &select, terms, ids)?;
        let df: HashMap<String, f64> = match ids {
            Some(_) => self.chunk_df(terms)?,
            None => {
                let mut df = HashMap::new();
                for r in &rows {
                    *df.entry(r.get::<_, String>(0)).or_default() += f64::from(r.get::<_, i32>(2));
                }
                df
            }
        };
        let (n, avg, ..) = self.averages();
        let mut postings: Vec<(i64, &str, f64, &[u8])> = rows
            .iter()
            .map(|r| {
                let term: &str = r.get(0);
                (
                    r.get(1),
                    term,
                    df.get(term).copied().unwrap_or(1.0),
                    r.get(3),
                )
            })
            .collect();
        postings.sort_unstable_by_key(|p| p.0);
        let mut dense: Vec<f64> = Vec::new();
        let mut at = 0;
        while at < postings.len() {
            let id = postings[at].0;
            dense.clear();
            while at < postings.len() && postings[at].0 == id {
                let (_, term, d, data) = postings[at];
                unpack(data, |p| {
                    let i = p.idx as usize;
                    if i >= dense.len() {
                        dense.resize(i + 1, 0.0);
                    }
                    dense[i] += bm25(n, d, f64::from(p.tf), f64::from(p.len), avg);
                })
                .ok_or_else(|| damaged(id, term))?;
                at += 1;
            }
            each(id, &dense);
        }
        Ok(())
    }

    /// [`PgView::chunk_text_by_source`] as a map `(source id, index) → score`.
    fn chunk_text_scores(
        &self,
        terms: &[String],
        ids: Option<&[i64]>,
    ) -> Result<HashMap<(i64, u32), f64>, IndexError> {
        let mut scores = HashMap::new();
        self.chunk_text_by_source(terms, ids, |id, dense| {
            for (i, &s) in dense.iter().enumerate() {
                if s > 0.0 {
                    scores.insert((id, i as u32), s);
                }
            }
        })?;
        Ok(scores)
    }

    /// `id → source` for the given source ids.
    fn source_names(&self, ids: &[i64]) -> Result<HashMap<i64, String>, IndexError> {
        let s = self.schema();
        let rows = self.query(
            "naming sources",
            &format!("SELECT id, source FROM {s}.sources WHERE id = ANY($1)"),
            &[&ids],
        )?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// The top `k` chunks by text BM25 plus their source's title score
    /// (every chunk of a source whose title matches gets it, matched or
    /// not); ties by source id, then chunk index.
    pub(crate) fn score_chunks(
        &self,
        terms: &[String],
        k: usize,
        allowed: &Option<Vec<i64>>,
    ) -> Result<Vec<Candidate>, IndexError> {
        let ids = allowed.as_deref();
        let allowed_set: Option<HashSet<i64>> = ids.map(|i| i.iter().copied().collect());
        let titles = self.title_scores(terms, allowed_set.as_ref())?;
        // Ids are (source id, chunk index): ties go to the lower source id,
        // then the lower index.
        let mut top: TopK<(i64, u32), f64> = TopK::new(k);
        // The matched chunks of sources whose title matches too.
        let mut matched: HashMap<i64, HashSet<u32>> = HashMap::new();
        let mut best: HashMap<i64, BestChunk> = HashMap::new();
        self.chunk_text_by_source(terms, ids, |id, dense| {
            let t = titles.get(&id).copied();
            for (i, &s) in dense.iter().enumerate() {
                if s > 0.0 {
                    top.offer((id, i as u32), s + t.unwrap_or(0.0));
                    if t.is_some() {
                        matched.entry(id).or_default().insert(i as u32);
                    }
                    best.entry(id).or_default().offer(s as f32, i as u32);
                }
            }
        })?;
        // Chunks no term matched, scored by their title alone: the best
        // title sources first, at most k chunks in all.
        let floor = top.floor().unwrap_or(f64::NEG_INFINITY);
        let mut title_only: Vec<(f64, i64)> = titles
            .iter()
            .filter(|(_, &t)| t >= floor)
            .map(|(&id, &t)| (t, id))
            .collect();
        title_only.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        if !title_only.is_empty() {
            let s = self.schema();
            let want: Vec<i64> = title_only.iter().map(|(_, id)| *id).collect();
            let counts: HashMap<i64, i32> = self
                .query(
                    "counting chunks",
                    &format!("SELECT id, chunk_count FROM {s}.sources WHERE id = ANY($1)"),
                    &[&want],
                )?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            let mut added = 0;
            'sources: for (t, id) in title_only {
                let seen = matched.get(&id);
                for idx in 0..counts.get(&id).copied().unwrap_or(0).max(0) as u32 {
                    if added >= k {
                        break 'sources;
                    }
                    if !seen.is_some_and(|m| m.contains(&idx)) {
                        top.offer((id, idx), t);
                        added += 1;
                    }
                }
            }
        }
        *self.memo() = Some(KeywordMemo {
            terms: terms.to_vec(),
            allowed: allowed.clone(),
            titles,
            best,
        });
        let ranked: Vec<(f64, i64, u32)> = top
            .into_sorted()
            .into_iter()
            .map(|((id, idx), s)| (s, id, idx))
            .collect();
        let wanted: Vec<i64> = ranked.iter().map(|r| r.1).collect();
        let names = self.source_names(&wanted)?;
        Ok(ranked
            .into_iter()
            .filter_map(|(score, id, idx)| {
                Some(Candidate {
                    key: ChunkKey {
                        source: names.get(&id)?.clone(),
                        index: idx,
                    },
                    value: score as f32,
                })
            })
            .collect())
    }

    /// The top `k` documents by whole-document BM25 plus title, each with
    /// its best chunk by text BM25 (chunk 0 for a title-only match).
    pub(crate) fn score_documents(
        &self,
        terms: &[String],
        k: usize,
        allowed: &Option<Vec<i64>>,
    ) -> Result<Vec<DocumentHit>, IndexError> {
        let s = self.schema();
        let select = format!("SELECT term, source_id, tf, len FROM {s}.doc_terms");
        let rows = self.term_rows("ranking documents", &select, terms, allowed.as_deref())?;
        let df: HashMap<String, f64> = match allowed {
            Some(_) => self
                .query(
                    "counting document frequencies",
                    &format!("SELECT term, count(*)::float8 FROM {s}.doc_terms WHERE term = ANY($1) GROUP BY term"),
                    &[&terms],
                )?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect(),
            None => {
                let mut df = HashMap::new();
                for r in &rows {
                    *df.entry(r.get::<_, String>(0)).or_default() += 1.0;
                }
                df
            }
        };
        let (_, _, ns, davg, _) = self.averages();
        let mut scores: HashMap<i64, f64> = HashMap::new();
        for r in &rows {
            let term: &str = r.get(0);
            let tf = f64::from(r.get::<_, i32>(2));
            let len = r.get::<_, i64>(3) as f64;
            let d = df.get(term).copied().unwrap_or(1.0);
            *scores.entry(r.get(1)).or_default() += bm25(ns, d, tf, len, davg);
        }
        // The chunk list of this query, if it came first, already read the
        // titles and every matched source's best chunk.
        let memo = self
            .memo()
            .take()
            .filter(|m| m.terms == terms && &m.allowed == allowed);
        let (titles, memo_best) = match memo {
            Some(m) => (m.titles, Some(m.best)),
            None => {
                let allowed_set: Option<HashSet<i64>> =
                    allowed.as_ref().map(|i| i.iter().copied().collect());
                (self.title_scores(terms, allowed_set.as_ref())?, None)
            }
        };
        for (id, t) in titles {
            *scores.entry(id).or_default() += t;
        }
        let mut ranked: Vec<(i64, f64)> = scores.into_iter().collect();
        best_first(&mut ranked, k);
        if ranked.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<i64> = ranked.iter().map(|r| r.0).collect();
        // Each document's best chunk: the highest text score (compared as
        // f32), the first of equals.
        let best = match memo_best {
            Some(best) => best,
            None => {
                let mut best: HashMap<i64, BestChunk> = HashMap::new();
                for ((id, idx), score) in self.chunk_text_scores(terms, Some(&ids))? {
                    best.entry(id).or_default().offer(score as f32, idx);
                }
                best
            }
        };
        let names = self.source_names(&ids)?;
        Ok(ranked
            .into_iter()
            .filter_map(|(id, score)| {
                Some(DocumentHit {
                    source: names.get(&id)?.clone(),
                    score: score as f32,
                    best_chunk: best.get(&id).map_or(0, |b| b.index),
                })
            })
            .collect())
    }
}
