//! Packing a section into retrieval units within the token budget.

use super::blocks::closing_fence;
use super::{Section, UnitKind, CODE_SPLIT_NOTE};
use crate::markdown::{fence_run, is_delimiter_row, is_table_row, sentences};
use crate::tokens::TokenCounter;

/// Tokens kept free for the model's special tokens and the counting error
/// when deciding about prefixes and repeated table headers.
const HEADROOM: usize = 24;

/// A packed unit before it gets its chunk index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// The unit's text, breadcrumb prefix first.
    pub text: String,
    /// Bytes of that prefix.
    pub prefix_len: usize,
    /// What the unit is made of.
    pub kind: UnitKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AtomKind {
    Text,
    Row,
    Code,
}

/// The smallest piece packing moves around: a sentence, a table row, or a
/// whole closed fenced block.
#[derive(Debug, Clone)]
struct Atom {
    kind: AtomKind,
    text: String,
    /// Separator before this atom when it follows another in a unit.
    sep: &'static str,
    /// The table's header and delimiter lines, for rows that carry one.
    header: Option<String>,
}

/// Room for the breadcrumb prefix: min(budget − 24, ⌊budget/3⌋).
pub(crate) fn prefix_room(budget: usize) -> usize {
    budget.saturating_sub(HEADROOM).min(budget / 3)
}

/// The first ladder rung whose `<prefix>\n\n` fits the prefix room.
pub(crate) fn choose_prefix<'a>(
    ladder: &'a [String],
    budget: usize,
    counter: &dyn TokenCounter,
) -> &'a str {
    let room = prefix_room(budget);
    ladder
        .iter()
        .find(|rung| rung.is_empty() || counter.count(&format!("{rung}\n\n")) <= room)
        .map(String::as_str)
        .unwrap_or("")
}

fn atoms(body: &str) -> Vec<Atom> {
    let lines: Vec<&str> = body.split('\n').collect();
    let mut out = Vec::new();
    let mut sep = "\n\n";
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim().is_empty() {
            sep = "\n\n";
            i += 1;
            continue;
        }
        if let Some((ch, len)) = fence_run(line) {
            if let Some(close) = closing_fence(&lines, i, ch, len) {
                out.push(Atom {
                    kind: AtomKind::Code,
                    text: lines[i..=close].join("\n"),
                    sep,
                    header: None,
                });
                sep = "\n";
                i = close + 1;
                continue;
            }
        }
        if is_table_row(line) {
            let end = (i..lines.len())
                .find(|&j| !is_table_row(lines[j]))
                .unwrap_or(lines.len());
            let run = &lines[i..end];
            let delimited = run.len() >= 2 && is_delimiter_row(run[1]);
            if delimited && run.len() >= 3 {
                let header = format!("{}\n{}", run[0], run[1]);
                for row in &run[2..] {
                    out.push(Atom {
                        kind: AtomKind::Row,
                        text: row.to_string(),
                        sep,
                        header: Some(header.clone()),
                    });
                    sep = "\n";
                }
            } else {
                let kind = if delimited {
                    AtomKind::Row
                } else {
                    AtomKind::Text
                };
                for row in run {
                    out.push(Atom {
                        kind,
                        text: row.to_string(),
                        sep,
                        header: None,
                    });
                    sep = "\n";
                }
            }
            i = end;
            continue;
        }
        for (k, sentence) in sentences(line).into_iter().enumerate() {
            let s = if k == 0 { sep } else { " " };
            out.push(Atom {
                kind: AtomKind::Text,
                text: sentence.to_string(),
                sep: s,
                header: None,
            });
        }
        sep = "\n";
        i += 1;
    }
    out
}

/// Appends atoms to `text`, each after its separator.
fn join_atoms(text: &mut String, atoms: &[Atom]) {
    for (k, atom) in atoms.iter().enumerate() {
        if k > 0 {
            text.push_str(atom.sep);
        }
        text.push_str(&atom.text);
    }
}

struct Packer<'a> {
    budget: usize,
    counter: &'a dyn TokenCounter,
    /// `<prefix>\n\n` or "".
    prefix: String,
    units: Vec<Unit>,
}

