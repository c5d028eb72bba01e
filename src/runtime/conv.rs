//! Eager convolution, pooling, linear and fused ops on tensors (PyTorch semantics, NCHW),
//! with their backward passes. Same conventions as [`crate::runtime::eager`]: `out = None`
//! allocates the result, `Some(t)` writes into `t` after checking it.

use crate::base::dtype::DType;
use crate::base::shape::BroadcastLayout;
use crate::device::{DevPtr, GemmDesc, Transpose};
use crate::ops::conv::{self, Activation, ConvAttrs, ConvGeom};
use crate::ops::pool::{self, PoolAttrs, PoolKind};
use crate::runtime::eager::{check_same, output, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::{Error, Result};

fn float(op: &str, t: &Tensor) -> Result<()> {
    if !t.dtype().is_float() {
        return Err(Error::dtype(format!(
            "{op}: dtype {} is not f32, f16 or bf16",
            t.dtype()
        )));
    }
    Ok(())
}

fn check_bias(op: &str, x: &Tensor, b: Option<&Tensor>, n: usize) -> Result<()> {
    if let Some(b) = b {
        check_same(op, x, b)?;
        if b.shape() != [n] {
            return Err(Error::shape(format!(
                "{op}: bias has shape {:?}, expected [{n}]",
                b.shape()
            )));
        }
    }
    Ok(())
}

/// A workspace tensor of at least `bytes` (None for 0).
fn workspace(like: &Tensor, bytes: usize) -> Result<Option<Tensor>> {
    if bytes == 0 {
        return Ok(None);
    }
    Tensor::empty(like.device().clone(), &[bytes.div_ceil(4)], DType::F32).map(Some)
}

fn ws_parts(w: &Option<Tensor>) -> (DevPtr, usize) {
    w.as_ref()
        .map_or((DevPtr::NULL, 0), |t| (t.ptr(), t.nbytes()))
}

fn conv_name(ndim: usize, transposed: bool) -> String {
    if transposed {
        format!("conv_transpose{ndim}d")
    } else {
        format!("conv{ndim}d")
    }
}

fn check_ndim(op: &str, ndim: usize) -> Result<()> {
    if !(1..=3).contains(&ndim) {
        return Err(Error::invalid(format!(
            "{op}: {ndim} spatial dimensions, expected 1, 2 or 3"
        )));
    }
    Ok(())
}

/// Runs the device's forward convolution for a validated geometry.
#[allow(clippy::too_many_arguments)]
fn run_conv_forward(
    op: &str,
    stream: Option<&Stream>,
    g: &ConvGeom,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    act: Activation,
    o: &Tensor,
) -> Result<()> {
    if o.numel() == 0 {
        return Ok(());
    }
    let s = stream_for(op, stream, x)?;
    let dev = s.device();
    let ws = workspace(x, dev.conv_workspace_size(g, x.dtype())?)?;
    let (wp, wb) = ws_parts(&ws);
    if g.n * g.c_in * g.in_vol() == 0 {
        // An empty reduction: the output is the bias (or 0) through the activation.
        dev.fill(s.raw(), o.dtype(), o.ptr(), o.numel(), 0.0)?;
        if let Some(b) = bias {
            let (_, layout) =
                BroadcastLayout::new(&[o.shape(), &[g.c_out, 1, 1, 1][..g.ndim + 1]])?;
            dev.binary(
                s.raw(),
                crate::ops::elementwise::BinaryOp::Add,
                o.dtype(),
                o.ptr(),
                b.ptr(),
                o.ptr(),
                &layout,
            )?;
        }
        if act != Activation::None {
            let u = match act {
                Activation::Relu => crate::ops::elementwise::UnaryOp::Relu,
                Activation::Gelu { tanh } => crate::ops::elementwise::UnaryOp::Gelu { tanh },
                Activation::None => unreachable!(),
            };
            dev.unary(s.raw(), u, o.dtype(), o.ptr(), o.ptr(), o.numel())?;
        }
        return Ok(());
    }
    dev.conv_forward(
        s.raw(),
        g,
        x.dtype(),
        x.ptr(),
        w.ptr(),
        bias.map(|b| b.ptr()),
        act,
        o.ptr(),
        wp,
        wb,
    )
}

/// `conv{ndim}d(x, w, bias)` followed by `act` (fused on the device: conv, conv+bias,
/// conv+bias+relu).
#[allow(clippy::too_many_arguments)]
pub fn conv(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    attrs: &ConvAttrs,
    ndim: usize,
    act: Activation,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("conv", ndim)?;
    let op = conv_name(ndim, false);
    check_same(&op, x, w)?;
    float(&op, x)?;
    let g = conv::conv_geom(&op, x.shape(), w.shape(), attrs, ndim)?;
    check_bias(&op, x, bias, g.c_out)?;
    let o = output(&op, x, out, &g.y_shape(), x.dtype())?;
    run_conv_forward(&op, stream, &g, x, w, bias, act, &o)?;
    Ok(o)
}

/// Inference `relu(batch_norm(conv(x, w, bias)))` with the batch norm folded into the
/// convolution's weights and bias (`mean`, `var`, `gamma`, `beta` of `c_out` elements).
#[allow(clippy::too_many_arguments)]
pub fn conv_bn_relu(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    bn: [&Tensor; 4],
    eps: f64,
    attrs: &ConvAttrs,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("conv_bn_relu", ndim)?;
    let op = "conv_bn_relu";
    check_same(op, x, w)?;
    float(op, x)?;
    let g = conv::conv_geom(op, x.shape(), w.shape(), attrs, ndim)?;
    check_bias(op, x, bias, g.c_out)?;
    for (t, name) in bn
        .iter()
        .zip(["running_mean", "running_var", "weight", "bias"])
    {
        check_same(op, x, t)?;
        if t.shape() != [g.c_out] {
            return Err(Error::shape(format!(
                "{op}: batch-norm {name} has shape {:?}, expected [{}]",
                t.shape(),
                g.c_out
            )));
        }
    }
    if eps.is_nan() || eps <= 0.0 {
        return Err(Error::invalid(format!("{op}: eps={eps} must be positive")));
    }
    let o = output(op, x, out, &g.y_shape(), x.dtype())?;
    // Fold in float64 (c_out * kernel values, small next to the convolution).
    let bv = match bias {
        Some(b) => Some(b.to_f64_vec()?),
        None => None,
    };
    let v: Vec<Vec<f64>> = bn.iter().map(|t| t.to_f64_vec()).collect::<Result<_>>()?;
    let (w2, b2) = conv::fold_batch_norm(
        &w.to_f64_vec()?,
        bv.as_deref(),
        &v[0],
        &v[1],
        &v[2],
        &v[3],
        eps,
        g.c_out,
    );
    let wt = from_f64(x, &w2, w.shape())?;
    let bt = from_f64(x, &b2, &[g.c_out])?;
    run_conv_forward(op, stream, &g, x, &wt, Some(&bt), Activation::Relu, &o)?;
    Ok(o)
}

fn from_f64(like: &Tensor, v: &[f64], shape: &[usize]) -> Result<Tensor> {
    let dt = like.dtype();
    let mut bytes = vec![0u8; v.len() * dt.size()];
    for (i, x) in v.iter().enumerate() {
        // SAFETY: `bytes` holds v.len() elements of dt.
        unsafe { crate::device::cpu::elem::store_f64(dt, bytes.as_mut_ptr(), i, *x) };
    }
    Tensor::from_bytes(like.device().clone(), &bytes, shape, dt)
}

/// Gradient of `conv{ndim}d` with respect to its input, of shape `x_shape`.
pub fn conv_backward_data(
    stream: Option<&Stream>,
    dy: &Tensor,
    w: &Tensor,
    x_shape: &[usize],
    attrs: &ConvAttrs,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("conv_backward_data", ndim)?;
    let op = format!("{}_backward_data", conv_name(ndim, false));
    check_same(&op, dy, w)?;
    float(&op, dy)?;
    let g = conv::conv_geom(&op, x_shape, w.shape(), attrs, ndim)?;
    if dy.shape() != g.y_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the convolution's output has {:?}",
            dy.shape(),
            g.y_shape()
        )));
    }
    let o = output(&op, dy, out, x_shape, dy.dtype())?;
    run_backward_data(&op, stream, &g, dy, w, &o)?;
    Ok(o)
}

