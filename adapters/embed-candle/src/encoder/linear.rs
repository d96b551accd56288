//! Dense layers on candle's gemm kernels, called directly; their bias (and
//! the residual, where one follows) is added by the element-wise pass after
//! them rather than costing a pass of its own.

use std::sync::OnceLock;

use gemm::{gemm, Parallelism};

use super::int8::{ActivationBits, QuantWeights};
use super::panels::Panels;
use super::weights::Param;

/// `y = x · Wᵀ + b` with `W` stored `[outputs, inputs]` as in PyTorch.
pub struct Linear {
    weight: Param,
    bias: Param,
    pub inputs: usize,
    pub outputs: usize,
    /// `W` packed for the few-rows kernel, on the first short batch (a
    /// query): a server that only syncs never holds the copy.
    panels: OnceLock<Option<Panels>>,
    /// `W` in int8, where this layer runs quantized (`f32` weights then gone).
    int8: Option<QuantWeights>,
}

impl Linear {
    pub fn new(weight: Param, bias: Param, inputs: usize, outputs: usize) -> Self {
        assert_eq!(weight.data().len(), inputs * outputs);
        assert_eq!(bias.data().len(), outputs);
        Self {
            weight,
            bias,
            inputs,
            outputs,
            panels: OnceLock::new(),
            int8: None,
        }
    }

    /// Runs this layer in int8 from now on, its inputs quantized to
    /// `bits`, and lets go of its f32 weights. False (and nothing changes)
    /// where the shape does not quantize.
    pub fn quantize(&mut self, bits: ActivationBits) -> bool {
        let Some(q) = QuantWeights::quantize(self.weight.data(), self.inputs, bits) else {
            return false;
        };
        self.weight.release_pages();
        self.weight = Param::owned(Vec::new());
        self.int8 = Some(q);
        true
    }

    pub fn is_int8(&self) -> bool {
        self.int8.is_some()
    }

    pub fn bias(&self) -> &[f32] {
        self.bias.data()
    }

    /// `dst = x · Wᵀ` for `x` of `rows × inputs`, `dst` of `rows × outputs`;
    /// the bias is left to the element-wise pass that follows.
    pub fn apply(&self, x: &[f32], dst: &mut [f32]) {
        let rows = x.len() / self.inputs;
        assert_eq!(x.len(), rows * self.inputs);
        assert_eq!(dst.len(), rows * self.outputs);
        if rows == 0 {
            return;
        }
        if let Some(q) = &self.int8 {
            q.apply(x, dst);
            return;
        }
        if rows <= super::panels::MAX_ROWS {
            let panels = self
                .panels
                .get_or_init(|| Panels::pack(self.weight.data(), self.inputs));
            if let Some(panels) = panels {
                panels.apply(x, dst);
                return;
            }
        }
        if super::few_rows::applies(rows, self.inputs, self.outputs) {
            super::few_rows::dot_rows(x, self.weight.data(), self.inputs, dst);
            return;
        }
        let threads = rayon::current_num_threads();
        let parallelism = if threads > 1 {
            Parallelism::Rayon(threads)
        } else {
            Parallelism::None
        };
        let (k, n) = (self.inputs as isize, self.outputs as isize);
        // SAFETY: the asserts above bound every index gemm forms: lhs is
        // rows × k row-major, rhs (k × n) reads W[j, i] at j·k + i, dst is
        // rows × n row-major; the three buffers do not overlap.
        unsafe {
            gemm(
                rows,
                self.outputs,
                self.inputs,
                dst.as_mut_ptr(),
                1,
                n,
                false,
                x.as_ptr(),
                1,
                k,
                self.weight.data().as_ptr(),
                k,
                1,
                0.0,
                1.0,
                false,
                false,
                false,
                parallelism,
            );
        }
    }
}

/// `len` rows of `width` values each, `stride` apart in `data`: one head's
/// slice of a sequence's packed q, k or v.
#[derive(Clone, Copy)]
pub struct Rows<'a> {
    pub data: &'a [f32],
    pub len: usize,
    pub width: usize,
    pub stride: usize,
}

impl Rows<'_> {
    fn check(&self) {
        assert!(self.len == 0 || self.data.len() >= (self.len - 1) * self.stride + self.width);
    }
}

/// `dst = scale · a · bᵀ` into a dense `a.len × b.len` buffer, on this thread.
pub fn scores(a: Rows, b: Rows, scale: f32, dst: &mut [f32]) {
    a.check();
    b.check();
    assert_eq!(a.width, b.width);
    assert_eq!(dst.len(), a.len * b.len);
    if a.len == 0 || b.len == 0 {
        return;
    }
    // SAFETY: bounds checked above; rhs (width × b.len) reads b[j·stride + i].
    unsafe {
        gemm(
            a.len,
            b.len,
            a.width,
            dst.as_mut_ptr(),
            1,
            b.len as isize,
            false,
            a.data.as_ptr(),
            1,
            a.stride as isize,
            b.data.as_ptr(),
            b.stride as isize,
            1,
            0.0,
            scale,
            false,
            false,
            false,
            Parallelism::None,
        );
    }
}

/// `dst = p · v` (p dense, `m × v.len`) into rows `dst_stride` apart, on
/// this thread.
pub fn mix(p: &[f32], v: Rows, dst: &mut [f32], dst_stride: usize) {
    v.check();
    let m = p.len().checked_div(v.len).unwrap_or(0);
    assert_eq!(p.len(), m * v.len);
    assert!(m == 0 || dst.len() >= (m - 1) * dst_stride + v.width);
    if m == 0 {
        return;
    }
    // SAFETY: bounds checked above.
    unsafe {
        gemm(
            m,
            v.width,
            v.len,
            dst.as_mut_ptr(),
            1,
            dst_stride as isize,
            false,
            p.as_ptr(),
            1,
            v.len as isize,
            v.data.as_ptr(),
            1,
            v.stride as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            Parallelism::None,
        );
    }
}
