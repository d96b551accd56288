//! Model weights as flat f32 slices. From `model.safetensors` they are
//! borrowed straight from the memory map (no copy: loading is a header parse
//! and RSS grows only by the pages a forward pass touches); other dtypes and
//! `pytorch_model.bin` go through candle's `VarBuilder` and are converted.

use std::collections::HashMap;
use std::path::Path;
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

struct Entry {
    shape: Vec<usize>,
    start: usize,
    len: usize,
}

/// The weight file(s) of a model folder, with the name prefix its
/// checkpoint uses (`""`, `bert.` or `<model_type>.`).
pub struct WeightFile {
    map: Option<Arc<Mmap>>,
    direct: HashMap<String, Entry>,
    vb: VarBuilder<'static>,
    prefix: String,
}

impl WeightFile {
    /// Opens `model.safetensors`, or `pytorch_model.bin` when there is none.
    pub fn open(
        dir: &Path,
        model_type: Option<&str>,
    ) -> Result<Self, (std::path::PathBuf, String)> {
        let device = Device::Cpu;
        let safetensors = dir.join("model.safetensors");
        let (map, direct, vb) = if safetensors.is_file() {
            let file = std::fs::File::open(&safetensors)
                .map_err(|e| (safetensors.clone(), e.to_string()))?;
            // SAFETY: mapped read-only; a concurrent writer of the model file is
            // outside what we support (the hub cache writes atomically).
            let map = Arc::new(
                unsafe { Mmap::map(&file) }.map_err(|e| (safetensors.clone(), e.to_string()))?,
            );
            let direct = index_f32(&map).map_err(|e| (safetensors.clone(), e))?;
            // SAFETY: as above.
            let vb = unsafe {
                VarBuilder::from_mmaped_safetensors(&[&safetensors], DType::F32, &device)
            }
            .map_err(|e| (safetensors.clone(), e.to_string()))?;
            (Some(map), direct, vb)
        } else {
            let pth = dir.join("pytorch_model.bin");
            let vb = VarBuilder::from_pth(&pth, DType::F32, &device)
                .map_err(|e| (pth.clone(), e.to_string()))?;
            (None, HashMap::new(), vb)
        };
        let mut file = Self {
            map,
            direct,
            vb,
            prefix: String::new(),
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
        self.direct.contains_key(full) || self.vb.contains_tensor(full)
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
            .vb
            .get(shape, &full)
            .map_err(|e| format!("tensor {full}: {e}"))?;
        let data = tensor
            .flatten_all()
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| format!("tensor {full}: {e}"))?;
        Ok(Param::owned(data))
    }
}

/// Every tensor of the file that can be borrowed as f32 in place.
fn index_f32(map: &Mmap) -> Result<HashMap<String, Entry>, String> {
    let tensors = SafeTensors::deserialize(map).map_err(|e| e.to_string())?;
    let base = map.as_ptr() as usize;
    let mut out = HashMap::new();
    if cfg!(target_endian = "big") {
        return Ok(out);
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
    Ok(out)
}
