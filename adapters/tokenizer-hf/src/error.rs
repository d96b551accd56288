use std::fmt;

/// A `tokenizer.json` that could not be read. Callers name the file.
#[derive(Debug)]
pub enum TokenizerFileError {
    /// The file could not be read.
    Read(std::io::Error),
    /// Not a tokenizer the `tokenizers` crate (or our Unigram model) accepts.
    Parse(serde_json::Error),
}

impl fmt::Display for TokenizerFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read(e) => write!(f, "{e}"),
            Self::Parse(e) => write!(
                f,
                "not a tokenizer the Hugging Face tokenizers library reads ({e}); \
                 download the model's tokenizer.json again"
            ),
        }
    }
}

impl std::error::Error for TokenizerFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Read(e) => Some(e),
            Self::Parse(e) => Some(e),
        }
    }
}
