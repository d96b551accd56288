//! Model-based test: random replace / delete / move / embed / compact /
//! reopen / query sequences against a brute-force model give the same
//! answers, on any adapter.

use std::collections::{BTreeMap, HashMap};

use minirag_core::ports::{Embeddings, Index, SourceAttributes};
use minirag_core::search::{Filter, FilterRequest, Scope};
use minirag_rank::{bm25, title_score, Analyzer};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::fixtures::*;
use crate::Subject;

const SOURCES: [&str; 6] = [
    "/a/one.md",
    "/a/two.md",
    "/b/three.md",
    "/b/four.md",
    "note-1",
    "note-10",
];
const WORDS: [&str; 10] = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "индекс",
    "документы",
    "ERR_CONN_RESET",
    "3.4.2",
    "東京都",
    "indexing",
];

#[derive(Debug, Clone)]
enum Step {
    Replace {
        source: usize,
        title: usize,
        texts: Vec<Vec<usize>>,
        with_vectors: bool,
    },
    Delete(usize),
    Move(usize, usize),
    /// Vectors for a stored source in two `set_vectors` batches, split at
    /// `split` (mod its length + 1), with a compaction or a reopen between.
    Embed {
        source: usize,
        split: usize,
        between: u8,
    },
    Compact,
    Reopen,
    /// Query words, a scope and a filter (indices into [`SCOPES`], [`FILTERS`]).
    Keyword(Vec<usize>, Option<usize>, Option<usize>),
    Vector(Vec<usize>, Option<usize>, Option<usize>),
}

fn step() -> impl Strategy<Value = Step> {
    let text = prop::collection::vec(0..WORDS.len(), 1..6);
    prop_oneof![
        5 => (0..SOURCES.len(), 0..WORDS.len(), prop::collection::vec(text.clone(), 1..5), prop::bool::weighted(0.8))
            .prop_map(|(source, title, texts, with_vectors)| Step::Replace { source, title, texts, with_vectors }),
        1 => (0..SOURCES.len()).prop_map(Step::Delete),
        1 => (0..SOURCES.len(), 0..SOURCES.len()).prop_map(|(a, b)| Step::Move(a, b)),
        2 => (0..SOURCES.len(), 0..6usize, 0..3u8).prop_map(|(source, split, between)| Step::Embed { source, split, between }),
        1 => Just(Step::Compact),
        1 => Just(Step::Reopen),
        3 => (text.clone(), prop::option::of(0..SCOPES.len()), prop::option::of(0..FILTERS.len()))
            .prop_map(|(q, s, f)| Step::Keyword(q, s, f)),
        3 => (text, prop::option::of(0..SCOPES.len()), prop::option::of(0..FILTERS.len()))
            .prop_map(|(q, s, f)| Step::Vector(q, s, f)),
    ]
}

/// ((source, chunk index or `None` for the title field), analysed terms)
type FieldDocs = Vec<((String, Option<u32>), Vec<String>)>;

const SCOPES: [&str; 3] = ["/a", "/b/", "note-1"];

/// Filters as (formats, modified after, modified before, paths, excluded
/// paths, languages, declared fields); a source's modification time is its
/// day in [`SOURCES`] order, its language and fields come from its title
/// ([`described`]).
type FilterCase = (
    &'static [&'static str],
    Option<&'static str>,
    Option<&'static str>,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);
const FILTERS: [FilterCase; 8] = [
    (&["md"], None, None, &[], &[], &[], &[]),
    (&[], Some("1970-01-04"), None, &[], &[], &[], &[]),
    (&[], None, None, &["**/t*.md"], &[], &[], &[]),
    (&[], None, None, &[], &["one.md", "note-1*"], &[], &[]),
    (
        &["markdown"],
        None,
        Some("1970-01-03T12:00:00+12:00"),
        &[],
        &[],
        &[],
        &[],
    ),
    (&[], None, None, &[], &[], &["ru"], &[]),
    (&[], None, None, &[], &[], &[], &[("Tags", "BETA")]),
    (&["md"], None, None, &[], &[], &["en"], &[("author", "Ada")]),
];

