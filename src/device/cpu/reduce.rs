//! Reductions on the CPU over the middle dimension of `[outer, r, inner]` (f32, f16, bf16 and
//! f64, which keeps its f64 result unrounded). Sums and
//! products accumulate in f64 over eight independent lanes (vectorizable, and exact enough
//! for 1e7-element reductions); long rows are split across threads and their partials
//! combined in a fixed order, so results do not depend on the thread count's timing.

use super::CpuDevice;
use super::elem::WideElem;
use super::par::{SendPtr, for_range, num_threads};
use crate::base::dtype::DType;
use crate::device::reduce::ReduceOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::reduce::{ReduceDesc, ReduceOp};
use crate::{Result, with_floating_type};
use parking_lot::Mutex;

const GRAIN: usize = 1 << 15;
/// Output columns one task accumulates when `inner > 1`.
const COLS: usize = 256;
const LANES: usize = 8;

#[inline(always)]
fn nan_max(a: f64, v: f64) -> f64 {
    if v.is_nan() || v > a { v } else { a }
}
#[inline(always)]
fn nan_min(a: f64, v: f64) -> f64 {
    if v.is_nan() || v < a { v } else { a }
}

fn init(op: ReduceOp) -> f64 {
    match op {
        ReduceOp::Sum | ReduceOp::Mean => 0.0,
        ReduceOp::Prod => 1.0,
        ReduceOp::Max => f64::NEG_INFINITY,
        ReduceOp::Min => f64::INFINITY,
    }
}

#[inline(always)]
fn combine(op: ReduceOp, a: f64, v: f64) -> f64 {
    match op {
        ReduceOp::Sum | ReduceOp::Mean => a + v,
        ReduceOp::Prod => a * v,
        ReduceOp::Max => nan_max(a, v),
        ReduceOp::Min => nan_min(a, v),
    }
}

/// Reduces a contiguous run with eight lanes, each op in its own loop so it vectorizes.
fn reduce_run<T: WideElem>(op: ReduceOp, xs: &[T]) -> f64 {
    macro_rules! lanes {
        ($init:expr, $f:expr) => {{
            let mut acc = [$init; LANES];
            let mut chunks = xs.chunks_exact(LANES);
            for c in &mut chunks {
                for j in 0..LANES {
                    acc[j] = $f(acc[j], c[j].to_f64());
                }
            }
            let mut r = $init;
            for &v in chunks.remainder() {
                r = $f(r, v.to_f64());
            }
            for a in acc {
                r = $f(r, a);
            }
            r
        }};
    }
    match op {
        ReduceOp::Sum | ReduceOp::Mean => lanes!(0.0f64, |a: f64, v: f64| a + v),
        ReduceOp::Prod => lanes!(1.0f64, |a: f64, v: f64| a * v),
        ReduceOp::Max => lanes!(f64::NEG_INFINITY, nan_max),
        ReduceOp::Min => lanes!(f64::INFINITY, nan_min),
    }
}

fn finish(op: ReduceOp, v: f64, r: usize) -> f64 {
    match op {
        ReduceOp::Mean => v / r as f64,
        _ => v,
    }
}

