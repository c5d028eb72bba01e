//! Convolution, pooling, linear and the fused ops on every device, against the float64
//! references of `ops::conv` / `ops::pool` (direct loops) and central finite differences.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::conv::{self, Activation, ConvAttrs, ConvAttrsEx, ConvGeom, Layout};
use rocm_backend::ops::elementwise::{BinaryOp, UnaryOp};
use rocm_backend::ops::pool::{self, PoolAttrs, PoolAttrsEx, PoolKind};
use rocm_backend::runtime::prelude as nn;
use rocm_backend::runtime::{DType, Tensor, blas, elementwise};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("matmul_backward", matmul_backward),
        (
            "conv_transpose_backward_split",
            conv_transpose_backward_split,
        ),
        ("conv_forward", conv_forward),
        ("conv_backward_data", conv_backward_data),
        ("conv_backward_weight", conv_backward_weight),
        ("conv_transpose2d", conv_transpose2d),
        ("conv_fused_bias_relu", conv_fused_bias_relu),
        ("conv_exhaustive_f32_exact", conv_exhaustive_f32_exact),
        ("conv_stride1_wide_rows", conv_stride1_wide_rows),
        ("conv_small_planes_and_1x1", conv_small_planes_and_1x1),
        ("conv_stride2_phases", conv_stride2_phases),
        ("conv_bn_relu", conv_bn_relu),
        ("conv_residual_add", conv_residual_add),
        ("pool_forward_backward", pool_forward_backward),
        ("adaptive_avg_pool2d", adaptive_avg_pool2d),
        ("linear_forward_backward", linear_forward_backward),
        ("linear_backward_through_relu", linear_backward_through_relu),
        ("matmul_bias_act", matmul_bias_act),
        ("add_relu_mul_add", add_relu_mul_add),
        ("conv_pool_misuse", conv_pool_misuse),
        ("dnn_raw_entry_points", dnn_raw_entry_points),
        ("conv_pool_overflow_sizes", |_| overflow_sizes_rejected()),
        ("conv_pool_multi_block", conv_pool_multi_block),
        ("relu_and_clamp_propagate_nan", relu_and_clamp_propagate_nan),
        ("bias_before_the_one_rounding", bias_before_the_one_rounding),
        ("conv_ex_asymmetric_padding", conv_ex_asymmetric_padding),
        ("pool_ex_asymmetric_divisor", pool_ex_asymmetric_divisor),
        ("max_pool_indices", max_pool_indices),
        ("adaptive_pool_nd", adaptive_pool_nd),
        ("adaptive_pool_misuse", adaptive_pool_misuse),
        (
            "max_pool_indices_channels_last",
            max_pool_indices_channels_last,
        ),
    ]
}

/// NaN propagates through ReLU and clamp as in PyTorch (`torch.relu(nan)` is nan, and relu's
/// backward passes the gradient at a NaN input), in every place they run: the unary ops, fused add+relu, matmul+bias+relu (skinny and general
/// shapes) and conv+bias+relu; and negative values still become 0.
fn relu_and_clamp_propagate_nan(dev: &Dev) -> TestResult {
    let nan = f64::NAN;
    let expect = |what: &str, got: &[f64], nan_at: &[bool]| -> TestResult {
        for (i, (&g, &n)) in got.iter().zip(nan_at).enumerate() {
            ensure(
                g.is_nan() == n && (n || g >= 0.0),
                format!(
                    "{what}: element {i} is {g}, want {}",
                    if n { "NaN" } else { ">= 0" }
                ),
            )?;
        }
        Ok(())
    };
    for dt in FLOATS {
        let xv = [nan, -1.0, 2.0, -0.5, nan, 3.0, -7.0, 0.25];
        let nan_at: Vec<bool> = xv.iter().map(|v| v.is_nan()).collect();
        let x = from_f64(dev, &xv, &[2, 4], dt)?;
        let y = ok(elementwise::unary(None, UnaryOp::Relu, &x, None))?;
        expect(&format!("relu {dt}"), &values(&y)?, &nan_at)?;
        // relu's backward is PyTorch's threshold_backward: 0 where x <= 0, else dy, so a NaN
        // input passes its gradient.
        let dy = from_f64(dev, &[1.5; 8], &[2, 4], dt)?;
        let dx = ok(rocm_backend::runtime::elementwise::unary_backward(
            None,
            UnaryOp::Relu,
            &x,
            &dy,
            None,
        ))?;
        let want: Vec<f64> = xv
            .iter()
            .map(|&v| if v <= 0.0 { 0.0 } else { 1.5 })
            .collect();
        assert_close(
            &format!("relu_backward {dt}"),
            &values(&dx)?,
            &want,
            0.0,
            0.0,
        )?;
        let c = ok(elementwise::unary(
            None,
            UnaryOp::Clamp { min: 0.0, max: 1.0 },
            &x,
            None,
        ))?;
        expect(&format!("clamp {dt}"), &values(&c)?, &nan_at)?;
        let zero = from_f64(dev, &[0.0; 4], &[4], dt)?;
        let r = ok(nn::add_relu(None, &x, &zero, None))?;
        expect(&format!("add_relu {dt}"), &values(&r)?, &nan_at)?;
        // A NaN in row 0 of the input makes that row of every dense output NaN.
        for (m, k, n) in [(4usize, 16usize, 40usize), (3, 5, 6)] {
            let mut av = vec![0.5; m * k];
            av[3] = nan;
            for (i, v) in av.iter_mut().enumerate().skip(k) {
                *v = if i % 3 == 0 { -1.0 } else { 0.25 };
            }
            let a = from_f64(dev, &av, &[m, k], dt)?;
            let b = from_f64(dev, &vec![1.0; k * n], &[k, n], dt)?;
            let bias = from_f64(dev, &vec![-100.0; n], &[n], dt)?;
            let y = ok(nn::matmul_bias_act(
                None,
                &a,
                &b,
                &bias,
                Activation::Relu,
                None,
            ))?;
            let nan_rows: Vec<bool> = (0..m * n).map(|i| i < n).collect();
            expect(
                &format!("matmul_bias_act relu {m}x{k}x{n} {dt}"),
                &values(&y)?,
                &nan_rows,
            )?;
        }
        // conv + bias + relu: a NaN pixel reaches the outputs whose window covers it.
        let mut xv = vec![-1.0; 16];
        xv[5] = nan;
        let x = from_f64(dev, &xv, &[1, 1, 4, 4], dt)?;
        let w = from_f64(dev, &[1.0; 9], &[1, 1, 3, 3], dt)?;
        let bias = from_f64(dev, &[0.5], &[1], dt)?;
        let attrs = ConvAttrs {
            padding: vec![1],
            ..Default::default()
        };
        let y = ok(nn::conv(
            None,
            &x,
            &w,
            Some(&bias),
            &attrs,
            2,
            Activation::Relu,
            None,
        ))?;
        let covered: Vec<bool> = (0..16)
            .map(|i| (i / 4usize).abs_diff(1) <= 1 && (i % 4usize).abs_diff(1) <= 1)
            .collect();
        expect(&format!("conv+bias+relu {dt}"), &values(&y)?, &covered)?;
    }
    Ok(())
}

fn attrs(stride: &[usize], padding: &[usize], dilation: &[usize], groups: usize) -> ConvAttrs {
    ConvAttrs {
        stride: stride.to_vec(),
        padding: padding.to_vec(),
        dilation: dilation.to_vec(),
        groups,
        output_padding: vec![0],
    }
}

type ConvCase = (usize, &'static [usize], &'static [usize], ConvAttrs);

fn conv_cases() -> Vec<ConvCase> {
    vec![
        (2, &[2, 3, 7, 6], &[4, 3, 3, 3], attrs(&[1], &[1], &[1], 1)),
        (2, &[1, 1, 1, 1], &[1, 1, 1, 1], attrs(&[1], &[0], &[1], 1)),
        (
            2,
            &[2, 4, 9, 8],
            &[6, 2, 3, 2],
            attrs(&[2, 1], &[1, 0], &[2, 1], 2),
        ),
        (2, &[3, 6, 5, 5], &[6, 1, 3, 3], attrs(&[1], &[2], &[1], 6)),
        (2, &[2, 8, 5, 7], &[5, 8, 1, 1], attrs(&[1], &[0], &[1], 1)),
        (
            2,
            &[1, 3, 11, 13],
            &[2, 3, 5, 3],
            attrs(&[3, 2], &[2, 1], &[1, 2], 1),
        ),
        (1, &[2, 3, 17], &[5, 3, 4], attrs(&[2], &[3], &[2], 1)),
        (1, &[1, 4, 5], &[4, 2, 1], attrs(&[1], &[0], &[1], 2)),
        (
            3,
            &[1, 2, 5, 4, 6],
            &[3, 2, 2, 3, 2],
            attrs(&[1, 2, 1], &[1, 1, 0], &[2, 1, 1], 1),
        ),
        (
            3,
            &[2, 4, 3, 3, 3],
            &[4, 2, 3, 3, 3],
            attrs(&[1], &[1], &[1], 2),
        ),
    ]
}

fn tol(dt: DType) -> f64 {
    if dt == DType::F32 { 1e-4 } else { 3e-2 }
}

fn close(what: &str, got: &[f64], want: &[f64], dt: DType) -> TestResult {
    assert_close(what, got, want, tol(dt), tol(dt))
}

/// Central finite differences of `f` at `x` along each coordinate, contracted with `dy`:
/// the gradient of `sum(dy * f(x))`.
fn numeric_grad(x: &[f64], dy: &[f64], f: impl Fn(&[f64]) -> Vec<f64>) -> Vec<f64> {
    let h = 1e-4;
    let mut xp = x.to_vec();
    (0..x.len())
        .map(|i| {
            xp[i] = x[i] + h;
            let up: f64 = f(&xp).iter().zip(dy).map(|(a, b)| a * b).sum();
            xp[i] = x[i] - h;
            let dn: f64 = f(&xp).iter().zip(dy).map(|(a, b)| a * b).sum();
            xp[i] = x[i];
            (up - dn) / (2.0 * h)
        })
        .collect()
}

fn geom(c: &ConvCase) -> Result<ConvGeom, libtest_mimic::Failed> {
    ok(conv::conv_geom("conv", c.1, c.2, &c.3, c.0))
}

fn conv_forward(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for (i, c) in conv_cases().iter().enumerate() {
            let g = geom(c)?;
            let x = randn(dev, c.1, dt, 10 + i as u64)?;
            let w = randn(dev, c.2, dt, 20 + i as u64)?;
            let b = randn(dev, &[g.c_out], dt, 30 + i as u64)?;
            for with_bias in [false, true] {
                let out = poisoned(dev, &g.y_shape(), dt)?;
                let bias = with_bias.then_some(&b);
                ok(nn::conv(
                    None,
                    &x,
                    &w,
                    bias,
                    &c.3,
                    c.0,
                    Activation::None,
                    Some(&out),
                ))?;
                let bv = values(&b)?;
                let want = conv::conv_reference(
                    &g,
                    &values(&x)?,
                    &values(&w)?,
                    with_bias.then_some(&bv[..]),
                );
                close(
                    &format!("conv case {i} {dt} bias={with_bias}"),
                    &values(&out)?,
                    &want,
                    dt,
                )?;
            }
        }
    }
    // Empty batch: an empty result, no failure.
    let x = randn(dev, &[0, 3, 5, 5], DType::F32, 1)?;
    let w = randn(dev, &[2, 3, 3, 3], DType::F32, 2)?;
    let y = ok(nn::conv(
        None,
        &x,
        &w,
        None,
        &ConvAttrs::default(),
        2,
        Activation::None,
        None,
    ))?;
    ensure(
        y.shape() == [0, 2, 3, 3],
        format!("empty conv shape {:?}", y.shape()),
    )
}

fn conv_backward_data(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for (i, c) in conv_cases().iter().enumerate() {
            let g = geom(c)?;
            let w = randn(dev, c.2, dt, 40 + i as u64)?;
            let dy = randn(dev, &g.y_shape(), dt, 50 + i as u64)?;
            let out = poisoned(dev, c.1, dt)?;
            ok(nn::conv_backward_data(
                None,
                &dy,
                &w,
                c.1,
                &c.3,
                c.0,
                Some(&out),
            ))?;
            let (wv, dyv) = (values(&w)?, values(&dy)?);
            let want = conv::conv_backward_data_reference(&g, &dyv, &wv);
            close(&format!("conv dx case {i} {dt}"), &values(&out)?, &want, dt)?;
            if dt == DType::F32 {
                let x0 = vec![0.5; want.len()];
                let fd = numeric_grad(&x0, &dyv, |x| conv::conv_reference(&g, x, &wv, None));
                assert_close(
                    &format!("conv dx vs finite differences case {i}"),
                    &values(&out)?,
                    &fd,
                    1e-4,
                    1e-4,
                )?;
            }
        }
    }
    Ok(())
}

fn conv_backward_weight(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for (i, c) in conv_cases().iter().enumerate() {
            let g = geom(c)?;
            let x = randn(dev, c.1, dt, 60 + i as u64)?;
            let dy = randn(dev, &g.y_shape(), dt, 70 + i as u64)?;
            let (dw, db) = ok(nn::conv_backward_weight(
                None, &x, &dy, c.2, &c.3, c.0, true,
            ))?;
            let (xv, dyv) = (values(&x)?, values(&dy)?);
            let (want_w, want_b) = conv::conv_backward_weight_reference(&g, &xv, &dyv);
            close(
                &format!("conv dw case {i} {dt}"),
                &values(&dw)?,
                &want_w,
                dt,
            )?;
            close(
                &format!("conv db case {i} {dt}"),
                &values(&db.unwrap())?,
                &want_b,
                dt,
            )?;
            if dt == DType::F32 {
                let w0 = vec![0.25; want_w.len()];
                let fd = numeric_grad(&w0, &dyv, |w| conv::conv_reference(&g, &xv, w, None));
                assert_close(
                    &format!("conv dw vs finite differences case {i}"),
                    &values(&dw)?,
                    &fd,
                    1e-4,
                    1e-4,
                )?;
                let b0 = vec![0.0; g.c_out];
                let fdb = numeric_grad(&b0, &dyv, |b| conv::conv_reference(&g, &xv, &w0, Some(b)));
                assert_close(
                    &format!("conv db vs finite differences case {i}"),
                    &want_b,
                    &fdb,
                    1e-6,
                    1e-6,
                )?;
            }
        }
    }
    Ok(())
}

fn conv_transpose2d(dev: &Dev) -> TestResult {
    let cases: Vec<(&[usize], &[usize], ConvAttrs)> = vec![
        (
            &[2, 4, 3, 3],
            &[4, 3, 3, 3],
            ConvAttrs {
                stride: vec![2],
                padding: vec![1],
                dilation: vec![1],
                groups: 1,
                output_padding: vec![1],
            },
        ),
        (
            &[1, 4, 4, 5],
            &[4, 1, 2, 3],
            ConvAttrs {
                stride: vec![1, 2],
                padding: vec![0, 1],
                dilation: vec![2, 1],
                groups: 2,
                output_padding: vec![1, 0],
            },
        ),
        (&[1, 1, 1, 1], &[1, 1, 1, 1], ConvAttrs::default()),
        (
            &[2, 6, 5, 4],
            &[6, 2, 3, 3],
            ConvAttrs {
                stride: vec![3],
                padding: vec![2],
                dilation: vec![1],
                groups: 3,
                output_padding: vec![2],
            },
        ),
    ];
    for dt in FLOATS {
        for (i, (xs, ws, a)) in cases.iter().enumerate() {
            let g = ok(conv::conv_transpose_geom("t", xs, ws, a, 2))?;
            let x = randn(dev, xs, dt, 80 + i as u64)?;
            let w = randn(dev, ws, dt, 90 + i as u64)?;
            let b = randn(dev, &[g.c_in], dt, 95 + i as u64)?;
            let out = poisoned(dev, &g.x_shape(), dt)?;
            ok(nn::conv_transpose(None, &x, &w, Some(&b), a, 2, Some(&out)))?;
            let (xv, wv, bv) = (values(&x)?, values(&w)?, values(&b)?);
            // conv_transpose(x) is the data gradient of the convolution g at dy = x.
            let iv = g.in_vol();
            let want: Vec<f64> = conv::conv_backward_data_reference(&g, &xv, &wv)
                .iter()
                .enumerate()
                .map(|(j, v)| v + bv[(j / iv) % g.c_in])
                .collect();
            close(
                &format!("conv_transpose2d case {i} {dt}"),
                &values(&out)?,
                &want,
                dt,
            )?;
            // Backward: dx, dw, db.
            let dy = randn(dev, &g.x_shape(), dt, 99 + i as u64)?;
            let (dx, dw, db) = ok(nn::conv_transpose_backward(None, &x, &w, &dy, a, 2, true))?;
            let dyv = values(&dy)?;
            let fwd = |x: &[f64], w: &[f64], b: &[f64]| -> Vec<f64> {
                conv::conv_backward_data_reference(&g, x, w)
                    .iter()
                    .enumerate()
                    .map(|(j, v)| v + b[(j / iv) % g.c_in])
                    .collect()
            };
            let want_dx = conv::conv_reference(&g, &dyv, &wv, None);
            close(
                &format!("conv_transpose2d dx case {i} {dt}"),
                &values(&dx)?,
                &want_dx,
                dt,
            )?;
            let (want_dw, _) = conv::conv_backward_weight_reference(&g, &dyv, &xv);
            close(
                &format!("conv_transpose2d dw case {i} {dt}"),
                &values(&dw)?,
                &want_dw,
                dt,
            )?;
            if dt == DType::F32 {
                let fdx = numeric_grad(&xv, &dyv, |x| fwd(x, &wv, &bv));
                assert_close(
                    "conv_transpose2d dx vs finite differences",
                    &values(&dx)?,
                    &fdx,
                    1e-4,
                    1e-4,
                )?;
                let fdw = numeric_grad(&wv, &dyv, |w| fwd(&xv, w, &bv));
                assert_close(
                    "conv_transpose2d dw vs finite differences",
                    &values(&dw)?,
                    &fdw,
                    1e-4,
                    1e-4,
                )?;
                let fdb = numeric_grad(&bv, &dyv, |b| fwd(&xv, &wv, b));
                assert_close(
                    "conv_transpose2d db vs finite differences",
                    &values(db.as_ref().unwrap())?,
                    &fdb,
                    1e-4,
                    1e-4,
                )?;
            }
        }
    }
    Ok(())
}