/// The language and fields a source declares, from its title: a replace
/// that changes the title changes them, as an edited front matter does.
fn described(title: &str) -> SourceAttributes {
    let word = title.split(' ').next().unwrap_or_default();
    let mut meta = vec![("tags".to_string(), word.to_string())];
    if title.len().is_multiple_of(3) {
        meta.push(("author".to_string(), "ada".to_string()));
    }
    SourceAttributes {
        language: Some(
            if title.len().is_multiple_of(2) {
                "en"
            } else {
                "ru"
            }
            .to_string(),
        ),
        meta: minirag_core::meta::normalized(meta),
    }
}
/// The roots path patterns are relative to.
const ROOTS: [&str; 2] = ["/a", "/b"];

fn scope_of(scope: Option<usize>, filter: Option<usize>) -> Scope {
    let scope = scope.map_or(Scope::all(), |s| Scope::new([SCOPES[s]]));
    let Some(f) = filter else {
        return scope;
    };
    let (formats, after, before, paths, exclude, languages, meta) = FILTERS[f];
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (formats, paths, exclude) = (owned(formats), owned(paths), owned(exclude));
    let languages = owned(languages);
    let meta: Vec<(String, String)> = meta
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let request = FilterRequest {
        formats: &formats,
        modified_after: after,
        modified_before: before,
        paths: &paths,
        exclude_paths: &exclude,
        languages: &languages,
        meta: &meta,
    };
    let roots = owned(&ROOTS);
    scope.with_filter(Filter::new(request, &roots).expect("a valid filter"))
}

/// A source's modification time in the model: its day in [`SOURCES`].
fn mtime_of(source: usize) -> f64 {
    (source as f64 + 1.0) * 86_400.0
}

#[derive(Clone)]
struct Doc {
    title: String,
    texts: Vec<String>,
    vectors: bool,
    mtime: f64,
}

/// Whether the model's `source` is in reach of `scope`, judged on the
/// record the model would have stored.
fn in_reach(model: &BTreeMap<String, Doc>, source: &str, scope: &Scope) -> bool {
    let d = &model[source];
    let mut rec = record(source, &d.title, d.texts.len());
    rec.mtime = d.mtime;
    rec.attributes = described(&d.title);
    scope.admits(&rec)
}

fn words(ids: &[usize]) -> String {
    ids.iter().map(|&i| WORDS[i]).collect::<Vec<_>>().join(" ")
}

/// Brute-force BM25 over the model, same formula and constants.
fn brute_bm25(
    model: &BTreeMap<String, Doc>,
    query: &str,
    scope: &Scope,
) -> HashMap<(String, u32), f32> {
    let a = Analyzer::default();
    let q = a.query_terms(query);
    let mut out: HashMap<(String, u32), f32> = HashMap::new();
    let field = |docs: FieldDocs, weight: fn(f32) -> f32, out: &mut HashMap<(String, u32), f32>| {
        let n = docs.len() as f32;
        if n == 0.0 {
            return;
        }
        let avg = (docs.iter().map(|d| d.1.len()).sum::<usize>() as f32 / n).max(1.0);
        for term in &q {
            let df = docs.iter().filter(|d| d.1.contains(term)).count() as f32;
            if df == 0.0 {
                continue;
            }
            for ((source, chunk), terms) in &docs {
                let tf = terms.iter().filter(|t| *t == term).count() as f32;
                if tf == 0.0 || !in_reach(model, source, scope) {
                    continue;
                }
                let dl = terms.len() as f32;
                let s = weight(bm25(n, df, tf, dl, avg));
                match chunk {
                    Some(i) => *out.entry((source.clone(), *i)).or_default() += s,
                    None => {
                        for i in 0..model[source].texts.len() as u32 {
                            *out.entry((source.clone(), i)).or_default() += s;
                        }
                    }
                }
            }
        }
    };
    let texts = model
        .iter()
        .flat_map(|(s, d)| {
            d.texts
                .iter()
                .enumerate()
                .map(move |(i, t)| ((s.clone(), Some(i as u32)), t))
        })
        .map(|(k, t)| (k, a.terms(t)))
        .collect();
    field(texts, |s| s, &mut out);
    let titles = model
        .iter()
        .map(|(s, d)| ((s.clone(), None), a.terms(&d.title)))
        .collect();
    field(titles, title_score, &mut out);
    out
}

