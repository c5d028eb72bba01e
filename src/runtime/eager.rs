//! Eager ops on tensors: validate against the op contract, pick or check the output, and
//! call the device. `out = None` allocates the result; `Some(t)` writes into `t`, which must
//! have the result's shape, dtype and device.

use crate::base::dtype::DType;
use crate::base::shape::{BroadcastLayout, contiguous_strides};
use crate::device::{GemmDesc, Transpose};
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::matmul;
pub use crate::runtime::nn::Grad;
use crate::runtime::stream::Stream;
use crate::runtime::tensor::{Tensor, same_device};
use crate::{Error, Result}; // TEMPORARY

/// The stream to run on: the given one (which must be on the inputs' device) or the
/// device's default stream.
pub(crate) fn stream_for(op: &str, stream: Option<&Stream>, t: &Tensor) -> Result<Stream> {
    match stream {
        Some(s) if !same_device(s.device(), t.device()) => Err(Error::invalid(format!(
            "{op}: the stream is on {} but the tensors are on {}",
            s.device().name(),
            t.device().name()
        ))),
        Some(s) => Ok(Stream::borrowed(s.device().clone(), s.raw())),
        None => Ok(Stream::default_for(t.device().clone())),
    }
}

pub(crate) fn check_same(op: &str, a: &Tensor, b: &Tensor) -> Result<()> {
    if !same_device(a.device(), b.device()) {
        return Err(Error::invalid(format!(
            "{op}: operands are on different devices ({} and {})",
            a.device().name(),
            b.device().name()
        )));
    }
    if a.dtype() != b.dtype() {
        return Err(Error::dtype(format!(
            "{op}: operands have different dtypes ({} and {})",
            a.dtype(),
            b.dtype()
        )));
    }
    Ok(())
}

/// Returns `out` after checking it, or a new tensor of `shape` and `dtype`.
pub fn output(
    op: &str,
    like: &Tensor,
    out: Option<&Tensor>,
    shape: &[usize],
    dtype: DType,
) -> Result<Tensor> {
    match out {
        None => Tensor::empty(like.device().clone(), shape, dtype),
        Some(o) => {
            if !same_device(o.device(), like.device()) {
                return Err(Error::invalid(format!(
                    "{op}: out is on {}, inputs on {}",
                    o.device().name(),
                    like.device().name()
                )));
            }
            if o.shape() != shape {
                return Err(Error::shape(format!(
                    "{op}: out has shape {:?}, the result has {shape:?}",
                    o.shape()
                )));
            }
            if o.dtype() != dtype {
                return Err(Error::dtype(format!(
                    "{op}: out has dtype {}, the result has {dtype}",
                    o.dtype()
                )));
            }
            Ok(o.clone())
        }
    }
}

/// `op(a, b)` with NumPy broadcasting.
pub fn binary(
    stream: Option<&Stream>,
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = op.name();
    check_same(name, a, b)?;
    if a.dtype() == DType::Bool {
        return Err(Error::dtype(format!(
            "{name}: bool tensors are not supported"
        )));
    }
    if op == BinaryOp::Div && a.dtype().is_int() {
        return Err(Error::dtype(format!(
            "{name}: integer tensors are not supported (true division gives floats; cast first)"
        )));
    }
    let (shape, layout) =
        BroadcastLayout::new(&[a.shape(), b.shape()]).map_err(|e| e.context(name))?;
    let o = output(name, a, out, &shape, a.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, a)?;
    s.device()
        .binary(s.raw(), op, a.dtype(), a.ptr(), b.ptr(), o.ptr(), &layout)?;
    Ok(o)
}

/// `op(x)` elementwise.
pub fn unary(
    stream: Option<&Stream>,
    op: UnaryOp,
    x: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = op.name();
    if !x.dtype().is_float() {
        return Err(Error::dtype(format!(
            "{name}: dtype {} is not f32, f16 or bf16",
            x.dtype()
        )));
    }
    let o = output(name, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, x)?;
    s.device()
        .unary(s.raw(), op, x.dtype(), x.ptr(), o.ptr(), x.numel())?;
    Ok(o)
}

/// `torch.matmul(a, b)`: 1-D, 2-D and batched operands with broadcast batch dimensions.
pub fn matmul(
    stream: Option<&Stream>,
    a: &Tensor,
    b: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_same("matmul", a, b)?;
    if !a.dtype().is_float() {
        return Err(Error::dtype(format!(
            "matmul: dtype {} is not f32, f16 or bf16",
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

/// PyTorch's rule for writing into a given output: an op whose output may not alias its
/// inputs fails when the destination shares any byte with an input (INVALID_ARGUMENT,
/// "output overlaps input 'x'"); an elementwise op (`exact_ok`) may write into an input it
/// reads element by element, if the destination is exactly that input (same address, shape
/// and dtype), but not into one it only partly overlaps.
pub fn check_overlap(
    op: &str,
    out: &Tensor,
    inputs: &[(&str, Option<&Tensor>)],
    exact_ok: bool,
) -> Result<()> {
    if out.nbytes() == 0 {
        return Ok(());
    }
    let (o0, o1) = (out.ptr().0, out.ptr().0 + out.nbytes() as u64);
    for (name, t) in inputs {
        let Some(t) = t else { continue };
        if t.nbytes() == 0 || !same_device(t.device(), out.device()) {
            continue;
        }
        let (i0, i1) = (t.ptr().0, t.ptr().0 + t.nbytes() as u64);
        if i0 >= o1 || o0 >= i1 {
            continue;
        }
        let exact = i0 == o0 && t.shape() == out.shape() && t.dtype() == out.dtype();
        if !(exact_ok && exact) {
            return Err(Error::invalid(format!(
                "{op}: output overlaps input '{name}'"
            )));
        }
    }
    Ok(())
}
