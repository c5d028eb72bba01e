//! Elementwise ops on the CPU: unary maps and broadcasting binary ops with their backwards,
//! comparisons, `where`, the fused add+relu and mul+add, fills, casts and random fills.

use super::CpuDevice;
use super::elem::{FloatElem, load_f64, store_f64};
use super::par::{SendPtr, for_range};
use crate::base::dtype::DType;
use crate::base::shape::BroadcastLayout;
use crate::device::elementwise::ElementwiseOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp, clamp_f32, relu_f32};
use crate::ops::random;
use crate::{Error, Result, with_float_type};

/// Elements per parallel task for cheap elementwise work.
const GRAIN: usize = 1 << 16;

fn unary_typed<T: FloatElem>(op: UnaryOp, x: DevPtr, y: DevPtr, n: usize) {
    let xp = SendPtr(x.as_mut_ptr::<T>());
    let yp = SendPtr(y.as_mut_ptr::<T>());
    for_range(n, GRAIN, move |s, e| {
        // SAFETY: x and y hold n elements (caller's contract); chunks are disjoint.
        let ys = unsafe { std::slice::from_raw_parts_mut(yp.get().add(s), e - s) };
        // In place (x == y) the loop reads and writes one slice; two slices over the same
        // memory would be unsound, and the compiler's overlap check sent them to a scalar
        // loop (3x slower).
        let xs = if std::ptr::eq(xp.get(), yp.get()) {
            None
        } else {
            // SAFETY: as above; x does not overlap y (tensors alias whole or not at all).
            Some(unsafe { std::slice::from_raw_parts(xp.get().add(s) as *const T, e - s) })
        };
        macro_rules! map {
            ($f:expr) => {
                match xs {
                    Some(xs) => {
                        for (o, &v) in ys.iter_mut().zip(xs) {
                            *o = T::from_f32($f(v.to_f32()));
                        }
                    }
                    None => {
                        for o in ys.iter_mut() {
                            *o = T::from_f32($f(o.to_f32()));
                        }
                    }
                }
            };
        }
        // Specialize the cheap ops so they vectorize; the rest go through apply_f32.
        match op {
            UnaryOp::Relu => map!(relu_f32),
            UnaryOp::Neg => map!(|v: f32| -v),
            UnaryOp::Abs => map!(|v: f32| v.abs()),
            UnaryOp::Sqrt => map!(|v: f32| v.sqrt()),
            UnaryOp::Clamp { min, max } => map!(|v: f32| clamp_f32(v, min, max)),
            op => map!(|v: f32| op.apply_f32(v)),
        }
    });
}

/// Walks the output of `layout` (which has at least one element) in runs along its last
/// dimension, in parallel: `f(out_offset, operand_offsets, run_length, last_dim_strides)`.
/// A single-dimension layout is split across threads along that dimension.
pub(crate) fn for_rows<const K: usize>(
    layout: &BroadcastLayout,
    f: impl Fn(usize, [usize; K], usize, [usize; K]) + Sync,
) {
    let nd = layout.shape.len();
    if nd == 0 {
        f(0, [0; K], 1, [0; K]);
        return;
    }
    let inner = layout.shape[nd - 1];
    let istr: [usize; K] = std::array::from_fn(|k| layout.strides[k][nd - 1]);
    if nd == 1 {
        for_range(inner, GRAIN, |s, e| {
            f(s, std::array::from_fn(|k| s * istr[k]), e - s, istr)
        });
        return;
    }
    let rows = layout.numel() / inner.max(1);
    let grain_rows = (GRAIN / inner.max(1)).max(1);
    for_range(rows, grain_rows, |r0, r1| {
        for r in r0..r1 {
            let mut offs = [0usize; K];
            let mut rem = r;
            for d in (0..nd - 1).rev() {
                let i = rem % layout.shape[d];
                rem /= layout.shape[d];
                for (k, o) in offs.iter_mut().enumerate() {
                    *o += i * layout.strides[k][d];
                }
            }
            f(r * inner, offs, inner, istr);
        }
    });
}

