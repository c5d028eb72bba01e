//! topk, scatter (with its reductions) and arange, forward and backward, against float64
//! references computed here. topk's checks do not depend on the order of equal elements:
//! the values must be the reference's sorted values, and every index must name a distinct
//! element holding its value.

use crate::common::*;
use libtest_mimic::Failed;
use rocm_backend::ErrorKind;
use rocm_backend::ops::data::ScatterReduce;
use rocm_backend::runtime::{DType, Tensor, data};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("topk_and_backward", topk_and_backward),
        ("topk_long_rows", topk_long_rows),
        ("scatter_reduce_and_backward", scatter_reduce_and_backward),
        ("arange_dtypes", arange_dtypes),
    ]
}

const NUMERIC: [DType; 5] = [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64];

fn expect_kind<T>(r: rocm_backend::Result<T>, kind: ErrorKind, what: &str) -> TestResult {
    match r {
        Ok(_) => Err(format!("{what}: succeeded, expected {kind:?}").into()),
        Err(e) if e.kind == kind => ensure(
            !e.message.is_empty(),
            format!("{what}: {kind:?} without a message"),
        ),
        Err(e) => Err(format!("{what}: {:?} ({}), expected {kind:?}", e.kind, e.message).into()),
    }
}

/// torch.topk's order of values: NaN above every number.
fn better(a: f64, b: f64, largest: bool) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    let o = match (a.is_nan(), b.is_nan()) {
        (true, true) => Equal,
        (true, false) => Greater,
        (false, true) => Less,
        _ => a.partial_cmp(&b).unwrap(),
    };
    if largest { o.reverse() } else { o }
}

fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// Inputs with repeated values (and NaN for floats) so ties and NaN are exercised.
fn topk_input(dev: &Dev, shape: &[usize], dt: DType, seed: u64) -> Result<Tensor, Failed> {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|i| {
            let h = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15 ^ seed) >> 40;
            if dt.is_float() && h % 17 == 3 {
                f64::NAN
            } else if dt.is_float() {
                (h % 41) as f64 * 0.25 - 5.0
            } else {
                (h % 41) as f64 - 20.0
            }
        })
        .collect();
    from_f64(dev, &v, shape, dt)
}

/// Checks `topk(x, k, dim, largest)`'s values and indices, and its backward.
fn check_topk(dev: &Dev, x: &Tensor, k: usize, dim: usize, largest: bool) -> TestResult {
    let dt = x.dtype();
    let shape = x.shape().to_vec();
    let what = format!("topk {dt} {shape:?} k={k} dim={dim} largest={largest}");
    let mut oshape = shape.clone();
    oshape[dim] = k;
    let vo = poisoned(dev, &oshape, dt)?;
    let io = poisoned(dev, &oshape, DType::I64)?;
    let (v, i) = ok(data::topk(
        None,
        x,
        k as i64,
        dim as i64 - shape.len() as i64, // a negative dim
        largest,
        true,
        Some(&vo),
        Some(&io),
    ))?;
    ensure(
        v.shape() == oshape.as_slice() && i.shape() == oshape.as_slice(),
        format!("{what}: shapes {:?} {:?}", v.shape(), i.shape()),
    )?;
    ensure(
        i.dtype() == DType::I64,
        format!("{what}: indices {}", i.dtype()),
    )?;
    let (vx, vv, vi) = (values(x)?, values(&v)?, values(&i)?);
    let n = shape[dim];
    let inner: usize = shape[dim + 1..].iter().product();
    let outer: usize = shape[..dim].iter().product();
    for o in 0..outer {
        for c in 0..inner {
            let at = |j: usize| (o * n + j) * inner + c;
            let ot = |j: usize| (o * k + j) * inner + c;
            let mut row: Vec<f64> = (0..n).map(|j| vx[at(j)]).collect();
            row.sort_by(|a, b| better(*a, *b, largest));
            let mut seen = vec![false; n];
            for j in 0..k {
                let (gv, gi) = (vv[ot(j)], vi[ot(j)]);
                ensure(
                    same(gv, row[j]),
                    format!(
                        "{what}: row ({o},{c}) value {j}: got {gv}, expected {}",
                        row[j]
                    ),
                )?;
                ensure(
                    gi >= 0.0 && (gi as usize) < n && !seen[gi as usize],
                    format!("{what}: row ({o},{c}) index {j}: {gi} (repeated or out of range)"),
                )?;
                seen[gi as usize] = true;
                ensure(
                    same(vx[at(gi as usize)], gv),
                    format!("{what}: row ({o},{c}) index {j} = {gi} does not hold {gv}"),
                )?;
            }
        }
    }
    if dt.is_float() {
        let dy = randn(dev, &oshape, dt, 11)?;
        let out = poisoned(dev, &shape, dt)?;
        let dx = ok(data::topk_backward(
            None,
            &dy,
            &shape,
            dim as i64,
            &i,
            Some(&out),
        ))?;
        let vd = values(&dy)?;
        let mut want = vec![0.0; vx.len()];
        for o in 0..outer {
            for c in 0..inner {
                for j in 0..k {
                    let e = (o * k + j) * inner + c;
                    want[(o * n + vi[e] as usize) * inner + c] += vd[e];
                }
            }
        }
        assert_close(&format!("{what} backward"), &values(&dx)?, &want, 0.0, 0.0)?;
    }
    Ok(())
}

