//! Element types as the CPU computes with them: floats load to f32 and store back, with the
//! load/store helpers the op families share (whole buffers widened to f32 and narrowed back,
//! single elements through a [`SendPtr`], optional per-column parameters).

use super::par::{SendPtr, for_range};
use crate::device::DevPtr;
use half::{bf16, f16};
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Sub};

/// A floating element the CPU computes with in f32.
pub trait FloatElem: Copy + Send + Sync + 'static {
    fn to_f32(self) -> f32;
    fn from_f32(v: f32) -> Self;
}

impl FloatElem for f32 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        v
    }
}
impl FloatElem for f16 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
}
impl FloatElem for bf16 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        bf16::from_f32(v)
    }
}

/// A floating element as the f64-accumulating families (reductions) see it: f32, f16 and
/// bf16 widen from f32 and store through f32 (one rounding to f32, then to the half format),
/// f64 is itself.
pub trait WideElem: Copy + Send + Sync + 'static {
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

macro_rules! wide_through_f32 {
    ($($t:ty),*) => {$(
        impl WideElem for $t {
            #[inline(always)]
            fn to_f64(self) -> f64 {
                FloatElem::to_f32(self) as f64
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                <$t as FloatElem>::from_f32(v as f32)
            }
        }
    )*};
}
wide_through_f32!(f32, f16, bf16);

impl WideElem for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// The arithmetic of the families that compute f64 in f64 (pooling, attention, rope): f32
/// for f32/f16/bf16, f64 for f64.
pub trait Acc:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + AddAssign
    + MulAssign
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Send
    + Sync
    + 'static
{
    const ZERO: Self;
    const ONE: Self;
    const NEG_INF: Self;
    const NAN: Self;
    fn of(v: f64) -> Self;
    fn wide(self) -> f64;
    fn is_nan(self) -> bool;
    fn max(self, o: Self) -> Self;
    /// `exp(x)` for `x <= 0` (not -inf).
    fn exp_le0(self) -> Self;
}

impl Acc for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const NEG_INF: Self = f32::NEG_INFINITY;
    const NAN: Self = f32::NAN;
    #[inline(always)]
    fn of(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        f32::max(self, o)
    }
    #[inline(always)]
    fn exp_le0(self) -> Self {
        super::softmax::exp_f32(self)
    }
}

impl Acc for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const NEG_INF: Self = f64::NEG_INFINITY;
    const NAN: Self = f64::NAN;
    #[inline(always)]
    fn of(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        f64::max(self, o)
    }
    #[inline(always)]
    fn exp_le0(self) -> Self {
        self.exp()
    }
}

/// A floating element with its [`Acc`] arithmetic (f16/bf16 load to f32; f64 is itself).
pub trait AccElem: Copy + Send + Sync + 'static {
    type A: Acc;
    fn load(self) -> Self::A;
    fn store(v: Self::A) -> Self;
}

macro_rules! acc_through_f32 {
    ($($t:ty),*) => {$(
        impl AccElem for $t {
            type A = f32;
            #[inline(always)]
            fn load(self) -> f32 {
                FloatElem::to_f32(self)
            }
            #[inline(always)]
            fn store(v: f32) -> Self {
                <$t as FloatElem>::from_f32(v)
            }
        }
    )*};
}
acc_through_f32!(f32, f16, bf16);

impl AccElem for f64 {
    type A = f64;
    #[inline(always)]
    fn load(self) -> f64 {
        self
    }
    #[inline(always)]
    fn store(v: f64) -> Self {
        v
    }
}

/// Element `i` of `p` in its arithmetic.
///
/// # Safety
/// `i` inside the buffer.
#[inline(always)]
pub(crate) unsafe fn ld_acc<T: AccElem>(p: SendPtr<T>, i: usize) -> T::A {
    // SAFETY: caller's contract.
    unsafe { (*p.get().add(i)).load() }
}

/// # Safety
/// `i` inside the buffer.
#[inline(always)]
pub(crate) unsafe fn st_acc<T: AccElem>(p: SendPtr<T>, i: usize, v: T::A) {
    // SAFETY: caller's contract.
    unsafe { *p.get().add(i) = T::store(v) }
}

/// [`with_float_type`] with f64 too (`$T` = f64): for the [`WideElem`] families.
#[macro_export]
macro_rules! with_floating_type {
    ($dtype:expr, $op:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::base::dtype::DType::F64 => {
                type $T = f64;
                $body
            }
            d @ ($crate::base::dtype::DType::F32
            | $crate::base::dtype::DType::F16
            | $crate::base::dtype::DType::BF16) => $crate::with_float_type!(d, $op, $T => $body),
            other => {
                return Err($crate::Error::dtype(format!(
                    "{}: dtype {} is not supported (f32, f16, bf16 or f64)",
                    $op, other
                )))
            }
        }
    };
}

/// Runs `$body` with `$T` bound to the Rust type of a floating `$dtype`; other dtypes give
/// a DTYPE_MISMATCH error naming `$op`.
#[macro_export]
macro_rules! with_float_type {
    ($dtype:expr, $op:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::base::dtype::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::base::dtype::DType::F16 => {
                type $T = half::f16;
                $body
            }
            $crate::base::dtype::DType::BF16 => {
                type $T = half::bf16;
                $body
            }
            other => {
                return Err($crate::Error::dtype(format!(
                    "{}: dtype {} is not supported (f32, f16 or bf16)",
                    $op, other
                )))
            }
        }
    };
}

