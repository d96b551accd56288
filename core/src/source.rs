//! What the index keeps about one source besides its chunks. A leaf
//! module, so both the ports and the search filters can name it.

/// What a source is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceType {
    /// A file under a root.
    File,
    /// Text given to `ingest_data`.
    Data,
    /// A fetched URL.
    Url,
}

impl SourceType {
    /// The type's name in answers.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::File => "file",
            Self::Data => "data",
            Self::Url => "url",
        }
    }
}

/// Everything the index keeps about one source besides its chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRecord {
    /// Absolute path for files, the URL or the caller's id otherwise.
    pub source: String,
    /// File, data or URL.
    pub source_type: SourceType,
    /// Its title: declared, first heading, or file name.
    pub title: String,
    /// The title was seeded as `# <title>` into chunk 0; whole-document
    /// reconstruction removes it again.
    pub title_seeded: bool,
    /// sha256 hex of the file bytes; empty for data and URL sources.
    pub file_hash: String,
    /// st_mtime of the file; 0.0 for data and URL sources.
    pub mtime: f64,
    /// ISO-8601 UTC, the same for every chunk of one ingest.
    pub ingested_at: String,
    /// Chunks stored.
    pub chunk_count: u32,
    /// The chunk scheme it was cut with.
    pub scheme_version: u32,
    /// Model whose vectors are stored; `None` when the source was ingested
    /// while no model could be loaded (sync fills the vectors in later).
    pub embedded_with: Option<String>,
    /// The OCR engine that read part of the document (`tesseract 5.3.0
    /// (rus+eng)`), or empty when all of it came from a text layer.
    pub ocr_engine: String,
    /// What the document says about itself, for the `language` and `meta`
    /// filters and for `read_file` and `list_files`.
    pub attributes: SourceAttributes,
}

/// A document's main language and the fields it declares about itself
/// (front matter, core properties, PDF Info, HTML `<meta>`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceAttributes {
    /// ISO 639-1 code (`en`, `ru`) of the language most of the text is in;
    /// `None` when the text was too short or too mixed to tell.
    pub language: Option<String>,
    /// `(field, value)` pairs as [`crate::meta::normalized`] leaves them:
    /// fields lower-case, sorted, one pair per item of a list field.
    pub meta: Vec<(String, String)>,
}

impl SourceAttributes {
    /// Whether it has no language and no fields.
    pub fn is_empty(&self) -> bool {
        self.language.is_none() && self.meta.is_empty()
    }
}
