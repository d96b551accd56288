//! The contract of the `Index` port, run on every adapter: each adapter's
//! test file implements [`Subject`] and calls [`run_all`] (or the single
//! checks), so a second adapter is held to exactly what the first passes.

#![forbid(unsafe_code)]

mod contract;
pub mod fixtures;
mod model;
pub mod synthetic;

use minirag_core::ports::Index;

pub use contract::*;
pub use model::answers_like_a_brute_force_model;

/// An adapter under test: where an index lives, and how to open it.
pub trait Subject {
    /// A place for one index (a folder, a database schema).
    type Store;
    /// The index under test.
    type Index: Index;
    /// A new, empty place.
    fn fresh(&self) -> Self::Store;
    /// Opens the index at `store`, as a new process would.
    fn open(&self, store: &Self::Store) -> Self::Index;
    /// Compacts, for an adapter that has such a step.
    fn compact(&self, _index: &Self::Index) {}
}

/// Every check, with `cases` cases for the model-based one.
pub fn run_all<S: Subject>(subject: &S, cases: u32) {
    writes_survive_reopen_and_replace_shrinks(subject);
    locations_come_back_as_written(subject);
    another_handle_sees_writes(subject);
    a_read_view_is_a_snapshot(subject);
    a_width_clash_is_refused_and_another_model_switches_the_index(subject);
    scope_applies_before_the_cut(subject);
    a_filter_applies_before_the_cut(subject);
    vectorless_sources_are_counted_and_get_vectors_later(subject);
    vectors_arrive_in_batches_each_durable(subject);
    a_document_scores_as_its_chunks_together(subject);
    a_source_of_many_chunks_scores_as_one_document(subject);
    a_document_that_repeats_the_term_across_sections_ranks_first(subject);
    answers_like_a_brute_force_model(subject, cases);
}
