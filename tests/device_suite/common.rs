//! Shared helpers of the device suite: the device list, random inputs, poisoned outputs, and
//! comparisons with the tolerances of DESIGN §8.
#![allow(dead_code)]

use libtest_mimic::Failed;
use rocm_backend::device::Device;
use rocm_backend::runtime::context::{self, DeviceSpec};
use rocm_backend::runtime::{DType, Tensor};
use std::sync::Arc;

pub type Dev = Arc<dyn Device>;
pub type TestResult = Result<(), Failed>;
pub type Body = fn(&Dev) -> TestResult;

/// A device kind the suite runs on: present, or absent with the reason.
pub struct SuiteDevice {
    pub label: &'static str,
    pub device: Option<Dev>,
    pub skip_reason: Option<String>,
}

/// cpu, rocm:0 and cuda:0, each present or with the reason it is not.
pub fn devices() -> Vec<SuiteDevice> {
    let mut v = vec![SuiteDevice {
        label: "cpu",
        device: Some(context::device(DeviceSpec::Cpu).expect("the CPU device exists")),
        skip_reason: None,
    }];
    for (label, spec) in [("rocm", DeviceSpec::Rocm(0)), ("cuda", DeviceSpec::Cuda(0))] {
        match context::device(spec) {
            Ok(d) => v.push(SuiteDevice {
                label,
                device: Some(d),
                skip_reason: None,
            }),
            Err(e) => v.push(SuiteDevice {
                label,
                device: None,
                skip_reason: Some(e.message),
            }),
        }
    }
    v
}

/// Bytes of free device memory the `large_` bodies need (two 8 GiB tensors and change).
pub const LARGE_BYTES: u64 = 20 << 30;

/// Why the `large_` bodies (tensors over 2^31 bytes) do not run on `d`: the CPU device
/// (memory is not the point there, and a CPU run would take minutes) or a GPU with less than
/// [`LARGE_BYTES`] free; `None` where they run.
pub fn large_skip_reason(d: &SuiteDevice) -> Option<String> {
    let dev = d.device.as_ref()?;
    if dev.kind() == rocm_backend::device::DeviceKind::Cpu {
        return Some("they need a GPU (tensors over 2^31 bytes are GPU indexing tests)".into());
    }
    match dev.info() {
        Ok(i) if i.free_memory >= LARGE_BYTES => None,
        Ok(i) => Some(format!(
            "{} has {} MiB free, they need {} MiB",
            i.name,
            i.free_memory >> 20,
            LARGE_BYTES >> 20
        )),
        Err(e) => Some(format!("device info failed: {}", e.message)),
    }
}

/// Turns a library error into a test failure.
pub fn ok<T>(r: rocm_backend::Result<T>) -> Result<T, Failed> {
    r.map_err(|e| Failed::from(format!("{:?}: {}", e.kind, e.message)))
}

pub fn cpu() -> Dev {
    context::device(DeviceSpec::Cpu).unwrap()
}

/// Random normal input on `dev`.
pub fn randn(dev: &Dev, shape: &[usize], dtype: DType, seed: u64) -> Result<Tensor, Failed> {
    ok(Tensor::randn(dev.clone(), shape, dtype, seed))
}

/// A tensor from f64 values (converted to `dtype`).
pub fn from_f64(dev: &Dev, vals: &[f64], shape: &[usize], dtype: DType) -> Result<Tensor, Failed> {
    let mut bytes = vec![0u8; vals.len() * dtype.size()];
    for (i, v) in vals.iter().enumerate() {
        // SAFETY: `bytes` holds vals.len() elements of dtype.
        unsafe { rocm_backend::device::cpu::elem::store_f64(dtype, bytes.as_mut_ptr(), i, *v) };
    }
    ok(Tensor::from_bytes(dev.clone(), &bytes, shape, dtype))
}

/// An output tensor whose every element is poisoned (NaN for floats, a sentinel for
/// integers) so that an element the op forgets to write fails the comparison.
pub fn poisoned(dev: &Dev, shape: &[usize], dtype: DType) -> Result<Tensor, Failed> {
    let t = ok(Tensor::empty(dev.clone(), shape, dtype))?;
    let v = if dtype.is_float() {
        f64::NAN
    } else {
        -123_456_789.0
    };
    ok(dev.fill(Default::default(), dtype, t.ptr(), t.numel(), v))?;
    Ok(t)
}

