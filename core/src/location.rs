//! Where a chunk is in its document. A converter marks places in the
//! Markdown it writes (where each page starts, which file lines or table
//! rows the Markdown lines are); the chunker finds each chunk's Markdown
//! lines; [`locate`] turns the two into a [`Location`], which answers carry
//! with a short citation.

/// A place a converter marks: from word `word` (0-based, runs of word
/// characters) of Markdown line `line` (0-based) on. A page can start in
/// the middle of a line: a paragraph that runs on from the page before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The Markdown line, 0-based.
    pub line: u32,
    /// The word on that line the place starts at, 0-based.
    pub word: u32,
    /// What starts there.
    pub mark: Mark,
}

/// A word's position in the Markdown: its line, and its index among the
/// line's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct At {
    /// The line, 0-based.
    pub line: u32,
    /// The word on the line, 0-based.
    pub word: u32,
}

impl At {
    /// The start of line `line`.
    pub fn line(line: u32) -> Self {
        Self { line, word: 0 }
    }
}

/// Words in `text` as positions count them: runs of word characters.
pub fn word_count(text: &str) -> u32 {
    text.split(|c: char| !crate::markdown::is_word_char(c))
        .filter(|w| !w.is_empty())
        .count() as u32
}

/// What a converter marks at a place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// Markdown lines from here are the original file's lines `first`,
    /// `first + 1`, … (1-based).
    Lines(u32),
    /// A page (1-based) starts here.
    Page(u32),
    /// A slide (1-based) starts here.
    Slide(u32),
    /// A notebook cell (1-based) starts here.
    Cell(u32),
    /// A heading starts here, with the `id` the file gives it (empty: the
    /// file gives none, and the heading's slug is its anchor).
    Anchor(String),
    /// A table's data rows: this line is row `first` of `sheet` (the sheet's
    /// own row numbers, or a CSV's record numbers with the header as 1), one
    /// row per Markdown line, `count` rows.
    Rows {
        /// The sheet's name; `None` for a CSV.
        sheet: Option<String>,
        /// The first row's number.
        first: u32,
        /// Rows, one per Markdown line.
        count: u32,
    },
}

/// The places of a file whose Markdown is the file itself (Markdown,
/// text): Markdown line n is file line n + 1.
pub fn file_lines() -> Vec<Place> {
    vec![Place {
        line: 0,
        word: 0,
        mark: Mark::Lines(1),
    }]
}

/// Where a chunk is. A field is absent when it is unknown or does not
/// apply to the format.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    /// First and last page (equal on one page).
    pub pages: Option<(u32, u32)>,
    /// The slide (1-based), for presentations.
    pub slide: Option<u32>,
    /// The sheet's name, for workbooks.
    pub sheet: Option<String>,
    /// First and last table row.
    pub rows: Option<(u32, u32)>,
    /// First and last line of the original file (or of the stored Markdown
    /// for text passed in and fetched pages).
    pub lines: Option<(u32, u32)>,
    /// The slug of the chunk's innermost heading.
    pub anchor: Option<String>,
    /// The notebook cell (1-based).
    pub cell: Option<u32>,
    /// A transcript chunk's first cue time (`MM:SS` or `H:MM:SS`).
    pub start: Option<String>,
}

fn span(label_one: &str, label_many: &str, (a, b): (u32, u32)) -> String {
    if a == b {
        format!("{label_one} {a}")
    } else {
        format!("{label_many} {a}–{b}")
    }
}

fn range((a, b): (u32, u32)) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}

impl Location {
    /// Whether nothing is known of where the chunk is.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// A short human citation: `report.pdf, p. 12`, `notes.md, lines 40–52`,
    /// `deck.pptx, slide 3`, `book.xlsx, Sales, rows 4–9`. `name` is the
    /// document's file name or title.
    pub fn citation(&self, name: &str) -> String {
        match self.place() {
            place if place.is_empty() => name.to_string(),
            place => format!("{name}, {place}"),
        }
    }

