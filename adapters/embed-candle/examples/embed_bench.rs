//! Embedder throughput on real README chunks, beside the machine's f32
//! matmul peak measured with candle in the same run, and — when the ONNX
//! Runtime baseline is set up (`bash ../shared/tools/ort-baseline/setup.sh`)
//! — ONNX Runtime fp32 on the same file, alternating with ours round by
//! round so a noisy machine slows both alike.
//!
//! cargo run -p minirag-embed-candle --example embed_bench -- [--texts FILE]
//!     [--batch-tokens N] [--runs N] [--ort-venv DIR (default /tmp/ort-baseline)]

use std::path::PathBuf;
use std::time::Instant;

use candle_core::{Device, Tensor};
use minirag_core::ports::Embedder;
use minirag_embed_candle::CandleEmbedder;

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

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let texts_path = arg("--texts")
        .map(PathBuf::from)
        .unwrap_or(root.join("shared/tools/ort-baseline/chunks-2000.json"));
    let model_dir = arg("--model")
        .map(PathBuf::from)
        .unwrap_or(root.join("shared/models/all-MiniLM-L6-v2"));
    let batch: usize = arg("--batch-tokens")
        .and_then(|b| b.parse().ok())
        .unwrap_or(minirag_embed_candle::model::DEFAULT_BATCH_TOKENS);
    let runs: usize = arg("--runs").and_then(|b| b.parse().ok()).unwrap_or(3);

    let texts: Vec<String> =
        serde_json::from_slice(&std::fs::read(&texts_path).expect("texts file"))
            .expect("JSON list of strings");
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();

    let t = Instant::now();
    let model = CandleEmbedder::load("bench", &model_dir)
        .expect("model")
        .with_batch_tokens(batch);
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let lengths: Vec<usize> = model
        .embedded_ids(&refs)
        .unwrap()
        .iter()
        .map(Vec::len)
        .collect();
    let tokens: usize = lengths.iter().sum();

    let ort = OrtBaseline::find(&root, &texts_path);
    model.embed_documents(&refs[..32.min(refs.len())]).unwrap();
    let mut times = Vec::new();
    let mut ratios = Vec::new();
    let mut ort_rates = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let out = model.embed_documents(&refs).unwrap();
        let secs = t.elapsed().as_secs_f64();
        times.push(secs);
        assert_eq!(out.len(), refs.len());
        if let Some(ort) = &ort {
            let rate = ort.chunks_per_s();
            ort_rates.push(rate);
            ratios.push(refs.len() as f64 / secs / rate);
        }
    }
    let median = median_of(&mut times);
    let peak = matmul_peak();
    let achieved = model_flops(&lengths, 6.0, 384.0, 1536.0) / median / 1e9;

    println!("| metric | value |\n|---|---|");
    println!(
        "| cores | {} |",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| model load (mmap) | {load_ms:.0} ms |");
    println!(
        "| chunks | {} ({} tokens, batches of ≤ {batch} tokens, sorted, no padding) |",
        refs.len(),
        tokens
    );
    println!("| median of {runs} runs | {median:.2} s |");
    println!("| chunks/s | {:.1} |", refs.len() as f64 / median);
    println!("| tokens/s | {:.0} |", tokens as f64 / median);
    println!("| model GFLOP/s | {achieved:.1} |");
    println!("| f32 matmul peak GFLOP/s | {peak:.1} |");
    println!("| fraction of peak | {:.0}% |", 100.0 * achieved / peak);
    println!("| peak RSS | {:.0} MB |", peak_rss_mb());
    let (f32_rate, q8_rate) = quantized_matmul();
    println!(
        "| candle Q8_0 matmul (int8 path) | {q8_rate:.1} GFLOP/s-equiv vs f32 {f32_rate:.1} on the same shape |"
    );
    match &ort {
        Some(_) => {
            println!(
                "| ONNX Runtime fp32, same file, alternating | {:.1} chunks/s (median of {runs}) |",
                median_of(&mut ort_rates)
            );
            let shown: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
            println!(
                "| candle / ONNX Runtime | {:.2}x (rounds: {}) |",
                median_of(&mut ratios),
                shown.join(", ")
            );
        }
        None => println!(
            "| ONNX Runtime | not run: no baseline venv (bash shared/tools/ort-baseline/setup.sh, or --ort-venv DIR) |"
        ),
    }
}

fn median_of(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// GFLOP/s of the feed-forward shape in f32 and through candle's Q8_0
/// quantized matmul: the int8 path the issue proposes, measured rather than
/// assumed.
fn quantized_matmul() -> (f64, f64) {
    use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
    use candle_core::Module;
    let dev = Device::Cpu;
    let x = Tensor::randn(0f32, 1.0, (1024, 384), &dev).unwrap();
    let w = Tensor::randn(0f32, 1.0, (1536, 384), &dev).unwrap();
    let q = QMatMul::from_qtensor(QTensor::quantize(&w, GgmlDType::Q8_0).unwrap()).unwrap();
    let wt = w.t().unwrap();
    let flops = 2.0 * 1024.0 * 384.0 * 1536.0;
    let rate = |f: &dyn Fn()| {
        f();
        let t = Instant::now();
        for _ in 0..5 {
            f();
        }
        5.0 * flops / t.elapsed().as_secs_f64() / 1e9
    };
    (
        rate(&|| drop(x.matmul(&wt).unwrap())),
        rate(&|| drop(q.forward(&x).unwrap())),
    )
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
    fn find(root: &std::path::Path, texts: &std::path::Path) -> Option<Self> {
        let venv = PathBuf::from(arg("--ort-venv").unwrap_or_else(|| "/tmp/ort-baseline".into()));
        let found = Self {
            python: venv.join("bin/python"),
            script: root.join("shared/tools/ort-baseline/bench.py"),
            model: venv.join("minilm_fp32.onnx"),
            texts: texts.to_path_buf(),
        };
        (found.python.is_file() && found.model.is_file() && found.script.is_file()).then_some(found)
    }

    /// One timed ONNX Runtime pass (sorted batches of 16, all cores).
    fn chunks_per_s(&self) -> f64 {
        let out = std::process::Command::new(&self.python)
            .arg(&self.script)
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