fn topk_and_backward(dev: &Dev) -> TestResult {
    for (s, &dt) in NUMERIC.iter().enumerate() {
        let shape = [3usize, 5, 7];
        let x = topk_input(dev, &shape, dt, s as u64)?;
        for (dim, &n) in shape.iter().enumerate() {
            for k in [0, 1, 2, n] {
                for largest in [true, false] {
                    check_topk(dev, &x, k, dim, largest)?;
                }
            }
        }
        // A row of one, a row with every value equal, and -0.0 beside +0.0.
        let one = topk_input(dev, &[4, 1], dt, 9)?;
        check_topk(dev, &one, 1, 1, true)?;
        let eq = from_f64(dev, &[2.0; 12], &[2, 6], dt)?;
        check_topk(dev, &eq, 3, 1, true)?;
        check_topk(dev, &eq, 6, 1, false)?;
        if dt.is_float() {
            let z = from_f64(dev, &[0.0, -0.0, 1.0, -1.0, 0.0, -0.0], &[1, 6], dt)?;
            check_topk(dev, &z, 4, 1, true)?;
            check_topk(dev, &z, 4, 1, false)?;
            let inf = from_f64(
                dev,
                &[f64::INFINITY, f64::NAN, f64::NEG_INFINITY, 1.0, f64::NAN],
                &[1, 5],
                dt,
            )?;
            check_topk(dev, &inf, 5, 1, true)?;
            check_topk(dev, &inf, 5, 1, false)?;
        }
        // Empty tensors: a zero-size batch, and k = 0.
        let e = ok(Tensor::empty(dev.clone(), &[0, 4], dt))?;
        let (v, i) = ok(data::topk(None, &e, 2, 1, true, true, None, None))?;
        ensure(
            v.shape() == [0, 2] && i.shape() == [0, 2],
            "topk of an empty batch",
        )?;
        // Extreme integers keep their order.
        if !dt.is_float() {
            let big = if dt == DType::I64 {
                vec![i64::MAX as f64, i64::MIN as f64, 0.0, -1.0]
            } else {
                vec![i32::MAX as f64, i32::MIN as f64, 0.0, -1.0]
            };
            let b = from_f64(dev, &big, &[1, 4], dt)?;
            check_topk(dev, &b, 4, 1, true)?;
            check_topk(dev, &b, 4, 1, false)?;
        }
    }
    // Bad input: k out of range, bool, a wrong output.
    let x = randn(dev, &[2, 3], DType::F32, 1)?;
    expect_kind(
        data::topk(None, &x, 4, 1, true, true, None, None),
        ErrorKind::InvalidArgument,
        "topk k > size",
    )?;
    expect_kind(
        data::topk(None, &x, -1, 1, true, true, None, None),
        ErrorKind::InvalidArgument,
        "topk k < 0",
    )?;
    expect_kind(
        data::topk(None, &x, 1, 2, true, true, None, None),
        ErrorKind::InvalidArgument,
        "topk dim",
    )?;
    let b = ok(Tensor::zeros(dev.clone(), &[2, 3], DType::Bool))?;
    expect_kind(
        data::topk(None, &b, 1, 1, true, true, None, None),
        ErrorKind::DtypeMismatch,
        "topk bool",
    )?;
    let wrong = ok(Tensor::empty(dev.clone(), &[2, 1], DType::I32))?;
    expect_kind(
        data::topk(None, &x, 1, 1, true, true, None, Some(&wrong)),
        ErrorKind::DtypeMismatch,
        "topk i32 indices",
    )?;
    Ok(())
}

