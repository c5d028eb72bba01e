//! Data movement on a GPU (kernels/data.hip): strided copies, embedding and its backward.
//!
//! * `copy_strided` merges dimensions contiguous in both regions and drops extent-1 ones;
//!   a fully contiguous copy is a device memcpy; a copy whose innermost run is contiguous in
//!   both regions moves 16-, 8- or 4-byte words (whatever the run length and alignments
//!   allow) with a thread per word; a copy where the source's stride-1 dimension is not the
//!   destination's (a transpose, e.g. `permute` of the last two dims) goes through 32x32
//!   shared-memory tiles so both reads and writes are coalesced; anything else is a thread
//!   per element.
//! * `embedding` copies a row per block (16-byte words where the row allows). Indices live
//!   on the device, so they are checked there: the kernel records the first out-of-range
//!   position in a device word (and writes a zero row for it), and the call reads that word
//!   back, which waits for the stream. An out-of-range index is INVALID_ARGUMENT, as on the
//!   CPU; the price is one synchronization per call.
//! * `embedding_backward` zeroes an f32 accumulator (dw itself for f32, a scratch buffer
//!   cast to f16/bf16 afterwards) and `atomicAdd`s every dy element into it: not bitwise
//!   deterministic across runs (the order of the f32 adds for a repeated index varies), no
//!   sort. Indices are checked as in `embedding`.

use super::GpuDevice;
use super::Scratch;
use super::kernels::*;
use crate::base::dtype::DType;
use crate::device::data::{AxisIndex, DataOps};
use crate::device::{DevPtr, Device, ElementwiseOps, RawStream};
use crate::{Error, Result};

/// `RbCopyLayout` of kernels/data.hip.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbCopyLayout {
    nd: i64,
    shape: [i64; 16],
    ss: [i64; 16],
    ds: [i64; 16],
}

/// `RbAxisLayout` of kernels/data.hip: a gather/scatter walk.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbAxisLayout {
    nd: i64,
    dim: i64,
    axis_len: i64,
    shape: [i64; 16],
    ds: [i64; 16],
    is: [i64; 16],
}

impl RbAxisLayout {
    fn new(op: &str, ix: &AxisIndex<'_>) -> Result<Self> {
        let nd = ix.shape.len();
        if nd == 0 || nd > 16 {
            return Err(Error::invalid(format!(
                "{op}: {nd} dimensions; 1 to 16 are supported"
            )));
        }
        let mut l = RbAxisLayout {
            nd: nd as i64,
            dim: ix.dim as i64,
            axis_len: ix.axis_len as i64,
            shape: [1; 16],
            ds: [0; 16],
            is: [0; 16],
        };
        for d in 0..nd {
            l.shape[d] = ix.shape[d] as i64;
            l.ds[d] = ix.data_strides[d] as i64;
            l.is[d] = ix.idx_strides[d] as i64;
        }
        Ok(l)
    }
}

/// Reads the first-bad-position word of an axis kernel: an error naming the index.
fn check_bad_axis(
    dev: &GpuDevice,
    op: &str,
    stream: RawStream,
    bad: DevPtr,
    ix: &AxisIndex<'_>,
) -> Result<()> {
    if dev.graphs.is_capturing(stream) {
        // Nothing can be read back inside a device-graph capture: the kernels skip bad
        // indices as always (the executor ran every node once, checked, before capturing).
        return Ok(());
    }
    let mut w = [0u8; 8];
    dev.copy_d2h(bad, &mut w, stream)?;
    let pos = u64::from_le_bytes(w);
    if pos == u64::MAX {
        return Ok(());
    }
    let es = ix.idx_dtype.size();
    let mut v = [0u8; 8];
    dev.copy_d2h(ix.idx.offset(pos as usize * es), &mut v[..es], stream)?;
    let value = if es == 4 {
        i32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64
    } else {
        i64::from_le_bytes(v)
    };
    let len = ix.axis_len;
    Err(Error::invalid(format!(
        "{op}: index {value} at position {pos} is out of range [-{len}, {len})"
    )))
}

