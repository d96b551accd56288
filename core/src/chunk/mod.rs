//! Markdown → retrieval units.
//!
//! The pipeline is: [`category::detect`] the document's shape, cut it into
//! [`sections`] (parents) with breadcrumb ladders, [`cap`] sections at 4,000
//! characters, seed the title into the first section, then [`pack`] each
//! section's atoms into units that fit the token budget.

pub mod blocks;
pub mod cap;
pub mod category;
pub mod lines;
pub mod pack;
pub mod sections;

use crate::location::{locate, slug, Location, Packed, Place, Places};
use crate::markdown::{is_delimiter_row, timestamp_seconds};
use crate::tokens::TokenCounter;
use crate::unreadable::Glyphs;

pub use category::Category;

/// Default and allowed range of the unit budget in tokens.
pub const DEFAULT_BUDGET: usize = 110;
/// The smallest budget `CHUNK_TOKEN_BUDGET` accepts.
pub const MIN_BUDGET: usize = 16;
/// The largest budget `CHUNK_TOKEN_BUDGET` accepts: the encoder's window less the breadcrumb's share.
pub const MAX_BUDGET: usize = 128;

/// The note that opens every piece of a fenced code block too long to keep whole.
pub(crate) const CODE_SPLIT_NOTE: &str = "[code block split to fit the token budget]";

/// One heading of a section's chain, outermost first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 for `#`, up to 6.
    pub level: u8,
    /// Cleaned text used in breadcrumbs (`**` runs and edge markup removed).
    pub text: String,
    /// The heading line as written, re-emitted by whole-document reconstruction.
    pub line: String,
}

/// What a unit is made of; reconstruction glues code pieces differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum UnitKind {
    /// Prose.
    #[default]
    Text,
    /// Table rows, a header repeated in each piece.
    Rows,
    /// A whole fenced code block.
    Code,
    /// One piece of a fenced block split at line boundaries; starts with
    /// [`CODE_SPLIT_NOTE`] after the prefix.
    CodePiece,
}

/// How a unit's text is laid out, so reconstruction can undo the chunker's
/// additions (breadcrumb prefix, split note) and restore real headings, and
/// where in its document the unit is. The default is a plain text unit
/// with no prefix, no headings and no known place.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Layout {
    /// Bytes of the `<breadcrumb>\n\n` prefix at the start of the text.
    pub prefix_len: u32,
    /// What the unit is made of.
    pub kind: UnitKind,
    /// The section's heading chain (empty outside heading documents).
    pub headings: Vec<Heading>,
    /// The section had no body, so its own heading text is the unit body.
    pub heading_is_body: bool,
    /// The section continues the previous one after the 4,000-character cap.
    pub continues_section: bool,
    /// Page, slide, rows, lines… of the unit, packed; empty when nothing
    /// is known. [`Chunk::location`] reads it.
    pub location: Packed,
}

/// A retrieval unit: the text that is embedded and searched.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// 0-based, contiguous within a source. Chunk id: `<source>#<index>`.
    pub index: u32,
    /// Parent section index; counts only sections that produced a unit.
    /// Parent id: `<source>#p<parent>`.
    pub parent: u32,
    /// The unit's text, breadcrumb prefix first.
    pub text: String,
    /// How the text is laid out and where it is in its document.
    pub layout: Layout,
}

impl Chunk {
    /// Where the unit is: its stored place, and as `anchor` the `id` the
    /// file gives its heading, else the slug of its innermost heading
    /// (none when that heading reads as badly encoded).
    /// `None` when nothing is known.
    pub fn location(&self) -> Option<Location> {
        let anchor = self
            .layout
            .headings
            .last()
            .filter(|h| !crate::unreadable::is_unreadable(&h.text, Glyphs::FromFonts))
            .map(|h| slug(&h.text))
            .filter(|s| !s.is_empty());
        let mut place = self.layout.location.unpack().unwrap_or_default();
        place.anchor = place.anchor.or(anchor);
        (!place.is_empty()).then_some(place)
    }

