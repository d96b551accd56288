//! Helpers shared by the index tests: the conformance suite's fixtures.
#![allow(unused_imports)]

pub(crate) use minirag_index_conformance::fixtures::*;
