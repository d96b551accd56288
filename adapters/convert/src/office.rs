//! Office files are zip archives: reading them is guarded against zip bombs
//! (entry count and total uncompressed size), path-traversal entry names and
//! runaway XML nesting.

use std::io::{Cursor, Read};

use minirag_core::meta::{Declared, OverBudget, MAX_DECLARING_PART_BYTES};
use minirag_core::ports::ConvertError;
use quick_xml::events::Event;
use quick_xml::Reader;

/// Entries an archive may hold: more is a zip bomb or not an office file.
pub const MAX_ENTRIES: usize = 10_000;
/// Bytes an archive may inflate to, all entries together.
pub const MAX_UNCOMPRESSED: u64 = 512 << 20;
/// XML nesting an entry may reach.
pub const MAX_DEPTH: usize = 256;

/// A [`ConvertError::Malformed`] naming the document.
pub fn malformed(name: &str, reason: impl std::fmt::Display) -> ConvertError {
    ConvertError::malformed(name, reason.to_string())
}

/// As [`malformed`], keeping the parser's error as the cause.
pub fn malformed_by(
    name: &str,
    reason: impl std::fmt::Display,
    e: impl std::error::Error + Send + Sync + 'static,
) -> ConvertError {
    ConvertError::Malformed {
        name: name.into(),
        reason: reason.to_string(),
        cause: Some(minirag_core::cause::Cause::new(e)),
    }
}

/// An office file's zip, opened with the limits above.
pub struct Archive<'a> {
    name: &'a str,
    zip: zip::ZipArchive<Cursor<&'a [u8]>>,
}

impl<'a> Archive<'a> {
    /// Opens `bytes` as a zip, refusing what breaks the limits.
    pub fn open(name: &'a str, bytes: &'a [u8]) -> Result<Self, ConvertError> {
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| malformed_by(name, format!("not a readable zip archive ({e})"), e))?;
        if zip.len() > MAX_ENTRIES {
            return Err(malformed(
                name,
                format!("{} entries in the archive (limit {MAX_ENTRIES})", zip.len()),
            ));
        }
        let mut total = 0u64;
        for i in 0..zip.len() {
            let f = zip
                .by_index_raw(i)
                .map_err(|e| malformed_by(name, e.to_string(), e))?;
            let entry = f.name().map_err(|e| malformed_by(name, e.to_string(), e))?;
            if entry.starts_with('/') || entry.split(['/', '\\']).any(|p| p == "..") {
                return Err(malformed(
                    name,
                    format!("unsafe entry name '{entry}' in the archive"),
                ));
            }
            total = total.saturating_add(f.size());
        }
        if total > MAX_UNCOMPRESSED {
            return Err(malformed(name, format!("expands to {total} bytes (limit {MAX_UNCOMPRESSED}): refusing a possible zip bomb")));
        }
        Ok(Self { name, zip })
    }

    /// Entry names in archive order.
    pub fn names(&self) -> Vec<String> {
        self.zip
            .file_names()
            .filter_map(|n| n.ok().map(|n| n.into_owned()))
            .collect()
    }

    /// One entry's bytes when it holds at most `cap` of them; `None` when
    /// absent.
    pub fn bytes_within(
        &mut self,
        entry: &str,
        cap: usize,
    ) -> Result<Option<Within>, ConvertError> {
        let file = match self.zip.by_name(entry) {
            Ok(f) => f,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(malformed_by(self.name, e.to_string(), e)),
        };
        let mut out = Vec::new();
        file.take(cap as u64 + 1)
            .read_to_end(&mut out)
            .map_err(|e| malformed_by(self.name, format!("{entry}: {e}"), e))?;
        Ok(Some(if out.len() > cap {
            Within::Over
        } else {
            Within::Whole(out)
        }))
    }

    /// One entry as text; `None` when absent.
    pub fn text(&mut self, entry: &str) -> Result<Option<String>, ConvertError> {
        let mut file = match self.zip.by_name(entry) {
            Ok(f) => f,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(malformed_by(self.name, e.to_string(), e)),
        };
        let mut out = String::new();
        file.by_ref()
            .take(MAX_UNCOMPRESSED)
            .read_to_string(&mut out)
            .map_err(|e| malformed_by(self.name, format!("{entry}: {e}"), e))?;
        Ok(Some(out))
    }
}