#[inline(always)]
fn binary_typed<T: Copy + Send + Sync + 'static>(
    f: impl Fn(T, T) -> T + Sync + Copy,
    a: DevPtr,
    b: DevPtr,
    out: DevPtr,
    layout: &BroadcastLayout,
) {
    let ap = SendPtr(a.as_mut_ptr::<T>());
    let bp = SendPtr(b.as_mut_ptr::<T>());
    let op = SendPtr(out.as_mut_ptr::<T>());
    for_rows::<2>(layout, move |o_off, [oa, ob], inner, [ia, ib]| {
        // SAFETY: offsets stay inside the operands described by `layout`; runs are disjoint.
        unsafe {
            let o = std::slice::from_raw_parts_mut(op.get().add(o_off), inner);
            let pa = ap.get().add(oa);
            let pb = bp.get().add(ob);
            // In place over a full-size operand (out == a or out == b, the same run): one
            // slice read and written (see unary_typed).
            let in_a = ia == 1 && std::ptr::eq(pa, o.as_ptr());
            let in_b = ib == 1 && std::ptr::eq(pb, o.as_ptr());
            match (ia, ib) {
                (1, 1) if in_a && in_b => {
                    for o in o.iter_mut() {
                        *o = f(*o, *o);
                    }
                }
                (1, 1) if in_a => {
                    let xb = std::slice::from_raw_parts(pb, inner);
                    for (o, &y) in o.iter_mut().zip(xb) {
                        *o = f(*o, y);
                    }
                }
                (1, 1) if in_b => {
                    let xa = std::slice::from_raw_parts(pa, inner);
                    for (o, &x) in o.iter_mut().zip(xa) {
                        *o = f(x, *o);
                    }
                }
                (1, 0) if in_a => {
                    let y = *pb;
                    for o in o.iter_mut() {
                        *o = f(*o, y);
                    }
                }
                (0, 1) if in_b => {
                    let x = *pa;
                    for o in o.iter_mut() {
                        *o = f(x, *o);
                    }
                }
                (1, 1) => {
                    let xa = std::slice::from_raw_parts(pa, inner);
                    let xb = std::slice::from_raw_parts(pb, inner);
                    for ((o, &x), &y) in o.iter_mut().zip(xa).zip(xb) {
                        *o = f(x, y);
                    }
                }
                (1, 0) => {
                    let xa = std::slice::from_raw_parts(pa, inner);
                    let y = *pb;
                    for (o, &x) in o.iter_mut().zip(xa) {
                        *o = f(x, y);
                    }
                }
                (0, 1) => {
                    let x = *pa;
                    let xb = std::slice::from_raw_parts(pb, inner);
                    for (o, &y) in o.iter_mut().zip(xb) {
                        *o = f(x, y);
                    }
                }
                _ => {
                    for (j, o) in o.iter_mut().enumerate() {
                        *o = f(*pa.add(j * ia), *pb.add(j * ib));
                    }
                }
            }
        }
    });
}

/// Dispatches a float binary op to a loop specialized for that op (so each loop is a
/// straight-line, vectorizable body), computing in f32.
fn binary_float<T: FloatElem>(
    op: BinaryOp,
    a: DevPtr,
    b: DevPtr,
    out: DevPtr,
    l: &BroadcastLayout,
) {
    macro_rules! go {
        ($f:expr) => {
            binary_typed::<T>(
                #[inline(always)]
                move |x: T, y: T| T::from_f32($f(x.to_f32(), y.to_f32())),
                a,
                b,
                out,
                l,
            )
        };
    }
    match op {
        BinaryOp::Add => go!(|x: f32, y: f32| x + y),
        BinaryOp::Sub => go!(|x: f32, y: f32| x - y),
        BinaryOp::Mul => go!(|x: f32, y: f32| x * y),
        BinaryOp::Div => go!(|x: f32, y: f32| x / y),
        BinaryOp::Pow => go!(|x: f32, y: f32| x.powf(y)),
        BinaryOp::Maximum => go!(|x: f32, y: f32| if x.is_nan() || y.is_nan() {
            f32::NAN
        } else if x > y {
            x
        } else {
            y
        }),
        BinaryOp::Minimum => go!(|x: f32, y: f32| if x.is_nan() || y.is_nan() {
            f32::NAN
        } else if x < y {
            x
        } else {
            y
        }),
    }
}

