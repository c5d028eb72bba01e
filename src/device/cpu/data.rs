//! Strided copies and embedding on the CPU.

use super::CpuDevice;
use super::elem::FloatElem;
use super::par::{SendPtr, for_range};
use crate::base::dtype::DType;
use crate::device::data::{AxisIndex, DataOps};
use crate::device::{DevPtr, RawStream};
use crate::ops::data::ScatterReduce;
use crate::{Error, Result, with_float_type};

const GRAIN: usize = 1 << 15;

/// Merges adjacent dimensions that are contiguous in both source and destination and drops
/// extent-1 dimensions.
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

fn copy_typed<T: Copy + Send + Sync + 'static>(
    src: DevPtr,
    ss: &[usize],
    dst: DevPtr,
    ds: &[usize],
    shape: &[usize],
) {
    let (shape, ss, ds) = merge(shape, ss, ds);
    let sp = SendPtr(src.as_mut_ptr::<T>());
    let dp = SendPtr(dst.as_mut_ptr::<T>());
    let nd = shape.len();
    if nd == 0 {
        // SAFETY: one element each.
        unsafe { *dp.get() = *sp.get() };
        return;
    }
    let inner = shape[nd - 1];
    let (is, id) = (ss[nd - 1], ds[nd - 1]);
    let rows: usize = shape[..nd - 1].iter().product();
    let (shape, ss, ds) = (&shape, &ss, &ds);
    for_range(rows, (GRAIN / inner.max(1)).max(1), move |r0, r1| {
        for r in r0..r1 {
            let (mut so, mut dof, mut rem) = (0usize, 0usize, r);
            for d in (0..nd - 1).rev() {
                let i = rem % shape[d];
                rem /= shape[d];
                so += i * ss[d];
                dof += i * ds[d];
            }
            // SAFETY: offsets stay inside the regions the caller described.
            unsafe {
                let (s, dd) = (sp.get().add(so), dp.get().add(dof));
                if is == 1 && id == 1 {
                    std::ptr::copy_nonoverlapping(s, dd, inner);
                } else {
                    for j in 0..inner {
                        *dd.add(j * id) = *s.add(j * is);
                    }
                }
            }
        }
    });
}

/// A strided copy whose source strides may be negative (a reversed walk).
fn copy_signed_typed<T: Copy + Send + Sync + 'static>(
    src: DevPtr,
    ss: &[isize],
    dst: DevPtr,
    ds: &[usize],
    shape: &[usize],
) {
    let sp = SendPtr(src.as_mut_ptr::<T>());
    let dp = SendPtr(dst.as_mut_ptr::<T>());
    let nd = shape.len();
    if nd == 0 {
        // SAFETY: one element each.
        unsafe { *dp.get() = *sp.get() };
        return;
    }
    let inner = shape[nd - 1];
    let (is, id) = (ss[nd - 1], ds[nd - 1]);
    let rows: usize = shape[..nd - 1].iter().product();
    for_range(rows, (GRAIN / inner.max(1)).max(1), move |r0, r1| {
        for r in r0..r1 {
            let (mut so, mut dof, mut rem) = (0isize, 0usize, r);
            for d in (0..nd - 1).rev() {
                let i = rem % shape[d];
                rem /= shape[d];
                so += i as isize * ss[d];
                dof += i * ds[d];
            }
            for j in 0..inner {
                // SAFETY: every element read lies inside the source region (caller's
                // contract); offsets of the destination stay inside it.
                unsafe {
                    *dp.get().add(dof + j * id) = *sp.get().offset(so + j as isize * is);
                }
            }
        }
    });
}