fn reduce_typed<T: WideElem>(op: ReduceOp, x: DevPtr, y: DevPtr, d: &ReduceDesc) {
    let xp = SendPtr(x.as_mut_ptr::<T>());
    let yp = SendPtr(y.as_mut_ptr::<T>());
    let ReduceDesc { outer, r, inner } = *d;
    if r == 0 {
        // Empty reductions: sum 0, prod 1, mean NaN (max/min are rejected by the runtime).
        let v = if op == ReduceOp::Mean {
            f64::NAN
        } else {
            init(op)
        };
        for i in 0..outer * inner {
            // SAFETY: y holds outer * inner elements.
            unsafe { *yp.get().add(i) = T::from_f64(v) };
        }
        return;
    }
    if inner == 1 {
        if outer >= num_threads() || r < 2 * GRAIN {
            for_range(outer, (GRAIN / r).max(1), move |o0, o1| {
                for o in o0..o1 {
                    // SAFETY: row o has r elements.
                    let row = unsafe { std::slice::from_raw_parts(xp.get().add(o * r), r) };
                    let v = reduce_run(op, row);
                    unsafe { *yp.get().add(o) = T::from_f64(finish(op, v, r)) };
                }
            });
        } else {
            // Few long rows: split each row across threads, combine partials in order.
            for o in 0..outer {
                let parts: Mutex<Vec<(usize, f64)>> = Mutex::new(Vec::new());
                for_range(r, GRAIN, |s, e| {
                    // SAFETY: inside row o.
                    let run = unsafe { std::slice::from_raw_parts(xp.get().add(o * r + s), e - s) };
                    let v = reduce_run(op, run);
                    parts.lock().push((s, v));
                });
                let mut parts = parts.into_inner();
                parts.sort_by_key(|p| p.0);
                let v = parts.iter().fold(init(op), |a, p| combine(op, a, p.1));
                // SAFETY: y holds outer elements.
                unsafe { *yp.get().add(o) = T::from_f64(finish(op, v, r)) };
            }
        }
        return;
    }
    let nchunks = inner.div_ceil(COLS);
    let tasks = outer * nchunks;
    for_range(tasks, (GRAIN / (r * COLS)).max(1), move |t0, t1| {
        let mut acc = [0f64; COLS];
        for t in t0..t1 {
            let (o, c) = (t / nchunks, t % nchunks);
            let c0 = c * COLS;
            let w = COLS.min(inner - c0);
            let acc = &mut acc[..w];
            acc.iter_mut().for_each(|a| *a = init(op));
            for k in 0..r {
                // SAFETY: row k of block o, columns c0..c0+w.
                let row = unsafe {
                    std::slice::from_raw_parts(xp.get().add((o * r + k) * inner + c0), w)
                };
                macro_rules! cols {
                    ($f:expr) => {
                        for (a, &v) in acc.iter_mut().zip(row) {
                            *a = $f(*a, v.to_f64());
                        }
                    };
                }
                match op {
                    ReduceOp::Sum | ReduceOp::Mean => cols!(|a: f64, v: f64| a + v),
                    ReduceOp::Prod => cols!(|a: f64, v: f64| a * v),
                    ReduceOp::Max => cols!(nan_max),
                    ReduceOp::Min => cols!(nan_min),
                }
            }
            for (j, &a) in acc.iter().enumerate() {
                // SAFETY: y holds outer * inner elements.
                unsafe { *yp.get().add(o * inner + c0 + j) = T::from_f64(finish(op, a, r)) };
            }
        }
    });
}

/// `v` beats `best` for argmax: larger, or NaN (the first NaN wins).
#[inline(always)]
fn beats(v: f64, best: f64) -> bool {
    !best.is_nan() && (v.is_nan() || v > best)
}

fn argmax_typed<T: WideElem>(x: DevPtr, y: DevPtr, d: &ReduceDesc) {
    let xp = SendPtr(x.as_mut_ptr::<T>());
    let yp = SendPtr(y.as_mut_ptr::<i64>());
    let ReduceDesc { outer, r, inner } = *d;
    let groups = outer * inner;
    for_range(groups, (GRAIN / r.max(1)).max(1), move |g0, g1| {
        for g in g0..g1 {
            let (o, i) = (g / inner, g % inner);
            // SAFETY: group (o, i) has r elements at stride inner.
            unsafe {
                let base = xp.get().add(o * r * inner + i);
                let mut best = (*base).to_f64();
                let mut bi = 0usize;
                for k in 1..r {
                    let v = (*base.add(k * inner)).to_f64();
                    if beats(v, best) {
                        best = v;
                        bi = k;
                    }
                }
                *yp.get().add(g) = bi as i64;
            }
        }
    });
}

