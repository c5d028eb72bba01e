//! Eager convolution on tensors (PyTorch semantics, NCHW): conv1d/2d/3d (with a fused bias +
//! activation), the inference conv + batch_norm + relu, conv_transpose, and their backward
//! passes. Same conventions as [`crate::runtime::eager`]: `out = None` allocates the result,
//! `Some(t)` writes into `t` after checking it.

use crate::base::dtype::DType;
use crate::base::shape::BroadcastLayout;
use crate::base::shape::contiguous_strides;
use crate::device::{DevPtr, GemmDesc, Transpose};
use crate::ops::conv::{self, Activation, Blocked, ConvAttrs, ConvAttrsEx, ConvGeom, Layout};
use crate::runtime::data::{channels_first_copy, permute_into};
use crate::runtime::eager::{
    check_bias, check_ndim, check_same, float_only, floating_only, output, stream_for,
};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::{Error, ErrorKind, Result};

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
            let bshape: &[usize] = if g.channels_last {
                &[g.c_out]
            } else {
                &[g.c_out, 1, 1, 1][..g.ndim + 1]
            };
            let (_, layout) = BroadcastLayout::new(&[o.shape(), bshape])?;
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
    floating_only(&op, x)?;
    let g = conv::conv_geom(&op, x.shape(), w.shape(), attrs, ndim)?;
    check_bias(&op, x, bias, g.c_out)?;
    let o = output(&op, x, out, &g.y_shape(), x.dtype())?;
    run_conv_forward(&op, stream, &g, x, w, bias, act, &o)?;
    Ok(o)
}

/// A fused residual: on `x`'s device, in its dtype, shaped as the output of `g`.
fn check_residual(op: &str, x: &Tensor, r: &Tensor, y_shape: &[usize]) -> Result<()> {
    check_same(op, x, r)?;
    if r.shape() != y_shape {
        return Err(Error::shape(format!(
            "{op}: the residual has shape {:?}, expected the output's {y_shape:?}",
            r.shape()
        )));
    }
    Ok(())
}

