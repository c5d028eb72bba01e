//! Data ops: permute, concat, slice, cast, fill, copy, embedding and its backward, and
//! misuse.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::base::shape::contiguous_strides;
use rocm_backend::runtime::{DType, Tensor, data};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        (
            "slice_negative_steps_and_backward",
            slice_negative_steps_and_backward,
        ),
        ("permute_and_concat_backward", permute_and_concat_backward),
        ("gather_and_backward", gather_and_backward),
        ("take_and_backward", take_and_backward),
        ("permute_all_orders", permute_all_orders),
        ("concat_along_each_dim", concat_along_each_dim),
        ("slice_with_steps", slice_with_steps),
        ("cast_every_dtype_pair", cast_every_dtype_pair),
        ("fill_and_copy", fill_and_copy),
        ("embedding_and_backward", embedding_and_backward),
        ("data_misuse", data_misuse),
        ("copy_strided_kernel_paths", copy_strided_kernel_paths),
        ("embedding_kernel_shapes", embedding_kernel_shapes),
    ]
}

/// Multi-index of a linear index.
fn unravel(mut lin: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = lin % shape[d];
        lin /= shape[d];
    }
    idx
}

fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    let st = contiguous_strides(shape);
    idx.iter().zip(&st).map(|(i, s)| i * s).sum()
}

const ALL: [DType; 6] = [
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::I32,
    DType::I64,
    DType::Bool,
];

fn any_tensor(
    dev: &Dev,
    shape: &[usize],
    dt: DType,
    seed: u64,
) -> Result<Tensor, libtest_mimic::Failed> {
    let t = ok(Tensor::randint(
        dev.clone(),
        shape,
        DType::I64,
        -100,
        100,
        seed,
    ))?;
    let v: Vec<f64> = values(&t)?
        .iter()
        .map(|x| {
            if dt == DType::Bool {
                (*x > 0.0) as u8 as f64
            } else {
                *x
            }
        })
        .collect();
    from_f64(dev, &v, shape, dt)
}