fn backward_typed<T: WideElem>(op: ReduceOp, x: DevPtr, dy: DevPtr, dx: DevPtr, d: &ReduceDesc) {
    let xp = SendPtr(x.as_mut_ptr::<T>());
    let dyp = SendPtr(dy.as_mut_ptr::<T>());
    let dxp = SendPtr(dx.as_mut_ptr::<T>());
    let ReduceDesc { outer, r, inner } = *d;
    let groups = outer * inner;
    for_range(groups, (GRAIN / r.max(1)).max(1), move |g0, g1| {
        for g in g0..g1 {
            let (o, i) = (g / inner, g % inner);
            let off = o * r * inner + i;
            // SAFETY: group (o, i) has r elements at stride inner in x and dx; dy has
            // outer * inner elements.
            unsafe {
                let xv = |k: usize| (*xp.get().add(off + k * inner)).to_f64();
                let put = |k: usize, v: f64| *dxp.get().add(off + k * inner) = T::from_f64(v);
                let g_up = (*dyp.get().add(g)).to_f64();
                match op {
                    ReduceOp::Sum => (0..r).for_each(|k| put(k, g_up)),
                    ReduceOp::Mean => (0..r).for_each(|k| put(k, g_up / r as f64)),
                    ReduceOp::Max | ReduceOp::Min => {
                        let y = (0..r).fold(init(op), |a, k| combine(op, a, xv(k)));
                        let cnt = (0..r).filter(|&k| xv(k) == y).count() as f64;
                        (0..r).for_each(|k| put(k, if xv(k) == y { g_up / cnt } else { 0.0 }));
                    }
                    ReduceOp::Prod => {
                        let (mut zeros, mut p) = (0usize, 1.0f64);
                        for k in 0..r {
                            let v = xv(k);
                            if v == 0.0 {
                                zeros += 1;
                            } else {
                                p *= v;
                            }
                        }
                        for k in 0..r {
                            let v = xv(k);
                            let gk = match zeros {
                                0 => g_up * p / v,
                                1 if v == 0.0 => g_up * p,
                                _ => 0.0,
                            };
                            put(k, gk);
                        }
                    }
                }
            }
        }
    });
}

impl ReduceOps for CpuDevice {
    fn reduce(
        &self,
        _s: RawStream,
        op: ReduceOp,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        desc: &ReduceDesc,
    ) -> Result<()> {
        with_floating_type!(dtype, op.name(), T => reduce_typed::<T>(op, x, y, desc));
        Ok(())
    }

    fn argmax(
        &self,
        _s: RawStream,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        desc: &ReduceDesc,
    ) -> Result<()> {
        with_floating_type!(dtype, "argmax", T => argmax_typed::<T>(x, y, desc));
        Ok(())
    }

    fn reduce_backward(
        &self,
        _s: RawStream,
        op: ReduceOp,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        desc: &ReduceDesc,
    ) -> Result<()> {
        with_floating_type!(dtype, op.name(), T => backward_typed::<T>(op, x, dy, dx, desc));
        Ok(())
    }

    fn reduce_int(
        &self,
        _s: RawStream,
        op: ReduceOp,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        d: &ReduceDesc,
    ) -> Result<()> {
        let prod = match op {
            ReduceOp::Sum => false,
            ReduceOp::Prod => true,
            other => {
                return Err(crate::Error::invalid(format!(
                    "reduce_int: {} is not sum or prod",
                    other.name()
                )));
            }
        };
        match dtype {
            DType::I32 => reduce_int_typed::<i32>(prod, x, y, d),
            DType::I64 => reduce_int_typed::<i64>(prod, x, y, d),
            other => {
                return Err(crate::Error::dtype(format!(
                    "reduce_int: dtype {other} is not i32 or i64"
                )));
            }
        }
        Ok(())
    }
}

/// An integer element reduced in wrapping i64 arithmetic (modular, so truncating the result
/// to i32 equals wrapping in i32 throughout).
trait IntElem: Copy + Send + Sync + 'static {
    fn to_i64(self) -> i64;
    fn from_i64(v: i64) -> Self;
}
impl IntElem for i32 {
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_i64(v: i64) -> Self {
        v as i32
    }
}
impl IntElem for i64 {
    fn to_i64(self) -> i64 {
        self
    }
    fn from_i64(v: i64) -> Self {
        v
    }
}

fn reduce_int_typed<T: IntElem>(prod: bool, x: DevPtr, y: DevPtr, d: &ReduceDesc) {
    let xp = SendPtr(x.as_mut_ptr::<T>());
    let yp = SendPtr(y.as_mut_ptr::<T>());
    let ReduceDesc { outer, r, inner } = *d;
    for_range(outer * inner, (GRAIN / r.max(1)).max(1), move |g0, g1| {
        for g in g0..g1 {
            let (o, i) = (g / inner, g % inner);
            let mut a: i64 = if prod { 1 } else { 0 };
            for k in 0..r {
                // SAFETY: x is [outer, r, inner].
                let v = unsafe { *xp.get().add((o * r + k) * inner + i) }.to_i64();
                a = if prod {
                    a.wrapping_mul(v)
                } else {
                    a.wrapping_add(v)
                };
            }
            // SAFETY: y holds outer * inner elements.
            unsafe { *yp.get().add(g) = T::from_i64(a) };
        }
    });
}