/// Each case in every float dtype, with no activation, relu and gelu (with a bias or not as
/// `biases(k)` says for the k-th activation), written into a poisoned output, against the
/// float64 reference. Inputs are `randn` from `seed` (x), `seed + 10` (w), `seed + 20` (bias).
fn conv_cases_against_reference(
    dev: &Dev,
    what: &str,
    cases: &[ConvCase],
    seed: u64,
    biases: impl Fn(usize) -> Vec<bool>,
) -> TestResult {
    let acts = [
        Activation::None,
        Activation::Relu,
        Activation::Gelu { tanh: false },
    ];
    for dt in FLOATS {
        for (i, c) in cases.iter().enumerate() {
            let g = geom(c)?;
            let x = randn(dev, c.1, dt, seed + i as u64)?;
            let w = randn(dev, c.2, dt, seed + 10 + i as u64)?;
            let b = randn(dev, &[g.c_out], dt, seed + 20 + i as u64)?;
            let (xv, wv, bv) = (values(&x)?, values(&w)?, values(&b)?);
            for (k, &act) in acts.iter().enumerate() {
                for with_bias in biases(k) {
                    let out = poisoned(dev, &g.y_shape(), dt)?;
                    ok(nn::conv(
                        None,
                        &x,
                        &w,
                        with_bias.then_some(&b),
                        &c.3,
                        c.0,
                        act,
                        Some(&out),
                    ))?;
                    let want: Vec<f64> =
                        conv::conv_reference(&g, &xv, &wv, with_bias.then_some(&bv[..]))
                            .into_iter()
                            .map(|v| act.apply_f64(v))
                            .collect();
                    close(
                        &format!("{what} conv case {i} {dt} {act:?} bias={with_bias}"),
                        &values(&out)?,
                        &want,
                        dt,
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// Stride-1 convolutions with wide rows, the CPU's direct (register-blocked, 64 columns ×
/// 6 channels per block) path: row widths around the vector and block edges (8, 17, 63, 64,
/// 65, 130), channel counts that leave partial channel blocks, groups, dilation, wide and
/// asymmetric padding, 1D, and the fused epilogues (bias, relu, gelu).
fn conv_stride1_wide_rows(dev: &Dev) -> TestResult {
    let cases: Vec<ConvCase> = vec![
        (2, &[2, 5, 6, 8], &[7, 5, 3, 3], attrs(&[1], &[1], &[1], 1)),
        (
            2,
            &[1, 3, 4, 17],
            &[13, 3, 3, 3],
            attrs(&[1], &[1], &[1], 1),
        ),
        (2, &[1, 4, 3, 63], &[4, 4, 3, 3], attrs(&[1], &[1], &[1], 1)),
        (2, &[2, 3, 5, 64], &[6, 3, 3, 3], attrs(&[1], &[1], &[1], 1)),
        (
            2,
            &[1, 2, 3, 65],
            &[12, 2, 3, 3],
            attrs(&[1], &[1], &[1], 1),
        ),
        (
            2,
            &[1, 8, 6, 130],
            &[8, 4, 3, 3],
            attrs(&[1], &[1], &[1], 2),
        ),
        (2, &[1, 3, 9, 40], &[5, 3, 5, 5], attrs(&[1], &[2], &[1], 1)),
        (2, &[1, 3, 9, 40], &[5, 3, 3, 3], attrs(&[1], &[2], &[2], 1)),
        (
            2,
            &[1, 2, 4, 20],
            &[4, 2, 3, 2],
            attrs(&[1], &[0, 3], &[1], 1),
        ),
        (
            2,
            &[1, 2, 7, 30],
            &[4, 2, 3, 1],
            attrs(&[1], &[1, 0], &[1], 1),
        ),
        (2, &[1, 2, 2, 9], &[4, 2, 2, 2], attrs(&[1], &[4], &[1], 1)),
        (1, &[2, 3, 70], &[9, 3, 7], attrs(&[1], &[3], &[1], 1)),
    ];
    conv_cases_against_reference(dev, "stride-1", &cases, 210, |k| vec![k != 0])
}

/// The CPU's direct-kernel paths for ResNet's late layers, on every device: 1×1
/// convolutions on planes up to 1024 positions (weights read in place; more than 256 input
/// channels summed in passes that accumulate into the output, ReLU only after the last),
/// strided 1×1 ones over their strided columns, small output planes (<= 64) as a 1×1
/// convolution over the im2col columns, and small "same" planes split over output channels;
/// output channel counts that are not multiples of the register block, batches of 2, and the
/// grouped and non-ReLU cases that take the other paths; and stride 2 in the direct kernel.
fn conv_small_planes_and_1x1(dev: &Dev) -> TestResult {
    let cases: Vec<ConvCase> = vec![
        (
            2,
            &[2, 300, 7, 7],
            &[13, 300, 1, 1],
            attrs(&[1], &[0], &[1], 1),
        ),
        (
            2,
            &[1, 40, 9, 9],
            &[10, 40, 3, 3],
            attrs(&[2], &[1], &[1], 1),
        ),
        (
            2,
            &[2, 20, 16, 16],
            &[9, 20, 1, 1],
            attrs(&[2], &[0], &[1], 1),
        ),
        (
            2,
            &[1, 16, 30, 30],
            &[7, 16, 1, 1],
            attrs(&[1], &[0], &[1], 1),
        ),
        (
            2,
            &[1, 520, 4, 4],
            &[8, 520, 3, 3],
            attrs(&[1], &[1], &[1], 1),
        ),
        (
            2,
            &[1, 8, 14, 14],
            &[40, 8, 3, 3],
            attrs(&[1], &[1], &[1], 1),
        ),
        (
            2,
            &[2, 64, 7, 7],
            &[50, 64, 3, 3],
            attrs(&[1], &[1], &[1], 1),
        ),
        (2, &[1, 8, 6, 6], &[8, 4, 3, 3], attrs(&[2], &[1], &[1], 2)),
        (1, &[2, 270, 20], &[6, 270, 1], attrs(&[1], &[0], &[1], 1)),
        // stride 2 in the direct kernel (the stem's 7×7/2; rows only; columns with dilation)
        (
            2,
            &[2, 3, 20, 24],
            &[7, 3, 7, 7],
            attrs(&[2], &[3], &[1], 1),
        ),
        (
            2,
            &[1, 5, 17, 40],
            &[6, 5, 3, 3],
            attrs(&[2], &[1], &[1], 1),
        ),
        (
            2,
            &[1, 4, 9, 37],
            &[5, 4, 3, 3],
            attrs(&[1, 2], &[1, 0], &[1, 2], 1),
        ),
        (
            2,
            &[1, 4, 11, 33],
            &[4, 2, 3, 3],
            attrs(&[2, 1], &[1], &[1], 2),
        ),
        (1, &[2, 3, 70], &[9, 3, 5], attrs(&[2], &[2], &[1], 1)),
        // im2col + the packed GEMM, then the epilogue (edge tiles both ways)
        (
            2,
            &[1, 40, 36, 36],
            &[100, 40, 1, 1],
            attrs(&[1], &[0], &[1], 1),
        ),
        (
            2,
            &[2, 8, 100, 98],
            &[70, 8, 3, 3],
            attrs(&[3], &[1], &[1], 1),
        ),
    ];
    conv_cases_against_reference(dev, "small-plane", &cases, 610, |k| vec![k == 0, k != 0])?;
    // NaN in the input reaches the outputs that read it, through the passes and the ReLU.
    let mut xv = vec![0.5f64; 300 * 49];
    xv[299 * 49 + 3] = f64::NAN;
    let x = from_f64(dev, &xv, &[1, 300, 7, 7], DType::F32)?;
    let w = from_f64(dev, &vec![0.01; 8 * 300], &[8, 300, 1, 1], DType::F32)?;
    let y = ok(nn::conv(
        None,
        &x,
        &w,
        None,
        &attrs(&[1], &[0], &[1], 1),
        2,
        Activation::Relu,
        None,
    ))?;
    let yv = values(&y)?;
    for (i, v) in yv.iter().enumerate() {
        let want_nan = i % 49 == 3;
        ensure(
            v.is_nan() == want_nan && (want_nan || (v - 1.5).abs() < 1e-4),
            format!("1x1 conv NaN: element {i} is {v}"),
        )?;
    }
    Ok(())
}

/// Stride-2 2-D convolutions whose output planes are half the input's, rounded up (the
/// CPU's direct kernel over the input's four phase planes: ResNet's 7×7/2 stem and 3×3/2
/// convolutions): odd and even heights and widths (phase planes of unequal sizes), kernels
/// 2×2 to 8×8 and their padding, output channel counts that leave partial register blocks,
/// many input channels, groups, batches of 2, planes of several 64-position runs, the
/// fused epilogues; one geometry just outside the path (pad 0) alongside; NaN in the input
/// reaches exactly the outputs whose windows hold it.
fn conv_stride2_phases(dev: &Dev) -> TestResult {
    let cases: Vec<ConvCase> = vec![
        (
            2,
            &[1, 3, 15, 17],
            &[5, 3, 3, 3],
            attrs(&[2], &[1], &[1], 1),
        ),
        (
            2,
            &[2, 5, 21, 29],
            &[13, 5, 7, 7],
            attrs(&[2], &[3], &[1], 1),
        ),
        (
            2,
            &[1, 3, 16, 18],
            &[6, 3, 4, 4],
            attrs(&[2], &[1], &[1], 1),
        ),
        (
            2,
            &[1, 4, 10, 20],
            &[7, 4, 2, 2],
            attrs(&[2], &[0], &[1], 1),
        ),
        (
            2,
            &[1, 2, 13, 31],
            &[4, 2, 5, 5],
            attrs(&[2], &[2], &[1], 1),
        ),
        (
            2,
            &[1, 8, 12, 16],
            &[6, 4, 3, 3],
            attrs(&[2], &[1], &[1], 2),
        ),
        (
            2,
            &[1, 130, 16, 17],
            &[20, 130, 3, 3],
            attrs(&[2], &[1], &[1], 1),
        ),
        (
            2,
            &[1, 16, 40, 41],
            &[9, 16, 3, 3],
            attrs(&[2], &[1], &[1], 1),
        ),
        (
            2,
            &[1, 3, 20, 19],
            &[4, 3, 8, 8],
            attrs(&[2], &[3], &[1], 1),
        ),
        // (pad 0: 8 rows of output for 17 of input, not the phase path)
        (
            2,
            &[1, 3, 17, 33],
            &[5, 3, 3, 3],
            attrs(&[2], &[0], &[1], 1),
        ),
    ];
    conv_cases_against_reference(dev, "stride-2", &cases, 1310, |k| vec![k != 1])?;
    // NaN at odd and even rows and columns, the plane's corners included.
    let (h, w) = (15usize, 17usize);
    let c = &cases[0];
    let g = geom(c)?;
    let mut xv = vec![0.25f64; 3 * h * w];
    for (r, col) in [(0, 0), (3, 8), (7, 5), (14, 16), (10, 0)] {
        xv[w * h + r * w + col] = f64::NAN;
    }
    let x = from_f64(dev, &xv, c.1, DType::F32)?;
    let wt = from_f64(dev, &vec![0.5; 5 * 3 * 9], c.2, DType::F32)?;
    let y = values(&ok(nn::conv(
        None,
        &x,
        &wt,
        None,
        &c.3,
        2,
        Activation::Relu,
        None,
    ))?)?;
    let want = conv::conv_reference(&g, &xv, &vec![0.5; 5 * 3 * 9], None);
    for (i, (v, r)) in y.iter().zip(&want).enumerate() {
        ensure(
            v.is_nan() == r.is_nan() && (r.is_nan() || (v - r.max(0.0)).abs() < 1e-5),
            format!("stride-2 conv NaN: element {i} is {v}, expected {r}"),
        )?;
    }
    Ok(())
}

fn conv_fused_bias_relu(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for (i, c) in conv_cases().iter().enumerate() {
            let g = geom(c)?;
            let x = randn(dev, c.1, dt, 110 + i as u64)?;
            let w = randn(dev, c.2, dt, 120 + i as u64)?;
            let b = randn(dev, &[g.c_out], dt, 130 + i as u64)?;
            let fused = poisoned(dev, &g.y_shape(), dt)?;
            ok(nn::conv(
                None,
                &x,
                &w,
                Some(&b),
                &c.3,
                c.0,
                Activation::Relu,
                Some(&fused),
            ))?;
            // The unfused composition: conv, then add the bias, then relu.
            let y = ok(nn::conv(
                None,
                &x,
                &w,
                None,
                &c.3,
                c.0,
                Activation::None,
                None,
            ))?;
            let mut bshape = vec![g.c_out];
            bshape.extend(std::iter::repeat_n(1, c.0));
            let b2 = ok(b.reshape(&bshape))?;
            let y = ok(elementwise::binary(None, BinaryOp::Add, &y, &b2, None))?;
            let y = ok(elementwise::unary(None, UnaryOp::Relu, &y, None))?;
            close(
                &format!("conv+bias+relu vs unfused case {i} {dt}"),
                &values(&fused)?,
                &values(&y)?,
                dt,
            )?;
            let bv = values(&b)?;
            let want: Vec<f64> = conv::conv_reference(&g, &values(&x)?, &values(&w)?, Some(&bv))
                .into_iter()
                .map(|v| v.max(0.0))
                .collect();
            close(
                &format!("conv+bias+relu case {i} {dt}"),
                &values(&fused)?,
                &want,
                dt,
            )?;
        }
    }
    Ok(())
}

/// f32 convolutions under the exhaustive search (the executor's O3, rb-bench) stay exact
/// f32, with and without their bias (+ relu) epilogue (which cuDNN runs fused in its graph
/// where an exact engine takes it): shapes where cuDNN's heuristics rank TF32 engines first
/// (ResNet-50's 1×1 and 3×3 layers), against the float64 reference at a bound TF32 misses by
/// 10x (its error is ~3e-4 of the largest output here; exact f32's ~1e-6); a NaN in the
/// input comes out NaN through the fused relu; and on CUDA with cuDNN's backend API the
/// fused problems got an engine in the tuning cache (not the unfused fallback), and the
/// expanding 1×1 convolution took cuBLASLt's batched product. The executor's conv + add +
/// relu is exact too.
fn conv_exhaustive_f32_exact(dev: &Dev) -> TestResult {
    use rocm_backend::device::{DeviceKind, tuning};
    let dt = DType::F32;
    let cases: [ConvCase; 5] = [
        (
            2,
            &[8, 64, 28, 28],
            &[64, 64, 1, 1],
            attrs(&[1], &[0], &[1], 1),
        ),
        // a bottleneck's expanding 1×1 (on the H200 cuBLASLt's batched product beats cuDNN's
        // exact engines here: the search takes it)
        (
            2,
            &[16, 256, 14, 14],
            &[1024, 256, 1, 1],
            attrs(&[1], &[0], &[1], 1),
        ),
        (
            2,
            &[8, 64, 28, 28],
            &[64, 64, 3, 3],
            attrs(&[1], &[1], &[1], 1),
        ),
        (
            2,
            &[8, 128, 14, 14],
            &[256, 128, 1, 1],
            attrs(&[2], &[0], &[1], 1),
        ),
        (
            2,
            &[4, 3, 32, 32],
            &[16, 3, 7, 7],
            attrs(&[2], &[3], &[1], 1),
        ),
    ];
    tuning::exhaustive_scope(true, || -> TestResult {
        for (i, c) in cases.iter().enumerate() {
            let g = geom(c)?;
            let mut xv = values(&randn(dev, c.1, dt, 700 + i as u64)?)?;
            // One NaN: every output whose window covers it is NaN, relu or not.
            // (image 0, channel 0, row 2, column 2: under stride 2 too)
            xv[2 * c.1[3] + 2] = f64::NAN;
            let x = from_f64(dev, &xv, c.1, dt)?;
            let wv = values(&randn(dev, c.2, dt, 710 + i as u64)?)?;
            let w = from_f64(dev, &wv, c.2, dt)?;
            let bv = values(&randn(dev, &[g.c_out], dt, 720 + i as u64)?)?;
            let b = from_f64(dev, &bv, &[g.c_out], dt)?;
            for (bias, act) in [
                (false, Activation::None),
                (true, Activation::None),
                (true, Activation::Relu),
            ] {
                let y = ok(nn::conv(
                    None,
                    &x,
                    &w,
                    bias.then_some(&b),
                    &c.3,
                    c.0,
                    act,
                    None,
                ))?;
                let got = values(&y)?;
                let want: Vec<f64> = conv::conv_reference(&g, &xv, &wv, bias.then_some(&bv[..]))
                    .into_iter()
                    .map(|v| {
                        if act == Activation::Relu && !v.is_nan() {
                            v.max(0.0)
                        } else {
                            v
                        }
                    })
                    .collect();
                let scale = want
                    .iter()
                    .filter(|v| !v.is_nan())
                    .fold(0f64, |m, v| m.max(v.abs()));
                let what = format!("exhaustive f32 conv case {i} bias {bias} {act:?}");
                let mut nans = 0;
                for (j, (&v, &r)) in got.iter().zip(&want).enumerate() {
                    if r.is_nan() {
                        nans += 1;
                        ensure(
                            v.is_nan(),
                            format!("{what}: element {j} is {v}, expected NaN"),
                        )?;
                    } else {
                        ensure(
                            (v - r).abs() <= 3e-5 * scale,
                            format!(
                                "{what}: element {j} is {v}, expected {r} (off {:.2e} of the largest {scale:.3}; TF32?)",
                                (v - r).abs() / scale
                            ),
                        )?;
                    }
                }
                ensure(nans > 0, format!("{what}: the NaN reached no output"))?;
            }
            // The executor's conv + add + relu (the convolution alone, then one kernel for
            // the bias, the residual and the relu on the GPUs), exact too.
            let r = randn(dev, &g.y_shape(), dt, 730 + i as u64)?;
            let rv = values(&r)?;
            let got = values(&ok(rocm_backend::runtime::conv::conv_residual(
                None,
                &x,
                &w,
                Some(&b),
                &r,
                &c.3,
                c.0,
                Activation::Relu,
                None,
            ))?)?;
            let want: Vec<f64> = conv::conv_reference(&g, &xv, &wv, Some(&bv[..]))
                .into_iter()
                .zip(&rv)
                .map(|(v, r)| Activation::Relu.apply_f64(v + r))
                .collect();
            let scale = want
                .iter()
                .filter(|v| !v.is_nan())
                .fold(0f64, |m, v| m.max(v.abs()));
            for (j, (&v, &e)) in got.iter().zip(&want).enumerate() {
                ensure(
                    if e.is_nan() {
                        v.is_nan()
                    } else {
                        (v - e).abs() <= 3e-5 * scale
                    },
                    format!(
                        "exhaustive f32 conv+add+relu case {i}: element {j} is {v}, expected {e}"
                    ),
                )?;
            }
        }
        Ok(())
    })?;
    if dev.kind() == DeviceKind::Cuda && std::env::var_os("RB_CUDNN_LEGACY").is_none() {
        let fused = tuning::entries_matching("epi: BiasRelu");
        ensure(
            fused.iter().any(|(_, c)| c.algo != i32::MIN),
            format!("CUDA: no fused conv+bias+relu engine in the tuning cache: {fused:?}"),
        )?;
        // The expanding 1×1 ran as cuBLASLt's batched product (`GEMM_ALGO` in the cache).
        let products = tuning::entries_matching("w: [1024, 256, 1, 1, 0]");
        ensure(
            products.iter().any(|(_, c)| c.algo == i32::MIN + 1),
            format!("CUDA: the 1x1 convolution never took the batched product: {products:?}"),
        )?;
    }
    Ok(())
}

/// `act(conv(x, w, bias) + residual)` (the executor's conv+add(+relu) fusion) against the
/// unfused composition (conv, add, act) and the float64 reference, in every path of the
/// CPU's convolutions (im2col + GEMM, grouped, 3D, the direct kernel's same-width runs, its
/// rows with stride 2, 1×1 over many channels in passes, small planes): on the CPU in f32
/// the fused sum rounds exactly as the unfused one (equal bits); elsewhere (the fallback:
/// conv then an in-place add) within the dtype's tolerance. A residual of the wrong shape
/// is a SHAPE error.
fn conv_residual_add(dev: &Dev) -> TestResult {
    use rocm_backend::runtime::conv::conv_residual;
    let mut cases = conv_cases();
    cases.extend([
        (
            2,
            &[1, 300, 7, 7][..],
            &[13, 300, 1, 1][..],
            attrs(&[1], &[0], &[1], 1),
        ),
        (
            2,
            &[1, 16, 40, 40],
            &[24, 16, 1, 1],
            attrs(&[1], &[0], &[1], 1),
        ),
        (
            2,
            &[1, 8, 14, 14],
            &[40, 8, 3, 3],
            attrs(&[1], &[1], &[1], 1),
        ),
        (
            2,
            &[2, 3, 20, 24],
            &[7, 3, 7, 7],
            attrs(&[2], &[3], &[1], 1),
        ),
        (
            2,
            &[1, 20, 16, 16],
            &[9, 20, 1, 1],
            attrs(&[2], &[0], &[1], 1),
        ),
        (
            2,
            &[1, 40, 9, 9],
            &[10, 40, 3, 3],
            attrs(&[2], &[1], &[1], 1),
        ),
        (
            2,
            &[1, 12, 15, 17],
            &[8, 12, 3, 3],
            attrs(&[2], &[1], &[1], 1),
        ),
        // im2col + the packed GEMM with more than 64 output channels, then the epilogue
        // (edge tiles in both dimensions; 1×1 over the input itself, a stride-3 3×3)
        (
            2,
            &[1, 40, 36, 36],
            &[100, 40, 1, 1],
            attrs(&[1], &[0], &[1], 1),
        ),
        (
            2,
            &[2, 8, 100, 98],
            &[70, 8, 3, 3],
            attrs(&[3], &[1], &[1], 1),
        ),
    ]);
    let cpu = dev.kind() == rocm_backend::device::DeviceKind::Cpu;
    let acts = [
        Activation::None,
        Activation::Relu,
        Activation::Gelu { tanh: false },
    ];
    for dt in FLOATS {
        for (i, c) in cases.iter().enumerate() {
            let g = geom(c)?;
            let x = randn(dev, c.1, dt, 910 + i as u64)?;
            let w = randn(dev, c.2, dt, 920 + i as u64)?;
            let b = randn(dev, &[g.c_out], dt, 930 + i as u64)?;
            let r = randn(dev, &g.y_shape(), dt, 940 + i as u64)?;
            let (xv, wv, bv, rv) = (values(&x)?, values(&w)?, values(&b)?, values(&r)?);
            for (k, &act) in acts.iter().enumerate() {
                let bias = (k != 2).then_some(&b);
                let out = poisoned(dev, &g.y_shape(), dt)?;
                ok(conv_residual(
                    None,
                    &x,
                    &w,
                    bias,
                    &r,
                    &c.3,
                    c.0,
                    act,
                    Some(&out),
                ))?;
                let got = values(&out)?;
                let y = ok(nn::conv(
                    None,
                    &x,
                    &w,
                    bias,
                    &c.3,
                    c.0,
                    Activation::None,
                    None,
                ))?;
                let y = ok(elementwise::binary(None, BinaryOp::Add, &y, &r, None))?;
                let y = match act {
                    Activation::None => y,
                    Activation::Relu => ok(elementwise::unary(None, UnaryOp::Relu, &y, None))?,
                    Activation::Gelu { tanh } => {
                        ok(elementwise::unary(None, UnaryOp::Gelu { tanh }, &y, None))?
                    }
                };
                let unfused = values(&y)?;
                let what = format!("conv+add case {i} {dt} {act:?} bias={}", bias.is_some());
                if cpu && dt == DType::F32 {
                    for (j, (a, e)) in got.iter().zip(&unfused).enumerate() {
                        ensure(
                            a.to_bits() == e.to_bits(),
                            format!("{what}: element {j} is {a}, unfused {e}"),
                        )?;
                    }
                } else {
                    close(&format!("{what} vs unfused"), &got, &unfused, dt)?;
                }
                let want: Vec<f64> = conv::conv_reference(&g, &xv, &wv, bias.map(|_| &bv[..]))
                    .into_iter()
                    .zip(&rv)
                    .map(|(v, r)| act.apply_f64(v + r))
                    .collect();
                close(&what, &got, &want, dt)?;
            }
        }
    }
    let c = &conv_cases()[0];
    let x = randn(dev, c.1, DType::F32, 1)?;
    let w = randn(dev, c.2, DType::F32, 2)?;
    let r = randn(dev, &[2, 4, 7, 5], DType::F32, 3)?;
    expect_err(
        conv_residual(None, &x, &w, None, &r, &c.3, c.0, Activation::Relu, None),
        ErrorKind::ShapeMismatch,
        "conv2d",
    )?;
    Ok(())
}

fn conv_bn_relu(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for (i, c) in conv_cases().iter().enumerate().take(6) {
            let g = geom(c)?;
            let x = randn(dev, c.1, dt, 140 + i as u64)?;
            let w = randn(dev, c.2, dt, 141 + i as u64)?;
            let b = randn(dev, &[g.c_out], dt, 142 + i as u64)?;
            let mean = randn(dev, &[g.c_out], dt, 143 + i as u64)?;
            let var0 = randn(dev, &[g.c_out], dt, 144 + i as u64)?;
            let var = from_f64(
                dev,
                &values(&var0)?
                    .iter()
                    .map(|v| v * v + 0.5)
                    .collect::<Vec<_>>(),
                &[g.c_out],
                dt,
            )?;
            let gamma = randn(dev, &[g.c_out], dt, 145 + i as u64)?;
            let beta = randn(dev, &[g.c_out], dt, 146 + i as u64)?;
            let eps = 1e-5;
            let out = poisoned(dev, &g.y_shape(), dt)?;
            ok(nn::conv_bn_relu(
                None,
                &x,
                &w,
                Some(&b),
                [&mean, &var, &gamma, &beta],
                eps,
                &c.3,
                c.0,
                Some(&out),
            ))?;
            let (bv, mv, vv, gv, btv) = (
                values(&b)?,
                values(&mean)?,
                values(&var)?,
                values(&gamma)?,
                values(&beta)?,
            );
            let ov = g.out_vol();
            // Unfused reference: conv + bias, batch norm (eval), relu.
            let want: Vec<f64> = conv::conv_reference(&g, &values(&x)?, &values(&w)?, Some(&bv))
                .iter()
                .enumerate()
                .map(|(j, v)| {
                    let k = (j / ov) % g.c_out;
                    ((v - mv[k]) / (vv[k] + eps).sqrt() * gv[k] + btv[k]).max(0.0)
                })
                .collect();
            let t = if dt == DType::F32 { 1e-4 } else { 6e-2 };
            assert_close(
                &format!("conv+bn+relu case {i} {dt}"),
                &values(&out)?,
                &want,
                t,
                t,
            )?;
        }
    }
    Ok(())
}

fn pool_attrs(k: &[usize], s: &[usize], p: &[usize], d: &[usize], ceil: bool) -> PoolAttrs {
    PoolAttrs {
        kernel: k.to_vec(),
        stride: s.to_vec(),
        padding: p.to_vec(),
        dilation: d.to_vec(),
        ceil_mode: ceil,
    }
}

fn pool_forward_backward(dev: &Dev) -> TestResult {
    let cases: Vec<(usize, &[usize], PoolAttrs)> = vec![
        (2, &[2, 3, 8, 8], pool_attrs(&[2], &[], &[0], &[1], false)),
        (
            2,
            &[1, 2, 7, 9],
            pool_attrs(&[3, 2], &[2, 3], &[1, 1], &[1], true),
        ),
        (2, &[1, 1, 6, 6], pool_attrs(&[3], &[2], &[1], &[1], true)),
        (2, &[1, 1, 1, 1], pool_attrs(&[1], &[1], &[0], &[1], false)),
        (1, &[2, 3, 11], pool_attrs(&[4], &[3], &[2], &[1], true)),
        (
            3,
            &[1, 2, 5, 6, 7],
            pool_attrs(&[2, 3, 2], &[2, 1, 2], &[1, 1, 0], &[1], false),
        ),
    ];
    let dil_cases: Vec<(usize, &[usize], PoolAttrs)> = vec![
        (2, &[1, 2, 9, 9], pool_attrs(&[3], &[2], &[1], &[2], false)),
        (1, &[1, 1, 10], pool_attrs(&[3], &[1], &[1], &[3], true)),
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
            let all: Vec<_> = if kind == PoolKind::Max {
                cases.iter().chain(dil_cases.iter()).collect()
            } else {
                cases.iter().collect()
            };
            for (i, (nd, xs, a)) in all.into_iter().enumerate() {
                let g = ok(pool::pool_geom("pool", kind, xs, a, *nd))?;
                let x = randn(dev, xs, dt, 150 + i as u64)?;
                let out = poisoned(dev, &g.y_shape(), dt)?;
                ok(nn::pool(None, kind, &x, a, *nd, Some(&out)))?;
                let xv = values(&x)?;
                let want: Vec<f64> = pool::pool_reference(&g, &xv)
                    .iter()
                    .map(|v| round_to(dt, *v))
                    .collect();
                close(
                    &format!("{kind:?} case {i} {dt}"),
                    &values(&out)?,
                    &want,
                    dt,
                )?;
                let dy = randn(dev, &g.y_shape(), dt, 160 + i as u64)?;
                let dx = poisoned(dev, xs, dt)?;
                ok(nn::pool_backward(None, kind, &x, &dy, a, *nd, Some(&dx)))?;
                let dyv = values(&dy)?;
                let want_dx = pool::pool_backward_reference(&g, &xv, &dyv);
                close(
                    &format!("{kind:?} backward case {i} {dt}"),
                    &values(&dx)?,
                    &want_dx,
                    dt,
                )?;
                if dt == DType::F32 {
                    let fd = numeric_grad(&xv, &dyv, |x| pool::pool_reference(&g, x));
                    assert_close(
                        &format!("{kind:?} backward vs finite differences case {i}"),
                        &values(&dx)?,
                        &fd,
                        1e-4,
                        1e-4,
                    )?;
                }
            }
        }
    }
    // NaN propagates through max pooling.
    let x = from_f64(dev, &[1.0, f64::NAN, 3.0, 2.0], &[1, 1, 4], DType::F32)?;
    let y = ok(nn::pool(
        None,
        PoolKind::Max,
        &x,
        &pool_attrs(&[2], &[], &[0], &[1], false),
        1,
        None,
    ))?;
    let yv = values(&y)?;
    ensure(
        yv[0].is_nan() && yv[1] == 3.0,
        format!("max_pool1d NaN: {yv:?}"),
    )
}

fn adaptive_avg_pool2d(dev: &Dev) -> TestResult {
    let cases: [(&[usize], [usize; 2]); 4] = [
        (&[2, 3, 7, 5], [3, 2]),
        (&[1, 2, 4, 4], [4, 4]),
        (&[1, 1, 5, 7], [1, 1]),
        (&[2, 2, 3, 3], [5, 4]),
    ];
    for dt in FLOATS {
        for (i, (xs, os)) in cases.iter().enumerate() {
            let x = randn(dev, xs, dt, 170 + i as u64)?;
            let yshape = [xs[0], xs[1], os[0], os[1]];
            let out = poisoned(dev, &yshape, dt)?;
            ok(nn::adaptive_avg_pool2d(None, &x, *os, Some(&out)))?;
            let nc = xs[0] * xs[1];
            let inp = [xs[2], xs[3]];
            let xv = values(&x)?;
            let want = pool::adaptive_avg_pool2d_reference(&xv, nc, inp, *os);
            close(
                &format!("adaptive_avg_pool2d case {i} {dt}"),
                &values(&out)?,
                &want,
                dt,
            )?;
            let dy = randn(dev, &yshape, dt, 180 + i as u64)?;
            let dx = poisoned(dev, xs, dt)?;
            ok(nn::adaptive_avg_pool2d_backward(None, &dy, xs, Some(&dx)))?;
            let dyv = values(&dy)?;
            let want_dx = pool::adaptive_avg_pool2d_backward_reference(&dyv, nc, inp, *os);
            close(
                &format!("adaptive_avg_pool2d backward case {i} {dt}"),
                &values(&dx)?,
                &want_dx,
                dt,
            )?;
            if dt == DType::F32 {
                let fd = numeric_grad(&xv, &dyv, |x| {
                    pool::adaptive_avg_pool2d_reference(x, nc, inp, *os)
                });
                assert_close(
                    "adaptive_avg_pool2d vs finite differences",
                    &values(&dx)?,
                    &fd,
                    1e-4,
                    1e-4,
                )?;
            }
        }
    }
    Ok(())
}

/// Row-major `x[m,k] · w[n,k]ᵀ + b`.
fn linear_ref(x: &[f64], w: &[f64], b: Option<&[f64]>, m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut y = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s = b.map_or(0.0, |b| b[j]);
            for p in 0..k {
                s += x[i * k + p] * w[j * k + p];
            }
            y[i * n + j] = s;
        }
    }
    y
}

/// The executor's fused relu backward + linear backward
/// (`blas::linear_backward_relu`, one pass for the gradient through the relu and the bias
/// gradient on GPUs) equals the unfused ops bit for bit, every float dtype, with zeros,
/// negatives and a NaN in the relu's input (a NaN passes dy), without dx, without db, and
/// with no rows.
fn linear_backward_through_relu(dev: &Dev) -> TestResult {
    let same = |what: &str, a: &Tensor, b: &Tensor| -> TestResult {
        let (a, b) = (values(a)?, values(b)?);
        let eq = a.len() == b.len()
            && a.iter()
                .zip(&b)
                .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()));
        if eq {
            Ok(())
        } else {
            Err(format!("{what}: fused {a:?} vs unfused {b:?}").into())
        }
    };
    for dt in [DType::F32, DType::F16, DType::BF16, DType::F64] {
        for (m, k, n) in [(5usize, 7usize, 37usize), (32, 20, 64), (0, 3, 4)] {
            // values exact in every dtype (multiples of 1/8 below 4)
            let vals = |len: usize, seed: usize| -> Vec<f64> {
                (0..len)
                    .map(|i| ((i * 7 + seed * 13) % 31) as f64 / 8.0 - 1.875)
                    .collect()
            };
            let x = from_f64(dev, &vals(m * k, 1), &[m, k], dt)?;
            let w = from_f64(dev, &vals(n * k, 2), &[n, k], dt)?;
            let g = from_f64(dev, &vals(m * n, 3), &[m, n], dt)?;
            // h: a relu's input with exact zeros, negatives and one NaN
            let hv: Vec<f64> = (0..m * n)
                .map(|i| match i % 5 {
                    0 => 0.0,
                    1 => -1.5,
                    _ if i == 7 => f64::NAN,
                    _ => 0.25 * (i % 11) as f64,
                })
                .collect();
            let h = from_f64(dev, &hv, &[m, n], dt)?;
            let dy = ok(elementwise::unary_backward(
                None,
                UnaryOp::Relu,
                &h,
                &g,
                None,
            ))?;
            for (with_dx, with_db) in [(true, true), (false, true), (true, false)] {
                let what = format!("{dt} {m}x{k}x{n} dx {with_dx} db {with_db}");
                let (fx, fw, fb) = ok(blas::linear_backward_relu(
                    None, &x, &w, &h, &g, with_dx, with_db,
                ))?;
                let (ux, uw, ub) = ok(blas::linear_backward(None, &x, &w, &dy, with_dx, with_db))?;
                same(&format!("{what} dw"), &fw, &uw)?;
                match (fx, ux) {
                    (Some(a), Some(b)) => same(&format!("{what} dx"), &a, &b)?,
                    (None, None) => {}
                    _ => return Err(format!("{what}: dx presence differs").into()),
                }
                match (fb, ub) {
                    (Some(a), Some(b)) => same(&format!("{what} db"), &a, &b)?,
                    (None, None) => {}
                    _ => return Err(format!("{what}: db presence differs").into()),
                }
            }
        }
    }
    Ok(())
}

