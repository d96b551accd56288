//! The one table of formats the product knows: file extensions, the media
//! types a fetched page may carry, the converter key and a display name.
//! Scanning, ingest checks, URL fetching, titles and messages all derive
//! from it, so adding a format is one row here plus its converter arm (a
//! converter test checks that every readable row has one).

/// Whether the product reads a format today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatKind {
    /// Converted to Markdown and indexed.
    Document,
    /// Recognised (titles, messages) but not read: it needs OCR.
    Image,
}

/// One document format: its keys, extensions and media types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// Shown to people.
    pub name: &'static str,
    /// The format key a converter is asked for (`ConvertRequest::format`).
    pub key: &'static str,
    /// Lower-case, without the dot.
    pub extensions: &'static [&'static str],
    /// Media types without parameters, lower-case.
    pub content_types: &'static [&'static str],
    /// Which converter family reads it.
    pub kind: FormatKind,
}

const fn doc(
    name: &'static str,
    key: &'static str,
    extensions: &'static [&'static str],
    content_types: &'static [&'static str],
) -> Format {
    Format {
        name,
        key,
        extensions,
        content_types,
        kind: FormatKind::Document,
    }
}

/// Every format minirag reads: the one table filters, the scan and the converters use.
pub const FORMATS: &[Format] = &[
    doc(
        "Markdown",
        "md",
        &["md", "markdown"],
        &["text/markdown", "text/x-markdown"],
    ),
    doc("plain text", "txt", &["txt"], &["text/plain"]),
    doc(
        "HTML",
        "html",
        &["html", "htm"],
        &["text/html", "application/xhtml+xml"],
    ),
    doc("CSV", "csv", &["csv"], &["text/csv"]),
    doc("PDF", "pdf", &["pdf"], &["application/pdf"]),
    doc("Word (DOCX)", "docx", &["docx"], &[]),
    doc("Excel (XLSX)", "xlsx", &["xlsx"], &[]),
    doc("PowerPoint (PPTX)", "pptx", &["pptx"], &[]),
    doc("EPUB", "epub", &["epub"], &[]),
    doc("Jupyter notebook", "ipynb", &["ipynb"], &[]),
    doc("WebVTT transcript", "vtt", &["vtt"], &[]),
    Format {
        name: "image",
        key: "image",
        extensions: &["bmp", "jpeg", "jpg", "png", "tif", "tiff", "webp"],
        content_types: &[],
        kind: FormatKind::Image,
    },
];

/// The format of a lower-case extension (without the dot).
pub fn by_extension(extension: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.extensions.contains(&extension))
}

/// The format of a source by its file name's extension (URLs and data ids
/// included); `None` when the name has no known extension.
pub fn of_source(source: &str) -> Option<&'static Format> {
    let name = source.rsplit('/').next().unwrap_or(source);
    let name = name.split(['?', '#']).next().unwrap_or(name);
    let (_, ext) = name.rsplit_once('.')?;
    by_extension(&ext.to_ascii_lowercase())
}

/// The readable format of a media type (lower-case, no parameters).
pub fn by_content_type(content_type: &str) -> Option<&'static Format> {
    FORMATS
        .iter()
        .find(|f| f.kind == FormatKind::Document && f.content_types.contains(&content_type))
}

/// Whether a file with this extension (any case) is read by the product.
pub fn is_document_extension(extension: &str) -> bool {
    by_extension(&extension.to_ascii_lowercase()).is_some_and(|f| f.kind == FormatKind::Document)
}

/// Every extension of one kind, sorted (for messages).
pub fn extensions(kind: FormatKind) -> Vec<&'static str> {
    let mut out: Vec<&str> = FORMATS
        .iter()
        .filter(|f| f.kind == kind)
        .flat_map(|f| f.extensions.iter().copied())
        .collect();
    out.sort_unstable();
    out
}

/// Every media type `ingest_url` accepts.
pub fn readable_content_types() -> Vec<&'static str> {
    FORMATS
        .iter()
        .filter(|f| f.kind == FormatKind::Document)
        .flat_map(|f| f.content_types.iter().copied())
        .collect()
}

/// Whether a path names an image (read only with OCR).
pub(crate) fn is_image_path(path: &str) -> bool {
    path.rsplit_once('.')
        .and_then(|(_, e)| by_extension(&e.to_ascii_lowercase()))
        .is_some_and(|f| f.kind == FormatKind::Image)
}

/// Whether `extension` (any case) is one the product knows, read or not.
pub fn is_known_extension(extension: &str) -> bool {
    by_extension(&extension.to_ascii_lowercase()).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_and_media_types_are_unique() {
        let mut exts: Vec<&str> = FORMATS
            .iter()
            .flat_map(|f| f.extensions.iter().copied())
            .collect();
        let n = exts.len();
        exts.sort_unstable();
        exts.dedup();
        assert_eq!(exts.len(), n, "an extension appears in two rows");
        let mut types = readable_content_types();
        let n = types.len();
        types.sort_unstable();
        types.dedup();
        assert_eq!(types.len(), n, "a media type appears in two rows");
    }

    #[test]
    fn lookups() {
        assert_eq!(by_extension("htm").map(|f| f.key), Some("html"));
        assert!(is_document_extension("PDF"));
        assert!(!is_document_extension("png"));
        assert!(is_known_extension("PNG"));
        assert_eq!(
            by_content_type("text/x-markdown").map(|f| f.key),
            Some("md")
        );
        assert_eq!(by_content_type("image/png"), None);
        assert!(extensions(FormatKind::Document).contains(&"xlsx"));
    }
}
