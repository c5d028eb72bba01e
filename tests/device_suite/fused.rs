//! Fused elementwise programs (`Device::fused_elementwise`, the graph executor's fused
//! chains) against the float64 reference on every device, and on GPUs against the CPU
//! device's fused loop too; and device-graph capture (`Device::graph_capture_*`), which the
//! CPU answers UNSUPPORTED and GPUs run for real.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::base::shape::broadcast_strides;
use rocm_backend::device::cpu::elem::{load_f64, store_f64};
use rocm_backend::device::{DevPtr, DeviceKind, FusedInput, RawStream};
use rocm_backend::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use rocm_backend::ops::fused::{FusedProgram, Instr};
use rocm_backend::runtime::{DType, Tensor};
use std::time::Instant;

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        (
            "fused_programs_match_reference",
            fused_programs_match_reference,
        ),
        ("fused_views_dims_and_empty", fused_views_dims_and_empty),
        (
            "fused_nan_payloads_as_the_cpu",
            fused_nan_payloads_as_the_cpu,
        ),
        ("fused_gelu_chain_bandwidth", fused_gelu_chain_bandwidth),
        ("device_graph_capture_replay", device_graph_capture_replay),
        (
            "device_graph_capture_invalidated",
            device_graph_capture_invalidated,
        ),
    ]
}

/// y = gelu(x * a + b) * c over inputs of `dt`, stored as `out`.
fn gelu_chain(dt: DType, out: DType) -> FusedProgram {
    FusedProgram {
        inputs: vec![dt; 4],
        instrs: vec![
            Instr::Load(0),
            Instr::Load(1),
            Instr::Binary(BinaryOp::Mul, 0, 1),
            Instr::Load(2),
            Instr::Binary(BinaryOp::Add, 2, 3),
            Instr::Unary(UnaryOp::Gelu { tanh: false }, 4),
            Instr::Load(3),
            Instr::Binary(BinaryOp::Mul, 5, 6),
        ],
        out_dtype: out,
    }
}

/// Deterministic values for an input of `dtype` (integers for integer dtypes, 0/1 for
/// bool), as that dtype stores them.
fn host_values(dtype: DType, n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut buf = [0u8; 8];
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            let v = match dtype {
                DType::I32 | DType::I64 => (u * 20.0 - 10.0).round(),
                DType::Bool => (u < 0.5) as u8 as f64,
                _ => u * 6.0 - 3.0,
            };
            // SAFETY: `buf` holds one element of any dtype.
            unsafe {
                store_f64(dtype, buf.as_mut_ptr(), 0, v);
                load_f64(dtype, buf.as_ptr(), 0)
            }
        })
        .collect()
}

/// One input: its shape (broadcast to the output's) or explicit strides over the output, and
/// an offset in elements from the start of its buffer (a misaligned view).
struct In {
    shape: Vec<usize>,
    strides: Option<Vec<usize>>,
    offset: usize,
}

fn inp(shape: &[usize]) -> In {
    In {
        shape: shape.to_vec(),
        strides: None,
        offset: 0,
    }
}

/// Runs `prog` on `dev` and returns the output's values with the f64 reference.
fn run(
    dev: &Dev,
    prog: &FusedProgram,
    ins: &[In],
    out_shape: &[usize],
    seed: u64,
) -> Result<(Vec<f64>, Vec<f64>), libtest_mimic::Failed> {
    let mut keep = Vec::new();
    let mut inputs = Vec::new();
    let mut vals = Vec::new();
    let mut strides = Vec::new();
    for (k, i) in ins.iter().enumerate() {
        let dt = prog.inputs[k];
        let n: usize = i.shape.iter().product();
        let v = host_values(dt, n, seed + k as u64);
        let mut buf = vec![0.0; i.offset];
        buf.extend(&v);
        let t = from_f64(dev, &buf, &[buf.len()], dt)?;
        let st = i
            .strides
            .clone()
            .unwrap_or_else(|| broadcast_strides(&i.shape, out_shape));
        inputs.push(FusedInput {
            ptr: DevPtr(t.ptr().0 + (i.offset * dt.size()) as u64),
            strides: st.clone(),
        });
        keep.push(t);
        vals.push(v);
        strides.push(st);
    }
    let out = poisoned(dev, out_shape, prog.out_dtype)?;
    ok(dev.fused_elementwise(RawStream::DEFAULT, prog, &inputs, out_shape, out.ptr()))?;
    let got = values(&out)?;
    let numel: usize = out_shape.iter().product();
    let mut want = Vec::with_capacity(numel);
    for e in 0..numel {
        let mut rem = e;
        let mut offs = vec![0usize; ins.len()];
        for d in (0..out_shape.len()).rev() {
            let ix = rem % out_shape[d];
            rem /= out_shape[d];
            for (k, o) in offs.iter_mut().enumerate() {
                *o += ix * strides[k][d];
            }
        }
        let x: Vec<f64> = (0..ins.len()).map(|k| vals[k][offs[k]]).collect();
        let w = prog.eval_f64(&x);
        // Integer and bool outputs hold what a cast of the value stores.
        let mut b = [0u8; 8];
        want.push(unsafe {
            store_f64(prog.out_dtype, b.as_mut_ptr(), 0, w);
            if prog.out_dtype.is_float() {
                w
            } else {
                load_f64(prog.out_dtype, b.as_ptr(), 0)
            }
        });
    }
    Ok((got, want))
}