/// `act(conv{ndim}d(x, w, bias) + residual)` (the executor's conv+add(+relu) fusion, a
/// ResNet block's last convolution with its shortcut): in one pass on a device with
/// [`ConvOps::has_conv_residual`](crate::device::ConvOps::has_conv_residual) (f32, the
/// residual added in the convolution's epilogue, as the unfused add rounds it), else the
/// convolution then the add (+ activation) in place.
#[allow(clippy::too_many_arguments)]
pub fn conv_residual(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    residual: &Tensor,
    attrs: &ConvAttrs,
    ndim: usize,
    act: Activation,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("conv", ndim)?;
    let op = conv_name(ndim, false);
    check_same(&op, x, w)?;
    float_only(&op, x)?;
    let g = conv::conv_geom(&op, x.shape(), w.shape(), attrs, ndim)?;
    check_bias(&op, x, bias, g.c_out)?;
    check_residual(&op, x, residual, &g.y_shape())?;
    let o = output(&op, x, out, &g.y_shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(&op, stream, x)?;
    let dev = s.device();
    if dev.has_conv_residual()
        && x.dtype() == DType::F32
        && g.n * g.c_in * g.in_vol() > 0
        && residual.ptr() != o.ptr()
    {
        let ws = workspace(x, dev.conv_workspace_size(&g, x.dtype())?)?;
        let (wp, wb) = ws_parts(&ws);
        dev.conv_forward_residual(
            s.raw(),
            &g,
            x.dtype(),
            x.ptr(),
            w.ptr(),
            bias.map(|b| b.ptr()),
            residual.ptr(),
            act,
            o.ptr(),
            wp,
            wb,
        )?;
        return Ok(o);
    }
    run_conv_forward(&op, stream, &g, x, w, bias, Activation::None, &o)?;
    use crate::ops::elementwise::{BinaryOp, UnaryOp};
    use crate::runtime::elementwise::{add_relu, binary, unary};
    match act {
        Activation::None => binary(stream, BinaryOp::Add, &o, residual, Some(&o))?,
        Activation::Relu => add_relu(stream, &o, residual, Some(&o))?,
        Activation::Gelu { tanh } => {
            binary(stream, BinaryOp::Add, &o, residual, Some(&o))?;
            unary(stream, UnaryOp::Gelu { tanh }, &o, Some(&o))?
        }
    };
    Ok(o)
}

/// How many values the device's packed form of the weights `w` of a convolution of inputs
/// shaped `x_shape` has ([`crate::device::ConvOps::conv_packed_weight_len`]; the executor
/// packs the weights no node writes when it makes a plan at O2+), or None where the device
/// has none for it.
pub fn conv_packed_len(
    stream: Option<&Stream>,
    x_shape: &[usize],
    w: &Tensor,
    attrs: &ConvAttrs,
    ndim: usize,
) -> Result<Option<usize>> {
    let (_, g, s) = packing(stream, x_shape, w, attrs, ndim)?;
    Ok(s.device().conv_packed_weight_len(&g, w.dtype()))
}

/// A packing's op name, geometry and stream (the checks [`conv_packed_len`] and
/// [`conv_pack_weight_into`] share).
fn packing(
    stream: Option<&Stream>,
    x_shape: &[usize],
    w: &Tensor,
    attrs: &ConvAttrs,
    ndim: usize,
) -> Result<(String, conv::ConvGeom, Stream)> {
    check_ndim("conv", ndim)?;
    let op = conv_name(ndim, false);
    let g = conv::conv_geom(&op, x_shape, w.shape(), attrs, ndim)?;
    let s = stream_for(&op, stream, w)?;
    Ok((op, g, s))
}

/// Writes the packed form of `w` ([`crate::device::ConvOps::conv_pack_weight`]) into `out`, a
/// tensor of [`conv_packed_len`] values of `w`'s dtype on its device (the executor's: a view
/// into one buffer holding every convolution's packed weights).
pub fn conv_pack_weight_into(
    stream: Option<&Stream>,
    x_shape: &[usize],
    w: &Tensor,
    attrs: &ConvAttrs,
    ndim: usize,
    out: &Tensor,
) -> Result<()> {
    let (op, g, s) = packing(stream, x_shape, w, attrs, ndim)?;
    let dev = s.device();
    let Some(len) = dev.conv_packed_weight_len(&g, w.dtype()) else {
        return Err(Error::unsupported(format!(
            "{op}: this device has no packed weight form for this convolution"
        )));
    };
    check_same(&op, w, out)?;
    if out.numel() != len || out.dtype() != w.dtype() {
        return Err(Error::invalid(format!(
            "{op}: the packed weights take {len} {:?} values, not a {:?} tensor of {}",
            w.dtype(),
            out.dtype(),
            out.numel()
        )));
    }
    dev.conv_pack_weight(s.raw(), &g, w.dtype(), w.ptr(), out.ptr())
}

/// `act(conv{ndim}d(x, w, bias) (+ residual))` over `packed`, [`conv_pack_weight_into`]'s form
/// of weights shaped `w_shape` for inputs shaped `x_shape` (which `x` must have: the packed
/// layout depends on the geometry). `layout`: which of x and the output (with the
/// residual) are in the blocked layout ([`conv::blocked_shape`] of the NCHW shape; the
/// device must take it: [`crate::device::ConvOps::conv_packed_layout`]).
#[allow(clippy::too_many_arguments)]
pub fn conv_forward_packed(
    stream: Option<&Stream>,
    x: &Tensor,
    x_shape: &[usize],
    w_shape: &[usize],
    packed: &Tensor,
    bias: Option<&Tensor>,
    residual: Option<&Tensor>,
    attrs: &ConvAttrs,
    ndim: usize,
    act: Activation,
    out: Option<&Tensor>,
    layout: Blocked,
) -> Result<Tensor> {
    check_ndim("conv", ndim)?;
    let op = conv_name(ndim, false);
    check_same(&op, x, packed)?;
    float_only(&op, x)?;
    let as_laid = |shape: &[usize], blocked: bool| {
        if blocked && shape.len() >= 3 && shape[1].is_multiple_of(conv::BLOCK_LANES) {
            conv::blocked_shape(shape)
        } else {
            shape.to_vec()
        }
    };
    if x.shape() != as_laid(x_shape, layout.x) {
        return Err(Error::shape(format!(
            "{op}: input of shape {:?}, but the weights were packed for {x_shape:?} ({})",
            x.shape(),
            if layout.x { "blocked" } else { "NCHW" }
        )));
    }
    let g = conv::conv_geom(&op, x_shape, w_shape, attrs, ndim)?;
    check_bias(&op, x, bias, g.c_out)?;
    let y_shape = as_laid(&g.y_shape(), layout.y);
    if let Some(r) = residual {
        check_residual(&op, x, r, &y_shape)?;
    }
    let s = stream_for(&op, stream, x)?;
    let dev = s.device();
    if dev.conv_packed_weight_len(&g, x.dtype()) != Some(packed.numel()) {
        return Err(Error::invalid(format!(
            "{op}: {} packed weight values do not fit this convolution on this device",
            packed.numel()
        )));
    }
    if !dev.conv_packed_layout(&g, x.dtype(), layout) {
        return Err(Error::unsupported(format!(
            "{op}: this device does not take layout {layout:?} for this convolution"
        )));
    }
    let o = output(&op, x, out, &y_shape, x.dtype())?;
    if residual.is_some_and(|r| r.ptr() == o.ptr()) {
        return Err(Error::invalid(format!(
            "{op}: the residual must not be the output"
        )));
    }
    if o.numel() > 0 {
        dev.conv_forward_packed(
            s.raw(),
            &g,
            x.dtype(),
            x.ptr(),
            packed.ptr(),
            bias.map(|b| b.ptr()),
            residual.map(|r| r.ptr()),
            act,
            o.ptr(),
            layout,
        )?;
    }
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
    float_only(op, x)?;
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

/// A tensor of `like`'s dtype and device holding `v` (each value rounded once).
pub fn from_f64(like: &Tensor, v: &[f64], shape: &[usize]) -> Result<Tensor> {
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
    floating_only(&op, dy)?;
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
    floating_only(&op, x)?;
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
    floating_only(&op, x)?;
    let g = conv::conv_transpose_geom(&op, x.shape(), w.shape(), attrs, ndim)?;
    check_bias(&op, x, bias, g.c_in)?;
    let o = output(&op, x, out, &g.x_shape(), x.dtype())?;
    if let (Some(b), true) = (
        bias,
        matches!(x.dtype(), DType::F16 | DType::BF16) && o.numel() > 0,
    ) {
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
    floating_only(&op, x)?;
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

/// Gradient of `conv_transpose{ndim}d` (no bias) with respect to its input `x` of
/// `x_shape`, from `dy` (the transposed convolution's output shape) and `w`
/// `[c_in, c_out / groups, k...]`: the forward convolution of `dy` with `w`.
pub fn conv_transpose_backward_data(
    stream: Option<&Stream>,
    dy: &Tensor,
    w: &Tensor,
    x_shape: &[usize],
    attrs: &ConvAttrs,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("conv_transpose_backward_data", ndim)?;
    let op = format!("{}_backward_data", conv_name(ndim, true));
    check_same(&op, dy, w)?;
    floating_only(&op, dy)?;
    let g = conv::conv_transpose_geom(&op, x_shape, w.shape(), attrs, ndim)?;
    if dy.shape() != g.x_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the transposed convolution's output has {:?}",
            dy.shape(),
            g.x_shape()
        )));
    }
    let o = output(&op, dy, out, x_shape, dy.dtype())?;
    run_conv_forward(&op, stream, &g, dy, w, None, Activation::None, &o)?;
    Ok(o)
}

