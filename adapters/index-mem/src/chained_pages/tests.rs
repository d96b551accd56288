use std::cell::RefCell;
use std::collections::HashMap;

use super::*;

thread_local! {
    /// Live copies of each token id on this test's thread: a clone adds
    /// one, a drop takes one away (and a second drop of one copy shows as
    /// a negative count).
    static LIVE: RefCell<HashMap<u64, i64>> = RefCell::new(HashMap::new());
}

/// An element that counts its live copies, with a value `n` that its
/// clones share and a write copies first (as a postings list's is).
#[derive(Debug)]
struct Token {
    id: u64,
    n: Arc<u64>,
}

impl Token {
    fn new(id: u64) -> Self {
        LIVE.with(|l| *l.borrow_mut().entry(id).or_default() += 1);
        Self { id, n: Arc::new(0) }
    }

    fn bump(&mut self) {
        *Arc::make_mut(&mut self.n) += 1;
    }
}

impl Clone for Token {
    fn clone(&self) -> Self {
        LIVE.with(|l| *l.borrow_mut().entry(self.id).or_default() += 1);
        Self {
            id: self.id,
            n: Arc::clone(&self.n),
        }
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        LIVE.with(|l| {
            let mut live = l.borrow_mut();
            let count = live.entry(self.id).or_default();
            *count -= 1;
            assert!(*count >= 0, "token {} dropped twice", self.id);
        });
    }
}

impl Element for Token {
    fn fetch_ahead(&self) {}

    const FREED_ELSEWHERE: bool = false;
}

fn live(id: u64) -> i64 {
    LIVE.with(|l| l.borrow().get(&id).copied().unwrap_or(0))
}

fn all_dropped() -> bool {
    LIVE.with(|l| l.borrow().values().all(|&c| c == 0))
}

fn contents(pages: &ChainedPages<Token>) -> Vec<(u64, u64)> {
    pages.iter().map(|t| (t.id, *t.n)).collect()
}

#[test]
fn a_copied_page_takes_no_count_and_a_page_alone_takes_its_parent_back() {
    let mut a: ChainedPages<Token> = (0..600).map(Token::new).collect();
    let b = a.clone();
    a.set(3, Token::new(1_000));
    a[4].bump();
    assert_eq!(live(5), 1, "an element the copy did not write is borrowed");
    assert_eq!(live(4), 2, "the written one was cloned first");
    assert_eq!(live(3), 1, "the replaced one is still the parent's");
    assert_eq!(a.pages_shared_with(&b), 2, "the untouched pages are shared");
    assert_eq!((*a[4].n, *b[4].n), (1, 0));
    assert_eq!((a[3].id, b[3].id), (1_000, 3));
    assert_eq!(a.deepest(), 1);

    drop(b);
    a[6].bump();
    assert_eq!(a.deepest(), 0, "the parent no one else holds is absorbed");
    assert_eq!(live(3), 0, "the element the copy replaced went with it");
    assert_eq!((live(5), live(4)), (1, 1));
    assert_eq!(a[5].id, 5);
    drop(a);
    assert!(all_dropped());
}

#[test]
fn a_chain_stops_at_its_limit_with_a_counted_copy() {
    let mut a: ChainedPages<Token> = (0..10).map(Token::new).collect();
    let mut views = Vec::new();
    for round in 0..=u64::from(depth_limit(0)) {
        views.push(a.clone());
        a.set(0, Token::new(100 + round));
        assert!(a.deepest() <= depth_limit(0));
    }
    assert_eq!(a.deepest(), 0, "the copy past the limit owns every element");
    assert_eq!(live(9), 2, "and took a count on each");
    for (round, view) in views.iter().enumerate().skip(1) {
        assert_eq!(
            view[0].id,
            99 + round as u64,
            "each view keeps its own value"
        );
    }
    drop(views);
    drop(a);
    assert!(all_dropped());
}

#[test]
fn writing_in_place_beside_a_copy_copies_the_page_with_counts() {
    let mut a: ChainedPages<Token> = (0..300).map(Token::new).collect();
    let b = a.clone();
    a[260].bump();
    assert_eq!(live(261), 2, "every element of the copied page counted");
    assert_eq!(live(5), 1, "the other page is shared");
    assert_eq!((*a[260].n, *b[260].n), (1, 0));
    assert_eq!(a.deepest(), 0);
    drop((a, b));
    assert!(all_dropped());
}

/// What the pages should read: each element's id and value.
type Model = Vec<(u64, u64)>;

/// A small random number generator (xorshift), so the walk is the same on
/// every run.
struct Walk(u64);

impl Walk {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn random_writes_beside_random_copies_read_as_plain_vectors_and_drop_each_element_once() {
    for seed in 1..=8u64 {
        let mut walk = Walk(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut next_id = 0u64;
        let fresh = |n: &mut u64| {
            *n += 1;
            Token::new(*n)
        };
        let mut pages: ChainedPages<Token> = ChainedPages::default();
        let mut model: Model = Vec::new();
        let mut views: Vec<(ChainedPages<Token>, Model)> = Vec::new();
        for _ in 0..4_000 {
            match walk.below(10) {
                0 | 1 if !model.is_empty() => {
                    let i = walk.below(model.len());
                    let token = fresh(&mut next_id);
                    model[i] = (token.id, 0);
                    pages.set(i, token);
                }
                2 | 3 if !model.is_empty() => {
                    let i = walk.below(model.len());
                    pages[i].bump();
                    model[i].1 += 1;
                }
                4 => {
                    let token = fresh(&mut next_id);
                    model.push((token.id, 0));
                    pages.push(token);
                }
                5 if views.len() < 8 => views.push((pages.clone(), model.clone())),
                6 if !views.is_empty() => {
                    views.swap_remove(walk.below(views.len()));
                }
                8 if walk.below(10) == 0 => {
                    pages.straighten();
                    assert_eq!(pages.deepest(), 0, "seed {seed}: a parent kept");
                }
                7 if walk.below(20) == 0 => {
                    pages.for_each_mut(Token::bump);
                    model.iter_mut().for_each(|m| m.1 += 1);
                }
                _ => {
                    let token = fresh(&mut next_id);
                    model.push((token.id, 0));
                    pages.push(token);
                }
            }
            assert!(pages.deepest() <= MAX_DEPTH);
        }
        assert_eq!(contents(&pages), model, "seed {seed}");
        for (view, expected) in &views {
            assert_eq!(&contents(view), expected, "seed {seed}: a copy changed");
        }
        views.clear();
        let mut pages = pages;
        pages.drop_ahead();
        drop(pages);
        assert!(all_dropped(), "seed {seed}: an element was leaked");
    }
}

#[test]
fn a_counted_copy_owns_exactly_the_elements_it_has() {
    assert_eq!(owning_first(0), [0; WORDS]);
    assert_eq!(owning_first(1), [1, 0, 0, 0]);
    assert_eq!(owning_first(64), [u64::MAX, 0, 0, 0]);
    assert_eq!(owning_first(130), [u64::MAX, u64::MAX, 3, 0]);
    assert_eq!(owning_first(PAGE), [u64::MAX; WORDS]);
}