/// Checks `prog` on `dev` against the reference and, on a GPU, against the CPU device.
fn check(
    dev: &Dev,
    what: &str,
    prog: &FusedProgram,
    ins: &[In],
    out_shape: &[usize],
) -> TestResult {
    let (got, want) = run(dev, prog, ins, out_shape, 7)?;
    assert_close_dtype(what, &got, &want, prog.out_dtype)?;
    if dev.kind() != DeviceKind::Cpu {
        let (cpu_got, _) = run(&cpu(), prog, ins, out_shape, 7)?;
        assert_close_dtype(
            &format!("{what} vs the CPU"),
            &got,
            &cpu_got,
            prog.out_dtype,
        )?;
    }
    Ok(())
}

fn fused_programs_match_reference(dev: &Dev) -> TestResult {
    // Dense f32, an odd size (the vector kernel's tail).
    let n = 100_003;
    let d = || inp(&[n]);
    check(
        dev,
        "gelu chain f32",
        &gelu_chain(DType::F32, DType::F32),
        &[d(), d(), d(), d()],
        &[n],
    )?;
    // bf16 with a scalar and a broadcast row (the strided kernel).
    let out = [37usize, 129];
    check(
        dev,
        "gelu chain bf16, scalar a, row b",
        &gelu_chain(DType::BF16, DType::BF16),
        &[inp(&out), inp(&[1]), inp(&[129]), inp(&out)],
        &out,
    )?;
    // f16: mul stored as f16 by the unfused op, then tanh; stored as f16 and as f32.
    let half = |out_dtype| FusedProgram {
        inputs: vec![DType::F16, DType::F16],
        instrs: vec![
            Instr::Load(0),
            Instr::Load(1),
            Instr::Binary(BinaryOp::Mul, 0, 1),
            Instr::Round(DType::F16, 2),
            Instr::Unary(UnaryOp::Tanh, 3),
        ],
        out_dtype,
    };
    check(
        dev,
        "f16 mul, tanh",
        &half(DType::F16),
        &[inp(&[64, 33]), inp(&[33])],
        &[64, 33],
    )?;
    check(
        dev,
        "f16 mul, tanh -> f32",
        &half(DType::F32),
        &[inp(&[4099]), inp(&[4099])],
        &[4099],
    )?;
    // Integers and bools: where(c, a, b) with b a scalar, stored as i64; a comparison
    // stored as bool; clamp with tensor bounds.
    let sel = FusedProgram {
        inputs: vec![DType::I32, DType::I64, DType::Bool],
        instrs: vec![
            Instr::Load(0),
            Instr::Load(1),
            Instr::Load(2),
            Instr::Where(2, 0, 1),
        ],
        out_dtype: DType::I64,
    };
    check(
        dev,
        "where i32/i64/bool",
        &sel,
        &[inp(&[1000]), inp(&[1]), inp(&[1000])],
        &[1000],
    )?;
    let cmp = FusedProgram {
        inputs: vec![DType::I32],
        instrs: vec![
            Instr::Load(0),
            Instr::Const(0.5),
            Instr::Compare(CompareOp::Gt, 0, 1),
        ],
        out_dtype: DType::Bool,
    };
    check(dev, "i32 > 0.5 -> bool", &cmp, &[inp(&[777])], &[777])?;
    let clamp = FusedProgram {
        inputs: vec![DType::F32, DType::F32, DType::F32],
        instrs: vec![
            Instr::Load(0),
            Instr::Load(1),
            Instr::Unary(UnaryOp::Neg, 1),
            Instr::Unary(UnaryOp::Abs, 1),
            Instr::ClampT(0, 2, 3),
            Instr::Unary(UnaryOp::Silu, 4),
        ],
        out_dtype: DType::F32,
    };
    check(
        dev,
        "clamp by |b| then silu",
        &clamp,
        &[inp(&[50, 40]), inp(&[50, 1]), inp(&[1])],
        &[50, 40],
    )?;
    // The activations of exported models, chained: each op's code and parameters reach the
    // generated kernel.
    let acts = FusedProgram {
        inputs: vec![DType::F32, DType::F32],
        instrs: vec![
            Instr::Load(0),
            Instr::Unary(UnaryOp::LeakyRelu { slope: 0.3 }, 0),
            Instr::Unary(UnaryOp::Elu { alpha: 0.5 }, 0),
            Instr::Binary(BinaryOp::Add, 1, 2),
            Instr::Unary(
                UnaryOp::Softplus {
                    beta: 2.0,
                    threshold: 1.0,
                },
                3,
            ),
            Instr::Unary(UnaryOp::Mish, 4),
            Instr::Load(1),
            Instr::Unary(UnaryOp::Celu { alpha: 0.7 }, 6),
            Instr::Unary(UnaryOp::Hardsigmoid, 7),
            Instr::Binary(BinaryOp::Mul, 5, 8),
            Instr::Unary(UnaryOp::Erf, 9),
            Instr::Unary(UnaryOp::Selu, 10),
            Instr::Unary(UnaryOp::Softsign, 11),
        ],
        out_dtype: DType::F32,
    };
    check(
        dev,
        "leaky_relu, elu, softplus, mish, celu, hardsigmoid, erf, selu, softsign",
        &acts,
        &[inp(&[64, 33]), inp(&[64, 33])],
        &[64, 33],
    )?;
    // Rows (on GPUs a thread reads a vector along the innermost dimension): channels-last
    // activations with a per-channel bias, a view with a row pitch and a per-position f32
    // scale (vectors of 4), then the same in f16 only (vectors of 8); a row length that is
    // not a multiple of the vector and a misaligned view take the strided kernel.
    let rows = |scale: DType| FusedProgram {
        inputs: vec![DType::F16, DType::F16, DType::F16, scale],
        instrs: vec![
            Instr::Load(0),
            Instr::Load(1),
            Instr::Binary(BinaryOp::Add, 0, 1),
            Instr::Round(DType::F16, 2),
            Instr::Load(2),
            Instr::Binary(BinaryOp::Mul, 3, 4),
            Instr::Load(3),
            Instr::Binary(BinaryOp::Mul, 5, 6),
            Instr::Unary(UnaryOp::Relu, 7),
        ],
        out_dtype: DType::F16,
    };
    let pitch = |shape: &[usize], row: usize, offset: usize| In {
        shape: vec![shape.iter().product::<usize>() / shape[shape.len() - 1] * row],
        strides: Some({
            let mut st = vec![1usize; shape.len()];
            let mut acc = row;
            for d in (0..shape.len() - 1).rev() {
                st[d] = acc;
                acc *= shape[d];
            }
            st
        }),
        offset,
    };
    let out = [2usize, 5, 7, 64];
    check(
        dev,
        "rows: bias, pitched view, per-position f32 scale",
        &rows(DType::F32),
        &[
            inp(&out),
            inp(&[64]),
            pitch(&out, 72, 0),
            inp(&[2, 5, 7, 1]),
        ],
        &out,
    )?;
    let out = [3usize, 9, 40];
    check(
        dev,
        "rows f16: bias, pitched view, per-row scale",
        &rows(DType::F16),
        &[inp(&out), inp(&[40]), pitch(&out, 48, 0), inp(&[3, 9, 1])],
        &out,
    )?;
    check(
        dev,
        "rows f16, misaligned view (strided)",
        &rows(DType::F16),
        &[inp(&out), inp(&[40]), pitch(&out, 48, 3), inp(&[3, 9, 1])],
        &out,
    )?;
    let out = [6usize, 12];
    check(
        dev,
        "rows f16, rows of 12 (strided)",
        &rows(DType::F16),
        &[inp(&out), inp(&[12]), inp(&out), inp(&[6, 1])],
        &out,
    )?;
    let rounding = FusedProgram {
        inputs: vec![DType::F32],
        instrs: vec![
            Instr::Load(0),
            Instr::Const(3.0),
            Instr::Binary(BinaryOp::Mul, 0, 1),
            Instr::Unary(UnaryOp::Round, 2),
            Instr::Unary(UnaryOp::Floor, 2),
            Instr::Unary(UnaryOp::Ceil, 2),
            Instr::Unary(UnaryOp::Sign, 2),
            Instr::Binary(BinaryOp::Add, 3, 4),
            Instr::Binary(BinaryOp::Add, 7, 5),
            Instr::Binary(BinaryOp::Add, 8, 6),
            Instr::Unary(UnaryOp::Reciprocal, 9),
        ],
        out_dtype: DType::F32,
    };
    check(
        dev,
        "round, floor, ceil, sign, reciprocal",
        &rounding,
        &[inp(&[1001])],
        &[1001],
    )
}