    /// The place in words, as a citation gives it after the name:
    /// `p. 12`, `Sales, rows 4–9`; empty when nothing is known.
    pub fn place(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = self.pages {
            parts.push(span("p.", "pp.", p));
        }
        if let Some(s) = self.slide {
            parts.push(format!("slide {s}"));
        }
        if let Some(s) = &self.sheet {
            parts.push(s.clone());
        }
        if let Some(r) = self.rows {
            parts.push(span("row", "rows", r));
        }
        if let Some(c) = self.cell {
            parts.push(format!("cell {c}"));
        }
        if let Some(t) = &self.start {
            parts.push(format!("at {t}"));
        }
        if parts.is_empty() {
            if let Some(l) = self.lines {
                parts.push(span("line", "lines", l));
            } else if let Some(a) = &self.anchor {
                parts.push(format!("#{a}"));
            }
        }
        parts.join(", ")
    }

    /// The URI fragment that opens the place: `page=12`, `slide=3`,
    /// `rows=4-9` (`rows=4-9&sheet=Budget` in a workbook), `cell=2`,
    /// `lines=40-52`, or the anchor.
    pub fn fragment(&self) -> Option<String> {
        if let Some(p) = self.pages {
            return Some(format!("page={}", range(p)));
        }
        if let Some(s) = self.slide {
            return Some(format!("slide={s}"));
        }
        if let Some(r) = self.rows {
            return Some(match &self.sheet {
                Some(sheet) => format!("rows={}&sheet={sheet}", range(r)),
                None => format!("rows={}", range(r)),
            });
        }
        if let Some(c) = self.cell {
            return Some(format!("cell={c}"));
        }
        if let Some(l) = self.lines {
            return Some(format!("lines={}", range(l)));
        }
        self.anchor.clone()
    }
}

/// A [`Location`] as a chunk keeps it: 48 bytes inline, no allocation but
/// the rare text (a million chunks of a big sheet each carry one). Numbers
/// are 1-based, so 0 is "absent". The heading's anchor is not kept: a
/// chunk derives it from its headings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packed {
    /// Pages, rows and lines as first/last pairs, then slide and cell.
    pub numbers: [u32; 8],
    /// The sheet, the cue time and the file's own anchor (an element's
    /// `id`), separated by U+001F; absent when none.
    pub text: Option<Box<str>>,
}

const TEXT_SEP: char = '\u{1f}';

impl Packed {
    /// Whether it holds no location.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The location, unless the bytes are damaged.
    pub fn unpack(&self) -> Option<Location> {
        if self.is_empty() {
            return None;
        }
        let n = &self.numbers;
        let span = |a: u32, b: u32| (a != 0).then_some((a, b));
        let one = |v: u32| (v != 0).then_some(v);
        let mut parts = self.text.as_deref().unwrap_or("").split(TEXT_SEP);
        let mut part = || parts.next().filter(|p| !p.is_empty()).map(str::to_string);
        let (sheet, start, anchor) = (part(), part(), part());
        Some(Location {
            pages: span(n[0], n[1]),
            rows: span(n[2], n[3]),
            lines: span(n[4], n[5]),
            slide: one(n[6]),
            cell: one(n[7]),
            sheet,
            start,
            anchor,
        })
    }
}

impl From<&Location> for Packed {
    fn from(l: &Location) -> Self {
        let pair = |p: Option<(u32, u32)>| p.map_or([0, 0], |(a, b)| [a, b]);
        let ([p0, p1], [r0, r1], [l0, l1]) = (pair(l.pages), pair(l.rows), pair(l.lines));
        let text = (l.sheet.is_some() || l.start.is_some() || l.anchor.is_some()).then(|| {
            let part = |p: &Option<String>| p.clone().unwrap_or_default();
            format!(
                "{}{TEXT_SEP}{}{TEXT_SEP}{}",
                part(&l.sheet),
                part(&l.start),
                part(&l.anchor)
            )
            .into_boxed_str()
        });
        Self {
            numbers: [
                p0,
                p1,
                r0,
                r1,
                l0,
                l1,
                l.slide.unwrap_or(0),
                l.cell.unwrap_or(0),
            ],
            text,
        }
    }
}

/// A part of a document asked for by a URI fragment (`page=12`,
/// `lines=40-52`, `slide=3`, `rows=4-9`, `cell=2`) or a heading's anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// First and last page, 1-based.
    Pages(u32, u32),
    /// A slide, 1-based.
    Slide(u32),
    /// First and last row, of one sheet or of any.
    Rows(u32, u32, Option<String>),
    /// A notebook cell, 1-based.
    Cell(u32),
    /// First and last file line, 1-based.
    Lines(u32, u32),
    /// A heading's anchor.
    Anchor(String),
}

