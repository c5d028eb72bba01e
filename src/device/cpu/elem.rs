//! Element types as the CPU computes with them: floats load to f32 and store back.

use half::{bf16, f16};

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
        }
    }
}