/// NaN payloads, infinities and signed zeros through f16/bf16 chains against the CPU device,
/// in the dense, row and strided kernels (GPUs compute a vector on a fast path and again
/// exactly when it holds a NaN): a chain that only rounds and selects values (a cast, where)
/// gives the CPU's bits, NaN payloads included; one with arithmetic on a NaN gives a NaN
/// where the CPU does and the CPU's bits everywhere else (NVIDIA's arithmetic returns the
/// canonical NaN where x86's keeps the payload, as PyTorch's CUDA and CPU kernels do; the
/// generated kernels' contraction barrier after each op is such an add).
fn fused_nan_payloads_as_the_cpu(dev: &Dev) -> TestResult {
    /// An input's element bits and its strides over the output.
    type BitsIn = (Vec<u16>, Vec<usize>);
    let run_bits = |d: &Dev,
                    prog: &FusedProgram,
                    ins: &[BitsIn],
                    out_shape: &[usize]|
     -> Result<Vec<u8>, libtest_mimic::Failed> {
        let mut keep = vec![];
        let mut inputs = vec![];
        for (k, (bits, strides)) in ins.iter().enumerate() {
            let bytes: Vec<u8> = bits.iter().flat_map(|b| b.to_ne_bytes()).collect();
            let t = ok(Tensor::from_bytes(
                d.clone(),
                &bytes,
                &[bits.len()],
                prog.inputs[k],
            ))?;
            inputs.push(FusedInput {
                ptr: t.ptr(),
                strides: strides.clone(),
            });
            keep.push(t);
        }
        let out = poisoned(d, out_shape, prog.out_dtype)?;
        ok(d.fused_elementwise(RawStream::DEFAULT, prog, &inputs, out_shape, out.ptr()))?;
        let mut host = vec![0u8; out.nbytes()];
        ok(out.copy_to_host(&mut host, None))?;
        Ok(host)
    };
    // x + b, rounded, relu, times y: NaN inputs of several payloads (quiet, signalling,
    // negative), infinities (inf - inf is a new NaN), zeros of both signs.
    for (dt, arith) in [
        (DType::F16, true),
        (DType::BF16, true),
        (DType::F16, false),
        (DType::BF16, false),
    ] {
        let prog = if arith {
            FusedProgram {
                inputs: vec![dt, dt, dt],
                instrs: vec![
                    Instr::Load(0),
                    Instr::Load(1),
                    Instr::Binary(BinaryOp::Add, 0, 1),
                    Instr::Round(dt, 2),
                    Instr::Unary(UnaryOp::Relu, 3),
                    Instr::Load(2),
                    Instr::Binary(BinaryOp::Mul, 4, 5),
                ],
                out_dtype: dt,
            }
        } else {
            // where(b > 0, x rounded to its dtype, y)
            FusedProgram {
                inputs: vec![dt, dt, dt],
                instrs: vec![
                    Instr::Load(0),
                    Instr::Round(dt, 0),
                    Instr::Load(1),
                    Instr::Const(0.0),
                    Instr::Compare(CompareOp::Gt, 2, 3),
                    Instr::Load(2),
                    Instr::Where(4, 1, 5),
                ],
                out_dtype: dt,
            }
        };
        let is_nan = |b: u16| {
            if dt == DType::F16 {
                b & 0x7fff > 0x7c00
            } else {
                b & 0x7fff > 0x7f80
            }
        };
        let (rows, c) = (64usize, 32usize);
        let specials: &[u16] = if dt == DType::F16 {
            &[
                0x7e01, 0x7c01, 0xfd55, 0x7c00, 0xfc00, 0x8000, 0x0000, 0x3c00,
            ]
        } else {
            &[
                0x7fc1, 0x7f81, 0xffa5, 0x7f80, 0xff80, 0x8000, 0x0000, 0x3f80,
            ]
        };
        let bits_of = |n: usize, seed: usize| -> Vec<u16> {
            (0..n)
                .map(|i| {
                    let h = (i * 2654435761 + seed * 97) % 1000;
                    if h < 120 {
                        specials[h % specials.len()]
                    } else if dt == DType::F16 {
                        0x3800 + (h as u16 % 0x0800) // [0.5, 1) and above
                    } else {
                        0x3f00 + (h as u16 % 0x0100)
                    }
                })
                .collect()
        };
        let x = bits_of(rows * c, 1);
        let b = bits_of(c, 2);
        let y = bits_of(rows * c, 3);
        let cases: Vec<(&str, Vec<BitsIn>)> = vec![
            (
                "dense",
                vec![
                    (x.clone(), vec![c, 1]),
                    (y.clone(), vec![c, 1]),
                    (y.clone(), vec![c, 1]),
                ],
            ),
            (
                "rows",
                vec![
                    (x.clone(), vec![c, 1]),
                    (b.clone(), vec![0, 1]),
                    (y.clone(), vec![c, 1]),
                ],
            ),
            (
                "strided",
                vec![
                    (x.clone(), vec![1, rows]),
                    (b.clone(), vec![0, 1]),
                    (y.clone(), vec![c, 1]),
                ],
            ),
        ];
        for (what, ins) in cases {
            let u16s = |b: Vec<u8>| -> Vec<u16> {
                b.chunks(2)
                    .map(|p| u16::from_ne_bytes([p[0], p[1]]))
                    .collect()
            };
            let g = u16s(run_bits(dev, &prog, &ins, &[rows, c])?);
            let w = u16s(run_bits(&cpu(), &prog, &ins, &[rows, c])?);
            let nans = w.iter().filter(|&&b| is_nan(b)).count();
            ensure(
                nans > 0 && nans < w.len(),
                format!("{dt:?} {what}: {nans} NaN results: the inputs miss the case"),
            )?;
            let same = |a: u16, b: u16| a == b || (arith && is_nan(a) && is_nan(b));
            if let Some(i) = (0..g.len()).find(|&i| !same(g[i], w[i])) {
                return Err(format!(
                    "{dt:?} {} {what}: element {i} is {:#06x}, the CPU's {:#06x}",
                    if arith { "arithmetic" } else { "round/where" },
                    g[i],
                    w[i]
                )
                .into());
            }
        }
    }
    Ok(())
}