/// Rows longer than the GPU's shared-memory sort (2048) take its selection path.
fn topk_long_rows(dev: &Dev) -> TestResult {
    for &dt in &[DType::F32, DType::BF16, DType::I64] {
        let x = topk_input(dev, &[3, 3001], dt, 5)?;
        for k in [1, 7] {
            check_topk(dev, &x, k, 1, true)?;
            check_topk(dev, &x, k, 1, false)?;
        }
        let x = topk_input(dev, &[2, 2048], dt, 6)?;
        check_topk(dev, &x, 2048, 1, true)?;
        let x = topk_input(dev, &[2500, 2], dt, 7)?;
        check_topk(dev, &x, 3, 0, false)?;
    }
    Ok(())
}

/// The reference scatter over 2-D `x` `[r, c]` with index/src `[ir, ic]` along `dim`.
#[allow(clippy::too_many_arguments)]
fn scatter_ref(
    x: &[f64],
    xs: [usize; 2],
    idx: &[i64],
    is: [usize; 2],
    src: &[f64],
    ss: [usize; 2],
    dim: usize,
    reduce: ScatterReduce,
) -> Vec<f64> {
    let mut out = x.to_vec();
    let n = xs[dim] as i64;
    for i in 0..is[0] {
        for j in 0..is[1] {
            let k = idx[i * is[1] + j].rem_euclid(n) as usize;
            let at = if dim == 0 {
                k * xs[1] + j
            } else {
                i * xs[1] + k
            };
            let v = src[i * ss[1] + j];
            let a = out[at];
            out[at] = match reduce {
                ScatterReduce::None => v,
                ScatterReduce::Add => a + v,
                ScatterReduce::Mul => a * v,
                ScatterReduce::Max if a.is_nan() || v.is_nan() => f64::NAN,
                ScatterReduce::Min if a.is_nan() || v.is_nan() => f64::NAN,
                ScatterReduce::Max => a.max(v),
                ScatterReduce::Min => a.min(v),
            };
        }
    }
    out
}

