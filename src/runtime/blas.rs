//! Eager matrix products on tensors: `matmul` (batched, broadcasting), `linear` and the fused
//! matmul + bias + activation, with linear's backward. Same conventions as
//! [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::base::shape::contiguous_strides;
use crate::device::{GemmDesc, Transpose};
use crate::ops::conv::Activation;
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::matmul;
use crate::runtime::eager::{
    Grad, check_bias, check_same, float_only, floating_only, output, stream_for,
};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::{Error, Result};

/// `torch.matmul(a, b)`: 1-D, 2-D and batched operands with broadcast batch dimensions.
pub fn matmul(
    stream: Option<&Stream>,
    a: &Tensor,
    b: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_same("matmul", a, b)?;
    if !a.dtype().is_floating() {
        return Err(Error::dtype(format!(
            "matmul: dtype {} is not f32, f16, bf16 or f64",
            a.dtype()
        )));
    }
    let p = matmul::plan(a.shape(), b.shape())?;
    let o = output("matmul", a, out, &p.out_shape, a.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for("matmul", stream, a)?;
    let es = a.dtype().size();
    let (m, n, k) = (p.m, p.n, p.k);
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands.
    let desc = |a_off: usize, b_off: usize, c_off: usize, batch, sa, sb| GemmDesc {
        dtype: a.dtype(),
        trans_a: Transpose::No,
        trans_b: Transpose::No,
        m: n,
        n: m,
        k,
        alpha: 1.0,
        a: b.ptr().offset(b_off * es),
        lda: n.max(1),
        b: a.ptr().offset(a_off * es),
        ldb: k.max(1),
        beta: 0.0,
        c: o.ptr().offset(c_off * es),
        ldc: n.max(1),
        batch,
        stride_a: sb,
        stride_b: sa,
        stride_c: m * n,
    };
    let nbatch: usize = p.batch.iter().product();
    let a_full = p.a_batch.iter().product::<usize>() == nbatch && p.a_batch.len() == p.batch.len();
    let b_full = p.b_batch.iter().product::<usize>() == nbatch && p.b_batch.len() == p.batch.len();
    let a_single = p.a_batch.iter().product::<usize>() == 1;
    let b_single = p.b_batch.iter().product::<usize>() == 1;
    if (a_full || a_single) && (b_full || b_single) {
        let sa = if a_single { 0 } else { m * k };
        let sb = if b_single { 0 } else { k * n };
        s.device().gemm(s.raw(), &desc(0, 0, 0, nbatch, sa, sb))?;
    } else {
        // General broadcasting: one GEMM per output batch.
        let sa = pad_strides(&p.a_batch, &p.batch);
        let sb = pad_strides(&p.b_batch, &p.batch);
        for bi in 0..nbatch {
            let (mut oa, mut ob, mut rem) = (0, 0, bi);
            for d in (0..p.batch.len()).rev() {
                let i = rem % p.batch[d];
                rem /= p.batch[d];
                oa += i * sa[d];
                ob += i * sb[d];
            }
            s.device()
                .gemm(s.raw(), &desc(oa * m * k, ob * k * n, bi * m * n, 1, 0, 0))?;
        }
    }
    Ok(o)
}

/// Strides (in matrices) of a batch shape broadcast to `out`.
fn pad_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let cs = contiguous_strides(shape);
    let off = out.len() - shape.len();
    (0..out.len())
        .map(|i| {
            if i < off || shape[i - off] == 1 {
                0
            } else {
                cs[i - off]
            }
        })
        .collect()
}