/// Gradients of `conv_transpose{ndim}d` with respect to its weight (shape `w_shape`,
/// `[c_in, c_out / groups, k...]`) and, when `with_bias`, its bias (`[c_out]`), from the
/// input `x` and `dy`.
pub fn conv_transpose_backward_weight(
    stream: Option<&Stream>,
    x: &Tensor,
    dy: &Tensor,
    w_shape: &[usize],
    attrs: &ConvAttrs,
    ndim: usize,
    with_bias: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    check_ndim("conv_transpose_backward_weight", ndim)?;
    let op = format!("{}_backward_weight", conv_name(ndim, true));
    check_same(&op, x, dy)?;
    floating_only(&op, x)?;
    let g = conv::conv_transpose_geom(&op, x.shape(), w_shape, attrs, ndim)?;
    if dy.shape() != g.x_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the transposed convolution's output has {:?}",
            dy.shape(),
            g.x_shape()
        )));
    }
    // The weight gradient of the convolution whose data gradient this op is, with the
    // roles of x and dy swapped.
    let dw = Tensor::empty(x.device().clone(), w_shape, x.dtype())?;
    run_backward_weight(&op, stream, &g, dy, x, &dw, None)?;
    let db = if with_bias {
        Some(channel_sums(&op, stream, dy)?)
    } else {
        None
    };
    Ok((dw, db))
}

/// `x` (`[n, c, sp...]`) with `before + sp + after` spatial extents.
fn padded_shape(x: &[usize], before: &[usize; 3], after: &[usize; 3]) -> Vec<usize> {
    let nd = x.len() - 2;
    let mut shape = x.to_vec();
    for d in 0..nd {
        shape[2 + d] += before[3 - nd + d] + after[3 - nd + d];
    }
    shape
}