fn linear_forward_backward(dev: &Dev) -> TestResult {
    let cases: [(&[usize], usize); 7] = [
        (&[4, 7], 5),
        (&[2, 3, 16], 9),
        (&[1, 1], 1),
        (&[300, 33], 65),
        (&[5], 3),
        // Small batches: the CPU's transposed-A skinny kernel with the bias in its epilogue
        // (row and column remainders of its 6×4 blocks; k not a multiple of 16).
        (&[32, 100], 70),
        (&[3, 2, 35], 23),
    ];
    for dt in FLOATS {
        for (i, (xs, n)) in cases.iter().enumerate() {
            let k = *xs.last().unwrap();
            let m: usize = xs[..xs.len() - 1].iter().product();
            let x = randn(dev, xs, dt, 190 + i as u64)?;
            let w = randn(dev, &[*n, k], dt, 191 + i as u64)?;
            let b = randn(dev, &[*n], dt, 192 + i as u64)?;
            let mut ys = xs.to_vec();
            *ys.last_mut().unwrap() = *n;
            for with_bias in [false, true] {
                let out = poisoned(dev, &ys, dt)?;
                ok(nn::linear(
                    None,
                    &x,
                    &w,
                    with_bias.then_some(&b),
                    Some(&out),
                ))?;
                let (xv, wv, bv) = (values(&x)?, values(&w)?, values(&b)?);
                let want = linear_ref(&xv, &wv, with_bias.then_some(&bv[..]), m, k, *n);
                close(&format!("linear case {i} {dt}"), &values(&out)?, &want, dt)?;
            }
            let dy = randn(dev, &ys, dt, 193 + i as u64)?;
            let (dx, dw, db) = ok(nn::linear_backward(None, &x, &w, &dy, true, true))?;
            let dx = dx.ok_or("dx missing")?;
            // Without dx (PyTorch's output mask): none made, dw and db the same bits.
            let (no_dx, dw2, db2) = ok(nn::linear_backward(None, &x, &w, &dy, false, true))?;
            if no_dx.is_some() {
                return Err(format!("linear case {i} {dt}: dx made though not wanted").into());
            }
            if values(&dw2)? != values(&dw)?
                || values(&db2.unwrap())? != values(db.as_ref().unwrap())?
            {
                return Err(format!("linear case {i} {dt}: dw/db differ without dx").into());
            }
            let (xv, wv, dyv) = (values(&x)?, values(&w)?, values(&dy)?);
            let mut want_dx = vec![0.0; m * k];
            let mut want_dw = vec![0.0; n * k];
            let mut want_db = vec![0.0; *n];
            for r in 0..m {
                for j in 0..*n {
                    let g = dyv[r * n + j];
                    want_db[j] += g;
                    for p in 0..k {
                        want_dx[r * k + p] += g * wv[j * k + p];
                        want_dw[j * k + p] += g * xv[r * k + p];
                    }
                }
            }
            close(
                &format!("linear dx case {i} {dt}"),
                &values(&dx)?,
                &want_dx,
                dt,
            )?;
            close(
                &format!("linear dw case {i} {dt}"),
                &values(&dw)?,
                &want_dw,
                dt,
            )?;
            close(
                &format!("linear db case {i} {dt}"),
                &values(&db.unwrap())?,
                &want_db,
                dt,
            )?;
            if dt == DType::F32 && m * k < 200 {
                let fd = numeric_grad(&xv, &dyv, |x| linear_ref(x, &wv, None, m, k, *n));
                assert_close(
                    "linear dx vs finite differences",
                    &values(&dx)?,
                    &fd,
                    1e-4,
                    1e-4,
                )?;
                let fdw = numeric_grad(&wv, &dyv, |w| linear_ref(&xv, w, None, m, k, *n));
                assert_close(
                    "linear dw vs finite differences",
                    &values(&dw)?,
                    &fdw,
                    1e-4,
                    1e-4,
                )?;
            }
        }
    }
    Ok(())
}