/// Checks every index an [`AxisIndex`] reads (walking only the dimensions the index
/// varies along) and returns the first bad one as INVALID_ARGUMENT.
fn check_axis_index(op: &str, ix: &AxisIndex<'_>) -> Result<()> {
    if !matches!(ix.idx_dtype, DType::I32 | DType::I64) {
        return Err(Error::dtype(format!(
            "{op}: indices have dtype {}, expected i32 or i64",
            ix.idx_dtype
        )));
    }
    if ix.shape.contains(&0) {
        return Ok(());
    }
    let dims: Vec<usize> = (0..ix.shape.len())
        .filter(|&d| ix.idx_strides[d] != 0)
        .collect();
    let n: usize = dims.iter().map(|&d| ix.shape[d]).product();
    let len = ix.axis_len as i64;
    for e in 0..n {
        let (mut rem, mut pos) = (e, 0usize);
        for &d in dims.iter().rev() {
            pos += (rem % ix.shape[d]) * ix.idx_strides[d];
            rem /= ix.shape[d];
        }
        // SAFETY: the index holds every position the walk reads (caller's contract).
        let v = unsafe { index(ix.idx_dtype, ix.idx.as_ptr(), pos) };
        if v < -len || v >= len {
            return Err(Error::invalid(format!(
                "{op}: index {v} at position {pos} is out of range [-{len}, {len})"
            )));
        }
    }
    Ok(())
}

/// For the elements `j` of row `r` of the walk (the last dimension of `ix.shape`):
/// `f(j, offset)` with the element offset of the indexed tensor (indices already checked).
///
/// # Safety
/// The index holds every position the walk reads.
#[inline(always)]
unsafe fn walk_row(ix: &AxisIndex<'_>, r: usize, mut f: impl FnMut(usize, usize)) {
    let nd = ix.shape.len();
    let last = nd - 1;
    let (mut base, mut ip, mut rem) = (0usize, 0usize, r);
    for d in (0..last).rev() {
        let i = rem % ix.shape[d];
        rem /= ix.shape[d];
        ip += i * ix.idx_strides[d];
        if d != ix.dim {
            base += i * ix.data_strides[d];
        }
    }
    let len = ix.axis_len as i64;
    let step = if last == ix.dim {
        0
    } else {
        ix.data_strides[last]
    };
    for j in 0..ix.shape[last] {
        // SAFETY: the caller's contract.
        let v = unsafe { index(ix.idx_dtype, ix.idx.as_ptr(), ip + j * ix.idx_strides[last]) };
        let k = if v < 0 { v + len } else { v } as usize;
        f(j, base + j * step + k * ix.data_strides[ix.dim]);
    }
}

fn gather_typed<T: Copy + Send + Sync + 'static>(src: DevPtr, ix: &AxisIndex<'_>, out: DevPtr) {
    let sp = SendPtr(src.as_mut_ptr::<T>());
    let op = SendPtr(out.as_mut_ptr::<T>());
    let nd = ix.shape.len();
    let inner = ix.shape[nd - 1];
    let rows: usize = ix.shape[..nd - 1].iter().product();
    for_range(rows, (GRAIN / inner.max(1)).max(1), move |r0, r1| {
        for r in r0..r1 {
            // SAFETY: indices were checked; offsets stay inside src and out.
            unsafe {
                walk_row(ix, r, |j, o| {
                    *op.get().add(r * inner + j) = *sp.get().add(o)
                });
            }
        }
    });
}

/// Reads index `j` as i64.
///
/// # Safety
/// `idx` holds more than `j` elements of `dt` (i32 or i64).
#[inline(always)]
unsafe fn index(dt: DType, idx: *const u8, j: usize) -> i64 {
    unsafe {
        if dt == DType::I32 {
            *(idx as *const i32).add(j) as i64
        } else {
            *(idx as *const i64).add(j)
        }
    }
}

fn check_indices(op: &str, dt: DType, idx: DevPtr, n: usize, num: usize) -> Result<()> {
    if !matches!(dt, DType::I32 | DType::I64) {
        return Err(Error::dtype(format!(
            "{op}: indices have dtype {dt}, expected i32 or i64"
        )));
    }
    for j in 0..n {
        // SAFETY: idx holds n indices (caller's contract).
        let v = unsafe { index(dt, idx.as_ptr(), j) };
        if v < 0 || v as u64 >= num as u64 {
            return Err(Error::invalid(format!(
                "{op}: index {v} at position {j} is out of range [0, {num})"
            )));
        }
    }
    Ok(())
}

