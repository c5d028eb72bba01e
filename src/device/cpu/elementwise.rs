//! Elementwise ops on the CPU.

use super::CpuDevice;
use super::elem::{FloatElem, load_f64, store_f64};
use super::par::{SendPtr, for_range};
use crate::device::elementwise::ElementwiseOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::random;
use crate::ops::shape::BroadcastLayout;
use crate::runtime::dtype::DType;
use crate::{Error, Result, with_float_type};

/// Elements per parallel task for cheap elementwise work.
const GRAIN: usize = 1 << 16;

fn unary_typed<T: FloatElem>(op: UnaryOp, x: DevPtr, y: DevPtr, n: usize) {
    let xp = SendPtr(x.as_mut_ptr::<T>());
    let yp = SendPtr(y.as_mut_ptr::<T>());
    for_range(n, GRAIN, move |s, e| {
        // SAFETY: x and y hold n elements (caller's contract); chunks are disjoint.
        let (xs, ys) = unsafe {
            (
                std::slice::from_raw_parts(xp.get().add(s) as *const T, e - s),
                std::slice::from_raw_parts_mut(yp.get().add(s), e - s),
            )
        };
        macro_rules! map {
            ($f:expr) => {
                for (o, &v) in ys.iter_mut().zip(xs) {
                    *o = T::from_f32($f(v.to_f32()));
                }
            };
        }
        // Specialize the cheap ops so they vectorize; the rest go through apply_f32.
        match op {
            UnaryOp::Relu => map!(|v: f32| v.max(0.0)),
            UnaryOp::Neg => map!(|v: f32| -v),
            UnaryOp::Abs => map!(|v: f32| v.abs()),
            UnaryOp::Sqrt => map!(|v: f32| v.sqrt()),
            UnaryOp::Clamp { min, max } => map!(|v: f32| v.max(min).min(max)),
            op => map!(|v: f32| op.apply_f32(v)),
        }
    });
}

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
    let n = layout.numel();
    let nd = layout.shape.len();
    if nd == 0 {
        // A scalar result.
        // SAFETY: one element each.
        unsafe { *op.get() = f(*ap.get(), *bp.get()) };
        return;
    }
    let inner = layout.shape[nd - 1];
    let (sa, sb) = (&layout.strides[0], &layout.strides[1]);
    let (ia, ib) = (sa[nd - 1], sb[nd - 1]);
    let rows = n / inner.max(1);
    let grain_rows = (GRAIN / inner.max(1)).max(1);
    for_range(rows, grain_rows, move |r0, r1| {
        for r in r0..r1 {
            // Offsets of row r in each input.
            let (mut oa, mut ob, mut rem) = (0usize, 0usize, r);
            for d in (0..nd - 1).rev() {
                let i = rem % layout.shape[d];
                rem /= layout.shape[d];
                oa += i * sa[d];
                ob += i * sb[d];
            }
            // SAFETY: offsets stay inside the operands described by `layout`.
            unsafe {
                let o = std::slice::from_raw_parts_mut(op.get().add(r * inner), inner);
                let pa = ap.get().add(oa);
                let pb = bp.get().add(ob);
                match (ia, ib) {
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
            DType::F32 => binary_typed::<f32>(move |x, y| op.apply_f32(x, y), a, b, out, layout),
            DType::F16 => binary_typed::<half::f16>(
                move |x, y| half::f16::from_f32(op.apply_f32(x.to_f32(), y.to_f32())),
                a,
                b,
                out,
                layout,
            ),
            DType::BF16 => binary_typed::<half::bf16>(
                move |x, y| half::bf16::from_f32(op.apply_f32(x.to_f32(), y.to_f32())),
                a,
                b,
                out,
                layout,
            ),
            DType::I32 => binary_typed::<i32>(
                move |x, y| op.apply_i64(x as i64, y as i64) as i32,
                a,
                b,
                out,
                layout,
            ),
            DType::I64 => binary_typed::<i64>(move |x, y| op.apply_i64(x, y), a, b, out, layout),
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
}
