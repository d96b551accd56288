//! Dense layers on candle's gemm kernels, called directly; their bias (and
//! the residual, where one follows) is added by the element-wise pass after
//! them rather than costing a pass of its own.

use gemm::{gemm, Parallelism};

use super::weights::Param;

/// `y = x · Wᵀ + b` with `W` stored `[outputs, inputs]` as in PyTorch.
pub struct Linear {
    weight: Param,
    bias: Param,
    pub inputs: usize,
    pub outputs: usize,
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
        }
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

/// `dst = scale · a · bᵀ` (a: m×d, b: n×d, each row `stride` apart) into a
/// dense m×n buffer, on the calling thread.
pub fn scores(
    a: &[f32],
    b: &[f32],
    m: usize,
    n: usize,
    d: usize,
    stride: usize,
    scale: f32,
    dst: &mut [f32],
) {
    assert!(m == 0 || a.len() >= (m - 1) * stride + d);
    assert!(n == 0 || b.len() >= (n - 1) * stride + d);
    assert_eq!(dst.len(), m * n);
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: bounds asserted above; rhs (d × n) reads b[j·stride + i].
    unsafe {
        gemm(
            m,
            n,
            d,
            dst.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            stride as isize,
            b.as_ptr(),
            stride as isize,
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

/// `dst = p · v` (p: m×n dense, v: n×d rows `v_stride` apart) into rows
/// `dst_stride` apart, on the calling thread.
#[allow(clippy::too_many_arguments)]
pub fn mix(
    p: &[f32],
    v: &[f32],
    m: usize,
    n: usize,
    d: usize,
    v_stride: usize,
    dst: &mut [f32],
    dst_stride: usize,
) {
    assert_eq!(p.len(), m * n);
    assert!(n == 0 || v.len() >= (n - 1) * v_stride + d);
    assert!(m == 0 || dst.len() >= (m - 1) * dst_stride + d);
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: bounds asserted above.
    unsafe {
        gemm(
            m,
            d,
            n,
            dst.as_mut_ptr(),
            1,
            dst_stride as isize,
            false,
            p.as_ptr(),
            1,
            n as isize,
            v.as_ptr(),
            1,
            v_stride as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            Parallelism::None,
        );
    }
}