fn matmul_bias_act(dev: &Dev) -> TestResult {
    let acts = [
        Activation::None,
        Activation::Relu,
        Activation::Gelu { tanh: false },
        Activation::Gelu { tanh: true },
    ];
    for dt in FLOATS {
        for (i, (m, k, n)) in [
            (3usize, 4usize, 5usize),
            (1, 1, 1),
            (70, 33, 129),
            (600, 17, 9),
            // Dense layers at small batch: the CPU's skinny kernel with the bias and ReLU in
            // its epilogue (the MLP's first layer; last row blocks of 3, 2 and 1 vectors).
            (32, 784, 256),
            (17, 20, 47),
            (64, 9, 33),
            (5, 12, 10),
            (1, 3, 20),
        ]
        .iter()
        .enumerate()
        {
            let a = randn(dev, &[*m, *k], dt, 200 + i as u64)?;
            let b = randn(dev, &[*k, *n], dt, 201 + i as u64)?;
            let bias = randn(dev, &[*n], dt, 202 + i as u64)?;
            for act in acts {
                let out = poisoned(dev, &[*m, *n], dt)?;
                ok(nn::matmul_bias_act(None, &a, &b, &bias, act, Some(&out)))?;
                // Unfused: matmul, add, activation.
                let y = ok(blas::matmul(None, &a, &b, None))?;
                let y = ok(elementwise::binary(None, BinaryOp::Add, &y, &bias, None))?;
                let y = match act {
                    Activation::None => y,
                    Activation::Relu => ok(elementwise::unary(None, UnaryOp::Relu, &y, None))?,
                    Activation::Gelu { tanh } => {
                        ok(elementwise::unary(None, UnaryOp::Gelu { tanh }, &y, None))?
                    }
                };
                close(
                    &format!("matmul+bias {act:?} vs unfused case {i} {dt}"),
                    &values(&out)?,
                    &values(&y)?,
                    dt,
                )?;
                let (av, bv, cv) = (values(&a)?, values(&b)?, values(&bias)?);
                let mut want = rocm_backend::ops::matmul::reference_2d(&av, &bv, *m, *k, *n);
                for (j, v) in want.iter_mut().enumerate() {
                    *v = act.apply_f64(*v + cv[j % n]);
                }
                close(
                    &format!("matmul+bias {act:?} case {i} {dt}"),
                    &values(&out)?,
                    &want,
                    dt,
                )?;
            }
        }
    }
    Ok(())
}

fn add_relu_mul_add(dev: &Dev) -> TestResult {
    let cases: [(&[usize], &[usize], &[usize]); 4] = [
        (&[1000], &[1000], &[1000]),
        (&[3, 1, 5], &[4, 1], &[5]),
        (&[1], &[1], &[1]),
        (&[257, 33], &[257, 1], &[33]),
    ];
    for dt in FLOATS {
        for (i, (sa, sb, sc)) in cases.iter().enumerate() {
            let a = randn(dev, sa, dt, 210 + i as u64)?;
            let b = randn(dev, sb, dt, 211 + i as u64)?;
            let c = randn(dev, sc, dt, 212 + i as u64)?;
            let (shape2, _) = ok(rocm_backend::base::shape::BroadcastLayout::new(&[sa, sb]))?;
            let out = poisoned(dev, &shape2, dt)?;
            ok(nn::add_relu(None, &a, &b, Some(&out)))?;
            let s = ok(elementwise::binary(None, BinaryOp::Add, &a, &b, None))?;
            let unfused = ok(elementwise::unary(None, UnaryOp::Relu, &s, None))?;
            close(
                &format!("add_relu case {i} {dt}"),
                &values(&out)?,
                &values(&unfused)?,
                dt,
            )?;
            let (shape3, _) = ok(rocm_backend::base::shape::BroadcastLayout::new(&[
                sa, sb, sc,
            ]))?;
            let out = poisoned(dev, &shape3, dt)?;
            ok(nn::mul_add(None, &a, &b, &c, Some(&out)))?;
            let p = ok(elementwise::binary(None, BinaryOp::Mul, &a, &b, None))?;
            let unfused = ok(elementwise::binary(None, BinaryOp::Add, &p, &c, None))?;
            close(
                &format!("mul_add case {i} {dt}"),
                &values(&out)?,
                &values(&unfused)?,
                dt,
            )?;
        }
    }
    Ok(())
}

fn expect_err<T: std::fmt::Debug>(
    r: rocm_backend::Result<T>,
    kind: ErrorKind,
    name: &str,
) -> TestResult {
    match r {
        Ok(v) => Err(format!("{name}: expected {kind:?}, got Ok({v:?})").into()),
        Err(e) => {
            ensure(
                e.kind == kind,
                format!("{name}: expected {kind:?}, got {e:?}"),
            )?;
            ensure(
                e.message.contains(name),
                format!("message {:?} does not name {name}", e.message),
            )
        }
    }
}

fn conv_pool_misuse(dev: &Dev) -> TestResult {
    let x = randn(dev, &[1, 4, 5, 5], DType::F32, 1)?;
    let w = randn(dev, &[6, 3, 3, 3], DType::F32, 2)?;
    let d = ConvAttrs::default();
    let c = |x: &Tensor, w: &Tensor, a: &ConvAttrs, nd| {
        nn::conv(None, x, w, None, a, nd, Activation::None, None)
    };
    expect_err(c(&x, &w, &d, 2), ErrorKind::ShapeMismatch, "conv2d")?;
    let w2 = randn(dev, &[6, 2, 3, 3], DType::F32, 3)?;
    expect_err(
        c(&x, &w2, &attrs(&[1], &[0], &[1], 4), 2),
        ErrorKind::InvalidArgument,
        "conv2d",
    )?;
    expect_err(
        c(&x, &w2, &attrs(&[0], &[0], &[1], 2), 2),
        ErrorKind::InvalidArgument,
        "conv2d",
    )?;
    expect_err(
        c(&x, &w2, &attrs(&[1, 1, 1], &[0], &[1], 2), 2),
        ErrorKind::InvalidArgument,
        "conv2d",
    )?;
    let big = randn(dev, &[6, 2, 7, 7], DType::F32, 4)?;
    expect_err(
        c(&x, &big, &attrs(&[1], &[0], &[1], 2), 2),
        ErrorKind::ShapeMismatch,
        "conv2d",
    )?;
    expect_err(
        c(&x, &w2, &attrs(&[1], &[0], &[1], 2), 3),
        ErrorKind::ShapeMismatch,
        "conv3d",
    )?;
    let xi = ok(Tensor::randint(
        dev.clone(),
        &[1, 4, 5, 5],
        DType::I32,
        0,
        3,
        1,
    ))?;
    expect_err(
        c(&xi, &w2, &attrs(&[1], &[0], &[1], 2), 2),
        ErrorKind::DtypeMismatch,
        "conv2d",
    )?;
    let wh = randn(dev, &[6, 2, 3, 3], DType::F16, 3)?;
    expect_err(
        c(&x, &wh, &attrs(&[1], &[0], &[1], 2), 2),
        ErrorKind::DtypeMismatch,
        "conv2d",
    )?;
    let bad_bias = randn(dev, &[5], DType::F32, 5)?;
    expect_err(
        nn::conv(
            None,
            &x,
            &w2,
            Some(&bad_bias),
            &attrs(&[1], &[0], &[1], 2),
            2,
            Activation::None,
            None,
        ),
        ErrorKind::ShapeMismatch,
        "conv2d",
    )?;
    let t = ConvAttrs {
        stride: vec![1],
        padding: vec![0],
        dilation: vec![1],
        groups: 1,
        output_padding: vec![1],
    };
    let wt = randn(dev, &[4, 2, 3, 3], DType::F32, 6)?;
    expect_err(
        nn::conv_transpose(None, &x, &wt, None, &t, 2, None),
        ErrorKind::InvalidArgument,
        "conv_transpose2d",
    )?;
    let p = pool_attrs(&[2], &[], &[2], &[1], false);
    expect_err(
        nn::pool(None, PoolKind::Max, &x, &p, 2, None),
        ErrorKind::InvalidArgument,
        "max_pool2d",
    )?;
    let p = pool_attrs(&[2], &[], &[0], &[2], false);
    expect_err(
        nn::pool(
            None,
            PoolKind::Avg {
                count_include_pad: true,
            },
            &x,
            &p,
            2,
            None,
        ),
        ErrorKind::InvalidArgument,
        "avg_pool2d",
    )?;
    let p = pool_attrs(&[9], &[], &[0], &[1], false);
    expect_err(
        nn::pool(None, PoolKind::Max, &x, &p, 2, None),
        ErrorKind::ShapeMismatch,
        "max_pool2d",
    )?;
    expect_err(
        nn::pool(
            None,
            PoolKind::Max,
            &x,
            &pool_attrs(&[2], &[], &[0], &[1], false),
            1,
            None,
        ),
        ErrorKind::ShapeMismatch,
        "max_pool1d",
    )?;
    expect_err(
        nn::adaptive_avg_pool2d(None, &x, [0, 2], None),
        ErrorKind::InvalidArgument,
        "adaptive_avg_pool2d",
    )?;
    let lw = randn(dev, &[3, 4], DType::F32, 7)?;
    let lx = randn(dev, &[2, 5], DType::F32, 8)?;
    expect_err(
        nn::linear(None, &lx, &lw, None, None),
        ErrorKind::ShapeMismatch,
        "linear",
    )?;
    let a = randn(dev, &[3], DType::F32, 9)?;
    let b = randn(dev, &[4], DType::F32, 10)?;
    expect_err(
        nn::add_relu(None, &a, &b, None),
        ErrorKind::ShapeMismatch,
        "add_relu",
    )?;
    expect_err(
        nn::mul_add(None, &a, &a, &b, None),
        ErrorKind::ShapeMismatch,
        "mul_add",
    )?;
    Ok(())
}