impl DataOps for CpuDevice {
    fn copy_strided(
        &self,
        _s: RawStream,
        elem_size: usize,
        src: DevPtr,
        src_strides: &[usize],
        dst: DevPtr,
        dst_strides: &[usize],
        shape: &[usize],
    ) -> Result<()> {
        if shape.contains(&0) {
            return Ok(());
        }
        match elem_size {
            1 => copy_typed::<u8>(src, src_strides, dst, dst_strides, shape),
            2 => copy_typed::<u16>(src, src_strides, dst, dst_strides, shape),
            4 => copy_typed::<u32>(src, src_strides, dst, dst_strides, shape),
            8 => copy_typed::<u64>(src, src_strides, dst, dst_strides, shape),
            e => {
                return Err(Error::invalid(format!(
                    "copy_strided: element size {e} is not 1, 2, 4 or 8"
                )));
            }
        }
        Ok(())
    }

    fn embedding(
        &self,
        _s: RawStream,
        dtype: DType,
        weight: DevPtr,
        num: usize,
        dim: usize,
        idx_dtype: DType,
        idx: DevPtr,
        n_idx: usize,
        out: DevPtr,
    ) -> Result<()> {
        check_indices("embedding", idx_dtype, idx, n_idx, num)?;
        let es = dtype.size();
        let (wp, ip, op) = (
            SendPtr(weight.as_mut_ptr::<u8>()),
            SendPtr(idx.as_mut_ptr::<u8>()),
            SendPtr(out.as_mut_ptr::<u8>()),
        );
        let row = dim * es;
        for_range(n_idx, (GRAIN / dim.max(1)).max(1), move |j0, j1| {
            for j in j0..j1 {
                // SAFETY: indices were checked; rows do not overlap.
                unsafe {
                    let k = index(idx_dtype, ip.get(), j) as usize;
                    std::ptr::copy_nonoverlapping(
                        wp.get().add(k * row),
                        op.get().add(j * row),
                        row,
                    );
                }
            }
        });
        Ok(())
    }

