//! Any bytes as an index folder's snapshot and log: opening returns an index
//! or a named error, never panics, and an opened index answers a search.
//! The first byte picks the shape: raw files, or files whose checksums hold
//! (so the decoders and the replay see the fuzzer's bytes, not only the
//! checksum check).
#![no_main]

use libfuzzer_sys::fuzz_target;
use minirag_core::ports::{Index, IndexView};
use minirag_core::search::Scope;

fn framed(magic: &[u8; 8], parts: &[&[u8]], wide: bool) -> Vec<u8> {
    let mut out = magic.to_vec();
    out.extend_from_slice(&1u64.to_le_bytes());
    for p in parts {
        if wide {
            out.extend_from_slice(&(p.len() as u64).to_le_bytes());
        } else {
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(&crc32fast::hash(p).to_le_bytes());
        out.extend_from_slice(p);
    }
    out
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&shape, rest)) = bytes.split_first() else {
        return;
    };
    // Raw shape: two length bytes, then the snapshot, then the log.
    let cut = match rest {
        [lo, hi, ..] => (usize::from(*lo) | usize::from(*hi) << 8).min(rest.len() - 2) + 2,
        _ => rest.len() / 2,
    };
    let (a, b) = rest.split_at(cut);
    let a = if shape % 3 == 0 && a.len() >= 2 { &a[2..] } else { a };
    let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
    let (meta, wal) = match shape % 3 {
        0 => (a.to_vec(), b.to_vec()),
        1 => {
            let half = a.len() / 2;
            (framed(b"MRSNAP03", &[&a[..half], &a[half..]], true), Vec::new())
        }
        _ => {
            let records: Vec<&[u8]> = b.chunks(32.max(b.len() / 4).max(1)).collect();
            (Vec::new(), framed(b"MRWAL002", &records, false))
        }
    };
    if !meta.is_empty() {
        std::fs::write(dir.path().join("snapshot.meta"), &meta).unwrap();
    }
    if !wal.is_empty() {
        std::fs::write(dir.path().join("wal.log"), &wal).unwrap();
    }
    if let Ok(index) = minirag_index_mem::MemIndex::open(dir.path()) {
        if let Ok(view) = index.read() {
            let _ = view.stats();
            let _ = view.keyword_search("alpha beta", 5, &Scope::all());
        }
    }
});