fn unary_backward_typed<T: FloatElem>(op: UnaryOp, x: DevPtr, dy: DevPtr, dx: DevPtr, n: usize) {
    let xp = SendPtr(x.as_mut_ptr::<T>());
    let dyp = SendPtr(dy.as_mut_ptr::<T>());
    let dxp = SendPtr(dx.as_mut_ptr::<T>());
    for_range(n, GRAIN, move |s, e| {
        // SAFETY: all three hold n elements; dx may alias x or dy element for element
        // (each element is read before it is written).
        unsafe {
            for i in s..e {
                let v = (*xp.get().add(i)).to_f32();
                let g = (*dyp.get().add(i)).to_f32();
                *dxp.get().add(i) = T::from_f32(match op {
                    UnaryOp::Relu => {
                        if v <= 0.0 {
                            0.0
                        } else {
                            g
                        }
                    }
                    op => op.grad_f32(v, g),
                });
            }
        }
    });
}

#[allow(clippy::too_many_arguments)]
fn binary_backward_typed<T: FloatElem>(
    op: BinaryOp,
    a: DevPtr,
    b: DevPtr,
    dy: DevPtr,
    ga: DevPtr,
    gb: DevPtr,
    layout: &BroadcastLayout,
) {
    let (ap, bp, dyp) = (
        SendPtr(a.as_mut_ptr::<T>()),
        SendPtr(b.as_mut_ptr::<T>()),
        SendPtr(dy.as_mut_ptr::<T>()),
    );
    let (gap, gbp) = (SendPtr(ga.as_mut_ptr::<T>()), SendPtr(gb.as_mut_ptr::<T>()));
    let (wa, wb) = (!ga.is_null(), !gb.is_null());
    for_rows::<3>(layout, move |o, [oa, ob, od], len, [ia, ib, id]| {
        for j in 0..len {
            // SAFETY: offsets stay inside the operands `layout` describes.
            unsafe {
                let (x, y, g) = (
                    (*ap.get().add(oa + j * ia)).to_f32(),
                    (*bp.get().add(ob + j * ib)).to_f32(),
                    (*dyp.get().add(od + j * id)).to_f32(),
                );
                let (da, db) = op.grad_f32(x, y, g);
                if wa {
                    *gap.get().add(o + j) = T::from_f32(da);
                }
                if wb {
                    *gbp.get().add(o + j) = T::from_f32(db);
                }
            }
        }
    });
}

/// f64 binary backward: the float64 reference formulas ([`BinaryOp::grad_reference`]).
fn binary_backward_f64(
    op: BinaryOp,
    a: DevPtr,
    b: DevPtr,
    dy: DevPtr,
    ga: DevPtr,
    gb: DevPtr,
    layout: &BroadcastLayout,
) {
    let (ap, bp, dyp) = (
        SendPtr(a.as_mut_ptr::<f64>()),
        SendPtr(b.as_mut_ptr::<f64>()),
        SendPtr(dy.as_mut_ptr::<f64>()),
    );
    let (gap, gbp) = (
        SendPtr(ga.as_mut_ptr::<f64>()),
        SendPtr(gb.as_mut_ptr::<f64>()),
    );
    let (wa, wb) = (!ga.is_null(), !gb.is_null());
    for_rows::<3>(layout, move |o, [oa, ob, od], len, [ia, ib, id]| {
        for j in 0..len {
            // SAFETY: offsets stay inside the operands `layout` describes.
            unsafe {
                let (da, db) = op.grad_reference(
                    *ap.get().add(oa + j * ia),
                    *bp.get().add(ob + j * ib),
                    *dyp.get().add(od + j * id),
                );
                if wa {
                    *gap.get().add(o + j) = da;
                }
                if wb {
                    *gbp.get().add(o + j) = db;
                }
            }
        }
    });
}