fn nearest(model: &BTreeMap<String, Doc>, q: &[f32], scope: &Scope) -> HashMap<(String, u32), f32> {
    let mut out = HashMap::new();
    for (s, d) in model
        .iter()
        .filter(|(s, d)| d.vectors && in_reach(model, s, scope))
    {
        for (i, t) in d.texts.iter().enumerate() {
            let v = vector(t);
            let dot: f32 = v.iter().zip(q).map(|(a, b)| a * b).sum();
            out.insert((s.clone(), i as u32), (2.0 - 2.0 * dot).max(0.0));
        }
    }
    out
}

fn same(
    got: HashMap<(String, u32), f32>,
    want: HashMap<(String, u32), f32>,
) -> Result<(), TestCaseError> {
    let mut g: Vec<_> = got.keys().cloned().collect();
    let mut w: Vec<_> = want.keys().cloned().collect();
    g.sort();
    w.sort();
    prop_assert_eq!(&g, &w);
    for k in g {
        prop_assert!(
            (got[&k] - want[&k]).abs() <= 1e-3 * want[&k].abs().max(1.0),
            "{k:?}: {} vs {}",
            got[&k],
            want[&k]
        );
    }
    Ok(())
}

/// Chunks without vectors in every source but `except`.
fn model_vectorless(model: &BTreeMap<String, Doc>, except: &str) -> usize {
    model
        .iter()
        .filter(|(s, d)| s.as_str() != except && !d.vectors)
        .map(|(_, d)| d.texts.len())
        .sum()
}

