//! Data movement on a device: strided copies (permute, slice, concat) and embedding.

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::{Error, Result};

/// The index of a gather along one axis, or of its scatter (see `ops::data::AxisGather`):
/// `shape` is the walked shape (the gather's result, the scatter's source, both
/// contiguous), `dim` the indexed dimension, `axis_len` the indexed tensor's extent along
/// it, `data_strides` that tensor's element strides (per dimension of `shape`; the one of
/// `dim` steps along the axis), and `idx` an i32/i64 index read at
/// `sum(i[d] * idx_strides[d])` (stride 0 broadcasts it). Negative indices count from the
/// end; one outside `[-axis_len, axis_len)` is INVALID_ARGUMENT.
#[derive(Clone, Copy, Debug)]
pub struct AxisIndex<'a> {
    pub shape: &'a [usize],
    pub dim: usize,
    pub axis_len: usize,
    pub data_strides: &'a [usize],
    pub idx_dtype: DType,
    pub idx: DevPtr,
    pub idx_strides: &'a [usize],
}

impl AxisIndex<'_> {
    /// Elements of the walked shape.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Elements of the walked shape without the indexed dimension (the fibers along it).
    pub fn numel_without_dim(&self) -> usize {
        (0..self.shape.len())
            .filter(|&d| d != self.dim)
            .map(|d| self.shape[d])
            .product()
    }
}

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables)]
pub trait DataOps {
    /// Copies a `shape` block of `elem_size`-byte elements: element `idx` goes from
    /// `src + sum(idx[d] * src_strides[d])` to `dst + sum(idx[d] * dst_strides[d])`
    /// (strides in elements). The two regions must not overlap.
    #[allow(clippy::too_many_arguments)]
    fn copy_strided(
        &self,
        stream: RawStream,
        elem_size: usize,
        src: DevPtr,
        src_strides: &[usize],
        dst: DevPtr,
        dst_strides: &[usize],
        shape: &[usize],
    ) -> Result<()> {
        Err(Error::unsupported(
            "copy_strided is not implemented on this device",
        ))
    }

    /// `out[j, :] = weight[idx[j], :]` for `j < n_idx`; weight is `[num, dim]` of `dtype`,
    /// `idx` is i32 or i64. An index outside `[0, num)` is INVALID_ARGUMENT.
    #[allow(clippy::too_many_arguments)]
    fn embedding(
        &self,
        stream: RawStream,
        dtype: DType,
        weight: DevPtr,
        num: usize,
        dim: usize,
        idx_dtype: DType,
        idx: DevPtr,
        n_idx: usize,
        out: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "embedding is not implemented on this device",
        ))
    }

    /// The dense weight gradient of embedding: `dw = 0`, then `dw[idx[j], :] += dy[j, :]`
    /// (repeated indices sum).
    #[allow(clippy::too_many_arguments)]
    fn embedding_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        dy: DevPtr,
        idx_dtype: DType,
        idx: DevPtr,
        n_idx: usize,
        num: usize,
        dim: usize,
        dw: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "embedding_backward is not implemented on this device",
        ))
    }

    /// As [`DataOps::copy_strided`], with signed source strides (a walk that goes down
    /// along some dimensions, as a negative-step slice does): every element read lies
    /// inside the source region the caller describes.
    #[allow(clippy::too_many_arguments)]
    fn copy_strided_signed(
        &self,
        stream: RawStream,
        elem_size: usize,
        src: DevPtr,
        src_strides: &[isize],
        dst: DevPtr,
        dst_strides: &[usize],
        shape: &[usize],
    ) -> Result<()> {
        Err(Error::unsupported(
            "copy_strided_signed is not implemented on this device",
        ))
    }

    /// Gather along one axis: `out[e] = src[sum_{d != dim} i[d] * data_strides[d] + k *
    /// data_strides[dim]]` for every element `e` (multi-index `i`) of `ix.shape`, where `k`
    /// is the index at `i`; elements of `elem_size` bytes; `out` contiguous.
    fn gather_axis(
        &self,
        stream: RawStream,
        elem_size: usize,
        src: DevPtr,
        ix: &AxisIndex<'_>,
        out: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "gather_axis is not implemented on this device",
        ))
    }

    /// The backward of [`DataOps::gather_axis`]: `dst` (`n_dst` elements of floating
    /// `dtype`) is zeroed, then every element `e` of the contiguous `src` (over `ix.shape`)
    /// is added to the element of `dst` the gather would have read (repeated indices sum).
    fn scatter_add_axis(
        &self,
        stream: RawStream,
        dtype: DType,
        src: DevPtr,
        ix: &AxisIndex<'_>,
        dst: DevPtr,
        n_dst: usize,
    ) -> Result<()> {
        Err(Error::unsupported(
            "scatter_add_axis is not implemented on this device",
        ))
    }

    /// `torch.topk` along the last axis of the contiguous `[rows, n]` `x` of `dtype`: writes
    /// the `k` best elements of every row, best first, to `values` (`[rows, k]`, x's dtype)
    /// and their positions to `indices` (`[rows, k]`, i64). Best is largest (or smallest)
    /// by [`crate::ops::data::topk_key_f32`]'s order (NaN above every number); equal keys
    /// come in index order.
    #[allow(clippy::too_many_arguments)]
    fn topk_rows(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        rows: usize,
        n: usize,
        k: usize,
        largest: bool,
        values: DevPtr,
        indices: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported("topk is not implemented on this device"))
    }

    /// Scatter along one axis into `dst` in place (`torch.scatter` / `scatter_reduce`): every
    /// element `e` of the contiguous `src` (of `dtype`, over `ix.shape`) is combined by
    /// `reduce` into the element of `dst` the gather would have read. The elements of one
    /// fiber along `ix.dim` are applied in index order (with `None`, the last one wins).
    fn scatter_axis(
        &self,
        stream: RawStream,
        dtype: DType,
        src: DevPtr,
        ix: &AxisIndex<'_>,
        dst: DevPtr,
        reduce: crate::ops::data::ScatterReduce,
    ) -> Result<()> {
        Err(Error::unsupported(
            "scatter is not implemented on this device",
        ))
    }

    /// `out[i] = start + i * step` for `i < n`, converted to `dtype` (floating dtypes
    /// computed in f64; integer dtypes in i64 from the integral `start` and `step`).
    fn arange(
        &self,
        stream: RawStream,
        dtype: DType,
        start: f64,
        step: f64,
        n: usize,
        out: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "arange is not implemented on this device",
        ))
    }

    /// `torch.cumsum` of an integer or bool tensor: the contiguous `x` of `dtype`, viewed as
    /// `[outer, len, inner]`, summed along the middle axis into the i64 `out` (the same
    /// view), in i64 wrapping on overflow (PyTorch's integer cumsum). `exclusive` leaves
    /// each element out of its own sum; `reverse` sums from the end. `out` may be `x` (an
    /// i64 `x` summed in place: each element is read before it is written).
    #[allow(clippy::too_many_arguments)]
    fn cumsum_int(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        outer: usize,
        len: usize,
        inner: usize,
        exclusive: bool,
        reverse: bool,
        out: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "integer cumsum is not implemented on this device",
        ))
    }
}
