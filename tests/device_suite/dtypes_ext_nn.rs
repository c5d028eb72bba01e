//! f64 through the losses (mse, bce, nll, cross_entropy; class weights, class-probability
//! targets, bce's broadcast weight): forward and backward against the float64 references of
//! `ops::nn` at 1e-12, with NaN/inf inputs, ignored targets, label smoothing, classes strided
//! by spatial dims and empty inputs; out-of-range targets still answer INVALID_ARGUMENT.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::data::ScatterReduce;
use rocm_backend::ops::elementwise::BinaryOp;
use rocm_backend::ops::nn::{self as r, LossDesc, LossExt, LossKind, Reduction};
use rocm_backend::runtime::eager::Grad;
use rocm_backend::runtime::prelude as e;
use rocm_backend::runtime::{DType, Tensor, data, elementwise as ew};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        (
            "dtypes_ext_loss_f64_elementwise",
            dtypes_ext_loss_f64_elementwise,
        ),
        ("dtypes_ext_loss_f64_class", dtypes_ext_loss_f64_class),
        ("dtypes_ext_data_backward_f64", dtypes_ext_data_backward_f64),
        ("dtypes_ext_scatter_topk_wide", dtypes_ext_scatter_topk_wide),
        ("dtypes_ext_cumsum_f64", dtypes_ext_cumsum_f64),
        (
            "dtypes_ext_pointwise_grads_f64",
            dtypes_ext_pointwise_grads_f64,
        ),
        ("dtypes_ext_optim_f64", dtypes_ext_optim_f64),
        (
            "dtypes_ext_optim_f64_exact_hyperparams",
            dtypes_ext_optim_f64_exact_hyperparams,
        ),
        ("dtypes_ext_int_unary", dtypes_ext_int_unary),
        ("dtypes_ext_int_reduce", dtypes_ext_int_reduce),
        ("dtypes_ext_weighted_sum_f64", dtypes_ext_weighted_sum_f64),
    ]
}

const F64: DType = DType::F64;
const REDS: [Reduction; 3] = [Reduction::None, Reduction::Mean, Reduction::Sum];

/// f64 values that f32 cannot hold, in about [-1.5, 1.5].
fn vals(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let h = (((i as u64 + 1) * (seed * 2 + 3) * 2_654_435_761) >> 9) % 1000;
            (h as f64 - 500.0) / 333.0 + 1e-10 * (i % 7) as f64
        })
        .collect()
}

/// Values in (0, 1) (probabilities).
fn probs(n: usize, seed: u64) -> Vec<f64> {
    vals(n, seed)
        .iter()
        .map(|v| 0.02 + 0.96 * (v + 1.51) / 3.02)
        .collect()
}

fn close(what: &str, got: &[f64], want: &[f64]) -> TestResult {
    assert_close(what, got, want, 1e-12, 1e-14)
}

/// Runs forward and backward of one case through the weighted entries (and the plain ones
/// when there is no weight) against the references.
#[allow(clippy::too_many_arguments)]
fn check(
    dev: &Dev,
    what: &str,
    kind: LossKind,
    d: &LossDesc,
    ext: &LossExt,
    oshape: &[usize],
    x: (&Tensor, &[f64]),
    t: (&Tensor, &[f64]),
    w: Option<(&Tensor, &[f64])>,
    wref: Option<&[f64]>,
) -> TestResult {
    let (red, ign, ls) = (d.reduction, d.ignore_index, d.label_smoothing);
    let want = r::loss_ext_ref(x.1, t.1, wref, d, ext);
    let out = ok(e::loss_weighted(
        None,
        kind,
        x.0,
        t.0,
        w.map(|w| w.0),
        red,
        ign,
        ls,
        None,
    ))?;
    ensure(
        out.dtype() == F64 && out.shape() == oshape,
        format!("{what}: result {} {:?}", out.dtype(), out.shape()),
    )?;
    close(what, &values(&out)?, &want)?;
    let gv = vals(oshape.iter().product(), 77);
    let g = from_f64(dev, &gv, oshape, F64)?;
    let gi = ok(e::loss_weighted_backward(
        None,
        kind,
        &g,
        x.0,
        t.0,
        w.map(|w| w.0),
        red,
        ign,
        ls,
        None,
    ))?;
    let gwant = r::loss_ext_backward_ref(x.1, t.1, wref, &gv, d, ext);
    close(&format!("{what} backward"), &values(&gi)?, &gwant)?;
    if w.is_none() {
        let out = ok(e::loss(None, kind, x.0, t.0, red, ign, ls, None))?;
        close(&format!("{what} (plain)"), &values(&out)?, &want)?;
        let gi = ok(e::loss_backward(
            None, kind, &g, x.0, t.0, red, ign, ls, None,
        ))?;
        close(&format!("{what} (plain) backward"), &values(&gi)?, &gwant)?;
    }
    Ok(())
}

