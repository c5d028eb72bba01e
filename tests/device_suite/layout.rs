//! Channels-last (NHWC / NDHWC) convolution and pooling, and the layout conversions, against
//! the float64 references of `ops::conv` / `ops::pool` (computed channels-first, the results
//! permuted on the host); and pooling's fast paths (the compile-time window/stride kernels of
//! kernels/pool.hip): every variant, odd sizes, padding, ceil_mode, count_include_pad,
//! padding per side, divisor_override, NaN and -inf, f32/f16/bf16.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::conv::{self, Activation, ConvAttrs, ConvAttrsEx, Layout};
use rocm_backend::ops::pool::{self, PoolAttrs, PoolAttrsEx, PoolKind};
use rocm_backend::runtime::DType;

use rocm_backend::runtime::prelude as nn;
use rocm_backend::runtime::prelude::Grad;

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("pool_fast_paths", pool_fast_paths),
        ("max_pool_wide_rows", max_pool_wide_rows),
        ("pool_backward_ties", pool_backward_ties),
        ("channels_last_conversions", channels_last_conversions),
        ("conv_channels_last", conv_channels_last),
        ("conv_transpose_channels_last", conv_transpose_channels_last),
        ("pool_channels_last", pool_channels_last),
        ("batch_norm_channels_last", batch_norm_channels_last),
    ]
}