impl Wanted {
    /// Reads a fragment as [`Location::fragment`] writes it; `None` names no
    /// part this product marks.
    pub fn parse(fragment: &str) -> Option<Self> {
        let span = |v: &str| -> Option<(u32, u32)> {
            let (a, b) = v.split_once('-').unwrap_or((v, v));
            let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
            (a <= b).then_some((a, b))
        };
        Some(match fragment.split_once('=') {
            Some(("page", v)) => span(v).map(|(a, b)| Self::Pages(a, b))?,
            Some(("slide", v)) => Self::Slide(v.trim().parse().ok()?),
            // The sheet comes last and runs to the end: its name may hold
            // any character.
            Some(("rows", v)) => {
                let (v, sheet) = match v.split_once("&sheet=") {
                    Some((v, sheet)) => (v, Some(sheet.to_string())),
                    None => (v, None),
                };
                span(v).map(|(a, b)| Self::Rows(a, b, sheet))?
            }
            Some(("cell", v)) => Self::Cell(v.trim().parse().ok()?),
            Some(("lines", v)) => span(v).map(|(a, b)| Self::Lines(a, b))?,
            Some(_) => return None,
            None if !fragment.trim().is_empty() => Self::Anchor(fragment.trim().into()),
            None => return None,
        })
    }
}

impl std::fmt::Display for Wanted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pages(a, b) => f.write_str(&span("page", "pages", (*a, *b))),
            Self::Slide(n) => write!(f, "slide {n}"),
            Self::Rows(a, b, None) => f.write_str(&span("row", "rows", (*a, *b))),
            Self::Rows(a, b, Some(sheet)) => {
                write!(f, "sheet {sheet}, {}", span("row", "rows", (*a, *b)))
            }
            Self::Cell(n) => write!(f, "cell {n}"),
            Self::Lines(a, b) => f.write_str(&span("line", "lines", (*a, *b))),
            Self::Anchor(a) => write!(f, "#{a}"),
        }
    }
}

fn overlap(have: Option<(u32, u32)>, a: u32, b: u32) -> bool {
    have.is_some_and(|(x, y)| x <= b && a <= y)
}

impl Location {
    /// Whether this place is in the part asked for.
    pub(crate) fn is_in(&self, wanted: &Wanted) -> bool {
        match wanted {
            Wanted::Pages(a, b) => overlap(self.pages, *a, *b),
            Wanted::Slide(n) => self.slide == Some(*n),
            Wanted::Rows(a, b, sheet) => {
                overlap(self.rows, *a, *b) && (sheet.is_none() || *sheet == self.sheet)
            }
            Wanted::Cell(n) => self.cell == Some(*n),
            Wanted::Lines(a, b) => overlap(self.lines, *a, *b),
            Wanted::Anchor(a) => self.anchor.as_deref() == Some(a.as_str()),
        }
    }

    /// The place that spans `self` and `other` (first to last).
    pub fn joined(mut self, other: &Location) -> Location {
        let join = |a: Option<(u32, u32)>, b: Option<(u32, u32)>| match (a, b) {
            (Some((x, y)), Some((p, q))) => Some((x.min(p), y.max(q))),
            (a, b) => a.or(b),
        };
        self.pages = join(self.pages, other.pages);
        self.rows = join(self.rows, other.rows);
        self.lines = join(self.lines, other.lines);
        self.slide = self.slide.or(other.slide);
        self.sheet = self.sheet.or_else(|| other.sheet.clone());
        self.cell = self.cell.or(other.cell);
        self.anchor = self.anchor.or_else(|| other.anchor.clone());
        self.start = self.start.or_else(|| other.start.clone());
        self
    }
}

/// A document's places by kind, each list in Markdown order, so a unit's
/// place is a few binary searches (a page of a million lines each with
/// its own file line would make a scan per unit quadratic).
#[derive(Debug, Clone, Default)]
pub struct Places {
    pages: Vec<(At, u32)>,
    slides: Vec<(At, u32)>,
    cells: Vec<(At, u32)>,
    lines: Vec<(At, u32)>,
    anchors: Vec<(At, String)>,
    /// (first Markdown line, sheet, first row, rows)
    rows: Vec<(u32, Option<String>, u32, u32)>,
}