fn run_backward_data(
    op: &str,
    stream: Option<&Stream>,
    g: &ConvGeom,
    dy: &Tensor,
    w: &Tensor,
    o: &Tensor,
) -> Result<()> {
    if o.numel() == 0 {
        return Ok(());
    }
    let s = stream_for(op, stream, dy)?;
    if dy.numel() == 0 || w.numel() == 0 {
        return s.device().fill(s.raw(), o.dtype(), o.ptr(), o.numel(), 0.0);
    }
    let ws = workspace(dy, s.device().conv_workspace_size(g, dy.dtype())?)?;
    let (wp, wb) = ws_parts(&ws);
    s.device()
        .conv_backward_data(s.raw(), g, dy.dtype(), dy.ptr(), w.ptr(), o.ptr(), wp, wb)
}

/// Gradients of `conv{ndim}d` with respect to its weight (shape `w_shape`) and, when
/// `with_bias`, its bias.
pub fn conv_backward_weight(
    stream: Option<&Stream>,
    x: &Tensor,
    dy: &Tensor,
    w_shape: &[usize],
    attrs: &ConvAttrs,
    ndim: usize,
    with_bias: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    check_ndim("conv_backward_weight", ndim)?;
    let op = format!("{}_backward_weight", conv_name(ndim, false));
    check_same(&op, x, dy)?;
    float(&op, x)?;
    let g = conv::conv_geom(&op, x.shape(), w_shape, attrs, ndim)?;
    if dy.shape() != g.y_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the convolution's output has {:?}",
            dy.shape(),
            g.y_shape()
        )));
    }
    let dw = Tensor::empty(x.device().clone(), w_shape, x.dtype())?;
    let db = if with_bias {
        Some(Tensor::empty(x.device().clone(), &[g.c_out], x.dtype())?)
    } else {
        None
    };
    run_backward_weight(&op, stream, &g, x, dy, &dw, db.as_ref())?;
    Ok((dw, db))
}