/// Host permutation of a dense `shape` tensor: `out[i] = x[perm-th dims]`.
fn permute_host(x: &[f64], shape: &[usize], perm: &[usize]) -> Vec<f64> {
    let out_shape: Vec<usize> = perm.iter().map(|&d| shape[d]).collect();
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        let off: usize = idx.iter().zip(perm).map(|(&i, &d)| i * strides[d]).sum();
        out.push(x[off]);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < out_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

fn to_last(x: &[f64], first_shape: &[usize]) -> Vec<f64> {
    permute_host(x, first_shape, &Layout::to_last_perm(first_shape.len()))
}

fn to_first(x: &[f64], last_shape: &[usize]) -> Vec<f64> {
    permute_host(x, last_shape, &Layout::to_first_perm(last_shape.len()))
}

fn tol(dt: DType) -> f64 {
    if dt == DType::F32 { 1e-4 } else { 3e-2 }
}

/// to_channels_last / to_channels_first for ranks 3 to 5, every float dtype and i64, odd
/// sizes and an empty tensor; a rank-2 input is SHAPE_MISMATCH.
fn channels_last_conversions(dev: &Dev) -> TestResult {
    let shapes: [&[usize]; 5] = [
        &[2, 3, 5],
        &[2, 5, 7, 3],
        &[1, 3, 2, 5, 4],
        &[3, 33, 17, 9],
        &[0, 3, 4, 4],
    ];
    for dt in [DType::F32, DType::F16, DType::BF16, DType::I64] {
        for (i, xs) in shapes.iter().enumerate() {
            let n: usize = xs.iter().product();
            let xv: Vec<f64> = (0..n).map(|v| ((v * 7 + i) % 251) as f64 - 100.0).collect();
            let x = from_f64(dev, &xv, xs, dt)?;
            let last = ok(nn::to_channels_last(None, &x, None))?;
            let ls = Layout::last_shape(xs);
            ensure(
                last.shape() == ls.as_slice(),
                format!("to_channels_last shape {:?}", last.shape()),
            )?;
            let want = to_last(&xv, xs);
            ensure(
                values(&last)? == want,
                format!("to_channels_last {xs:?} {dt}"),
            )?;
            let back = poisoned(dev, xs, dt)?;
            ok(nn::to_channels_first(None, &last, Some(&back)))?;
            ensure(
                values(&back)? == xv,
                format!("to_channels_first {xs:?} {dt}"),
            )?;
        }
    }
    let x = randn(dev, &[3, 4], DType::F32, 1)?;
    expect_err(
        nn::to_channels_last(None, &x, None),
        ErrorKind::ShapeMismatch,
        "to_channels_last",
    )?;
    Ok(())
}

/// A channels-last convolution case: spatial rank, x `[N, C, ...]`, w `[K, C / g, ...]`,
/// stride, padding before, padding after, dilation, groups (all channels-first shapes).
type Case = (
    usize,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    usize,
);

fn conv_channels_last(dev: &Dev) -> TestResult {
    let cases: Vec<Case> = vec![
        (
            2,
            vec![2, 3, 7, 6],
            vec![4, 3, 3, 3],
            vec![1, 1],
            vec![1, 1],
            vec![1, 1],
            vec![1, 1],
            1,
        ),
        (
            2,
            vec![1, 4, 9, 11],
            vec![6, 2, 3, 2],
            vec![2, 1],
            vec![1, 0],
            vec![1, 0],
            vec![1, 2],
            2,
        ),
        (
            2,
            vec![2, 8, 5, 5],
            vec![8, 1, 3, 3],
            vec![1, 1],
            vec![1, 1],
            vec![1, 1],
            vec![2, 2],
            8,
        ),
        (
            2,
            vec![1, 5, 8, 7],
            vec![3, 5, 3, 3],
            vec![2, 2],
            vec![0, 1],
            vec![1, 0],
            vec![1, 1],
            1,
        ),
        (
            1,
            vec![2, 4, 13],
            vec![6, 2, 3],
            vec![2],
            vec![1],
            vec![1],
            vec![1],
            2,
        ),
        (
            3,
            vec![1, 2, 4, 5, 6],
            vec![3, 2, 2, 3, 2],
            vec![1, 2, 1],
            vec![1, 0, 1],
            vec![1, 0, 1],
            vec![1, 1, 2],
            1,
        ),
    ];
    for dt in FLOATS {
        for (i, (nd, xs, ws, st, pb, pa, dil, groups)) in cases.iter().enumerate() {
            let what = format!("conv NHWC case {i} {dt}");
            let first = ConvAttrsEx {
                attrs: ConvAttrs {
                    stride: st.clone(),
                    padding: pb.clone(),
                    dilation: dil.clone(),
                    groups: *groups,
                    output_padding: vec![0],
                },
                pad_after: pa.clone(),
                layout: Layout::ChannelsFirst,
            };
            let last = ConvAttrsEx {
                layout: Layout::ChannelsLast,
                ..first.clone()
            };
            let xf = randn(dev, xs, dt, 1000 + i as u64)?;
            let wf = randn(dev, ws, dt, 1010 + i as u64)?;
            let b = randn(dev, &[ws[0]], dt, 1020 + i as u64)?;
            let (xv, wv) = (values(&xf)?, values(&wf)?);
            let x = from_f64(dev, &to_last(&xv, xs), &Layout::last_shape(xs), dt)?;
            let w = from_f64(dev, &to_last(&wv, ws), &Layout::last_shape(ws), dt)?;
            // The channels-first result on the same device is the reference (itself checked
            // against the float64 reference by conv.rs's bodies); the symmetric cases also
            // against conv_reference directly.
            let yf = ok(nn::conv_ex(
                None,
                &xf,
                &wf,
                Some(&b),
                &first,
                *nd,
                Activation::Relu,
                None,
            ))?;
            let ys = yf.shape().to_vec();
            let out = poisoned(dev, &Layout::last_shape(&ys), dt)?;
            ok(nn::conv_ex(
                None,
                &x,
                &w,
                Some(&b),
                &last,
                *nd,
                Activation::Relu,
                Some(&out),
            ))?;
            let got = to_first(&values(&out)?, &Layout::last_shape(&ys));
            assert_close(&what, &got, &values(&yf)?, tol(dt), tol(dt))?;
            if pb == pa {
                let g = ok(conv::conv_geom("conv", xs, ws, &first.attrs, *nd))?;
                let want: Vec<f64> = conv::conv_reference(&g, &xv, &wv, Some(&values(&b)?))
                    .iter()
                    .map(|v| v.max(0.0))
                    .collect();
                assert_close(
                    &format!("{what} vs reference"),
                    &got,
                    &want,
                    tol(dt),
                    tol(dt),
                )?;
            }
            // Backward data and weight.
            let dyf = randn(dev, &ys, dt, 1030 + i as u64)?;
            let dyv = values(&dyf)?;
            let dy = from_f64(dev, &to_last(&dyv, &ys), &Layout::last_shape(&ys), dt)?;
            let dxf = ok(nn::conv_ex_backward_data(
                None, &dyf, &wf, xs, &first, *nd, None,
            ))?;
            let dx = poisoned(dev, &Layout::last_shape(xs), dt)?;
            ok(nn::conv_ex_backward_data(
                None,
                &dy,
                &w,
                &Layout::last_shape(xs),
                &last,
                *nd,
                Some(&dx),
            ))?;
            let got = to_first(&values(&dx)?, &Layout::last_shape(xs));
            assert_close(
                &format!("{what} dx"),
                &got,
                &values(&dxf)?,
                tol(dt),
                tol(dt),
            )?;
            let (dwf, dbf) = ok(nn::conv_ex_backward_weight(
                None, &xf, &dyf, ws, &first, *nd, true,
            ))?;
            let (dw, db) = ok(nn::conv_ex_backward_weight(
                None,
                &x,
                &dy,
                &Layout::last_shape(ws),
                &last,
                *nd,
                true,
            ))?;
            let got = to_first(&values(&dw)?, &Layout::last_shape(ws));
            assert_close(
                &format!("{what} dw"),
                &got,
                &values(&dwf)?,
                tol(dt),
                tol(dt),
            )?;
            let (db, dbf) = (db.ok_or("no db")?, dbf.ok_or("no db")?);
            assert_close(
                &format!("{what} db"),
                &values(&db)?,
                &values(&dbf)?,
                tol(dt),
                tol(dt),
            )?;
        }
    }
    // A channels-last weight whose channels do not match the input's.
    let x = randn(dev, &[1, 4, 4, 3], DType::F32, 1)?;
    let w = randn(dev, &[2, 3, 3, 2], DType::F32, 2)?;
    let last = ConvAttrsEx {
        attrs: ConvAttrs::default(),
        pad_after: vec![0],
        layout: Layout::ChannelsLast,
    };
    expect_err(
        nn::conv_ex(None, &x, &w, None, &last, 2, Activation::None, None),
        ErrorKind::ShapeMismatch,
        "conv2d",
    )?;
    Ok(())
}

/// A channels-last transposed convolution case (channels-first shapes): spatial rank, x
/// `[N, C, ...]`, w `[C, K / g, ...]`, stride, padding, output_padding, dilation, groups.
type TCase = (
    usize,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    usize,
);

/// conv_transpose_ex with the channels-last layout (forward with and without a bias,
/// backward data, backward weight and bias) against the channels-first op on the same
/// device and, for f32, the float64 references (the transposed convolution is the data
/// gradient of the convolution `conv_transpose_geom` describes): 1D/2D/3D, stride,
/// output_padding, dilation, groups (depthwise too), f32/f16/bf16. Per-side padding is
/// INVALID_ARGUMENT.
fn conv_transpose_channels_last(dev: &Dev) -> TestResult {
    let cases: Vec<TCase> = vec![
        (
            2,
            vec![2, 4, 5, 6],
            vec![4, 3, 3, 3],
            vec![2, 2],
            vec![1, 1],
            vec![1, 1],
            vec![1, 1],
            1,
        ),
        (
            2,
            vec![1, 6, 4, 5],
            vec![6, 2, 2, 3],
            vec![1, 2],
            vec![0, 1],
            vec![0, 1],
            vec![2, 1],
            2,
        ),
        (
            2,
            vec![2, 8, 5, 5],
            vec![8, 1, 3, 3],
            vec![2, 2],
            vec![1, 1],
            vec![1, 1],
            vec![1, 1],
            8,
        ),
        (
            1,
            vec![2, 4, 7],
            vec![4, 2, 3],
            vec![1],
            vec![1],
            vec![0],
            vec![2],
            2,
        ),
        (
            3,
            vec![1, 2, 3, 4, 3],
            vec![2, 3, 2, 3, 2],
            vec![1, 2, 1],
            vec![0, 1, 1],
            vec![0, 0, 0],
            vec![1, 1, 1],
            1,
        ),
    ];
    for dt in FLOATS {
        for (i, (nd, xs, ws, st, pad, opad, dil, groups)) in cases.iter().enumerate() {
            let what = format!("conv_transpose NHWC case {i} {dt}");
            let attrs = ConvAttrs {
                stride: st.clone(),
                padding: pad.clone(),
                dilation: dil.clone(),
                groups: *groups,
                output_padding: opad.clone(),
            };
            let first = ConvAttrsEx {
                attrs: attrs.clone(),
                pad_after: pad.clone(),
                layout: Layout::ChannelsFirst,
            };
            let last = ConvAttrsEx {
                layout: Layout::ChannelsLast,
                ..first.clone()
            };
            let g = ok(conv::conv_transpose_geom("t", xs, ws, &attrs, *nd))?;
            let ys = g.x_shape();
            let k = g.c_in;
            let xf = randn(dev, xs, dt, 1300 + i as u64)?;
            let wf = randn(dev, ws, dt, 1310 + i as u64)?;
            let b = randn(dev, &[k], dt, 1320 + i as u64)?;
            let (xv, wv, bv) = (values(&xf)?, values(&wf)?, values(&b)?);
            let x = from_f64(dev, &to_last(&xv, xs), &Layout::last_shape(xs), dt)?;
            let w = from_f64(dev, &to_last(&wv, ws), &Layout::last_shape(ws), dt)?;
            // The float64 reference: conv_transpose(x) is the convolution's data gradient.
            let sp: usize = ys[2..].iter().product();
            let mut want = conv::conv_backward_data_reference(&g, &xv, &wv);
            for (j, v) in want.iter_mut().enumerate() {
                *v += bv[(j / sp) % k];
            }
            for bias in [None, Some(&b)] {
                let yf = ok(nn::conv_transpose_ex(
                    None, &xf, &wf, bias, &first, *nd, None,
                ))?;
                let out = poisoned(dev, &Layout::last_shape(&ys), dt)?;
                ok(nn::conv_transpose_ex(
                    None,
                    &x,
                    &w,
                    bias,
                    &last,
                    *nd,
                    Some(&out),
                ))?;
                let got = to_first(&values(&out)?, &Layout::last_shape(&ys));
                let what = format!("{what} bias {}", bias.is_some());
                assert_close(&what, &got, &values(&yf)?, tol(dt), tol(dt))?;
                if bias.is_some() && dt == DType::F32 {
                    assert_close(&format!("{what} vs reference"), &got, &want, 1e-4, 1e-4)?;
                }
            }
            // Backward data: the convolution of dy with w.
            let dyf = randn(dev, &ys, dt, 1330 + i as u64)?;
            let dyv = values(&dyf)?;
            let dy = from_f64(dev, &to_last(&dyv, &ys), &Layout::last_shape(&ys), dt)?;
            let dxf = ok(nn::conv_transpose_ex_backward_data(
                None, &dyf, &wf, xs, &first, *nd, None,
            ))?;
            let dx = poisoned(dev, &Layout::last_shape(xs), dt)?;
            ok(nn::conv_transpose_ex_backward_data(
                None,
                &dy,
                &w,
                &Layout::last_shape(xs),
                &last,
                *nd,
                Some(&dx),
            ))?;
            let got = to_first(&values(&dx)?, &Layout::last_shape(xs));
            assert_close(
                &format!("{what} dx"),
                &got,
                &values(&dxf)?,
                tol(dt),
                tol(dt),
            )?;
            if dt == DType::F32 {
                let want = conv::conv_reference(&g, &dyv, &wv, None);
                assert_close(&format!("{what} dx vs reference"), &got, &want, 1e-4, 1e-4)?;
            }
            // Backward weight and bias.
            let (dwf, dbf) = ok(nn::conv_transpose_ex_backward_weight(
                None, &xf, &dyf, ws, &first, *nd, true,
            ))?;
            let (dw, db) = ok(nn::conv_transpose_ex_backward_weight(
                None,
                &x,
                &dy,
                &Layout::last_shape(ws),
                &last,
                *nd,
                true,
            ))?;
            let got = to_first(&values(&dw)?, &Layout::last_shape(ws));
            assert_close(
                &format!("{what} dw"),
                &got,
                &values(&dwf)?,
                tol(dt),
                tol(dt),
            )?;
            let (db, dbf) = (db.ok_or("no db")?, dbf.ok_or("no db")?);
            assert_close(
                &format!("{what} db"),
                &values(&db)?,
                &values(&dbf)?,
                tol(dt),
                tol(dt),
            )?;
            if dt == DType::F32 {
                let (want_dw, _) = conv::conv_backward_weight_reference(&g, &dyv, &xv);
                assert_close(
                    &format!("{what} dw vs reference"),
                    &got,
                    &want_dw,
                    1e-4,
                    1e-4,
                )?;
                let mut want_db = vec![0.0; k];
                for (j, v) in dyv.iter().enumerate() {
                    want_db[(j / sp) % k] += v;
                }
                assert_close(
                    &format!("{what} db vs reference"),
                    &values(&db)?,
                    &want_db,
                    1e-4,
                    1e-4,
                )?;
            }
        }
    }
    // Per-side padding is refused, in either layout.
    let x = randn(dev, &[1, 4, 4, 2], DType::F32, 5)?;
    let w = randn(dev, &[2, 3, 3, 3], DType::F32, 6)?;
    let bad = ConvAttrsEx {
        attrs: ConvAttrs {
            padding: vec![1],
            ..ConvAttrs::default()
        },
        pad_after: vec![0],
        layout: Layout::ChannelsLast,
    };
    expect_err(
        nn::conv_transpose_ex(None, &x, &w, None, &bad, 2, None),
        ErrorKind::InvalidArgument,
        "conv_transpose2d",
    )?;
    Ok(())
}

/// Channels-last pooling (forward and backward) against the channels-first references: 1D,
/// 2D, 3D, channels divisible by 4 (and 16) and not, dilation, ceil_mode, padding per side,
/// divisor_override, NaN in max pooling.
fn pool_channels_last(dev: &Dev) -> TestResult {
    // (spatial rank, channels-first shape, kernel, stride, pad before, pad after, dilation, ceil)
    type PCase<'a> = (
        usize,
        &'a [usize],
        &'a [usize],
        &'a [usize],
        &'a [usize],
        &'a [usize],
        &'a [usize],
        bool,
    );
    let cases: Vec<PCase> = vec![
        (
            2,
            &[2, 8, 9, 7],
            &[3, 3],
            &[2, 2],
            &[1, 1],
            &[1, 1],
            &[1, 1],
            false,
        ),
        (
            2,
            &[1, 3, 8, 8],
            &[2, 2],
            &[2, 2],
            &[0, 0],
            &[0, 0],
            &[1, 1],
            false,
        ),
        (
            2,
            &[2, 5, 7, 9],
            &[3, 2],
            &[2, 3],
            &[1, 0],
            &[0, 1],
            &[1, 1],
            true,
        ),
        (
            2,
            &[1, 4, 9, 9],
            &[3, 3],
            &[2, 2],
            &[1, 1],
            &[1, 1],
            &[2, 2],
            false,
        ),
        // channels in whole vectors of 16 (the CPU's AVX-512 kernel; the executor's
        // blocked values pool so): ResNet's 3×3/2 pool, and padding per side with ceil_mode
        (
            2,
            &[1, 16, 12, 12],
            &[3, 3],
            &[2, 2],
            &[1, 1],
            &[1, 1],
            &[1, 1],
            false,
        ),
        (
            2,
            &[2, 32, 9, 7],
            &[3, 3],
            &[2, 2],
            &[1, 0],
            &[0, 1],
            &[1, 1],
            true,
        ),
        (1, &[2, 12, 11], &[4], &[3], &[2], &[2], &[1], true),
        (
            3,
            &[1, 4, 5, 6, 7],
            &[2, 3, 2],
            &[2, 1, 2],
            &[1, 1, 0],
            &[1, 1, 0],
            &[1, 1, 1],
            false,
        ),
    ];
    let kinds = [
        PoolKind::Max,
        PoolKind::Avg {
            count_include_pad: true,
        },
        PoolKind::Avg {
            count_include_pad: false,
        },
    ];
    for dt in FLOATS {
        for kind in kinds {
            for (i, (nd, xs, k, st, pb, pa, dil, ceil)) in cases.iter().enumerate() {
                let avg = kind != PoolKind::Max;
                if avg && dil.iter().any(|&d| d != 1) {
                    continue;
                }
                for div in [None, Some(3)] {
                    if div.is_some() && !avg {
                        continue;
                    }
                    let what = format!("pool NHWC {kind:?} case {i} {dt} divisor {div:?}");
                    let first = PoolAttrsEx {
                        attrs: PoolAttrs {
                            kernel: k.to_vec(),
                            stride: st.to_vec(),
                            padding: pb.to_vec(),
                            dilation: dil.to_vec(),
                            ceil_mode: *ceil,
                        },
                        pad_after: pa.to_vec(),
                        divisor_override: div,
                        layout: Layout::ChannelsFirst,
                    };
                    let last = PoolAttrsEx {
                        layout: Layout::ChannelsLast,
                        ..first.clone()
                    };
                    let g = ok(pool::pool_geom_ex("pool", kind, xs, &first, *nd))?;
                    let xf = randn(dev, xs, dt, 1100 + i as u64)?;
                    let mut xv = values(&xf)?;
                    if !avg {
                        xv[5] = f64::NAN;
                    }
                    let ls = Layout::last_shape(xs);
                    let x = from_f64(dev, &to_last(&xv, xs), &ls, dt)?;
                    let ys = g.y_shape();
                    let yls = Layout::last_shape(&ys);
                    let out = poisoned(dev, &yls, dt)?;
                    ok(nn::pool_ex(None, kind, &x, &last, *nd, Some(&out)))?;
                    let want: Vec<f64> = pool::pool_reference(&g, &xv)
                        .iter()
                        .map(|v| round_to(dt, *v))
                        .collect();
                    let got = to_first(&values(&out)?, &yls);
                    assert_close_dtype(&what, &got, &want, dt)?;
                    let dyv = values(&randn(dev, &ys, dt, 1110 + i as u64)?)?;
                    let dy = from_f64(dev, &to_last(&dyv, &ys), &yls, dt)?;
                    let dx = poisoned(dev, &ls, dt)?;
                    ok(nn::pool_ex_backward(
                        None,
                        kind,
                        &x,
                        &dy,
                        &last,
                        *nd,
                        Some(&dx),
                    ))?;
                    let want = pool::pool_backward_reference(&g, &xv, &dyv);
                    let got = to_first(&values(&dx)?, &ls);
                    assert_close(&format!("{what} backward"), &got, &want, tol(dt), tol(dt))?;
                }
            }
        }
    }
    // A grad_output of the channels-first output's shape is refused.
    let x = randn(dev, &[1, 4, 4, 3], DType::F32, 3)?;
    let dy = randn(dev, &[1, 3, 2, 2], DType::F32, 4)?;
    let last = PoolAttrsEx {
        attrs: PoolAttrs {
            kernel: vec![2],
            stride: vec![2],
            padding: vec![0],
            dilation: vec![1],
            ceil_mode: false,
        },
        pad_after: vec![0],
        divisor_override: None,
        layout: Layout::ChannelsLast,
    };
    expect_err(
        nn::pool_ex_backward(None, PoolKind::Max, &x, &dy, &last, 2, None),
        ErrorKind::ShapeMismatch,
        "max_pool2d_backward",
    )?;
    Ok(())
}