/// `x` `[n, c, sp...]` copied into a zero-filled `[n, c, before + sp + after...]` (3-entry
/// padding arrays, the last `ndim` used).
fn pad_spatial(s: &Stream, x: &Tensor, before: &[usize; 3], after: &[usize; 3]) -> Result<Tensor> {
    let nd = x.shape().len() - 2;
    let shape = padded_shape(x.shape(), before, after);
    let xp = Tensor::empty(x.device().clone(), &shape, x.dtype())?;
    if xp.numel() == 0 {
        return Ok(xp);
    }
    let dev = s.device();
    dev.fill(s.raw(), xp.dtype(), xp.ptr(), xp.numel(), 0.0)?;
    if x.numel() > 0 {
        let ps = contiguous_strides(&shape);
        let off: usize = (0..nd).map(|d| before[3 - nd + d] * ps[2 + d]).sum();
        let es = x.dtype().size();
        dev.copy_strided(
            s.raw(),
            es,
            x.ptr(),
            &contiguous_strides(x.shape()),
            xp.ptr().offset(off * es),
            &ps,
            x.shape(),
        )?;
    }
    Ok(xp)
}

/// The inverse of [`pad_spatial`]: the interior of `xp` into `out`.
fn crop_spatial(s: &Stream, xp: &Tensor, before: &[usize; 3], out: &Tensor) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let nd = out.shape().len() - 2;
    let ps = contiguous_strides(xp.shape());
    let off: usize = (0..nd).map(|d| before[3 - nd + d] * ps[2 + d]).sum();
    let es = out.dtype().size();
    s.device().copy_strided(
        s.raw(),
        es,
        xp.ptr().offset(off * es),
        &ps,
        out.ptr(),
        &contiguous_strides(out.shape()),
        out.shape(),
    )
}

/// The symmetric part of per-side padding (the smaller side per dim) and what each side
/// has beyond it.
fn split_padding(
    attrs: &ConvAttrs,
    before: [usize; 3],
    after: [usize; 3],
    ndim: usize,
) -> (ConvAttrs, [usize; 3], [usize; 3]) {
    let sym: [usize; 3] = std::array::from_fn(|d| before[d].min(after[d]));
    let eb: [usize; 3] = std::array::from_fn(|d| before[d] - sym[d]);
    let ea: [usize; 3] = std::array::from_fn(|d| after[d] - sym[d]);
    let attrs = ConvAttrs {
        padding: sym[3 - ndim..].to_vec(),
        ..attrs.clone()
    };
    (attrs, eb, ea)
}

fn check_x_rank(op: &str, x: &[usize], ndim: usize) -> Result<()> {
    if x.len() != ndim + 2 {
        return Err(Error::shape(format!(
            "{op}: input must have {} dimensions (N, C, {} spatial), got shape {x:?}",
            ndim + 2,
            ndim
        )));
    }
    Ok(())
}

/// [`conv`] with padding per side (`ex.attrs.padding` before, `ex.pad_after` after each
/// spatial dim): [`conv`] itself when they are equal; otherwise the input is zero-padded by
/// the difference and convolved with the symmetric rest (exactly PyTorch's
/// `F.conv{n}d(F.pad(x, pads), w, padding=0)` up to the split).
#[allow(clippy::too_many_arguments)]
pub fn conv_ex(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    ex: &ConvAttrsEx,
    ndim: usize,
    act: Activation,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("conv_ex", ndim)?;
    let op = conv_name(ndim, false);
    if ex.layout == Layout::ChannelsLast {
        return conv_ex_channels_last(stream, x, w, bias, ex, ndim, act, out);
    }
    let Some((before, after)) = ex.asymmetric(&op, ndim)? else {
        return conv(stream, x, w, bias, &ex.attrs, ndim, act, out);
    };
    check_same(&op, x, w)?;
    floating_only(&op, x)?;
    check_x_rank(&op, x.shape(), ndim)?;
    let (attrs, eb, ea) = split_padding(&ex.attrs, before, after, ndim);
    // Validate everything (and the destination) before any work.
    let g = conv::conv_geom(
        &op,
        &padded_shape(x.shape(), &eb, &ea),
        w.shape(),
        &attrs,
        ndim,
    )?;
    check_bias(&op, x, bias, g.c_out)?;
    let o = output(&op, x, out, &g.y_shape(), x.dtype())?;
    let s = stream_for(&op, stream, x)?;
    let xp = pad_spatial(&s, x, &eb, &ea)?;
    conv(Some(&s), &xp, w, bias, &attrs, ndim, act, Some(&o))
}

