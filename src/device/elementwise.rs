//! Elementwise work on a device: unary maps, broadcasting binary ops and their backwards,
//! comparisons, `where`, the fused pointwise ops (add+relu, mul+add), fills, casts and
//! random fills.

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::base::shape::BroadcastLayout;
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait ElementwiseOps {
    /// `y[i] = op(x[i])` for `i < n`; x and y have `dtype` (floating), may alias.
    fn unary(
        &self,
        stream: RawStream,
        op: UnaryOp,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        n: usize,
    ) -> Result<()> {
        Err(Error::unsupported(
            "unary is not implemented on this device",
        ))
    }

    /// `out = op(a, b)` with broadcasting as `layout` describes (operand 0 is `a`, 1 is `b`);
    /// `out` is contiguous with `layout.numel()` elements.
    #[allow(clippy::too_many_arguments)]
    fn binary(
        &self,
        stream: RawStream,
        op: BinaryOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        Err(Error::unsupported(
            "binary is not implemented on this device",
        ))
    }

    /// Sets `n` elements of `dtype` to `value` (converted as a cast would).
    fn fill(
        &self,
        stream: RawStream,
        dtype: DType,
        dst: DevPtr,
        n: usize,
        value: f64,
    ) -> Result<()> {
        Err(Error::unsupported("fill is not implemented on this device"))
    }

    /// Converts `n` elements from `src_dtype` to `dst_dtype` (PyTorch's cast rules: floats
    /// to integers truncate toward zero, anything non-zero to bool is true).
    fn cast(
        &self,
        stream: RawStream,
        src_dtype: DType,
        src: DevPtr,
        dst_dtype: DType,
        dst: DevPtr,
        n: usize,
    ) -> Result<()> {
        Err(Error::unsupported("cast is not implemented on this device"))
    }

    /// Standard normal samples (`ops::random::normal_f32(seed, i)`), converted to `dtype`.
    fn randn(
        &self,
        stream: RawStream,
        dtype: DType,
        dst: DevPtr,
        n: usize,
        seed: u64,
    ) -> Result<()> {
        Err(Error::unsupported(
            "randn is not implemented on this device",
        ))
    }

    /// Integers uniform in `[low, high)` (`ops::random::randint`), `dtype` i32 or i64.
    #[allow(clippy::too_many_arguments)]
    fn randint(
        &self,
        stream: RawStream,
        dtype: DType,
        dst: DevPtr,
        n: usize,
        low: i64,
        high: i64,
        seed: u64,
    ) -> Result<()> {
        Err(Error::unsupported(
            "randint is not implemented on this device",
        ))
    }

    /// `dx[i] = op'(x[i]) * dy[i]` for `i < n` (the backward of [`ElementwiseOps::unary`],
    /// from the op's input); all three of `dtype` (floating).
    #[allow(clippy::too_many_arguments)]
    fn unary_backward(
        &self,
        stream: RawStream,
        op: UnaryOp,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        n: usize,
    ) -> Result<()> {
        Err(Error::unsupported(
            "unary_backward is not implemented on this device",
        ))
    }

    /// The gradients of `op(a, b)` for each output element, before any reduction over
    /// broadcast dimensions: `ga`/`gb` (contiguous, `layout.numel()` elements each; either
    /// may be NULL to skip it) from `a`, `b`, `dy` walked as `layout` describes (operands
    /// 0, 1, 2). Floating `dtype`.
    #[allow(clippy::too_many_arguments)]
    fn binary_backward(
        &self,
        stream: RawStream,
        op: BinaryOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        dy: DevPtr,
        ga: DevPtr,
        gb: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        Err(Error::unsupported(
            "binary_backward is not implemented on this device",
        ))
    }

    /// `out = op(a, b)` as bytes 0/1 (bool), with broadcasting as `layout` describes.
    #[allow(clippy::too_many_arguments)]
    fn compare(
        &self,
        stream: RawStream,
        op: CompareOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        Err(Error::unsupported(
            "compare is not implemented on this device",
        ))
    }

    /// `out = cond ? a : b` in one pass; `cond` is bool, `a`, `b`, `out` have `dtype`;
    /// operands 0, 1, 2 of `layout` are cond, a, b.
    #[allow(clippy::too_many_arguments)]
    fn where_select(
        &self,
        stream: RawStream,
        dtype: DType,
        cond: DevPtr,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        Err(Error::unsupported(
            "where is not implemented on this device",
        ))
    }

    /// Fused `out = (a op b) ? x : y` in one pass, without the bool temporary; all four
    /// inputs and `out` have `dtype`; operands 0..4 of `layout` are a, b, x, y. `out` may be
    /// one of the inputs (in place).
    #[allow(clippy::too_many_arguments)]
    fn where_compare(
        &self,
        stream: RawStream,
        op: CompareOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        x: DevPtr,
        y: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        Err(Error::unsupported(
            "where_compare is not implemented on this device",
        ))
    }

    /// Fused `out = max(a + b, 0)` with broadcasting (`layout` has 2 operands).
    fn add_relu(
        &self,
        stream: RawStream,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        Err(Error::unsupported(
            "add_relu is not implemented on this device",
        ))
    }

    /// Fused `out = a * b + c` with broadcasting (`layout` has 3 operands).
    fn mul_add(
        &self,
        stream: RawStream,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        c: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        Err(Error::unsupported(
            "mul_add is not implemented on this device",
        ))
    }
}
