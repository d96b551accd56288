//! The `Converter` port. This first slice reads the text formats (`md`,
//! `markdown`, `txt`) and HTML; the binary office and PDF formats answer
//! `Unsupported` until their converters land.

pub mod html;
pub mod text;

use minirag_core::ports::{ConvertError, ConvertRequest, Converted, Converter};

#[derive(Debug, Default, Clone, Copy)]
pub struct Converters;

impl Converter for Converters {
    fn convert(&self, r: ConvertRequest<'_>) -> Result<Converted, ConvertError> {
        match r.format {
            "md" | "markdown" | "txt" | "text" => Ok(Converted {
                markdown: text::decode(r.name, r.bytes)?,
                metadata_title: None,
            }),
            "html" | "htm" => html::convert(&text::decode(r.name, r.bytes)?),
            other => Err(ConvertError::Unsupported {
                format: other.into(),
            }),
        }
    }
}