/// The raw `rb_dnn_*` entry points on host pointers (the CPU device's memory; GPU devices
/// get their own raw-pointer bodies once their allocators exist) against the eager ops,
/// plus their error paths.
fn dnn_raw_entry_points(dev: &Dev) -> TestResult {
    use rocm_backend::ffi::raw::dnn::*;
    use rocm_backend::ffi::types::*;
    use std::ffi::c_void;
    if dev.kind() != rocm_backend::device::DeviceKind::Cpu {
        return Ok(());
    }
    let st = |s: rocm_backend::ffi::rb_status| s as i32;
    let a = attrs(&[2, 1], &[1, 2], &[1, 2], 2);
    let (xs, ws) = ([2usize, 4, 9, 8], [6usize, 2, 3, 3]);
    let x = randn(dev, &xs, DType::F32, 300)?;
    let w = randn(dev, &ws, DType::F32, 301)?;
    let b = randn(dev, &[6], DType::F32, 302)?;
    let g = ok(conv::conv_geom("conv2d", &xs, &ws, &a, 2))?;
    let p = rb_conv_params {
        ndim: 2,
        stride: [2, 1, 0],
        padding: [1, 2, 0],
        dilation: [1, 2, 0],
        output_padding: [0; 3],
        groups: 2,
    };
    let i64s = |s: &[usize]| s.iter().map(|&v| v as i64).collect::<Vec<i64>>();
    let (x64, w64, y64) = (i64s(&xs), i64s(&ws), i64s(&g.y_shape()));
    let mut wsz = 0usize;
    let r = unsafe {
        rb_dnn_conv_workspace_size(
            std::ptr::null_mut(),
            0,
            &p,
            x64.as_ptr(),
            w64.as_ptr(),
            &mut wsz,
        )
    };
    ensure(st(r) == 0, "rb_dnn_conv_workspace_size failed")?;
    ensure(wsz >= g.col_elems() * 4, format!("workspace {wsz}"))?;
    let mut wsbuf = vec![0u8; wsz];
    let y = poisoned(dev, &g.y_shape(), DType::F32)?;
    let vp = |t: &Tensor| t.ptr().0 as usize as *mut c_void;
    let r = unsafe {
        rb_dnn_conv_forward(
            std::ptr::null_mut(),
            0,
            &p,
            x64.as_ptr(),
            vp(&x),
            w64.as_ptr(),
            vp(&w),
            vp(&b),
            1,
            y64.as_ptr(),
            vp(&y),
            wsbuf.as_mut_ptr() as *mut c_void,
            wsz,
        )
    };
    ensure(st(r) == 0, "rb_dnn_conv_forward failed")?;
    let want = ok(nn::conv(
        None,
        &x,
        &w,
        Some(&b),
        &a,
        2,
        Activation::Relu,
        None,
    ))?;
    close(
        "rb_dnn_conv_forward",
        &values(&y)?,
        &values(&want)?,
        DType::F32,
    )?;
    // Backward data and weights (no workspace: the device uses its own).
    let dy = randn(dev, &g.y_shape(), DType::F32, 303)?;
    let dx = poisoned(dev, &xs, DType::F32)?;
    let r = unsafe {
        rb_dnn_conv_backward_data(
            std::ptr::null_mut(),
            0,
            &p,
            x64.as_ptr(),
            vp(&dx),
            w64.as_ptr(),
            vp(&w),
            y64.as_ptr(),
            vp(&dy),
            std::ptr::null_mut(),
            0,
        )
    };
    ensure(st(r) == 0, "rb_dnn_conv_backward_data failed")?;
    let want = conv::conv_backward_data_reference(&g, &values(&dy)?, &values(&w)?);
    close(
        "rb_dnn_conv_backward_data",
        &values(&dx)?,
        &want,
        DType::F32,
    )?;
    let dw = poisoned(dev, &ws, DType::F32)?;
    let db = poisoned(dev, &[6], DType::F32)?;
    let r = unsafe {
        rb_dnn_conv_backward_weights(
            std::ptr::null_mut(),
            0,
            &p,
            x64.as_ptr(),
            vp(&x),
            w64.as_ptr(),
            vp(&dw),
            y64.as_ptr(),
            vp(&dy),
            vp(&db),
            wsbuf.as_mut_ptr() as *mut c_void,
            wsz,
        )
    };
    ensure(st(r) == 0, "rb_dnn_conv_backward_weights failed")?;
    let (want_w, want_b) = conv::conv_backward_weight_reference(&g, &values(&x)?, &values(&dy)?);
    close(
        "rb_dnn_conv_backward_weights dw",
        &values(&dw)?,
        &want_w,
        DType::F32,
    )?;
    close(
        "rb_dnn_conv_backward_weights db",
        &values(&db)?,
        &want_b,
        DType::F32,
    )?;
    // Pooling.
    let pp = rb_pool_params {
        ndim: 2,
        kernel: [3, 3, 0],
        stride: [2, 2, 0],
        padding: [1, 1, 0],
        dilation: [1, 1, 0],
        ceil_mode: 1,
    };
    let pa = pool_attrs(&[3], &[2], &[1], &[1], true);
    let pg = ok(pool::pool_geom("p", PoolKind::Max, &xs, &pa, 2))?;
    let py64 = i64s(&pg.y_shape());
    let py = poisoned(dev, &pg.y_shape(), DType::F32)?;
    let r = unsafe {
        rb_dnn_pool_forward(
            std::ptr::null_mut(),
            0,
            0,
            &pp,
            x64.as_ptr(),
            vp(&x),
            py64.as_ptr(),
            vp(&py),
        )
    };
    ensure(st(r) == 0, "rb_dnn_pool_forward failed")?;
    close(
        "rb_dnn_pool_forward",
        &values(&py)?,
        &pool::pool_reference(&pg, &values(&x)?),
        DType::F32,
    )?;
    let pdy = randn(dev, &pg.y_shape(), DType::F32, 304)?;
    let pdx = poisoned(dev, &xs, DType::F32)?;
    let r = unsafe {
        rb_dnn_pool_backward(
            std::ptr::null_mut(),
            0,
            0,
            &pp,
            x64.as_ptr(),
            vp(&x),
            py64.as_ptr(),
            vp(&pdy),
            vp(&pdx),
        )
    };
    ensure(st(r) == 0, "rb_dnn_pool_backward failed")?;
    let want = pool::pool_backward_reference(&pg, &values(&x)?, &values(&pdy)?);
    close("rb_dnn_pool_backward", &values(&pdx)?, &want, DType::F32)?;
    // Misuse: NULL params, a wrong output shape, a non-floating dtype, a bad activation.
    let msg = || unsafe {
        std::ffi::CStr::from_ptr(rocm_backend::ffi::status::rb_last_error_message())
            .to_string_lossy()
            .into_owned()
    };
    let call = |p: *const rb_conv_params, dtype: i32, act: i32, ys: &[i64]| unsafe {
        st(rb_dnn_conv_forward(
            std::ptr::null_mut(),
            dtype,
            p,
            x64.as_ptr(),
            vp(&x),
            w64.as_ptr(),
            vp(&w),
            std::ptr::null(),
            act,
            ys.as_ptr(),
            vp(&y),
            std::ptr::null_mut(),
            0,
        ))
    };
    ensure(call(std::ptr::null(), 0, 0, &y64) == 2, "NULL params")?;
    ensure(
        msg().contains("rb_dnn_conv_forward"),
        format!("message {}", msg()),
    )?;
    let bad_y = [y64[0], y64[1], y64[2] + 1, y64[3]];
    ensure(call(&p, 0, 0, &bad_y) == 6, "wrong y_shape")?;
    ensure(
        msg().contains("rb_dnn_conv_forward"),
        format!("message {}", msg()),
    )?;
    ensure(call(&p, 3, 0, &y64) == 7, "integer dtype")?;
    ensure(call(&p, 0, 9, &y64) == 1, "bad activation")?;
    let bad_groups = rb_conv_params { groups: 3, ..p };
    ensure(call(&bad_groups, 0, 0, &y64) != 0, "bad groups")?;
    Ok(())
}

/// Sizes that overflow are rejected with INVALID_ARGUMENT, never wrapped.
pub fn overflow_sizes_rejected() -> TestResult {
    let huge = usize::MAX / 4;
    let a = attrs(&[1], &[huge], &[1], 1);
    let e = conv::conv_geom("conv1d", &[1, 1, 4], &[1, 1, 3], &a, 1).unwrap_err();
    ensure(
        e.kind == ErrorKind::InvalidArgument && e.message.contains("conv1d"),
        format!("{e:?}"),
    )?;
    let e = conv::conv_geom(
        "conv2d",
        &[1 << 20, 1 << 20, 1 << 12, 1 << 12],
        &[1, 1 << 20, 1, 1],
        &ConvAttrs::default(),
        2,
    )
    .unwrap_err();
    ensure(
        e.kind == ErrorKind::InvalidArgument && e.message.contains("conv2d"),
        format!("{e:?}"),
    )?;
    let p = pool_attrs(&[2], &[], &[0], &[1], false);
    let e = pool::pool_geom(
        "max_pool2d",
        PoolKind::Max,
        &[1 << 30, 1 << 30, 1 << 10, 1 << 10],
        &p,
        2,
    )
    .unwrap_err();
    ensure(
        e.kind == ErrorKind::InvalidArgument && e.message.contains("max_pool2d"),
        format!("{e:?}"),
    )
}

/// Shapes spanning many GPU blocks (tens of thousands of elements, sizes not multiples of
/// any block size), pooling inputs full of ties (max pooling's gradient goes to the first
/// maximum in scan order), and a grouped convolution forward and backward big enough for the
/// DNN libraries' fast algorithms.
fn conv_pool_multi_block(dev: &Dev) -> TestResult {
    let xs = [2usize, 3, 33, 47];
    let n: usize = xs.iter().product();
    // Values on a grid of 0.5: many equal maxima in each window.
    let xv: Vec<f64> = (0..n)
        .map(|i| (((i * 7919) % 13) as f64 - 6.0) * 0.5)
        .collect();
    for dt in FLOATS {
        let x = from_f64(dev, &xv, &xs, dt)?;
        for (kind, a) in [
            (PoolKind::Max, pool_attrs(&[3], &[2], &[1], &[1], true)),
            (
                PoolKind::Max,
                pool_attrs(&[3, 2], &[1, 2], &[1, 0], &[2, 1], false),
            ),
            (
                PoolKind::Avg {
                    count_include_pad: false,
                },
                pool_attrs(&[3], &[2], &[1], &[1], true),
            ),
            (
                PoolKind::Avg {
                    count_include_pad: true,
                },
                pool_attrs(&[2], &[2], &[0], &[1], false),
            ),
        ] {
            let g = ok(pool::pool_geom("pool", kind, &xs, &a, 2))?;
            let out = poisoned(dev, &g.y_shape(), dt)?;
            ok(nn::pool(None, kind, &x, &a, 2, Some(&out)))?;
            let xr = values(&x)?;
            let want: Vec<f64> = pool::pool_reference(&g, &xr)
                .iter()
                .map(|v| round_to(dt, *v))
                .collect();
            close(&format!("{kind:?} {a:?} {dt}"), &values(&out)?, &want, dt)?;
            let dy = randn(dev, &g.y_shape(), dt, 170)?;
            let dx = poisoned(dev, &xs, dt)?;
            ok(nn::pool_backward(None, kind, &x, &dy, &a, 2, Some(&dx)))?;
            let want_dx = pool::pool_backward_reference(&g, &xr, &values(&dy)?);
            close(
                &format!("{kind:?} {a:?} backward {dt}"),
                &values(&dx)?,
                &want_dx,
                dt,
            )?;
        }
        // Grouped 3x3 convolution, forward with bias + relu, data and weight gradients.
        let c: ConvCase = (
            2,
            &[3, 8, 21, 26],
            &[12, 4, 3, 3],
            attrs(&[1], &[1], &[1], 2),
        );
        let g = geom(&c)?;
        let x = randn(dev, c.1, dt, 180)?;
        let w = randn(dev, c.2, dt, 181)?;
        let b = randn(dev, &[g.c_out], dt, 182)?;
        let out = poisoned(dev, &g.y_shape(), dt)?;
        ok(nn::conv(
            None,
            &x,
            &w,
            Some(&b),
            &c.3,
            c.0,
            Activation::Relu,
            Some(&out),
        ))?;
        let (xr, wr, br) = (values(&x)?, values(&w)?, values(&b)?);
        let want: Vec<f64> = conv::conv_reference(&g, &xr, &wr, Some(&br))
            .iter()
            .map(|v| v.max(0.0))
            .collect();
        close(&format!("conv+bias+relu {dt}"), &values(&out)?, &want, dt)?;
        let dy = randn(dev, &g.y_shape(), dt, 183)?;
        let dx = poisoned(dev, c.1, dt)?;
        ok(nn::conv_backward_data(
            None,
            &dy,
            &w,
            c.1,
            &c.3,
            c.0,
            Some(&dx),
        ))?;
        let dyr = values(&dy)?;
        let want = conv::conv_backward_data_reference(&g, &dyr, &wr);
        close(&format!("conv dx {dt}"), &values(&dx)?, &want, dt)?;
        let (dw, db) = ok(nn::conv_backward_weight(
            None, &x, &dy, c.2, &c.3, c.0, true,
        ))?;
        let (want_w, want_b) = conv::conv_backward_weight_reference(&g, &xr, &dyr);
        close(&format!("conv dw {dt}"), &values(&dw)?, &want_w, dt)?;
        close(
            &format!("conv db {dt}"),
            &values(&db.unwrap())?,
            &want_b,
            dt,
        )?;
    }
    Ok(())
}