    /// The unit text without its breadcrumb prefix.
    pub fn body(&self) -> &str {
        self.text
            .get(self.layout.prefix_len as usize..)
            .unwrap_or(&self.text)
    }
}

/// A chunk's id in answers: `<source>#<index>`.
pub fn chunk_id(source: &str, index: u32) -> String {
    format!("{source}#{index}")
}

/// A parent section's id in answers: `<source>#p<parent>`.
pub fn parent_id(source: &str, parent: u32) -> String {
    format!("{source}#p{parent}")
}

/// Splits `<source>#p<n>` back into its parts (the tests' check of
/// [`parent_id`]).
#[cfg(test)]
pub fn parse_parent_id(id: &str) -> Option<(&str, u32)> {
    let (source, n) = id.rsplit_once("#p")?;
    Some((source, n.parse().ok()?))
}

/// A section (parent unit) before packing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Breadcrumb prefixes from most to least informative; always ends with "".
    pub ladder: Vec<String>,
    /// The section's Markdown without its heading lines.
    pub body: String,
    /// The heading chain, outermost first.
    pub headings: Vec<Heading>,
    /// The heading line itself is the body (a section of only a heading).
    pub heading_is_body: bool,
    /// A piece of a longer section cut before packing: its breadcrumb says so.
    pub continues: bool,
    /// The Markdown line of each body line ([`lines::UNKNOWN`] when not
    /// found); empty before [`lines::map_sections`].
    pub line_map: Vec<u32>,
    /// The words before each body line on its Markdown line (a sentence
    /// piece of a longer line starts inside it).
    pub word_offsets: Vec<u32>,
}

impl Section {
    /// A section of `body` alone: no headings, no breadcrumb.
    pub fn plain(body: String) -> Self {
        Self {
            ladder: vec![String::new()],
            body,
            headings: Vec::new(),
            heading_is_body: false,
            continues: false,
            line_map: Vec::new(),
            word_offsets: Vec::new(),
        }
    }
}

/// Chunking options.
#[derive(Clone, Copy)]
pub struct ChunkOptions<'a> {
    /// Units must count at most this many tokens (16–128).
    pub budget: usize,
    /// The document title: seeded into the first section and used in
    /// transcript window labels. `None` for data/URL sources without a real
    /// title: then nothing is seeded.
    pub title: Option<&'a str>,
    /// Counts tokens as the model will.
    pub counter: &'a dyn TokenCounter,
}

/// The result of chunking one document.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunked {
    /// The document's chunks, in order.
    pub chunks: Vec<Chunk>,
    /// The shape the document was read as.
    pub category: Category,
    /// `# <title>` was added in front of the first section.
    pub title_seeded: bool,
}

/// Chunks a Markdown document.
pub fn chunk_markdown(markdown: &str, options: ChunkOptions<'_>) -> Chunked {
    pack_sections(section_markdown(markdown, options), options)
}

/// A document cut into sections, before packing: the first half of
/// [`chunk_markdown`]. The sections own their text, so a caller can drop a
/// big document before packing it.
pub struct Sectioned {
    category: Category,
    sections: Vec<Section>,
    title_seeded: bool,
    /// The converter's place marks and the deck's slide markers.
    places: Places,
}

impl Sectioned {
    /// Adds the converter's place marks (pages, rows, file lines…).
    pub fn with_places(mut self, places: Vec<Place>) -> Self {
        self.places.extend(places);
        self
    }
}

