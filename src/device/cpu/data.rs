//! Strided copies and embedding on the CPU.

use super::CpuDevice;
use super::elem::FloatElem;
use super::par::{SendPtr, for_range};
use crate::base::dtype::DType;
use crate::device::data::DataOps;
use crate::device::{DevPtr, RawStream};
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
}
