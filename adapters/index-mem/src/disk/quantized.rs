//! `vectors-<generation>.i8`: a large snapshot's int8 copy of its vectors,
//! written beside the f32 file by the compaction that writes that file, so
//! a cold open scans it at once instead of building it from the f32 rows.
//!
//! Layout: the codes (rows × dim i8, row-major), zeros up to a multiple of
//! 4 bytes, then one little-endian f32 scale per row; row r ≈ scale[r] ·
//! codes[r]. Its name, shape, length and CRC-32 are the snapshot's fifth
//! section.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use minirag_core::ports::IndexError;
use serde::{Deserialize, Serialize};

use super::errors::io;
use super::framing::{create_temporary, put_in_place, CrcWriter, Temporary};

/// Quantizes one f32 row into codes and returns its scale.
pub type Quantize<'q> = &'q (dyn Fn(&[f32], &mut [i8]) -> f32 + Sync);

/// The snapshot's record of its int8 file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuantizedFile {
    /// File name in the index folder.
    pub file: String,
    pub rows: u64,
    pub dim: u32,
    pub crc: u32,
    pub bytes: u64,
}

impl QuantizedFile {
    /// Where the scales start: after the codes, 4-byte aligned.
    pub fn scales_at(&self) -> u64 {
        (self.rows * u64::from(self.dim)).next_multiple_of(4)
    }

    /// The length a file of this shape has.
    pub fn expected_bytes(&self) -> u64 {
        self.scales_at() + 4 * self.rows
    }
}

/// Writes the int8 file row by row, beside the f32 file's own writing.
pub(crate) struct QuantizedWriter<'q> {
    path: PathBuf,
    tmp: Temporary,
    out: CrcWriter<BufWriter<File>>,
    quantize: Quantize<'q>,
    code: Vec<i8>,
    bytes: Vec<u8>,
    scales: Vec<f32>,
    dim: usize,
}

impl<'q> QuantizedWriter<'q> {
    pub(crate) fn create(
        path: PathBuf,
        dim: usize,
        quantize: Quantize<'q>,
    ) -> Result<Self, IndexError> {
        // Not `.tmp` alone: the f32 file of the same generation uses that.
        let tmp = path.with_extension("i8.tmp");
        let f = create_temporary(&tmp)?;
        Ok(Self {
            path,
            tmp: Temporary::new(tmp),
            out: CrcWriter::new(BufWriter::with_capacity(1 << 20, f)),
            quantize,
            code: vec![0; dim],
            bytes: vec![0; dim],
            scales: Vec::new(),
            dim,
        })
    }

    pub(crate) fn push(&mut self, row: &[f32]) -> Result<(), IndexError> {
        debug_assert_eq!(row.len(), self.dim);
        self.scales.push((self.quantize)(row, &mut self.code));
        for (b, &c) in self.bytes.iter_mut().zip(&self.code) {
            *b = c as u8;
        }
        self.out
            .write_all(&self.bytes)
            .map_err(|e| io(&self.tmp.path, "cannot write", e))
    }

    /// Writes the scales, fsyncs and renames the file into place.
    pub(crate) fn finish(mut self) -> Result<QuantizedFile, IndexError> {
        let mut record = QuantizedFile {
            file: file_name(&self.path),
            rows: self.scales.len() as u64,
            dim: self.dim as u32,
            crc: 0,
            bytes: 0,
        };
        let (_, codes) = self.out.sums();
        let padding = vec![0u8; (record.scales_at() - codes) as usize];
        let scales: Vec<u8> = self.scales.iter().flat_map(|s| s.to_le_bytes()).collect();
        let tmp = &self.tmp.path;
        self.out
            .write_all(&padding)
            .and_then(|()| self.out.write_all(&scales))
            .and_then(|()| self.out.flush())
            .map_err(|e| io(tmp, "cannot write", e))?;
        (record.crc, record.bytes) = self.out.sums();
        let f = self
            .out
            .into_inner()
            .into_inner()
            .map_err(|e| io(tmp, "cannot write", e.into_error()))?;
        put_in_place(f, tmp, &self.path)?;
        self.tmp.placed();
        Ok(record)
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
