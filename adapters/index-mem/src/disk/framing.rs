//! Records as `[len][crc][payload]`, checksummed ranges, and files
//! written through a temporary file, fsynced and renamed.

use std::fs::{self, File};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use minirag_core::ports::IndexError;

use super::codec::erased;
use super::errors::{io, storage, storage_by};
use super::faults::{self, FSYNC, RENAME, WRITE};

/// The CRC-32 of `len` bytes of `file` from `start`, read through `buf`;
/// a range no longer than `buf` is left in it whole.
pub(crate) fn crc_of_range(
    file: &File,
    start: u64,
    len: u64,
    buf: &mut [u8],
) -> std::io::Result<u32> {
    use std::os::unix::fs::FileExt;
    let mut hasher = crc32fast::Hasher::new();
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        file.read_exact_at(&mut buf[..n], start + done)?;
        hasher.update(&buf[..n]);
        done += n as u64;
    }
    Ok(hasher.finalize())
}

/// Counts and checksums what passes through, so a record's length and
/// CRC are known without holding its bytes.
pub(crate) struct CrcWriter<W: Write> {
    inner: W,
    crc: crc32fast::Hasher,
    len: u64,
}

impl<W: Write> CrcWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        Self {
            inner,
            crc: crc32fast::Hasher::new(),
            len: 0,
        }
    }

    /// The writer underneath.
    pub(crate) fn into_inner(self) -> W {
        self.inner
    }

    /// The CRC-32 and length of what has passed through so far.
    pub(crate) fn sums(&self) -> (u32, u64) {
        (self.crc.clone().finalize(), self.len)
    }
}

impl<W: Write> Write for CrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Streams `value` into `f` at its current end as `[len][crc][payload]`
/// (`len` as u32 or u64 bytes): a placeholder header first, patched once the
/// payload is written, so no copy of the payload is held in memory. A write
/// cut short leaves a header that does not match, which readers treat as a
/// torn tail.
pub(crate) fn stream_record(
    f: &mut File,
    path: &Path,
    value: &dyn erased::Encode,
    wide_len: bool,
) -> Result<u64, IndexError> {
    stream_section(f, path, wide_len, &mut |w| {
        value
            .encode_into(w)
            .map(drop)
            .map_err(|e| storage_by(path, "cannot encode a record for", e))
    })
}

/// [`stream_record`] for a payload `write` puts out itself.
pub(crate) fn stream_section(
    f: &mut File,
    path: &Path,
    wide_len: bool,
    write: &mut dyn FnMut(&mut dyn Write) -> Result<(), IndexError>,
) -> Result<u64, IndexError> {
    let start = f
        .stream_position()
        .map_err(|e| io(path, "cannot seek in", e))?;
    let head_len = if wide_len { 12 } else { 8 };
    faults::check(WRITE)
        .and_then(|()| f.write_all(&[0u8; 12][..head_len]))
        .map_err(|e| io(path, "cannot write", e))?;
    // The checksum under the buffer: the encoder's writes are a few bytes
    // each, and the CRC runs fast only over long slices.
    let mut w = std::io::BufWriter::with_capacity(1 << 16, CrcWriter::new(&mut *f));
    write(&mut w)?;
    let w = w
        .into_inner()
        .map_err(|e| io(path, "cannot write", e.into_error()))?;
    let (crc, len) = w.sums();
    let mut head = Vec::with_capacity(head_len);
    if wide_len {
        head.extend_from_slice(&len.to_le_bytes());
    } else {
        let len = u32::try_from(len).map_err(|_| {
            storage(
                path,
                "cannot hold a record of",
                format!("{len} bytes (over 4 GiB)"),
            )
        })?;
        head.extend_from_slice(&len.to_le_bytes());
    }
    head.extend_from_slice(&crc.to_le_bytes());
    f.seek(SeekFrom::Start(start))
        .map_err(|e| io(path, "cannot seek in", e))?;
    faults::check(WRITE)
        .and_then(|()| f.write_all(&head))
        .map_err(|e| io(path, "cannot write", e))?;
    let end = start + head_len as u64 + len;
    f.seek(SeekFrom::Start(end))
        .map_err(|e| io(path, "cannot seek in", e))?;
    Ok(end)
}

pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// CRC-32 of the first `len` bytes of a file, read in 1 MiB blocks.
pub fn file_crc(path: &Path, len: u64) -> std::io::Result<u32> {
    crc_of_range(&File::open(path)?, 0, len, &mut vec![0u8; 1 << 20])
}

/// Writes a file through a temporary one (named to `write` for its errors)
/// that is fsynced and renamed.
pub(crate) fn write_atomic_with<T>(
    path: &Path,
    write: impl FnOnce(&mut File, &Path) -> Result<T, IndexError>,
) -> Result<T, IndexError> {
    let mut tmp = Temporary::new(path.with_extension("tmp"));
    let mut f = create_temporary(&tmp.path)?;
    let out = write(&mut f, &tmp.path)?;
    put_in_place(f, &tmp.path, path)?;
    tmp.placed();
    Ok(out)
}

/// A temporary file, removed when dropped unless [`Temporary::placed`]:
/// a write that fails part-way (a full disk) leaves nothing behind.
pub(crate) struct Temporary {
    pub(crate) path: std::path::PathBuf,
    placed: bool,
}

impl Temporary {
    pub(crate) fn new(path: std::path::PathBuf) -> Self {
        Self {
            path,
            placed: false,
        }
    }

    /// The file was renamed into place: nothing to remove.
    pub(crate) fn placed(&mut self) {
        self.placed = true;
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.placed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Removes temporaries a write that was killed left behind, for a caller
/// that holds the write lock (no other write is under way).
pub(crate) fn remove_temporaries(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().ends_with(".tmp") {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Creates the temporary file `tmp`, to be put in place later.
pub(crate) fn create_temporary(tmp: &Path) -> Result<File, IndexError> {
    faults::check(WRITE)
        .and_then(|()| File::create(tmp))
        .map_err(|e| io(tmp, "cannot create", e))
}

/// Fsyncs a written temporary file and renames it to `path`.
pub(crate) fn put_in_place(f: File, tmp: &Path, path: &Path) -> Result<(), IndexError> {
    faults::check(FSYNC)
        .and_then(|()| f.sync_all())
        .map_err(|e| io(tmp, "cannot fsync", e))?;
    faults::check(RENAME)
        .and_then(|()| fs::rename(tmp, path))
        .map_err(|e| io(path, "cannot rename into", e))
}

pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), IndexError> {
    write_atomic_with(path, |f, tmp| {
        f.write_all(bytes).map_err(|e| io(tmp, "cannot write", e))
    })
}
