//! Embedder throughput on real chunks, side by side in one run: ours in
//! fp32 and in int8, and — when the ONNX Runtime baseline is set up (`bash
//! ../shared/tools/ort-baseline/setup.sh`) and the model is its
//! all-MiniLM-L6-v2 — ONNX Runtime fp32 and int8 on the same file. Rounds
//! alternate engine by engine, so a noisy machine slows all alike; each
//! rate is also given as a fraction of the machine's f32 matmul peak,
//! measured with candle in the same run. Then int8's cosines against our
//! fp32, on these chunks and the model's reference texts, beside ONNX
//! Runtime int8's. `eval/as-cpu.sh avx-vnni|avx2` in front of the command
//! runs every engine in it as on a CPU without AVX-512 (or VNNI).
//!
//! cargo run --release -p minirag-embed-candle --example embed_bench -- [--texts FILE]
//!     [--model DIR] [--batch-tokens N] [--runs N] [--ort-venv DIR (default /tmp/ort-baseline)]
//!     [--int8-parts qkv,out,up,down] [--f32-layers 0,11] [--a8-parts up,down] [--a12-layers 0]

use std::path::PathBuf;
use std::time::Instant;

use candle_core::{Device, Tensor};
use minirag_core::ports::Embedder;
use minirag_embed_candle::encoder::int8::ActivationBits;
use minirag_embed_candle::encoder::Dense;
use minirag_embed_candle::{CandleEmbedder, Precision};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// GFLOP/s of a plain f32 matmul shaped like the model's feed-forward layer:
/// the best of five trials, since a noisy machine only ever slows it down.
fn matmul_peak() -> f64 {
    let dev = Device::Cpu;
    let a = Tensor::randn(0f32, 1.0, (2048, 384), &dev).unwrap();
    let b = Tensor::randn(0f32, 1.0, (384, 1536), &dev).unwrap();
    let _ = a.matmul(&b).unwrap();
    let reps = 20;
    let flops = 2.0 * 2048.0 * 384.0 * 1536.0 * reps as f64;
    (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                let _ = a.matmul(&b).unwrap();
            }
            flops / t.elapsed().as_secs_f64() / 1e9
        })
        .fold(0.0, f64::max)
}

/// Forward FLOPs of a BERT encoder for sequences of these lengths.
fn model_flops(lengths: &[usize], layers: f64, hidden: f64, inter: f64) -> f64 {
    lengths
        .iter()
        .map(|&l| {
            let l = l as f64;
            layers
                * (2.0 * l * (4.0 * hidden * hidden + 2.0 * hidden * inter) + 4.0 * l * l * hidden)
        })
        .sum()
}

/// Model shape from `config.json`, for the FLOP count.
fn shape(dir: &std::path::Path) -> (f64, f64, f64) {
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("config.json")).expect("config.json"))
            .expect("config.json is JSON");
    let get = |k: &str| config[k].as_f64().expect(k);
    (
        get("num_hidden_layers"),
        get("hidden_size"),
        get("intermediate_size"),
    )
}

/// `--NAME qkv,out,...` as dense parts (`default` when absent).
fn parts_arg(name: &str, default: &str) -> Vec<Dense> {
    arg(name)
        .unwrap_or_else(|| default.into())
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.trim() {
            "qkv" => Dense::Qkv,
            "out" => Dense::Out,
            "up" => Dense::Up,
            "down" => Dense::Down,
            other => panic!("{name}: unknown part {other} (qkv, out, up, down)"),
        })
        .collect()
}