fn run_backward_weight(
    op: &str,
    stream: Option<&Stream>,
    g: &ConvGeom,
    x: &Tensor,
    dy: &Tensor,
    dw: &Tensor,
    db: Option<&Tensor>,
) -> Result<()> {
    let s = stream_for(op, stream, x)?;
    let dev = s.device();
    if dy.numel() == 0 {
        for t in std::iter::once(dw).chain(db) {
            if t.numel() > 0 {
                dev.fill(s.raw(), t.dtype(), t.ptr(), t.numel(), 0.0)?;
            }
        }
        return Ok(());
    }
    if dw.numel() == 0 {
        return Ok(());
    }
    let ws = workspace(x, dev.conv_workspace_size(g, x.dtype())?)?;
    let (wp, wb) = ws_parts(&ws);
    dev.conv_backward_weight(
        s.raw(),
        g,
        x.dtype(),
        x.ptr(),
        dy.ptr(),
        dw.ptr(),
        db.map(|t| t.ptr()),
        wp,
        wb,
    )
}

/// `conv_transpose{ndim}d(x, w, bias)` with `w` `[c_in, c_out / groups, k...]`.
pub fn conv_transpose(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    attrs: &ConvAttrs,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("conv_transpose", ndim)?;
    let op = conv_name(ndim, true);
    check_same(&op, x, w)?;
    float(&op, x)?;
    let g = conv::conv_transpose_geom(&op, x.shape(), w.shape(), attrs, ndim)?;
    check_bias(&op, x, bias, g.c_in)?;
    let o = output(&op, x, out, &g.x_shape(), x.dtype())?;
    if let (Some(b), true) = (bias, x.dtype() != DType::F32 && o.numel() > 0) {
        // f16/bf16: the device rounds the transposed convolution to the dtype before the bias
        // could go in, so run it and add the bias in f32 and round once.
        let s = stream_for(&op, stream, x)?;
        let f32 = |t: &Tensor| crate::runtime::data::cast(Some(&s), t, DType::F32, None);
        let o32 = conv_transpose(
            Some(&s),
            &f32(x)?,
            &f32(w)?,
            Some(&f32(b)?),
            attrs,
            ndim,
            None,
        )?;
        crate::runtime::data::cast(Some(&s), &o32, x.dtype(), Some(&o))?;
        return Ok(o);
    }
    run_backward_data(&op, stream, &g, x, w, &o)?;
    if let (Some(b), true) = (bias, o.numel() > 0) {
        let s = stream_for(&op, stream, x)?;
        let mut bshape = vec![g.c_in];
        bshape.extend(std::iter::repeat_n(1, ndim));
        let (_, layout) = BroadcastLayout::new(&[o.shape(), &bshape])?;
        s.device().binary(
            s.raw(),
            crate::ops::elementwise::BinaryOp::Add,
            o.dtype(),
            o.ptr(),
            b.ptr(),
            o.ptr(),
            &layout,
        )?;
    }
    Ok(o)
}