/// Gradient of [`conv_ex`] with respect to its input of shape `x_shape`.
pub fn conv_ex_backward_data(
    stream: Option<&Stream>,
    dy: &Tensor,
    w: &Tensor,
    x_shape: &[usize],
    ex: &ConvAttrsEx,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("conv_ex_backward_data", ndim)?;
    let op = format!("{}_backward_data", conv_name(ndim, false));
    if ex.layout == Layout::ChannelsLast {
        check_same(&op, dy, w)?;
        check_x_rank(&op, x_shape, ndim)?;
        check_x_rank(&op, dy.shape(), ndim)?;
        check_w_rank(&op, w.shape(), ndim)?;
        let o = output(&op, dy, out, x_shape, dy.dtype())?;
        let s = stream_for(&op, stream, dy)?;
        let first = first_attrs(ex);
        if let Some(g) =
            channels_last_grad_geom(&op, &s, &first, (x_shape, w.shape()), dy, dy, ndim)?
            && library_took(run_backward_data(&op, Some(&s), &g, dy, w, &o))?
        {
            return Ok(o);
        }
        let dyf = channels_first_copy(&s, dy)?;
        let wf = channels_first_copy(&s, w)?;
        let dxf = conv_ex_backward_data(
            Some(&s),
            &dyf,
            &wf,
            &Layout::first_shape(x_shape),
            &first,
            ndim,
            None,
        )?;
        permute_into(&s, &dxf, &Layout::to_last_perm(ndim + 2), &o)?;
        return Ok(o);
    }
    let Some((before, after)) = ex.asymmetric(&op, ndim)? else {
        return conv_backward_data(stream, dy, w, x_shape, &ex.attrs, ndim, out);
    };
    check_same(&op, dy, w)?;
    floating_only(&op, dy)?;
    check_x_rank(&op, x_shape, ndim)?;
    let (attrs, eb, ea) = split_padding(&ex.attrs, before, after, ndim);
    let padded = padded_shape(x_shape, &eb, &ea);
    // Validate everything (and the destination) before any work.
    let g = conv::conv_geom(&op, &padded, w.shape(), &attrs, ndim)?;
    if dy.shape() != g.y_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the convolution's output has {:?}",
            dy.shape(),
            g.y_shape()
        )));
    }
    let o = output(&op, dy, out, x_shape, dy.dtype())?;
    let s = stream_for(&op, stream, dy)?;
    let dxp = conv_backward_data(Some(&s), dy, w, &padded, &attrs, ndim, None)?;
    crop_spatial(&s, &dxp, &eb, &o)?;
    Ok(o)
}

/// Gradients of [`conv_ex`] with respect to its weight (shape `w_shape`) and, when
/// `with_bias`, its bias.
pub fn conv_ex_backward_weight(
    stream: Option<&Stream>,
    x: &Tensor,
    dy: &Tensor,
    w_shape: &[usize],
    ex: &ConvAttrsEx,
    ndim: usize,
    with_bias: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    check_ndim("conv_ex_backward_weight", ndim)?;
    let op = format!("{}_backward_weight", conv_name(ndim, false));
    if ex.layout == Layout::ChannelsLast {
        check_same(&op, x, dy)?;
        check_x_rank(&op, x.shape(), ndim)?;
        check_x_rank(&op, dy.shape(), ndim)?;
        check_w_rank(&op, w_shape, ndim)?;
        let s = stream_for(&op, stream, x)?;
        let first = first_attrs(ex);
        if let Some(g) =
            channels_last_grad_geom(&op, &s, &first, (x.shape(), w_shape), x, dy, ndim)?
        {
            let dw = Tensor::empty(x.device().clone(), w_shape, x.dtype())?;
            let db = if with_bias {
                Some(Tensor::empty(x.device().clone(), &[g.c_out], x.dtype())?)
            } else {
                None
            };
            if library_took(run_backward_weight(
                &op,
                Some(&s),
                &g,
                x,
                dy,
                &dw,
                db.as_ref(),
            ))? {
                return Ok((dw, db));
            }
        }
        let xf = channels_first_copy(&s, x)?;
        let dyf = channels_first_copy(&s, dy)?;
        let (dwf, db) = conv_ex_backward_weight(
            Some(&s),
            &xf,
            &dyf,
            &Layout::first_shape(w_shape),
            &first,
            ndim,
            with_bias,
        )?;
        let dw = Tensor::empty(x.device().clone(), w_shape, x.dtype())?;
        permute_into(&s, &dwf, &Layout::to_last_perm(ndim + 2), &dw)?;
        return Ok((dw, db));
    }
    let Some((before, after)) = ex.asymmetric(&op, ndim)? else {
        return conv_backward_weight(stream, x, dy, w_shape, &ex.attrs, ndim, with_bias);
    };
    check_same(&op, x, dy)?;
    floating_only(&op, x)?;
    check_x_rank(&op, x.shape(), ndim)?;
    let (attrs, eb, ea) = split_padding(&ex.attrs, before, after, ndim);
    let g = conv::conv_geom(
        &op,
        &padded_shape(x.shape(), &eb, &ea),
        w_shape,
        &attrs,
        ndim,
    )?;
    if dy.shape() != g.y_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the convolution's output has {:?}",
            dy.shape(),
            g.y_shape()
        )));
    }
    let s = stream_for(&op, stream, x)?;
    let xp = pad_spatial(&s, x, &eb, &ea)?;
    conv_backward_weight(Some(&s), &xp, dy, w_shape, &attrs, ndim, with_bias)
}