impl Packer<'_> {
    fn fits(&self, text: &str, limit: usize) -> bool {
        self.counter.count(text) <= limit
    }

    fn head(&self, header: Option<&str>) -> String {
        match header {
            Some(h) => format!("{}{h}\n", self.prefix),
            None => self.prefix.clone(),
        }
    }

    fn render(&self, header: Option<&str>, atoms: &[Atom]) -> String {
        let mut text = self.head(header);
        join_atoms(&mut text, atoms);
        text
    }

    fn push(&mut self, mut text: String, kind: UnitKind) {
        // Units are built by appending, so capacity can be twice the text;
        // a big file keeps a million of them.
        text.shrink_to_fit();
        let prefix_len = self.prefix.len().min(text.len());
        self.units.push(Unit {
            text,
            prefix_len,
            kind,
        });
    }

    /// Emits a unit of text atoms or rows, force-splitting it when one atom
    /// alone is over budget.
    /// `tokens` is the unit's count when the caller already knows it.
    fn flush(&mut self, header: Option<&str>, atoms: &mut Vec<Atom>, tokens: Option<usize>) {
        if atoms.is_empty() {
            return;
        }
        let kind = if atoms[0].kind == AtomKind::Row {
            UnitKind::Rows
        } else {
            UnitKind::Text
        };
        let text = self.render(header, atoms);
        let fits = match tokens {
            Some(t) => t <= self.budget,
            None => self.fits(&text, self.budget),
        };
        if fits {
            self.push(text, kind);
        } else {
            let head = self.head(header);
            let content = text[head.len()..].to_string();
            for piece in self.force_split(&head, &content) {
                self.push(format!("{head}{piece}"), kind);
            }
        }
        atoms.clear();
    }

    /// Greedy split of `content` by spaces, then by characters for a single
    /// over-long word, so that `head + piece` fits the budget.
    fn force_split(&self, head: &str, content: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        for word in content.split(' ') {
            let candidate = if cur.is_empty() {
                word.to_string()
            } else {
                format!("{cur} {word}")
            };
            if self.fits(&format!("{head}{candidate}"), self.budget) {
                cur = candidate;
                continue;
            }
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            if self.fits(&format!("{head}{word}"), self.budget) {
                cur = word.to_string();
            } else {
                let mut pieces = self.split_chars(head, word);
                cur = pieces.pop().unwrap_or_default();
                out.extend(pieces);
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    /// Splits one word into the longest character runs that fit (at least
    /// one character per piece). Each piece's length is searched from the
    /// last one's, doubling and then halving, so every probe counts about
    /// one piece's text: the whole split is linear in the word's length.
    fn split_chars(&self, head: &str, word: &str) -> Vec<String> {
        let chars: Vec<char> = word.chars().collect();
        let fits = |piece: &[char]| {
            let mut text = String::with_capacity(head.len() + piece.len() * 4);
            text.push_str(head);
            text.extend(piece);
            self.fits(&text, self.budget)
        };
        let mut out = Vec::new();
        let mut start = 0;
        let mut guess = self.budget.max(1);
        while start < chars.len() {
            let left = chars.len() - start;
            let (mut lo, mut hi) = (1, left);
            let mut probe = guess.min(left);
            // Gallop: find lo that fits and hi that does not (or the end).
            if fits(&chars[start..start + probe]) {
                lo = probe;
                while lo < left {
                    probe = (lo * 2).min(left);
                    if !fits(&chars[start..start + probe]) {
                        hi = probe - 1;
                        break;
                    }
                    lo = probe;
                }
            } else {
                hi = probe - 1;
                while hi > 1 {
                    probe = hi.div_ceil(2);
                    if fits(&chars[start..start + probe]) {
                        lo = probe;
                        break;
                    }
                    hi = probe - 1;
                }
            }
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if fits(&chars[start..start + mid]) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            out.push(chars[start..start + lo].iter().collect());
            start += lo;
            guess = lo;
        }
        out
    }

    /// A closed fenced block: whole up to 4 × budget, else split at lines,
    /// each piece opening with the split note.
    fn code(&mut self, code: &str) {
        let whole = format!("{}{code}", self.prefix);
        if self.fits(&whole, 4 * self.budget) {
            self.push(whole, UnitKind::Code);
            return;
        }
        let head = format!("{}{CODE_SPLIT_NOTE}\n", self.prefix);
        let mut cur: Vec<&str> = Vec::new();
        let mut pieces: Vec<String> = Vec::new();
        for line in code.split('\n') {
            let candidate = if cur.is_empty() {
                line.to_string()
            } else {
                format!("{}\n{line}", cur.join("\n"))
            };
            if self.fits(&format!("{head}{candidate}"), self.budget) {
                cur.push(line);
                continue;
            }
            if !cur.is_empty() {
                pieces.push(cur.join("\n"));
                cur.clear();
            }
            if self.fits(&format!("{head}{line}"), self.budget) {
                cur.push(line);
            } else {
                pieces.extend(self.force_split(&head, line));
            }
        }
        if !cur.is_empty() {
            pieces.push(cur.join("\n"));
        }
        for piece in pieces {
            self.push(format!("{head}{piece}"), UnitKind::CodePiece);
        }
    }
}

/// Units whose own text counts fewer tokens than this are merged into a
/// neighbour of their section when one can take them: alone, a word or
/// two is a poor search hit and a wasted embedding.
pub const MIN_UNIT_TOKENS: usize = 16;

/// A unit before it is rendered: a run of text atoms or rows, or a whole
/// fenced block.
enum Piece {
    Run {
        header: Option<String>,
        atoms: Vec<Atom>,
        /// The unit's count when the additive counter already knows it.
        tokens: Option<usize>,
    },
    Code(String),
}

/// Packs one section into units.
pub(crate) fn pack_section(
    section: &Section,
    budget: usize,
    counter: &dyn TokenCounter,
) -> Vec<Unit> {
    let rung = choose_prefix(&section.ladder, budget, counter);
    let prefix = if rung.is_empty() {
        String::new()
    } else {
        format!("{rung}\n\n")
    };
    let mut packer = Packer {
        budget,
        counter,
        prefix,
        units: Vec::new(),
    };

    // Table headers are repeated only when prefix + header leave room for rows.
    let mut atoms = atoms(&section.body);
    demote_wide_headers(&mut atoms, &packer);
    let atoms = split_long_sentences(atoms, &packer);

    let mut pieces: Vec<Piece> = Vec::new();
    let mut cur: Vec<Atom> = Vec::new();
    let mut cur_header: Option<String> = None;
    let run = |header: Option<String>, atoms: &mut Vec<Atom>, tokens: Option<usize>| Piece::Run {
        header,
        atoms: std::mem::take(atoms),
        tokens,
    };
    // With an additive counter a unit's count is the sum of its parts', so
    // each atom is tokenized once instead of every candidate unit again.
    let sums = counter.additive().then(|| counter.count(""));
    let mut cur_tokens = 0usize;
    let join = |a: usize, b: usize, empty: usize| (a + b).saturating_sub(empty);
    for atom in atoms {
        if atom.kind == AtomKind::Code {
            if !cur.is_empty() {
                pieces.push(run(cur_header.take(), &mut cur, sums.map(|_| cur_tokens)));
            }
            cur_header = None;
            pieces.push(Piece::Code(atom.text));
            continue;
        }
        let same_run =
            cur.first().is_some_and(|c| c.kind == atom.kind) && cur_header == atom.header;
        if !cur.is_empty() && !same_run {
            pieces.push(run(cur_header.take(), &mut cur, sums.map(|_| cur_tokens)));
        }
        let atom_tokens = sums.map(|_| counter.count(&atom.text));
        if !cur.is_empty() {
            if let (Some(empty), Some(t)) = (sums, atom_tokens) {
                let joined = join(cur_tokens, t, empty);
                if joined <= budget {
                    cur_tokens = joined;
                } else {
                    let header = cur_header.clone();
                    pieces.push(run(header.clone(), &mut cur, Some(cur_tokens)));
                    cur_tokens = join(counter.count(&packer.head(header.as_deref())), t, empty);
                }
                cur.push(atom);
            } else {
                cur.push(atom);
                if !packer.fits(&packer.render(cur_header.as_deref(), &cur), budget) {
                    let atom = cur.pop().expect("just pushed");
                    pieces.push(run(cur_header.clone(), &mut cur, None));
                    cur.push(atom);
                }
            }
        } else {
            cur_header = atom.header.clone();
            if let (Some(empty), Some(t)) = (sums, atom_tokens) {
                cur_tokens = join(counter.count(&packer.head(cur_header.as_deref())), t, empty);
            }
            cur.push(atom);
        }
    }
    if !cur.is_empty() {
        pieces.push(run(cur_header.take(), &mut cur, sums.map(|_| cur_tokens)));
    }
    absorb_small_runs(&mut pieces, &packer);
    for piece in pieces {
        match piece {
            Piece::Run {
                header,
                mut atoms,
                tokens,
            } => packer.flush(header.as_deref(), &mut atoms, tokens),
            Piece::Code(text) => packer.code(&text),
        }
    }
    packer.units
}

/// A sentence too long for a unit becomes runs of words that fit, so its
/// last run can share a unit with what follows instead of standing alone.
fn split_long_sentences(atoms: Vec<Atom>, packer: &Packer<'_>) -> Vec<Atom> {
    let head = packer.head(None);
    let mut out = Vec::with_capacity(atoms.len());
    for atom in atoms {
        if atom.kind != AtomKind::Text
            || packer.fits(&format!("{head}{}", atom.text), packer.budget)
        {
            out.push(atom);
            continue;
        }
        for (k, piece) in packer
            .force_split(&head, &atom.text)
            .into_iter()
            .enumerate()
        {
            out.push(Atom {
                kind: AtomKind::Text,
                text: piece,
                sep: if k == 0 { atom.sep } else { " " },
                header: None,
            });
        }
    }
    out
}

/// Merges each run under [`MIN_UNIT_TOKENS`] into the run before or after
/// it (same kind, same table header) when the two fit the budget together;
/// otherwise moves trailing atoms of the run before into it while that run
/// keeps the minimum. A small run with no such neighbour stays as it is.
fn absorb_small_runs(pieces: &mut Vec<Piece>, packer: &Packer<'_>) {
    let body_tokens = |atoms: &[Atom]| {
        let mut text = String::new();
        join_atoms(&mut text, atoms);
        packer.counter.count(&text)
    };
    let small = |piece: &Piece| match piece {
        Piece::Run { atoms, .. } => body_tokens(atoms) < MIN_UNIT_TOKENS,
        Piece::Code(_) => false,
    };
    let mut i = 0;
    while i < pieces.len() {
        if pieces.len() < 2 || !small(&pieces[i]) {
            i += 1;
            continue;
        }
        if i > 0 && try_merge(pieces, i - 1, packer) {
            continue;
        }
        if i + 1 < pieces.len() && try_merge(pieces, i, packer) {
            continue;
        }
        if i > 0 {
            rebalance(pieces, i, packer, &body_tokens);
        }
        i += 1;
    }
}

/// The two runs' atoms if `a` and `b` may share a unit.
fn compatible<'p>(
    a: &'p Piece,
    b: &'p Piece,
) -> Option<(&'p Option<String>, &'p [Atom], &'p [Atom])> {
    match (a, b) {
        (
            Piece::Run {
                header: ha,
                atoms: aa,
                ..
            },
            Piece::Run {
                header: hb,
                atoms: ab,
                ..
            },
        ) if ha == hb && aa.first().map(|x| x.kind) == ab.first().map(|x| x.kind) => {
            Some((ha, aa, ab))
        }
        _ => None,
    }
}

/// Joins run `at + 1` into run `at` when they fit the budget together.
fn try_merge(pieces: &mut Vec<Piece>, at: usize, packer: &Packer<'_>) -> bool {
    let Some((header, a, b)) = compatible(&pieces[at], &pieces[at + 1]) else {
        return false;
    };
    let merged: Vec<Atom> = a.iter().chain(b).cloned().collect();
    if !packer.fits(&packer.render(header.as_deref(), &merged), packer.budget) {
        return false;
    }
    let header = header.clone();
    pieces[at] = Piece::Run {
        header,
        atoms: merged,
        tokens: None,
    };
    pieces.remove(at + 1);
    true
}

/// Moves the last atoms of run `at - 1` to the front of the small run `at`
/// while the small one stays under the minimum and in budget and the one
/// before keeps the minimum.
fn rebalance(
    pieces: &mut [Piece],
    at: usize,
    packer: &Packer<'_>,
    body_tokens: &dyn Fn(&[Atom]) -> usize,
) {
    if compatible(&pieces[at - 1], &pieces[at]).is_none() {
        return;
    }
    let (before, rest) = pieces.split_at_mut(at);
    let (
        Piece::Run {
            atoms: prev,
            tokens: prev_tokens,
            ..
        },
        Piece::Run {
            header,
            atoms: small,
            tokens,
        },
    ) = (&mut before[at - 1], &mut rest[0])
    else {
        return;
    };
    while body_tokens(small) < MIN_UNIT_TOKENS && prev.len() > 1 {
        let moved = prev.last().cloned().expect("more than one atom");
        let mut candidate = vec![moved];
        candidate.extend(small.iter().cloned());
        let fits = packer.fits(&packer.render(header.as_deref(), &candidate), packer.budget);
        if !fits || body_tokens(&prev[..prev.len() - 1]) < MIN_UNIT_TOKENS {
            break;
        }
        prev.pop();
        *small = candidate;
        *prev_tokens = None;
        *tokens = None;
    }
}

/// Replaces a too-wide header by its two lines as ordinary rows, stored once.
fn demote_wide_headers(atoms: &mut Vec<Atom>, packer: &Packer<'_>) {
    let mut out = Vec::with_capacity(atoms.len());
    let mut last_header: Option<String> = None;
    let mut demote = false;
    for mut atom in atoms.drain(..) {
        if let Some(header) = atom.header.clone() {
            if last_header.as_ref() != Some(&header) || atom.sep != "\n" {
                demote = !packer.fits(
                    &format!("{}{header}\n", packer.prefix),
                    packer.budget - HEADROOM.min(packer.budget),
                );
                if demote {
                    let (first, second) = header.split_once('\n').unwrap_or((&header, ""));
                    out.push(Atom {
                        kind: AtomKind::Row,
                        text: first.to_string(),
                        sep: atom.sep,
                        header: None,
                    });
                    out.push(Atom {
                        kind: AtomKind::Row,
                        text: second.to_string(),
                        sep: "\n",
                        header: None,
                    });
                    atom.sep = "\n";
                }
                last_header = Some(header);
            }
            if demote {
                atom.header = None;
            }
        } else {
            last_header = None;
        }
        out.push(atom);
    }
    *atoms = out;
}