/// Gradients of `conv_transpose{ndim}d`: `(dx, dw, db)` (db when `with_bias`).
pub fn conv_transpose_backward(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    dy: &Tensor,
    attrs: &ConvAttrs,
    ndim: usize,
    with_bias: bool,
) -> Result<(Tensor, Tensor, Option<Tensor>)> {
    check_ndim("conv_transpose_backward", ndim)?;
    let op = format!("{}_backward", conv_name(ndim, true));
    check_same(&op, x, w)?;
    check_same(&op, x, dy)?;
    float(&op, x)?;
    let g = conv::conv_transpose_geom(&op, x.shape(), w.shape(), attrs, ndim)?;
    if dy.shape() != g.x_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the output has {:?}",
            dy.shape(),
            g.x_shape()
        )));
    }
    // dx = conv(dy, w); dw = conv's weight gradient with the roles of x and dy swapped.
    let dx = Tensor::empty(x.device().clone(), x.shape(), x.dtype())?;
    run_conv_forward(&op, stream, &g, dy, w, None, Activation::None, &dx)?;
    let dw = Tensor::empty(x.device().clone(), w.shape(), x.dtype())?;
    run_backward_weight(&op, stream, &g, dy, x, &dw, None)?;
    let db = if with_bias {
        Some(channel_sums(&op, stream, dy)?)
    } else {
        None
    };
    Ok((dx, dw, db))
}

/// Per-channel sums of an `[n, c, ...]` tensor, through GEMMs with a vector of ones.
fn channel_sums(op: &str, stream: Option<&Stream>, t: &Tensor) -> Result<Tensor> {
    let (n, c) = (t.shape()[0], t.shape()[1]);
    let sp: usize = t.shape()[2..].iter().product();
    let s = stream_for(op, stream, t)?;
    let dev = s.device();
    let out = Tensor::empty(t.device().clone(), &[c], t.dtype())?;
    if c == 0 {
        return Ok(out);
    }
    dev.fill(s.raw(), t.dtype(), out.ptr(), c, 0.0)?;
    if sp == 0 {
        return Ok(out);
    }
    let ones = Tensor::empty(t.device().clone(), &[sp], t.dtype())?;
    dev.fill(s.raw(), t.dtype(), ones.ptr(), sp, 1.0)?;
    // Column-major out (1×c) += ones (1×sp) · t_n (sp×c, ld sp).
    let es = t.dtype().size();
    for i in 0..n {
        dev.gemm(
            s.raw(),
            &GemmDesc {
                dtype: t.dtype(),
                trans_a: Transpose::No,
                trans_b: Transpose::No,
                m: 1,
                n: c,
                k: sp,
                alpha: 1.0,
                a: ones.ptr(),
                lda: 1,
                b: t.ptr().offset(i * c * sp * es),
                ldb: sp,
                beta: 1.0,
                c: out.ptr(),
                ldc: 1,
                batch: 1,
                stride_a: 0,
                stride_b: 0,
                stride_c: 0,
            },
        )?;
    }
    Ok(out)
}

fn pool_name(kind: PoolKind, ndim: usize) -> String {
    format!("{}{ndim}d", kind.name())
}

/// `max_pool{ndim}d` / `avg_pool{ndim}d`.
pub fn pool(
    stream: Option<&Stream>,
    kind: PoolKind,
    x: &Tensor,
    attrs: &PoolAttrs,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("pool", ndim)?;
    let op = pool_name(kind, ndim);
    float(&op, x)?;
    let g = pool::pool_geom(&op, kind, x.shape(), attrs, ndim)?;
    let o = output(&op, x, out, &g.y_shape(), x.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(&op, stream, x)?;
        s.device()
            .pool_forward(s.raw(), &g, x.dtype(), x.ptr(), o.ptr())?;
    }
    Ok(o)
}

/// Gradient of `max_pool{ndim}d` / `avg_pool{ndim}d` with respect to `x`.
pub fn pool_backward(
    stream: Option<&Stream>,
    kind: PoolKind,
    x: &Tensor,
    dy: &Tensor,
    attrs: &PoolAttrs,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("pool_backward", ndim)?;
    let op = format!("{}_backward", pool_name(kind, ndim));
    check_same(&op, x, dy)?;
    float(&op, x)?;
    let g = pool::pool_geom(&op, kind, x.shape(), attrs, ndim)?;
    if dy.shape() != g.y_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the pooling output has {:?}",
            dy.shape(),
            g.y_shape()
        )));
    }
    let o = output(&op, x, out, x.shape(), x.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(&op, stream, x)?;
        s.device()
            .pool_backward(s.raw(), &g, x.dtype(), x.ptr(), dy.ptr(), o.ptr())?;
    }
    Ok(o)
}

