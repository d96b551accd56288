//! How many threads one vector scan takes: every core (at most 8) when it
//! runs alone, fewer when other scans run beside it. Concurrent queries
//! that each split their scan only multiply threads past the cores, where
//! the extra ones take the CPU from the other queries and from a writer.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Scans running in this process.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// A scan's share of the cores, held while it runs.
pub(super) struct ScanThreads {
    pub(super) threads: u32,
}

impl ScanThreads {
    pub(super) fn take() -> Self {
        let others = IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        Self {
            threads: cores.saturating_sub(others).max(1) as u32,
        }
    }
}

impl Drop for ScanThreads {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_beside_others_takes_fewer_threads() {
        let alone = ScanThreads::take();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        assert!(alone.threads >= 1 && alone.threads as usize <= cores);
        // With as many scans beside it as cores (other tests' scans only
        // add to them), the last one takes a single thread.
        let beside: Vec<ScanThreads> = (0..cores).map(|_| ScanThreads::take()).collect();
        assert_eq!(
            beside.last().unwrap().threads,
            1,
            "past the cores: one each"
        );
    }
}