fn compare_typed<T: Copy + PartialOrd + Send + Sync + 'static, U: PartialOrd>(
    op: CompareOp,
    conv: impl Fn(T) -> U + Sync + Copy,
    a: DevPtr,
    b: DevPtr,
    out: DevPtr,
    layout: &BroadcastLayout,
) {
    let (ap, bp) = (SendPtr(a.as_mut_ptr::<T>()), SendPtr(b.as_mut_ptr::<T>()));
    let op_ = SendPtr(out.as_mut_ptr::<u8>());
    for_rows::<2>(layout, move |o, [oa, ob], len, [ia, ib]| {
        // SAFETY: offsets stay inside the operands `layout` describes.
        unsafe {
            let out = std::slice::from_raw_parts_mut(op_.get().add(o), len);
            for (j, r) in out.iter_mut().enumerate() {
                let x = conv(*ap.get().add(oa + j * ia));
                let y = conv(*bp.get().add(ob + j * ib));
                *r = op.apply(x, y) as u8;
            }
        }
    });
}

fn where_typed<T: Copy + Send + Sync + 'static>(
    cond: DevPtr,
    a: DevPtr,
    b: DevPtr,
    out: DevPtr,
    layout: &BroadcastLayout,
) {
    let cp = SendPtr(cond.as_mut_ptr::<u8>());
    let (ap, bp) = (SendPtr(a.as_mut_ptr::<T>()), SendPtr(b.as_mut_ptr::<T>()));
    let op = SendPtr(out.as_mut_ptr::<T>());
    for_rows::<3>(layout, move |o, [oc, oa, ob], len, [ic, ia, ib]| {
        // SAFETY: offsets stay inside the operands `layout` describes.
        unsafe {
            let out = std::slice::from_raw_parts_mut(op.get().add(o), len);
            if (ic, ia, ib) == (1, 1, 1) {
                let c = std::slice::from_raw_parts(cp.get().add(oc), len);
                let x = std::slice::from_raw_parts(ap.get().add(oa), len);
                let y = std::slice::from_raw_parts(bp.get().add(ob), len);
                for (((r, &c), &x), &y) in out.iter_mut().zip(c).zip(x).zip(y) {
                    *r = if c != 0 { x } else { y };
                }
            } else {
                for (j, r) in out.iter_mut().enumerate() {
                    *r = if *cp.get().add(oc + j * ic) != 0 {
                        *ap.get().add(oa + j * ia)
                    } else {
                        *bp.get().add(ob + j * ib)
                    };
                }
            }
        }
    });
}

/// `out = (a op b) ? x : y` in one pass (no bool temporary). Inputs are read through raw
/// pointers element by element, so `out` may be any of them (in place).
#[allow(clippy::too_many_arguments)]
fn where_compare_typed<T: Copy + Send + Sync + 'static, U: PartialOrd>(
    op: CompareOp,
    conv: impl Fn(T) -> U + Sync + Copy,
    a: DevPtr,
    b: DevPtr,
    x: DevPtr,
    y: DevPtr,
    out: DevPtr,
    layout: &BroadcastLayout,
) {
    let (ap, bp) = (SendPtr(a.as_mut_ptr::<T>()), SendPtr(b.as_mut_ptr::<T>()));
    let (xp, yp) = (SendPtr(x.as_mut_ptr::<T>()), SendPtr(y.as_mut_ptr::<T>()));
    let outp = SendPtr(out.as_mut_ptr::<T>());
    for_rows::<4>(layout, move |o, [oa, ob, ox, oy], len, [ia, ib, ix, iy]| {
        for j in 0..len {
            // SAFETY: offsets stay inside the operands `layout` describes; element j of the
            // run is read before it is written.
            unsafe {
                let c = op.apply(
                    conv(*ap.get().add(oa + j * ia)),
                    conv(*bp.get().add(ob + j * ib)),
                );
                let v = if c {
                    *xp.get().add(ox + j * ix)
                } else {
                    *yp.get().add(oy + j * iy)
                };
                *outp.get().add(o + j) = v;
            }
        }
    });
}