/// An entry read up to a cap.
pub enum Within {
    /// All of it.
    Whole(Vec<u8>),
    /// It is longer than the cap.
    Over,
}

/// A flattened XML event stream with entity references resolved.
pub enum Node {
    /// An element opens: its name and attributes.
    Open(String, Vec<(String, String)>),
    /// An element closes: its name.
    Close(String),
    /// Text between tags, entities resolved.
    Text(String),
}

/// `xml`'s events one at a time, refusing nesting past [`MAX_DEPTH`]: a
/// part is never held as a list of events (a few megabytes of empty
/// elements would be gigabytes of them).
pub fn nodes<'a>(name: &'a str, xml: &'a str) -> Nodes<'a> {
    Nodes {
        name,
        reader: Reader::from_str(xml),
        depth: 0,
        pending_close: None,
        done: false,
    }
}

/// All of a small part's events at once (a relationships list, an EPUB
/// container).
pub fn node_list(name: &str, xml: &str) -> Result<Vec<Node>, ConvertError> {
    nodes(name, xml).collect()
}

/// The iterator [`nodes`] returns; it ends after its first error.
pub struct Nodes<'a> {
    name: &'a str,
    reader: Reader<&'a [u8]>,
    depth: usize,
    /// The close of an empty element (`<a/>`), given after its open.
    pending_close: Option<String>,
    done: bool,
}

impl Iterator for Nodes<'_> {
    type Item = Result<Node, ConvertError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(tag) = self.pending_close.take() {
            return Some(Ok(Node::Close(tag)));
        }
        while !self.done {
            let event = match self.reader.read_event() {
                Ok(event) => event,
                Err(e) => {
                    self.done = true;
                    return Some(Err(malformed_by(self.name, format!("broken XML: {e}"), e)));
                }
            };
            let node = match event {
                Event::Start(e) => {
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        self.done = true;
                        return Some(Err(malformed(
                            self.name,
                            format!("XML nested deeper than {MAX_DEPTH}"),
                        )));
                    }
                    Node::Open(e.name().as_ref().to_string(), attrs(&e))
                }
                Event::Empty(e) => {
                    let tag = e.name().as_ref().to_string();
                    self.pending_close = Some(tag.clone());
                    Node::Open(tag, attrs(&e))
                }
                Event::End(e) => {
                    self.depth = self.depth.saturating_sub(1);
                    Node::Close(e.name().as_ref().to_string())
                }
                Event::Text(t) => Node::Text(t.into_inner().into_owned()),
                Event::CData(t) => Node::Text(t.into_inner().into_owned()),
                Event::GeneralRef(r) => Node::Text(resolved(&r)),
                Event::Eof => {
                    self.done = true;
                    return None;
                }
                _ => continue,
            };
            return Some(Ok(node));
        }
        None
    }
}

/// An entity or character reference's text.
fn resolved(r: &quick_xml::events::BytesRef<'_>) -> String {
    match r.resolve_char_ref() {
        Ok(Some(c)) => c.to_string(),
        _ => match &**r {
            "amp" => "&".into(),
            "lt" => "<".into(),
            "gt" => ">".into(),
            "quot" => "\"".into(),
            "apos" => "'".into(),
            _ => String::new(),
        },
    }
}

fn attrs(e: &quick_xml::events::BytesStart<'_>) -> Vec<(String, String)> {
    e.attributes()
        .flatten()
        .map(|a| (a.key.as_ref().to_string(), a.value.to_string()))
        .collect()
}

/// What `docProps/core.xml` says about a document: its title, and the
/// fields a filter can ask for.
#[derive(Debug, Default)]
pub struct CoreProperties {
    /// `dc:title`.
    pub title: Option<String>,
    /// title, author, subject, keywords, category.
    pub meta: Declared,
}