/// Merges adjacent dimensions contiguous in both regions; drops extent-1 dimensions.
fn merge(shape: &[usize], ss: &[usize], ds: &[usize]) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let (mut sh, mut s2, mut d2): (Vec<usize>, Vec<usize>, Vec<usize>) = (vec![], vec![], vec![]);
    for d in 0..shape.len() {
        if shape[d] == 1 {
            continue;
        }
        if let (Some(&ls), Some(&ld)) = (s2.last(), d2.last())
            && ls == ss[d] * shape[d]
            && ld == ds[d] * shape[d]
        {
            *sh.last_mut().unwrap() *= shape[d];
            *s2.last_mut().unwrap() = ss[d];
            *d2.last_mut().unwrap() = ds[d];
            continue;
        }
        sh.push(shape[d]);
        s2.push(ss[d]);
        d2.push(ds[d]);
    }
    (sh, s2, d2)
}

/// Reads the first-bad-position word an index kernel wrote; an error naming the index if
/// one was out of range.
pub(super) fn check_bad(
    dev: &GpuDevice,
    op: &str,
    stream: RawStream,
    bad: DevPtr,
    idx_dtype: DType,
    idx: DevPtr,
    num: usize,
) -> Result<()> {
    let Some(word) = dev.read_status(stream, bad)? else {
        return Ok(()); // capturing a device graph
    };
    let pos = word as u64;
    if pos == u64::MAX {
        return Ok(());
    }
    let es = idx_dtype.size();
    let mut v = [0u8; 8];
    dev.copy_d2h(idx.offset(pos as usize * es), &mut v[..es], stream)?;
    let value = if es == 4 {
        i32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64
    } else {
        i64::from_le_bytes(v)
    };
    Err(Error::invalid(format!(
        "{op}: index {value} at position {pos} is out of range [0, {num})"
    )))
}

fn index_code(op: &str, dt: DType) -> Result<i32> {
    match dt {
        DType::I32 => Ok(0),
        DType::I64 => Ok(1),
        other => Err(Error::dtype(format!(
            "{op}: indices have dtype {other}, expected i32 or i64"
        ))),
    }
}

