//! One dense layer of the feed-forward shape (4,096 tokens × 384 → 1,536)
//! in f32 (candle's gemm) and in int8 (`encoder::int8`, quantizing the
//! activations included), side by side: GFLOP/s, best of five.
//!
//! cargo run --release -p minirag-embed-candle --example int8_dense [-- 8]
//! (RAYON_NUM_THREADS=1 for one core)

use std::time::Instant;

use candle_core::{Device, Tensor};
use minirag_embed_candle::encoder::int8::{ActivationBits, QuantWeights};

fn main() {
    let (rows, k, n) = (4096usize, 384usize, 1536usize);
    let x: Vec<f32> = (0..rows * k)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0)
        .collect();
    let w: Vec<f32> = (0..n * k)
        .map(|i| ((i * 53 % 97) as f32 - 48.0) / 48.0)
        .collect();
    let bits = match std::env::args().nth(1).as_deref() {
        Some("8") => ActivationBits::Eight,
        _ => ActivationBits::Twelve,
    };
    let q = QuantWeights::quantize(&w, k, bits).expect("the shape quantizes");
    let xt = Tensor::from_slice(&x, (rows, k), &Device::Cpu).unwrap();
    let wt = Tensor::from_slice(&w, (n, k), &Device::Cpu)
        .unwrap()
        .t()
        .unwrap();
    let mut dst = vec![0f32; rows * n];
    let flops = 10.0 * 2.0 * (rows * k * n) as f64;
    let (mut int8, mut f32) = (0f64, 0f64);
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..10 {
            q.apply(&x, &mut dst);
        }
        int8 = int8.max(flops / t.elapsed().as_secs_f64() / 1e9);
        let t = Instant::now();
        for _ in 0..10 {
            drop(xt.matmul(&wt).unwrap());
        }
        f32 = f32.max(flops / t.elapsed().as_secs_f64() / 1e9);
    }
    println!(
        "threads {}, {bits:?}-bit inputs: int8 {int8:.1} GFLOP/s-equivalent, f32 {f32:.1} GFLOP/s, {:.2}×",
        rayon::current_num_threads(),
        int8 / f32
    );
}