fn check_w_rank(op: &str, w: &[usize], ndim: usize) -> Result<()> {
    if w.len() != ndim + 2 {
        return Err(Error::shape(format!(
            "{op}: weight must have {} dimensions, got shape {w:?}",
            ndim + 2
        )));
    }
    Ok(())
}

/// The channels-last geometry of `g` when the stream's device convolves channels-last
/// tensors itself (cuDNN / MIOpen descriptors) and the padding is symmetric; None: convert.
fn native_channels_last(
    s: &Stream,
    first: &ConvAttrsEx,
    g: &ConvGeom,
    ndim: usize,
) -> Result<Option<ConvGeom>> {
    if !takes_channels_last("conv", s, first, ndim)? {
        return Ok(None);
    }
    Ok(Some(ConvGeom {
        channels_last: true,
        ..*g
    }))
}

/// Whether a channels-last library call ran: a problem the DNN library refuses in
/// channels-last (a vendor or unsupported status: cuDNN's legacy backward data has no
/// engine for some channels-last filters) answers false, and the caller converts around
/// the channels-first call instead; other errors are errors.
fn library_took(r: Result<()>) -> Result<bool> {
    match r {
        Ok(()) => Ok(true),
        Err(e) if matches!(e.kind, ErrorKind::Vendor | ErrorKind::Unsupported) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether the device runs this convolution on channels-last memory itself: symmetric
/// padding and a library that takes channels-last descriptors.
fn takes_channels_last(op: &str, s: &Stream, first: &ConvAttrsEx, ndim: usize) -> Result<bool> {
    Ok(first.asymmetric(op, ndim)?.is_none() && s.device().has_channels_last_conv())
}

/// The channels-last geometry of a convolution gradient (`x_shape`, `w_shape` channels-last)
/// when the device runs it natively ([`takes_channels_last`]): `data` must be floating and
/// `dy` the convolution's output shape. None: the caller converts around the channels-first
/// call.
#[allow(clippy::too_many_arguments)]
fn channels_last_grad_geom(
    op: &str,
    s: &Stream,
    first: &ConvAttrsEx,
    (x_shape, w_shape): (&[usize], &[usize]),
    data: &Tensor,
    dy: &Tensor,
    ndim: usize,
) -> Result<Option<ConvGeom>> {
    if !takes_channels_last(op, s, first, ndim)? {
        return Ok(None);
    }
    floating_only(op, data)?;
    let g = ConvGeom {
        channels_last: true,
        ..conv::conv_geom(
            op,
            &Layout::first_shape(x_shape),
            &Layout::first_shape(w_shape),
            &first.attrs,
            ndim,
        )?
    };
    if Layout::first_shape(dy.shape()) != g.y_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the convolution's output has {:?}",
            dy.shape(),
            Layout::last_shape(&g.y_shape())
        )));
    }
    Ok(Some(g))
}

/// `ex` with the channels-first layout.
fn first_attrs(ex: &ConvAttrsEx) -> ConvAttrsEx {
    ConvAttrsEx {
        layout: Layout::ChannelsFirst,
        ..ex.clone()
    }
}