/// The int8 layer choice: `--int8-parts` (default all four) outside the
/// `--f32-layers`, with eight-bit inputs for the `--a8-parts` (default
/// none) outside the `--a12-layers`; without any of them, the product's own
/// choice.
fn int8_choice(layers: usize) -> Option<(String, impl Fn(usize, Dense) -> Option<ActivationBits>)> {
    let flags = ["--int8-parts", "--f32-layers", "--a8-parts", "--a12-layers"];
    if flags.iter().all(|f| arg(f).is_none()) {
        return None;
    }
    let parts = parts_arg("--int8-parts", "qkv,out,up,down");
    let eight = parts_arg("--a8-parts", "");
    let layer_list = |name: &str| -> Vec<usize> {
        arg(name)
            .map(|l| {
                l.split(',')
                    .filter(|s| !s.is_empty())
                    .map(|n| n.trim().parse().expect("layer numbers"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let kept = layer_list("--f32-layers");
    let wide = layer_list("--a12-layers");
    let label = format!(
        "parts {parts:?}, f32 layers {kept:?} of {layers}, 8-bit inputs {eight:?} outside layers {wide:?}"
    );
    Some((label, move |n, which| {
        (parts.contains(&which) && !kept.contains(&n)).then(|| {
            if eight.contains(&which) && !wide.contains(&n) {
                ActivationBits::Eight
            } else {
                ActivationBits::Twelve
            }
        })
    }))
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let texts_path = arg("--texts")
        .map(PathBuf::from)
        .unwrap_or(root.join("shared/tools/ort-baseline/chunks-2000.json"));
    let default_model = root.join("shared/models/all-MiniLM-L6-v2");
    let model_dir = arg("--model")
        .map(PathBuf::from)
        .unwrap_or(default_model.clone());
    let is_minilm =
        std::fs::canonicalize(&model_dir).ok() == std::fs::canonicalize(&default_model).ok();
    let batch: usize = arg("--batch-tokens")
        .and_then(|b| b.parse().ok())
        .unwrap_or(minirag_embed_candle::model::DEFAULT_BATCH_TOKENS);
    let runs: usize = arg("--runs").and_then(|b| b.parse().ok()).unwrap_or(3);
    let (layers, hidden, inter) = shape(&model_dir);

    let texts: Vec<String> =
        serde_json::from_slice(&std::fs::read(&texts_path).expect("texts file"))
            .expect("JSON list of strings");
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();

    let t = Instant::now();
    let fp32 = CandleEmbedder::load("bench", &model_dir)
        .expect("model")
        .with_batch_tokens(batch);
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let loaded = CandleEmbedder::load("bench", &model_dir)
        .expect("model")
        .with_batch_tokens(batch);
    let (choice, int8) = match int8_choice(layers as usize) {
        Some((label, choose)) => (label, loaded.with_int8_layers("+int8a8", choose)),
        None => (
            "the product's".to_string(),
            loaded.with_precision(Precision::Int8),
        ),
    };
    let int8_load_ms = t.elapsed().as_secs_f64() * 1e3;
    let lengths: Vec<usize> = fp32
        .embedded_ids(&refs)
        .unwrap()
        .iter()
        .map(Vec::len)
        .collect();
    let tokens: usize = lengths.iter().sum();
    let flops = model_flops(&lengths, layers, hidden, inter);

    let ort_fp32 = is_minilm
        .then(|| OrtBaseline::find(&root, &texts_path, "minilm_fp32.onnx"))
        .flatten();
    let ort_int8 = is_minilm
        .then(|| OrtBaseline::find(&root, &texts_path, "minilm_int8.onnx"))
        .flatten();
    fp32.embed_documents(&refs[..32.min(refs.len())]).unwrap();
    int8.embed_documents(&refs[..32.min(refs.len())]).unwrap();
    use minirag_embed_candle::encoder::int8::{pin_kernel, Kernel};
    let kernels = Kernel::available();
    let names = [
        "ours int8",
        "ours fp32",
        "ONNX Runtime fp32",
        "ONNX Runtime int8",
        "ours int8, AVX2 kernel",
    ];
    // Where the CPU has a faster int8 kernel than AVX2's, that one runs
    // "ours int8" and the AVX2 kernel runs beside it.
    #[cfg(target_arch = "x86_64")]
    let avx2_beside = kernels.last() != Some(&Kernel::Avx2) && kernels.contains(&Kernel::Avx2);
    #[cfg(not(target_arch = "x86_64"))]
    let avx2_beside = false;
    println!("int8 kernel: {:?}", Kernel::best());
    let mut rates: [Vec<f64>; 5] = Default::default();
    let mut vectors = (Vec::new(), Vec::new());
    for _ in 0..runs {
        for (e, (model, slot)) in [(&int8, &mut vectors.0), (&fp32, &mut vectors.1)]
            .into_iter()
            .enumerate()
        {
            let t = Instant::now();
            let out = model.embed_documents(&refs).unwrap();
            rates[e].push(refs.len() as f64 / t.elapsed().as_secs_f64());
            *slot = out.data;
        }
        for (e, ort) in [(2, &ort_fp32), (3, &ort_int8)] {
            if let Some(ort) = ort {
                rates[e].push(ort.chunks_per_s(None));
            }
        }
        #[cfg(target_arch = "x86_64")]
        if avx2_beside {
            pin_kernel(Some(Kernel::Avx2));
            let t = Instant::now();
            int8.embed_documents(&refs).unwrap();
            rates[4].push(refs.len() as f64 / t.elapsed().as_secs_f64());
            pin_kernel(None);
        }
    }
    let per_chunk_flops = flops / refs.len() as f64;
    let peak = matmul_peak();

    println!("| metric | value |\n|---|---|");
    println!(
        "| cores | {} |",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| CPU flags | {} |", cpu_flags());
    println!(
        "| model | {} ({layers} layers, hidden {hidden}) |",
        model_dir.display()
    );
    println!(
        "| model load (mmap) | fp32 {load_ms:.0} ms, int8 {int8_load_ms:.0} ms (quantizing) |"
    );
    println!("| int8 layers | {choice} |");
    println!(
        "| chunks | {} ({} tokens, batches of ≤ {batch} tokens, sorted, no padding) |",
        refs.len(),
        tokens
    );
    println!("| f32 matmul peak GFLOP/s | {peak:.1} |");
    for (name, r) in names.iter().zip(rates.iter_mut()) {
        if r.is_empty() {
            continue;
        }
        let shown: Vec<String> = r.iter().map(|v| format!("{v:.1}")).collect();
        let m = median_of(r);
        println!(
            "| {name} chunks/s | {m:.1} (rounds {}), {:.2}× the f32 peak |",
            shown.join(", "),
            m * per_chunk_flops / 1e9 / peak
        );
    }
    let round_ratio = |a: usize, b: usize| -> Option<f64> {
        let mut r: Vec<f64> = rates[a].iter().zip(&rates[b]).map(|(x, y)| x / y).collect();
        (!r.is_empty()).then(|| median_of(&mut r))
    };
    if let Some(r) = round_ratio(0, 1) {
        println!("| ours int8 / ours fp32 | {r:.2}× (median of round ratios) |");
    }
    if let Some(r) = round_ratio(0, 3) {
        println!("| ours int8 / ONNX Runtime int8 | {r:.2}× |");
    }
    if let Some(r) = round_ratio(0, 4) {
        println!("| ours int8 / the same with the AVX2 kernel | {r:.2}× |");
    }
    if let Some(r) = round_ratio(4, 1) {
        println!("| ours int8 (AVX2 kernel) / ours fp32 | {r:.2}× |");
    }
    if let Some(r) = round_ratio(1, 2) {
        println!("| ours fp32 / ONNX Runtime fp32 | {r:.2}× |");
    }
    println!("| peak RSS (both models) | {:.0} MB |", peak_rss_mb());

    let dim = fp32.dimension();
    let (int8_v, fp32_v) = vectors;
    println!(
        "| ours int8 vs ours fp32, these chunks | {} |",
        cosine_summary(&int8_v, &fp32_v, dim)
    );
    // The model's own reference texts, else all-MiniLM-L6-v2's (the same
    // 30 texts serve any model: only our two precisions are compared).
    let ref_file = [&model_dir, &default_model]
        .map(|d| d.join("reference-embeddings.jsonl"))
        .into_iter()
        .find(|f| f.exists())
        .unwrap_or_default();
    let ref_texts: Vec<String> = std::fs::read_to_string(&ref_file)
        .map(|raw| {
            raw.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter_map(|v| v["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if !ref_texts.is_empty() {
        let r: Vec<&str> = ref_texts.iter().map(String::as_str).collect();
        let a = int8.embed_documents(&r).unwrap().data;
        let b = fp32.embed_documents(&r).unwrap().data;
        println!(
            "| ours int8 vs ours fp32, {} reference texts | {} |",
            r.len(),
            cosine_summary(&a, &b, dim)
        );
    }
    if let Some(ort) = &ort_int8 {
        let npy =
            std::env::temp_dir().join(format!("embed_bench_ort_int8_{}.npy", std::process::id()));
        ort.chunks_per_s(Some(&npy));
        let theirs = read_npy_f32(&npy);
        let _ = std::fs::remove_file(&npy);
        println!(
            "| ONNX Runtime int8 vs ours fp32, these chunks | {} |",
            cosine_summary(&theirs, &fp32_v, dim)
        );
    }
}

/// The CPU's SIMD flags that decide which kernels run.
fn cpu_flags() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        let mut on = Vec::new();
        macro_rules! probe {
            ($($f:tt),*) => {$(
                if std::is_x86_feature_detected!($f) { on.push($f); }
            )*};
        }
        probe!("avx2", "fma", "avx512f", "avx512vnni", "avxvnni");
        on.join(" ")
    }
    #[cfg(not(target_arch = "x86_64"))]
    String::from("not x86-64")
}

/// Median and minimum cosine between matching rows of `a` and `b`.
fn cosine_summary(a: &[f32], b: &[f32], dim: usize) -> String {
    let mut cos: Vec<f64> = a
        .chunks_exact(dim)
        .zip(b.chunks_exact(dim))
        .map(|(x, y)| {
            let dot: f64 = x.iter().zip(y).map(|(p, q)| *p as f64 * *q as f64).sum();
            let nx: f64 = x.iter().map(|p| (*p as f64).powi(2)).sum::<f64>().sqrt();
            let ny: f64 = y.iter().map(|q| (*q as f64).powi(2)).sum::<f64>().sqrt();
            dot / (nx * ny).max(1e-12)
        })
        .collect();
    cos.sort_by(f64::total_cmp);
    format!(
        "cosine median {:.4}, min {:.4}, 1st percentile {:.4} (n = {})",
        cos[cos.len() / 2],
        cos[0],
        cos[cos.len() / 100],
        cos.len()
    )
}

/// A little-endian f32 `.npy` array's values (version 1 or 2 header).
fn read_npy_f32(path: &std::path::Path) -> Vec<f32> {
    let raw = std::fs::read(path).expect("the .npy ONNX Runtime wrote");
    assert_eq!(&raw[..6], b"\x93NUMPY", "an .npy file");
    let (len, start) = if raw[6] == 1 {
        (u16::from_le_bytes([raw[8], raw[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes([raw[8], raw[9], raw[10], raw[11]]) as usize,
            12,
        )
    };
    let header = String::from_utf8_lossy(&raw[start..start + len]);
    assert!(header.contains("'<f4'"), "f32 little-endian: {header}");
    raw[start + len..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn median_of(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The ONNX Runtime baseline of `shared/tools/ort-baseline`, run as a
/// subprocess on the same texts.
struct OrtBaseline {
    python: PathBuf,
    script: PathBuf,
    model: PathBuf,
    texts: PathBuf,
}

impl OrtBaseline {
    fn find(root: &std::path::Path, texts: &std::path::Path, model: &str) -> Option<Self> {
        let venv = PathBuf::from(arg("--ort-venv").unwrap_or_else(|| "/tmp/ort-baseline".into()));
        let found = Self {
            python: venv.join("bin/python"),
            script: root.join("shared/tools/ort-baseline/bench.py"),
            model: venv.join(model),
            texts: texts.to_path_buf(),
        };
        (found.python.is_file() && found.model.is_file() && found.script.is_file()).then_some(found)
    }

    /// One timed ONNX Runtime pass (sorted batches of 16, all cores),
    /// saving its vectors to `out` when given.
    fn chunks_per_s(&self, out: Option<&std::path::Path>) -> f64 {
        let mut command = std::process::Command::new(&self.python);
        command.arg(&self.script);
        if let Some(path) = out {
            command.arg("--out").arg(path);
        }
        let out = command
            .args(["--model".as_ref(), self.model.as_os_str()])
            .args(["--texts".as_ref(), self.texts.as_os_str()])
            .args(["--sort", "--runs", "1"])
            .output()
            .expect("run the ONNX Runtime baseline");
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace()
            .find_map(|w| w.strip_prefix("chunks_per_s="))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "no chunks_per_s in ONNX Runtime output: {text}{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
    }
}