/// Walks a broadcast layout of `ops` inputs row by row (the last dimension inner), calling
/// `f(out_index, input_offsets)` for each output element.
fn walk<const K: usize>(layout: &BroadcastLayout, f: impl Fn(usize, [usize; K]) + Sync) {
    let n = layout.numel();
    let nd = layout.shape.len();
    if nd == 0 {
        f(0, [0; K]);
        return;
    }
    let inner = layout.shape[nd - 1];
    let rows = n / inner.max(1);
    let f = &f;
    for_range(rows, (1 << 15) / inner.max(1) + 1, move |r0, r1| {
        for r in r0..r1 {
            let mut off = [0usize; K];
            let mut rem = r;
            for d in (0..nd - 1).rev() {
                let i = rem % layout.shape[d];
                rem /= layout.shape[d];
                for (k, o) in off.iter_mut().enumerate() {
                    *o += i * layout.strides[k][d];
                }
            }
            for j in 0..inner {
                let mut o = off;
                for (k, v) in o.iter_mut().enumerate() {
                    *v += j * layout.strides[k][nd - 1];
                }
                f(r * inner + j, o);
            }
        }
    });
}

impl ElementwiseOps for CpuDevice {
    fn unary(
        &self,
        _s: RawStream,
        op: UnaryOp,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        n: usize,
    ) -> Result<()> {
        if dtype == DType::F64 {
            // f64 evaluates the float64 reference formulas.
            let (xp, yp) = (
                SendPtr(x.as_mut_ptr::<f64>()),
                SendPtr(y.as_mut_ptr::<f64>()),
            );
            for_range(n, GRAIN, move |s, e| {
                for i in s..e {
                    // SAFETY: x and y hold n elements (they may be the same buffer).
                    unsafe { *yp.get().add(i) = op.reference(*xp.get().add(i)) };
                }
            });
            return Ok(());
        }
        with_float_type!(dtype, op.name(), T => unary_typed::<T>(op, x, y, n));
        Ok(())
    }

    fn binary(
        &self,
        _s: RawStream,
        op: BinaryOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        match dtype {
            DType::F32 => binary_float::<f32>(op, a, b, out, layout),
            DType::F16 => binary_float::<half::f16>(op, a, b, out, layout),
            DType::BF16 => binary_float::<half::bf16>(op, a, b, out, layout),
            DType::I32 => binary_typed::<i32>(
                move |x, y| op.apply_i64(x as i64, y as i64) as i32,
                a,
                b,
                out,
                layout,
            ),
            DType::I64 => binary_typed::<i64>(move |x, y| op.apply_i64(x, y), a, b, out, layout),
            DType::F64 => binary_typed::<f64>(move |x, y| op.reference(x, y), a, b, out, layout),
            DType::I8 => binary_typed::<i8>(
                move |x, y| op.apply_i64(x as i64, y as i64) as i8,
                a,
                b,
                out,
                layout,
            ),
            DType::U8 => binary_typed::<u8>(
                move |x, y| op.apply_i64(x as i64, y as i64) as u8,
                a,
                b,
                out,
                layout,
            ),
            DType::I16 => binary_typed::<i16>(
                move |x, y| op.apply_i64(x as i64, y as i64) as i16,
                a,
                b,
                out,
                layout,
            ),
            DType::Bool => {
                return Err(Error::dtype(format!(
                    "{}: bool tensors are not supported",
                    op.name()
                )));
            }
        }
        Ok(())
    }

    fn fill(&self, _s: RawStream, dtype: DType, dst: DevPtr, n: usize, value: f64) -> Result<()> {
        // Encode one element, then replicate its bytes.
        let mut one = [0u8; 8];
        // SAFETY: `one` holds 8 bytes, enough for any dtype.
        unsafe { store_f64(dtype, one.as_mut_ptr(), 0, value) };
        let es = dtype.size();
        let d = SendPtr(dst.as_mut_ptr::<u8>());
        for_range(n, GRAIN, move |s, e| {
            for i in s..e {
                // SAFETY: dst holds n elements.
                unsafe { std::ptr::copy_nonoverlapping(one.as_ptr(), d.get().add(i * es), es) };
            }
        });
        Ok(())
    }

    fn cast(
        &self,
        _s: RawStream,
        src_dtype: DType,
        src: DevPtr,
        dst_dtype: DType,
        dst: DevPtr,
        n: usize,
    ) -> Result<()> {
        let sp = SendPtr(src.as_mut_ptr::<u8>());
        let dp = SendPtr(dst.as_mut_ptr::<u8>());
        for_range(n, GRAIN, move |s, e| {
            for i in s..e {
                // SAFETY: both buffers hold n elements of their dtypes.
                unsafe {
                    let v = if src_dtype == DType::I64 && dst_dtype == DType::I64 {
                        *(dp.get() as *mut i64).add(i) = *(sp.get() as *const i64).add(i);
                        continue;
                    } else {
                        load_f64(src_dtype, sp.get(), i)
                    };
                    store_f64(dst_dtype, dp.get(), i, v);
                }
            }
        });
        Ok(())
    }