    fn embedding_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        dy: DevPtr,
        idx_dtype: DType,
        idx: DevPtr,
        n_idx: usize,
        num: usize,
        dim: usize,
        dw: DevPtr,
    ) -> Result<()> {
        check_indices("embedding_backward", idx_dtype, idx, n_idx, num)?;
        with_float_type!(dtype, "embedding_backward", T => {
            // Each task owns a band of columns: accumulate in f32, deterministic order.
            let (dyp, ip, dwp) = (
                SendPtr(dy.as_mut_ptr::<T>()),
                SendPtr(idx.as_mut_ptr::<u8>()),
                SendPtr(dw.as_mut_ptr::<T>()),
            );
            let band = 64usize;
            let nb = dim.div_ceil(band);
            for_range(nb, 1, move |b0, b1| {
                for b in b0..b1 {
                    let c0 = b * band;
                    let w = band.min(dim - c0);
                    let mut acc = vec![0f32; num * w];
                    for j in 0..n_idx {
                        // SAFETY: indices were checked; dy is [n_idx, dim].
                        unsafe {
                            let k = index(idx_dtype, ip.get(), j) as usize;
                            let src = std::slice::from_raw_parts(dyp.get().add(j * dim + c0), w);
                            for (a, &v) in acc[k * w..(k + 1) * w].iter_mut().zip(src) {
                                *a += v.to_f32();
                            }
                        }
                    }
                    for k in 0..num {
                        for c in 0..w {
                            // SAFETY: dw is [num, dim].
                            unsafe { *dwp.get().add(k * dim + c0 + c) = T::from_f32(acc[k * w + c]) };
                        }
                    }
                }
            });
        });
        Ok(())
    }

    fn copy_strided_signed(
        &self,
        s: RawStream,
        elem_size: usize,
        src: DevPtr,
        src_strides: &[isize],
        dst: DevPtr,
        dst_strides: &[usize],
        shape: &[usize],
    ) -> Result<()> {
        if src_strides.iter().all(|&v| v >= 0) {
            let ss: Vec<usize> = src_strides.iter().map(|&v| v as usize).collect();
            return self.copy_strided(s, elem_size, src, &ss, dst, dst_strides, shape);
        }
        if shape.contains(&0) {
            return Ok(());
        }
        match elem_size {
            1 => copy_signed_typed::<u8>(src, src_strides, dst, dst_strides, shape),
            2 => copy_signed_typed::<u16>(src, src_strides, dst, dst_strides, shape),
            4 => copy_signed_typed::<u32>(src, src_strides, dst, dst_strides, shape),
            8 => copy_signed_typed::<u64>(src, src_strides, dst, dst_strides, shape),
            e => {
                return Err(Error::invalid(format!(
                    "copy_strided_signed: element size {e} is not 1, 2, 4 or 8"
                )));
            }
        }
        Ok(())
    }

    fn gather_axis(
        &self,
        _s: RawStream,
        elem_size: usize,
        src: DevPtr,
        ix: &AxisIndex<'_>,
        out: DevPtr,
    ) -> Result<()> {
        check_axis_index("gather", ix)?;
        if ix.shape.is_empty() {
            return Err(Error::invalid("gather: the walk has no dimensions"));
        }
        if ix.shape.contains(&0) {
            return Ok(());
        }
        match elem_size {
            1 => gather_typed::<u8>(src, ix, out),
            2 => gather_typed::<u16>(src, ix, out),
            4 => gather_typed::<u32>(src, ix, out),
            8 => gather_typed::<u64>(src, ix, out),
            e => {
                return Err(Error::invalid(format!(
                    "gather: element size {e} is not 1, 2, 4 or 8"
                )));
            }
        }
        Ok(())
    }

    fn scatter_add_axis(
        &self,
        _s: RawStream,
        dtype: DType,
        src: DevPtr,
        ix: &AxisIndex<'_>,
        dst: DevPtr,
        n_dst: usize,
    ) -> Result<()> {
        check_axis_index("scatter_add", ix)?;
        with_float_type!(dtype, "scatter_add", T => {
            // Accumulate in f32 (dst itself for f32). Tasks own whole fibers along `dim`
            // (the other coordinates fixed), which touch disjoint elements of dst, and add
            // in index order: deterministic.
            let mut scratch = if dtype == DType::F32 { Vec::new() } else { vec![0f32; n_dst] };
            let acc = if dtype == DType::F32 {
                dst.as_mut_ptr::<f32>()
            } else {
                scratch.as_mut_ptr()
            };
            if dtype == DType::F32 {
                // SAFETY: dst holds n_dst f32.
                unsafe { std::ptr::write_bytes(acc, 0, n_dst) };
            }
            if !ix.shape.is_empty() && !ix.shape.contains(&0) {
                let ap = SendPtr(acc);
                let sp = SendPtr(src.as_mut_ptr::<T>());
                let nd = ix.shape.len();
                let dim = ix.dim;
                let along = ix.shape[dim];
                let fibers: usize = ix.numel_without_dim();
                let cs = crate::base::shape::contiguous_strides(ix.shape);
                let ix = *ix;
                for_range(fibers, (GRAIN / along.max(1)).max(1), move |f0, f1| {
                    let len = ix.axis_len as i64;
                    for f in f0..f1 {
                        let (mut base, mut ip, mut so, mut rem) = (0usize, 0usize, 0usize, f);
                        for d in (0..nd).rev() {
                            if d == dim {
                                continue;
                            }
                            let i = rem % ix.shape[d];
                            rem /= ix.shape[d];
                            base += i * ix.data_strides[d];
                            ip += i * ix.idx_strides[d];
                            so += i * cs[d];
                        }
                        for j in 0..along {
                            // SAFETY: indices were checked; offsets stay inside src and acc.
                            unsafe {
                                let v = index(ix.idx_dtype, ix.idx.as_ptr(), ip + j * ix.idx_strides[dim]);
                                let k = if v < 0 { v + len } else { v } as usize;
                                let a = ap.get().add(base + k * ix.data_strides[dim]);
                                *a += (*sp.get().add(so + j * cs[dim])).to_f32();
                            }
                        }
                    }
                });
            }
            if dtype != DType::F32 {
                let dp = SendPtr(dst.as_mut_ptr::<T>());
                for (i, v) in scratch.iter().enumerate() {
                    // SAFETY: dst holds n_dst elements.
                    unsafe { *dp.get().add(i) = T::from_f32(*v) };
                }
            }
        });
        Ok(())
    }

    fn topk_rows(
        &self,
        _s: RawStream,
        dtype: DType,
        x: DevPtr,
        rows: usize,
        n: usize,
        k: usize,
        largest: bool,
        values: DevPtr,
        indices: DevPtr,
    ) -> Result<()> {
        use crate::ops::data::{topk_key_f32, topk_key_f64, topk_key_i64};
        match dtype {
            DType::F32 => topk_typed::<f32>(x, rows, n, k, largest, values, indices, topk_key_f32),
            DType::F16 => topk_typed::<half::f16>(x, rows, n, k, largest, values, indices, |v| {
                topk_key_f32(v.to_f32())
            }),
            DType::BF16 => topk_typed::<half::bf16>(x, rows, n, k, largest, values, indices, |v| {
                topk_key_f32(v.to_f32())
            }),
            DType::I32 => topk_typed::<i32>(x, rows, n, k, largest, values, indices, |v| {
                topk_key_i64(i64::from(v))
            }),
            DType::I64 => topk_typed::<i64>(x, rows, n, k, largest, values, indices, topk_key_i64),
            DType::F64 => topk_typed::<f64>(x, rows, n, k, largest, values, indices, topk_key_f64),
            DType::I8 => topk_typed::<i8>(x, rows, n, k, largest, values, indices, |v| {
                topk_key_i64(i64::from(v))
            }),
            DType::U8 => topk_typed::<u8>(x, rows, n, k, largest, values, indices, |v| {
                topk_key_i64(i64::from(v))
            }),
            DType::I16 => topk_typed::<i16>(x, rows, n, k, largest, values, indices, |v| {
                topk_key_i64(i64::from(v))
            }),
            other => {
                return Err(Error::dtype(format!(
                    "topk: dtype {other} is not supported (every dtype but bool)"
                )));
            }
        }
        Ok(())
    }

    fn scatter_axis(
        &self,
        _s: RawStream,
        dtype: DType,
        src: DevPtr,
        ix: &AxisIndex<'_>,
        dst: DevPtr,
        reduce: ScatterReduce,
    ) -> Result<()> {
        check_axis_index("scatter", ix)?;
        if ix.shape.is_empty() {
            return Err(Error::invalid("scatter: the walk has no dimensions"));
        }
        if ix.shape.contains(&0) {
            return Ok(());
        }
        if reduce == ScatterReduce::None {
            match dtype.size() {
                1 => scatter_typed::<u8>(src, ix, dst, |_, v| v),
                2 => scatter_typed::<u16>(src, ix, dst, |_, v| v),
                4 => scatter_typed::<u32>(src, ix, dst, |_, v| v),
                8 => scatter_typed::<u64>(src, ix, dst, |_, v| v),
                e => {
                    return Err(Error::invalid(format!(
                        "scatter: element size {e} is not 1, 2, 4 or 8"
                    )));
                }
            }
            return Ok(());
        }
        macro_rules! float_reduce {
            ($T:ty) => {{
                let f: fn(f32, f32) -> f32 = match reduce {
                    ScatterReduce::Add => |a, b| a + b,
                    ScatterReduce::Mul => |a, b| a * b,
                    ScatterReduce::Max => |a, b| {
                        if a.is_nan() || b.is_nan() {
                            f32::NAN
                        } else {
                            a.max(b)
                        }
                    },
                    _ => |a, b| {
                        if a.is_nan() || b.is_nan() {
                            f32::NAN
                        } else {
                            a.min(b)
                        }
                    },
                };
                scatter_typed::<$T>(src, ix, dst, move |a, b| {
                    <$T as FloatElem>::from_f32(f(a.to_f32(), b.to_f32()))
                })
            }};
        }
        macro_rules! int_reduce {
            ($T:ty) => {{
                let f: fn($T, $T) -> $T = match reduce {
                    ScatterReduce::Add => |a, b| a.wrapping_add(b),
                    ScatterReduce::Mul => |a, b| a.wrapping_mul(b),
                    ScatterReduce::Max => |a, b| a.max(b),
                    _ => |a, b| a.min(b),
                };
                scatter_typed::<$T>(src, ix, dst, f)
            }};
        }
        match dtype {
            DType::F32 => float_reduce!(f32),
            DType::F16 => float_reduce!(half::f16),
            DType::BF16 => float_reduce!(half::bf16),
            DType::F64 => {
                let f: fn(f64, f64) -> f64 = match reduce {
                    ScatterReduce::Add => |a, b| a + b,
                    ScatterReduce::Mul => |a, b| a * b,
                    ScatterReduce::Max => |a, b| {
                        if a.is_nan() || b.is_nan() {
                            f64::NAN
                        } else {
                            a.max(b)
                        }
                    },
                    _ => |a, b| {
                        if a.is_nan() || b.is_nan() {
                            f64::NAN
                        } else {
                            a.min(b)
                        }
                    },
                };
                scatter_typed::<f64>(src, ix, dst, f)
            }
            DType::I32 => int_reduce!(i32),
            DType::I64 => int_reduce!(i64),
            DType::I8 => int_reduce!(i8),
            DType::U8 => int_reduce!(u8),
            DType::I16 => int_reduce!(i16),
            other => {
                return Err(Error::dtype(format!(
                    "scatter: dtype {other} is not supported with reduce {} (every dtype but \
                     bool)",
                    reduce.name()
                )));
            }
        }
        Ok(())
    }

    fn arange(
        &self,
        _s: RawStream,
        dtype: DType,
        start: f64,
        step: f64,
        n: usize,
        out: DevPtr,
    ) -> Result<()> {
        fn fill<T: Copy + Send + Sync + 'static>(
            out: DevPtr,
            n: usize,
            f: impl Fn(usize) -> T + Sync,
        ) {
            let p = SendPtr(out.as_mut_ptr::<T>());
            for_range(n, GRAIN, move |a, b| {
                for i in a..b {
                    // SAFETY: out holds n elements.
                    unsafe { *p.get().add(i) = f(i) };
                }
            });
        }
        let (s0, st) = (start as i64, step as i64);
        let int = move |i: usize| s0.wrapping_add((i as i64).wrapping_mul(st));
        let flt = move |i: usize| start + i as f64 * step;
        match dtype {
            DType::F32 => fill(out, n, move |i| flt(i) as f32),
            DType::F16 => fill(out, n, move |i| half::f16::from_f64(flt(i))),
            DType::BF16 => fill(out, n, move |i| half::bf16::from_f64(flt(i))),
            DType::I32 => fill(out, n, move |i| int(i) as i32),
            DType::I64 => fill(out, n, int),
            DType::F64 => fill(out, n, flt),
            DType::I8 => fill(out, n, move |i| int(i) as i8),
            DType::U8 => fill(out, n, move |i| int(i) as u8),
            DType::I16 => fill(out, n, move |i| int(i) as i16),
            other => {
                return Err(Error::dtype(format!(
                    "arange: dtype {other} is not supported"
                )));
            }
        }
        Ok(())
    }

    fn cumsum_int(
        &self,
        _s: RawStream,
        dtype: DType,
        x: DevPtr,
        outer: usize,
        len: usize,
        inner: usize,
        exclusive: bool,
        reverse: bool,
        out: DevPtr,
    ) -> Result<()> {
        fn scan<T: Copy + Into<i64> + Send + Sync + 'static>(
            x: DevPtr,
            [outer, len, inner]: [usize; 3],
            exclusive: bool,
            reverse: bool,
            out: DevPtr,
        ) {
            let (xp, op) = (
                SendPtr(x.as_mut_ptr::<T>()),
                SendPtr(out.as_mut_ptr::<i64>()),
            );
            for_range(outer * inner, (GRAIN / len.max(1)).max(1), move |a, b| {
                for f in a..b {
                    let base = (f / inner) * len * inner + f % inner;
                    let mut acc = 0i64;
                    for j in 0..len {
                        let p = base + if reverse { len - 1 - j } else { j } * inner;
                        // SAFETY: x and out hold outer * len * inner elements; each element
                        // is read before it is written (out may be x).
                        unsafe {
                            let v: i64 = (*xp.get().add(p)).into();
                            if exclusive {
                                *op.get().add(p) = acc;
                                acc = acc.wrapping_add(v);
                            } else {
                                acc = acc.wrapping_add(v);
                                *op.get().add(p) = acc;
                            }
                        }
                    }
                }
            });
        }
        let dims = [outer, len, inner];
        match dtype {
            DType::I32 => scan::<i32>(x, dims, exclusive, reverse, out),
            DType::I64 => scan::<i64>(x, dims, exclusive, reverse, out),
            // bool is stored as one byte holding 0 or 1.
            DType::U8 | DType::Bool => scan::<u8>(x, dims, exclusive, reverse, out),
            DType::I8 => scan::<i8>(x, dims, exclusive, reverse, out),
            DType::I16 => scan::<i16>(x, dims, exclusive, reverse, out),
            other => {
                return Err(Error::dtype(format!(
                    "cumsum: dtype {other} is not an integer dtype or bool"
                )));
            }
        }
        Ok(())
    }
}