fn fused_views_dims_and_empty(dev: &Dev) -> TestResult {
    let p = gelu_chain(DType::F32, DType::F32);
    // Misaligned views (the scalar-access dense kernel).
    let n = 1027;
    let v = |offset| In {
        shape: vec![n],
        strides: None,
        offset,
    };
    check(dev, "misaligned views", &p, &[v(1), v(0), v(3), v(2)], &[n])?;
    // A transposed input: x of shape [9, 5] read as [5, 9].
    let relu = FusedProgram {
        inputs: vec![DType::F32, DType::F32],
        instrs: vec![
            Instr::Load(0),
            Instr::Load(1),
            Instr::Binary(BinaryOp::Sub, 0, 1),
            Instr::Unary(UnaryOp::Relu, 2),
        ],
        out_dtype: DType::F32,
    };
    let t = In {
        shape: vec![9, 5],
        strides: Some(vec![1, 5]),
        offset: 0,
    };
    check(dev, "transposed input", &relu, &[t, inp(&[5, 1])], &[5, 9])?;
    // Eight merged dimensions (every other one broadcast): the strided kernel's limit.
    let out8 = [2usize, 3, 2, 3, 2, 3, 2, 3];
    let alt8 = [2usize, 1, 2, 1, 2, 1, 2, 1];
    check(dev, "8 dimensions", &relu, &[inp(&out8), inp(&alt8)], &out8)?;
    // Nine: the CPU runs it, a GPU answers UNSUPPORTED (the executor then runs it unfused).
    let out9 = [2usize, 3, 2, 3, 2, 3, 2, 3, 2];
    let alt9 = [2usize, 1, 2, 1, 2, 1, 2, 1, 2];
    if dev.kind() == DeviceKind::Cpu {
        check(dev, "9 dimensions", &relu, &[inp(&out9), inp(&alt9)], &out9)?;
    } else {
        let x = ok(Tensor::zeros(dev.clone(), &out9, DType::F32))?;
        let y = ok(Tensor::zeros(dev.clone(), &out9, DType::F32))?;
        let i = |t: &Tensor, s: &[usize]| FusedInput {
            ptr: t.ptr(),
            strides: broadcast_strides(s, &out9),
        };
        let r = dev.fused_elementwise(
            RawStream::DEFAULT,
            &relu,
            &[i(&x, &out9), i(&x, &alt9)],
            &out9,
            y.ptr(),
        );
        ensure(
            matches!(&r, Err(e) if e.kind == ErrorKind::Unsupported),
            format!("9 merged dimensions on a GPU: {r:?}"),
        )?;
    }
    // Empty output: nothing is read or written.
    let e = In {
        shape: vec![0, 7],
        strides: None,
        offset: 0,
    };
    let (got, _) = run(dev, &relu, &[e, inp(&[7])], &[0, 7], 1)?;
    ensure(got.is_empty(), "empty output")?;
    // Misuse: an input missing, strides of the wrong rank.
    let x = ok(Tensor::zeros(dev.clone(), &[4], DType::F32))?;
    let one = FusedInput {
        ptr: x.ptr(),
        strides: vec![1],
    };
    let r = dev.fused_elementwise(
        RawStream::DEFAULT,
        &relu,
        std::slice::from_ref(&one),
        &[4],
        x.ptr(),
    );
    ensure(r.is_err(), "one input for a program of two")?;
    let r = dev.fused_elementwise(
        RawStream::DEFAULT,
        &relu,
        &[one.clone(), one],
        &[2, 2],
        x.ptr(),
    );
    ensure(r.is_err(), "strides of the wrong rank")
}