/// Sections of a Markdown document, the title seeded into the first.
pub fn section_markdown(markdown: &str, options: ChunkOptions<'_>) -> Sectioned {
    let normalized;
    let markdown = if markdown.contains('\r') {
        normalized = markdown.replace("\r\n", "\n").replace('\r', "\n");
        normalized.as_str()
    } else {
        markdown
    };
    let title = options.title.map(str::trim).unwrap_or("");
    let (category, raw_sections) = sections::build(markdown, title);
    let mut sections: Vec<Section> = raw_sections.into_iter().flat_map(cap::apply).collect();
    lines::map_sections(markdown, &mut sections);
    let places = Places::new(lines::slide_places(markdown));

    let mut title_seeded = false;
    if options.title.is_some() && !title.is_empty() {
        if let Some(first) = sections.first_mut() {
            // Already there: in the body, or in the breadcrumb of a headed
            // section (the reference would repeat an H1 title under itself).
            let in_headings = first.headings.iter().any(|h| h.text.contains(title));
            if !first.body.contains(title) && !in_headings {
                first.body = format!("# {title}\n\n{}", first.body);
                let mut map = vec![lines::UNKNOWN; 2];
                map.append(&mut first.line_map);
                first.line_map = map;
                let mut offsets = vec![0; 2];
                offsets.append(&mut first.word_offsets);
                first.word_offsets = offsets;
                title_seeded = true;
            }
        }
    }
    Sectioned {
        category,
        sections,
        title_seeded,
        places,
    }
}

/// Packs sections into chunks, each section dropped once packed (a big
/// file's sections and chunks are never both whole in memory).
pub fn pack_sections(sectioned: Sectioned, options: ChunkOptions<'_>) -> Chunked {
    let mut chunks = Vec::new();
    let mut parent = 0u32;
    // The cue time a transcript's text is under, carried across units.
    let mut cue: Option<String> = None;
    for section in sectioned.sections {
        let units = pack::pack_section(&section, options.budget, options.counter);
        if units.is_empty() {
            continue;
        }
        let body_words = lines::words(&section.body);
        let mut cursor = 0;
        for unit in units {
            let body = unit.text.get(unit.prefix_len..).unwrap_or("");
            let location = unit_location(
                &section,
                &body_words,
                &mut cursor,
                body,
                unit.kind,
                &sectioned.places,
                &mut cue,
            );
            chunks.push(Chunk {
                index: chunks.len() as u32,
                parent,
                layout: Layout {
                    prefix_len: unit.prefix_len as u32,
                    kind: unit.kind,
                    headings: section.headings.clone(),
                    heading_is_body: section.heading_is_body,
                    continues_section: section.continues,
                    location: location.as_ref().map(Packed::from).unwrap_or_default(),
                },
                text: unit.text,
            });
        }
        parent += 1;
    }
    Chunked {
        chunks,
        category: sectioned.category,
        title_seeded: sectioned.title_seeded,
    }
}

/// Where a unit is: its Markdown positions through the places, and in a
/// transcript the cue time it starts under. (Its heading's anchor is not
/// stored: [`Chunk::location`] derives it from the heading chain.)
fn unit_location(
    section: &Section,
    body_words: &[lines::Word],
    cursor: &mut usize,
    body: &str,
    kind: UnitKind,
    places: &Places,
    cue: &mut Option<String>,
) -> Option<Location> {
    // A rows unit may repeat its table's header; a code piece opens with a
    // note. Neither is where the unit is.
    let mut lines_of_body = body.split('\n');
    let skip = match kind {
        UnitKind::Rows if lines_of_body.nth(1).is_some_and(is_delimiter_row) => 2,
        UnitKind::CodePiece => 1,
        _ => 0,
    };
    let mut location = lines::unit_lines(body_words, cursor, body, skip)
        .and_then(|(a, b)| lines::to_markdown(section, a, b))
        .map(|(a, b)| locate(places, a, b))
        .unwrap_or_default();
    let mut times = body.split('\n').filter_map(timestamp_seconds);
    if let Some(first) = times.next() {
        location.start = Some(sections::format_timestamp(first));
        *cue = times
            .next_back()
            .or(Some(first))
            .map(sections::format_timestamp);
    } else {
        location.start = cue.clone();
    }
    (!location.is_empty()).then_some(location)
}

#[cfg(test)]
mod tests;