/// `act(x · W + bias)` over the last dimension of `x` (any leading batch dims). `w_is_nk`:
/// `w` is `[n, k]` (linear, `x·Wᵀ`), else `[k, n]` (matmul).
#[allow(clippy::too_many_arguments)]
pub(crate) fn dense(
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
    floating_only(op, x)?;
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
    if x.dtype() == DType::F64 {
        dense_f64(&s, x, w, w_is_nk, bias, act, &o, [m, k, n])?;
        return Ok(o);
    }
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

/// The f64 dense product: a double GEMM (column-major `oᵀ = op(W) · xᵀ`), then the bias and
/// the activation as f64 elementwise ops in place.
#[allow(clippy::too_many_arguments)]
fn dense_f64(
    s: &Stream,
    x: &Tensor,
    w: &Tensor,
    w_is_nk: bool,
    bias: Option<&Tensor>,
    act: Activation,
    o: &Tensor,
    [m, k, n]: [usize; 3],
) -> Result<()> {
    let (trans_a, lda) = if w_is_nk {
        (Transpose::Yes, k.max(1))
    } else {
        (Transpose::No, n.max(1))
    };
    let desc = GemmDesc {
        dtype: DType::F64,
        trans_a,
        trans_b: Transpose::No,
        m: n,
        n: m,
        k,
        alpha: 1.0,
        a: w.ptr(),
        lda,
        b: x.ptr(),
        ldb: k.max(1),
        beta: 0.0,
        c: o.ptr(),
        ldc: n.max(1),
        batch: 1,
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
    };
    s.device().gemm(s.raw(), &desc)?;
    if let Some(b) = bias {
        crate::runtime::elementwise::binary(Some(s), BinaryOp::Add, o, b, Some(o))?;
    }
    let unary = match act {
        Activation::None => None,
        Activation::Relu => Some(UnaryOp::Relu),
        Activation::Gelu { tanh } => Some(UnaryOp::Gelu { tanh }),
    };
    if let Some(u) = unary {
        crate::runtime::elementwise::unary(Some(s), u, o, Some(o))?;
    }
    Ok(())
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

/// `RB_GPU_NORM_TAIL=1`: [`linear_add_rms_norm`] tries its one pass. Off by default: on an
/// H200 the Llama decode step (rb-bench, torch_anchors_graph.py's shapes) took 1145-1153 us
/// with its 15 norms in the products' last blocks (and the attention's split merges in
/// theirs) against 1090-1092 us with both launched apart (`RB_GPU_LAST_BLOCK=0`), and
/// 1079 us with only the attention's merges in the last block (this default). Every block
/// of the one pass counts itself done on one counter, which a guess (not measured) blames.
static NORM_TAIL: std::sync::LazyLock<bool> =
    std::sync::LazyLock::new(|| std::env::var("RB_GPU_NORM_TAIL").is_ok_and(|v| v == "1"));

/// The executor's [`crate::graph::NodeOp::LinearAddNorm`]: `y = x · wᵀ + r` for one row `x`
/// (as [`linear_group`]'s one product with its residual) and `h = rms_norm(y,
/// normalized_shape, norm_weight, eps)`. With [`NORM_TAIL`] one pass where the device can do
/// it now ([`crate::device::BlasOps::gemv_group_norm`]: inside a GPU's device graph, the
/// results new tensors or `outs` apart from the operands); otherwise, and where it declines,
/// the two ops in order, which check the arguments; the same bits either way.
/// `weights_settled` as [`linear_group_norm`]'s.
#[allow(clippy::too_many_arguments)]
pub fn linear_add_rms_norm(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    r: &Tensor,
    norm_weight: Option<&Tensor>,
    normalized_shape: &[usize],
    eps: f64,
    outs: [Option<&Tensor>; 2],
    weights_settled: bool,
) -> Result<[Tensor; 2]> {
    use crate::device::blas::{GemvNorm, GemvPart};
    const OP: &str = "linear_add_rms_norm";
    let s = stream_for(OP, stream, x)?;
    let dev = s.device();
    let (k, n) = (
        x.shape().last().copied().unwrap_or(0),
        w.shape().first().copied().unwrap_or(0),
    );
    let mut y_shape = x.shape().to_vec();
    if let Some(l) = y_shape.last_mut() {
        *l = n;
    }
    let dt = x.dtype();
    let same = |t: &Tensor| t.dtype() == dt && t.same_device(x.device());
    // Everything exactly as the one pass takes it; anything else goes to the ops below.
    let one_pass = *NORM_TAIL
        && dev.has_gemv_group()
        && dt.is_float()
        && dt != DType::F64
        && k > 0
        && n > 0
        && x.numel() == k
        && w.shape() == [n, k]
        && same(w)
        && r.shape() == y_shape.as_slice()
        && same(r)
        && normalized_shape == [n]
        && norm_weight.is_none_or(|t| t.shape() == [n] && same(t));
    let two_ops = |outs: [Option<&Tensor>; 2]| -> Result<[Tensor; 2]> {
        let y = linear_group_norm(
            Some(&s),
            x,
            None,
            &[w],
            &[Some(r)],
            false,
            &[outs[0]],
            weights_settled,
        )?
        .remove(0);
        let h = crate::runtime::norm::rms_norm(
            Some(&s),
            &y,
            normalized_shape,
            norm_weight,
            eps,
            outs[1],
        )?;
        Ok([y, h])
    };
    // The results into `outs` where given (the executor's planned buffers), neither of them
    // an operand of the pass nor the other.
    let ys = if one_pass {
        let y = crate::runtime::eager::output(OP, x, outs[0], &y_shape, dt)?;
        let h = crate::runtime::eager::output(OP, x, outs[1], &y_shape, dt)?;
        let read = [Some(x), Some(r), norm_weight];
        let apart = y.ptr() != h.ptr()
            && read
                .iter()
                .flatten()
                .all(|t| t.ptr() != y.ptr() && t.ptr() != h.ptr());
        apart.then_some((y, h))
    } else {
        None
    };
    if let Some((y, h)) = ys {
        let part = GemvPart {
            w: w.ptr(),
            rows: n,
            y: y.ptr(),
            residual: Some(r.ptr()),
        };
        let norm = GemvNorm {
            w: norm_weight.map_or(crate::device::DevPtr::NULL, |t| t.ptr()),
            eps,
            out: h.ptr(),
        };
        if dev.gemv_group_norm(s.raw(), dt, x.ptr(), k, &part, &norm)? {
            return Ok([y, h]);
        }
        // declined: the two ops, into the same results
        return two_ops([Some(&y), Some(&h)]);
    }
    two_ops(outs)
}

/// The executor's grouped decode products ([`crate::graph::NodeOp::LinearGroup`]): for
/// weights `ws[i]` `[n_i, k]` that read one `x` `[..., k]` of one row, `x · ws[i]ᵀ +
/// residuals[i]` (a residual of the product's shape, or none); with `glu` (two weights of
/// equal `n`, no residuals) the one result `silu(x · w₀ᵀ) * (x · w₁ᵀ)`. One matrix-vector
/// pass where the device has [`crate::device::BlasOps::gemv_group`] (f32 accumulation, one
/// rounding per output), else the products one by one and their adds / gate as the
/// unfused ops. `outs` (one per result, or empty): tensors to write the results into.
pub fn linear_group(
    stream: Option<&Stream>,
    x: &Tensor,
    ws: &[&Tensor],
    residuals: &[Option<&Tensor>],
    glu: bool,
    outs: &[Option<&Tensor>],
) -> Result<Vec<Tensor>> {
    linear_group_norm(stream, x, None, ws, residuals, glu, outs, false)
}

/// [`linear_group`] of `rms_norm(x, [k], norm.0, norm.1)` where `norm` is given (the
/// executor's norm+group node: a decode step's rms_norm and the products that read it).
/// One pass where the device has [`crate::device::BlasOps::gemv_group`]: the norm's scale
/// applied to each product's f32 sum (the normalized input is not rounded to the element
/// type, where the ops round it once); elsewhere the rms_norm, then the products.
/// `weights_settled`: nothing queued before this call on the stream writes `ws` (the
/// executor's word for a node's constant weights, [`crate::graph::passes::settle_weights`]),
/// so the device may read them before the previous kernel finishes
/// ([`crate::device::BlasOps::gemv_group`]); `false` is always safe.
#[allow(clippy::too_many_arguments)]
pub fn linear_group_norm(
    stream: Option<&Stream>,
    x: &Tensor,
    norm: Option<(Option<&Tensor>, f64)>,
    ws: &[&Tensor],
    residuals: &[Option<&Tensor>],
    glu: bool,
    outs: &[Option<&Tensor>],
    weights_settled: bool,
) -> Result<Vec<Tensor>> {
    use crate::device::blas::{GEMV_GROUP_MAX, GemvInputNorm, GemvPart};
    const OP: &str = "linear_group";
    if ws.is_empty() || ws.len() > GEMV_GROUP_MAX || residuals.len() > ws.len() {
        return Err(Error::invalid(format!(
            "{OP}: 1 to {GEMV_GROUP_MAX} weights and at most one residual each, got {} and {}",
            ws.len(),
            residuals.len()
        )));
    }
    if glu && (ws.len() != 2 || residuals.iter().any(|r| r.is_some())) {
        return Err(Error::invalid(format!(
            "{OP}: the gated product takes two weights and no residual"
        )));
    }
    floating_only(OP, x)?;
    let k = x.shape().last().copied().unwrap_or(0);
    let mut shapes = vec![];
    for w in ws {
        check_same(OP, x, w)?;
        if w.shape().len() != 2 || w.shape()[1] != k || x.shape().is_empty() {
            return Err(Error::shape(format!(
                "{OP}: input {:?} and weight {:?} cannot be multiplied",
                x.shape(),
                w.shape()
            )));
        }
        let mut shape = x.shape().to_vec();
        *shape.last_mut().unwrap() = w.shape()[0];
        shapes.push(shape);
    }
    if glu && ws[0].shape() != ws[1].shape() {
        return Err(Error::shape(format!(
            "{OP}: the gate's weight {:?} and the up weight {:?} differ",
            ws[0].shape(),
            ws[1].shape()
        )));
    }
    for (i, r) in residuals.iter().enumerate() {
        if let Some(r) = r {
            check_same(OP, x, r)?;
            if r.shape() != shapes[i] {
                return Err(Error::shape(format!(
                    "{OP}: residual {:?} for a product of shape {:?}",
                    r.shape(),
                    shapes[i]
                )));
            }
        }
    }
    let n_out = if glu { 1 } else { ws.len() };
    let ys = (0..n_out)
        .map(|i| output(OP, x, outs.get(i).copied().flatten(), &shapes[i], x.dtype()))
        .collect::<Result<Vec<_>>>()?;
    let s = stream_for(OP, stream, x)?;
    let dev = s.device();
    if let Some((Some(nw), _)) = norm {
        check_same(OP, x, nw)?;
        if nw.shape() != [k] {
            return Err(Error::shape(format!(
                "{OP}: norm weight {:?} for rows of {k}",
                nw.shape()
            )));
        }
    }
    let one_row = x.numel() == k && k > 0;
    let no_alias = residuals
        .iter()
        .flatten()
        .chain(std::iter::once(&x))
        .all(|r| ys.iter().all(|y| y.ptr() != r.ptr()));
    if dev.has_gemv_group() && one_row && x.dtype().is_float() && no_alias {
        let parts: Vec<GemvPart> = (0..ws.len())
            .map(|i| GemvPart {
                w: ws[i].ptr(),
                rows: ws[i].shape()[0],
                y: if glu { ys[0].ptr() } else { ys[i].ptr() },
                residual: residuals.get(i).copied().flatten().map(|r| r.ptr()),
            })
            .collect();
        let norm = norm.map(|(w, eps)| GemvInputNorm {
            w: w.map_or(crate::device::DevPtr::NULL, |t| t.ptr()),
            eps,
        });
        dev.gemv_group(
            s.raw(),
            x.dtype(),
            x.ptr(),
            k,
            &parts,
            glu,
            norm,
            weights_settled,
        )?;
        return Ok(ys);
    }
    let normed;
    let x = match norm {
        Some((w, eps)) => {
            normed = crate::runtime::norm::rms_norm(Some(&s), x, &[k], w, eps, None)?;
            &normed
        }
        None => x,
    };
    if glu {
        let g = linear(Some(&s), x, ws[0], None, Some(&ys[0]))?;
        let u = linear(Some(&s), x, ws[1], None, None)?;
        crate::runtime::elementwise::unary(Some(&s), UnaryOp::Silu, &g, Some(&g))?;
        crate::runtime::elementwise::binary(Some(&s), BinaryOp::Mul, &g, &u, Some(&g))?;
        return Ok(ys);
    }
    for (i, y) in ys.iter().enumerate() {
        let add = |p: &Tensor, r: &Tensor| {
            crate::runtime::elementwise::binary(Some(&s), BinaryOp::Add, p, r, Some(y))
        };
        match residuals.get(i).copied().flatten() {
            // the result written over its residual: the product first apart
            Some(r) if r.ptr() == y.ptr() => add(&linear(Some(&s), x, ws[i], None, None)?, r)?,
            Some(r) => add(&linear(Some(&s), x, ws[i], None, Some(y))?, r)?,
            None => linear(Some(&s), x, ws[i], None, Some(y))?,
        };
    }
    Ok(ys)
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

/// Gradients of `linear`: `(dx, dw, db)` from `x` `[..., k]`, `w` `[n, k]` and `dy` `[..., n]`;
/// `dx` only `with_dx` and `db` only `with_bias` (the others are not computed).
pub fn linear_backward(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    dy: &Tensor,
    with_dx: bool,
    with_bias: bool,
) -> Result<(Option<Tensor>, Tensor, Option<Tensor>)> {
    linear_backward_impl(stream, x, w, dy, None, with_dx, with_bias)
}

/// [`linear_backward`] of `dy = relu_backward(h, g)` (`h` the relu's input or output): the
/// executor's fused training-step node ([`crate::graph::NodeOp::LinearBackwardRelu`]). On
/// devices with [`crate::device::BlasOps::has_relu_backward_sum_rows`] one pass writes `dy`
/// and the bias gradient; elsewhere the unfused ops (the same bits).
#[allow(clippy::too_many_arguments)]
pub fn linear_backward_relu(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    h: &Tensor,
    g: &Tensor,
    with_dx: bool,
    with_bias: bool,
) -> Result<(Option<Tensor>, Tensor, Option<Tensor>)> {
    let d = x.device();
    let fused = with_bias && h.dtype() != DType::F64 && d.has_relu_backward_sum_rows();
    if !fused {
        let dy = crate::runtime::elementwise::unary_backward(stream, UnaryOp::Relu, h, g, None)?;
        return linear_backward(stream, x, w, &dy, with_dx, with_bias);
    }
    let op = "linear_backward";
    check_same(op, h, g)?;
    if h.shape() != g.shape() {
        return Err(Error::shape(format!(
            "relu_backward: x {:?} {} and dy {:?} {} differ",
            h.shape(),
            h.dtype(),
            g.shape(),
            g.dtype()
        )));
    }
    linear_backward_impl(stream, x, w, g, Some(h), with_dx, with_bias)
}

/// The body of [`linear_backward`]; with `relu_of`, `dy` is the relu's upstream gradient
/// and the gradient through the relu is made here with the bias gradient.
fn linear_backward_impl(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    dy: &Tensor,
    relu_of: Option<&Tensor>,
    with_dx: bool,
    with_bias: bool,
) -> Result<(Option<Tensor>, Tensor, Option<Tensor>)> {
    let op = "linear_backward";
    check_same(op, x, w)?;
    check_same(op, x, dy)?;
    floating_only(op, x)?;
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
    let dx = if with_dx {
        Some(Tensor::empty(dev.clone(), x.shape(), dt)?)
    } else {
        None
    };
    let dw = Tensor::empty(dev.clone(), w.shape(), dt)?;
    let db = if with_bias {
        Some(Tensor::empty(dev.clone(), &[n], dt)?)
    } else {
        None
    };
    let s = stream_for(op, stream, x)?;
    let d = s.device();
    // Through a relu: dy = relu_backward(h, g) and db in one pass.
    let through;
    let dy = match (relu_of, &db) {
        (Some(h), Some(db)) => {
            through = Tensor::empty(dev.clone(), dy.shape(), dt)?;
            d.relu_backward_sum_rows(
                s.raw(),
                dt,
                h.ptr(),
                dy.ptr(),
                through.ptr(),
                db.ptr(),
                m,
                n,
            )?;
            &through
        }
        _ => dy,
    };
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
    if let Some(dx) = dx.as_ref().filter(|t| t.numel() > 0) {
        // Column-major dxᵀ (k×m) = W (k×n, ld k) · dyᵀ (n×m, ld n).
        d.gemm(
            s.raw(),
            &gd(No, No, k, m, n, w, k.max(1), dy, n.max(1), dx, k.max(1)),
        )?;
    }
    if dw.numel() > 0 {
        // Column-major dWᵀ (k×n) = xᵀ (k×m, ld k) · dy (m×n, stored n×m ld n, transposed).
        d.gemm(
            s.raw(),
            &gd(No, Yes, k, n, m, x, k.max(1), dy, n.max(1), &dw, k.max(1)),
        )?;
    }
    if let (Some(db), true, None) = (&db, n > 0, relu_of) {
        if dt == DType::F64 {
            // The f64 column sums: an f64 reduction over the rows.
            let dy2 = dy.reshape(&[m, n])?;
            crate::runtime::reduce::reduce(
                Some(&s),
                crate::ops::reduce::ReduceOp::Sum,
                &dy2,
                &[0],
                true,
                Some(&db.reshape(&[1, n])?),
            )?;
        } else {
            d.sum_rows(s.raw(), dt, dy.ptr(), db.ptr(), m, n)?;
        }
    }
    Ok((dx, dw, db))
}

/// `t` (rank >= 2) with its last two dimensions swapped, as a new contiguous tensor.
fn transposed_last2(s: &Stream, t: &Tensor) -> Result<Tensor> {
    let nd = t.shape().len();
    let mut perm: Vec<usize> = (0..nd).collect();
    perm.swap(nd - 2, nd - 1);
    let shape: Vec<usize> = perm.iter().map(|&d| t.shape()[d]).collect();
    let o = Tensor::empty(t.device().clone(), &shape, t.dtype())?;
    crate::runtime::data::permute_into(s, t, &perm, &o)?;
    Ok(o)
}

/// `a @ b` written into `dest`, or, when `dest` has fewer elements than the product (the
/// operand was broadcast along batch dimensions), computed into a temporary and summed
/// down to `dest`'s shape.
fn matmul_summed(s: &Stream, a: &Tensor, b: &Tensor, dest: &Tensor) -> Result<()> {
    let full = matmul::plan(a.shape(), b.shape())?.out_shape;
    if full.as_slice() == dest.shape() {
        matmul(Some(s), a, b, Some(dest))?;
    } else {
        let t = matmul(Some(s), a, b, None)?;
        crate::runtime::elementwise::sum_to(s, &t, dest)?;
    }
    Ok(())
}

/// Gradients of `torch.matmul(a, b)`: `[da, db]` (a's and b's shapes) from `dy` (the
/// product's shape), each summed over the batch dimensions its operand was broadcast
/// along; 1-D operands as torch treats them. Either gradient may be skipped.
pub fn matmul_backward(
    stream: Option<&Stream>,
    a: &Tensor,
    b: &Tensor,
    dy: &Tensor,
    grads: [Grad<'_>; 2],
) -> Result<[Option<Tensor>; 2]> {
    let op = "matmul_backward";
    check_same(op, a, b)?;
    check_same(op, a, dy)?;
    if a.dtype() != DType::F64 {
        float_only(op, a)?;
    }
    let p = matmul::plan(a.shape(), b.shape()).map_err(|e| e.context(op))?;
    if dy.shape() != p.out_shape.as_slice() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {:?}, the product has {:?}",
            dy.shape(),
            p.out_shape
        )));
    }
    let da = grads[0].make(op, a, a.shape())?;
    let db = grads[1].make(op, a, b.shape())?;
    let (m, k, n) = (p.m, p.k, p.n);
    let with = |batch: &[usize], r: usize, c: usize| {
        let mut v = batch.to_vec();
        v.extend([r, c]);
        v
    };
    // Every operand as a batch of matrices: a [.., m, k], b [.., k, n], dy [.., m, n].
    let a1 = a.reshape(&with(&p.a_batch, m, k))?;
    let b1 = b.reshape(&with(&p.b_batch, k, n))?;
    let dy1 = dy.reshape(&with(&p.batch, m, n))?;
    let s = stream_for(op, stream, a)?;
    let zero =
        |t: &Tensor| -> Result<()> { s.device().fill(s.raw(), t.dtype(), t.ptr(), t.numel(), 0.0) };
    if let Some(da) = da.as_ref().filter(|t| t.numel() > 0) {
        let da1 = da.reshape(a1.shape())?;
        if dy1.numel() == 0 {
            zero(da)?;
        } else {
            // da = dy · bᵀ, summed over the batch dims a was broadcast along.
            let bt = transposed_last2(&s, &b1)?;
            matmul_summed(&s, &dy1, &bt, &da1)?;
        }
    }
    if let Some(db) = db.as_ref().filter(|t| t.numel() > 0) {
        if dy1.numel() == 0 {
            zero(db)?;
        } else if p.b_batch.is_empty() {
            // b is one matrix: db = aᵀ · dy with a's batch folded into its rows.
            let rows = a1.numel() / k;
            let a2 = a1.reshape(&[rows, k])?;
            let dy2 = dy1.reshape(&[rows, n])?;
            let at = transposed_last2(&s, &a2)?;
            matmul(Some(&s), &at, &dy2, Some(&db.reshape(&[k, n])?))?;
        } else {
            // db = aᵀ · dy, summed over the batch dims b was broadcast along.
            let at = transposed_last2(&s, &a1)?;
            matmul_summed(&s, &at, &dy1, &db.reshape(b1.shape())?)?;
        }
    }
    Ok([da, db])
}
