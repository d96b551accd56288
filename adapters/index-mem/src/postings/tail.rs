//! A list's newest bytes: room that never moves, shared by every copy of
//! the list, appended to past the bytes any copy holds.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU16, Ordering};

/// Tail bytes kept inside the list itself: a short list takes no block of
/// its own.
pub(super) const INLINE: usize = 16;

/// Room for a list's newest bytes that never moves, so one copy of the
/// list writes past the bytes the others hold while they read them.
/// `claimed` is how far any copy has written: a copy appends only where
/// its own bytes end there, so no byte a copy holds is written again.
pub(super) struct Tail {
    inline: [UnsafeCell<u8>; INLINE],
    /// The room when more than [`INLINE`] bytes are wanted (the inline
    /// cells then unused); empty otherwise.
    heap: Box<[UnsafeCell<u8>]>,
    claimed: AtomicU16,
}

// SAFETY: the cells are written only by `Tail::append`, and only past
// `claimed`, which it moves forward atomically before writing: no two
// threads write one byte, and no byte a copy of the list holds (below its
// `tail`, at most `claimed`) is written while it may be read. A copy's bytes
// reach another thread with the copy (the generation it is in is published
// with release, taken with acquire), so the reader sees them written.
unsafe impl Sync for Tail {}

impl Tail {
    /// A tail holding `bytes`, with room for `cap` in all.
    pub(super) fn with(bytes: &[u8], cap: usize) -> Self {
        let heap = if cap > INLINE {
            (0..cap).map(|_| UnsafeCell::new(0)).collect()
        } else {
            Box::default()
        };
        let tail = Self {
            inline: std::array::from_fn(|_| UnsafeCell::new(0)),
            heap,
            claimed: AtomicU16::new(0),
        };
        let appended = tail.append(0, bytes);
        debug_assert!(appended, "room for the bytes");
        tail
    }

    /// Forgets what was written past the first `n` bytes: for the only
    /// copy of the list, to which they belong to no one.
    pub(super) fn forget_past(&mut self, n: u16) {
        *self.claimed.get_mut() = n;
    }

    /// Whether the tail has room of its own, past the inline bytes.
    #[cfg(test)]
    pub(super) fn spilled(&self) -> bool {
        !self.heap.is_empty()
    }

    fn cells(&self) -> &[UnsafeCell<u8>] {
        if self.heap.is_empty() {
            &self.inline
        } else {
            &self.heap
        }
    }

    pub(super) fn cap(&self) -> usize {
        self.cells().len()
    }

    /// Where the byte after the first `n` is, for a prefetch.
    pub(super) fn end(&self, n: u16) -> *const u8 {
        self.cells().as_ptr().cast::<u8>().wrapping_add(n as usize)
    }

    /// The first `n` bytes, for a copy of the list that holds `n`.
    pub(super) fn bytes(&self, n: u16) -> &[u8] {
        let cells = &self.cells()[..n as usize];
        // SAFETY: `UnsafeCell<u8>` has the layout of `u8`. These bytes were
        // written before the copy that holds them was made (see `Sync`
        // above), and `append` writes only past `claimed`, at least `n`: no
        // one writes them while this borrow lives.
        unsafe { std::slice::from_raw_parts(cells.as_ptr().cast::<u8>(), cells.len()) }
    }

    /// Writes `bytes` after the first `at`, if no copy has written past
    /// `at` and there is room; false otherwise (the caller copies).
    pub(super) fn append(&self, at: u16, bytes: &[u8]) -> bool {
        let end = at as usize + bytes.len();
        let cells = self.cells();
        if end > cells.len()
            || self
                .claimed
                .compare_exchange(at, end as u16, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        let to = cells[at as usize..end].as_ptr().cast_mut().cast::<u8>();
        // SAFETY: the cells `at..end` are in bounds and were claimed by this
        // call alone (`claimed` only moves forward while the tail is
        // shared); no copy of the list holds bytes past `at` to read them.
        // Writing through a shared `UnsafeCell` is what it permits.
        unsafe { to.copy_from_nonoverlapping(bytes.as_ptr(), bytes.len()) };
        true
    }
}