/// The core properties' elements and the fields they fill.
const CORE_FIELDS: [(&str, &str); 5] = [
    ("dc:title", "title"),
    ("dc:creator", "author"),
    ("cp:keywords", "keywords"),
    ("dc:subject", "subject"),
    ("cp:category", "category"),
];

/// The core properties of an OOXML package (none when it has no
/// `docProps/core.xml`). They are the document's own account of itself,
/// not its text: a part too large, broken or in an encoding other than
/// UTF-8 or ISO-8859-1 leaves them out, never the document.
pub fn core_properties(archive: &mut Archive<'_>, name: &str) -> CoreProperties {
    let mut meta = Declared::default();
    let xml = match archive.bytes_within("docProps/core.xml", MAX_DECLARING_PART_BYTES) {
        Ok(Some(Within::Whole(bytes))) => decoded(bytes),
        Ok(Some(Within::Over)) => {
            meta.refuse(OverBudget::LargePart);
            return CoreProperties { title: None, meta };
        }
        Ok(None) | Err(_) => return CoreProperties::default(),
    };
    let mut open: Option<(&'static str, String)> = None;
    for n in nodes(name, &xml) {
        match n {
            Ok(Node::Open(t, _)) => {
                open = CORE_FIELDS
                    .iter()
                    .find(|(e, _)| *e == t)
                    .map(|(_, f)| (*f, String::new()));
            }
            Ok(Node::Close(_)) => {
                if let Some((field, value)) = open.take() {
                    if !value.trim().is_empty() {
                        meta.push(field, value);
                    }
                }
            }
            Ok(Node::Text(text)) => {
                if let Some((_, value)) = &mut open {
                    value.push_str(&text);
                }
            }
            Err(_) => return CoreProperties::default(),
        }
    }
    let title = meta
        .pairs()
        .iter()
        .find(|(f, _)| f == "title")
        .map(|(_, v)| v.trim().to_string());
    CoreProperties { title, meta }
}

/// A part's text: UTF-8, or else ISO-8859-1 (each byte its code point),
/// which older tools wrote and declared.
fn decoded(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|e| e.into_bytes().iter().map(|&b| char::from(b)).collect())
}

/// A GitHub pipe table; the first row is the header.
pub fn pipe_table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = String::new();
    let mut table = PipeTable::new(&mut out, width);
    for r in rows {
        table.row(r.iter().map(String::as_str));
    }
    out
}

/// Writes a pipe table row by row into one string (first row the header),
/// so a sheet of a million rows never exists as a `Vec` of rows of strings
/// (ten times the text). `width` is the widest row's cell count; shorter
/// rows are padded with empty cells. A cell's `|` is escaped and its
/// whitespace runs, line breaks included, become one space.
pub struct PipeTable<'a> {
    out: &'a mut String,
    width: usize,
    rows: usize,
}

impl<'a> PipeTable<'a> {
    /// A table writer into `out`, `width` columns.
    pub fn new(out: &'a mut String, width: usize) -> Self {
        Self {
            out,
            width,
            rows: 0,
        }
    }

    /// Writes one row; the first is the header.
    pub fn row<'c>(&mut self, cells: impl IntoIterator<Item = &'c str>) {
        if self.width == 0 {
            return;
        }
        if self.rows > 0 {
            self.out.push('\n');
        }
        let mut cells = cells.into_iter();
        self.out.push('|');
        for _ in 0..self.width {
            self.out.push(' ');
            let cell = cells.next().unwrap_or("");
            for (k, word) in cell.split_whitespace().enumerate() {
                if k > 0 {
                    self.out.push(' ');
                }
                for part in word.split_inclusive('|') {
                    match part.strip_suffix('|') {
                        Some(head) => {
                            self.out.push_str(head);
                            self.out.push_str("\\|");
                        }
                        None => self.out.push_str(part),
                    }
                }
            }
            self.out.push_str(" |");
        }
        if self.rows == 0 {
            self.out.push_str("\n|");
            for _ in 0..self.width {
                self.out.push_str(" --- |");
            }
        }
        self.rows += 1;
    }
}
