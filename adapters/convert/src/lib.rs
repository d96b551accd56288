//! The `Converter` port: text formats, HTML, CSV, XLSX, DOCX, PPTX and Jupyter
//! notebooks, PDF (text layer), EPUB and WebVTT transcripts. A panic inside a converter is caught at this boundary
//! and reported as a malformed file, never as success.

#![forbid(unsafe_code)]

pub mod docx;
mod docx_lists;
pub mod epub;
mod front_matter;
pub mod html;
mod html_depth;
mod html_meta;
mod html_pieces;
pub mod notebook;
pub mod office;
pub mod pdf;
mod pdf_columns;
mod pdf_info;
mod pdf_layout;
mod pdf_lines;
mod pdf_outline;
mod pdf_spans;
mod pdf_table;
mod pdf_typography;
mod plain_text;
pub mod pptx;
pub mod sheets;
mod source_lines;
pub mod text;
pub mod vtt;

use minirag_core::ports::{ConvertError, ConvertRequest, Converted, Converter};

/// The converter thread's stack: address space reserved, touched only as deep
/// as a file makes the parser go.
const CONVERTER_STACK: usize = 64 << 20;

/// The [`Converter`] for every format in core's table.
#[derive(Debug, Default, Clone, Copy)]
pub struct Converters;

impl Converter for Converters {
    /// Runs on a thread of its own with a known, generous stack, whatever
    /// thread the caller is on: parsers recurse over nested input, and the
    /// depth caps in the converters leave them far below this.
    fn convert(&self, r: ConvertRequest<'_>) -> Result<Converted, ConvertError> {
        let crashed = || ConvertError::Malformed {
            cause: None,
            name: r.name.into(),
            reason: "the converter crashed on this file".into(),
        };
        std::thread::scope(|s| {
            let worker = std::thread::Builder::new()
                .name("minirag-convert".into())
                .stack_size(CONVERTER_STACK)
                .spawn_scoped(s, || std::panic::catch_unwind(|| convert_unguarded(r)));
            match worker {
                Ok(handle) => handle.join().ok().and_then(Result::ok),
                // No thread to be had (the process is at its limit): convert here.
                Err(_) => std::panic::catch_unwind(|| convert_unguarded(r)).ok(),
            }
            .unwrap_or_else(|| Err(crashed()))
        })
    }
}

/// The conversion without the `catch_unwind` boundary, so fuzz targets and
/// tests see a panic as a panic instead of a "crashed" error.
pub fn convert_unguarded(r: ConvertRequest<'_>) -> Result<Converted, ConvertError> {
    {
        match r.format {
            "csv" => sheets::csv(r.name, &text::decode(r.name, r.bytes)?),
            "xlsx" => sheets::xlsx(r.name, r.bytes),
            "docx" => docx::convert(r.name, r.bytes),
            "pptx" => pptx::convert(r.name, r.bytes),
            "pdf" => pdf::convert(r.name, r.bytes),
            "epub" => epub::convert(r.name, r.bytes),
            "vtt" => vtt::convert(r.name, &text::decode(r.name, r.bytes)?),
            "ipynb" => notebook::convert(r.name, &text::decode(r.name, r.bytes)?),
            "md" | "markdown" => Ok(markdown(text::decode(r.name, r.bytes)?.into_owned())),
            "txt" | "text" => Ok(Converted {
                markdown: text::decode(r.name, r.bytes)?.into_owned(),
                metadata_title: None,
                page_chars: Vec::new(),
                places: minirag_core::location::file_lines(),
                meta: Default::default(),
            }),
            "html" | "htm" => html::convert(&text::decode(r.name, r.bytes)?),
            other => Err(ConvertError::Unsupported {
                format: other.into(),
            }),
        }
    }
}

/// A Markdown file: its front matter, if any, as declared fields and
/// title, blanked in the text so line numbers hold.
fn markdown(text: String) -> Converted {
    let (matter, markdown) = match front_matter::split(&text) {
        Some((matter, blanked)) => (matter, blanked),
        None => (Default::default(), text),
    };
    Converted {
        markdown,
        metadata_title: matter.title,
        page_chars: Vec::new(),
        places: minirag_core::location::file_lines(),
        meta: matter.fields,
    }
}

#[cfg(test)]
mod tests {
    use minirag_core::formats::{FormatKind, FORMATS};
    use minirag_core::ports::{ConvertError, ConvertRequest};

    /// The format table and the converter's arms cannot drift apart.
    #[test]
    fn every_readable_format_has_a_converter() {
        for f in FORMATS.iter().filter(|f| f.kind == FormatKind::Document) {
            let r = super::convert_unguarded(ConvertRequest {
                name: "x",
                format: f.key,
                bytes: b"",
            });
            assert!(
                !matches!(r, Err(ConvertError::Unsupported { .. })),
                "{} ({}) has no converter",
                f.name,
                f.key
            );
        }
    }
}