fn ex(k: usize, s: usize, pb: [usize; 2], pa: [usize; 2], nd: usize, ceil: bool) -> PoolAttrsEx {
    PoolAttrsEx {
        attrs: PoolAttrs {
            kernel: vec![k; nd],
            stride: vec![s; nd],
            padding: pb[..nd].to_vec(),
            dilation: vec![1],
            ceil_mode: ceil,
        },
        pad_after: pa[..nd].to_vec(),
        divisor_override: None,
        layout: Layout::ChannelsFirst,
    }
}

/// The GPU's fast 2D/1D pooling paths (and the generic ones around them) against the
/// float64 references: forward, and the backward gathers (max pooling's arg-max pass first),
/// with ties, NaN and -inf, padding per side, ceil_mode, count_include_pad, divisor_override.
fn pool_fast_paths(dev: &Dev) -> TestResult {
    // (spatial rank, shape, window, stride, pad before, pad after, ceil_mode)
    type FastCase = (
        usize,
        Vec<usize>,
        usize,
        usize,
        [usize; 2],
        [usize; 2],
        bool,
    );
    let cases: Vec<FastCase> = vec![
        (2, vec![2, 3, 8, 8], 2, 2, [0, 0], [0, 0], false),
        (2, vec![1, 5, 9, 11], 2, 2, [1, 0], [0, 1], true),
        (2, vec![2, 3, 13, 17], 3, 2, [1, 1], [1, 1], false),
        (2, vec![1, 2, 12, 7], 3, 2, [1, 1], [1, 1], true),
        (2, vec![1, 2, 10, 9], 3, 2, [0, 1], [1, 0], true),
        (2, vec![3, 2, 7, 5], 3, 1, [1, 1], [1, 1], false),
        (2, vec![1, 1, 9, 33], 3, 1, [0, 0], [0, 0], false),
        (2, vec![1, 3, 1, 1], 3, 2, [1, 1], [1, 1], false),
        (1, vec![2, 3, 11], 2, 2, [0, 0], [0, 0], true),
        (1, vec![2, 3, 13], 3, 2, [1, 0], [1, 0], false),
        (1, vec![1, 2, 10], 3, 2, [1, 0], [0, 0], true),
        // Many blocks (32-bit index decomposition across planes).
        (2, vec![4, 16, 45, 37], 3, 2, [1, 1], [1, 1], false),
        (2, vec![2, 16, 64, 62], 2, 2, [0, 0], [0, 0], false),
        // No fast path: a window of 256 positions (max pooling's int arg-max buffer).
        (2, vec![1, 2, 20, 19], 16, 3, [8, 2], [1, 8], true),
    ];
    let kinds = [
        PoolKind::Max,
        PoolKind::Avg {
            count_include_pad: true,
        },
        PoolKind::Avg {
            count_include_pad: false,
        },
    ];
    for dt in FLOATS {
        for kind in kinds {
            for (i, (nd, xs, k, s, pb, pa, ceil)) in cases.iter().enumerate() {
                let mut attrs = ex(*k, *s, *pb, *pa, *nd, *ceil);
                for div in [None, Some(5)] {
                    if div.is_some() && kind == PoolKind::Max {
                        continue;
                    }
                    attrs.divisor_override = div;
                    let what = format!("fast pool {kind:?} case {i} {dt} divisor {div:?}");
                    let g = ok(pool::pool_geom_ex("pool", kind, xs, &attrs, *nd))?;
                    let x = randn(dev, xs, dt, 900 + i as u64)?;
                    let mut xv = values(&x)?;
                    // Odd cases: values on a coarse grid, so windows hold ties (the gradient
                    // goes to the first maximum in scan order).
                    if i % 2 == 1 {
                        xv.iter_mut().for_each(|v| *v = (*v * 2.0).round() / 2.0);
                    }
                    // NaN and -inf in max pooling: a NaN wins its windows (the last NaN
                    // takes the gradient, as in PyTorch), -inf is a value.
                    if kind == PoolKind::Max && xv.len() > 7 {
                        xv[3] = f64::NAN;
                        xv[7] = f64::NEG_INFINITY;
                        if xv.len() > 9 {
                            xv[4] = f64::NAN;
                        }
                    }
                    let x = from_f64(dev, &xv, xs, dt)?;
                    let out = poisoned(dev, &g.y_shape(), dt)?;
                    ok(nn::pool_ex(None, kind, &x, &attrs, *nd, Some(&out)))?;
                    let want: Vec<f64> = pool::pool_reference(&g, &xv)
                        .iter()
                        .map(|v| round_to(dt, *v))
                        .collect();
                    assert_close_dtype(&what, &values(&out)?, &want, dt)?;
                    // The backward gathers (max: the arg-max pass first).
                    let dyv = values(&randn(dev, &g.y_shape(), dt, 950 + i as u64)?)?;
                    let dy = from_f64(dev, &dyv, &g.y_shape(), dt)?;
                    let dx = poisoned(dev, xs, dt)?;
                    ok(nn::pool_ex_backward(
                        None,
                        kind,
                        &x,
                        &dy,
                        &attrs,
                        *nd,
                        Some(&dx),
                    ))?;
                    let want = pool::pool_backward_reference(&g, &xv, &dyv);
                    assert_close(
                        &format!("{what} backward"),
                        &values(&dx)?,
                        &want,
                        tol(dt),
                        tol(dt),
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// 2-D max pooling over rows wider than a vector (the CPU's AVX-512 f32 kernel: row
/// buffers with -inf margins, stride-1 and stride-2 vectors of 16 outputs, a scalar loop for
/// other strides) against the float64 reference: odd widths, padding per side, ceil_mode
/// windows past the input, NaN at row ends and starts and whole windows of NaN, -inf planes,
/// ties; every float dtype.
fn max_pool_wide_rows(dev: &Dev) -> TestResult {
    // (shape, window, stride, pad before, pad after, ceil_mode)
    type Case = (Vec<usize>, usize, usize, [usize; 2], [usize; 2], bool);
    let cases: Vec<Case> = vec![
        // ResNet's stem pool (fewer channels)
        (vec![1, 3, 112, 112], 3, 2, [1, 1], [1, 1], false),
        (vec![2, 3, 17, 37], 3, 2, [1, 1], [1, 1], false),
        (vec![1, 2, 9, 33], 3, 2, [1, 1], [1, 1], true),
        (vec![1, 2, 6, 50], 2, 2, [0, 0], [0, 0], false),
        (vec![1, 2, 7, 49], 2, 2, [1, 0], [0, 1], true),
        (vec![1, 3, 11, 31], 3, 1, [1, 1], [1, 1], false),
        (vec![1, 2, 5, 16], 3, 1, [0, 1], [1, 0], false),
        (vec![1, 2, 8, 45], 5, 3, [2, 2], [2, 2], true),
        (vec![1, 2, 4, 17], 1, 1, [0, 0], [0, 0], false),
        (vec![1, 1, 3, 1], 3, 2, [1, 1], [1, 1], false),
        (vec![1, 1, 2, 15], 4, 4, [2, 2], [2, 2], true),
    ];
    for dt in FLOATS {
        for (i, (xs, k, s, pb, pa, ceil)) in cases.iter().enumerate() {
            let attrs = ex(*k, *s, *pb, *pa, 2, *ceil);
            let what = format!("max pool wide rows case {i} {xs:?} {dt}");
            let g = ok(pool::pool_geom_ex("pool", PoolKind::Max, xs, &attrs, 2))?;
            let mut xv = values(&randn(dev, xs, dt, 1200 + i as u64)?)?;
            let (h, w) = (xs[2], xs[3]);
            let plane = h * w;
            if i % 2 == 1 {
                // ties
                xv.iter_mut().for_each(|v| *v = (*v * 2.0).round() / 2.0);
            }
            // NaN at the first and last element of rows, in the middle of the first plane, a
            // block of NaN (whole windows), and (with a second plane) an all -inf plane.
            for r in (0..h).step_by(3) {
                xv[r * w] = f64::NAN;
                xv[r * w + w - 1] = f64::NAN;
            }
            xv[plane / 2] = f64::NAN;
            xv[plane - 1] = f64::NEG_INFINITY;
            if h >= 4 && w >= 8 {
                for r in 1..4 {
                    for c in 3..7 {
                        xv[r * w + c] = f64::NAN;
                    }
                }
            }
            if xs[1] > 1 {
                xv[plane..2 * plane].fill(f64::NEG_INFINITY);
            }
            let x = from_f64(dev, &xv, xs, dt)?;
            let out = poisoned(dev, &g.y_shape(), dt)?;
            ok(nn::pool_ex(None, PoolKind::Max, &x, &attrs, 2, Some(&out)))?;
            let want: Vec<f64> = pool::pool_reference(&g, &xv)
                .iter()
                .map(|v| round_to(dt, *v))
                .collect();
            let got = values(&out)?;
            // NaN where the reference has NaN; -inf where it has -inf.
            for (j, (a, b)) in got.iter().zip(&want).enumerate() {
                if b.is_nan() != a.is_nan() || (b.is_infinite() && a != b) {
                    return Err(format!("{what}: element {j} is {a}, expected {b}").into());
                }
            }
            assert_close_dtype(&what, &got, &want, dt)?;
        }
    }
    Ok(())
}

/// Max pooling's backward gathers on the generic paths (1D, 3D, dilation, ceil_mode,
/// padding per side, a window of 256 positions) with ties and NaN, channels-first and
/// channels-last, against the float64 reference: the gradient goes to the first maximum in
/// scan order, a NaN wins (the last NaN, as PyTorch); average pooling alongside.
fn pool_backward_ties(dev: &Dev) -> TestResult {
    // (spatial rank, channels-first shape, kernel, stride, pad before, pad after, dilation, ceil)
    type TieCase<'a> = (
        usize,
        &'a [usize],
        &'a [usize],
        &'a [usize],
        &'a [usize],
        &'a [usize],
        &'a [usize],
        bool,
    );
    let cases: Vec<TieCase> = vec![
        (1, &[2, 5, 17], &[4], &[3], &[2], &[1], &[1], true),
        (1, &[1, 4, 19], &[3], &[1], &[1], &[1], &[3], false),
        (
            2,
            &[2, 3, 11, 9],
            &[3, 2],
            &[2, 1],
            &[1, 0],
            &[0, 1],
            &[2, 1],
            true,
        ),
        (
            3,
            &[1, 4, 5, 6, 7],
            &[2, 3, 3],
            &[2, 2, 1],
            &[1, 1, 1],
            &[0, 1, 1],
            &[1, 1, 2],
            true,
        ),
        (
            2,
            &[1, 2, 20, 19],
            &[16, 16],
            &[3, 3],
            &[8, 2],
            &[1, 8],
            &[1, 1],
            true,
        ),
    ];
    let kinds = [
        PoolKind::Max,
        PoolKind::Avg {
            count_include_pad: false,
        },
    ];
    for dt in FLOATS {
        for kind in kinds {
            for (i, (nd, xs, k, st, pb, pa, dil, ceil)) in cases.iter().enumerate() {
                if kind != PoolKind::Max && dil.iter().any(|&d| d != 1) {
                    continue;
                }
                let first = PoolAttrsEx {
                    attrs: PoolAttrs {
                        kernel: k.to_vec(),
                        stride: st.to_vec(),
                        padding: pb.to_vec(),
                        dilation: dil.to_vec(),
                        ceil_mode: *ceil,
                    },
                    pad_after: pa.to_vec(),
                    divisor_override: None,
                    layout: Layout::ChannelsFirst,
                };
                let g = ok(pool::pool_geom_ex("pool", kind, xs, &first, *nd))?;
                // Values on a grid of 0.5 in [-1.5, 1.5]: most windows hold ties; two NaNs.
                let mut xv: Vec<f64> = values(&randn(dev, xs, dt, 1400 + i as u64)?)?
                    .iter()
                    .map(|v| (v * 2.0).round().clamp(-3.0, 3.0) / 2.0)
                    .collect();
                if kind == PoolKind::Max {
                    xv[2] = f64::NAN;
                    xv[3] = f64::NAN;
                }
                let ys = g.y_shape();
                let dyv = values(&randn(dev, &ys, dt, 1410 + i as u64)?)?;
                let want = pool::pool_backward_reference(&g, &xv, &dyv);
                for layout in [Layout::ChannelsFirst, Layout::ChannelsLast] {
                    let what = format!("pool backward ties {kind:?} case {i} {dt} {layout:?}");
                    let last = layout == Layout::ChannelsLast;
                    let (xsh, ysh) = if last {
                        (Layout::last_shape(xs), Layout::last_shape(&ys))
                    } else {
                        (xs.to_vec(), ys.clone())
                    };
                    let (xl, dyl) = if last {
                        (to_last(&xv, xs), to_last(&dyv, &ys))
                    } else {
                        (xv.clone(), dyv.clone())
                    };
                    let x = from_f64(dev, &xl, &xsh, dt)?;
                    let dy = from_f64(dev, &dyl, &ysh, dt)?;
                    let attrs = PoolAttrsEx {
                        layout,
                        ..first.clone()
                    };
                    let dx = poisoned(dev, &xsh, dt)?;
                    ok(nn::pool_ex_backward(
                        None,
                        kind,
                        &x,
                        &dy,
                        &attrs,
                        *nd,
                        Some(&dx),
                    ))?;
                    let mut got = values(&dx)?;
                    if last {
                        got = to_first(&got, &xsh);
                    }
                    assert_close(&what, &got, &want, tol(dt), tol(dt))?;
                }
            }
        }
    }
    Ok(())
}

fn expect_err<T>(r: rocm_backend::Result<T>, kind: ErrorKind, needle: &str) -> TestResult {
    match r {
        Ok(_) => Err(format!("expected {kind:?} mentioning '{needle}', got success").into()),
        Err(e) if e.kind == kind && e.message.contains(needle) => Ok(()),
        Err(e) => Err(format!(
            "expected {kind:?} mentioning '{needle}', got {:?}: {}",
            e.kind, e.message
        )
        .into()),
    }
}

/// batch_norm_channels_last (training with running stats, eval; backward in both) against
/// batch_norm of the channels-first tensor on the same device, ranks 2 to 5, every float
/// dtype; the running statistics must be updated alike.
fn batch_norm_channels_last(dev: &Dev) -> TestResult {
    // The last three: many row blocks and channel chunks (70 channels: scalar passes; 64:
    // 4-channel vectors), no weight and bias, and data far from 0 (mean 50: the variance
    // must not cancel).
    let shapes: [&[usize]; 7] = [
        &[4, 3],
        &[2, 3, 7],
        &[2, 5, 3, 4],
        &[1, 4, 2, 3, 5],
        &[4, 70, 9, 11],
        &[8, 64, 13, 13],
        &[3, 37, 5, 2, 7],
    ];
    for dt in FLOATS {
        for (i, xs) in shapes.iter().enumerate() {
            let c = xs[1];
            let mut xv = values(&randn(dev, xs, dt, 1200 + i as u64)?)?;
            if i == 6 {
                xv.iter_mut().for_each(|v| *v += 50.0);
            }
            let xf = from_f64(dev, &xv, xs, dt)?;
            let xv = values(&xf)?;
            let ls = Layout::last_shape(xs);
            let x = from_f64(dev, &to_last(&xv, xs), &ls, dt)?;
            let w = randn(dev, &[c], dt, 1210)?;
            let b = randn(dev, &[c], dt, 1211)?;
            let (wo, bo) = if i == 5 {
                (None, None)
            } else {
                (Some(&w), Some(&b))
            };
            for training in [true, false] {
                let what = format!("batch_norm NHWC {xs:?} {dt} training {training}");
                let stats = |seed: u64| -> Result<_, libtest_mimic::Failed> {
                    let m = randn(dev, &[c], dt, seed)?;
                    let v = from_f64(dev, &vec![1.5; c], &[c], dt)?;
                    Ok((m, v))
                };
                let (m1, v1) = stats(1220)?;
                let (m2, v2) = stats(1220)?;
                let yf = ok(nn::batch_norm(
                    None,
                    &xf,
                    Some(&m1),
                    Some(&v1),
                    wo,
                    bo,
                    training,
                    0.1,
                    1e-5,
                    None,
                ))?;
                let out = poisoned(dev, &ls, dt)?;
                ok(nn::batch_norm_channels_last(
                    None,
                    &x,
                    Some(&m2),
                    Some(&v2),
                    wo,
                    bo,
                    training,
                    0.1,
                    1e-5,
                    Some(&out),
                ))?;
                let got = to_first(&values(&out)?, &ls);
                assert_close(&what, &got, &values(&yf)?, tol(dt), tol(dt))?;
                assert_close(
                    &format!("{what} running_mean"),
                    &values(&m2)?,
                    &values(&m1)?,
                    tol(dt),
                    tol(dt),
                )?;
                assert_close(
                    &format!("{what} running_var"),
                    &values(&v2)?,
                    &values(&v1)?,
                    tol(dt),
                    tol(dt),
                )?;
                let dyf = randn(dev, xs, dt, 1230 + i as u64)?;
                let dy = from_f64(dev, &to_last(&values(&dyf)?, xs), &ls, dt)?;
                let [dxf, dwf, dbf] = ok(nn::batch_norm_backward(
                    None,
                    &dyf,
                    &xf,
                    Some(&m1),
                    Some(&v1),
                    wo,
                    training,
                    1e-5,
                    [Grad::New, Grad::New, Grad::New],
                ))?;
                let dx = poisoned(dev, &ls, dt)?;
                let [_, dw, db] = ok(nn::batch_norm_channels_last_backward(
                    None,
                    &dy,
                    &x,
                    Some(&m1),
                    Some(&v1),
                    wo,
                    training,
                    1e-5,
                    [Grad::Into(&dx), Grad::New, Grad::New],
                ))?;
                let got = to_first(&values(&dx)?, &ls);
                assert_close(
                    &format!("{what} dx"),
                    &got,
                    &values(&dxf.ok_or("no dx")?)?,
                    tol(dt),
                    tol(dt),
                )?;
                assert_close(
                    &format!("{what} dw"),
                    &values(&dw.ok_or("no dw")?)?,
                    &values(&dwf.ok_or("no dw")?)?,
                    tol(dt),
                    tol(dt),
                )?;
                assert_close(
                    &format!("{what} db"),
                    &values(&db.ok_or("no db")?)?,
                    &values(&dbf.ok_or("no db")?)?,
                    tol(dt),
                    tol(dt),
                )?;
            }
        }
    }
    Ok(())
}