/// Runs `cases` random sequences of up to 30 steps on `subject`.
pub fn answers_like_a_brute_force_model<S: Subject>(subject: &S, cases: u32) {
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    let result = runner.run(&prop::collection::vec(step(), 1..30), |steps| {
        run(subject, steps)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

fn run<S: Subject>(subject: &S, steps: Vec<Step>) -> Result<(), TestCaseError> {
    let store = subject.fresh();
    let mut index = subject.open(&store);
    let mut model: BTreeMap<String, Doc> = BTreeMap::new();
    for step in steps {
        match step {
            Step::Replace {
                source,
                title,
                texts,
                with_vectors,
            } => {
                let texts: Vec<String> = texts.iter().map(|t| words(t)).collect();
                let title = format!("{} title", WORDS[title]);
                let mut rec = record(SOURCES[source], &title, texts.len());
                rec.mtime = mtime_of(source);
                rec.attributes = described(&title);
                if !with_vectors {
                    rec.embedded_with = None;
                }
                let vecs: Option<Embeddings> = with_vectors.then(|| vectors(&texts));
                index.replace_source(rec, chunks(&texts), vecs).unwrap();
                model.insert(
                    SOURCES[source].into(),
                    Doc {
                        title,
                        texts,
                        vectors: with_vectors,
                        mtime: mtime_of(source),
                    },
                );
            }
            Step::Delete(s) => {
                let n = index.delete_source(SOURCES[s]).unwrap();
                prop_assert_eq!(n, model.remove(SOURCES[s]).map_or(0, |d| d.texts.len()));
            }
            Step::Move(a, b) => {
                let n = index.move_source(SOURCES[a], SOURCES[b], 2.0).unwrap();
                let expect = if model.contains_key(SOURCES[a]) && !model.contains_key(SOURCES[b]) {
                    let d = model.remove(SOURCES[a]).unwrap();
                    let n = d.texts.len();
                    model.insert(SOURCES[b].into(), Doc { mtime: 2.0, ..d });
                    n
                } else {
                    0
                };
                prop_assert_eq!(n, expect);
            }
            Step::Embed {
                source,
                split,
                between,
            } => {
                let Some(d) = model.get(SOURCES[source]).cloned() else {
                    continue;
                };
                let texts: Vec<&str> = d.texts.iter().map(String::as_str).collect();
                let k = split % (texts.len() + 1);
                let rows = |r: std::ops::Range<usize>| {
                    let owned: Vec<String> = texts[r].iter().map(|t| t.to_string()).collect();
                    vectors(&owned)
                };
                let n = index
                    .set_vectors(
                        SOURCES[source],
                        "test-model",
                        0,
                        &texts[..k],
                        rows(0..k),
                        false,
                    )
                    .unwrap();
                prop_assert_eq!(n, k);
                let others: usize = model_vectorless(&model, SOURCES[source]);
                let waiting = if d.vectors { 0 } else { d.texts.len() - k };
                match between {
                    0 => subject.compact(&index),
                    1 => {
                        drop(index);
                        index = subject.open(&store);
                    }
                    _ => {}
                }
                prop_assert_eq!(
                    index
                        .read()
                        .unwrap()
                        .stats()
                        .unwrap()
                        .vectorless_chunk_count as usize,
                    others + waiting
                );
                let n = index
                    .set_vectors(
                        SOURCES[source],
                        "test-model",
                        k as u32,
                        &texts[k..],
                        rows(k..texts.len()),
                        true,
                    )
                    .unwrap();
                prop_assert_eq!(n, texts.len() - k);
                let rec = index
                    .read()
                    .unwrap()
                    .source(SOURCES[source])
                    .unwrap()
                    .unwrap();
                prop_assert_eq!(rec.embedded_with.as_deref(), Some("test-model"));
                model.get_mut(SOURCES[source]).unwrap().vectors = true;
            }
            Step::Compact => subject.compact(&index),
            Step::Reopen => {
                drop(index);
                index = subject.open(&store);
            }
            Step::Keyword(q, scope, filter) => {
                let scope = scope_of(scope, filter);
                let got: HashMap<_, _> = index
                    .read()
                    .unwrap()
                    .keyword_search(&words(&q), 1000, &scope)
                    .unwrap()
                    .into_iter()
                    .map(|c| ((c.key.source, c.key.index), c.value))
                    .collect();
                same(got, brute_bm25(&model, &words(&q), &scope))?;
                let listed: Vec<String> = index
                    .read()
                    .unwrap()
                    .sources(&scope)
                    .unwrap()
                    .into_iter()
                    .map(|r| r.source)
                    .collect();
                let reach: Vec<String> = model
                    .keys()
                    .filter(|s| in_reach(&model, s, &scope))
                    .cloned()
                    .collect();
                prop_assert_eq!(listed, reach);
            }
            Step::Vector(q, scope, filter) => {
                let scope = scope_of(scope, filter);
                let qv = vector(&words(&q));
                let got: HashMap<_, _> = index
                    .read()
                    .unwrap()
                    .vector_search(&qv, 1000, &scope)
                    .unwrap()
                    .into_iter()
                    .map(|c| ((c.key.source, c.key.index), c.value))
                    .collect();
                same(got, nearest(&model, &qv, &scope))?;
            }
        }
        let stats = index.read().unwrap().stats().unwrap();
        prop_assert_eq!(stats.source_count as usize, model.len());
        prop_assert_eq!(
            stats.chunk_count as usize,
            model.values().map(|d| d.texts.len()).sum::<usize>()
        );
        let vectorless: usize = model
            .values()
            .filter(|d| !d.vectors)
            .map(|d| d.texts.len())
            .sum();
        prop_assert_eq!(stats.vectorless_chunk_count as usize, vectorless);
        prop_assert_eq!(
            index.read().unwrap().vectorless_chunks().unwrap() as usize,
            vectorless,
            "the counter agrees with the scan"
        );
        for (s, d) in &model {
            let stored: Vec<String> = index
                .read()
                .unwrap()
                .chunks(s, 0..=100)
                .unwrap()
                .into_iter()
                .map(|c| c.text)
                .collect();
            prop_assert_eq!(&stored, &d.texts);
            prop_assert_eq!(
                index.read().unwrap().source(s).unwrap().unwrap().title,
                d.title.clone()
            );
        }
    }
    Ok(())
}
