//! Fetching ahead what a write to a list reads first: the list's counts
//! (an `Arc`'s, which a copy of the list increments with a locked
//! instruction that waits for a cache miss before it, and no later work
//! overlaps) and the bytes an append writes, where a prefetch is waited for
//! by nothing.

use std::sync::Arc;

use super::{Many, Postings};

/// Asks the CPU to bring the cache line at `p` closer: a hint that reads
/// nothing the program sees, so later work on the line does not wait for
/// memory, and a locked instruction (an `Arc`'s count) does not wait for a
/// prefetch, as it would for a load.
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is never a memory access the program observes and
    // cannot fault, whatever the address; SSE is in every x86-64 CPU.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Bytes an `Arc` keeps its counts in, before its value (two words).
const ARC_COUNTS: usize = 2 * std::mem::size_of::<usize>();

impl Postings {
    /// Fetches ahead the lines [`Postings::add`] reaches first: a list's
    /// counts and fields (the `Arc` it is behind).
    pub(crate) fn prefetch_list(&self) {
        if let Postings::Many { list, .. } = self {
            let at = Arc::as_ptr(list).cast::<u8>().wrapping_sub(ARC_COUNTS);
            prefetch(at);
            prefetch(at.wrapping_add(ARC_COUNTS + std::mem::size_of::<Many>() - 1));
        }
    }

    /// Fetches ahead a list's counts, which a copy of it (a clone of the
    /// `Arc`) increments and a drop decrements.
    pub(crate) fn prefetch_count(&self) {
        if let Postings::Many { list, .. } = self {
            prefetch(Arc::as_ptr(list).cast::<u8>().wrapping_sub(ARC_COUNTS));
        }
    }

    /// Fetches ahead the line of a list's tail an append writes (the
    /// list itself must be in cache, or this waits for it).
    pub(crate) fn prefetch_tail(&self) {
        if let Postings::Many { list, tail, .. } = self {
            prefetch(list.tail.end(*tail));
        }
    }
}