/// `rb_matmul_backward` (runtime `blas::matmul_backward`) against the float64 reference of
/// `ops::matmul` over torch.matmul's shape rules (1-D operands, broadcast batches, empty
/// dimensions), into poisoned destinations, new tensors and skipped gradients.
fn matmul_backward(dev: &Dev) -> TestResult {
    use rocm_backend::ops::matmul;
    use rocm_backend::runtime::eager::Grad;
    let cases: &[(&[usize], &[usize])] = &[
        (&[3, 4], &[4, 5]),
        (&[4], &[4, 5]),
        (&[3, 4], &[4]),
        (&[4], &[4]),
        (&[2, 3, 4], &[4, 5]),
        (&[3, 4], &[2, 4, 5]),
        (&[2, 1, 3, 4], &[5, 4, 6]),
        (&[1, 3, 4], &[2, 4, 5]),
        (&[2, 3, 4], &[4]),
        (&[4], &[2, 4, 3]),
        (&[0, 3, 4], &[4, 5]),
        (&[3, 0], &[0, 5]),
        (&[3, 4], &[4, 0]),
        (&[1, 1], &[1, 1]),
        (&[2, 17, 33], &[2, 33, 9]),
    ];
    for dt in FLOATS {
        for (i, (sa, sb)) in cases.iter().enumerate() {
            let p = ok(matmul::plan(sa, sb))?;
            let a = randn(dev, sa, dt, 300 + i as u64)?;
            let b = randn(dev, sb, dt, 320 + i as u64)?;
            let dy = randn(dev, &p.out_shape, dt, 340 + i as u64)?;
            let (av, bv, dyv) = (values(&a)?, values(&b)?, values(&dy)?);
            let (want_a, want_b) = ok(matmul::backward_reference(&av, sa, &bv, sb, &dyv))?;
            let (pa, pb) = (poisoned(dev, sa, dt)?, poisoned(dev, sb, dt)?);
            let [da, db] = ok(blas::matmul_backward(
                None,
                &a,
                &b,
                &dy,
                [Grad::Into(&pa), Grad::Into(&pb)],
            ))?;
            ensure(
                da.is_some() && db.is_some(),
                "matmul_backward: gradients missing",
            )?;
            let what = format!("matmul_backward {sa:?} x {sb:?} {dt}");
            close(&format!("{what} da"), &values(&pa)?, &want_a, dt)?;
            close(&format!("{what} db"), &values(&pb)?, &want_b, dt)?;
            // New tensors, and one gradient skipped.
            let [da, db] = ok(blas::matmul_backward(
                None,
                &a,
                &b,
                &dy,
                [Grad::New, Grad::Skip],
            ))?;
            ensure(
                db.is_none(),
                "matmul_backward: a skipped gradient was computed",
            )?;
            let da = da.ok_or("matmul_backward: da missing")?;
            ensure(
                da.shape() == *sa,
                format!("{what}: da has shape {:?}", da.shape()),
            )?;
            close(&format!("{what} da (new)"), &values(&da)?, &want_a, dt)?;
        }
    }
    // The analytic reference against finite differences of the forward reference.
    let (sa, sb): (&[usize], &[usize]) = (&[2, 1, 3, 4], &[5, 4, 2]);
    let a: Vec<f64> = (0..24).map(|i| ((i * 7 % 11) as f64 - 5.0) / 4.0).collect();
    let b: Vec<f64> = (0..40).map(|i| ((i * 5 % 13) as f64 - 6.0) / 5.0).collect();
    let n_out: usize = ok(matmul::plan(sa, sb))?.out_shape.iter().product();
    let dy: Vec<f64> = (0..n_out)
        .map(|i| ((i * 3 % 7) as f64 - 3.0) / 2.0)
        .collect();
    let (ga, gb) = ok(matmul::backward_reference(&a, sa, &b, sb, &dy))?;
    let fa = numeric_grad(&a, &dy, |a| matmul::reference(a, sa, &b, sb).unwrap());
    let fb = numeric_grad(&b, &dy, |b| matmul::reference(&a, sa, b, sb).unwrap());
    assert_close("matmul backward_reference da vs fd", &ga, &fa, 1e-6, 1e-6)?;
    assert_close("matmul backward_reference db vs fd", &gb, &fb, 1e-6, 1e-6)?;
    // Misuse: dy of the wrong shape, int operands.
    let a = randn(dev, &[3, 4], DType::F32, 1)?;
    let b = randn(dev, &[4, 5], DType::F32, 2)?;
    let bad = randn(dev, &[3, 4], DType::F32, 3)?;
    let e = blas::matmul_backward(None, &a, &b, &bad, [Grad::New, Grad::New]).unwrap_err();
    ensure(
        e.kind == ErrorKind::ShapeMismatch,
        format!("dy shape: {e:?}"),
    )?;
    let ai = ok(Tensor::zeros(dev.clone(), &[3, 4], DType::I32))?;
    let bi = ok(Tensor::zeros(dev.clone(), &[4, 5], DType::I32))?;
    let dyi = ok(Tensor::zeros(dev.clone(), &[3, 5], DType::I32))?;
    let e = blas::matmul_backward(None, &ai, &bi, &dyi, [Grad::New, Grad::New]).unwrap_err();
    ensure(e.kind == ErrorKind::DtypeMismatch, format!("int: {e:?}"))?;
    Ok(())
}

/// `rb_conv_transpose_backward_data` / `_weight` against the float64 references (the
/// forward convolution of dy, the convolution weight gradient with x and dy swapped, the
/// per-channel sums of dy) and against `conv_transpose_backward` for 1-D and 3-D.
fn conv_transpose_backward_split(dev: &Dev) -> TestResult {
    let cases: Vec<(&[usize], &[usize], ConvAttrs)> = vec![
        (
            &[2, 4, 3, 3],
            &[4, 3, 3, 3],
            ConvAttrs {
                stride: vec![2],
                padding: vec![1],
                dilation: vec![1],
                groups: 1,
                output_padding: vec![1],
            },
        ),
        (
            &[1, 4, 4, 5],
            &[4, 1, 2, 3],
            ConvAttrs {
                stride: vec![1, 2],
                padding: vec![0, 1],
                dilation: vec![2, 1],
                groups: 2,
                output_padding: vec![1, 0],
            },
        ),
        (&[1, 1, 1, 1], &[1, 1, 1, 1], ConvAttrs::default()),
        (&[0, 2, 3, 3], &[2, 3, 2, 2], ConvAttrs::default()),
    ];
    for dt in FLOATS {
        for (i, (xs, ws, a)) in cases.iter().enumerate() {
            let g = ok(conv::conv_transpose_geom("t", xs, ws, a, 2))?;
            let x = randn(dev, xs, dt, 180 + i as u64)?;
            let w = randn(dev, ws, dt, 190 + i as u64)?;
            let dy = randn(dev, &g.x_shape(), dt, 199 + i as u64)?;
            let (xv, wv, dyv) = (values(&x)?, values(&w)?, values(&dy)?);
            let what = format!("conv_transpose2d split backward case {i} {dt}");
            let dx = poisoned(dev, xs, dt)?;
            ok(nn::conv_transpose_backward_data(
                None,
                &dy,
                &w,
                xs,
                a,
                2,
                Some(&dx),
            ))?;
            let want_dx = conv::conv_reference(&g, &dyv, &wv, None);
            close(&format!("{what} dx"), &values(&dx)?, &want_dx, dt)?;
            let (dw, db) = ok(nn::conv_transpose_backward_weight(
                None, &x, &dy, ws, a, 2, true,
            ))?;
            let (want_dw, _) = conv::conv_backward_weight_reference(&g, &dyv, &xv);
            close(&format!("{what} dw"), &values(&dw)?, &want_dw, dt)?;
            let ds = g.x_shape();
            let (c, sp) = (ds[1], ds[2..].iter().product::<usize>());
            let mut want_db = vec![0.0; c];
            for (j, v) in dyv.iter().enumerate() {
                want_db[(j / sp) % c] += v;
            }
            let db = db.ok_or("conv_transpose_backward_weight: db missing")?;
            close(&format!("{what} db"), &values(&db)?, &want_db, dt)?;
            let (_, none) = ok(nn::conv_transpose_backward_weight(
                None, &x, &dy, ws, a, 2, false,
            ))?;
            ensure(none.is_none(), "db computed although not wanted")?;
        }
    }
    // 1-D and 3-D: the same as the combined conv_transpose_backward.
    let more: Vec<(usize, &[usize], &[usize], ConvAttrs)> = vec![
        (
            1,
            &[2, 3, 5],
            &[3, 2, 3],
            ConvAttrs {
                stride: vec![2],
                padding: vec![1],
                dilation: vec![1],
                groups: 1,
                output_padding: vec![1],
            },
        ),
        (
            3,
            &[1, 2, 2, 3, 2],
            &[2, 2, 2, 2, 2],
            ConvAttrs {
                stride: vec![2, 1, 1],
                padding: vec![0],
                dilation: vec![1],
                groups: 2,
                output_padding: vec![0],
            },
        ),
    ];
    for (nd, xs, ws, a) in &more {
        let g = ok(conv::conv_transpose_geom("t", xs, ws, a, *nd))?;
        let x = randn(dev, xs, DType::F32, 7)?;
        let w = randn(dev, ws, DType::F32, 8)?;
        let dy = randn(dev, &g.x_shape(), DType::F32, 9)?;
        let (dx0, dw0, db0) = ok(nn::conv_transpose_backward(None, &x, &w, &dy, a, *nd, true))?;
        let dx = ok(nn::conv_transpose_backward_data(
            None, &dy, &w, xs, a, *nd, None,
        ))?;
        let (dw, db) = ok(nn::conv_transpose_backward_weight(
            None, &x, &dy, ws, a, *nd, true,
        ))?;
        let what = format!("conv_transpose{nd}d split backward");
        close(
            &format!("{what} dx"),
            &values(&dx)?,
            &values(&dx0)?,
            DType::F32,
        )?;
        close(
            &format!("{what} dw"),
            &values(&dw)?,
            &values(&dw0)?,
            DType::F32,
        )?;
        close(
            &format!("{what} db"),
            &values(&db.ok_or("db missing")?)?,
            &values(&db0.ok_or("db0 missing")?)?,
            DType::F32,
        )?;
    }
    // Misuse: dy of the wrong shape.
    let a = ConvAttrs::default();
    let w = randn(dev, &[2, 3, 2, 2], DType::F32, 1)?;
    let bad = randn(dev, &[1, 3, 5, 5], DType::F32, 2)?;
    let e =
        nn::conv_transpose_backward_data(None, &bad, &w, &[1, 2, 3, 3], &a, 2, None).unwrap_err();
    ensure(
        e.kind == ErrorKind::ShapeMismatch,
        format!("dy shape: {e:?}"),
    )?;
    let x = randn(dev, &[1, 2, 3, 3], DType::F32, 3)?;
    let e =
        nn::conv_transpose_backward_weight(None, &x, &bad, &[2, 3, 2, 2], &a, 2, true).unwrap_err();
    ensure(
        e.kind == ErrorKind::ShapeMismatch,
        format!("dy shape: {e:?}"),
    )?;
    Ok(())
}

/// Per channel, the bias that cancels the bias-free result `s` where rounding `s` to `dt`
/// alone loses the most: there the exact output is that rounding error, and rounding the
/// product before adding the bias gives 0. `ch(i)` is element i's channel.
fn cancelling_bias(s: &[f64], channels: usize, ch: impl Fn(usize) -> usize, dt: DType) -> Vec<f64> {
    let mut best = vec![(-1.0, 0.0); channels];
    for (i, &v) in s.iter().enumerate() {
        let r = round_to(dt, v);
        if (v - r).abs() > best[ch(i)].0 {
            best[ch(i)] = ((v - r).abs(), -r);
        }
    }
    best.iter().map(|b| b.1).collect()
}

/// `got` against `s + bias[ch(i)]` (through relu when `relu`) in float64: relative 1e-2 (one rounding to f16/bf16) and
/// an absolute 1e-4 of the largest |s| (f32 accumulation), far below the rounding error of
/// `s` that a second rounding leaves at the cancelling elements.
fn check_bias_sum(
    what: &str,
    got: &[f64],
    s: &[f64],
    bias: &[f64],
    ch: impl Fn(usize) -> usize,
    relu: bool,
) -> TestResult {
    let want: Vec<f64> = s
        .iter()
        .enumerate()
        .map(|(i, v)| v + bias[ch(i)])
        .map(|v| if relu { v.max(0.0) } else { v })
        .collect();
    let atol = 1e-4 * s.iter().fold(0f64, |m, v| m.max(v.abs()));
    assert_close(what, got, &want, 1e-2, atol)
}

/// f16/bf16 with a bias: `x·Wᵀ + b` (linear, matmul+bias), conv_transpose 1d/2d/3d and conv
/// (grouped and not) add the bias before their one rounding to the dtype, as PyTorch does
/// (linear bf16 once gave 0.0859 for an exact 0.08447). The bias nearly cancels one output
/// per channel (see [`cancelling_bias`]).
fn bias_before_the_one_rounding(dev: &Dev) -> TestResult {
    for dt in [DType::F16, DType::BF16] {
        // linear: x [m, k], w [n, k]; matmul+bias: the same product with w as [k, n].
        let (m, k, n) = (7, 24, 6);
        let x = randn(dev, &[m, k], dt, 11)?;
        let w = randn(dev, &[n, k], dt, 12)?;
        let (xv, wv) = (values(&x)?, values(&w)?);
        let s = linear_ref(&xv, &wv, None, m, k, n);
        let bv = cancelling_bias(&s, n, |i| i % n, dt);
        let bias = from_f64(dev, &bv, &[n], dt)?;
        let out = poisoned(dev, &[m, n], dt)?;
        ok(nn::linear(None, &x, &w, Some(&bias), Some(&out)))?;
        check_bias_sum(
            &format!("linear {dt}"),
            &values(&out)?,
            &s,
            &bv,
            |i| i % n,
            false,
        )?;
        let wt: Vec<f64> = (0..k * n).map(|i| wv[(i % n) * k + i / n]).collect();
        let wkn = from_f64(dev, &wt, &[k, n], dt)?;
        for relu in [false, true] {
            let act = if relu {
                Activation::Relu
            } else {
                Activation::None
            };
            let out = poisoned(dev, &[m, n], dt)?;
            ok(nn::matmul_bias_act(None, &x, &wkn, &bias, act, Some(&out)))?;
            let what = format!("matmul_bias relu={relu} {dt}");
            check_bias_sum(&what, &values(&out)?, &s, &bv, |i| i % n, relu)?;
        }
        // conv_transpose 1d/2d/3d (grouped too): conv_transpose(x) is the data gradient of
        // the convolution g at dy = x; channels of the output are g's input channels.
        let ct: Vec<(usize, &[usize], &[usize], ConvAttrs)> = vec![
            (1, &[2, 4, 9], &[4, 3, 3], attrs(&[2], &[1], &[1], 1)),
            (1, &[1, 4, 7], &[4, 2, 2], attrs(&[1], &[0], &[2], 2)),
            (2, &[2, 4, 3, 4], &[4, 3, 3, 3], attrs(&[2], &[1], &[1], 1)),
            (
                2,
                &[1, 6, 4, 3],
                &[6, 2, 3, 2],
                attrs(&[1, 2], &[1, 0], &[1], 3),
            ),
            (
                3,
                &[1, 4, 3, 2, 3],
                &[4, 3, 2, 3, 2],
                attrs(&[2, 1, 1], &[0, 1, 0], &[1], 1),
            ),
        ];
        for (i, (nd, xs, ws, a)) in ct.iter().enumerate() {
            let g = ok(conv::conv_transpose_geom("t", xs, ws, a, *nd))?;
            let x = randn(dev, xs, dt, 40 + i as u64)?;
            let w = randn(dev, ws, dt, 50 + i as u64)?;
            let s = conv::conv_backward_data_reference(&g, &values(&x)?, &values(&w)?);
            let (iv, c) = (g.in_vol(), g.c_in);
            let bv = cancelling_bias(&s, c, |j| (j / iv) % c, dt);
            let bias = from_f64(dev, &bv, &[c], dt)?;
            let out = poisoned(dev, &g.x_shape(), dt)?;
            ok(nn::conv_transpose(
                None,
                &x,
                &w,
                Some(&bias),
                a,
                *nd,
                Some(&out),
            ))?;
            let what = format!("conv_transpose{nd}d case {i} {dt}");
            check_bias_sum(&what, &values(&out)?, &s, &bv, |j| (j / iv) % c, false)?;
        }
        // conv 1d/2d/3d forward, grouped and not.
        let cv: Vec<(usize, &[usize], &[usize], ConvAttrs)> = vec![
            (2, &[2, 4, 6, 5], &[6, 2, 3, 3], attrs(&[1], &[1], &[1], 2)),
            (2, &[1, 6, 5, 5], &[6, 1, 3, 3], attrs(&[1], &[1], &[1], 6)),
            (2, &[1, 3, 5, 4], &[4, 3, 3, 3], attrs(&[1], &[1], &[1], 1)),
            (1, &[2, 4, 9], &[4, 2, 3], attrs(&[1], &[1], &[1], 2)),
            (
                3,
                &[1, 2, 4, 3, 3],
                &[4, 2, 2, 2, 2],
                attrs(&[1], &[0], &[1], 1),
            ),
        ];
        for (i, (nd, xs, ws, a)) in cv.iter().enumerate() {
            let g = ok(conv::conv_geom("c", xs, ws, a, *nd))?;
            let x = randn(dev, xs, dt, 60 + i as u64)?;
            let w = randn(dev, ws, dt, 70 + i as u64)?;
            let s = conv::conv_reference(&g, &values(&x)?, &values(&w)?, None);
            let (ov, c) = (g.out_vol(), g.c_out);
            let bv = cancelling_bias(&s, c, |j| (j / ov) % c, dt);
            let bias = from_f64(dev, &bv, &[c], dt)?;
            let out = poisoned(dev, &g.y_shape(), dt)?;
            ok(nn::conv(
                None,
                &x,
                &w,
                Some(&bias),
                a,
                *nd,
                Activation::None,
                Some(&out),
            ))?;
            let what = format!("conv{nd}d case {i} (groups {}) {dt}", a.groups);
            check_bias_sum(&what, &values(&out)?, &s, &bv, |j| (j / ov) % c, false)?;
        }
    }
    Ok(())
}

