//! Search rules: validation, weighted RRF fusion, distance filters,
//! grouping, scope matching, display paths and result shaping.

pub mod blind;
pub mod candidate;
pub mod display;
pub mod documents;
pub mod filter;
pub mod fusion;
pub mod glob;
pub mod scope;
pub mod shape;
pub mod validate;

pub use candidate::{Candidate, ChunkKey, DocumentHit};
pub use display::display_path;
pub use documents::fuse_documents;
pub use filter::{Filter, FilterError, FilterRequest, SourceFacts};
pub(crate) use fusion::document_ranking;
pub use fusion::{fuse, Fused, Grouping};
pub use scope::{is_under, Scope};
pub use shape::{Explain, ListRank, QueryResponse, ResultItem, SourceItem};
pub use validate::QueryError;
pub(crate) use validate::{candidate_window, clamp_top_k, validate_query};