    fn randn(&self, _s: RawStream, dtype: DType, dst: DevPtr, n: usize, seed: u64) -> Result<()> {
        with_float_type!(dtype, "randn", T => {
            let d = SendPtr(dst.as_mut_ptr::<T>());
            for_range(n, GRAIN, move |s, e| {
                for i in s..e {
                    // SAFETY: dst holds n elements.
                    unsafe { *d.get().add(i) = T::from_f32(random::normal_f32(seed, i as u64)) };
                }
            });
        });
        Ok(())
    }

    fn randint(
        &self,
        _s: RawStream,
        dtype: DType,
        dst: DevPtr,
        n: usize,
        low: i64,
        high: i64,
        seed: u64,
    ) -> Result<()> {
        let d = SendPtr(dst.as_mut_ptr::<u8>());
        match dtype {
            DType::I32 | DType::I64 => {}
            other => {
                return Err(Error::dtype(format!(
                    "randint: dtype {other} is not i32 or i64"
                )));
            }
        }
        for_range(n, GRAIN, move |s, e| {
            for i in s..e {
                let v = random::randint(seed, i as u64, low, high);
                // SAFETY: dst holds n elements of dtype.
                unsafe {
                    if dtype == DType::I32 {
                        *(d.get() as *mut i32).add(i) = v as i32;
                    } else {
                        *(d.get() as *mut i64).add(i) = v;
                    }
                }
            }
        });
        Ok(())
    }

    fn unary_backward(
        &self,
        _s: RawStream,
        op: UnaryOp,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        n: usize,
    ) -> Result<()> {
        if dtype == DType::F64 {
            let (xp, dyp, dxp) = (
                SendPtr(x.as_mut_ptr::<f64>()),
                SendPtr(dy.as_mut_ptr::<f64>()),
                SendPtr(dx.as_mut_ptr::<f64>()),
            );
            for_range(n, GRAIN, move |s, e| {
                for i in s..e {
                    // SAFETY: the three buffers hold n elements.
                    unsafe {
                        *dxp.get().add(i) = op.grad_reference(*xp.get().add(i), *dyp.get().add(i))
                    };
                }
            });
            return Ok(());
        }
        with_float_type!(dtype, op.name(), T => unary_backward_typed::<T>(op, x, dy, dx, n));
        Ok(())
    }

    fn binary_backward(
        &self,
        _s: RawStream,
        op: BinaryOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        dy: DevPtr,
        ga: DevPtr,
        gb: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        if dtype == DType::F64 {
            binary_backward_f64(op, a, b, dy, ga, gb, layout);
            return Ok(());
        }
        with_float_type!(dtype, op.name(), T => binary_backward_typed::<T>(op, a, b, dy, ga, gb, layout));
        Ok(())
    }

    fn compare(
        &self,
        _s: RawStream,
        op: CompareOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        match dtype {
            DType::F32 => compare_typed::<f32, f32>(op, |v| v, a, b, out, layout),
            DType::F16 => compare_typed::<half::f16, f32>(op, |v| v.to_f32(), a, b, out, layout),
            DType::BF16 => compare_typed::<half::bf16, f32>(op, |v| v.to_f32(), a, b, out, layout),
            DType::I32 => compare_typed::<i32, i32>(op, |v| v, a, b, out, layout),
            DType::I64 => compare_typed::<i64, i64>(op, |v| v, a, b, out, layout),
            DType::Bool => compare_typed::<u8, bool>(op, |v| v != 0, a, b, out, layout),
            DType::F64 => compare_typed::<f64, f64>(op, |v| v, a, b, out, layout),
            DType::I8 => compare_typed::<i8, i8>(op, |v| v, a, b, out, layout),
            DType::U8 => compare_typed::<u8, u8>(op, |v| v, a, b, out, layout),
            DType::I16 => compare_typed::<i16, i16>(op, |v| v, a, b, out, layout),
        }
        Ok(())
    }