impl Places {
    /// The places, sorted by position.
    pub fn new(places: Vec<Place>) -> Self {
        let mut out = Self::default();
        out.extend(places);
        out
    }

    /// Adds the places of `more`, each list kept in order.
    pub fn extend(&mut self, more: Vec<Place>) {
        for p in more {
            let at = At {
                line: p.line,
                word: p.word,
            };
            match p.mark {
                Mark::Page(n) => self.pages.push((at, n)),
                Mark::Slide(n) => self.slides.push((at, n)),
                Mark::Cell(n) => self.cells.push((at, n)),
                Mark::Lines(n) => self.lines.push((at, n)),
                Mark::Anchor(id) => self.anchors.push((at, id)),
                Mark::Rows {
                    sheet,
                    first,
                    count,
                } => self.rows.push((p.line, sheet, first, count)),
            }
        }
        self.pages.sort_by_key(|x| x.0);
        self.slides.sort_by_key(|x| x.0);
        self.cells.sort_by_key(|x| x.0);
        self.lines.sort_by_key(|x| x.0);
        self.anchors.sort_by_key(|x| x.0);
        self.rows.sort_by_key(|x| x.0);
    }
}

/// The last entry at or before `pos` of a list in order.
fn before<T>(list: &[(At, T)], pos: At) -> Option<&(At, T)> {
    let n = list.partition_point(|(at, _)| *at <= pos);
    n.checked_sub(1).map(|i| &list[i])
}

/// The place of the Markdown from word `first` to word `last`: pages,
/// slide, cell, the heading's id, table rows and file lines.
pub(crate) fn locate(places: &Places, first: At, last: At) -> Location {
    let mut out = Location::default();
    if let (Some((_, a)), Some((_, b))) =
        (before(&places.pages, first), before(&places.pages, last))
    {
        out.pages = Some((*a, (*b).max(*a)));
    }
    out.slide = before(&places.slides, first).map(|(_, n)| *n);
    out.cell = before(&places.cells, first).map(|(_, n)| *n);
    out.anchor = before(&places.anchors, first)
        .map(|(_, id)| id.clone())
        .filter(|id| !id.is_empty());
    let (first, last) = (first.line, last.line.max(first.line));
    // A unit that opens on a line the file has no mark for (a seeded title,
    // a speaker line made from markup) starts at its first marked line.
    let opening = before(&places.lines, At::line(first)).map(|(at, from)| from + (first - at.line));
    let inside = || {
        let n = places.lines.partition_point(|(at, _)| at.line < first);
        places
            .lines
            .get(n)
            .filter(|(at, _)| at.line <= last)
            .map(|(_, from)| *from)
    };
    if let Some(start) = opening.or_else(inside) {
        // The last line by the mark it is under: a page's Markdown lines
        // each have their own (see the converter's `source_lines`).
        let end = before(&places.lines, At::line(last)).map_or(start, |(a, f)| f + (last - a.line));
        out.lines = Some((start, end.max(start)));
    }
    // The table whose rows the chunk overlaps (a chunk may start on the
    // table's header, above its first row): the last one starting by its
    // last line.
    let n = places.rows.partition_point(|r| r.0 <= last);
    if let Some((line, sheet, row, count)) = n.checked_sub(1).map(|i| &places.rows[i]) {
        let end = line + count.saturating_sub(1);
        if *count > 0 && end >= first {
            let a = first.max(*line) - line + row;
            let b = last.min(end) - line + row;
            out.sheet = sheet.clone();
            out.rows = Some((a, b));
        }
    }
    out
}