/// `adaptive_avg_pool2d(x, output_size)`.
pub fn adaptive_avg_pool2d(
    stream: Option<&Stream>,
    x: &Tensor,
    output_size: [usize; 2],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "adaptive_avg_pool2d";
    float(op, x)?;
    let shape = pool::adaptive_avg_pool2d_shape(op, x.shape(), output_size)?;
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, x)?;
        s.device().adaptive_avg_pool2d_forward(
            s.raw(),
            x.dtype(),
            x.ptr(),
            o.ptr(),
            x.shape()[0] * x.shape()[1],
            [x.shape()[2], x.shape()[3]],
            output_size,
        )?;
    }
    Ok(o)
}

/// Gradient of `adaptive_avg_pool2d` with respect to its input of shape `x_shape`.
pub fn adaptive_avg_pool2d_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "adaptive_avg_pool2d_backward";
    float(op, dy)?;
    if dy.shape().len() != 4 {
        return Err(Error::shape(format!(
            "{op}: grad_output must have 4 dimensions, got {:?}",
            dy.shape()
        )));
    }
    let osz = [dy.shape()[2], dy.shape()[3]];
    let shape = pool::adaptive_avg_pool2d_shape(op, x_shape, osz)?;
    if shape != dy.shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, expected {shape:?}",
            dy.shape()
        )));
    }
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, dy)?;
        s.device().adaptive_avg_pool2d_backward(
            s.raw(),
            dy.dtype(),
            dy.ptr(),
            o.ptr(),
            x_shape[0] * x_shape[1],
            [x_shape[2], x_shape[3]],
            osz,
        )?;
    }
    Ok(o)
}

/// `act(x · W + bias)` over the last dimension of `x` (any leading batch dims). `w_is_nk`:
/// `w` is `[n, k]` (linear, `x·Wᵀ`), else `[k, n]` (matmul).
#[allow(clippy::too_many_arguments)]
fn dense(
    op: &str,
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    w_is_nk: bool,
    bias: Option<&Tensor>,
    act: Activation,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_same(op, x, w)?;
    float(op, x)?;
    if x.shape().is_empty() {
        return Err(Error::shape(format!(
            "{op}: input must have at least 1 dimension"
        )));
    }
    if w.shape().len() != 2 {
        return Err(Error::shape(format!(
            "{op}: weight must be 2-D, got shape {:?}",
            w.shape()
        )));
    }
    let k = *x.shape().last().unwrap();
    let (wk, n) = if w_is_nk {
        (w.shape()[1], w.shape()[0])
    } else {
        (w.shape()[0], w.shape()[1])
    };
    if wk != k {
        return Err(Error::shape(format!(
            "{op}: input {:?} and weight {:?} cannot be multiplied ({k} != {wk})",
            x.shape(),
            w.shape()
        )));
    }
    check_bias(op, x, bias, n)?;
    let mut shape = x.shape().to_vec();
    *shape.last_mut().unwrap() = n;
    let m = x.numel() / k.max(1);
    let m = if k == 0 {
        shape.iter().product::<usize>() / n.max(1)
    } else {
        m
    };
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device().gemm_bias_act(
        s.raw(),
        x.dtype(),
        x.ptr(),
        w.ptr(),
        w_is_nk,
        bias.map(|b| b.ptr()),
        act,
        o.ptr(),
        m,
        k,
        n,
    )?;
    Ok(o)
}

/// `torch.nn.functional.linear(x, w, bias)`: `x · wᵀ + bias`, `x` `[..., k]`, `w` `[n, k]`.
pub fn linear(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    dense("linear", stream, x, w, true, bias, Activation::None, out)
}

/// Fused `act(a · b + bias)`, `a` `[..., k]`, `b` `[k, n]`, `bias` `[n]`: matmul+bias,
/// matmul+bias+relu, matmul+bias+gelu.
pub fn matmul_bias_act(
    stream: Option<&Stream>,
    a: &Tensor,
    b: &Tensor,
    bias: &Tensor,
    act: Activation,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = match act {
        Activation::None => "matmul_bias",
        Activation::Relu => "matmul_bias_relu",
        Activation::Gelu { .. } => "matmul_bias_gelu",
    };
    dense(op, stream, a, b, false, Some(bias), act, out)
}

