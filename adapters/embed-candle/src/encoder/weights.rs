//! Model weights as flat f32 slices. From `model.safetensors` they are
//! borrowed straight from the memory map (no copy: loading is a header parse
//! and RSS grows only by the pages a forward pass touches); other dtypes and
//! `pytorch_model.bin` go through candle's `VarBuilder` and are converted.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors};

/// One weight tensor, row-major.
pub struct Param(Store);

enum Store {
    Owned(Vec<f32>),
    Mapped {
        map: Arc<Mmap>,
        start: usize,
        len: usize,
    },
}

impl Param {
    pub fn owned(data: Vec<f32>) -> Self {
        Self(Store::Owned(data))
    }

    pub fn data(&self) -> &[f32] {
        match &self.0 {
            Store::Owned(v) => v,
            Store::Mapped { map, start, len } => {
                let bytes = &map[*start..*start + *len * 4];
                // SAFETY: `open` admits a mapped tensor only when it is F32,
                // 4-byte aligned and in bounds, on a little-endian host (the
                // safetensors byte order); any bit pattern is a valid f32.
                unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<f32>(), *len) }
            }
        }
    }
}

impl Param {
    /// Drops this tensor's pages from the process's resident set, where it
    /// is borrowed from the map: they stay in the page cache, and the next
    /// read faults them back from it. For the word-embedding matrix, of
    /// which a batch reads only its tokens' rows: otherwise every row a
    /// sync ever read stays resident (up to 384 MB for a 250k vocabulary).
    pub fn release_pages(&self) {
        if let Store::Mapped { map, start, len } = &self.0 {
            use memmap2::UncheckedAdvice;
            // SAFETY: the map is a read-only shared mapping of a file we
            // never write, so dropped pages are read back unchanged; no
            // reference into it is turned invalid, only made to fault.
            let _ =
                unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, *start, *len * 4) };
        }
    }
}

struct Entry {
    shape: Vec<usize>,
    start: usize,
    len: usize,
}

/// The weight file of a model folder, with the name prefix its checkpoint
/// uses (`""`, `bert.` or `<model_type>.`).
pub struct WeightFile {
    path: PathBuf,
    map: Option<Arc<Mmap>>,
    /// Every tensor name of a safetensors file, whatever its dtype.
    names: HashSet<String>,
    /// The tensors that can be borrowed from the map as they are.
    direct: HashMap<String, Entry>,
    /// candle's converting loader: built only when a tensor needs it (always
    /// for `pytorch_model.bin`, never for an all-f32 safetensors file).
    converting: OnceCell<Result<VarBuilder<'static>, String>>,
    prefix: String,
}

impl WeightFile {
    /// Opens `model.safetensors`, or `pytorch_model.bin` when there is none.
    pub fn open(dir: &Path, model_type: Option<&str>) -> Result<Self, (PathBuf, String)> {
        let safetensors = dir.join("model.safetensors");
        let mut file = if safetensors.is_file() {
            let fail = |e: String| (safetensors.clone(), e);
            let opened = std::fs::File::open(&safetensors).map_err(|e| fail(e.to_string()))?;
            // SAFETY: mapped read-only; a concurrent writer of the model file is
            // outside what we support (the hub cache writes atomically).
            let map = Arc::new(unsafe { Mmap::map(&opened) }.map_err(|e| fail(e.to_string()))?);
            let (names, direct) = index(&map).map_err(fail)?;
            Self {
                path: safetensors.clone(),
                map: Some(map),
                names,
                direct,
                converting: OnceCell::new(),
                prefix: String::new(),
            }
        } else {
            let pth = dir.join("pytorch_model.bin");
            let vb = VarBuilder::from_pth(&pth, DType::F32, &Device::Cpu)
                .map_err(|e| (pth.clone(), e.to_string()))?;
            Self {
                path: pth,
                map: None,
                names: HashSet::new(),
                direct: HashMap::new(),
                converting: OnceCell::from(Ok(vb)),
                prefix: String::new(),
            }
        };
        let mut prefixes = vec![String::new(), "bert.".to_string()];
        if let Some(kind) = model_type {
            prefixes.push(format!("{kind}."));
        }
        let probe = "embeddings.word_embeddings.weight";
        file.prefix = prefixes
            .into_iter()
            .find(|p| file.contains(&format!("{p}{probe}")))
            .ok_or_else(|| {
                (
                    dir.to_path_buf(),
                    format!("no tensor named {probe} (nor bert.{probe}): not a BERT checkpoint"),
                )
            })?;
        Ok(file)
    }

    fn contains(&self, full: &str) -> bool {
        match (&self.map, self.converting.get()) {
            (Some(_), _) => self.names.contains(full),
            (None, Some(Ok(vb))) => vb.contains_tensor(full),
            (None, _) => false,
        }
    }

    fn converting(&self) -> Result<&VarBuilder<'static>, String> {
        self.converting
            .get_or_init(|| {
                // SAFETY: as for the map in `open`.
                unsafe {
                    VarBuilder::from_mmaped_safetensors(&[&self.path], DType::F32, &Device::Cpu)
                }
                .map_err(|e| format!("{}: {e}", self.path.display()))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The tensor `name` (without the checkpoint's prefix), checked against `shape`.
    pub fn get(&self, name: &str, shape: &[usize]) -> Result<Param, String> {
        let full = format!("{}{name}", self.prefix);
        if let (Some(map), Some(entry)) = (&self.map, self.direct.get(&full)) {
            if entry.shape != shape {
                return Err(format!(
                    "tensor {full} has shape {:?}, expected {shape:?}",
                    entry.shape
                ));
            }
            return Ok(Param(Store::Mapped {
                map: Arc::clone(map),
                start: entry.start,
                len: entry.len,
            }));
        }
        let tensor = self
            .converting()?
            .get(shape, &full)
            .map_err(|e| format!("tensor {full}: {e}"))?;
        let data = tensor
            .flatten_all()
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| format!("tensor {full}: {e}"))?;
        Ok(Param::owned(data))
    }
}

/// Every tensor name of the file, and those that can be borrowed as f32 in place.
fn index(map: &Mmap) -> Result<(HashSet<String>, HashMap<String, Entry>), String> {
    let tensors = SafeTensors::deserialize(map).map_err(|e| e.to_string())?;
    let base = map.as_ptr() as usize;
    let names = tensors.names().into_iter().map(str::to_string).collect();
    let mut out = HashMap::new();
    if cfg!(target_endian = "big") {
        return Ok((names, out));
    }
    for (name, view) in tensors.iter() {
        let data = view.data();
        let start = data.as_ptr() as usize - base;
        if view.dtype() == Dtype::F32 && start.is_multiple_of(4) && data.len().is_multiple_of(4) {
            out.insert(
                name.to_string(),
                Entry {
                    shape: view.shape().to_vec(),
                    start,
                    len: data.len() / 4,
                },
            );
        }
    }
    Ok((names, out))
}