/// y = gelu(x*a+b)*c over 64M f32 (5 x 256 MiB moved) against a 256 MiB device copy, both
/// timed the same way; prints the ratio of their bandwidths (the goal is >= 0.9).
fn fused_gelu_chain_bandwidth(dev: &Dev) -> TestResult {
    if dev.kind() == DeviceKind::Cpu {
        eprintln!("fused_gelu_chain_bandwidth: GPU only (skipped on the CPU)");
        return Ok(());
    }
    let n = 1usize << 26;
    let p = gelu_chain(DType::F32, DType::F32);
    let ts: Vec<Tensor> = (0..4)
        .map(|k| randn(dev, &[n], DType::F32, 11 + k))
        .collect::<Result<_, _>>()?;
    let y = ok(Tensor::empty(dev.clone(), &[n], DType::F32))?;
    let inputs: Vec<FusedInput> = ts
        .iter()
        .map(|t| FusedInput {
            ptr: t.ptr(),
            strides: vec![1],
        })
        .collect();
    let s = RawStream::DEFAULT;
    let reps = 20;
    let time = |f: &dyn Fn() -> rocm_backend::Result<()>| -> Result<f64, libtest_mimic::Failed> {
        ok(f())?;
        ok(dev.synchronize())?;
        let t0 = Instant::now();
        for _ in 0..reps {
            ok(f())?;
        }
        ok(dev.synchronize())?;
        Ok(t0.elapsed().as_secs_f64() / reps as f64)
    };
    let fused = time(&|| dev.fused_elementwise(s, &p, &inputs, &[n], y.ptr()))?;
    // the copy goes elsewhere: `y` keeps the fused result for the check below
    let z = ok(Tensor::empty(dev.clone(), &[n], DType::F32))?;
    let copy = time(&|| dev.copy_d2d(ts[0].ptr(), z.ptr(), n * 4, s))?;
    let fused_bw = 5.0 * 4.0 * n as f64 / fused;
    let copy_bw = 2.0 * 4.0 * n as f64 / copy;
    eprintln!(
        "fused_gelu_chain_bandwidth on {}: {:.3} ms, {:.0} GB/s; copy {:.3} ms, {:.0} GB/s; ratio {:.3} (goal >= 0.9)",
        dev.name(),
        fused * 1e3,
        fused_bw / 1e9,
        copy * 1e3,
        copy_bw / 1e9,
        fused_bw / copy_bw
    );
    // Spot-check the result against the CPU's fused loop.
    let m = 4096;
    let head: Vec<Vec<f64>> = ts
        .iter()
        .map(|t| values(t).map(|v| v[..m].to_vec()))
        .collect::<Result<_, _>>()?;
    let got = values(&y)?;
    let want: Vec<f64> = (0..m)
        .map(|i| p.eval_f64(&[head[0][i], head[1][i], head[2][i], head[3][i]]))
        .collect();
    assert_close_dtype("64M gelu chain", &got[..m], &want, DType::F32)?;
    ensure(
        fused_bw / copy_bw > 0.5,
        format!(
            "the fused kernel runs at {:.3}x of copy bandwidth",
            fused_bw / copy_bw
        ),
    )?;
    // A convolution's epilogue in channels-last f16 (ResNet-50's widest at batch 32): a
    // per-channel bias broadcast over [n * h * w, c] rows, then relu (the row kernel).
    let (rows, c) = (32 * 56 * 56, 256);
    let bias_relu = FusedProgram {
        inputs: vec![DType::F16, DType::F16],
        instrs: vec![
            Instr::Load(0),
            Instr::Load(1),
            Instr::Binary(BinaryOp::Add, 0, 1),
            Instr::Round(DType::F16, 2),
            Instr::Unary(UnaryOp::Relu, 3),
        ],
        out_dtype: DType::F16,
    };
    let x = randn(dev, &[rows, c], DType::F16, 21)?;
    let b = randn(dev, &[c], DType::F16, 22)?;
    let yh = ok(Tensor::empty(dev.clone(), &[rows, c], DType::F16))?;
    let ins = [
        FusedInput {
            ptr: x.ptr(),
            strides: vec![c, 1],
        },
        FusedInput {
            ptr: b.ptr(),
            strides: vec![0, 1],
        },
    ];
    let t = time(&|| dev.fused_elementwise(s, &bias_relu, &ins, &[rows, c], yh.ptr()))?;
    let bw = 2.0 * 2.0 * (rows * c) as f64 / t;
    eprintln!(
        "fused bias+relu f16 [{rows}, {c}] on {}: {:.3} ms, {:.0} GB/s; ratio to copy {:.3}",
        dev.name(),
        t * 1e3,
        bw / 1e9,
        bw / copy_bw
    );
    let (xv, bv, yv) = (values(&x)?, values(&b)?, values(&yh)?);
    let want: Vec<f64> = (0..m)
        .map(|i| bias_relu.eval_f64(&[xv[i], bv[i % c]]))
        .collect();
    assert_close_dtype("bias+relu f16 rows", &yv[..m], &want, DType::F16)?;
    ensure(
        bw / copy_bw > 0.5,
        format!(
            "the row kernel runs at {:.3}x of copy bandwidth",
            bw / copy_bw
        ),
    )
}