/// Gradients of `linear`: `(dx, dw, db)` from `x` `[..., k]`, `w` `[n, k]` and `dy` `[..., n]`.
pub fn linear_backward(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    dy: &Tensor,
    with_bias: bool,
) -> Result<(Tensor, Tensor, Option<Tensor>)> {
    let op = "linear_backward";
    check_same(op, x, w)?;
    check_same(op, x, dy)?;
    float(op, x)?;
    if x.shape().is_empty() || w.shape().len() != 2 || w.shape()[1] != *x.shape().last().unwrap() {
        return Err(Error::shape(format!(
            "{op}: input {:?} and weight {:?} do not match",
            x.shape(),
            w.shape()
        )));
    }
    let (n, k) = (w.shape()[0], w.shape()[1]);
    let mut yshape = x.shape().to_vec();
    *yshape.last_mut().unwrap() = n;
    if dy.shape() != yshape {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, expected {yshape:?}",
            dy.shape()
        )));
    }
    let m: usize = x.shape()[..x.shape().len() - 1].iter().product();
    let dev = x.device().clone();
    let dt = x.dtype();
    let dx = Tensor::empty(dev.clone(), x.shape(), dt)?;
    let dw = Tensor::empty(dev.clone(), w.shape(), dt)?;
    let db = if with_bias {
        Some(Tensor::empty(dev.clone(), &[n], dt)?)
    } else {
        None
    };
    let s = stream_for(op, stream, x)?;
    let d = s.device();
    let gd = |ta, tb, mm, nn, kk, a: &Tensor, lda, b: &Tensor, ldb, c: &Tensor, ldc| GemmDesc {
        dtype: dt,
        trans_a: ta,
        trans_b: tb,
        m: mm,
        n: nn,
        k: kk,
        alpha: 1.0,
        a: a.ptr(),
        lda,
        b: b.ptr(),
        ldb,
        beta: 0.0,
        c: c.ptr(),
        ldc,
        batch: 1,
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
    };
    use Transpose::{No, Yes};
    if dx.numel() > 0 {
        // Column-major dxᵀ (k×m) = W (k×n, ld k) · dyᵀ (n×m, ld n).
        d.gemm(
            s.raw(),
            &gd(No, No, k, m, n, w, k.max(1), dy, n.max(1), &dx, k.max(1)),
        )?;
    }
    if dw.numel() > 0 {
        // Column-major dWᵀ (k×n) = xᵀ (k×m, ld k) · dy (m×n, stored n×m ld n, transposed).
        d.gemm(
            s.raw(),
            &gd(No, Yes, k, n, m, x, k.max(1), dy, n.max(1), &dw, k.max(1)),
        )?;
    }
    if let (Some(db), true) = (&db, n > 0) {
        d.sum_rows(s.raw(), dt, dy.ptr(), db.ptr(), m, n)?;
    }
    Ok((dx, dw, db))
}

/// Fused `max(a + b, 0)` with broadcasting.
pub fn add_relu(
    stream: Option<&Stream>,
    a: &Tensor,
    b: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "add_relu";
    check_same(op, a, b)?;
    float(op, a)?;
    let (shape, layout) =
        BroadcastLayout::new(&[a.shape(), b.shape()]).map_err(|e| e.context(op))?;
    let o = output(op, a, out, &shape, a.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, a)?;
        s.device()
            .add_relu(s.raw(), a.dtype(), a.ptr(), b.ptr(), o.ptr(), &layout)?;
    }
    Ok(o)
}

/// Fused `a * b + c` with broadcasting.
pub fn mul_add(
    stream: Option<&Stream>,
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "mul_add";
    check_same(op, a, b)?;
    check_same(op, a, c)?;
    float(op, a)?;
    let (shape, layout) =
        BroadcastLayout::new(&[a.shape(), b.shape(), c.shape()]).map_err(|e| e.context(op))?;
    let o = output(op, a, out, &shape, a.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, a)?;
        s.device().mul_add(
            s.raw(),
            a.dtype(),
            a.ptr(),
            b.ptr(),
            c.ptr(),
            o.ptr(),
            &layout,
        )?;
    }
    Ok(o)
}