fn scatter_reduce_and_backward(dev: &Dev) -> TestResult {
    let xs = [4usize, 5];
    let ss = [3usize, 5];
    for idt in [DType::I64, DType::I32] {
        for dim in 0..2usize {
            // Unique indices along `dim` per fiber (reduce none), with negative values;
            // index [3, 4] is smaller than src [3, 5].
            let is = [3usize, 4];
            let uniq: Vec<i64> = (0..12)
                .map(|e| {
                    let (i, j) = (e / 4, e % 4);
                    if dim == 0 {
                        [3, -4, 1][i]
                    } else {
                        [4, 0, -2, 1][j]
                    }
                })
                .collect();
            // Repeated indices for the reductions.
            let dup: Vec<i64> = (0..12).map(|e| [0, 1, -1, 0, 1, 0][e % 6]).collect();
            for (dts, reduce, iv) in [
                (
                    &[
                        DType::F32,
                        DType::F16,
                        DType::BF16,
                        DType::I32,
                        DType::I64,
                        DType::Bool,
                    ][..],
                    ScatterReduce::None,
                    &uniq,
                ),
                (&NUMERIC[..], ScatterReduce::Add, &dup),
                (&NUMERIC[..], ScatterReduce::Mul, &dup),
                (&NUMERIC[..], ScatterReduce::Max, &dup),
                (&NUMERIC[..], ScatterReduce::Min, &dup),
            ] {
                let idx = from_f64(
                    dev,
                    &iv.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                    &is,
                    idt,
                )?;
                for (s, &dt) in dts.iter().enumerate() {
                    let what = format!("scatter {} {dt} {idt} dim {dim}", reduce.name());
                    let make = |n: usize, seed: u64| -> Vec<f64> {
                        (0..n)
                            .map(|i| {
                                let h = ((i as u64 + 3) * (seed + 7) * 2654435761) % 13;
                                match dt {
                                    DType::Bool => (h % 2) as f64,
                                    // Small values keep products exact in every dtype.
                                    _ if reduce == ScatterReduce::Mul => h as f64 % 3.0 - 1.0,
                                    _ if dt.is_float()
                                        && h == 5
                                        && reduce != ScatterReduce::Mul =>
                                    {
                                        f64::NAN
                                    }
                                    _ => h as f64 - 6.0,
                                }
                            })
                            .collect()
                    };
                    let (vx, vs) = (make(20, s as u64), make(15, 100 + s as u64));
                    let x = from_f64(dev, &vx, &xs, dt)?;
                    let src = from_f64(dev, &vs, &ss, dt)?;
                    let out = poisoned(dev, &xs, dt)?;
                    let got = ok(data::scatter(
                        None,
                        &x,
                        dim as i64,
                        &idx,
                        &src,
                        reduce,
                        Some(&out),
                    ))?;
                    let want: Vec<f64> = scatter_ref(&vx, xs, iv, is, &vs, ss, dim, reduce)
                        .iter()
                        .map(|&v| round_to(dt, v))
                        .collect();
                    assert_close(&what, &values(&got)?, &want, 0.0, 0.0)?;
                }
                // Backward (none and add), floats.
                if matches!(reduce, ScatterReduce::None | ScatterReduce::Add) {
                    for &dt in &[DType::F32, DType::BF16] {
                        let dy = randn(dev, &xs, dt, 21)?;
                        let vd = values(&dy)?;
                        let (dx, dsrc) = ok(data::scatter_backward(
                            None, &dy, dim as i64, &idx, reduce, None, None,
                        ))?;
                        let mut want = vd.clone();
                        let n = xs[dim] as i64;
                        let mut wsrc = vec![];
                        for i in 0..is[0] {
                            for j in 0..is[1] {
                                let k = iv[i * is[1] + j].rem_euclid(n) as usize;
                                let at = if dim == 0 {
                                    k * xs[1] + j
                                } else {
                                    i * xs[1] + k
                                };
                                wsrc.push(vd[at]);
                                if reduce == ScatterReduce::None {
                                    want[at] = 0.0;
                                }
                            }
                        }
                        let what = format!("scatter_backward {} {dt} dim {dim}", reduce.name());
                        assert_close(&format!("{what} dx"), &values(&dx)?, &want, 0.0, 0.0)?;
                        ensure(
                            dsrc.shape() == is,
                            format!("{what}: dsrc {:?}", dsrc.shape()),
                        )?;
                        assert_close(&format!("{what} dsrc"), &values(&dsrc)?, &wsrc, 0.0, 0.0)?;
                    }
                }
            }
        }
        // Bad input: an index out of range (checked on the device), dtypes, shapes.
        let x = randn(dev, &xs, DType::F32, 1)?;
        let src = randn(dev, &ss, DType::F32, 2)?;
        let bad = from_f64(dev, &[0.0, 4.0, 0.0], &[1, 3], idt)?;
        expect_kind(
            data::scatter(None, &x, 0, &bad, &src, ScatterReduce::None, None),
            ErrorKind::InvalidArgument,
            "scatter index out of range",
        )?;
        let idx = from_f64(dev, &[0.0; 6], &[1, 6], idt)?;
        expect_kind(
            data::scatter(None, &x, 0, &idx, &src, ScatterReduce::None, None),
            ErrorKind::ShapeMismatch,
            "scatter index larger than src",
        )?;
        let idx = from_f64(dev, &[0.0; 3], &[1, 3], idt)?;
        let b = ok(Tensor::zeros(dev.clone(), &xs, DType::Bool))?;
        let bs = ok(Tensor::zeros(dev.clone(), &ss, DType::Bool))?;
        expect_kind(
            data::scatter(None, &b, 0, &idx, &bs, ScatterReduce::Add, None),
            ErrorKind::DtypeMismatch,
            "scatter add bool",
        )?;
        let s16 = randn(dev, &ss, DType::F16, 2)?;
        expect_kind(
            data::scatter(None, &x, 0, &idx, &s16, ScatterReduce::None, None),
            ErrorKind::DtypeMismatch,
            "scatter src dtype",
        )?;
        expect_kind(
            data::scatter_backward(None, &x, 0, &idx, ScatterReduce::Mul, None, None),
            ErrorKind::Unsupported,
            "scatter_backward mul",
        )?;
    }
    // An empty index leaves x as it is.
    let x = randn(dev, &[2, 3], DType::F32, 3)?;
    let idx = ok(Tensor::empty(dev.clone(), &[0, 3], DType::I64))?;
    let src = ok(Tensor::empty(dev.clone(), &[0, 3], DType::F32))?;
    let got = ok(data::scatter(
        None,
        &x,
        0,
        &idx,
        &src,
        ScatterReduce::None,
        None,
    ))?;
    assert_close(
        "scatter empty index",
        &values(&got)?,
        &values(&x)?,
        0.0,
        0.0,
    )?;
    Ok(())
}