fn f32_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| (*x as f32).to_ne_bytes()).collect()
}

/// The CPU has no device graphs: every capture call answers UNSUPPORTED.
fn cpu_has_no_graphs(dev: &Dev) -> TestResult {
    let e = dev.graph_capture_begin(RawStream::DEFAULT);
    ensure(
        matches!(&e, Err(e) if e.kind == ErrorKind::Unsupported),
        format!("graph_capture_begin on the CPU: {e:?}"),
    )?;
    let e = dev.graph_capture_end(RawStream::DEFAULT);
    ensure(
        matches!(&e, Err(e) if e.kind == ErrorKind::Unsupported),
        format!("graph_capture_end on the CPU: {e:?}"),
    )?;
    dev.graph_destroy(1);
    Ok(())
}

/// Captures fill + mul + neg (with a scratch buffer freed during the capture) on a stream,
/// replays the graph on two different inputs, and checks the memory hold.
fn device_graph_capture_replay(dev: &Dev) -> TestResult {
    if dev.kind() == DeviceKind::Cpu {
        return cpu_has_no_graphs(dev);
    }
    let n = 4099;
    let bytes = n * 4;
    let s = ok(dev.stream_create())?;
    let x = ok(Tensor::zeros(dev.clone(), &[n], DType::F32))?;
    let y = poisoned(dev, &[n], DType::F32)?;
    let (_, layout) = ok(rocm_backend::base::shape::BroadcastLayout::new(&[
        &[n],
        &[n],
    ]))?;
    let t = ok(dev.alloc(bytes))?;
    let work = |t: DevPtr| -> rocm_backend::Result<()> {
        dev.fill(s, DType::F32, t, n, 0.5)?;
        dev.binary(s, BinaryOp::Mul, DType::F32, x.ptr(), t, y.ptr(), &layout)?;
        dev.unary(s, UnaryOp::Neg, DType::F32, y.ptr(), y.ptr(), n)
    };
    // Once outside the capture: the kernels are compiled and loaded before it.
    ok(work(t))?;
    ok(dev.synchronize())?;
    ok(dev.graph_capture_begin(s))?;
    let captured = work(t);
    // Freed during the capture: held by the graph, never handed out while it lives.
    dev.free(t, bytes);
    let g = dev.graph_capture_end(s);
    ok(captured)?;
    let g = ok(g)?;
    let t2 = ok(dev.alloc(bytes))?;
    dev.free(t2, bytes);
    ensure(
        t2 != t,
        "a block freed during the capture was handed out again",
    )?;
    for (round, seed) in [(0, 3u64), (1, 4)] {
        let xs = host_values(DType::F32, n, seed);
        ok(dev.copy_h2d(&f32_bytes(&xs), x.ptr(), s))?;
        ok(dev.graph_launch(g, s))?;
        ok(dev.stream_synchronize(s))?;
        let got = values(&y)?;
        let want: Vec<f64> = xs.iter().map(|v| -(v * 0.5)).collect();
        assert_close_dtype(&format!("replay {round}"), &got, &want, DType::F32)?;
    }
    // Destroying right after launches waits for them; the handle is gone afterwards.
    ok(dev.graph_launch(g, s))?;
    ok(dev.graph_launch(g, s))?;
    dev.graph_destroy(g);
    let r = dev.graph_launch(g, s);
    ensure(
        matches!(&r, Err(e) if e.kind == ErrorKind::InvalidArgument),
        format!("launch of a destroyed graph: {r:?}"),
    )?;
    dev.graph_destroy(g);
    ok(dev.stream_synchronize(s))?;
    dev.stream_destroy(s);
    Ok(())
}