/// `x` (`shape`, `[n, c, sp...]`) padded on the host with `fill`: `before[d]` and
/// `after[d]` along spatial dim `d`. Returns the values and the padded shape.
fn pad_host(
    x: &[f64],
    shape: &[usize],
    before: &[usize],
    after: &[usize],
    fill: f64,
) -> (Vec<f64>, Vec<usize>) {
    let nd = shape.len() - 2;
    let mut ps = shape.to_vec();
    for d in 0..nd {
        ps[2 + d] += before[d] + after[d];
    }
    let n: usize = ps.iter().product();
    let mut out = vec![fill; n];
    let sp_in: usize = shape[2..].iter().product();
    let sp_out: usize = ps[2..].iter().product();
    for (i, v) in x.iter().enumerate() {
        let plane = i / sp_in.max(1);
        let mut r = i % sp_in.max(1);
        let mut idx = vec![0; nd];
        for d in (0..nd).rev() {
            idx[d] = r % shape[2 + d];
            r /= shape[2 + d];
        }
        let mut o = 0;
        for d in 0..nd {
            o = o * ps[2 + d] + idx[d] + before[d];
        }
        out[plane * sp_out + o] = *v;
    }
    (out, ps)
}

/// The inverse of [`pad_host`].
fn crop_host(xp: &[f64], shape: &[usize], before: &[usize], after: &[usize]) -> Vec<f64> {
    let nd = shape.len() - 2;
    let mut ps = shape.to_vec();
    for d in 0..nd {
        ps[2 + d] += before[d] + after[d];
    }
    let sp_in: usize = shape[2..].iter().product();
    let sp_out: usize = ps[2..].iter().product();
    let n: usize = shape.iter().product();
    (0..n)
        .map(|i| {
            let plane = i / sp_in.max(1);
            let mut r = i % sp_in.max(1);
            let mut idx = vec![0; nd];
            for d in (0..nd).rev() {
                idx[d] = r % shape[2 + d];
                r /= shape[2 + d];
            }
            let mut o = 0;
            for d in 0..nd {
                o = o * ps[2 + d] + idx[d] + before[d];
            }
            xp[plane * sp_out + o]
        })
        .collect()
}

/// conv_ex with padding per side against an explicit zero pad (on the host) + an unpadded
/// convolution, forward and both backwards; equal sides give exactly rb_conv's results.
fn conv_ex_asymmetric_padding(dev: &Dev) -> TestResult {
    // (ndim, x, w, stride, dilation, groups, before, after)
    type Case = (
        usize,
        &'static [usize],
        &'static [usize],
        &'static [usize],
        &'static [usize],
        usize,
        &'static [usize],
        &'static [usize],
    );
    let cases: &[Case] = &[
        // PyTorch padding='same' with an even kernel: the extra after
        (
            2,
            &[2, 3, 6, 7],
            &[4, 3, 3, 2],
            &[1],
            &[1],
            1,
            &[1, 0],
            &[1, 1],
        ),
        (1, &[1, 2, 9], &[3, 2, 4], &[2], &[1], 1, &[2], &[1]),
        (
            3,
            &[1, 2, 4, 5, 3],
            &[2, 1, 2, 3, 2],
            &[1],
            &[1],
            2,
            &[0, 1, 1],
            &[1, 1, 0],
        ),
        (
            2,
            &[1, 2, 7, 8],
            &[2, 2, 3, 3],
            &[1, 2],
            &[2],
            1,
            &[3, 0],
            &[1, 2],
        ),
        (
            2,
            &[2, 1, 5, 5],
            &[1, 1, 1, 1],
            &[1],
            &[1],
            1,
            &[0, 2],
            &[3, 0],
        ),
    ];
    for dt in FLOATS {
        for (i, (nd, xs, ws, st, dil, groups, pb, pa)) in cases.iter().enumerate() {
            let ex = ConvAttrsEx {
                attrs: ConvAttrs {
                    stride: st.to_vec(),
                    padding: pb.to_vec(),
                    dilation: dil.to_vec(),
                    groups: *groups,
                    output_padding: vec![0],
                },
                pad_after: pa.to_vec(),
                layout: Layout::ChannelsFirst,
            };
            let x = randn(dev, xs, dt, 700 + i as u64)?;
            let w = randn(dev, ws, dt, 710 + i as u64)?;
            let b = randn(dev, &[ws[0]], dt, 720 + i as u64)?;
            let (xv, wv, bv) = (values(&x)?, values(&w)?, values(&b)?);
            let (xp, ps) = pad_host(&xv, xs, pb, pa, 0.0);
            let plain = ConvAttrs {
                padding: vec![0],
                ..ex.attrs.clone()
            };
            let g = ok(conv::conv_geom("conv", &ps, ws, &plain, *nd))?;
            let what = format!("conv_ex case {i} {dt}");
            let out = poisoned(dev, &g.y_shape(), dt)?;
            ok(nn::conv_ex(
                None,
                &x,
                &w,
                Some(&b),
                &ex,
                *nd,
                Activation::Relu,
                Some(&out),
            ))?;
            let want: Vec<f64> = conv::conv_reference(&g, &xp, &wv, Some(&bv))
                .iter()
                .map(|v| v.max(0.0))
                .collect();
            close(&what, &values(&out)?, &want, dt)?;
            let dy = randn(dev, &g.y_shape(), dt, 730 + i as u64)?;
            let dyv = values(&dy)?;
            let dx = poisoned(dev, xs, dt)?;
            ok(nn::conv_ex_backward_data(
                None,
                &dy,
                &w,
                xs,
                &ex,
                *nd,
                Some(&dx),
            ))?;
            let want = crop_host(
                &conv::conv_backward_data_reference(&g, &dyv, &wv),
                xs,
                pb,
                pa,
            );
            close(&format!("{what} dx"), &values(&dx)?, &want, dt)?;
            let (dw, db) = ok(nn::conv_ex_backward_weight(
                None, &x, &dy, ws, &ex, *nd, true,
            ))?;
            let (rw, rb) = conv::conv_backward_weight_reference(&g, &xp, &dyv);
            close(&format!("{what} dw"), &values(&dw)?, &rw, dt)?;
            close(&format!("{what} db"), &values(&db.unwrap())?, &rb, dt)?;
            // Equal sides: rb_conv's result, bit for bit.
            let sym = ConvAttrsEx {
                attrs: ex.attrs.clone(),
                pad_after: pb.to_vec(),
                layout: Layout::ChannelsFirst,
            };
            let a = ok(nn::conv_ex(
                None,
                &x,
                &w,
                None,
                &sym,
                *nd,
                Activation::None,
                None,
            ))?;
            let c = ok(nn::conv(
                None,
                &x,
                &w,
                None,
                &sym.attrs,
                *nd,
                Activation::None,
                None,
            ))?;
            ensure(
                values(&a)? == values(&c)?,
                format!("{what}: symmetric != conv"),
            )?;
        }
    }
    // Misuse: a padding list of the wrong length names the op.
    let x = randn(dev, &[1, 1, 5, 5], DType::F32, 1)?;
    let w = randn(dev, &[1, 1, 3, 3], DType::F32, 2)?;
    let bad = ConvAttrsEx {
        attrs: ConvAttrs::default(),
        pad_after: vec![1, 1, 1],
        layout: Layout::ChannelsFirst,
    };
    expect_err(
        nn::conv_ex(None, &x, &w, None, &bad, 2, Activation::None, None),
        ErrorKind::InvalidArgument,
        "conv2d",
    )?;
    Ok(())
}

fn pool_ex_attrs(
    k: &[usize],
    s: &[usize],
    pb: &[usize],
    pa: &[usize],
    ceil: bool,
    div: Option<i64>,
) -> PoolAttrsEx {
    PoolAttrsEx {
        attrs: pool_attrs(k, s, pb, &[1], ceil),
        pad_after: pa.to_vec(),
        divisor_override: div,
        layout: Layout::ChannelsFirst,
    }
}

/// pool_ex with padding per side and divisor_override against the reference geometry and,
/// without ceil_mode, against an explicit pad on the host (-inf for max, 0 for average
/// counting the padding) + an unpadded pooling; equal sides and no divisor give exactly
/// rb_pool's results.
fn pool_ex_asymmetric_divisor(dev: &Dev) -> TestResult {
    let cases: Vec<(usize, &[usize], PoolAttrsEx)> = vec![
        (
            2,
            &[2, 3, 7, 8],
            pool_ex_attrs(&[3, 2], &[2, 2], &[1, 0], &[0, 1], false, None),
        ),
        (
            2,
            &[1, 2, 6, 6],
            pool_ex_attrs(&[2], &[2], &[0], &[1], false, None),
        ),
        (
            2,
            &[1, 2, 7, 9],
            pool_ex_attrs(&[3], &[2], &[0, 1], &[1, 0], true, None),
        ),
        (
            1,
            &[2, 3, 11],
            pool_ex_attrs(&[4], &[3], &[1], &[2], false, None),
        ),
        (
            3,
            &[1, 2, 5, 4, 6],
            pool_ex_attrs(&[2, 3, 2], &[1, 2, 2], &[1, 0, 0], &[0, 1, 1], false, None),
        ),
        (
            2,
            &[1, 2, 6, 7],
            pool_ex_attrs(&[3], &[2], &[1], &[1], false, Some(4)),
        ),
        (
            2,
            &[1, 2, 6, 7],
            pool_ex_attrs(&[3, 2], &[2, 1], &[0, 1], &[1, 0], true, Some(-3)),
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
            for (i, (nd, xs, ex)) in cases.iter().enumerate() {
                if kind == PoolKind::Max && ex.divisor_override.is_some() {
                    continue;
                }
                let what = format!("pool_ex {kind:?} case {i} {dt}");
                let g = ok(pool::pool_geom_ex("pool", kind, xs, ex, *nd))?;
                let x = randn(dev, xs, dt, 800 + i as u64)?;
                let xv = values(&x)?;
                let out = poisoned(dev, &g.y_shape(), dt)?;
                ok(nn::pool_ex(None, kind, &x, ex, *nd, Some(&out)))?;
                let want: Vec<f64> = pool::pool_reference(&g, &xv)
                    .iter()
                    .map(|v| round_to(dt, *v))
                    .collect();
                close(&what, &values(&out)?, &want, dt)?;
                let explicit = match kind {
                    PoolKind::Max => Some(f64::NEG_INFINITY),
                    PoolKind::Avg {
                        count_include_pad: true,
                    } => Some(0.0),
                    _ => None,
                };
                if let (Some(fill), false) = (explicit, ex.attrs.ceil_mode) {
                    let per_dim = |v: &[usize]| {
                        if v.len() == 1 {
                            vec![v[0]; *nd]
                        } else {
                            v.to_vec()
                        }
                    };
                    let (pb, pa) = (per_dim(&ex.attrs.padding), per_dim(&ex.pad_after));
                    let (xp, ps) = pad_host(&xv, xs, &pb, &pa, fill);
                    let plain = PoolAttrsEx {
                        attrs: PoolAttrs {
                            padding: vec![0],
                            ..ex.attrs.clone()
                        },
                        pad_after: vec![0],
                        divisor_override: ex.divisor_override,
                        layout: Layout::ChannelsFirst,
                    };
                    let g0 = ok(pool::pool_geom_ex("pool", kind, &ps, &plain, *nd))?;
                    ensure(
                        g0.y_shape() == g.y_shape(),
                        format!("{what}: explicit shape"),
                    )?;
                    let want: Vec<f64> = pool::pool_reference(&g0, &xp)
                        .iter()
                        .map(|v| round_to(dt, *v))
                        .collect();
                    close(
                        &format!("{what} vs explicit padding"),
                        &values(&out)?,
                        &want,
                        dt,
                    )?;
                }
                let dy = randn(dev, &g.y_shape(), dt, 810 + i as u64)?;
                let dx = poisoned(dev, xs, dt)?;
                ok(nn::pool_ex_backward(
                    None,
                    kind,
                    &x,
                    &dy,
                    ex,
                    *nd,
                    Some(&dx),
                ))?;
                let want = pool::pool_backward_reference(&g, &xv, &values(&dy)?);
                close(&format!("{what} backward"), &values(&dx)?, &want, dt)?;
                // Equal sides and no divisor: rb_pool's results, bit for bit.
                let sym = PoolAttrsEx {
                    attrs: ex.attrs.clone(),
                    pad_after: ex.attrs.padding.clone(),
                    divisor_override: None,
                    layout: Layout::ChannelsFirst,
                };
                let a = ok(nn::pool_ex(None, kind, &x, &sym, *nd, None))?;
                let b = ok(nn::pool(None, kind, &x, &sym.attrs, *nd, None))?;
                ensure(
                    values(&a)? == values(&b)?,
                    format!("{what}: symmetric != pool"),
                )?;
            }
        }
    }
    // Misuse.
    let x = randn(dev, &[1, 1, 6, 6], DType::F32, 3)?;
    for (ex, kind, why) in [
        (
            pool_ex_attrs(&[2], &[2], &[0], &[2], false, None),
            PoolKind::Max,
            "half of kernel",
        ),
        (
            pool_ex_attrs(&[2], &[2], &[0], &[1], false, Some(3)),
            PoolKind::Max,
            "divisor_override",
        ),
        (
            pool_ex_attrs(&[2], &[2], &[0], &[1], false, Some(0)),
            PoolKind::Avg {
                count_include_pad: true,
            },
            "divisor_override",
        ),
    ] {
        let r = nn::pool_ex(None, kind, &x, &ex, 2, None);
        match r {
            Err(e) if e.kind == ErrorKind::InvalidArgument && e.message.contains(why) => {}
            other => return Err(format!("pool_ex misuse {why}: {other:?}").into()),
        }
    }
    Ok(())
}

/// max_pool_with_indices: the values and PyTorch's indices (flat within each plane; ties
/// to the first, the last NaN of a window), 1D/2D/3D with overlapping windows, padding,
/// dilation and ceil_mode; the backward through the indices against the scatter reference
/// and, without NaN, against rb_pool_backward; bad indices fail.
fn max_pool_indices(dev: &Dev) -> TestResult {
    let cases: Vec<(usize, &[usize], PoolAttrs)> = vec![
        (2, &[2, 3, 7, 8], pool_attrs(&[3], &[2], &[1], &[1], false)),
        (
            2,
            &[1, 2, 7, 9],
            pool_attrs(&[3, 2], &[1, 2], &[1, 1], &[1], true),
        ),
        (1, &[2, 3, 11], pool_attrs(&[4], &[3], &[2], &[1], true)),
        (1, &[1, 2, 10], pool_attrs(&[3], &[1], &[1], &[3], false)),
        (2, &[1, 2, 9, 9], pool_attrs(&[3], &[2], &[1], &[2], false)),
        (
            3,
            &[1, 2, 5, 6, 7],
            pool_attrs(&[2, 3, 2], &[2, 1, 2], &[1, 1, 0], &[1], false),
        ),
        (2, &[1, 1, 1, 1], pool_attrs(&[1], &[1], &[0], &[1], false)),
    ];
    for dt in FLOATS {
        for (i, (nd, xs, a)) in cases.iter().enumerate() {
            for with_nan in [false, true] {
                let what = format!("max_pool_with_indices case {i} nan={with_nan} {dt}");
                let g = ok(pool::pool_geom("pool", PoolKind::Max, xs, a, *nd))?;
                let n: usize = xs.iter().product();
                // Small integers: many ties; NaNs at every 5th and 7th position.
                let r = values(&randn(dev, &[n], DType::F32, 850 + i as u64)?)?;
                let xv: Vec<f64> = (0..n)
                    .map(|j| {
                        if with_nan && (j % 5 == 1 || j % 7 == 3) {
                            f64::NAN
                        } else {
                            (r[j] * 2.0).round()
                        }
                    })
                    .collect();
                let x = from_f64(dev, &xv, xs, dt)?;
                let out = poisoned(dev, &g.y_shape(), dt)?;
                let idx = poisoned(dev, &g.y_shape(), DType::I64)?;
                ok(nn::max_pool_with_indices(
                    None,
                    &x,
                    a,
                    *nd,
                    Some(&out),
                    Some(&idx),
                ))?;
                let (wy, wi) = pool::max_pool_indices_reference(&g, &xv);
                assert_close(&what, &values(&out)?, &wy, 0.0, 0.0)?;
                let gi: Vec<i64> = values(&idx)?.iter().map(|v| *v as i64).collect();
                ensure(gi == wi, format!("{what}: indices {gi:?}, expected {wi:?}"))?;
                // Backward through the indices.
                let dy = randn(dev, &g.y_shape(), dt, 860 + i as u64)?;
                let dyv = values(&dy)?;
                let dx = poisoned(dev, xs, dt)?;
                ok(nn::max_pool_backward_indices(
                    None,
                    &dy,
                    &idx,
                    xs,
                    Some(&dx),
                ))?;
                let want =
                    pool::max_pool_backward_indices_reference(&dyv, &wi, g.n * g.c, g.in_vol());
                close(&format!("{what} backward"), &values(&dx)?, &want, dt)?;
                if !with_nan {
                    let dx2 = ok(nn::pool_backward(
                        None,
                        PoolKind::Max,
                        &x,
                        &dy,
                        a,
                        *nd,
                        None,
                    ))?;
                    close(
                        &format!("{what} backward vs pool_backward"),
                        &values(&dx)?,
                        &values(&dx2)?,
                        dt,
                    )?;
                }
            }
        }
    }
    // Out-of-range and non-i64 indices, mismatched shapes.
    let dy = randn(dev, &[1, 2, 2, 2], DType::F32, 1)?;
    let bad = from_f64(
        dev,
        &[0.0, 1.0, 2.0, 99.0, 0.0, 1.0, 2.0, 3.0],
        &[1, 2, 2, 2],
        DType::I64,
    )?;
    expect_err(
        nn::max_pool_backward_indices(None, &dy, &bad, &[1, 2, 4, 4], None),
        ErrorKind::InvalidArgument,
        "max_pool_backward_indices",
    )?;
    let neg = from_f64(
        dev,
        &[0.0, -1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0],
        &[1, 2, 2, 2],
        DType::I64,
    )?;
    expect_err(
        nn::max_pool_backward_indices(None, &dy, &neg, &[1, 2, 4, 4], None),
        ErrorKind::InvalidArgument,
        "max_pool_backward_indices",
    )?;
    let i32s = from_f64(dev, &[0.0; 8], &[1, 2, 2, 2], DType::I32)?;
    expect_err(
        nn::max_pool_backward_indices(None, &dy, &i32s, &[1, 2, 4, 4], None),
        ErrorKind::DtypeMismatch,
        "max_pool_backward_indices",
    )?;
    expect_err(
        nn::max_pool_backward_indices(None, &dy, &bad, &[1, 3, 4, 4], None),
        ErrorKind::ShapeMismatch,
        "max_pool_backward_indices",
    )?;
    let x = randn(dev, &[1, 2, 4, 4], DType::F32, 2)?;
    let wrong = poisoned(dev, &[1, 2, 2, 2], DType::F32)?;
    expect_err(
        nn::max_pool_with_indices(
            None,
            &x,
            &pool_attrs(&[2], &[2], &[0], &[1], false),
            2,
            None,
            Some(&wrong),
        ),
        ErrorKind::DtypeMismatch,
        "max_pool2d_with_indices",
    )?;
    Ok(())
}

