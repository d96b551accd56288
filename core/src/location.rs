//! Where a chunk is in its document. A converter marks places in the
//! Markdown it writes (where each page starts, which file lines or table
//! rows the Markdown lines are); the chunker finds each chunk's Markdown
//! lines; [`locate`] turns the two into a [`Location`], which answers carry
//! with a short citation.

/// A place a converter marks: from Markdown line `line` (0-based) on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub line: u32,
    pub mark: Mark,
}

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
    /// A table's data rows: this line is row `first` of `sheet` (the sheet's
    /// own row numbers, or a CSV's record numbers with the header as 1), one
    /// row per Markdown line, `count` rows.
    Rows {
        sheet: Option<String>,
        first: u32,
        count: u32,
    },
}

/// The places of a file whose Markdown is the file itself (Markdown,
/// text): Markdown line n is file line n + 1.
pub fn file_lines() -> Vec<Place> {
    vec![Place {
        line: 0,
        mark: Mark::Lines(1),
    }]
}

/// Where a chunk is. A field is absent when it is unknown or does not
/// apply to the format.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    /// First and last page (equal on one page).
    pub pages: Option<(u32, u32)>,
    pub slide: Option<u32>,
    pub sheet: Option<String>,
    /// First and last table row.
    pub rows: Option<(u32, u32)>,
    /// First and last line of the original file (or of the stored Markdown
    /// for text passed in and fetched pages).
    pub lines: Option<(u32, u32)>,
    /// The slug of the chunk's innermost heading.
    pub anchor: Option<String>,
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
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// A short human citation: `report.pdf, p. 12`, `notes.md, lines 40–52`,
    /// `deck.pptx, slide 3`, `book.xlsx, Sales, rows 4–9`. `name` is the
    /// document's file name or title.
    pub fn citation(&self, name: &str) -> String {
        let mut parts = vec![name.to_string()];
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
        if parts.len() == 1 {
            if let Some(l) = self.lines {
                parts.push(span("line", "lines", l));
            } else if let Some(a) = &self.anchor {
                parts.push(format!("#{a}"));
            }
        }
        parts.join(", ")
    }

    /// The URI fragment that opens the place: `page=12`, `slide=3`,
    /// `rows=4-9`, `cell=2`, `lines=40-52`, or the anchor.
    pub fn fragment(&self) -> Option<String> {
        if let Some(p) = self.pages {
            return Some(format!("page={}", range(p)));
        }
        if let Some(s) = self.slide {
            return Some(format!("slide={s}"));
        }
        if let Some(r) = self.rows {
            return Some(format!("rows={}", range(r)));
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

/// The place of Markdown lines `first..=last` under `places` (sorted by
/// line): pages, slide, cell, table rows and file lines.
pub fn locate(places: &[Place], first: u32, last: u32) -> Location {
    let mut out = Location::default();
    let at = |line: u32, pick: &dyn Fn(&Mark) -> Option<u32>| -> Option<(u32, u32)> {
        places
            .iter()
            .take_while(|p| p.line <= line)
            .filter_map(|p| pick(&p.mark).map(|v| (p.line, v)))
            .last()
    };
    let page = |m: &Mark| match m {
        Mark::Page(n) => Some(*n),
        _ => None,
    };
    if let (Some((_, a)), Some((_, b))) = (at(first, &page), at(last, &page)) {
        out.pages = Some((a, b.max(a)));
    }
    out.slide = at(first, &|m| match m {
        Mark::Slide(n) => Some(*n),
        _ => None,
    })
    .map(|(_, n)| n);
    out.cell = at(first, &|m| match m {
        Mark::Cell(n) => Some(*n),
        _ => None,
    })
    .map(|(_, n)| n);
    if let Some((line, from)) = at(first, &|m| match m {
        Mark::Lines(n) => Some(*n),
        _ => None,
    }) {
        out.lines = Some((from + (first - line), from + (last - line)));
    }
    // The table whose rows the chunk overlaps (a chunk may start on the
    // table's header, above its first row).
    for p in places {
        if let Mark::Rows {
            sheet,
            first: row,
            count,
        } = &p.mark
        {
            let end = p.line + count.saturating_sub(1);
            if *count > 0 && p.line <= last && end >= first {
                let a = first.max(p.line) - p.line + row;
                let b = last.min(end) - p.line + row;
                out.sheet = sheet.clone();
                out.rows = Some((a, b));
                break;
            }
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
        Place { line, mark }
    }

    #[test]
    fn pages_slides_cells_and_lines_follow_their_marks() {
        let places = [
            place(0, Mark::Lines(1)),
            place(0, Mark::Page(1)),
            place(10, Mark::Page(2)),
            place(30, Mark::Page(3)),
        ];
        let l = locate(&places, 12, 14);
        assert_eq!(l.pages, Some((2, 2)));
        assert_eq!(l.lines, Some((13, 15)));
        assert_eq!(locate(&places, 8, 31).pages, Some((1, 3)));
        let slides = [place(0, Mark::Slide(1)), place(5, Mark::Slide(2))];
        assert_eq!(locate(&slides, 6, 9).slide, Some(2));
        let cells = [place(0, Mark::Cell(1)), place(4, Mark::Cell(2))];
        assert_eq!(locate(&cells, 3, 5).cell, Some(1));
        assert!(locate(&[], 0, 3).is_empty());
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
        let l = locate(&places, 0, 5);
        assert_eq!((l.sheet.as_deref(), l.rows), (Some("Sales"), Some((2, 5))));
        let l = locate(&places, 20, 40);
        assert_eq!((l.sheet.as_deref(), l.rows), (Some("Stock"), Some((1, 3))));
        assert_eq!(locate(&places, 13, 19).rows, None);
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