/// A heading's anchor as GitHub writes it: lower case, words kept, spaces
/// to `-`, other punctuation dropped.
pub fn slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().collect::<String>())
            } else if c.is_whitespace() {
                Some("-".into())
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(line: u32, mark: Mark) -> Place {
        Place {
            line,
            word: 0,
            mark,
        }
    }

    #[test]
    fn pages_slides_cells_and_lines_follow_their_marks() {
        let places = [
            place(0, Mark::Lines(1)),
            place(0, Mark::Page(1)),
            place(10, Mark::Page(2)),
            place(30, Mark::Page(3)),
        ];
        let l = locate(&Places::new(places.to_vec()), At::line(12), At::line(14));
        assert_eq!(l.pages, Some((2, 2)));
        assert_eq!(l.lines, Some((13, 15)));
        assert_eq!(
            locate(&Places::new(places.to_vec()), At::line(8), At::line(31)).pages,
            Some((1, 3))
        );
        let slides = [place(0, Mark::Slide(1)), place(5, Mark::Slide(2))];
        assert_eq!(
            locate(&Places::new(slides.to_vec()), At::line(6), At::line(9)).slide,
            Some(2)
        );
        let cells = [place(0, Mark::Cell(1)), place(4, Mark::Cell(2))];
        assert_eq!(
            locate(&Places::new(cells.to_vec()), At::line(3), At::line(5)).cell,
            Some(1)
        );
        assert!(locate(&Places::default(), At::line(0), At::line(3)).is_empty());
    }

    #[test]
    fn each_line_of_a_converted_page_can_have_its_own_file_line() {
        let places = [
            place(0, Mark::Lines(4)),
            place(2, Mark::Lines(6)),
            place(4, Mark::Lines(9)),
        ];
        assert_eq!(
            locate(&Places::new(places.to_vec()), At::line(2), At::line(4)).lines,
            Some((6, 9))
        );
        assert_eq!(
            locate(&Places::new(places.to_vec()), At::line(0), At::line(1)).lines,
            Some((4, 5))
        );
    }

    #[test]
    fn a_page_can_start_in_the_middle_of_a_line() {
        let places = [
            place(0, Mark::Page(1)),
            Place {
                line: 5,
                word: 10,
                mark: Mark::Page(2),
            },
        ];
        let at = |line, word| At { line, word };
        assert_eq!(
            locate(&Places::new(places.to_vec()), at(5, 2), at(5, 8)).pages,
            Some((1, 1))
        );
        assert_eq!(
            locate(&Places::new(places.to_vec()), at(5, 8), at(5, 12)).pages,
            Some((1, 2))
        );
        assert_eq!(
            locate(&Places::new(places.to_vec()), at(5, 10), at(6, 0)).pages,
            Some((2, 2))
        );
        assert_eq!(word_count("Harbour log, page 2: tides."), 5);
    }

    #[test]
    fn rows_count_from_the_table_and_stop_at_its_end() {
        let places = [
            place(
                2,
                Mark::Rows {
                    sheet: Some("Sales".into()),
                    first: 2,
                    count: 10,
                },
            ),
            place(
                20,
                Mark::Rows {
                    sheet: Some("Stock".into()),
                    first: 1,
                    count: 3,
                },
            ),
        ];
        let l = locate(&Places::new(places.to_vec()), At::line(0), At::line(5));
        assert_eq!((l.sheet.as_deref(), l.rows), (Some("Sales"), Some((2, 5))));
        let l = locate(&Places::new(places.to_vec()), At::line(20), At::line(40));
        assert_eq!((l.sheet.as_deref(), l.rows), (Some("Stock"), Some((1, 3))));
        assert_eq!(
            locate(&Places::new(places.to_vec()), At::line(13), At::line(19)).rows,
            None
        );
    }

    #[test]
    fn citations_and_fragments_name_the_best_place() {
        let pdf = Location {
            pages: Some((12, 12)),
            ..Location::default()
        };
        assert_eq!(pdf.citation("report.pdf"), "report.pdf, p. 12");
        assert_eq!(pdf.fragment().as_deref(), Some("page=12"));
        let md = Location {
            lines: Some((40, 52)),
            anchor: Some("setup".into()),
            ..Location::default()
        };
        assert_eq!(md.citation("notes.md"), "notes.md, lines 40–52");
        assert_eq!(md.fragment().as_deref(), Some("lines=40-52"));
        let sheet = Location {
            sheet: Some("Sales".into()),
            rows: Some((4, 9)),
            ..Location::default()
        };
        assert_eq!(sheet.citation("book.xlsx"), "book.xlsx, Sales, rows 4–9");
        assert_eq!(
            Location {
                pages: Some((3, 4)),
                ..Location::default()
            }
            .citation("a.pdf"),
            "a.pdf, pp. 3–4"
        );
        assert_eq!(
            slug("Getting Started: the `CLI`!"),
            "getting-started-the-cli"
        );
        assert_eq!(slug("Настройка сети"), "настройка-сети");
    }
}