fn arange_dtypes(dev: &Dev) -> TestResult {
    let s = rocm_backend::runtime::Stream::default_for(dev.clone());
    let cases: [(f64, f64, f64); 7] = [
        (0.0, 10.0, 1.0),
        (-3.0, 7.0, 3.0),
        (10.0, -10.0, -4.0),
        (0.5, 2.0, 0.25),
        (1.0, 1.0, 1.0),
        (0.0, 1.0, 0.1),
        (-1.0, 1.0, 0.3),
    ];
    let wide = [DType::F64, DType::I8, DType::U8, DType::I16];
    for &dt in NUMERIC.iter().chain(&wide) {
        for &(start, end, step) in &cases {
            if dt == DType::U8 && (start < 0.0 || end < -1.0) {
                continue; // u8 holds no negative values
            }
            let integral = [start, end, step].iter().all(|v| v.fract() == 0.0);
            let what = format!("arange({start}, {end}, {step}) {dt}");
            let r = data::arange(Some(&s), start, end, step, dt, None);
            if dt.is_integral() && !integral {
                expect_kind(r, ErrorKind::InvalidArgument, &what)?;
                continue;
            }
            let t = ok(r)?;
            let n = ((end - start) / step).ceil().max(0.0) as usize;
            ensure(
                t.shape() == [n] && t.dtype() == dt,
                format!("{what}: {:?} {}", t.shape(), t.dtype()),
            )?;
            ensure(
                t.device().name() == dev.name(),
                format!("{what}: made on {}", t.device().name()),
            )?;
            let want: Vec<f64> = (0..n)
                .map(|i| round_to(dt, start + i as f64 * step))
                .collect();
            // (a GPU may contract start + i * step into one fma: 1 ulp in f64)
            let tol = if dt == DType::F64 { 1e-15 } else { 0.0 };
            assert_close(&what, &values(&t)?, &want, tol, tol)?;
            // Into a given output (its device decides).
            let out = poisoned(dev, &[n], dt)?;
            let t = ok(data::arange(None, start, end, step, dt, Some(&out)))?;
            assert_close(&format!("{what} out"), &values(&t)?, &want, tol, tol)?;
        }
    }
    // Large i64 values (up to 2^53, what a double argument holds) stay exact.
    let big = (1i64 << 52) as f64;
    let t = ok(data::arange(
        Some(&s),
        big,
        big + 4.0,
        2.0,
        DType::I64,
        None,
    ))?;
    let mut h = vec![0u8; 16];
    ok(t.copy_to_host(&mut h, None))?;
    let v0 = i64::from_le_bytes(h[..8].try_into().unwrap());
    let v1 = i64::from_le_bytes(h[8..].try_into().unwrap());
    ensure(
        v0 == 1 << 52 && v1 == (1 << 52) + 2,
        format!("arange i64 near 2^52: {v0} {v1}"),
    )?;
    for (st, e, sp, kind) in [
        (0.0, 5.0, 0.0, ErrorKind::InvalidArgument),
        (0.0, 5.0, -1.0, ErrorKind::InvalidArgument),
        (5.0, 0.0, 1.0, ErrorKind::InvalidArgument),
        (0.0, f64::INFINITY, 1.0, ErrorKind::InvalidArgument),
        (0.0, f64::NAN, 1.0, ErrorKind::InvalidArgument),
    ] {
        expect_kind(
            data::arange(Some(&s), st, e, sp, DType::F32, None),
            kind,
            &format!("arange({st}, {e}, {sp})"),
        )?;
    }
    expect_kind(
        data::arange(Some(&s), 0.0, 3.0, 1.0, DType::Bool, None),
        ErrorKind::DtypeMismatch,
        "arange bool",
    )?;
    let out = ok(Tensor::empty(dev.clone(), &[4], DType::F32))?;
    expect_kind(
        data::arange(None, 0.0, 3.0, 1.0, DType::F32, Some(&out)),
        ErrorKind::ShapeMismatch,
        "arange out shape",
    )?;
    Ok(())
}
