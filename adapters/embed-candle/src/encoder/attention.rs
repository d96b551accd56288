//! Self-attention over ragged sequences: each sequence attends only to its
//! own tokens, so no padding is computed and no mask is needed.

use rayon::prelude::*;

use super::kernels::softmax;
use super::linear::{mix, scores};

/// `qkv` holds, per token, `[q | k | v]` (3·hidden wide); `ctx` receives the
/// per-head context rows (hidden wide). `lens` are the sequence lengths in
/// token order.
pub fn attend(qkv: &[f32], lens: &[usize], heads: usize, head_dim: usize, ctx: &mut [f32]) {
    let hidden = heads * head_dim;
    let stride = 3 * hidden;
    let scale = 1.0 / (head_dim as f32).sqrt();
    // Split ctx and qkv by sequence so each task owns its rows.
    let mut tasks = Vec::with_capacity(lens.len());
    let (mut ctx_rest, mut qkv_rest) = (ctx, qkv);
    for &len in lens {
        let (c, cr) = ctx_rest.split_at_mut(len * hidden);
        let (q, qr) = qkv_rest.split_at(len * stride);
        tasks.push((len, q, c));
        ctx_rest = cr;
        qkv_rest = qr;
    }
    tasks.into_par_iter().for_each(|(len, qkv, ctx)| {
        let mut weights = vec![0f32; len * len];
        for h in 0..heads {
            let q = &qkv[h * head_dim..];
            let k = &qkv[hidden + h * head_dim..];
            let v = &qkv[2 * hidden + h * head_dim..];
            scores(q, k, len, len, head_dim, stride, scale, &mut weights);
            for row in weights.chunks_exact_mut(len) {
                softmax(row);
            }
            mix(
                &weights,
                v,
                len,
                len,
                head_dim,
                stride,
                &mut ctx[h * head_dim..],
                hidden,
            );
        }
    });
}