impl DataOps for GpuDevice {
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
        if !matches!(elem_size, 1 | 2 | 4 | 8) {
            return Err(Error::invalid(format!(
                "copy_strided: element size {elem_size} is not 1, 2, 4 or 8"
            )));
        }
        if src_strides.len() != shape.len() || dst_strides.len() != shape.len() {
            return Err(Error::invalid(format!(
                "copy_strided: {} dims with {} source and {} destination strides",
                shape.len(),
                src_strides.len(),
                dst_strides.len()
            )));
        }
        if shape.contains(&0) {
            return Ok(());
        }
        let (mut sh, mut ss, mut ds) = merge(shape, src_strides, dst_strides);
        let nd = sh.len();
        if nd > 16 {
            return Err(Error::invalid(format!(
                "copy_strided: {nd} dimensions after merging; at most 16"
            )));
        }
        if nd == 0 {
            return self.copy_d2d(src, dst, elem_size, stream);
        }
        if nd == 1 && ss[0] == 1 && ds[0] == 1 {
            return self.copy_d2d(src, dst, sh[0] * elem_size, stream);
        }
        let mut es = elem_size;
        let last = nd - 1;
        if ss[last] == 1 && ds[last] == 1 {
            // Widen the element to the largest word the run length, the other strides and
            // both base addresses allow.
            for w in [16usize, 8, 4] {
                if w <= es {
                    break;
                }
                let g = w / es;
                let fits = sh[last] % g == 0
                    && src.0.is_multiple_of(w as u64)
                    && dst.0.is_multiple_of(w as u64)
                    && (0..last)
                        .all(|d| (ss[d] * es).is_multiple_of(w) && (ds[d] * es).is_multiple_of(w));
                if fits {
                    sh[last] /= g;
                    for d in 0..last {
                        ss[d] = ss[d] * es / w;
                        ds[d] = ds[d] * es / w;
                    }
                    es = w;
                    break;
                }
            }
        }
        let mut l = RbCopyLayout {
            nd: nd as i64,
            shape: [1; 16],
            ss: [0; 16],
            ds: [0; 16],
        };
        for d in 0..nd {
            l.shape[d] = sh[d] as i64;
            l.ss[d] = ss[d] as i64;
            l.ds[d] = ds[d] as i64;
        }
        // A transpose: the source's stride-1 dimension p is not the destination's q.
        let p = (0..nd).rev().find(|&d| ss[d] == 1);
        let q = (0..nd).rev().find(|&d| ds[d] == 1);
        if let (Some(p), Some(q)) = (p, q)
            && p != q
            && es <= 8
            && sh[p] >= 8
            && sh[q] >= 8
        {
            let nbatch: usize = (0..nd)
                .filter(|&d| d != p && d != q)
                .map(|d| sh[d])
                .product();
            let (pi, qi, nb) = (p as i32, q as i32, nbatch as u64);
            return self.launch_grid(
                stream,
                TRANSPOSE.src,
                &TRANSPOSE.size(es),
                [
                    sh[q].div_ceil(32).min(65535),
                    sh[p].div_ceil(32).min(65535),
                    nbatch.min(65535),
                ],
                [32, 8, 1],
                &mut kargs![src.0, dst.0, l, pi, qi, nb],
            );
        }
        let n: usize = sh.iter().product();
        let n64 = n as u64;
        self.launch_elems(
            stream,
            COPY_ND.src,
            &COPY_ND.size(es),
            n,
            &mut kargs![src.0, dst.0, n64, l],
        )
    }

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
        let is64 = index_code("embedding", idx_dtype)?;
        if n_idx == 0 {
            return Ok(());
        }
        let row = dim * dtype.size();
        let w = [16usize, 8, 4, 2]
            .into_iter()
            .find(|&w| {
                row.is_multiple_of(w)
                    && weight.0.is_multiple_of(w as u64)
                    && out.0.is_multiple_of(w as u64)
            })
            .ok_or_else(|| {
                Error::invalid(format!(
                    "embedding: rows of {row} bytes at unaligned addresses"
                ))
            })?;
        let words = (row / w) as u64;
        let threads = (words.div_ceil(32) * 32).clamp(32, 256) as u32;
        let bad = Scratch::new(self, 8, stream)?;
        self.memset(bad.ptr, 0xff, 8, stream)?;
        let (num64, n64) = (num as u64, n_idx as u64);
        self.launch_grid(
            stream,
            EMBEDDING.src,
            &EMBEDDING.size(w),
            [n_idx.min(1 << 20), 1, 1],
            [threads, 1, 1],
            &mut kargs![weight.0, num64, words, idx.0, is64, n64, out.0, bad.ptr.0],
        )?;
        check_bad(self, "embedding", stream, bad.ptr, idx_dtype, idx, num)
    }

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
        let is64 = index_code("embedding_backward", idx_dtype)?;
        let s = float_suffix("embedding_backward", dtype)?;
        let total = num * dim;
        if total == 0 {
            return Ok(());
        }
        let scratch = if dtype == DType::F32 {
            None
        } else {
            Some(Scratch::new(self, total * 4, stream)?)
        };
        let acc = scratch.as_ref().map_or(dw, |s| s.ptr);
        self.memset(acc, 0, total * 4, stream)?;
        if n_idx > 0 {
            let bad = Scratch::new(self, 8, stream)?;
            self.memset(bad.ptr, 0xff, 8, stream)?;
            let (n64, num64, dim64) = (n_idx as u64, num as u64, dim as u64);
            self.launch_elems(
                stream,
                EMBEDDING_BWD.src,
                &EMBEDDING_BWD.suffixed(s),
                n_idx * dim,
                &mut kargs![dy.0, idx.0, is64, n64, num64, dim64, acc.0, bad.ptr.0],
            )?;
            check_bad(
                self,
                "embedding_backward",
                stream,
                bad.ptr,
                idx_dtype,
                idx,
                num,
            )?;
        }
        if dtype != DType::F32 {
            self.cast(stream, DType::F32, acc, dtype, dw, total)?;
        }
        Ok(())
    }

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
        if src_strides.iter().all(|&v| v >= 0) {
            let ss: Vec<usize> = src_strides.iter().map(|&v| v as usize).collect();
            return self.copy_strided(stream, elem_size, src, &ss, dst, dst_strides, shape);
        }
        if !matches!(elem_size, 1 | 2 | 4 | 8) {
            return Err(Error::invalid(format!(
                "copy_strided_signed: element size {elem_size} is not 1, 2, 4 or 8"
            )));
        }
        if src_strides.len() != shape.len() || dst_strides.len() != shape.len() {
            return Err(Error::invalid(format!(
                "copy_strided_signed: {} dims with {} source and {} destination strides",
                shape.len(),
                src_strides.len(),
                dst_strides.len()
            )));
        }
        if shape.contains(&0) {
            return Ok(());
        }
        // Extent-1 dimensions do not move: drop them (no merging of signed strides).
        let dims: Vec<usize> = (0..shape.len()).filter(|&d| shape[d] != 1).collect();
        if dims.len() > 16 {
            return Err(Error::invalid(format!(
                "copy_strided_signed: {} dimensions of extent above 1; at most 16",
                dims.len()
            )));
        }
        let mut l = RbCopyLayout {
            nd: dims.len() as i64,
            shape: [1; 16],
            ss: [0; 16],
            ds: [0; 16],
        };
        for (k, &d) in dims.iter().enumerate() {
            l.shape[k] = shape[d] as i64;
            l.ss[k] = src_strides[d] as i64;
            l.ds[k] = dst_strides[d] as i64;
        }
        let n: usize = shape.iter().product();
        let n64 = n as u64;
        self.launch_elems(
            stream,
            COPY_ND_SIGNED.src,
            &COPY_ND_SIGNED.size(elem_size),
            n,
            &mut kargs![src.0, dst.0, n64, l],
        )
    }

    fn gather_axis(
        &self,
        stream: RawStream,
        elem_size: usize,
        src: DevPtr,
        ix: &AxisIndex<'_>,
        out: DevPtr,
    ) -> Result<()> {
        let is64 = index_code("gather", ix.idx_dtype)?;
        if !matches!(elem_size, 1 | 2 | 4 | 8) {
            return Err(Error::invalid(format!(
                "gather: element size {elem_size} is not 1, 2, 4 or 8"
            )));
        }
        let l = RbAxisLayout::new("gather", ix)?;
        let n = ix.numel();
        if n == 0 {
            return Ok(());
        }
        let bad = Scratch::new(self, 8, stream)?;
        self.memset(bad.ptr, 0xff, 8, stream)?;
        let n64 = n as u64;
        self.launch_elems(
            stream,
            GATHER_AXIS.src,
            &GATHER_AXIS.size(elem_size),
            n,
            &mut kargs![src.0, ix.idx.0, is64, out.0, n64, l, bad.ptr.0],
        )?;
        check_bad_axis(self, "gather", stream, bad.ptr, ix)
    }

    fn scatter_add_axis(
        &self,
        stream: RawStream,
        dtype: DType,
        src: DevPtr,
        ix: &AxisIndex<'_>,
        dst: DevPtr,
        n_dst: usize,
    ) -> Result<()> {
        let is64 = index_code("scatter_add", ix.idx_dtype)?;
        let kernel = SCATTER_ADD_AXIS.dtype("scatter_add", dtype)?;
        let l = RbAxisLayout::new("scatter_add", ix)?;
        let scratch = if dtype == DType::F32 || n_dst == 0 {
            None
        } else {
            Some(Scratch::new(self, n_dst * 4, stream)?)
        };
        let acc = scratch.as_ref().map_or(dst, |s| s.ptr);
        if n_dst > 0 {
            self.memset(acc, 0, n_dst * 4, stream)?;
        }
        let n = ix.numel();
        if n > 0 {
            let bad = Scratch::new(self, 8, stream)?;
            self.memset(bad.ptr, 0xff, 8, stream)?;
            let n64 = n as u64;
            self.launch_elems(
                stream,
                SCATTER_ADD_AXIS.src,
                &kernel,
                n,
                &mut kargs![src.0, ix.idx.0, is64, acc.0, n64, l, bad.ptr.0],
            )?;
            check_bad_axis(self, "scatter_add", stream, bad.ptr, ix)?;
        }
        if dtype != DType::F32 && n_dst > 0 {
            self.cast(stream, DType::F32, acc, dtype, dst, n_dst)?;
        }
        Ok(())
    }

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
        if rows == 0 || k == 0 {
            return Ok(());
        }
        let lg = i32::from(largest);
        let (rows64, n64, k64) = (rows as u64, n as u64, k as u64);
        let grid = [rows.min(1 << 16), 1, 1];
        if n <= 2048 {
            let kernel = TOPK_SORT.dtype("topk", dtype)?;
            let p = n.next_power_of_two();
            let threads = (p / 2).clamp(32, 512) as u32;
            let p32 = p as i32;
            return self.launch_grid(
                stream,
                TOPK_SORT.src,
                &kernel,
                grid,
                [threads, 1, 1],
                &mut kargs![x.0, rows64, n64, k64, lg, p32, values.0, indices.0],
            );
        }
        let kernel = TOPK_SELECT.dtype("topk", dtype)?;
        self.launch_grid(
            stream,
            TOPK_SELECT.src,
            &kernel,
            grid,
            [256, 1, 1],
            &mut kargs![x.0, rows64, n64, k64, lg, values.0, indices.0],
        )
    }

    fn scatter_axis(
        &self,
        stream: RawStream,
        dtype: DType,
        src: DevPtr,
        ix: &AxisIndex<'_>,
        dst: DevPtr,
        reduce: crate::ops::data::ScatterReduce,
    ) -> Result<()> {
        use crate::ops::data::ScatterReduce;
        let is64 = index_code("scatter", ix.idx_dtype)?;
        let l = RbAxisLayout::new("scatter", ix)?;
        if ix.numel() == 0 {
            return Ok(());
        }
        let fibers = ix.numel_without_dim();
        let f64_ = fibers as u64;
        // The first bad index, read back after the launch; inside a device-graph capture
        // nothing can be read back, so no status (and no memset node in the graph): the
        // kernels skip bad indices as always (the executor ran every node once, checked,
        // before capturing).
        let status = if self.graphs.is_capturing(stream) {
            None
        } else {
            let st = Scratch::new(self, 8, stream)?;
            self.memset(st.ptr, 0xff, 8, stream)?;
            Some(st)
        };
        let bad = status.as_ref().map_or(DevPtr::NULL, |s| s.ptr);
        if reduce == ScatterReduce::None {
            let es = dtype.size();
            self.launch_elems(
                stream,
                SCATTER_AXIS.src,
                &SCATTER_AXIS.size(es),
                fibers,
                &mut kargs![src.0, ix.idx.0, is64, dst.0, f64_, l, bad.0],
            )?;
        } else {
            let kernel = SCATTER_RED.dtype("scatter", dtype)?;
            let op = reduce as i32;
            self.launch_elems(
                stream,
                SCATTER_RED.src,
                &kernel,
                fibers,
                &mut kargs![src.0, ix.idx.0, is64, dst.0, f64_, l, bad.0, op],
            )?;
        }
        match status {
            Some(st) => check_bad_axis(self, "scatter", stream, st.ptr, ix),
            None => Ok(()),
        }
    }

    fn arange(
        &self,
        stream: RawStream,
        dtype: DType,
        start: f64,
        step: f64,
        n: usize,
        out: DevPtr,
    ) -> Result<()> {
        let kernel = ARANGE.dtype("arange", dtype)?;
        let (n64, istart, istep) = (n as u64, start as i64, step as i64);
        self.launch_elems(
            stream,
            ARANGE.src,
            &kernel,
            n,
            &mut kargs![out.0, n64, start, step, istart, istep],
        )
    }

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
        let kernel = CUMSUM_INT.dtype("cumsum", dtype)?;
        let (o64, l64, i64_) = (outer as u64, len as u64, inner as u64);
        let (ex, rev) = (i32::from(exclusive), i32::from(reverse));
        self.launch_elems(
            stream,
            CUMSUM_INT.src,
            &kernel,
            outer * inner,
            &mut kargs![x.0, out.0, o64, l64, i64_, ex, rev],
        )
    }
}