/// [`DataOps::topk_rows`] for one element type; `key` orders its values.
#[allow(clippy::too_many_arguments)]
fn topk_typed<T: Copy + Send + Sync + 'static>(
    x: DevPtr,
    rows: usize,
    n: usize,
    k: usize,
    largest: bool,
    values: DevPtr,
    indices: DevPtr,
    key: fn(T) -> u64,
) {
    let (xp, vp, ip) = (
        SendPtr(x.as_mut_ptr::<T>()),
        SendPtr(values.as_mut_ptr::<T>()),
        SendPtr(indices.as_mut_ptr::<i64>()),
    );
    for_range(rows, (GRAIN / n.max(1)).max(1), move |r0, r1| {
        // (key, position), smaller is better: keys inverted for `largest`, ties by position.
        let mut buf: Vec<(u64, usize)> = Vec::with_capacity(n);
        for r in r0..r1 {
            // SAFETY: x is [rows, n]; values and indices are [rows, k].
            unsafe {
                let row = std::slice::from_raw_parts(xp.get().add(r * n), n);
                buf.clear();
                buf.extend(row.iter().enumerate().map(|(j, &v)| {
                    let kk = key(v);
                    (if largest { !kk } else { kk }, j)
                }));
                if k < n {
                    buf.select_nth_unstable(k);
                }
                buf[..k].sort_unstable();
                for (j, &(_, pos)) in buf[..k].iter().enumerate() {
                    *vp.get().add(r * k + j) = row[pos];
                    *ip.get().add(r * k + j) = pos as i64;
                }
            }
        }
    });
}