    fn where_select(
        &self,
        _s: RawStream,
        dtype: DType,
        cond: DevPtr,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        match dtype.size() {
            1 => where_typed::<u8>(cond, a, b, out, layout),
            2 => where_typed::<u16>(cond, a, b, out, layout),
            4 => where_typed::<u32>(cond, a, b, out, layout),
            _ => where_typed::<u64>(cond, a, b, out, layout),
        }
        Ok(())
    }

    fn where_compare(
        &self,
        _s: RawStream,
        op: CompareOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        x: DevPtr,
        y: DevPtr,
        out: DevPtr,
        l: &BroadcastLayout,
    ) -> Result<()> {
        match dtype {
            DType::F32 => where_compare_typed::<f32, f32>(op, |v| v, a, b, x, y, out, l),
            DType::F16 => {
                where_compare_typed::<half::f16, f32>(op, |v| v.to_f32(), a, b, x, y, out, l)
            }
            DType::BF16 => {
                where_compare_typed::<half::bf16, f32>(op, |v| v.to_f32(), a, b, x, y, out, l)
            }
            DType::I32 => where_compare_typed::<i32, i32>(op, |v| v, a, b, x, y, out, l),
            DType::I64 => where_compare_typed::<i64, i64>(op, |v| v, a, b, x, y, out, l),
            DType::Bool => where_compare_typed::<u8, bool>(op, |v| v != 0, a, b, x, y, out, l),
            DType::F64 => where_compare_typed::<f64, f64>(op, |v| v, a, b, x, y, out, l),
            DType::I8 => where_compare_typed::<i8, i8>(op, |v| v, a, b, x, y, out, l),
            DType::U8 => where_compare_typed::<u8, u8>(op, |v| v, a, b, x, y, out, l),
            DType::I16 => where_compare_typed::<i16, i16>(op, |v| v, a, b, x, y, out, l),
        }
        Ok(())
    }

    fn add_relu(
        &self,
        _s: RawStream,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        with_float_type!(dtype, "add_relu", T => {
            let (ap, bp, op) = (SendPtr(a.as_mut_ptr::<T>()), SendPtr(b.as_mut_ptr::<T>()), SendPtr(out.as_mut_ptr::<T>()));
            if layout.is_flat() {
                for_range(layout.numel(), 1 << 15, move |s, e| {
                    for i in s..e {
                        unsafe {
                            let v = (*ap.get().add(i)).to_f32() + (*bp.get().add(i)).to_f32();
                            *op.get().add(i) = T::from_f32(relu_f32(v));
                        }
                    }
                });
            } else {
                walk::<2>(layout, move |i, [oa, ob]| unsafe {
                    let v = (*ap.get().add(oa)).to_f32() + (*bp.get().add(ob)).to_f32();
                    *op.get().add(i) = T::from_f32(relu_f32(v));
                });
            }
        });
        Ok(())
    }

    fn mul_add(
        &self,
        _s: RawStream,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        c: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        with_float_type!(dtype, "mul_add", T => {
            let (ap, bp, cp, op) = (
                SendPtr(a.as_mut_ptr::<T>()),
                SendPtr(b.as_mut_ptr::<T>()),
                SendPtr(c.as_mut_ptr::<T>()),
                SendPtr(out.as_mut_ptr::<T>()),
            );
            if layout.is_flat() {
                for_range(layout.numel(), 1 << 15, move |s, e| {
                    for i in s..e {
                        unsafe {
                            let v = (*ap.get().add(i)).to_f32().mul_add((*bp.get().add(i)).to_f32(), (*cp.get().add(i)).to_f32());
                            *op.get().add(i) = T::from_f32(v);
                        }
                    }
                });
            } else {
                walk::<3>(layout, move |i, [oa, ob, oc]| unsafe {
                    let v = (*ap.get().add(oa)).to_f32().mul_add((*bp.get().add(ob)).to_f32(), (*cp.get().add(oc)).to_f32());
                    *op.get().add(i) = T::from_f32(v);
                });
            }
        });
        Ok(())
    }
}