fn permute_all_orders(dev: &Dev) -> TestResult {
    let perms: &[(&[usize], &[i64])] = &[
        (&[2, 3, 4], &[0, 1, 2]),
        (&[2, 3, 4], &[2, 0, 1]),
        (&[2, 3, 4], &[-1, -2, -3]),
        (&[2, 3, 4], &[1, 0, 2]),
        (&[65, 33], &[1, 0]),
        (&[1, 5, 1], &[2, 1, 0]),
        (&[0, 3], &[1, 0]),
        (&[], &[]),
        (&[2, 3, 4, 5], &[3, 1, 2, 0]),
    ];
    for dt in ALL {
        for (shape, perm) in perms {
            let x = any_tensor(dev, shape, dt, 1)?;
            let nd = shape.len();
            let p: Vec<usize> = perm
                .iter()
                .map(|&d| {
                    if d < 0 {
                        (d + nd as i64) as usize
                    } else {
                        d as usize
                    }
                })
                .collect();
            let oshape: Vec<usize> = p.iter().map(|&d| shape[d]).collect();
            let out = poisoned(dev, &oshape, dt)?;
            ok(data::permute(None, &x, perm, Some(&out)))?;
            let vx = values(&x)?;
            let n: usize = oshape.iter().product();
            let want: Vec<f64> = (0..n)
                .map(|lin| {
                    let oi = unravel(lin, &oshape);
                    let mut ii = vec![0; nd];
                    for (k, &d) in p.iter().enumerate() {
                        ii[d] = oi[k];
                    }
                    vx[ravel(&ii, shape)]
                })
                .collect();
            assert_close(
                &format!("permute {shape:?} {perm:?} {dt}"),
                &values(&out)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    Ok(())
}

fn concat_along_each_dim(dev: &Dev) -> TestResult {
    for dt in ALL {
        for dim in [0i64, 1, 2, -1] {
            let d = if dim < 0 { 2 } else { dim as usize };
            let sizes = [3usize, 0, 5, 1];
            let mut xs = Vec::new();
            for (i, &s) in sizes.iter().enumerate() {
                let mut shape = vec![2, 4, 3];
                shape[d] = s;
                xs.push(any_tensor(dev, &shape, dt, i as u64 + 1)?);
            }
            let mut oshape = vec![2, 4, 3];
            oshape[d] = sizes.iter().sum();
            let out = poisoned(dev, &oshape, dt)?;
            let refs: Vec<&Tensor> = xs.iter().collect();
            ok(data::concat(None, &refs, dim, Some(&out)))?;
            let vals: Vec<Vec<f64>> = xs.iter().map(values).collect::<Result<_, _>>()?;
            let n: usize = oshape.iter().product();
            let want: Vec<f64> = (0..n)
                .map(|lin| {
                    let mut idx = unravel(lin, &oshape);
                    let mut k = 0;
                    while idx[d] >= xs[k].shape()[d] {
                        idx[d] -= xs[k].shape()[d];
                        k += 1;
                    }
                    vals[k][ravel(&idx, xs[k].shape())]
                })
                .collect();
            assert_close(
                &format!("concat dim {dim} {dt}"),
                &values(&out)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    Ok(())
}

fn slice_with_steps(dev: &Dev) -> TestResult {
    let cases: &[(i64, i64, i64, i64)] = &[
        (0, 0, 5, 1),
        (1, 1, 7, 2),
        (1, -3, 100, 1),
        (2, 0, 4, 3),
        (-1, 1, 2, 1),
        (1, 5, 2, 1),
        (0, -100, 100, 4),
    ];
    for dt in [DType::F32, DType::BF16, DType::I64, DType::Bool] {
        let shape = [5usize, 8, 4];
        let x = any_tensor(dev, &shape, dt, 9)?;
        let vx = values(&x)?;
        for &(dim, start, end, step) in cases {
            let d = if dim < 0 {
                (dim + 3) as usize
            } else {
                dim as usize
            };
            let n = shape[d] as i64;
            let fix = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n);
            let (s, e) = (fix(start), fix(end));
            let picked: Vec<usize> = (s..e).step_by(step as usize).map(|v| v as usize).collect();
            let mut oshape = shape.to_vec();
            oshape[d] = picked.len();
            let out = poisoned(dev, &oshape, dt)?;
            ok(data::slice(None, &x, dim, start, end, step, Some(&out)))?;
            let on: usize = oshape.iter().product();
            let want: Vec<f64> = (0..on)
                .map(|lin| {
                    let mut idx = unravel(lin, &oshape);
                    idx[d] = picked[idx[d]];
                    vx[ravel(&idx, &shape)]
                })
                .collect();
            assert_close(
                &format!("slice {dim} {start}:{end}:{step} {dt}"),
                &values(&out)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    Ok(())
}

fn cast_every_dtype_pair(dev: &Dev) -> TestResult {
    let src: [f64; 10] = [0.0, 1.0, -1.0, 2.75, -2.75, 100.5, -7.25, 0.5, 3.0, 65504.0];
    for from in ALL {
        let vals: Vec<f64> = src
            .iter()
            .map(|&v| match from {
                DType::Bool => (v != 0.0) as u8 as f64,
                DType::I32 | DType::I64 => v.trunc(),
                _ => round_to(from, v),
            })
            .collect();
        let x = from_f64(dev, &vals, &[vals.len()], from)?;
        for to in ALL {
            let out = poisoned(dev, &[vals.len()], to)?;
            ok(data::cast(None, &x, to, Some(&out)))?;
            let want: Vec<f64> = vals
                .iter()
                .map(|&v| match to {
                    DType::Bool => (v != 0.0) as u8 as f64,
                    DType::I32 | DType::I64 => v.trunc(),
                    _ => round_to(to, v),
                })
                .collect();
            assert_close(
                &format!("cast {from}->{to}"),
                &values(&out)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    Ok(())
}

fn fill_and_copy(dev: &Dev) -> TestResult {
    for dt in ALL {
        for n in [0usize, 1, 1000, 70001] {
            let t = poisoned(dev, &[n], dt)?;
            ok(data::fill(None, &t, 3.0))?;
            let want = vec![if dt == DType::Bool { 1.0 } else { 3.0 }; n];
            assert_close(&format!("fill {dt} {n}"), &values(&t)?, &want, 0.0, 0.0)?;
        }
        let x = any_tensor(dev, &[7, 9], dt, 4)?;
        let y = poisoned(dev, &[7, 9], dt)?;
        ok(data::copy(None, &x, &y))?;
        assert_close(&format!("copy {dt}"), &values(&y)?, &values(&x)?, 0.0, 0.0)?;
        // Copy with a dtype conversion.
        let z = poisoned(dev, &[7, 9], DType::F32)?;
        ok(data::copy(None, &x, &z))?;
        assert_close(
            &format!("copy {dt}->f32"),
            &values(&z)?,
            &values(&x)?,
            0.0,
            0.0,
        )?;
    }
    // Across devices (to and from the CPU) when this device is not the CPU.
    let c = cpu();
    let x = randn(dev, &[5, 3], DType::F32, 1)?;
    let h = poisoned(&c, &[5, 3], DType::F32)?;
    ok(data::copy(None, &x, &h))?;
    assert_close("copy to cpu", &values(&h)?, &values(&x)?, 0.0, 0.0)?;
    let back = poisoned(dev, &[5, 3], DType::F32)?;
    ok(data::copy(None, &h, &back))?;
    assert_close("copy from cpu", &values(&back)?, &values(&x)?, 0.0, 0.0)
}

fn embedding_and_backward(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for it in [DType::I32, DType::I64] {
            for (num, dim, ishape) in [
                (10usize, 4usize, &[3usize, 5][..]),
                (1, 1, &[4][..]),
                (50, 130, &[200][..]),
                (5, 3, &[0][..]),
            ] {
                let w = randn(dev, &[num, dim], dt, 1)?;
                let idx = ok(Tensor::randint(dev.clone(), ishape, it, 0, num as i64, 2))?;
                let mut oshape = ishape.to_vec();
                oshape.push(dim);
                let out = poisoned(dev, &oshape, dt)?;
                ok(data::embedding(None, &w, &idx, Some(&out)))?;
                let (vw, vi) = (values(&w)?, values(&idx)?);
                let want: Vec<f64> = vi
                    .iter()
                    .flat_map(|&k| vw[k as usize * dim..(k as usize + 1) * dim].to_vec())
                    .collect();
                assert_close(
                    &format!("embedding {dt} {it}"),
                    &values(&out)?,
                    &want,
                    0.0,
                    0.0,
                )?;
                // Backward: repeated indices sum.
                let dy = randn(dev, &oshape, dt, 3)?;
                let dw = poisoned(dev, &[num, dim], dt)?;
                ok(data::embedding_backward(None, &dy, &idx, num, Some(&dw)))?;
                let vd = values(&dy)?;
                let mut want = vec![0.0; num * dim];
                for (j, &k) in vi.iter().enumerate() {
                    for c in 0..dim {
                        want[k as usize * dim + c] += vd[j * dim + c];
                    }
                }
                let want: Vec<f64> = want.iter().map(|&v| round_to(dt, v)).collect();
                let tol = if dt == DType::F32 { 1e-5 } else { 3e-2 };
                assert_close(
                    &format!("embedding_backward {dt} {it}"),
                    &values(&dw)?,
                    &want,
                    tol,
                    tol,
                )?;
            }
        }
    }
    Ok(())
}

fn expect_err<T>(r: rocm_backend::Result<T>, kind: ErrorKind, name: &str) -> TestResult {
    match r {
        Ok(_) => Err(format!("{name}: expected {kind:?}, got success").into()),
        Err(e) => ensure(
            e.kind == kind && e.message.contains(name),
            format!(
                "{name}: expected {kind:?} naming the op, got {:?}: {}",
                e.kind, e.message
            ),
        ),
    }
}

fn data_misuse(dev: &Dev) -> TestResult {
    let x = randn(dev, &[2, 3], DType::F32, 1)?;
    expect_err(
        data::permute(None, &x, &[0], None),
        ErrorKind::InvalidArgument,
        "permute",
    )?;
    expect_err(
        data::permute(None, &x, &[1, 1], None),
        ErrorKind::InvalidArgument,
        "permute",
    )?;
    expect_err(
        data::permute(None, &x, &[0, 2], None),
        ErrorKind::InvalidArgument,
        "permute",
    )?;
    let y = randn(dev, &[3, 3], DType::F32, 1)?;
    expect_err(
        data::concat(None, &[&x, &y], 1, None),
        ErrorKind::ShapeMismatch,
        "concat",
    )?;
    expect_err(
        data::concat(None, &[], 0, None),
        ErrorKind::InvalidArgument,
        "concat",
    )?;
    let h = randn(dev, &[2, 3], DType::F16, 1)?;
    expect_err(
        data::concat(None, &[&x, &h], 0, None),
        ErrorKind::DtypeMismatch,
        "concat",
    )?;
    expect_err(
        data::slice(None, &x, 0, 0, 1, 0, None),
        ErrorKind::InvalidArgument,
        "slice",
    )?;
    expect_err(
        data::slice(None, &x, 2, 0, 1, 1, None),
        ErrorKind::InvalidArgument,
        "slice",
    )?;
    expect_err(data::copy(None, &x, &y), ErrorKind::ShapeMismatch, "copy")?;
    let w = randn(dev, &[4, 2], DType::F32, 1)?;
    let bad = from_f64(dev, &[0.0, 4.0], &[2], DType::I64)?;
    expect_err(
        data::embedding(None, &w, &bad, None),
        ErrorKind::InvalidArgument,
        "embedding",
    )?;
    let neg = from_f64(dev, &[-1.0], &[1], DType::I32)?;
    expect_err(
        data::embedding(None, &w, &neg, None),
        ErrorKind::InvalidArgument,
        "embedding",
    )?;
    expect_err(
        data::embedding(None, &w, &x, None),
        ErrorKind::DtypeMismatch,
        "embedding",
    )?;
    expect_err(
        data::embedding(None, &x.reshape(&[6]).unwrap(), &bad, None),
        ErrorKind::ShapeMismatch,
        "embedding",
    )?;
    let dy = randn(dev, &[3, 2], DType::F32, 1)?;
    expect_err(
        data::embedding_backward(None, &dy, &bad, 4, None),
        ErrorKind::ShapeMismatch,
        "embedding_backward",
    )?;
    Ok(())
}

/// `x.permute(perm)` against a host-side gather.
fn check_permute(dev: &Dev, shape: &[usize], perm: &[usize], dt: DType) -> TestResult {
    let x = any_tensor(dev, shape, dt, 7)?;
    let oshape: Vec<usize> = perm.iter().map(|&d| shape[d]).collect();
    let out = poisoned(dev, &oshape, dt)?;
    let p64: Vec<i64> = perm.iter().map(|&d| d as i64).collect();
    ok(data::permute(None, &x, &p64, Some(&out)))?;
    let vx = values(&x)?;
    let n: usize = oshape.iter().product();
    let want: Vec<f64> = (0..n)
        .map(|lin| {
            let oi = unravel(lin, &oshape);
            let mut ii = vec![0; shape.len()];
            for (k, &d) in perm.iter().enumerate() {
                ii[d] = oi[k];
            }
            vx[ravel(&ii, shape)]
        })
        .collect();
    assert_close(
        &format!("permute {shape:?} {perm:?} {dt}"),
        &values(&out)?,
        &want,
        0.0,
        0.0,
    )
}

/// Every copy path of a GPU: transposes not multiples of the 32x32 tile, batched
/// transposes, contiguous inner runs of every width, thin transposes, generic gathers,
/// slices with steps on the innermost dimension, concat with odd runs.
fn copy_strided_kernel_paths(dev: &Dev) -> TestResult {
    let perms: &[(&[usize], &[usize])] = &[
        (&[37, 45], &[1, 0]),
        (&[100, 67], &[1, 0]),
        (&[3, 33, 65], &[0, 2, 1]),
        (&[33, 3, 65], &[2, 1, 0]),
        (&[5, 6, 7, 8], &[2, 0, 3, 1]),
        (&[4, 3, 64], &[1, 0, 2]),
        (&[4, 3, 6], &[1, 0, 2]),
        (&[4, 3, 5], &[1, 0, 2]),
        (&[130, 2], &[1, 0]),
        (&[2, 130], &[1, 0]),
        (&[2, 2, 2, 2, 2, 2, 2, 2, 2], &[8, 7, 6, 5, 4, 3, 2, 1, 0]),
    ];
    for dt in ALL {
        for (shape, perm) in perms {
            check_permute(dev, shape, perm, dt)?;
        }
        let shape = [9usize, 10, 12];
        let x = any_tensor(dev, &shape, dt, 3)?;
        let vx = values(&x)?;
        for (start, end, step) in [(1i64, 12i64, 3i64), (0, 12, 2), (3, 11, 1)] {
            let picked: Vec<usize> = (start..end)
                .step_by(step as usize)
                .map(|v| v as usize)
                .collect();
            let oshape = [9, 10, picked.len()];
            let out = poisoned(dev, &oshape, dt)?;
            ok(data::slice(None, &x, 2, start, end, step, Some(&out)))?;
            let want: Vec<f64> = (0..oshape.iter().product::<usize>())
                .map(|lin| {
                    let mut idx = unravel(lin, &oshape);
                    idx[2] = picked[idx[2]];
                    vx[ravel(&idx, &shape)]
                })
                .collect();
            assert_close(
                &format!("slice last dim {start}:{end}:{step} {dt}"),
                &values(&out)?,
                &want,
                0.0,
                0.0,
            )?;
        }
        let a = any_tensor(dev, &[3, 7], dt, 1)?;
        let b = any_tensor(dev, &[3, 129], dt, 2)?;
        let out = poisoned(dev, &[3, 136], dt)?;
        ok(data::concat(None, &[&a, &b], 1, Some(&out)))?;
        let (va, vb) = (values(&a)?, values(&b)?);
        let want: Vec<f64> = (0..3 * 136)
            .map(|lin| {
                let (r, c) = (lin / 136, lin % 136);
                if c < 7 {
                    va[r * 7 + c]
                } else {
                    vb[r * 129 + c - 7]
                }
            })
            .collect();
        assert_close(
            &format!("concat odd runs {dt}"),
            &values(&out)?,
            &want,
            0.0,
            0.0,
        )?;
    }
    Ok(())
}

/// Embedding rows longer than a block and of odd byte lengths, many repeated indices in the
/// backward (the GPU's atomics), and an out-of-range index far into the list.
fn embedding_kernel_shapes(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for (num, dim, n) in [(300usize, 1000usize, 50usize), (7, 3, 5000), (64, 33, 129)] {
            let w = randn(dev, &[num, dim], dt, 11)?;
            let idx = ok(Tensor::randint(
                dev.clone(),
                &[n],
                DType::I64,
                0,
                num as i64,
                12,
            ))?;
            let out = poisoned(dev, &[n, dim], dt)?;
            ok(data::embedding(None, &w, &idx, Some(&out)))?;
            let (vw, vi) = (values(&w)?, values(&idx)?);
            let want: Vec<f64> = vi
                .iter()
                .flat_map(|&k| vw[k as usize * dim..(k as usize + 1) * dim].to_vec())
                .collect();
            let what = format!("embedding {num}x{dim} n {n} {dt}");
            assert_close(&what, &values(&out)?, &want, 0.0, 0.0)?;
            let dy = randn(dev, &[n, dim], dt, 13)?;
            let dw = poisoned(dev, &[num, dim], dt)?;
            ok(data::embedding_backward(None, &dy, &idx, num, Some(&dw)))?;
            let vd = values(&dy)?;
            let mut want = vec![0.0; num * dim];
            for (j, &k) in vi.iter().enumerate() {
                for c in 0..dim {
                    want[k as usize * dim + c] += vd[j * dim + c];
                }
            }
            let want: Vec<f64> = want.iter().map(|&v| round_to(dt, v)).collect();
            // f32 accumulation of up to ~700 terms of magnitude ~1 per element.
            let (rtol, atol) = if dt == DType::F32 {
                (1e-5, 1e-4)
            } else {
                (3e-2, 3e-2)
            };
            assert_close(
                &format!("{what} backward"),
                &values(&dw)?,
                &want,
                rtol,
                atol,
            )?;
        }
    }
    let w = randn(dev, &[10, 4], DType::F32, 1)?;
    let mut iv = vec![3.0; 5000];
    iv[4000] = 10.0;
    iv[4500] = -1.0;
    for it in [DType::I32, DType::I64] {
        let idx = from_f64(dev, &iv, &[5000], it)?;
        for (name, r) in [
            (
                "embedding",
                data::embedding(None, &w, &idx, None).map(|_| ()),
            ),
            (
                "embedding_backward",
                data::embedding_backward(
                    None,
                    &ok(Tensor::randn(dev.clone(), &[5000, 4], DType::F32, 2))?,
                    &idx,
                    10,
                    None,
                )
                .map(|_| ()),
            ),
        ] {
            match r {
                Ok(()) => return Err(format!("{name}: index 10 of 10 accepted").into()),
                Err(e) => ensure(
                    e.kind == ErrorKind::InvalidArgument
                        && e.message.contains(name)
                        && e.message.contains("position 4000"),
                    format!("{name}: {:?}: {}", e.kind, e.message),
                )?,
            }
        }
    }
    Ok(())
}

/// CPython's `slice(start, end, step).indices(n)` walk (NumPy and ONNX `Slice` agree).
fn py_slice(n: usize, start: i64, end: i64, step: i64) -> Vec<usize> {
    let n = n as i128;
    let (lower, upper) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let fix = |v: i64| {
        let v = v as i128;
        if v < 0 {
            (v + n).max(lower)
        } else {
            v.min(upper)
        }
    };
    let (mut i, e, st) = (fix(start), fix(end), step as i128);
    let mut out = vec![];
    while (st > 0 && i < e) || (st < 0 && i > e) {
        out.push(i as usize);
        i += st;
    }
    out
}

/// `rb_slice` with negative steps (NumPy semantics) and `rb_slice_backward` for every step,
/// in every dtype, against CPython's slice walk.
fn slice_negative_steps_and_backward(dev: &Dev) -> TestResult {
    let cases: &[(i64, i64, i64, i64)] = &[
        (0, i64::MAX, i64::MIN, -1),
        (1, 6, 1, -2),
        (1, -1, -9, -1),
        (2, 100, -100, -3),
        (-1, 1, 2, -1),
        (1, 2, 6, -1),
        (0, 0, -100, i64::MIN),
        (1, 7, i64::MIN, -7),
        (1, 1, 7, 2),
        (0, -3, 100, 1),
        (2, 0, 4, 3),
    ];
    let shape = [5usize, 8, 4];
    for dt in ALL {
        let x = any_tensor(dev, &shape, dt, 19)?;
        let vx = values(&x)?;
        for &(dim, start, end, step) in cases {
            let d = if dim < 0 {
                (dim + 3) as usize
            } else {
                dim as usize
            };
            let picked = py_slice(shape[d], start, end, step);
            let mut oshape = shape.to_vec();
            oshape[d] = picked.len();
            let out = poisoned(dev, &oshape, dt)?;
            ok(data::slice(None, &x, dim, start, end, step, Some(&out)))?;
            let on: usize = oshape.iter().product();
            let want: Vec<f64> = (0..on)
                .map(|lin| {
                    let mut idx = unravel(lin, &oshape);
                    idx[d] = picked[idx[d]];
                    vx[ravel(&idx, &shape)]
                })
                .collect();
            let what = format!("slice {dim} {start}:{end}:{step} {dt}");
            assert_close(&what, &values(&out)?, &want, 0.0, 0.0)?;
            let (rs, rv) = ok(rocm_backend::ops::data::slice_reference(
                &vx, &shape, dim, start, end, step,
            ))?;
            ensure(rs == oshape, format!("{what}: reference shape {rs:?}"))?;
            assert_close(&format!("{what} (ops reference)"), &rv, &want, 0.0, 0.0)?;
            // Backward: the slice's values scattered into zeros of x's shape.
            let dx = poisoned(dev, &shape, dt)?;
            ok(data::slice_backward(
                None,
                &out,
                &shape,
                dim,
                start,
                end,
                step,
                Some(&dx),
            ))?;
            let mut want_dx = vec![0.0; vx.len()];
            for (lin, v) in want.iter().enumerate() {
                let mut idx = unravel(lin, &oshape);
                idx[d] = picked[idx[d]];
                want_dx[ravel(&idx, &shape)] = *v;
            }
            assert_close(
                &format!("{what} backward"),
                &values(&dx)?,
                &want_dx,
                0.0,
                0.0,
            )?;
        }
    }
    // A long reversed run (the GPU's signed copy over many elements) and an empty input.
    let x = any_tensor(dev, &[3, 7000], DType::F32, 3)?;
    let r = ok(data::slice(None, &x, 1, -1, i64::MIN, -1, None))?;
    let (vx, vr) = (values(&x)?, values(&r)?);
    let want: Vec<f64> = (0..3 * 7000)
        .map(|l| vx[(l / 7000) * 7000 + 6999 - l % 7000])
        .collect();
    assert_close("slice reversed 7000", &vr, &want, 0.0, 0.0)?;
    let e = any_tensor(dev, &[0, 4], DType::F32, 3)?;
    let r = ok(data::slice(None, &e, 1, i64::MAX, i64::MIN, -2, None))?;
    ensure(
        r.shape() == [0, 2],
        format!("empty slice shape {:?}", r.shape()),
    )?;
    // Misuse: step 0, dy of the wrong shape.
    expect_err(
        data::slice(None, &x, 1, 0, 5, 0, None),
        ErrorKind::InvalidArgument,
        "slice",
    )?;
    let dy = any_tensor(dev, &[3, 4], DType::F32, 3)?;
    expect_err(
        data::slice_backward(None, &dy, &[3, 7000], 1, 0, 5, 1, None),
        ErrorKind::ShapeMismatch,
        "slice_backward",
    )?;
    Ok(())
}

/// `rb_permute_backward` undoes `rb_permute`; `rb_concat_backward` returns each input's part.
fn permute_and_concat_backward(dev: &Dev) -> TestResult {
    let perms: &[(&[usize], &[i64])] = &[
        (&[2, 3, 4], &[2, 0, 1]),
        (&[2, 3, 4], &[-1, -3, -2]),
        (&[65, 33], &[1, 0]),
        (&[], &[]),
        (&[0, 3], &[1, 0]),
    ];
    for dt in ALL {
        for (shape, perm) in perms {
            let x = any_tensor(dev, shape, dt, 4)?;
            let y = ok(data::permute(None, &x, perm, None))?;
            let back = poisoned(dev, shape, dt)?;
            ok(data::permute_backward(None, &y, perm, Some(&back)))?;
            assert_close(
                &format!("permute_backward {shape:?} {perm:?} {dt}"),
                &values(&back)?,
                &values(&x)?,
                0.0,
                0.0,
            )?;
        }
        for dim in [0i64, 1, -1] {
            let d = if dim < 0 { 2 } else { dim as usize };
            let sizes = [3usize, 0, 5, 1];
            let mut xs = Vec::new();
            for (i, &s) in sizes.iter().enumerate() {
                let mut shape = vec![2, 4, 3];
                shape[d] = s;
                xs.push(any_tensor(dev, &shape, dt, i as u64 + 11)?);
            }
            let refs: Vec<&Tensor> = xs.iter().collect();
            let y = ok(data::concat(None, &refs, dim, None))?;
            for (i, xi) in xs.iter().enumerate() {
                let g = poisoned(dev, xi.shape(), dt)?;
                ok(data::concat_backward(None, &y, &refs, dim, i, Some(&g)))?;
                assert_close(
                    &format!("concat_backward dim {dim} input {i} {dt}"),
                    &values(&g)?,
                    &values(xi)?,
                    0.0,
                    0.0,
                )?;
            }
        }
    }
    let x = any_tensor(dev, &[2, 3], DType::F32, 1)?;
    expect_err(
        data::permute_backward(None, &x, &[0, 0], None),
        ErrorKind::InvalidArgument,
        "permute_backward",
    )?;
    expect_err(
        data::permute_backward(None, &x, &[0], None),
        ErrorKind::InvalidArgument,
        "permute_backward",
    )?;
    let refs = [&x, &x];
    expect_err(
        data::concat_backward(None, &x, &refs, 0, 0, None),
        ErrorKind::ShapeMismatch,
        "concat_backward",
    )?;
    let y = ok(data::concat(None, &refs, 0, None))?;
    expect_err(
        data::concat_backward(None, &y, &refs, 0, 2, None),
        ErrorKind::InvalidArgument,
        "concat_backward",
    )?;
    Ok(())
}

/// An index tensor of `dt` (i32 or i64) with values from `v`.
fn index_tensor(
    dev: &Dev,
    v: &[i64],
    shape: &[usize],
    dt: DType,
) -> Result<Tensor, libtest_mimic::Failed> {
    let f: Vec<f64> = v.iter().map(|&i| i as f64).collect();
    from_f64(dev, &f, shape, dt)
}

/// Pseudo-random indices in `[-n, n)` (negative ones count from the end).
fn indices(count: usize, n: usize, seed: u64) -> Vec<i64> {
    (0..count)
        .map(|i| {
            let h = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                ^ seed.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            (h >> 11) as i64 % (2 * n as i64).max(1) - n as i64
        })
        .collect()
}

/// `rb_gather` (torch.gather / ONNX GatherElements with negative indices and dims) in
/// every dtype, index smaller than x outside dim, 0-d and empty cases; `rb_gather_backward`
/// (scatter-add, repeated indices summed) in every float dtype.
fn gather_and_backward(dev: &Dev) -> TestResult {
    use rocm_backend::ops::data as od;
    let cases: &[(&[usize], i64, &[usize])] = &[
        (&[3, 4], 1, &[3, 6]),
        (&[3, 4], 0, &[5, 4]),
        (&[3, 4], -1, &[2, 2]),
        (&[2, 3, 5], -2, &[2, 7, 4]),
        (&[4], 0, &[9]),
        (&[], 0, &[]),
        (&[3, 4], 1, &[0, 4]),
        (&[2, 3], 0, &[2, 0]),
        (&[2, 300], 1, &[2, 1000]),
    ];
    for idt in [DType::I64, DType::I32] {
        for dt in ALL {
            for (i, (xs, dim, is)) in cases.iter().enumerate() {
                let g = ok(od::gather_plan("gather", xs, *dim, is))?;
                let x = any_tensor(dev, xs, dt, 30 + i as u64)?;
                let iv = indices(is.iter().product(), g.axis_len, i as u64);
                let index = index_tensor(dev, &iv, is, idt)?;
                let out = poisoned(dev, is, dt)?;
                ok(data::gather(None, &x, *dim, &index, Some(&out)))?;
                let want = ok(od::gather_reference("gather", &values(&x)?, &g, &iv))?;
                let what = format!("gather {xs:?} dim {dim} index {is:?} {dt} {idt}");
                assert_close(&what, &values(&out)?, &want, 0.0, 0.0)?;
                if dt.is_float() {
                    let dy = randn(dev, is, dt, 40 + i as u64)?;
                    let dx = poisoned(dev, xs, dt)?;
                    ok(data::gather_backward(
                        None,
                        &dy,
                        xs,
                        *dim,
                        &index,
                        Some(&dx),
                    ))?;
                    let n: usize = xs.iter().product();
                    let want = ok(od::scatter_add_reference(
                        "gather",
                        &values(&dy)?,
                        &g,
                        &iv,
                        n,
                    ))?;
                    let tol = rtol(dt) * 10.0;
                    assert_close(&format!("{what} backward"), &values(&dx)?, &want, tol, tol)?;
                }
            }
        }
    }
    // Out-of-range indices (either sign), bad ranks and shapes, float indices.
    let x = any_tensor(dev, &[3, 4], DType::F32, 1)?;
    for bad in [4i64, -5] {
        let index = index_tensor(dev, &[0, bad], &[1, 2], DType::I64)?;
        expect_err(
            data::gather(None, &x, 1, &index, None),
            ErrorKind::InvalidArgument,
            "gather",
        )?;
        let dy = any_tensor(dev, &[1, 2], DType::F32, 2)?;
        expect_err(
            data::gather_backward(None, &dy, &[3, 4], 1, &index, None),
            ErrorKind::InvalidArgument,
            "gather_backward",
        )?;
    }
    let index = index_tensor(dev, &[0, 1], &[2], DType::I64)?;
    expect_err(
        data::gather(None, &x, 1, &index, None),
        ErrorKind::ShapeMismatch,
        "gather",
    )?;
    let index = index_tensor(dev, &[0; 5], &[5, 1], DType::I64)?;
    expect_err(
        data::gather(None, &x, 1, &index, None),
        ErrorKind::ShapeMismatch,
        "gather",
    )?;
    let index = any_tensor(dev, &[1, 1], DType::F32, 1)?;
    expect_err(
        data::gather(None, &x, 1, &index, None),
        ErrorKind::DtypeMismatch,
        "gather",
    )?;
    let index = index_tensor(dev, &[0], &[1, 1], DType::I64)?;
    expect_err(
        data::gather(None, &x, 2, &index, None),
        ErrorKind::InvalidArgument,
        "gather",
    )?;
    Ok(())
}

/// `rb_take` (ONNX Gather / numpy.take: indices of any rank along any axis, negative
/// indices) in every dtype and `rb_take_backward` in every float dtype.
fn take_and_backward(dev: &Dev) -> TestResult {
    use rocm_backend::ops::data as od;
    let cases: &[(&[usize], i64, &[usize])] = &[
        (&[5, 3], 0, &[4]),
        (&[2, 5, 3], 1, &[2, 3]),
        (&[2, 5, 3], -1, &[]),
        (&[7], 0, &[2, 2, 2]),
        (&[4, 6], -2, &[0]),
        (&[3, 1000], 1, &[1500]),
    ];
    for idt in [DType::I64, DType::I32] {
        for dt in ALL {
            for (i, (xs, axis, is)) in cases.iter().enumerate() {
                let (g, oshape) = ok(od::take_plan(xs, *axis, is))?;
                let x = any_tensor(dev, xs, dt, 50 + i as u64)?;
                let iv = indices(is.iter().product(), g.axis_len, 7 + i as u64);
                let idx = index_tensor(dev, &iv, is, idt)?;
                let out = poisoned(dev, &oshape, dt)?;
                ok(data::take(None, &x, *axis, &idx, Some(&out)))?;
                // NumPy's take, directly: out[o, j, k] = x[o, idx[j] mod n, k].
                let axis_n = g.axis_len;
                let (outer, inner) = (g.shape[0], g.shape[2]);
                let vx = values(&x)?;
                let mut want = vec![];
                for o in 0..outer {
                    for &k in &iv {
                        let k = if k < 0 { k + axis_n as i64 } else { k } as usize;
                        for q in 0..inner {
                            want.push(vx[(o * axis_n + k) * inner + q]);
                        }
                    }
                }
                let what = format!("take {xs:?} axis {axis} indices {is:?} {dt} {idt}");
                assert_close(&what, &values(&out)?, &want, 0.0, 0.0)?;
                if dt.is_float() {
                    let dy = randn(dev, &oshape, dt, 60 + i as u64)?;
                    let dx = poisoned(dev, xs, dt)?;
                    ok(data::take_backward(None, &dy, xs, *axis, &idx, Some(&dx)))?;
                    let n: usize = xs.iter().product();
                    let want = ok(od::scatter_add_reference("take", &values(&dy)?, &g, &iv, n))?;
                    let tol = rtol(dt) * 10.0;
                    assert_close(&format!("{what} backward"), &values(&dx)?, &want, tol, tol)?;
                }
            }
        }
    }
    let x = any_tensor(dev, &[3, 4], DType::F32, 1)?;
    let idx = index_tensor(dev, &[3], &[1], DType::I64)?;
    expect_err(
        data::take(None, &x, 0, &idx, None),
        ErrorKind::InvalidArgument,
        "take",
    )?;
    let s = any_tensor(dev, &[], DType::F32, 1)?;
    expect_err(
        data::take(None, &s, 0, &idx, None),
        ErrorKind::ShapeMismatch,
        "take",
    )?;
    let dy = any_tensor(dev, &[2, 4], DType::F32, 1)?;
    expect_err(
        data::take_backward(None, &dy, &[3, 4], 0, &idx, None),
        ErrorKind::ShapeMismatch,
        "take_backward",
    )?;
    Ok(())
}