/// A synchronization during a capture fails, and so does the capture's end (a VENDOR error
/// naming the end-capture call), leaving the stream usable; misuse is an error, not a crash.
fn device_graph_capture_invalidated(dev: &Dev) -> TestResult {
    if dev.kind() == DeviceKind::Cpu {
        return cpu_has_no_graphs(dev);
    }
    let n = 1000;
    let s = ok(dev.stream_create())?;
    let y = ok(Tensor::zeros(dev.clone(), &[n], DType::F32))?;
    ok(dev.fill(s, DType::F32, y.ptr(), n, 1.0))?;
    ok(dev.stream_synchronize(s))?;
    ok(dev.graph_capture_begin(s))?;
    let again = dev.graph_capture_begin(s);
    ensure(
        matches!(&again, Err(e) if e.kind == ErrorKind::InvalidArgument),
        format!("a second capture on the stream: {again:?}"),
    )?;
    ok(dev.fill(s, DType::F32, y.ptr(), n, 2.0))?;
    let sync = dev.stream_synchronize(s);
    ensure(sync.is_err(), "synchronizing a capturing stream succeeded")?;
    match dev.graph_capture_end(s) {
        Err(e) => {
            ensure(
                e.kind == ErrorKind::Vendor
                    && (e.message.contains("cuStreamEndCapture")
                        || e.message.contains("hipStreamEndCapture")),
                format!(
                    "capture end after a forbidden sync: {:?}: {}",
                    e.kind, e.message
                ),
            )?;
            eprintln!("device_graph_capture_invalidated: {}", e.message);
        }
        Ok(g) => {
            dev.graph_destroy(g);
            ensure(
                dev.kind() != DeviceKind::Cuda,
                "CUDA ended an invalidated capture with a graph",
            )?;
            eprintln!(
                "device_graph_capture_invalidated: {} kept the capture valid after the refused sync",
                dev.name()
            );
        }
    }
    // The stream is usable again, and the work queued during the capture never ran.
    let before = values(&y)?;
    ensure(before.iter().all(|&v| v == 1.0), "captured work ran")?;
    ok(dev.fill(s, DType::F32, y.ptr(), n, 7.0))?;
    ok(dev.stream_synchronize(s))?;
    ensure(
        values(&y)?.iter().all(|&v| v == 7.0),
        "the stream is not usable",
    )?;
    // Misuse.
    for (what, r) in [
        (
            "capture on the default stream",
            dev.graph_capture_begin(RawStream::DEFAULT),
        ),
        (
            "end without a capture",
            dev.graph_capture_end(s).map(|_| ()),
        ),
        (
            "launch of an unknown graph",
            dev.graph_launch(0xdead_beef, s),
        ),
    ] {
        ensure(
            matches!(&r, Err(e) if e.kind == ErrorKind::InvalidArgument),
            format!("{what}: {r:?}"),
        )?;
    }
    dev.graph_destroy(0xdead_beef);
    dev.stream_destroy(s);
    Ok(())
}