/// A channels-last [`conv_ex`] (`x` `[N, ..., C]`, `w` `[K, ..., C / groups]`, the output
/// `[N, ..., K]`): on a device whose DNN library takes channels-last descriptors (GPUs)
/// with symmetric padding, one library call on the caller's tensors; elsewhere the
/// channels-first convolution between two layout conversions (the library's tiled
/// transposes). Everything is validated before any work.
#[allow(clippy::too_many_arguments)]
fn conv_ex_channels_last(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    ex: &ConvAttrsEx,
    ndim: usize,
    act: Activation,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = conv_name(ndim, false);
    check_same(&op, x, w)?;
    floating_only(&op, x)?;
    check_x_rank(&op, x.shape(), ndim)?;
    check_w_rank(&op, w.shape(), ndim)?;
    let first = first_attrs(ex);
    let (xs, ws) = (
        Layout::first_shape(x.shape()),
        Layout::first_shape(w.shape()),
    );
    let g = match first.asymmetric(&op, ndim)? {
        None => conv::conv_geom(&op, &xs, &ws, &first.attrs, ndim)?,
        Some((before, after)) => {
            let (attrs, eb, ea) = split_padding(&first.attrs, before, after, ndim);
            conv::conv_geom(&op, &padded_shape(&xs, &eb, &ea), &ws, &attrs, ndim)?
        }
    };
    check_bias(&op, x, bias, g.c_out)?;
    let o = output(&op, x, out, &Layout::last_shape(&g.y_shape()), x.dtype())?;
    let s = stream_for(&op, stream, x)?;
    if let Some(gl) = native_channels_last(&s, &first, &g, ndim)?
        && library_took(run_conv_forward(&op, Some(&s), &gl, x, w, bias, act, &o))?
    {
        return Ok(o);
    }
    let xf = channels_first_copy(&s, x)?;
    let wf = channels_first_copy(&s, w)?;
    let yf = conv_ex(Some(&s), &xf, &wf, bias, &first, ndim, act, None)?;
    permute_into(&s, &yf, &Layout::to_last_perm(ndim + 2), &o)?;
    Ok(o)
}

/// Refuses per-side padding for a transposed convolution (PyTorch's `conv_transpose*d`
/// pads both sides alike).
fn transpose_symmetric(op: &str, ex: &ConvAttrsEx, ndim: usize) -> Result<()> {
    if let Some((before, after)) = ex.asymmetric(op, ndim)? {
        return Err(Error::invalid(format!(
            "{op}: padding before {:?} and after {:?} differ; a transposed convolution pads \
             both sides alike",
            &before[3 - ndim..],
            &after[3 - ndim..]
        )));
    }
    Ok(())
}

/// The channels-first geometry of a channels-last transposed convolution (`x` and `w`
/// channels-last shapes: `x` `[N, ..., C]`, `w` `[C, k..., K / groups]`).
fn transpose_geom_last(
    op: &str,
    x_shape: &[usize],
    w_shape: &[usize],
    ex: &ConvAttrsEx,
    ndim: usize,
) -> Result<ConvGeom> {
    check_x_rank(op, x_shape, ndim)?;
    check_w_rank(op, w_shape, ndim)?;
    conv::conv_transpose_geom(
        op,
        &Layout::first_shape(x_shape),
        &Layout::first_shape(w_shape),
        &ex.attrs,
        ndim,
    )
}

/// [`conv_transpose`] with an `rb_conv_params_ex` (`rb_conv_transpose_ex`): the layout
/// choice of [`conv_ex`]. Channels-last (`x` `[N, ..., C]`, `w` `[C, k..., K / groups]`
/// (PyTorch's channels_last weight of `[C, K / groups, k...]`), the output `[N, ..., K]`):
/// on a device whose DNN library takes channels-last descriptors, one library call on the
/// caller's tensors (the backward-data convolution, as channels-first) and the bias added
/// over the last dim; elsewhere, and for f16/bf16 with a bias, the channels-first op between
/// two layout conversions. The padding must be equal on both sides (`pad_after` =
/// `pad_before`); `output_padding` is used.
pub fn conv_transpose_ex(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    ex: &ConvAttrsEx,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("conv_transpose_ex", ndim)?;
    let op = conv_name(ndim, true);
    transpose_symmetric(&op, ex, ndim)?;
    if ex.layout == Layout::ChannelsFirst {
        return conv_transpose(stream, x, w, bias, &ex.attrs, ndim, out);
    }
    check_same(&op, x, w)?;
    floating_only(&op, x)?;
    let g = transpose_geom_last(&op, x.shape(), w.shape(), ex, ndim)?;
    check_bias(&op, x, bias, g.c_in)?;
    let o = output(&op, x, out, &Layout::last_shape(&g.x_shape()), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(&op, stream, x)?;
    let first = first_attrs(ex);
    if (bias.is_none() || x.dtype() == DType::F32)
        && let Some(gl) = native_channels_last(&s, &first, &g, ndim)?
        && library_took(run_backward_data(&op, Some(&s), &gl, x, w, &o))?
    {
        if let Some(b) = bias {
            let (_, layout) = BroadcastLayout::new(&[o.shape(), &[g.c_in]])?;
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
        return Ok(o);
    }
    let xf = channels_first_copy(&s, x)?;
    let wf = channels_first_copy(&s, w)?;
    let yf = conv_transpose(Some(&s), &xf, &wf, bias, &ex.attrs, ndim, None)?;
    permute_into(&s, &yf, &Layout::to_last_perm(ndim + 2), &o)?;
    Ok(o)
}

/// Gradient of [`conv_transpose_ex`] (no bias) with respect to its input of `x_shape`
/// (in `ex.layout`): the forward convolution of `dy` with `w`, channels-last natively
/// where the device takes it, else converted around the channels-first op.
pub fn conv_transpose_ex_backward_data(
    stream: Option<&Stream>,
    dy: &Tensor,
    w: &Tensor,
    x_shape: &[usize],
    ex: &ConvAttrsEx,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("conv_transpose_ex_backward_data", ndim)?;
    let op = format!("{}_backward_data", conv_name(ndim, true));
    transpose_symmetric(&op, ex, ndim)?;
    if ex.layout == Layout::ChannelsFirst {
        return conv_transpose_backward_data(stream, dy, w, x_shape, &ex.attrs, ndim, out);
    }
    check_same(&op, dy, w)?;
    floating_only(&op, dy)?;
    let g = transpose_geom_last(&op, x_shape, w.shape(), ex, ndim)?;
    if Layout::first_shape(dy.shape()) != g.x_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the transposed convolution's output has {:?}",
            dy.shape(),
            Layout::last_shape(&g.x_shape())
        )));
    }
    let o = output(&op, dy, out, x_shape, dy.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(&op, stream, dy)?;
    let first = first_attrs(ex);
    if let Some(gl) = native_channels_last(&s, &first, &g, ndim)?
        && library_took(run_conv_forward(
            &op,
            Some(&s),
            &gl,
            dy,
            w,
            None,
            Activation::None,
            &o,
        ))?
    {
        return Ok(o);
    }
    let dyf = channels_first_copy(&s, dy)?;
    let wf = channels_first_copy(&s, w)?;
    let dxf = conv_transpose_backward_data(
        Some(&s),
        &dyf,
        &wf,
        &Layout::first_shape(x_shape),
        &ex.attrs,
        ndim,
        None,
    )?;
    permute_into(&s, &dxf, &Layout::to_last_perm(ndim + 2), &o)?;
    Ok(o)
}