/// mse_loss and bce_loss (bce with a full and a broadcast weight) in f64, every reduction;
/// NaN and inf inputs; empty inputs (mean NaN, sum 0).
fn dtypes_ext_loss_f64_elementwise(dev: &Dev) -> TestResult {
    let shapes: &[&[usize]] = &[&[3, 5], &[7], &[], &[0, 4], &[2, 3, 300]];
    for (si, shape) in shapes.iter().enumerate() {
        let n: usize = shape.iter().product();
        for kind in [LossKind::Mse, LossKind::Bce] {
            let (mut xv, tv) = if kind == LossKind::Mse {
                (vals(n, si as u64), vals(n, 10 + si as u64))
            } else {
                (probs(n, si as u64), probs(n, 10 + si as u64))
            };
            if si == 0 && kind == LossKind::Mse {
                xv[3] = f64::NAN;
                xv[4] = f64::INFINITY;
            }
            if si == 1 && kind == LossKind::Bce {
                xv[0] = 0.0; // log clamped at -100
                xv[1] = 1.0;
            }
            let x = from_f64(dev, &xv, shape, F64)?;
            let t = from_f64(dev, &tv, shape, F64)?;
            for red in REDS {
                let (d, oshape) = ok(LossDesc::elementwise(kind, shape, shape, red))?;
                let what = format!("{} f64 {shape:?} {red:?}", kind.name());
                let ext = LossExt::default();
                check(
                    dev,
                    &what,
                    kind,
                    &d,
                    &ext,
                    &oshape,
                    (&x, &xv),
                    (&t, &tv),
                    None,
                    None,
                )?;
                if kind == LossKind::Bce {
                    let ext = LossExt {
                        weighted: true,
                        prob_target: false,
                    };
                    let wv = probs(n, 30 + si as u64);
                    let w = from_f64(dev, &wv, shape, F64)?;
                    check(
                        dev,
                        &format!("{what} weighted"),
                        kind,
                        &d,
                        &ext,
                        &oshape,
                        (&x, &xv),
                        (&t, &tv),
                        Some((&w, &wv)),
                        Some(&wv),
                    )?;
                    // A weight broadcast along the first dimension.
                    if shape.len() >= 2 {
                        let inner: usize = shape[1..].iter().product();
                        let rv = probs(inner, 40);
                        let full: Vec<f64> = (0..n).map(|i| rv[i % inner]).collect();
                        let wr = from_f64(dev, &rv, &shape[1..], F64)?;
                        check(
                            dev,
                            &format!("{what} broadcast weight"),
                            kind,
                            &d,
                            &ext,
                            &oshape,
                            (&x, &xv),
                            (&t, &tv),
                            Some((&wr, &rv)),
                            Some(&full),
                        )?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// nll_loss and cross_entropy in f64: i32 and i64 targets with ignored ones, label
/// smoothing, class weights (one 0), classes contiguous (long rows too) and strided, a 1-D
/// input, empty; cross_entropy with probability targets; an infinite logit; an
/// out-of-range target answers INVALID_ARGUMENT.
fn dtypes_ext_loss_f64_class(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[4, 5], &[4]),
        (&[7], &[]),
        (&[3, 4, 5], &[3, 5]),
        (&[2, 3, 2, 3], &[2, 2, 3]),
        (&[3, 1027], &[3]),
        (&[0, 4], &[0]),
    ];
    for (ci, (shape, tshape)) in cases.iter().enumerate() {
        let n: usize = shape.iter().product();
        let c = if shape.len() == 1 { shape[0] } else { shape[1] };
        let items: usize = tshape.iter().product();
        let mut xv: Vec<f64> = vals(n, 100 + ci as u64).iter().map(|v| 3.0 * v).collect();
        if ci == 0 {
            xv[6] = f64::NEG_INFINITY; // a class of no probability
        }
        let x = from_f64(dev, &xv, shape, F64)?;
        // Targets: every third ignored (-100), the others spread over the classes.
        let tv: Vec<f64> = (0..items)
            .map(|i| {
                if i % 3 == 2 {
                    -100.0
                } else {
                    ((i * 7 + ci) % c) as f64
                }
            })
            .collect();
        let wv: Vec<f64> = (0..c)
            .map(|k| if k == 1 { 0.0 } else { 0.25 + 0.37 * k as f64 })
            .collect();
        let w = from_f64(dev, &wv, &[c], F64)?;
        for tdt in [DType::I64, DType::I32] {
            let t = from_f64(dev, &tv, tshape, tdt)?;
            for kind in [LossKind::Nll, LossKind::CrossEntropy] {
                for red in REDS {
                    for ls in [0.0, 0.15] {
                        if kind == LossKind::Nll && ls > 0.0 {
                            continue;
                        }
                        let (d, oshape) = ok(LossDesc::class(kind, shape, tshape, red, -100, ls))?;
                        let what = format!("{} f64 {shape:?} {tdt} {red:?} ls={ls}", kind.name());
                        let ext = LossExt::default();
                        check(
                            dev,
                            &what,
                            kind,
                            &d,
                            &ext,
                            &oshape,
                            (&x, &xv),
                            (&t, &tv),
                            None,
                            None,
                        )?;
                        let ext = LossExt {
                            weighted: true,
                            prob_target: false,
                        };
                        check(
                            dev,
                            &format!("{what} weighted"),
                            kind,
                            &d,
                            &ext,
                            &oshape,
                            (&x, &xv),
                            (&t, &tv),
                            Some((&w, &wv)),
                            Some(&wv),
                        )?;
                    }
                }
            }
        }
        // Class probabilities (the input's shape and dtype).
        let pv = probs(n, 200 + ci as u64);
        let p = from_f64(dev, &pv, shape, F64)?;
        for red in REDS {
            for ls in [0.0, 0.2] {
                let kind = LossKind::CrossEntropy;
                let (d, oshape) = ok(LossDesc::class_probs(kind, shape, shape, red, -100, ls))?;
                let what = format!("cross_entropy probs f64 {shape:?} {red:?} ls={ls}");
                let ext = LossExt {
                    weighted: false,
                    prob_target: true,
                };
                check(
                    dev,
                    &what,
                    kind,
                    &d,
                    &ext,
                    &oshape,
                    (&x, &xv),
                    (&p, &pv),
                    None,
                    None,
                )?;
                let ext = LossExt {
                    weighted: true,
                    prob_target: true,
                };
                check(
                    dev,
                    &format!("{what} weighted"),
                    kind,
                    &d,
                    &ext,
                    &oshape,
                    (&x, &xv),
                    (&p, &pv),
                    Some((&w, &wv)),
                    Some(&wv),
                )?;
            }
        }
    }
    // An out-of-range target: INVALID_ARGUMENT naming it, forward and backward.
    let x = from_f64(dev, &vals(12, 5), &[3, 4], F64)?;
    let t = from_f64(dev, &[0.0, 4.0, 1.0], &[3], DType::I64)?;
    let g = from_f64(dev, &[1.0], &[], F64)?;
    for kind in [LossKind::Nll, LossKind::CrossEntropy] {
        match e::loss(None, kind, &x, &t, Reduction::Mean, -100, 0.0, None) {
            Err(err) if err.kind == ErrorKind::InvalidArgument && err.message.contains("4") => {}
            other => {
                return Err(format!("{} f64 bad target: {:?}", kind.name(), other.err()).into());
            }
        }
        match e::loss_backward(None, kind, &g, &x, &t, Reduction::Mean, -100, 0.0, None) {
            Err(err) if err.kind == ErrorKind::InvalidArgument => {}
            other => {
                return Err(
                    format!("{} f64 bad target backward: {:?}", kind.name(), other.err()).into(),
                );
            }
        }
    }
    Ok(())
}

type R = Result<Tensor, Failed>;
type Failed = libtest_mimic::Failed;

/// Checks the backward `bwd` of a data-moving forward `fwd` on x of `x_shape`: `fwd` of the
/// codes 1..=n (exact in f64) says which element of x each output element copied (0: none,
/// a padding or masked element), and the reference backward adds `dy` there in output order.
fn adjoint(
    dev: &Dev,
    what: &str,
    x_shape: &[usize],
    fwd: impl Fn(&Tensor) -> R,
    bwd: impl Fn(&Tensor) -> R,
) -> TestResult {
    let n: usize = x_shape.iter().product();
    let codes: Vec<f64> = (1..=n).map(|v| v as f64).collect();
    let y = fwd(&from_f64(dev, &codes, x_shape, F64)?)?;
    let yv = values(&y)?;
    let dyv = vals(yv.len(), 9);
    let dy = from_f64(dev, &dyv, y.shape(), F64)?;
    let mut want = vec![0.0; n];
    for (j, &c) in yv.iter().enumerate() {
        if c != 0.0 {
            want[c as usize - 1] += dyv[j];
        }
    }
    let got = bwd(&dy)?;
    ensure(
        got.dtype() == F64 && got.shape() == x_shape,
        format!("{what}: result {} {:?}", got.dtype(), got.shape()),
    )?;
    assert_close(what, &values(&got)?, &want, 1e-12, 1e-13)
}

/// The gradients of the data movers in f64 (gather, take, index_select, embedding, pad in
/// its three modes, expand, tile, trilu, scatter_add, scatter, topk), repeated indices
/// summing, against references built from the forward ops; empty inputs.
fn dtypes_ext_data_backward_f64(dev: &Dev) -> TestResult {
    let i64t = |v: &[i64], shape: &[usize]| -> R {
        let f: Vec<f64> = v.iter().map(|&x| x as f64).collect();
        from_f64(dev, &f, shape, DType::I64)
    };
    // gather along 1 with repeated indices.
    let xs = [3usize, 4];
    let idx = i64t(&[0, 3, 3, 1, 1, 1, 2, 0, -1], &[3, 3])?;
    adjoint(
        dev,
        "gather_backward f64",
        &xs,
        |x| ok(data::gather(None, x, 1, &idx, None)),
        |dy| ok(data::gather_backward(None, dy, &xs, 1, &idx, None)),
    )?;
    // take along 1 with a 2-D index.
    let xs = [2usize, 5, 3];
    let ti = i64t(&[4, 0, 4, 2, 4, -5], &[2, 3])?;
    adjoint(
        dev,
        "take_backward f64",
        &xs,
        |x| ok(data::take(None, x, 1, &ti, None)),
        |dy| ok(data::take_backward(None, dy, &xs, 1, &ti, None)),
    )?;
    let si = i64t(&[2, 2, 0, 4], &[4])?;
    adjoint(
        dev,
        "index_select_backward f64",
        &xs,
        |x| ok(data::index_select(None, x, 1, &si, None)),
        |dy| ok(data::index_select_backward(None, dy, &xs, 1, &si, None)),
    )?;
    // embedding: rows picked (repeats sum), f64 weight.
    let ws = [6usize, 4];
    let ei = i64t(&[5, 0, 5, 2, 5, 1], &[2, 3])?;
    adjoint(
        dev,
        "embedding_backward f64",
        &ws,
        |w| ok(data::embedding(None, w, &ei, None)),
        |dy| ok(data::embedding_backward(None, dy, &ei, 6, None)),
    )?;
    let bad = i64t(&[6], &[1])?;
    let dyb = from_f64(dev, &[1.0; 4], &[1, 4], F64)?;
    match data::embedding_backward(None, &dyb, &bad, 6, None) {
        Err(e) if e.kind == ErrorKind::InvalidArgument => {}
        r => return Err(format!("embedding_backward f64 index 6 of 6: {:?}", r.err()).into()),
    }
    // pad: constant (with cropping), reflect, replicate.
    let xs = [2usize, 3, 4];
    for (mode, pads) in [
        (data::PAD_CONSTANT, vec![1i64, 2, -1, 1]),
        (data::PAD_REFLECT, vec![2, 3, 1, 2]),
        (data::PAD_REPLICATE, vec![3, 1, 2, 0]),
    ] {
        adjoint(
            dev,
            &format!("pad_backward f64 mode {mode} {pads:?}"),
            &xs,
            |x| ok(data::pad(None, x, &pads, mode, 0.0, None)),
            |dy| ok(data::pad_backward(None, dy, &xs, &pads, mode, None)),
        )?;
    }
    // expand and tile.
    let xs = [3usize, 1, 2];
    adjoint(
        dev,
        "expand_backward f64",
        &xs,
        |x| ok(data::expand(None, x, &[4, 3, 5, 2], None)),
        |dy| ok(data::expand_backward(None, dy, &xs, None)),
    )?;
    adjoint(
        dev,
        "tile_backward f64",
        &xs,
        |x| ok(data::tile(None, x, &[2, 1, 3, 2], None)),
        |dy| ok(data::tile_backward(None, dy, &xs, &[2, 1, 3, 2], None)),
    )?;
    // trilu.
    let xs = [2usize, 4, 5];
    for (upper, diag) in [(true, 0i64), (false, -1), (true, 2)] {
        adjoint(
            dev,
            &format!("trilu_backward f64 upper={upper} diagonal={diag}"),
            &xs,
            |x| ok(data::trilu(None, x, upper, diag, None)),
            |dy| ok(data::trilu_backward(None, dy, upper, diag, None)),
        )?;
    }
    // topk_backward from topk's indices.
    let xs = [3usize, 6];
    let xv = vals(18, 4);
    let xt = from_f64(dev, &xv, &xs, F64)?;
    let (_, ti) = ok(data::topk(None, &xt, 3, 1, true, true, None, None))?;
    adjoint(
        dev,
        "topk_backward f64",
        &xs,
        |x| ok(data::gather(None, x, 1, &ti, None)),
        |dy| ok(data::topk_backward(None, dy, &xs, 1, &ti, None)),
    )?;
    // scatter_add / scatter backward: dx = dy, dsrc = gather(dy).
    let xs = [3usize, 4];
    let sidx = i64t(&[1, 1, 0, 3, 2, 2], &[3, 2])?;
    let dyv = vals(12, 21);
    let dy = from_f64(dev, &dyv, &xs, F64)?;
    let want_src = values(&ok(data::gather(None, &dy, 1, &sidx, None))?)?;
    let (dx, dsrc) = ok(data::scatter_add_backward(None, &dy, 1, &sidx, None, None))?;
    close("scatter_add_backward f64 dx", &values(&dx)?, &dyv)?;
    close("scatter_add_backward f64 dsrc", &values(&dsrc)?, &want_src)?;
    let (dx, dsrc) = ok(data::scatter_backward(
        None,
        &dy,
        1,
        &sidx,
        ScatterReduce::None,
        None,
        None,
    ))?;
    let mut want_dx = dyv.clone();
    for (r, c) in [(0usize, 1usize), (1, 0), (1, 3), (2, 2)] {
        want_dx[r * 4 + c] = 0.0;
    }
    close("scatter_backward f64 dx", &values(&dx)?, &want_dx)?;
    close("scatter_backward f64 dsrc", &values(&dsrc)?, &want_src)?;
    // Empty.
    let e0 = from_f64(dev, &[], &[0, 4], F64)?;
    let i0 = i64t(&[], &[0])?;
    let g = ok(data::index_select_backward(
        None,
        &e0,
        &[3, 4],
        0,
        &i0,
        None,
    ))?;
    close("index_select_backward f64 empty", &values(&g)?, &[0.0; 12])?;
    let g = ok(data::expand_backward(None, &e0, &[1, 4], None))?;
    close("expand_backward f64 empty", &values(&g)?, &[0.0; 4])?;
    Ok(())
}

/// scatter_add and scatter's reductions in f64 and the small integers (wrapping as PyTorch's
/// integers), topk in f64 (NaN above +inf, -0 equal to +0) and in i8/u8/i16 with their
/// extremes; bool still refused.
fn dtypes_ext_scatter_topk_wide(dev: &Dev) -> TestResult {
    let idx = from_f64(dev, &[1.0, 1.0, 0.0, 2.0, 2.0, 2.0], &[2, 3], DType::I64)?;
    // x [2, 3]; src [2, 3]; scatter along dim 1: row r, j -> (r, idx[r][j]).
    let targets = [(0usize, 1usize), (0, 1), (0, 0), (1, 2), (1, 2), (1, 2)];
    for dt in [DType::F64, DType::I8, DType::U8, DType::I16, DType::I32] {
        let (xv, sv): (Vec<f64>, Vec<f64>) = match dt {
            DType::F64 => (vals(6, 1), vals(6, 2)),
            DType::I8 => (
                vec![127.0, -128.0, 5.0, -7.0, 100.0, 0.0],
                vec![1.0, 2.0, -128.0, 100.0, 100.0, -3.0],
            ),
            DType::U8 => (
                vec![255.0, 0.0, 5.0, 7.0, 200.0, 1.0],
                vec![1.0, 2.0, 255.0, 100.0, 100.0, 3.0],
            ),
            _ => (
                vec![32767.0, -32768.0, 5.0, -7.0, 30000.0, 0.0],
                vec![1.0, 2.0, -32768.0, 3000.0, 3000.0, -3.0],
            ),
        };
        let wrap = |v: f64| -> f64 {
            match dt {
                DType::I8 => v as i64 as i8 as f64,
                DType::U8 => v as i64 as u8 as f64,
                DType::I16 => v as i64 as i16 as f64,
                DType::I32 => v as i64 as i32 as f64,
                _ => v,
            }
        };
        let x = from_f64(dev, &xv, &[2, 3], dt)?;
        let src = from_f64(dev, &sv, &[2, 3], dt)?;
        let mut want = xv.clone();
        for (j, &(r, c)) in targets.iter().enumerate() {
            want[r * 3 + c] = wrap(want[r * 3 + c] + sv[j]);
        }
        let y = ok(data::scatter_add(None, &x, 1, &idx, &src, None))?;
        ensure(
            y.dtype() == dt,
            format!("scatter_add {dt}: dtype {}", y.dtype()),
        )?;
        assert_close(
            &format!("scatter_add {dt}"),
            &values(&y)?,
            &want,
            1e-15,
            0.0,
        )?;
        for red in [
            ScatterReduce::Add,
            ScatterReduce::Mul,
            ScatterReduce::Max,
            ScatterReduce::Min,
        ] {
            let mut want = xv.clone();
            for (j, &(r, c)) in targets.iter().enumerate() {
                let (a, b) = (want[r * 3 + c], sv[j]);
                want[r * 3 + c] = match red {
                    ScatterReduce::Add => wrap(a + b),
                    ScatterReduce::Mul => match dt {
                        DType::F64 => a * b,
                        _ => wrap((a as i64).wrapping_mul(b as i64) as f64),
                    },
                    ScatterReduce::Max => a.max(b),
                    _ => a.min(b),
                };
            }
            let y = ok(data::scatter(None, &x, 1, &idx, &src, red, None))?;
            assert_close(
                &format!("scatter {dt} reduce {}", red.name()),
                &values(&y)?,
                &want,
                1e-15,
                0.0,
            )?;
        }
    }
    // topk.
    for dt in [DType::F64, DType::I8, DType::U8, DType::I16] {
        let xv: Vec<f64> = match dt {
            DType::F64 => vec![
                0.5,
                f64::NAN,
                -0.0,
                0.0,
                f64::INFINITY,
                -1e300,
                1.0 / 3.0,
                7e-310,
            ],
            DType::I8 => vec![-128.0, 127.0, 0.0, -1.0, 127.0, 5.0, -128.0, 1.0],
            DType::U8 => vec![0.0, 255.0, 7.0, 255.0, 1.0, 128.0, 0.0, 127.0],
            _ => vec![-32768.0, 32767.0, 0.0, -1.0, 32767.0, 5.0, -32768.0, 1.0],
        };
        let x = from_f64(dev, &xv, &[2, 4], dt)?;
        for largest in [true, false] {
            for dim in [1i64, 0] {
                let (v, i) = ok(data::topk(None, &x, 2, dim, largest, true, None, None))?;
                ensure(
                    v.dtype() == dt,
                    format!("topk {dt}: values dtype {}", v.dtype()),
                )?;
                // Reference: a stable sort by the order topk uses (NaN largest).
                let key = |a: f64| if a.is_nan() { f64::INFINITY } else { a };
                let (outer, n, inner) = if dim == 1 { (2, 4, 1) } else { (1, 2, 4) };
                let mut wv = Vec::new();
                let mut wi = Vec::new();
                let mut per: Vec<Vec<(f64, usize)>> = Vec::new();
                for o in 0..outer {
                    for c in 0..inner {
                        let mut e: Vec<(f64, usize)> =
                            (0..n).map(|j| (xv[(o * n + j) * inner + c], j)).collect();
                        e.sort_by(|a, b| {
                            let (ka, kb) = (key(a.0), key(b.0));
                            let ord = if largest {
                                kb.total_cmp(&ka)
                            } else {
                                ka.total_cmp(&kb)
                            };
                            // NaN above +inf: among equal keys a NaN goes first when largest.
                            let nan = (b.0.is_nan() as i32 - a.0.is_nan() as i32)
                                * if largest { 1 } else { -1 };
                            ord.then(nan.cmp(&0)).then(a.1.cmp(&b.1))
                        });
                        per.push(e);
                    }
                }
                for o in 0..outer {
                    for kk in 0..2 {
                        for pc in &per[o * inner..(o + 1) * inner] {
                            let (val, j) = pc[kk];
                            wv.push(val);
                            wi.push(j as f64);
                        }
                    }
                }
                let what = format!("topk {dt} dim {dim} largest={largest}");
                let gv = values(&v)?;
                ensure(
                    gv.iter().zip(&wv).all(|(a, b)| {
                        a.to_bits() == b.to_bits()
                            || (a == b && *a != 0.0)
                            || (a.is_nan() && b.is_nan())
                            || (*a == 0.0 && *b == 0.0)
                    }),
                    format!("{what}: values {gv:?}, expected {wv:?}"),
                )?;
                // Index ties among zeros (-0 == +0) go by position; compare the indices.
                assert_close(&format!("{what} indices"), &values(&i)?, &wi, 0.0, 0.0)?;
            }
        }
    }
    let b = from_f64(dev, &[1.0, 0.0], &[2], DType::Bool)?;
    match data::topk(None, &b, 1, 0, true, true, None, None) {
        Err(e) if e.kind == ErrorKind::DtypeMismatch && e.message.contains("bool") => {}
        r => return Err(format!("topk bool: {:?}", r.err()).into()),
    }
    Ok(())
}

/// cumsum in f64 (inclusive/exclusive, forward/reverse, along inner and outer dims) and its
/// backward against running sums (the integer dtypes: dtypes_ext_int_cumsum).
fn dtypes_ext_cumsum_f64(dev: &Dev) -> TestResult {
    let shape = [3usize, 5, 2];
    let xv = vals(30, 6);
    let x = from_f64(dev, &xv, &shape, F64)?;
    for dim in [0i64, 1, 2, -1] {
        let d = dim.rem_euclid(3) as usize;
        let (len, inner) = (shape[d], shape[d + 1..].iter().product::<usize>());
        for exclusive in [false, true] {
            for reverse in [false, true] {
                let mut want = vec![0.0; 30];
                let mut gwant = vec![0.0; 30];
                for e in 0..30 {
                    let j = (e / inner) % len;
                    let base = e - j * inner;
                    let on = |i: usize, j: usize| match (reverse, exclusive) {
                        (false, false) => i <= j,
                        (false, true) => i < j,
                        (true, false) => i >= j,
                        (true, true) => i > j,
                    };
                    want[e] = (0..len)
                        .filter(|&i| on(i, j))
                        .map(|i| xv[base + i * inner])
                        .sum();
                    gwant[e] = (0..len)
                        .filter(|&i| on(j, i))
                        .map(|i| xv[base + i * inner])
                        .sum();
                }
                let what = format!("cumsum f64 dim {dim} exclusive={exclusive} reverse={reverse}");
                let y = ok(data::cumsum(None, &x, dim, exclusive, reverse, None))?;
                assert_close(&what, &values(&y)?, &want, 1e-12, 1e-13)?;
                let g = ok(data::cumsum_backward(
                    None, &x, dim, exclusive, reverse, None,
                ))?;
                assert_close(
                    &format!("{what} backward"),
                    &values(&g)?,
                    &gwant,
                    1e-12,
                    1e-13,
                )?;
            }
        }
    }
    Ok(())
}

/// where/clamp_tensor/add_scaled backward, add_relu, mul_add, prelu and its backward in f64
/// against float64 formulas (alpha kept in f64), with NaN where meaningful.
fn dtypes_ext_pointwise_grads_f64(dev: &Dev) -> TestResult {
    let (a_s, b_s) = ([2usize, 3], [3usize]);
    let mut av = vals(6, 1);
    av[4] = f64::NAN;
    let bv = vals(3, 2);
    let a = from_f64(dev, &av, &a_s, F64)?;
    let b = from_f64(dev, &bv, &b_s, F64)?;
    let dyv = vals(6, 3);
    let dy = from_f64(dev, &dyv, &a_s, F64)?;
    let bsum = |f: &dyn Fn(usize) -> f64| -> Vec<f64> { (0..3).map(|c| f(c) + f(3 + c)).collect() };
    // add_relu, mul_add.
    let y = ok(ew::add_relu(None, &a, &b, None))?;
    let want: Vec<f64> = (0..6)
        .map(|i| {
            let s = av[i] + bv[i % 3];
            if s.is_nan() { s } else { s.max(0.0) }
        })
        .collect();
    close("add_relu f64", &values(&y)?, &want)?;
    let c = from_f64(dev, &dyv, &a_s, F64)?;
    let y = ok(ew::mul_add(None, &a, &b, &c, None))?;
    let want: Vec<f64> = (0..6).map(|i| av[i] * bv[i % 3] + dyv[i]).collect();
    close("mul_add f64", &values(&y)?, &want)?;
    // add_scaled / sub_scaled forward and backward with alpha = 0.1 (not an f32).
    for (op, sign) in [(BinaryOp::Add, 1.0), (BinaryOp::Sub, -1.0)] {
        let y = ok(ew::add_scaled(None, op, &a, &b, 0.1, None))?;
        let want: Vec<f64> = (0..6).map(|i| av[i] + sign * 0.1 * bv[i % 3]).collect();
        close(&format!("add_scaled {op:?} f64"), &values(&y)?, &want)?;
        let (da, db) = ok(ew::add_scaled_backward(
            None, op, &a, &b, &dy, 0.1, None, None,
        ))?;
        close(
            &format!("add_scaled_backward {op:?} f64 da"),
            &values(&da)?,
            &dyv,
        )?;
        let want = bsum(&|i| sign * 0.1 * dyv[i]);
        assert_close(
            &format!("add_scaled_backward {op:?} f64 db"),
            &values(&db)?,
            &want,
            1e-12,
            1e-15,
        )?;
    }
    // where_backward with a broadcast b.
    let condv = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0];
    let cond = from_f64(dev, &condv, &a_s, DType::Bool)?;
    let [da, db] = ok(ew::where_backward(
        None,
        &cond,
        &a,
        &b,
        &dy,
        [Grad::New, Grad::New],
    ))?;
    let want: Vec<f64> = (0..6)
        .map(|i| if condv[i] != 0.0 { dyv[i] } else { 0.0 })
        .collect();
    close("where_backward f64 da", &values(&da.unwrap())?, &want)?;
    let want = bsum(&|i| if condv[i] == 0.0 { dyv[i] } else { 0.0 });
    close("where_backward f64 db", &values(&db.unwrap())?, &want)?;
    // clamp_tensor_backward with both bounds (min broadcast).
    let lov = [-0.5, 0.2, 0.1];
    let hiv: Vec<f64> = vals(6, 8).iter().map(|v| v + 0.3).collect();
    let lo = from_f64(dev, &lov, &b_s, F64)?;
    let hi = from_f64(dev, &hiv, &a_s, F64)?;
    let [dx, dmin, dmax] = ok(ew::clamp_tensor_backward(
        None,
        &a,
        Some(&lo),
        Some(&hi),
        &dy,
        [Grad::New, Grad::New, Grad::New],
    ))?;
    let (mut wx, mut wmax) = (vec![0.0; 6], vec![0.0; 6]);
    let mut wmin = [0.0; 3];
    for i in 0..6 {
        let (x, l, h) = (av[i], lov[i % 3], hiv[i]);
        if x >= l && x <= h {
            wx[i] = dyv[i];
        }
        if x < l && l < h {
            wmin[i % 3] += dyv[i];
        }
        if x > h || h < l {
            wmax[i] = dyv[i];
        }
    }
    close("clamp_tensor_backward f64 dx", &values(&dx.unwrap())?, &wx)?;
    close(
        "clamp_tensor_backward f64 dmin",
        &values(&dmin.unwrap())?,
        &wmin,
    )?;
    close(
        "clamp_tensor_backward f64 dmax",
        &values(&dmax.unwrap())?,
        &wmax,
    )?;
    // prelu with one weight per channel (dimension 1 of [2, 3, 2]).
    let xs = [2usize, 3, 2];
    let mut xv = vals(12, 11);
    xv[5] = f64::NAN;
    let wv = [0.25, 0.1, -0.3];
    let x = from_f64(dev, &xv, &xs, F64)?;
    let w = from_f64(dev, &wv, &[3], F64)?;
    let ch = |i: usize| (i / 2) % 3;
    let y = ok(ew::prelu(None, &x, &w, None))?;
    let want: Vec<f64> = (0..12)
        .map(|i| {
            if xv[i] > 0.0 {
                xv[i]
            } else {
                wv[ch(i)] * xv[i]
            }
        })
        .collect();
    close("prelu f64", &values(&y)?, &want)?;
    let gyv = vals(12, 12);
    let gy = from_f64(dev, &gyv, &xs, F64)?;
    let (dx, dw) = ok(ew::prelu_backward(None, &x, &w, &gy, None, None))?;
    let want: Vec<f64> = (0..12)
        .map(|i| {
            if xv[i] > 0.0 {
                gyv[i]
            } else {
                wv[ch(i)] * gyv[i]
            }
        })
        .collect();
    close("prelu_backward f64 dx", &values(&dx)?, &want)?;
    let mut wdw = [0.0; 3];
    for i in 0..12 {
        // x <= 0 or NaN (a NaN x propagates into its channel's gradient).
        if xv[i] <= 0.0 || xv[i].is_nan() {
            wdw[ch(i)] += xv[i] * gyv[i];
        }
    }
    close("prelu_backward f64 dweight", &values(&dw)?, &wdw)?;
    Ok(())
}

/// f64 SGD (momentum, dampening, weight decay) and Adam/AdamW steps take the hyperparameters
/// as exact doubles (PyTorch's Python floats): with lr = 0.1, beta1 = 0.9, ... (none exact in
/// f32) three steps match torch's formulas written out here in float64 to 1e-14 (they would
/// differ near 1e-9 with the values rounded to f32, which the test checks is detectable).
fn dtypes_ext_optim_f64_exact_hyperparams(dev: &Dev) -> TestResult {
    use rocm_backend::ops::optim::{AdamAttrs, SgdAttrs};
    use rocm_backend::runtime::optim;
    let n = 29;
    let pv: Vec<f64> = (0..n).map(|i| 1.0 + 0.03 * i as f64).collect();
    let gv: Vec<f64> = (0..n).map(|i| 0.5 - 0.021 * i as f64).collect();
    let r32 = |v: f64| v as f32 as f64;
    // torch.optim.SGD (foreach=False) in float64.
    let sgd = |lr: f64, mom: f64, damp: f64, wd: f64| -> Vec<f64> {
        let (mut p, mut b) = (pv.clone(), vec![0.0; n]);
        for step in 0..3 {
            for i in 0..n {
                let d = gv[i] + wd * p[i];
                b[i] = if step == 0 {
                    d
                } else {
                    mom * b[i] + (1.0 - damp) * d
                };
                p[i] -= lr * b[i];
            }
        }
        p
    };
    let want = sgd(0.1, 0.9, 0.1, 0.01);
    let rounded = sgd(r32(0.1), r32(0.9), r32(0.1), r32(0.01));
    ensure(
        want.iter()
            .zip(&rounded)
            .any(|(a, b)| (a - b).abs() > 1e-11),
        "f32-rounded hyperparameters give a detectably different SGD result",
    )?;
    let p = from_f64(dev, &pv, &[n], DType::F64)?;
    let g = from_f64(dev, &gv, &[n], DType::F64)?;
    let b = from_f64(dev, &vec![0.0; n], &[n], DType::F64)?;
    for step in 0..3 {
        let a = SgdAttrs {
            lr: 0.1,
            momentum: 0.9,
            dampening: 0.1,
            weight_decay: 0.01,
            nesterov: false,
            first_step: step == 0,
        };
        ok(optim::sgd_step(None, &p, &g, Some(&b), &a))?;
    }
    assert_close("sgd f64 lr 0.1", &values(&p)?, &want, 1e-14, 1e-15)?;
    // torch.optim.Adam / AdamW in float64.
    for decoupled in [false, true] {
        let adam = |lr: f64, b1: f64, b2: f64, eps: f64, wd: f64| -> Vec<f64> {
            let (mut p, mut m, mut v) = (pv.clone(), vec![0.0; n], vec![0.0; n]);
            for step in 1..=3 {
                let bc1 = 1.0 - b1.powi(step);
                let bc2 = 1.0 - b2.powi(step);
                for i in 0..n {
                    let mut gi = gv[i];
                    if decoupled {
                        p[i] *= 1.0 - lr * wd;
                    } else {
                        gi += wd * p[i];
                    }
                    m[i] = b1 * m[i] + (1.0 - b1) * gi;
                    v[i] = b2 * v[i] + (1.0 - b2) * gi * gi;
                    p[i] -= lr / bc1 * m[i] / (v[i].sqrt() / bc2.sqrt() + eps);
                }
            }
            p
        };
        let want = adam(0.1, 0.9, 0.999, 1e-8, 0.01);
        let rounded = adam(r32(0.1), r32(0.9), r32(0.999), r32(1e-8), r32(0.01));
        ensure(
            want.iter()
                .zip(&rounded)
                .any(|(a, b)| (a - b).abs() > 1e-11),
            "f32-rounded hyperparameters give a detectably different Adam result",
        )?;
        let p = from_f64(dev, &pv, &[n], DType::F64)?;
        let m = from_f64(dev, &vec![0.0; n], &[n], DType::F64)?;
        let v = from_f64(dev, &vec![0.0; n], &[n], DType::F64)?;
        for step in 1..=3u64 {
            let a = AdamAttrs {
                lr: 0.1,
                beta1: 0.9,
                beta2: 0.999,
                eps: 1e-8,
                weight_decay: 0.01,
                step,
                amsgrad: false,
                decoupled,
            };
            ok(optim::adam_step(None, &p, &g, &m, &v, None, &a))?;
        }
        assert_close(
            &format!("adam f64 lr 0.1 decoupled={decoupled}"),
            &values(&p)?,
            &want,
            1e-14,
            1e-15,
        )?;
    }
    Ok(())
}

/// sgd_step (plain, momentum with the first step and later, dampening, nesterov, weight decay)
/// and adam_step/adamw_step (weight decay, amsgrad, several steps) on f64 parameters and state
/// against `ops::optim`'s float64 references at 1e-12; NaN gradients propagate; empty
/// parameters are no-ops.
fn dtypes_ext_optim_f64(dev: &Dev) -> TestResult {
    use rocm_backend::ops::optim::{AdamAttrs, SgdAttrs, adam_reference, sgd_reference};
    use rocm_backend::runtime::optim;
    let n = 37;
    let mut pv = vals(n, 1);
    let mut gv = vals(n, 2);
    gv[5] = f64::NAN;
    let sgds = [
        (0.1f64, 0.0f64, 0.0f64, 0.0f64, false),
        (0.05, 0.9, 0.0, 0.01, false),
        (0.05, 0.9, 0.25, 0.0, false),
        (0.01, 0.8, 0.0, 0.1, true),
    ];
    for (ci, &(lr, momentum, dampening, weight_decay, nesterov)) in sgds.iter().enumerate() {
        let p = from_f64(dev, &pv, &[n], F64)?;
        let g = from_f64(dev, &gv, &[n], F64)?;
        let b = from_f64(dev, &[0.0; 37], &[n], F64)?;
        let (mut wp, mut wb) = (pv.clone(), vec![0.0; n]);
        for first_step in [true, false, false] {
            let a = SgdAttrs {
                lr,
                momentum,
                dampening,
                weight_decay,
                nesterov,
                first_step,
            };
            let buf = (momentum != 0.0).then_some(&b);
            ok(optim::sgd_step(None, &p, &g, buf, &a))?;
            for i in 0..n {
                let (np, nb) = sgd_reference(wp[i], gv[i], wb[i], &a);
                wp[i] = np;
                wb[i] = nb;
            }
            let what = format!("sgd_step f64 case {ci} first_step={first_step}");
            close(&what, &values(&p)?, &wp)?;
            if momentum != 0.0 {
                close(&format!("{what} momentum_buf"), &values(&b)?, &wb)?;
            }
        }
    }
    pv[7] = -pv[7];
    for decoupled in [false, true] {
        for amsgrad in [false, true] {
            for weight_decay in [0.0f64, 0.01] {
                let p = from_f64(dev, &pv, &[n], F64)?;
                let g = from_f64(dev, &gv, &[n], F64)?;
                let m = from_f64(dev, &[0.0; 37], &[n], F64)?;
                let v = from_f64(dev, &[0.0; 37], &[n], F64)?;
                let x = from_f64(dev, &[0.0; 37], &[n], F64)?;
                let mut w: Vec<[f64; 4]> = pv.iter().map(|&p| [p, 0.0, 0.0, 0.0]).collect();
                for step in 1..=3u64 {
                    let a = AdamAttrs {
                        lr: 0.01,
                        beta1: 0.9,
                        beta2: 0.999,
                        eps: 1e-8,
                        weight_decay,
                        step,
                        amsgrad,
                        decoupled,
                    };
                    let xm = amsgrad.then_some(&x);
                    ok(optim::adam_step(None, &p, &g, &m, &v, xm, &a))?;
                    for (i, s) in w.iter_mut().enumerate() {
                        *s = adam_reference(s[0], gv[i], s[1], s[2], s[3], &a);
                    }
                    let what = format!(
                        "adam_step f64 decoupled={decoupled} amsgrad={amsgrad} wd={weight_decay} step {step}"
                    );
                    let col = |k: usize| -> Vec<f64> { w.iter().map(|s| s[k]).collect() };
                    close(&what, &values(&p)?, &col(0))?;
                    close(&format!("{what} exp_avg"), &values(&m)?, &col(1))?;
                    close(&format!("{what} exp_avg_sq"), &values(&v)?, &col(2))?;
                    if amsgrad {
                        close(&format!("{what} max_exp_avg_sq"), &values(&x)?, &col(3))?;
                    }
                }
            }
        }
    }
    // Empty parameters: nothing to do.
    let e = from_f64(dev, &[], &[0], F64)?;
    let a = SgdAttrs {
        lr: 0.1,
        momentum: 0.0,
        dampening: 0.0,
        weight_decay: 0.0,
        nesterov: false,
        first_step: true,
    };
    ok(optim::sgd_step(None, &e, &e, None, &a))?;
    Ok(())
}

/// neg, abs, sign and relu on every integer dtype with its extremes, as PyTorch's integer
/// kernels (neg wraps: i8 -128 stays -128, u8 wraps; abs of a signed minimum is itself, u8's
/// abs is the identity); in place; empty; the other unary ops still refuse integers.
fn dtypes_ext_int_unary(dev: &Dev) -> TestResult {
    use rocm_backend::ops::elementwise::UnaryOp;
    for dt in [DType::I8, DType::U8, DType::I16, DType::I32, DType::I64] {
        let xv: Vec<f64> = match dt {
            DType::I8 => vec![-128.0, -127.0, -1.0, 0.0, 1.0, 5.0, 127.0],
            DType::U8 => vec![0.0, 1.0, 2.0, 127.0, 128.0, 200.0, 255.0],
            DType::I16 => vec![-32768.0, -32767.0, -3.0, 0.0, 1.0, 300.0, 32767.0],
            DType::I32 => vec![-2147483648.0, -5.0, -1.0, 0.0, 1.0, 7.0, 2147483647.0],
            _ => vec![-9.0e15, -5.0, -1.0, 0.0, 1.0, 7.0, 9.0e15],
        };
        let wrap = |v: i64| -> f64 {
            match dt {
                DType::I8 => v as i8 as f64,
                DType::U8 => v as u8 as f64,
                DType::I16 => v as i16 as f64,
                DType::I32 => v as i32 as f64,
                _ => v as f64,
            }
        };
        let x = from_f64(dev, &xv, &[7], dt)?;
        for op in [UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Sign, UnaryOp::Relu] {
            let want: Vec<f64> = xv
                .iter()
                .map(|&v| {
                    let i = v as i64;
                    match op {
                        UnaryOp::Neg => wrap(i.wrapping_neg()),
                        UnaryOp::Abs if dt == DType::U8 => v,
                        UnaryOp::Abs => wrap(i.wrapping_abs()),
                        UnaryOp::Sign => i.signum() as f64,
                        _ => i.max(0) as f64,
                    }
                })
                .collect();
            let what = format!("{} {dt}", op.name());
            let y = ok(ew::unary(None, op, &x, None))?;
            ensure(y.dtype() == dt, format!("{what}: dtype {}", y.dtype()))?;
            assert_close(&what, &values(&y)?, &want, 0.0, 0.0)?;
            let xi = from_f64(dev, &xv, &[7], dt)?;
            ok(ew::unary(None, op, &xi, Some(&xi)))?;
            assert_close(&format!("{what} in place"), &values(&xi)?, &want, 0.0, 0.0)?;
            let e = from_f64(dev, &[], &[0, 3], dt)?;
            let y = ok(ew::unary(None, op, &e, None))?;
            ensure(
                y.shape() == [0, 3],
                format!("{what} empty: {:?}", y.shape()),
            )?;
        }
        match ew::unary(None, UnaryOp::Exp, &x, None) {
            Err(e) if e.kind == ErrorKind::DtypeMismatch && e.message.contains(dt.name()) => {}
            r => return Err(format!("exp {dt}: {:?}", r.err()).into()),
        }
    }
    let b = from_f64(dev, &[1.0, 0.0], &[2], DType::Bool)?;
    match ew::unary(None, UnaryOp::Neg, &b, None) {
        Err(e) if e.kind == ErrorKind::DtypeMismatch => Ok(()),
        r => Err(format!("neg bool: {:?}", r.err()).into()),
    }
}

/// max/min (over one, several and all dims, keepdim), argmax (with and without dim),
/// max_dim/min_dim on every integer dtype with its extremes and ties (the first index wins),
/// against loops here; bool still refused.
fn dtypes_ext_int_reduce(dev: &Dev) -> TestResult {
    use rocm_backend::ops::reduce::ReduceOp;
    use rocm_backend::runtime::reduce as rd;
    let shape = [3usize, 4, 5];
    for dt in [DType::I8, DType::U8, DType::I16, DType::I32, DType::I64] {
        let (lo, hi) = match dt {
            DType::I8 => (-128.0, 127.0),
            DType::U8 => (0.0, 255.0),
            DType::I16 => (-32768.0, 32767.0),
            DType::I32 => (-2147483648.0, 2147483647.0),
            _ => (-9.0e15, 9.0e15),
        };
        // Few distinct values (ties), the extremes in some rows.
        let xv: Vec<f64> = (0..60)
            .map(|i| match (i * 7 + 3) % 11 {
                0 => lo,
                1 => hi,
                k => (k % 5) as f64 + if dt == DType::U8 { 0.0 } else { -2.0 },
            })
            .collect();
        let x = from_f64(dev, &xv, &shape, dt)?;
        let at = |i: usize, j: usize, k: usize| xv[(i * 4 + j) * 5 + k];
        // Reference over `red` dims of [3, 4, 5]: (values, first flat index within the
        // reduced block) per kept position.
        let reference = |red: &[usize], largest: bool| -> (Vec<f64>, Vec<f64>) {
            let mut vals = Vec::new();
            let mut idx = Vec::new();
            let ext = |d: usize| if red.contains(&d) { 1 } else { shape[d] };
            for i0 in 0..ext(0) {
                for j0 in 0..ext(1) {
                    for k0 in 0..ext(2) {
                        let mut best: Option<(f64, usize)> = None;
                        let mut pos = 0;
                        for i in 0..shape[0] {
                            for j in 0..shape[1] {
                                for k in 0..shape[2] {
                                    let c = [i, j, k];
                                    let keep = [i0, j0, k0];
                                    if (0..3).any(|d| !red.contains(&d) && c[d] != keep[d]) {
                                        continue;
                                    }
                                    let v = at(i, j, k);
                                    let better = match best {
                                        None => true,
                                        Some((b, _)) => {
                                            if largest {
                                                v > b
                                            } else {
                                                v < b
                                            }
                                        }
                                    };
                                    if better {
                                        best = Some((v, pos));
                                    }
                                    pos += 1;
                                }
                            }
                        }
                        let (v, p) = best.unwrap();
                        vals.push(v);
                        idx.push(p as f64);
                    }
                }
            }
            (vals, idx)
        };
        for (dims, red) in [
            (vec![1i64], vec![1usize]),
            (vec![-1], vec![2]),
            (vec![0, 2], vec![0, 2]),
            (vec![], vec![0, 1, 2]),
        ] {
            for (op, largest) in [(ReduceOp::Max, true), (ReduceOp::Min, false)] {
                for keepdim in [false, true] {
                    let y = ok(rd::reduce(None, op, &x, &dims, keepdim, None))?;
                    let what = format!("{} {dt} dims {dims:?} keepdim={keepdim}", op.name());
                    ensure(y.dtype() == dt, format!("{what}: dtype {}", y.dtype()))?;
                    let (want, _) = reference(&red, largest);
                    assert_close(&what, &values(&y)?, &want, 0.0, 0.0)?;
                }
            }
        }
        for dim in [0i64, 1, 2] {
            let red = [dim as usize];
            let (wmax, imax) = reference(&red, true);
            let (wmin, imin) = reference(&red, false);
            let a = ok(rd::argmax(None, &x, dim, false, None))?;
            assert_close(
                &format!("argmax {dt} dim {dim}"),
                &values(&a)?,
                &imax,
                0.0,
                0.0,
            )?;
            let (v, i) = ok(rd::max_dim(None, ReduceOp::Max, &x, dim, true, None, None))?;
            let mut ks = shape.to_vec();
            ks[dim as usize] = 1;
            ensure(
                v.shape() == ks.as_slice(),
                format!("max_dim {dt}: {:?}", v.shape()),
            )?;
            assert_close(
                &format!("max_dim {dt} dim {dim}"),
                &values(&v)?,
                &wmax,
                0.0,
                0.0,
            )?;
            assert_close(
                &format!("max_dim {dt} dim {dim} indices"),
                &values(&i)?,
                &imax,
                0.0,
                0.0,
            )?;
            let (v, i) = ok(rd::max_dim(None, ReduceOp::Min, &x, dim, false, None, None))?;
            assert_close(
                &format!("min_dim {dt} dim {dim}"),
                &values(&v)?,
                &wmin,
                0.0,
                0.0,
            )?;
            assert_close(
                &format!("min_dim {dt} dim {dim} indices"),
                &values(&i)?,
                &imin,
                0.0,
                0.0,
            )?;
        }
        let a = ok(rd::argmax_all(None, &x, false, None))?;
        let (_, iall) = reference(&[0, 1, 2], true);
        assert_close(&format!("argmax_all {dt}"), &values(&a)?, &iall, 0.0, 0.0)?;
    }
    let b = from_f64(dev, &[1.0, 0.0], &[2], DType::Bool)?;
    match rd::reduce(None, ReduceOp::Max, &b, &[], false, None) {
        Err(e) if e.kind == ErrorKind::DtypeMismatch && e.message.contains("bool") => Ok(()),
        r => Err(format!("max bool: {:?}", r.err()).into()),
    }
}

/// weighted_sum and its backward in f64 against `ops::nn`'s references: batched, one row,
/// N = 0 (zeros) and D = 0.
fn dtypes_ext_weighted_sum_f64(dev: &Dev) -> TestResult {
    use rocm_backend::ops::nn::WeightedSumDesc;
    for xs in [&[2usize, 3, 5, 4][..], &[1, 7], &[3, 0, 4], &[2, 3, 0]] {
        let ws = &xs[..xs.len() - 1];
        let (d, ys) = ok(WeightedSumDesc::new("weighted_sum", xs, ws))?;
        let xv = vals(xs.iter().product(), 50);
        let wv = vals(ws.iter().product(), 51);
        let x = from_f64(dev, &xv, xs, F64)?;
        let w = from_f64(dev, &wv, ws, F64)?;
        let what = format!("weighted_sum f64 {xs:?}");
        let y = ok(e::weighted_sum(None, &x, &w, None))?;
        ensure(
            y.dtype() == F64 && y.shape() == ys.as_slice(),
            format!("{what}: result"),
        )?;
        close(&what, &values(&y)?, &r::weighted_sum_ref(&xv, &wv, &d))?;
        let dyv = vals(ys.iter().product(), 52);
        let dy = from_f64(dev, &dyv, &ys, F64)?;
        let [dx, dw] = ok(e::weighted_sum_backward(
            None,
            &dy,
            &x,
            &w,
            [Grad::New, Grad::New],
        ))?;
        let (wdx, wdw) = r::weighted_sum_backward_ref(&xv, &wv, &dyv, &d);
        close(&format!("{what} dx"), &values(&dx.unwrap())?, &wdx)?;
        close(&format!("{what} dw"), &values(&dw.unwrap())?, &wdw)?;
    }
    Ok(())
}