/// `[N, C, vol]` (channels first) values as `[N, vol, C]`.
fn values_to_last(v: &[f64], n: usize, c: usize, vol: usize) -> Vec<f64> {
    let mut r = vec![0.0; v.len()];
    for a in 0..n {
        for b in 0..c {
            for i in 0..vol {
                r[(a * vol + i) * c + b] = v[(a * c + b) * vol + i];
            }
        }
    }
    r
}

/// `[N, vol, C]` (channels last) values as `[N, C, vol]`.
fn values_to_first(v: &[f64], n: usize, c: usize, vol: usize) -> Vec<f64> {
    let mut r = vec![0.0; v.len()];
    for a in 0..n {
        for b in 0..c {
            for i in 0..vol {
                r[(a * c + b) * vol + i] = v[(a * vol + i) * c + b];
            }
        }
    }
    r
}

/// Small integers (many ties), with NaNs and -infs when `nan`.
fn tie_values(
    dev: &Dev,
    n: usize,
    seed: u64,
    nan: bool,
) -> Result<Vec<f64>, libtest_mimic::Failed> {
    let r = values(&randn(dev, &[n.max(1)], DType::F32, seed)?)?;
    Ok((0..n)
        .map(|j| {
            if nan && (j % 7 == 3 || j % 11 == 5) {
                f64::NAN
            } else if nan && j % 13 == 2 {
                f64::NEG_INFINITY
            } else {
                (r[j] * 2.0).round()
            }
        })
        .collect())
}

/// adaptive_{avg,max}_pool{1,2,3}d forward and backward, both layouts, every float dtype,
/// against the float64 references: windows of input not divisible by output, output larger
/// than input (overlapping windows: max pooling's backward adds up shared maxima), global
/// pooling, NaN (propagates; the last NaN's index), ties (the first), -inf windows, and
/// N = 0 / C = 0 (empty results).
fn adaptive_pool_nd(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[2, 3, 11], &[4]),
        (&[1, 2, 5], &[8]),
        (&[2, 3, 7, 5], &[3, 2]),
        (&[1, 2, 3, 3], &[5, 4]),
        (&[1, 5, 5, 7], &[1, 1]),
        (&[2, 4, 6, 6], &[3, 3]),
        (&[1, 2, 5, 6, 7], &[2, 3, 4]),
        (&[2, 1, 3, 2, 3], &[4, 3, 5]),
        (&[1, 3, 4, 4, 4], &[1, 1, 1]),
        (&[0, 3, 4, 4], &[2, 2]),
        (&[2, 0, 4], &[3]),
    ];
    for dt in FLOATS {
        for (i, (xs, os)) in cases.iter().enumerate() {
            for layout in [Layout::ChannelsFirst, Layout::ChannelsLast] {
                let lay = (layout == Layout::ChannelsLast) as i64;
                let g = ok(pool::adaptive_geom("t", xs, os, Layout::ChannelsFirst))?;
                let (n, c, iv, ov) = (g.n, g.c, g.in_vol(), g.out_vol());
                let (x_shape, y_shape) = match layout {
                    Layout::ChannelsFirst => (g.x_shape(), g.y_shape()),
                    Layout::ChannelsLast => (
                        Layout::last_shape(&g.x_shape()),
                        Layout::last_shape(&g.y_shape()),
                    ),
                };
                let lay_v = |v: &[f64], vol: usize| match layout {
                    Layout::ChannelsFirst => v.to_vec(),
                    Layout::ChannelsLast => values_to_last(v, n, c, vol),
                };
                let first_v = |v: &[f64], vol: usize| match layout {
                    Layout::ChannelsFirst => v.to_vec(),
                    Layout::ChannelsLast => values_to_first(v, n, c, vol),
                };
                for nan in [false, true] {
                    let what = format!("adaptive pool case {i} {layout:?} nan={nan} {dt}");
                    let xv: Vec<f64> = tie_values(dev, n * c * iv, 900 + i as u64, nan)?
                        .into_iter()
                        .map(|v| round_to(dt, v))
                        .collect();
                    let x = from_f64(dev, &lay_v(&xv, iv), &x_shape, dt)?;
                    let dyv: Vec<f64> = values(&randn(dev, &[n * c * ov], dt, 910 + i as u64)?)?;
                    let dy = from_f64(dev, &lay_v(&dyv, ov), &y_shape, dt)?;
                    // max
                    let out = poisoned(dev, &y_shape, dt)?;
                    let idx = poisoned(dev, &y_shape, DType::I64)?;
                    ok(nn::adaptive_max_pool(
                        None,
                        &x,
                        os,
                        lay,
                        Some(&out),
                        Some(&idx),
                    ))?;
                    let (wy, wi) = pool::adaptive_max_reference(&g, &xv);
                    assert_close(&what, &first_v(&values(&out)?, ov), &wy, 0.0, 0.0)?;
                    let gi: Vec<i64> = first_v(&values(&idx)?, ov)
                        .iter()
                        .map(|v| *v as i64)
                        .collect();
                    ensure(gi == wi, format!("{what}: indices {gi:?}, expected {wi:?}"))?;
                    let dx = poisoned(dev, &x_shape, dt)?;
                    ok(nn::adaptive_max_pool_backward(
                        None,
                        &dy,
                        &idx,
                        &x_shape,
                        lay,
                        Some(&dx),
                    ))?;
                    let want = pool::max_pool_backward_indices_reference(&dyv, &wi, n * c, iv);
                    close(
                        &format!("{what} max backward"),
                        &first_v(&values(&dx)?, iv),
                        &want,
                        dt,
                    )?;
                    if nan {
                        continue;
                    }
                    // avg
                    let out = poisoned(dev, &y_shape, dt)?;
                    ok(nn::adaptive_avg_pool(None, &x, os, lay, Some(&out)))?;
                    let want = pool::adaptive_avg_reference(&g, &xv);
                    close(
                        &format!("{what} avg"),
                        &first_v(&values(&out)?, ov),
                        &want,
                        dt,
                    )?;
                    let dx = poisoned(dev, &x_shape, dt)?;
                    ok(nn::adaptive_avg_pool_backward(
                        None,
                        &dy,
                        &x_shape,
                        lay,
                        Some(&dx),
                    ))?;
                    let want = pool::adaptive_avg_backward_reference(&g, &dyv);
                    close(
                        &format!("{what} avg backward"),
                        &first_v(&values(&dx)?, iv),
                        &want,
                        dt,
                    )?;
                    // The 2D entry point of the ABI agrees.
                    if os.len() == 2 && layout == Layout::ChannelsFirst {
                        let o2 = ok(nn::adaptive_avg_pool2d(None, &x, [os[0], os[1]], None))?;
                        close(&format!("{what} avg2d"), &values(&o2)?, &values(&out)?, dt)?;
                    }
                }
            }
        }
    }
    // Every value -inf: the window's first position; a lone NaN among -infs wins.
    let xs = [1, 1, 5];
    let x = from_f64(dev, &[f64::NEG_INFINITY; 5], &xs, DType::F32)?;
    let (v, i) = ok(nn::adaptive_max_pool(None, &x, &[2], 0, None, None))?;
    ensure(
        values(&i)? == [0.0, 2.0] && values(&v)?.iter().all(|v| *v == f64::NEG_INFINITY),
        format!("all -inf: {:?} {:?}", values(&v)?, values(&i)?),
    )?;
    Ok(())
}

/// Adaptive pooling's errors: PyTorch's (an empty spatial dim, an output size of zero), a
/// bad layout, a rank that does not match, indices of another dtype or shape, an index
/// outside its window (checked on the device).
fn adaptive_pool_misuse(dev: &Dev) -> TestResult {
    let x = randn(dev, &[1, 2, 4, 4], DType::F32, 3)?;
    expect_err(
        nn::adaptive_avg_pool(None, &x, &[0, 2], 0, None),
        ErrorKind::InvalidArgument,
        "adaptive_avg_pool",
    )?;
    expect_err(
        nn::adaptive_max_pool(None, &x, &[2], 0, None, None),
        ErrorKind::ShapeMismatch,
        "adaptive_max_pool",
    )?;
    expect_err(
        nn::adaptive_avg_pool(None, &x, &[2, 2], 2, None),
        ErrorKind::InvalidArgument,
        "adaptive_avg_pool",
    )?;
    let e = randn(dev, &[1, 2, 0, 4], DType::F32, 3)?;
    expect_err(
        nn::adaptive_avg_pool(None, &e, &[2, 2], 0, None),
        ErrorKind::ShapeMismatch,
        "non-zero size",
    )?;
    let (_, idx) = ok(nn::adaptive_max_pool(None, &x, &[2, 2], 0, None, None))?;
    let dy = randn(dev, &[1, 2, 2, 2], DType::F32, 4)?;
    // An index of another window, and one outside the plane.
    for bad in [10.0, 99.0, -1.0] {
        let mut iv = values(&idx)?;
        iv[5] = bad;
        let bi = from_f64(dev, &iv, &[1, 2, 2, 2], DType::I64)?;
        expect_err(
            nn::adaptive_max_pool_backward(None, &dy, &bi, &[1, 2, 4, 4], 0, None),
            ErrorKind::InvalidArgument,
            "window",
        )?;
    }
    let i32s = from_f64(dev, &values(&idx)?, &[1, 2, 2, 2], DType::I32)?;
    expect_err(
        nn::adaptive_max_pool_backward(None, &dy, &i32s, &[1, 2, 4, 4], 0, None),
        ErrorKind::DtypeMismatch,
        "adaptive_max_pool_backward",
    )?;
    expect_err(
        nn::adaptive_avg_pool_backward(None, &dy, &[1, 2, 4], 0, None),
        ErrorKind::ShapeMismatch,
        "adaptive_avg_pool_backward",
    )?;
    expect_err(
        nn::adaptive_avg_pool_backward(None, &dy, &[1, 3, 4, 4], 0, None),
        ErrorKind::ShapeMismatch,
        "adaptive_avg_pool_backward",
    )?;
    let xi = from_f64(dev, &[1.0; 8], &[1, 2, 4], DType::I32)?;
    expect_err(
        nn::adaptive_avg_pool(None, &xi, &[2], 0, None),
        ErrorKind::DtypeMismatch,
        "adaptive_avg_pool",
    )?;
    Ok(())
}

/// `max_pool_with_indices` and its backward in channels-last (`_ex`), with padding per
/// side: the values and indices are the channels-first ones, permuted.
fn max_pool_indices_channels_last(dev: &Dev) -> TestResult {
    let cases: Vec<(usize, &[usize], PoolAttrs, Vec<usize>)> = vec![
        (
            2,
            &[2, 3, 7, 8],
            pool_attrs(&[3], &[2], &[1], &[1], false),
            vec![1],
        ),
        (
            2,
            &[1, 4, 7, 9],
            pool_attrs(&[3, 2], &[1, 2], &[1, 1], &[1], true),
            vec![0, 1],
        ),
        (
            1,
            &[2, 3, 11],
            pool_attrs(&[4], &[3], &[2], &[1], true),
            vec![1],
        ),
        (
            3,
            &[1, 2, 5, 6, 7],
            pool_attrs(&[2, 3, 2], &[2, 1, 2], &[1, 1, 0], &[1], false),
            vec![1, 1, 0],
        ),
        (
            2,
            &[0, 3, 4, 4],
            pool_attrs(&[2], &[], &[0], &[1], false),
            vec![0],
        ),
    ];
    for dt in FLOATS {
        for (i, (nd, xs, a, pa)) in cases.iter().enumerate() {
            for nan in [false, true] {
                let what = format!("max_pool_with_indices_ex NHWC case {i} nan={nan} {dt}");
                let ex = PoolAttrsEx {
                    attrs: a.clone(),
                    pad_after: pa.clone(),
                    divisor_override: None,
                    layout: Layout::ChannelsLast,
                };
                let first = PoolAttrsEx {
                    layout: Layout::ChannelsFirst,
                    ..ex.clone()
                };
                let g = ok(pool::pool_geom_ex("t", PoolKind::Max, xs, &first, *nd))?;
                let (n, c, iv, ov) = (g.n, g.c, g.in_vol(), g.out_vol());
                let xv: Vec<f64> = tie_values(dev, n * c * iv, 950 + i as u64, nan)?
                    .into_iter()
                    .map(|v| round_to(dt, v))
                    .collect();
                let x_last = Layout::last_shape(xs);
                let y_last = Layout::last_shape(&g.y_shape());
                let x = from_f64(dev, &values_to_last(&xv, n, c, iv), &x_last, dt)?;
                let out = poisoned(dev, &y_last, dt)?;
                let idx = poisoned(dev, &y_last, DType::I64)?;
                ok(nn::max_pool_with_indices_ex(
                    None,
                    &x,
                    &ex,
                    *nd,
                    Some(&out),
                    Some(&idx),
                ))?;
                let (wy, wi) = pool::max_pool_indices_reference(&g, &xv);
                assert_close(
                    &what,
                    &values_to_first(&values(&out)?, n, c, ov),
                    &wy,
                    0.0,
                    0.0,
                )?;
                let gi: Vec<i64> = values_to_first(&values(&idx)?, n, c, ov)
                    .iter()
                    .map(|v| *v as i64)
                    .collect();
                ensure(gi == wi, format!("{what}: indices {gi:?}, expected {wi:?}"))?;
                let dyv = values(&randn(dev, &[n * c * ov], dt, 960 + i as u64)?)?;
                let dy = from_f64(dev, &values_to_last(&dyv, n, c, ov), &y_last, dt)?;
                let dx = poisoned(dev, &x_last, dt)?;
                ok(nn::max_pool_backward_indices_ex(
                    None,
                    &dy,
                    &idx,
                    &x_last,
                    1,
                    Some(&dx),
                ))?;
                let want = pool::max_pool_backward_indices_reference(&dyv, &wi, n * c, iv);
                close(
                    &format!("{what} backward"),
                    &values_to_first(&values(&dx)?, n, c, iv),
                    &want,
                    dt,
                )?;
            }
        }
    }
    Ok(())
}