/// [`DataOps::scatter_axis`] for one element type: `dst[at] = f(dst[at], src[e])`. Tasks own
/// whole fibers along `dim` (the other coordinates fixed), which touch disjoint elements of
/// dst, and apply them in index order: deterministic. Indices were checked.
fn scatter_typed<T: Copy + Send + Sync + 'static>(
    src: DevPtr,
    ix: &AxisIndex<'_>,
    dst: DevPtr,
    f: impl Fn(T, T) -> T + Sync,
) {
    let dp = SendPtr(dst.as_mut_ptr::<T>());
    let sp = SendPtr(src.as_mut_ptr::<T>());
    let nd = ix.shape.len();
    let dim = ix.dim;
    let along = ix.shape[dim];
    let fibers: usize = ix.numel_without_dim();
    let cs = crate::base::shape::contiguous_strides(ix.shape);
    let ix = *ix;
    let f = &f;
    for_range(fibers, (GRAIN / along.max(1)).max(1), move |f0, f1| {
        let len = ix.axis_len as i64;
        for fb in f0..f1 {
            let (mut base, mut ip, mut so, mut rem) = (0usize, 0usize, 0usize, fb);
            for d in (0..nd).rev() {
                if d == dim {
                    continue;
                }
                let i = rem % ix.shape[d];
                rem /= ix.shape[d];
                base += i * ix.data_strides[d];
                ip += i * ix.idx_strides[d];
                so += i * cs[d];
            }
            for j in 0..along {
                // SAFETY: indices were checked; offsets stay inside src and dst.
                unsafe {
                    let v = index(ix.idx_dtype, ix.idx.as_ptr(), ip + j * ix.idx_strides[dim]);
                    let k = if v < 0 { v + len } else { v } as usize;
                    let a = dp.get().add(base + k * ix.data_strides[dim]);
                    *a = f(*a, *sp.get().add(so + j * cs[dim]));
                }
            }
        }
    });
}