/// Reads element `i` of a buffer of `dtype` as f64 (for casts and tests).
///
/// # Safety
/// `p` must point to at least `i + 1` elements of `dtype`.
pub unsafe fn load_f64(dtype: crate::base::dtype::DType, p: *const u8, i: usize) -> f64 {
    use crate::base::dtype::DType::*;
    // SAFETY: caller's contract.
    unsafe {
        match dtype {
            F32 => *(p as *const f32).add(i) as f64,
            F16 => (*(p as *const f16).add(i)).to_f64(),
            BF16 => (*(p as *const bf16).add(i)).to_f64(),
            I32 => *(p as *const i32).add(i) as f64,
            I64 => *(p as *const i64).add(i) as f64,
            Bool => (*p.add(i) != 0) as u8 as f64,
            F64 => *(p as *const f64).add(i),
            I8 => *(p as *const i8).add(i) as f64,
            U8 => *p.add(i) as f64,
            I16 => *(p as *const i16).add(i) as f64,
        }
    }
}

/// Writes `v` as element `i` of a buffer of `dtype`, with PyTorch's cast rules.
///
/// # Safety
/// `p` must point to at least `i + 1` writable elements of `dtype`.
pub unsafe fn store_f64(dtype: crate::base::dtype::DType, p: *mut u8, i: usize, v: f64) {
    use crate::base::dtype::DType::*;
    // SAFETY: caller's contract.
    unsafe {
        match dtype {
            F32 => *(p as *mut f32).add(i) = v as f32,
            F16 => *(p as *mut f16).add(i) = f16::from_f64(v),
            BF16 => *(p as *mut bf16).add(i) = bf16::from_f64(v),
            I32 => *(p as *mut i32).add(i) = v as i64 as i32,
            I64 => *(p as *mut i64).add(i) = v as i64,
            Bool => *p.add(i) = (v != 0.0) as u8,
            F64 => *(p as *mut f64).add(i) = v,
            I8 => *(p as *mut i8).add(i) = v as i64 as i8,
            U8 => *p.add(i) = v as i64 as u8,
            I16 => *(p as *mut i16).add(i) = v as i64 as i16,
        }
    }
}

/// Reads `n` elements of `T` at `p` as f32.
pub(crate) fn widen<T: FloatElem>(p: DevPtr, n: usize) -> Vec<f32> {
    let src = SendPtr(p.as_mut_ptr::<T>());
    let mut v = vec![0f32; n];
    let dst = SendPtr(v.as_mut_ptr());
    for_range(n, 1 << 15, move |s, e| {
        for i in s..e {
            // SAFETY: both buffers hold n elements; chunks are disjoint.
            unsafe { *dst.get().add(i) = (*src.get().add(i)).to_f32() };
        }
    });
    v
}

/// Writes f32 values as `T` at `p`.
pub(crate) fn narrow<T: FloatElem>(v: &[f32], p: DevPtr) {
    let src = SendPtr(v.as_ptr() as *mut f32);
    let dst = SendPtr(p.as_mut_ptr::<T>());
    for_range(v.len(), 1 << 15, move |s, e| {
        for i in s..e {
            // SAFETY: both buffers hold v.len() elements; chunks are disjoint.
            unsafe { *dst.get().add(i) = T::from_f32(*src.get().add(i)) };
        }
    });
}

#[inline(always)]
pub(crate) unsafe fn ld<T: FloatElem>(p: SendPtr<T>, i: usize) -> f32 {
    // SAFETY: caller's contract (i is inside the buffer).
    unsafe { (*p.get().add(i)).to_f32() }
}

#[inline(always)]
pub(crate) unsafe fn st<T: FloatElem>(p: SendPtr<T>, i: usize, v: f32) {
    // SAFETY: caller's contract.
    unsafe { *p.get().add(i) = T::from_f32(v) }
}

/// Element `i` as f64 ([`WideElem`]: f64 itself, the others through f32).
#[inline(always)]
pub(crate) unsafe fn ld_wide<T: WideElem>(p: SendPtr<T>, i: usize) -> f64 {
    // SAFETY: caller's contract (i is inside the buffer).
    unsafe { (*p.get().add(i)).to_f64() }
}

/// Stores `v` as element `i` ([`WideElem::from_f64`]).
#[inline(always)]
pub(crate) unsafe fn st_wide<T: WideElem>(p: SendPtr<T>, i: usize, v: f64) {
    // SAFETY: caller's contract.
    unsafe { *p.get().add(i) = T::from_f64(v) }
}

pub(crate) fn sp<T>(p: DevPtr) -> SendPtr<T> {
    SendPtr(p.as_mut_ptr::<T>())
}

/// An optional per-column parameter (NULL: `default`).
#[derive(Clone, Copy)]
pub(crate) struct Param<T> {
    pub(crate) p: SendPtr<T>,
    pub(crate) present: bool,
}

impl<T: FloatElem> Param<T> {
    pub(crate) fn new(p: DevPtr) -> Self {
        Param {
            p: sp(p),
            present: !p.is_null(),
        }
    }
    #[inline(always)]
    pub(crate) fn get(&self, i: usize, default: f32) -> f32 {
        if self.present {
            // SAFETY: a present parameter holds the elements the desc says.
            unsafe { ld(self.p, i) }
        } else {
            default
        }
    }
}
