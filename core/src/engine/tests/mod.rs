//! The engine's use cases over the fakes of [`crate::testing::fakes`], one
//! file per use case. The shared fixture lives here.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use super::*;
use crate::error::EngineError;
use crate::ports::*;
use crate::search::*;
use crate::testing::fakes::*;
use crate::testing::fixture::{fixture, fixture_with, Fixture};
use crate::CHUNK_SCHEME;

mod ingest;
mod query;
mod read;
mod sync;

fn query<'a>(q: &'a str, k: i64, scope: &'a [String]) -> QueryRequest<'a> {
    QueryRequest {
        query: q,
        top_k: k,
        scope,
        filter: Default::default(),
        explain: false,
    }
}

const GUIDE: &str =
    "# Setup Guide\n\nInstall the package with apt. Then restart the service.\n\n## Errors\n\n\
    The error ERR_CONN_RESET means the server closed the socket. Retry after a pause.\n\n\
    Other errors are logged. Check the log file for details.";