/// Gradients of [`conv_transpose_ex`] with respect to its weight (shape `w_shape`, in
/// `ex.layout`) and, when `with_bias`, its bias (`[K]`).
pub fn conv_transpose_ex_backward_weight(
    stream: Option<&Stream>,
    x: &Tensor,
    dy: &Tensor,
    w_shape: &[usize],
    ex: &ConvAttrsEx,
    ndim: usize,
    with_bias: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    check_ndim("conv_transpose_ex_backward_weight", ndim)?;
    let op = format!("{}_backward_weight", conv_name(ndim, true));
    transpose_symmetric(&op, ex, ndim)?;
    if ex.layout == Layout::ChannelsFirst {
        return conv_transpose_backward_weight(stream, x, dy, w_shape, &ex.attrs, ndim, with_bias);
    }
    check_same(&op, x, dy)?;
    floating_only(&op, x)?;
    let g = transpose_geom_last(&op, x.shape(), w_shape, ex, ndim)?;
    if Layout::first_shape(dy.shape()) != g.x_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the transposed convolution's output has {:?}",
            dy.shape(),
            Layout::last_shape(&g.x_shape())
        )));
    }
    let s = stream_for(&op, stream, x)?;
    let db = if with_bias {
        // Sums over every dim but the last (the channels).
        let dims: Vec<i64> = (0..=ndim as i64).collect();
        Some(crate::runtime::reduce::reduce(
            Some(&s),
            crate::ops::reduce::ReduceOp::Sum,
            dy,
            &dims,
            false,
            None,
        )?)
    } else {
        None
    };
    let first = first_attrs(ex);
    if let Some(gl) = native_channels_last(&s, &first, &g, ndim)? {
        let dw = Tensor::empty(x.device().clone(), w_shape, x.dtype())?;
        // The weight gradient of the convolution whose data gradient this op is: the roles
        // of x and dy swapped.
        if library_took(run_backward_weight(&op, Some(&s), &gl, dy, x, &dw, None))? {
            return Ok((dw, db));
        }
    }
    let xf = channels_first_copy(&s, x)?;
    let dyf = channels_first_copy(&s, dy)?;
    let (dwf, _) = conv_transpose_backward_weight(
        Some(&s),
        &xf,
        &dyf,
        &Layout::first_shape(w_shape),
        &ex.attrs,
        ndim,
        false,
    )?;
    let dw = Tensor::empty(x.device().clone(), w_shape, x.dtype())?;
    permute_into(&s, &dwf, &Layout::to_last_perm(ndim + 2), &dw)?;
    Ok((dw, db))
}