pub fn values(t: &Tensor) -> Result<Vec<f64>, Failed> {
    ok(t.to_f64_vec())
}

/// Relative tolerance of DESIGN §8 for a dtype.
pub fn rtol(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 1e-5,
        DType::F16 | DType::BF16 => 1e-2,
        _ => 0.0,
    }
}

/// Rounds a reference value to what `dtype` can hold (so f16/bf16 inputs compare fairly).
pub fn round_to(dtype: DType, v: f64) -> f64 {
    match dtype {
        DType::F16 => half::f16::from_f64(v).to_f64(),
        DType::BF16 => half::bf16::from_f64(v).to_f64(),
        DType::F32 => v as f32 as f64,
        _ => v,
    }
}

/// Checks `got` against `want` elementwise: |got - want| <= atol + rtol * |want|, with
/// NaN matching only NaN. `what` names the check in the failure message.
pub fn assert_close(what: &str, got: &[f64], want: &[f64], rtol: f64, atol: f64) -> TestResult {
    if got.len() != want.len() {
        return Err(format!("{what}: {} values, expected {}", got.len(), want.len()).into());
    }
    let mut worst: Option<(usize, f64)> = None;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let bad = if w.is_nan() {
            !g.is_nan()
        } else if w.is_infinite() {
            g != w
        } else {
            let err = (g - w).abs();
            err.is_nan() || err > atol + rtol * w.abs()
        };
        if bad {
            let err = (g - w).abs();
            if worst.is_none_or(|(_, e)| err > e || err.is_nan()) {
                worst = Some((i, err));
            }
        }
    }
    match worst {
        None => Ok(()),
        Some((i, _)) => Err(format!(
            "{what}: element {i}: got {}, expected {} (rtol {rtol}, atol {atol})",
            got[i], want[i]
        )
        .into()),
    }
}

/// Checks with the dtype's tolerance.
pub fn assert_close_dtype(what: &str, got: &[f64], want: &[f64], dtype: DType) -> TestResult {
    let atol = match dtype {
        DType::F32 => 1e-6,
        DType::F16 | DType::BF16 => 1e-2,
        _ => 0.0,
    };
    assert_close(what, got, want, rtol(dtype), atol)
}

pub fn ensure(cond: bool, msg: impl Into<String>) -> TestResult {
    if cond { Ok(()) } else { Err(msg.into().into()) }
}

/// The float dtypes of the contract.
pub const FLOATS: [DType; 3] = [DType::F32, DType::F16, DType::BF16];

/// A one-batch column-major GEMM descriptor, `C (m×n) = alpha·op(A)·op(B) + beta·C`, over the
/// tensors' pointers (`ta` / `tb`: A / B transposed), for the raw-GEMM tests.
#[allow(clippy::too_many_arguments)]
pub fn raw_gemm_desc(
    dtype: DType,
    (m, n, k): (usize, usize, usize),
    (ta, tb): (bool, bool),
    (alpha, beta): (f32, f32),
    (a, lda): (&Tensor, usize),
    (b, ldb): (&Tensor, usize),
    (c, ldc): (&Tensor, usize),
) -> rocm_backend::device::GemmDesc {
    use rocm_backend::device::Transpose;
    let t = |x: bool| if x { Transpose::Yes } else { Transpose::No };
    rocm_backend::device::GemmDesc {
        dtype,
        trans_a: t(ta),
        trans_b: t(tb),
        m,
        n,
        k,
        alpha,
        a: a.ptr(),
        lda,
        b: b.ptr(),
        ldb,
        beta,
        c: c.ptr(),
        ldc,
        batch: 1,
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
    }
}

/// `(op(A)·op(B))[i, j]` in f64 for column-major `va` (lda) and `vb` (ldb) of depth `k`.
#[allow(clippy::too_many_arguments)]
pub fn gemm_ref_at(
    (va, lda, ta): (&[f64], usize, bool),
    (vb, ldb, tb): (&[f64], usize, bool),
    k: usize,
    i: usize,
    j: usize,
) -> f64 {
    (0..k)
        .map(|p| {
            let av = if ta { va[p + i * lda] } else { va[i + p * lda] };
            let bv = if tb { vb[j + p * ldb] } else { vb[p + j * ldb] };
            av * bv
        })
        .sum()
}
