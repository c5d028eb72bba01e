//! Softmax, normalization, losses and transformer ops: attribute structs, shape inference
//! and the float64 reference every device is tested against. Semantics are PyTorch's.
//!
//! Layouts the devices see (all row-major and contiguous):
//! * softmax over one dim: `[outer, dim, inner]`.
//! * layer_norm / rms_norm: `[rows, cols]`, cols = the product of `normalized_shape`.
//! * group_norm / batch_norm: `[n, c, hw]`, hw = the product of the dims after the channels.
//! * cross_entropy / nll_loss: input `[n, c, inner]`, target `[n, inner]`.
//! * rope: `[outer, seq, inner, dim]` (the sequence dim is any dim but the last).
//! * attention: q `[batch, sq, d]`, k `[batch / k_group, sk, d]`, v `[batch / v_group, sk, dv]`,
//!   out `[batch, sq, dv]` (see [`AttentionDesc`]; [`AttentionPlan`] maps the callers' shapes).
//! * weighted_sum: x `[outer, n, d]`, w `[outer, n]`, y `[outer, d]`.

use crate::base::dtype::DType;
use crate::base::shape::{broadcast_shapes, broadcast_strides};
use crate::{Error, Result};

/// PyTorch's `reduction` argument. The discriminants are the C ABI's `rb_reduction` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduction {
    None = 0,
    Mean = 1,
    Sum = 2,
}

impl Reduction {
    pub fn from_i32(v: i32, op: &str) -> Result<Self> {
        match v {
            0 => Ok(Reduction::None),
            1 => Ok(Reduction::Mean),
            2 => Ok(Reduction::Sum),
            _ => Err(Error::invalid(format!(
                "{op}: reduction={v} is not an rb_reduction (0 none, 1 mean, 2 sum)"
            ))),
        }
    }
}

/// Resolves a PyTorch dim (negative counts from the end) against a rank; a 0-d tensor
/// accepts dim 0 and -1 as PyTorch does.
pub fn normalize_dim(op: &str, dim: i64, rank: usize) -> Result<usize> {
    let r = rank.max(1) as i64;
    if dim < -r || dim >= r {
        return Err(Error::invalid(format!(
            "{op}: dim={dim} is out of range for a tensor of rank {rank} (expected [{}, {}])",
            -r,
            r - 1
        )));
    }
    Ok(if dim < 0 {
        (dim + r) as usize
    } else {
        dim as usize
    })
}

/// Softmax / log-softmax over one dim of a contiguous tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoftmaxDesc {
    pub outer: usize,
    pub dim: usize,
    pub inner: usize,
    /// log_softmax when true.
    pub log: bool,
}

impl SoftmaxDesc {
    pub fn new(op: &str, shape: &[usize], dim: i64, log: bool) -> Result<Self> {
        let d = normalize_dim(op, dim, shape.len())?;
        if shape.is_empty() {
            return Ok(SoftmaxDesc {
                outer: 1,
                dim: 1,
                inner: 1,
                log,
            });
        }
        Ok(SoftmaxDesc {
            outer: shape[..d].iter().product(),
            dim: shape[d],
            inner: shape[d + 1..].iter().product(),
            log,
        })
    }
    pub fn numel(&self) -> usize {
        self.outer * self.dim * self.inner
    }
}

/// layer_norm and rms_norm: normalize each row of `[rows, cols]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowNormDesc {
    pub rows: usize,
    pub cols: usize,
    pub eps: f64,
}

impl RowNormDesc {
    /// `normalized_shape` must equal the trailing dims of `shape` (PyTorch's rule).
    pub fn new(op: &str, shape: &[usize], normalized_shape: &[usize], eps: f64) -> Result<Self> {
        let k = normalized_shape.len();
        if k == 0 {
            return Err(Error::invalid(format!(
                "{op}: normalized_shape is empty (give at least one trailing dim)"
            )));
        }
        if k > shape.len() || shape[shape.len() - k..] != *normalized_shape {
            return Err(Error::shape(format!(
                "{op}: normalized_shape {normalized_shape:?} is not the trailing dims of input shape {shape:?}"
            )));
        }
        check_eps(op, eps)?;
        let cols: usize = normalized_shape.iter().product();
        let rows: usize = shape[..shape.len() - k].iter().product();
        Ok(RowNormDesc { rows, cols, eps })
    }
}

fn check_eps(op: &str, eps: f64) -> Result<()> {
    if !(eps >= 0.0 && eps.is_finite()) {
        return Err(Error::invalid(format!(
            "{op}: eps={eps} must be finite and >= 0"
        )));
    }
    Ok(())
}

/// group_norm over `[n, c, hw]` with `groups` dividing `c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupNormDesc {
    pub n: usize,
    pub c: usize,
    pub hw: usize,
    pub groups: usize,
    pub eps: f64,
}

impl GroupNormDesc {
    pub fn new(op: &str, shape: &[usize], groups: usize, eps: f64) -> Result<Self> {
        if shape.len() < 2 {
            return Err(Error::shape(format!(
                "{op}: input of shape {shape:?} needs at least 2 dims [N, C, *]"
            )));
        }
        let c = shape[1];
        if groups == 0 || !c.is_multiple_of(groups) {
            return Err(Error::invalid(format!(
                "{op}: num_groups={groups} does not divide the {c} channels"
            )));
        }
        check_eps(op, eps)?;
        Ok(GroupNormDesc {
            n: shape[0],
            c,
            hw: shape[2..].iter().product(),
            groups,
            eps,
        })
    }
}

/// batch_norm over `[n, c, hw]`: statistics per channel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchNormDesc {
    pub n: usize,
    pub c: usize,
    pub hw: usize,
    /// Batch statistics (and running-stat updates) when true; running statistics when false.
    pub training: bool,
    pub momentum: f64,
    pub eps: f64,
    /// The tensors are channels-last, `[n, hw, c]` (`batch_norm_channels_last`), instead of
    /// `[n, c, hw]`. False from [`BatchNormDesc::new`].
    pub channels_last: bool,
}

impl BatchNormDesc {
    pub fn new(op: &str, shape: &[usize], training: bool, momentum: f64, eps: f64) -> Result<Self> {
        if shape.len() < 2 {
            return Err(Error::shape(format!(
                "{op}: input of shape {shape:?} needs at least 2 dims [N, C, *]"
            )));
        }
        check_eps(op, eps)?;
        if !momentum.is_finite() {
            return Err(Error::invalid(format!(
                "{op}: momentum={momentum} is not finite"
            )));
        }
        let d = BatchNormDesc {
            n: shape[0],
            c: shape[1],
            hw: shape[2..].iter().product(),
            training,
            momentum,
            eps,
            channels_last: false,
        };
        if training && d.n * d.hw == 1 {
            return Err(Error::invalid(format!(
                "{op}: expected more than 1 value per channel when training, got input shape {shape:?}"
            )));
        }
        Ok(d)
    }
}

/// Which loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    /// `(x - t)^2`; target has the input's shape and dtype.
    Mse,
    /// `-(t log x + (1 - t) log(1 - x))` with the logs clamped at -100 as PyTorch does.
    Bce,
    /// Logits `[n, c, inner]`, class-index target `[n, inner]`.
    CrossEntropy,
    /// Log-probabilities `[n, c, inner]`, class-index target `[n, inner]`.
    Nll,
}

impl LossKind {
    pub fn name(self) -> &'static str {
        match self {
            LossKind::Mse => "mse_loss",
            LossKind::Bce => "bce_loss",
            LossKind::CrossEntropy => "cross_entropy",
            LossKind::Nll => "nll_loss",
        }
    }
    pub fn is_class(self) -> bool {
        matches!(self, LossKind::CrossEntropy | LossKind::Nll)
    }
}

/// A loss over `n * inner` items (`c` = 1 and `inner` = 1 for the elementwise losses, whose
/// `n` is the element count).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossDesc {
    pub kind: LossKind,
    pub n: usize,
    pub c: usize,
    pub inner: usize,
    pub reduction: Reduction,
    pub ignore_index: i64,
    pub label_smoothing: f64,
}

impl LossDesc {
    /// Items the loss is taken over (before reduction).
    pub fn items(&self) -> usize {
        self.n * self.inner
    }

    /// For mse/bce: input and target of one shape. Returns the desc and the output shape.
    pub fn elementwise(
        kind: LossKind,
        input: &[usize],
        target: &[usize],
        reduction: Reduction,
    ) -> Result<(Self, Vec<usize>)> {
        let op = kind.name();
        if input != target {
            return Err(Error::shape(format!(
                "{op}: target shape {target:?} differs from input shape {input:?}"
            )));
        }
        let d = LossDesc {
            kind,
            n: input.iter().product(),
            c: 1,
            inner: 1,
            reduction,
            ignore_index: -100,
            label_smoothing: 0.0,
        };
        let out = if reduction == Reduction::None {
            input.to_vec()
        } else {
            vec![]
        };
        Ok((d, out))
    }

    /// For cross_entropy/nll_loss: input `[N, C, d...]` (or `[C]`), target `[N, d...]`
    /// (or `[]`). Returns the desc and the output shape.
    pub fn class(
        kind: LossKind,
        input: &[usize],
        target: &[usize],
        reduction: Reduction,
        ignore_index: i64,
        label_smoothing: f64,
    ) -> Result<(Self, Vec<usize>)> {
        let op = kind.name();
        if input.is_empty() {
            return Err(Error::shape(format!(
                "{op}: input must have a class dim, got a 0-d tensor"
            )));
        }
        let (n, c, rest, want): (usize, usize, &[usize], Vec<usize>) = if input.len() == 1 {
            (1, input[0], &[], vec![])
        } else {
            let mut w = vec![input[0]];
            w.extend_from_slice(&input[2..]);
            (input[0], input[1], &input[2..], w)
        };
        if target != want.as_slice() {
            return Err(Error::shape(format!(
                "{op}: target shape {target:?} does not match input shape {input:?} (expected {want:?})"
            )));
        }
        if c == 0 {
            return Err(Error::shape(format!("{op}: input has 0 classes")));
        }
        if !(0.0..=1.0).contains(&label_smoothing) {
            return Err(Error::invalid(format!(
                "{op}: label_smoothing={label_smoothing} must be in [0, 1]"
            )));
        }
        let d = LossDesc {
            kind,
            n,
            c,
            inner: rest.iter().product(),
            reduction,
            ignore_index,
            label_smoothing,
        };
        let out = if reduction == Reduction::None {
            want
        } else {
            vec![]
        };
        Ok((d, out))
    }
}

/// What a loss call adds to its [`LossDesc`] (issue 17): class weights and class-probability
/// targets, with PyTorch's semantics.
///
/// * `weighted`, cross_entropy / nll_loss: a weight `w` of shape `[C]` (the input's dtype);
///   item `r` with target `t` weighs `w[t]`, and `mean` divides by the sum of `w[t]` over
///   the non-ignored items (NaN when it is 0, as PyTorch). With label smoothing `ls`,
///   cross_entropy's item loss is `(1 - ls) w[t] (lse - x[t]) + ls/C sum_c w[c] (lse - x[c])`.
/// * `weighted`, bce_loss: a weight of the input's shape (the runtime broadcasts a smaller
///   one); each element's loss is multiplied by its weight, `mean` still divides by the
///   element count.
/// * `prob_target`, cross_entropy only: the target has the input's shape and dtype and holds
///   class probabilities; the item loss is `-sum_c w[c] t'[c] log_softmax(x)[c]` with
///   `t' = t (1 - ls) + ls/C`; `mean` divides by the item count (not by weights), and no item
///   is ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LossExt {
    pub weighted: bool,
    pub prob_target: bool,
}

impl LossExt {
    /// Checks a weight's shape against the desc: `[C]` for the class losses, broadcastable
    /// to the input (`input`) for bce_loss. `mse_loss` takes no weight.
    pub fn check_weight(d: &LossDesc, input: &[usize], weight: &[usize]) -> Result<()> {
        let op = d.kind.name();
        match d.kind {
            LossKind::CrossEntropy | LossKind::Nll => {
                if weight != [d.c] {
                    return Err(Error::shape(format!(
                        "{op}: weight has shape {weight:?}, expected [{}] (one weight per class)",
                        d.c
                    )));
                }
            }
            LossKind::Bce => {
                let ok =
                    crate::base::shape::broadcast_shapes(weight, input).is_ok_and(|s| s == input);
                if !ok {
                    return Err(Error::shape(format!(
                        "{op}: weight of shape {weight:?} does not broadcast to the input's shape {input:?}"
                    )));
                }
            }
            LossKind::Mse => {
                return Err(Error::invalid(format!("{op}: takes no weight")));
            }
        }
        Ok(())
    }
}

impl LossDesc {
    /// For cross_entropy with class-probability targets: input `[N, C, d...]` (or `[C]`) and
    /// target of the same shape. `ignore_index` must be negative (PyTorch: "ignore_index is
    /// not supported for floating point target"). Returns the desc and the output shape.
    pub fn class_probs(
        kind: LossKind,
        input: &[usize],
        target: &[usize],
        reduction: Reduction,
        ignore_index: i64,
        label_smoothing: f64,
    ) -> Result<(Self, Vec<usize>)> {
        let op = kind.name();
        if kind != LossKind::CrossEntropy {
            return Err(Error::dtype(format!(
                "{op}: target must hold class indices (i32 or i64); class probabilities are for cross_entropy"
            )));
        }
        if input != target {
            return Err(Error::shape(format!(
                "{op}: a class-probability target must have the input's shape {input:?}, got {target:?}"
            )));
        }
        if ignore_index >= 0 {
            return Err(Error::invalid(format!(
                "{op}: ignore_index={ignore_index} is not supported with class-probability targets (it must be negative)"
            )));
        }
        let mut want = input.to_vec();
        if !want.is_empty() {
            want.remove(if input.len() == 1 { 0 } else { 1 });
        }
        let (d, out) = Self::class(kind, input, &want, reduction, ignore_index, label_smoothing)?;
        Ok((d, out))
    }
}

/// Rotary embedding from given cos/sin caches (ONNX `RotaryEmbedding`, Hugging Face
/// `apply_rotary_pos_emb` with its caches): `cos`, `sin` are `[max_pos, R/2]` (ONNX's
/// convention, one angle per rotated pair, not HF's duplicated `[max_pos, R]`), `R` = the
/// rotary dim (even, at most the last dim `D`); the first `R` features of each vector rotate,
/// the other `D - R` pass through. Pair `i < R/2` of the vector at position `p` is
/// `(x[i], x[i + R/2])` (rotate-half, GPT-NeoX / LLaMA) or, `interleaved`, `(x[2i], x[2i+1])`
/// (GPT-J, ONNX `interleaved=1`); with `(a, b)` the pair, `c = cos[p, i]`, `s = sin[p, i]`:
/// `a' = a c - b s`, `b' = b c + a s`. `inverse` rotates by `-theta` (the backward).
///
/// Positions: `position_ids` absent, the index `s` along the sequence dim; given (i32/i64),
/// `[S]` (one position per sequence index) or `[B, S]` with `B` the first dim of x (ONNX's
/// `[batch, seq]`; the sequence dim must not be the first). Every position must be in
/// `[0, max_pos)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RopeCachedDesc {
    pub outer: usize,
    pub seq: usize,
    pub inner: usize,
    pub dim: usize,
    /// Rotated features: `2 * cos.shape[1]`.
    pub rot: usize,
    /// Rows of the caches.
    pub max_pos: usize,
    pub interleaved: bool,
    pub inverse: bool,
    /// Positions are read from `position_ids` (else they are `0..seq`).
    pub has_positions: bool,
    /// Consecutive outer indices that share one row of `position_ids`: `outer` for `[S]`,
    /// `outer / B` for `[B, S]` (at least 1).
    pub pos_group: usize,
}

impl RopeCachedDesc {
    /// Checks x `[.., S, .., D]`, the caches and the positions' shape (`None`: absent).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        op: &str,
        shape: &[usize],
        cos: &[usize],
        sin: &[usize],
        positions: Option<&[usize]>,
        seq_dim: i64,
        interleaved: bool,
        inverse: bool,
    ) -> Result<Self> {
        if shape.len() < 2 {
            return Err(Error::shape(format!(
                "{op}: input of shape {shape:?} needs at least 2 dims [.., seq, .., dim]"
            )));
        }
        let sd = normalize_dim(op, seq_dim, shape.len())?;
        let last = shape.len() - 1;
        if sd == last {
            return Err(Error::invalid(format!(
                "{op}: seq_dim={seq_dim} is the feature (last) dim"
            )));
        }
        let dim = shape[last];
        if cos.len() != 2 {
            return Err(Error::shape(format!(
                "{op}: cos has shape {cos:?}, expected [max_pos, rotary_dim / 2]"
            )));
        }
        if sin != cos {
            return Err(Error::shape(format!(
                "{op}: sin has shape {sin:?}, cos {cos:?}; they must be equal"
            )));
        }
        let (max_pos, rot) = (cos[0], 2 * cos[1]);
        if rot == 0 || rot > dim {
            return Err(Error::shape(format!(
                "{op}: cos/sin of shape {cos:?} give a rotary dim of {rot}, expected 1..={dim} (the last dim of x)"
            )));
        }
        let outer: usize = shape[..sd].iter().product();
        let seq = shape[sd];
        let pos_group = match positions {
            None => {
                if seq > max_pos {
                    return Err(Error::invalid(format!(
                        "{op}: the sequence has {seq} positions but cos/sin hold {max_pos}"
                    )));
                }
                1
            }
            Some(p) if p == [seq] => outer.max(1),
            Some(p) if sd > 0 && p == [shape[0], seq] => (outer / shape[0].max(1)).max(1),
            Some(p) => {
                let batch = if sd > 0 {
                    format!(" or [{}, {seq}]", shape[0])
                } else {
                    String::new()
                };
                return Err(Error::shape(format!(
                    "{op}: position_ids has shape {p:?}, expected [{seq}]{batch}"
                )));
            }
        };
        Ok(RopeCachedDesc {
            outer,
            seq,
            inner: shape[sd + 1..last].iter().product(),
            dim,
            rot,
            max_pos,
            interleaved,
            inverse,
            has_positions: positions.is_some(),
            pos_group,
        })
    }

    /// Number of position ids (`seq` or `B * seq`); 0 without them.
    pub fn positions(&self) -> usize {
        if self.has_positions {
            self.outer.div_ceil(self.pos_group) * self.seq
        } else {
            0
        }
    }

    /// The index into `position_ids` of vector `(o, s)`.
    pub fn position_index(&self, o: usize, s: usize) -> usize {
        (o / self.pos_group) * self.seq + s
    }

    /// The feature indices of pair `i`.
    pub fn pair(&self, i: usize) -> (usize, usize) {
        if self.interleaved {
            (2 * i, 2 * i + 1)
        } else {
            (i, i + self.rot / 2)
        }
    }
}

/// Rotary position embedding, rotate-half form (GPT-NeoX / LLaMA / Hugging Face
/// `apply_rotary_pos_emb`): for a vector of even length `dim` at position `p`, with
/// `half = dim / 2` and `theta_i = p * base^(-2i/dim)` for `i < half`,
/// `y[i] = x[i] cos theta_i - x[i + half] sin theta_i` and
/// `y[i + half] = x[i + half] cos theta_i + x[i] sin theta_i`.
/// Positions are `position_offset + s` for the index `s` along the sequence dim.
/// `inverse` rotates by `-theta` (the backward, and the inverse, of the forward).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RopeDesc {
    pub outer: usize,
    pub seq: usize,
    pub inner: usize,
    pub dim: usize,
    pub base: f64,
    pub position_offset: i64,
    pub inverse: bool,
}

impl RopeDesc {
    pub fn new(
        op: &str,
        shape: &[usize],
        seq_dim: i64,
        base: f64,
        position_offset: i64,
        inverse: bool,
    ) -> Result<Self> {
        if shape.len() < 2 {
            return Err(Error::shape(format!(
                "{op}: input of shape {shape:?} needs at least 2 dims [.., seq, .., dim]"
            )));
        }
        let sd = normalize_dim(op, seq_dim, shape.len())?;
        let last = shape.len() - 1;
        if sd == last {
            return Err(Error::invalid(format!(
                "{op}: seq_dim={seq_dim} is the feature (last) dim"
            )));
        }
        let dim = shape[last];
        if !dim.is_multiple_of(2) {
            return Err(Error::shape(format!(
                "{op}: the last dim ({dim}) must be even"
            )));
        }
        if !(base.is_finite() && base > 0.0) {
            return Err(Error::invalid(format!(
                "{op}: base={base} must be finite and > 0"
            )));
        }
        Ok(RopeDesc {
            outer: shape[..sd].iter().product(),
            seq: shape[sd],
            inner: shape[sd + 1..last].iter().product(),
            dim,
            base,
            position_offset,
            inverse,
        })
    }

    /// The angle of pair `i` at sequence index `s`, in float64.
    pub fn theta(&self, s: usize, i: usize) -> f64 {
        let p = (self.position_offset + s as i64) as f64;
        let inv = self.base.powf(-2.0 * i as f64 / self.dim as f64);
        let t = p * inv;
        if self.inverse { -t } else { t }
    }
}

/// Which causal mask scaled_dot_product_attention applies (the C ABI's `rb_causal_mode`
/// values). Query `i` of `Sq` sees keys `j < limit(i)` of `Sk`:
/// * `TopLeft`: PyTorch's `is_causal=True` (`ones(Sq, Sk).tril()`): `j <= i`;
/// * `BottomRight`: PyTorch's `causal_lower_right(Sq, Sk)` (`tril(diagonal=Sk - Sq)`), the
///   mask of KV-cache decoding: `j <= i + Sk - Sq`; when `Sq > Sk` the first `Sq - Sk`
///   queries see no key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Causal {
    #[default]
    None = 0,
    TopLeft = 1,
    BottomRight = 2,
}

impl Causal {
    pub fn from_i32(v: i32, op: &str) -> Result<Self> {
        match v {
            0 => Ok(Causal::None),
            1 => Ok(Causal::TopLeft),
            2 => Ok(Causal::BottomRight),
            _ => Err(Error::invalid(format!(
                "{op}: causal={v} is not an rb_causal_mode (0 none, 1 top-left, 2 bottom-right)"
            ))),
        }
    }

    /// Keys query `i` may see (a prefix of the `sk` keys).
    #[inline]
    pub fn keys(self, i: usize, sq: usize, sk: usize) -> usize {
        match self {
            Causal::None => sk,
            Causal::TopLeft => (i + 1).min(sk),
            Causal::BottomRight => (i + 1 + sk).saturating_sub(sq).min(sk),
        }
    }
}

/// How a device reads an attention mask (validated and laid out by the runtime): the mask
/// value of batch `b` (of the flattened leading dims), query `i`, key `j` is element
/// `(b / inner) * stride_outer + (b % inner) * stride_inner + i * stride_q + j * stride_k`
/// of a tensor of `dtype`: Bool (true = the key takes part) or a float added to the score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttnMask {
    pub dtype: DType,
    pub inner: usize,
    pub stride_outer: usize,
    pub stride_inner: usize,
    pub stride_q: usize,
    pub stride_k: usize,
}

impl AttnMask {
    #[inline]
    pub fn offset(&self, b: usize, i: usize, j: usize) -> usize {
        (b / self.inner) * self.stride_outer
            + (b % self.inner) * self.stride_inner
            + i * self.stride_q
            + j * self.stride_k
    }
}

/// `torch.nn.functional.scaled_dot_product_attention` as a device sees it (no dropout):
/// q `[batch, sq, d]`, k `[batch / k_group, sk, d]`, v `[batch / v_group, sk, dv]`, out
/// `[batch, sq, dv]`, all contiguous; query batch `b` reads k batch `b / k_group` and v
/// batch `b / v_group` (grouped-query attention: the query heads of one group are
/// consecutive). The scores `scale * q k^T` get the mask (`mask`, read from the device
/// pointer passed beside this) and the causal limit; a row whose every score is -inf (every
/// key masked out) gives probabilities 0, as PyTorch's math backend (`_safe_softmax`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionDesc {
    pub batch: usize,
    pub sq: usize,
    pub sk: usize,
    pub d: usize,
    pub dv: usize,
    pub scale: f64,
    pub causal: Causal,
    pub k_group: usize,
    pub v_group: usize,
    pub mask: Option<AttnMask>,
}

fn attention_scale(op: &str, scale: Option<f64>, d: usize) -> Result<f64> {
    match scale {
        Some(s) if !s.is_finite() => Err(Error::invalid(format!("{op}: scale={s} is not finite"))),
        Some(s) => Ok(s),
        None => Ok(1.0 / (d.max(1) as f64).sqrt()),
    }
}

impl AttentionDesc {
    /// Shapes `[..., Sq, D]`, `[..., Sk, D]`, `[..., Sk, Dv]` with equal leading dims; the
    /// output is `[..., Sq, Dv]`. `scale` defaults to `1/sqrt(D)`; `causal` is PyTorch's
    /// `is_causal` (top-left).
    pub fn new(
        op: &str,
        q: &[usize],
        k: &[usize],
        v: &[usize],
        scale: Option<f64>,
        causal: bool,
    ) -> Result<(Self, Vec<usize>)> {
        if q.len() < 2 || k.len() != q.len() || v.len() != q.len() {
            return Err(Error::shape(format!(
                "{op}: q {q:?}, k {k:?}, v {v:?} must have one rank >= 2"
            )));
        }
        let r = q.len();
        if q[..r - 2] != k[..r - 2] || q[..r - 2] != v[..r - 2] {
            return Err(Error::shape(format!(
                "{op}: leading dims of q {q:?}, k {k:?}, v {v:?} differ"
            )));
        }
        check_attention_inner(op, q, k, v)?;
        let d = q[r - 1];
        let scale = attention_scale(op, scale, d)?;
        let mut out = q[..r - 1].to_vec();
        out.push(v[r - 1]);
        Ok((
            AttentionDesc {
                batch: q[..r - 2].iter().product(),
                sq: q[r - 2],
                sk: k[r - 2],
                d,
                dv: v[r - 1],
                scale,
                causal: if causal {
                    Causal::TopLeft
                } else {
                    Causal::None
                },
                k_group: 1,
                v_group: 1,
                mask: None,
            },
            out,
        ))
    }

    /// Keys query `i` attends to (a prefix: the causal limit).
    pub fn keys(&self, i: usize) -> usize {
        self.causal.keys(i, self.sq, self.sk)
    }
}

/// The last two dims of q, k, v agree: `k[-1] == q[-1]`, `v[-2] == k[-2]`.
fn check_attention_inner(op: &str, q: &[usize], k: &[usize], v: &[usize]) -> Result<()> {
    let (qr, kr, vr) = (q.len(), k.len(), v.len());
    if k[kr - 1] != q[qr - 1] {
        return Err(Error::shape(format!(
            "{op}: k's last dim {} differs from q's {}",
            k[kr - 1],
            q[qr - 1]
        )));
    }
    if v[vr - 2] != k[kr - 2] {
        return Err(Error::shape(format!(
            "{op}: v has {} keys, k has {}",
            v[vr - 2],
            k[kr - 2]
        )));
    }
    Ok(())
}

/// `shape` left-padded with 1s to `rank` dims.
fn left_pad(shape: &[usize], rank: usize) -> Vec<usize> {
    let mut v = vec![1; rank - shape.len()];
    v.extend_from_slice(shape);
    v
}

/// The full contract of `torch.nn.functional.scaled_dot_product_attention(q, k, v,
/// attn_mask, is_causal / causal_lower_right, scale, enable_gqa)` (PyTorch's math backend,
/// no dropout) on the callers' shapes:
/// * q `[*Lq, Sq, D]`, k `[*Lk, Sk, D]`, v `[*Lv, Sk, Dv]`, each of rank >= 2;
/// * `enable_gqa`: the head dims (dim -3; ranks >= 3) `Hq`, `Hk`, `Hv` are all equal or `Hk`
///   and `Hv` divide `Hq`; k and v are then read as if repeated (`repeat_interleave`) to
///   `Hq` heads: query head `h` uses key head `h / (Hq / Hk)`;
/// * the leading dims (after that repetition) broadcast (NumPy rules) to `L`, the output
///   is `[*L, Sq, Dv]`;
/// * the mask (bool: true takes part; or a float added to the scores, f32 or q's dtype)
///   broadcasts to the scores `[*broadcast(Lq, Lk), Sq, Sk]` (PyTorch adds it in place);
///   it may not be combined with a causal mask (PyTorch refuses `attn_mask` with
///   `is_causal`).
#[derive(Clone, Debug, PartialEq)]
pub struct AttentionPlan {
    /// The output's leading dims `L`.
    pub lead: Vec<usize>,
    /// q's, k's, v's leading dims left-padded to `L`'s rank (k's and v's head dim as the
    /// tensors have it, before any grouped-query repetition).
    pub q_lead: Vec<usize>,
    pub k_lead: Vec<usize>,
    pub v_lead: Vec<usize>,
    /// The mask's shape left-padded to `L`'s rank + 2, and its dtype.
    pub mask: Option<(Vec<usize>, DType)>,
    pub sq: usize,
    pub sk: usize,
    pub d: usize,
    pub dv: usize,
    pub scale: f64,
    pub causal: Causal,
}

impl AttentionPlan {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        op: &str,
        q: &[usize],
        k: &[usize],
        v: &[usize],
        mask: Option<(&[usize], DType)>,
        q_dtype: DType,
        scale: Option<f64>,
        causal: Causal,
        enable_gqa: bool,
    ) -> Result<Self> {
        if q.len() < 2 || k.len() < 2 || v.len() < 2 {
            return Err(Error::shape(format!(
                "{op}: q {q:?}, k {k:?} and v {v:?} must have at least 2 dims"
            )));
        }
        check_attention_inner(op, q, k, v)?;
        let (ql, kl, vl) = (&q[..q.len() - 2], &k[..k.len() - 2], &v[..v.len() - 2]);
        // The leading dims k and v broadcast with: their head dim repeated to q's under GQA.
        let (mut kx, mut vx) = (kl.to_vec(), vl.to_vec());
        if enable_gqa {
            if ql.is_empty() || kl.is_empty() || vl.is_empty() {
                return Err(Error::shape(format!(
                    "{op}: enable_gqa needs a head dim (-3): q {q:?}, k {k:?}, v {v:?}"
                )));
            }
            let (hq, hk, hv) = (ql[ql.len() - 1], kl[kl.len() - 1], vl[vl.len() - 1]);
            if !(hq == hk && hk == hv) {
                if hk == 0 || hv == 0 || hq % hk != 0 || hq % hv != 0 {
                    return Err(Error::shape(format!(
                        "{op}: enable_gqa: the {hq} query heads are not a multiple of the {hk} \
                         key and {hv} value heads"
                    )));
                }
                *kx.last_mut().unwrap() = hq;
                *vx.last_mut().unwrap() = hq;
            }
        }
        let ctx = |e: Error| e.context(op);
        let scores_lead = broadcast_shapes(ql, &kx).map_err(ctx)?;
        let lead = broadcast_shapes(&scores_lead, &vx).map_err(ctx)?;
        let rank = lead.len();
        let (sq, sk, d, dv) = (
            q[q.len() - 2],
            k[k.len() - 2],
            q[q.len() - 1],
            v[v.len() - 1],
        );
        let mask = match mask {
            None => None,
            Some((m, mdt)) => {
                if causal != Causal::None {
                    return Err(Error::invalid(format!(
                        "{op}: an explicit attn_mask cannot be combined with a causal mask \
                         (PyTorch refuses attn_mask with is_causal)"
                    )));
                }
                if !(mdt == DType::Bool || mdt == DType::F32 || mdt == q_dtype) {
                    return Err(Error::dtype(format!(
                        "{op}: attn_mask has dtype {mdt}; expected bool, f32 or the query's \
                         {q_dtype}"
                    )));
                }
                let mut scores = scores_lead.clone();
                scores.extend([sq, sk]);
                let fits = m.len() <= scores.len()
                    && broadcast_shapes(&scores, m).is_ok_and(|b| b == scores);
                if !fits {
                    return Err(Error::shape(format!(
                        "{op}: attn_mask of shape {m:?} does not broadcast to the scores' \
                         shape {scores:?}"
                    )));
                }
                Some((left_pad(m, rank + 2), mdt))
            }
        };
        let lead_hq = lead.last().copied().unwrap_or(1);
        let plan = AttentionPlan {
            q_lead: left_pad(ql, rank),
            k_lead: left_pad(kl, rank),
            v_lead: left_pad(vl, rank),
            lead,
            mask,
            sq,
            sk,
            d,
            dv,
            scale: attention_scale(op, scale, d)?,
            causal,
        };
        // Without GQA a head dim of k/v is 1 or L's (broadcasting); with it a divisor.
        for l in [&plan.k_lead, &plan.v_lead] {
            if let Some(&h) = l.last()
                && h != lead_hq
                && (h == 0 || lead_hq % h != 0)
            {
                return Err(Error::shape(format!(
                    "{op}: {h} key/value heads do not divide the {lead_hq} query heads"
                )));
            }
        }
        Ok(plan)
    }

    /// The output shape `[*L, Sq, Dv]`.
    pub fn out_shape(&self) -> Vec<usize> {
        let mut s = self.lead.clone();
        s.extend([self.sq, self.dv]);
        s
    }

    /// The number of (query) matrices: the product of `L`.
    pub fn batch(&self) -> usize {
        self.lead.iter().product()
    }

    fn heads(&self) -> usize {
        self.lead.last().copied().unwrap_or(1)
    }

    /// Query heads per key head (`Hq / Hk`, 1 without grouping).
    pub fn k_group(&self) -> usize {
        (self.heads() / self.k_lead.last().copied().unwrap_or(1).max(1)).max(1)
    }

    /// Query heads per value head.
    pub fn v_group(&self) -> usize {
        (self.heads() / self.v_lead.last().copied().unwrap_or(1).max(1)).max(1)
    }

    /// The index of the matrix of a tensor with leading dims `t` (padded) that output batch
    /// `b` reads: dims of extent 1 broadcast, the head dim of k/v divides by its group.
    pub fn matrix_of(&self, t: &[usize], b: usize) -> usize {
        let mut rem = b;
        let mut idx = 0;
        let mut tstride = 1;
        for dim in (0..self.lead.len()).rev() {
            let (l, e) = (self.lead[dim], t[dim]);
            let i = rem % l;
            rem /= l;
            // e == l: i; e == 1: 0; a key/value head dim under GQA: i / (l / e).
            idx += (i / (l / e.max(1))) * tstride;
            tstride *= e;
        }
        idx
    }

    /// Whether q is already `[batch, Sq, D]` (no broadcasting to undo).
    pub fn q_direct(&self) -> bool {
        self.q_lead == self.lead
    }

    /// Whether k (or v, with its leading dims) is already `[batch / group, Sk, *]`: its
    /// leading dims other than the head dim are L's.
    pub fn kv_direct(&self, t: &[usize]) -> bool {
        let r = self.lead.len();
        r == 0 || t[..r - 1] == self.lead[..r - 1]
    }

    /// The leading dims k (or v) are expanded to when not direct: L's, with the tensor's
    /// own head count.
    pub fn kv_expanded(&self, t: &[usize]) -> Vec<usize> {
        let mut s = self.lead.clone();
        if let (Some(h), Some(&th)) = (s.last_mut(), t.last()) {
            *h = th;
        }
        s
    }

    /// The device's descriptor for q `[batch, Sq, D]`, k/v `[batch / group, Sk, *]` and the
    /// given mask layout.
    pub fn desc(&self, mask: Option<AttnMask>) -> AttentionDesc {
        AttentionDesc {
            batch: self.batch(),
            sq: self.sq,
            sk: self.sk,
            d: self.d,
            dv: self.dv,
            scale: self.scale,
            causal: self.causal,
            k_group: self.k_group(),
            v_group: self.v_group(),
            mask,
        }
    }

    /// The mask's element strides: per leading dim of `L` (0 where it broadcasts), then for
    /// the query and key dims.
    pub fn mask_strides(&self) -> Option<(Vec<usize>, usize, usize)> {
        let (m, _) = self.mask.as_ref()?;
        let r = self.lead.len();
        let mut full = self.lead.clone();
        full.extend([self.sq, self.sk]);
        let st = broadcast_strides(m, &full);
        Some((st[..r].to_vec(), st[r], st[r + 1]))
    }

    /// The mask layout for a device when the leading strides merge into at most two levels
    /// (`outer`, `inner`), else None (the caller makes the mask contiguous first).
    pub fn mask_layout(&self) -> Option<AttnMask> {
        let (_, dtype) = self.mask.as_ref()?;
        let (lead_st, sq_st, sk_st) = self.mask_strides()?;
        // Merge adjacent dims (dropping extents of 1) where stride[a] == stride[b] * ext[b].
        let mut dims: Vec<(usize, usize)> = vec![];
        for (&e, &s) in self.lead.iter().zip(&lead_st) {
            if e == 1 {
                continue;
            }
            match dims.last_mut() {
                Some((pe, ps)) if *ps == s * e => {
                    *pe *= e;
                    *ps = s;
                }
                _ => dims.push((e, s)),
            }
        }
        let (inner, so, si) = match dims.as_slice() {
            [] => (1, 0, 0),
            [(e, s)] => (*e, 0, *s),
            [(_, so), (e, si)] => (*e, *so, *si),
            _ => return None,
        };
        Some(AttnMask {
            dtype: *dtype,
            inner,
            stride_outer: so,
            stride_inner: si,
            stride_q: sq_st,
            stride_k: sk_st,
        })
    }
}

/// `weighted_sum(x, w) = torch.sum(x * w[..., None], dim=-2)`: x `[..., N, D]`, w `[..., N]`,
/// y `[..., D]` (the probs-times-values product of attention for one query).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WeightedSumDesc {
    pub outer: usize,
    pub n: usize,
    pub d: usize,
}

impl WeightedSumDesc {
    pub fn new(op: &str, x: &[usize], w: &[usize]) -> Result<(Self, Vec<usize>)> {
        if x.len() < 2 || w != &x[..x.len() - 1] {
            return Err(Error::shape(format!(
                "{op}: w of shape {w:?} must be x's shape {x:?} without its last dim"
            )));
        }
        let r = x.len();
        let mut out = x[..r - 2].to_vec();
        out.push(x[r - 1]);
        Ok((
            WeightedSumDesc {
                outer: x[..r - 2].iter().product(),
                n: x[r - 2],
                d: x[r - 1],
            },
            out,
        ))
    }
}

// ---------------------------------------------------------------- float64 references

/// Softmax (or log-softmax) in float64.
pub fn softmax_ref(x: &[f64], d: &SoftmaxDesc) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    for o in 0..d.outer {
        for i in 0..d.inner {
            let at = |k: usize| (o * d.dim + k) * d.inner + i;
            let m = (0..d.dim)
                .map(|k| x[at(k)])
                .fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = (0..d.dim).map(|k| (x[at(k)] - m).exp()).sum();
            for k in 0..d.dim {
                y[at(k)] = if d.log {
                    x[at(k)] - m - s.ln()
                } else {
                    (x[at(k)] - m).exp() / s
                };
            }
        }
    }
    y
}

/// Gradient of softmax/log-softmax given its output `y` and the output gradient `dy`.
pub fn softmax_backward_ref(y: &[f64], dy: &[f64], d: &SoftmaxDesc) -> Vec<f64> {
    let mut dx = vec![0.0; y.len()];
    for o in 0..d.outer {
        for i in 0..d.inner {
            let at = |k: usize| (o * d.dim + k) * d.inner + i;
            if d.log {
                let s: f64 = (0..d.dim).map(|k| dy[at(k)]).sum();
                for k in 0..d.dim {
                    dx[at(k)] = dy[at(k)] - y[at(k)].exp() * s;
                }
            } else {
                let s: f64 = (0..d.dim).map(|k| dy[at(k)] * y[at(k)]).sum();
                for k in 0..d.dim {
                    dx[at(k)] = y[at(k)] * (dy[at(k)] - s);
                }
            }
        }
    }
    dx
}

/// Mean and 1/sqrt(var + eps) (biased variance) of a set of values.
fn moments(vals: impl Iterator<Item = f64> + Clone, eps: f64) -> (f64, f64) {
    let n = vals.clone().count().max(1) as f64;
    let mean = vals.clone().sum::<f64>() / n;
    let var = vals.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, 1.0 / (var + eps).sqrt())
}

/// layer_norm: `(y, mean, rstd)`; `w`/`b` of `cols` elements when given.
pub fn layer_norm_ref(
    x: &[f64],
    w: Option<&[f64]>,
    b: Option<&[f64]>,
    d: &RowNormDesc,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut y = vec![0.0; x.len()];
    let (mut means, mut rstds) = (vec![], vec![]);
    for r in 0..d.rows {
        let row = &x[r * d.cols..(r + 1) * d.cols];
        let (m, rs) = moments(row.iter().copied(), d.eps);
        for j in 0..d.cols {
            let v = (row[j] - m) * rs;
            y[r * d.cols + j] = v * w.map_or(1.0, |w| w[j]) + b.map_or(0.0, |b| b[j]);
        }
        means.push(m);
        rstds.push(rs);
    }
    (y, means, rstds)
}

/// Shared backward of the mean/variance normalizations over one set of `m` values:
/// `dx = rstd/m * (m*g - sum(g) - xhat*sum(g*xhat))` where `g = dy * w`.
fn norm_backward_set(g: &[f64], xhat: &[f64], rstd: f64) -> Vec<f64> {
    let m = g.len() as f64;
    let sg: f64 = g.iter().sum();
    let sgx: f64 = g.iter().zip(xhat).map(|(a, b)| a * b).sum();
    g.iter()
        .zip(xhat)
        .map(|(&gi, &xi)| rstd / m * (m * gi - sg - xi * sgx))
        .collect()
}

/// layer_norm backward: `(dx, dw, db)` (dw/db are zeros of `cols` when there is no weight).
pub fn layer_norm_backward_ref(
    dy: &[f64],
    x: &[f64],
    w: Option<&[f64]>,
    d: &RowNormDesc,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut dx, mut dw, mut db) = (vec![0.0; x.len()], vec![0.0; d.cols], vec![0.0; d.cols]);
    for r in 0..d.rows {
        let sl = r * d.cols..(r + 1) * d.cols;
        let (m, rs) = moments(x[sl.clone()].iter().copied(), d.eps);
        let xhat: Vec<f64> = x[sl.clone()].iter().map(|v| (v - m) * rs).collect();
        let g: Vec<f64> = (0..d.cols)
            .map(|j| dy[r * d.cols + j] * w.map_or(1.0, |w| w[j]))
            .collect();
        dx[sl.clone()].copy_from_slice(&norm_backward_set(&g, &xhat, rs));
        for j in 0..d.cols {
            dw[j] += dy[r * d.cols + j] * xhat[j];
            db[j] += dy[r * d.cols + j];
        }
    }
    (dx, dw, db)
}

/// rms_norm: `(y, rstd)` with `rstd = 1/sqrt(mean(x^2) + eps)`.
pub fn rms_norm_ref(x: &[f64], w: Option<&[f64]>, d: &RowNormDesc) -> (Vec<f64>, Vec<f64>) {
    let mut y = vec![0.0; x.len()];
    let mut rstds = vec![];
    for r in 0..d.rows {
        let row = &x[r * d.cols..(r + 1) * d.cols];
        let ms = row.iter().map(|v| v * v).sum::<f64>() / d.cols.max(1) as f64;
        let rs = 1.0 / (ms + d.eps).sqrt();
        for j in 0..d.cols {
            y[r * d.cols + j] = row[j] * rs * w.map_or(1.0, |w| w[j]);
        }
        rstds.push(rs);
    }
    (y, rstds)
}

/// rms_norm backward: `(dx, dw)`.
pub fn rms_norm_backward_ref(
    dy: &[f64],
    x: &[f64],
    w: Option<&[f64]>,
    d: &RowNormDesc,
) -> (Vec<f64>, Vec<f64>) {
    let (mut dx, mut dw) = (vec![0.0; x.len()], vec![0.0; d.cols]);
    let n = d.cols as f64;
    for r in 0..d.rows {
        let row = &x[r * d.cols..(r + 1) * d.cols];
        let ms = row.iter().map(|v| v * v).sum::<f64>() / n;
        let rs = 1.0 / (ms + d.eps).sqrt();
        let g: Vec<f64> = (0..d.cols)
            .map(|j| dy[r * d.cols + j] * w.map_or(1.0, |w| w[j]))
            .collect();
        let sgx: f64 = (0..d.cols).map(|j| g[j] * row[j]).sum();
        for j in 0..d.cols {
            dx[r * d.cols + j] = rs * g[j] - rs * rs * rs * row[j] * sgx / n;
            dw[j] += dy[r * d.cols + j] * row[j] * rs;
        }
    }
    (dx, dw)
}

/// group_norm: `(y, mean, rstd)` with statistics per (sample, group).
pub fn group_norm_ref(
    x: &[f64],
    w: Option<&[f64]>,
    b: Option<&[f64]>,
    d: &GroupNormDesc,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let cpg = d.c / d.groups;
    let len = cpg * d.hw;
    let mut y = vec![0.0; x.len()];
    let (mut means, mut rstds) = (vec![], vec![]);
    for ni in 0..d.n {
        for g in 0..d.groups {
            let base = (ni * d.c + g * cpg) * d.hw;
            let (m, rs) = moments(x[base..base + len].iter().copied(), d.eps);
            for k in 0..len {
                let ch = g * cpg + k / d.hw.max(1);
                y[base + k] =
                    (x[base + k] - m) * rs * w.map_or(1.0, |w| w[ch]) + b.map_or(0.0, |b| b[ch]);
            }
            means.push(m);
            rstds.push(rs);
        }
    }
    (y, means, rstds)
}

/// group_norm backward: `(dx, dw, db)`.
pub fn group_norm_backward_ref(
    dy: &[f64],
    x: &[f64],
    w: Option<&[f64]>,
    d: &GroupNormDesc,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let cpg = d.c / d.groups;
    let len = cpg * d.hw;
    let (mut dx, mut dw, mut db) = (vec![0.0; x.len()], vec![0.0; d.c], vec![0.0; d.c]);
    for ni in 0..d.n {
        for g in 0..d.groups {
            let base = (ni * d.c + g * cpg) * d.hw;
            let (m, rs) = moments(x[base..base + len].iter().copied(), d.eps);
            let xhat: Vec<f64> = x[base..base + len].iter().map(|v| (v - m) * rs).collect();
            let ch = |k: usize| g * cpg + k / d.hw.max(1);
            let gr: Vec<f64> = (0..len)
                .map(|k| dy[base + k] * w.map_or(1.0, |w| w[ch(k)]))
                .collect();
            dx[base..base + len].copy_from_slice(&norm_backward_set(&gr, &xhat, rs));
            for k in 0..len {
                dw[ch(k)] += dy[base + k] * xhat[k];
                db[ch(k)] += dy[base + k];
            }
        }
    }
    (dx, dw, db)
}

/// batch_norm: `(y, new_running_mean, new_running_var)`. In training the running stats
/// (when given) move by `momentum` toward the batch mean and the unbiased batch variance.
pub fn batch_norm_ref(
    x: &[f64],
    w: Option<&[f64]>,
    b: Option<&[f64]>,
    running: Option<(&[f64], &[f64])>,
    d: &BatchNormDesc,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut y = vec![0.0; x.len()];
    let (mut rm, mut rv) = match running {
        Some((m, v)) => (m.to_vec(), v.to_vec()),
        None => (vec![], vec![]),
    };
    let cnt = (d.n * d.hw) as f64;
    for ch in 0..d.c {
        let idx = (0..d.n).flat_map(|ni| (0..d.hw).map(move |k| (ni * d.c + ch) * d.hw + k));
        let (m, rs) = if d.training {
            let (m, rs) = moments(idx.clone().map(|i| x[i]), d.eps);
            if !rm.is_empty() {
                let var = 1.0 / (rs * rs) - d.eps;
                rm[ch] = (1.0 - d.momentum) * rm[ch] + d.momentum * m;
                rv[ch] = (1.0 - d.momentum) * rv[ch] + d.momentum * var * cnt / (cnt - 1.0);
            }
            (m, rs)
        } else {
            let (m, v) = running.map(|(m, v)| (m[ch], v[ch])).unwrap_or((0.0, 1.0));
            (m, 1.0 / (v + d.eps).sqrt())
        };
        for i in idx {
            y[i] = (x[i] - m) * rs * w.map_or(1.0, |w| w[ch]) + b.map_or(0.0, |b| b[ch]);
        }
    }
    (y, rm, rv)
}

/// batch_norm backward: `(dx, dw, db)`; in eval mode the running stats are constants.
pub fn batch_norm_backward_ref(
    dy: &[f64],
    x: &[f64],
    w: Option<&[f64]>,
    running: Option<(&[f64], &[f64])>,
    d: &BatchNormDesc,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut dx, mut dw, mut db) = (vec![0.0; x.len()], vec![0.0; d.c], vec![0.0; d.c]);
    for ch in 0..d.c {
        let idx: Vec<usize> = (0..d.n)
            .flat_map(|ni| (0..d.hw).map(move |k| (ni * d.c + ch) * d.hw + k))
            .collect();
        let wc = w.map_or(1.0, |w| w[ch]);
        let (m, rs) = if d.training {
            moments(idx.iter().map(|&i| x[i]), d.eps)
        } else {
            let (m, v) = running.map(|(m, v)| (m[ch], v[ch])).unwrap_or((0.0, 1.0));
            (m, 1.0 / (v + d.eps).sqrt())
        };
        let xhat: Vec<f64> = idx.iter().map(|&i| (x[i] - m) * rs).collect();
        let g: Vec<f64> = idx.iter().map(|&i| dy[i] * wc).collect();
        let gx = if d.training {
            norm_backward_set(&g, &xhat, rs)
        } else {
            g.iter().map(|v| v * rs).collect()
        };
        for (k, &i) in idx.iter().enumerate() {
            dx[i] = gx[k];
            dw[ch] += dy[i] * xhat[k];
            db[ch] += dy[i];
        }
    }
    (dx, dw, db)
}

/// The losses before reduction, plus the divisor of `mean` (item count, or the count of
/// non-ignored targets for the class losses).
fn loss_items(input: &[f64], target: &[f64], d: &LossDesc) -> (Vec<f64>, f64) {
    match d.kind {
        LossKind::Mse => (
            input
                .iter()
                .zip(target)
                .map(|(x, t)| (x - t) * (x - t))
                .collect(),
            d.n as f64,
        ),
        LossKind::Bce => (
            input
                .iter()
                .zip(target)
                .map(|(&x, &t)| -(t * x.ln().max(-100.0) + (1.0 - t) * (1.0 - x).ln().max(-100.0)))
                .collect(),
            d.n as f64,
        ),
        LossKind::CrossEntropy | LossKind::Nll => {
            let mut out = vec![0.0; d.items()];
            let mut cnt = 0.0;
            for ni in 0..d.n {
                for i in 0..d.inner {
                    let r = ni * d.inner + i;
                    let t = target[r] as i64;
                    if t == d.ignore_index {
                        continue;
                    }
                    cnt += 1.0;
                    let at = |cl: usize| (ni * d.c + cl) * d.inner + i;
                    let t = t as usize;
                    out[r] = if d.kind == LossKind::Nll {
                        -input[at(t)]
                    } else {
                        let m = (0..d.c)
                            .map(|c| input[at(c)])
                            .fold(f64::NEG_INFINITY, f64::max);
                        let lse = m + (0..d.c).map(|c| (input[at(c)] - m).exp()).sum::<f64>().ln();
                        let smooth = (0..d.c).map(|c| lse - input[at(c)]).sum::<f64>() / d.c as f64;
                        (1.0 - d.label_smoothing) * (lse - input[at(t)])
                            + d.label_smoothing * smooth
                    };
                }
            }
            (out, cnt)
        }
    }
}

/// A loss in float64 (targets of the class losses given as f64 class indices).
pub fn loss_ref(input: &[f64], target: &[f64], d: &LossDesc) -> Vec<f64> {
    let (items, cnt) = loss_items(input, target, d);
    match d.reduction {
        Reduction::None => items,
        Reduction::Sum => vec![items.iter().sum()],
        Reduction::Mean => vec![items.iter().sum::<f64>() / cnt],
    }
}

/// Gradient of a loss with respect to its input; `grad_out` has one element per item for
/// `Reduction::None`, else one.
pub fn loss_backward_ref(
    input: &[f64],
    target: &[f64],
    grad_out: &[f64],
    d: &LossDesc,
) -> Vec<f64> {
    let (_, cnt) = loss_items(input, target, d);
    let g = |item: usize| match d.reduction {
        Reduction::None => grad_out[item],
        Reduction::Sum => grad_out[0],
        Reduction::Mean => grad_out[0] / cnt,
    };
    let mut gi = vec![0.0; input.len()];
    match d.kind {
        LossKind::Mse => {
            for i in 0..d.n {
                gi[i] = 2.0 * (input[i] - target[i]) * g(i);
            }
        }
        LossKind::Bce => {
            for i in 0..d.n {
                let (x, t) = (input[i], target[i]);
                gi[i] = (x - t) / ((1.0 - x) * x).max(1e-12) * g(i);
            }
        }
        LossKind::CrossEntropy | LossKind::Nll => {
            for ni in 0..d.n {
                for i in 0..d.inner {
                    let r = ni * d.inner + i;
                    let t = target[r] as i64;
                    if t == d.ignore_index {
                        continue;
                    }
                    let at = |cl: usize| (ni * d.c + cl) * d.inner + i;
                    let gr = g(r);
                    if d.kind == LossKind::Nll {
                        gi[at(t as usize)] = -gr;
                    } else {
                        let m = (0..d.c)
                            .map(|c| input[at(c)])
                            .fold(f64::NEG_INFINITY, f64::max);
                        let s: f64 = (0..d.c).map(|c| (input[at(c)] - m).exp()).sum();
                        for c in 0..d.c {
                            let p = (input[at(c)] - m).exp() / s;
                            let oh = if c == t as usize { 1.0 } else { 0.0 };
                            gi[at(c)] = (p
                                - (1.0 - d.label_smoothing) * oh
                                - d.label_smoothing / d.c as f64)
                                * gr;
                        }
                    }
                }
            }
        }
    }
    gi
}

/// RoPE in float64.
pub fn rope_ref(x: &[f64], d: &RopeDesc) -> Vec<f64> {
    let half = d.dim / 2;
    let mut y = vec![0.0; x.len()];
    for o in 0..d.outer {
        for s in 0..d.seq {
            for j in 0..d.inner {
                let base = ((o * d.seq + s) * d.inner + j) * d.dim;
                for i in 0..half {
                    let (sn, cs) = d.theta(s, i).sin_cos();
                    let (a, b) = (x[base + i], x[base + i + half]);
                    y[base + i] = a * cs - b * sn;
                    y[base + i + half] = b * cs + a * sn;
                }
            }
        }
    }
    y
}

/// The losses before reduction of a loss with [`LossExt`], plus the divisor of `mean`.
/// `weight`: `[C]` for the class losses, input-shaped for bce (None: all ones); `target`:
/// class probabilities (input-shaped) with `ext.prob_target`, else as for [`loss_ref`].
fn loss_ext_items(
    input: &[f64],
    target: &[f64],
    weight: Option<&[f64]>,
    d: &LossDesc,
    ext: &LossExt,
) -> (Vec<f64>, f64) {
    let w = |i: usize| weight.map_or(1.0, |w| w[i]);
    let ls = d.label_smoothing;
    let cf = d.c as f64;
    match d.kind {
        LossKind::Mse => loss_items(input, target, d),
        LossKind::Bce => {
            let (items, cnt) = loss_items(input, target, d);
            (
                items.iter().enumerate().map(|(i, l)| w(i) * l).collect(),
                cnt,
            )
        }
        LossKind::CrossEntropy | LossKind::Nll => {
            let mut out = vec![0.0; d.items()];
            let mut cnt = 0.0;
            for ni in 0..d.n {
                for i in 0..d.inner {
                    let r = ni * d.inner + i;
                    let at = |cl: usize| (ni * d.c + cl) * d.inner + i;
                    let lse = || {
                        let m = (0..d.c)
                            .map(|c| input[at(c)])
                            .fold(f64::NEG_INFINITY, f64::max);
                        m + (0..d.c).map(|c| (input[at(c)] - m).exp()).sum::<f64>().ln()
                    };
                    if ext.prob_target {
                        let lse = lse();
                        cnt += 1.0;
                        out[r] = (0..d.c)
                            .map(|c| {
                                w(c) * (target[at(c)] * (1.0 - ls) + ls / cf) * (lse - input[at(c)])
                            })
                            .sum();
                        continue;
                    }
                    let t = target[r] as i64;
                    if t == d.ignore_index {
                        continue;
                    }
                    let t = t as usize;
                    let wt = w(t);
                    cnt += wt;
                    out[r] = if d.kind == LossKind::Nll {
                        -wt * input[at(t)]
                    } else {
                        let lse = lse();
                        let smooth: f64 = (0..d.c).map(|c| w(c) * (lse - input[at(c)])).sum();
                        (1.0 - ls) * wt * (lse - input[at(t)]) + ls / cf * smooth
                    };
                }
            }
            (out, cnt)
        }
    }
}

/// A loss with class weights / probability targets ([`LossExt`]) in float64.
pub fn loss_ext_ref(
    input: &[f64],
    target: &[f64],
    weight: Option<&[f64]>,
    d: &LossDesc,
    ext: &LossExt,
) -> Vec<f64> {
    let (items, cnt) = loss_ext_items(input, target, weight, d, ext);
    match d.reduction {
        Reduction::None => items,
        Reduction::Sum => vec![items.iter().sum()],
        Reduction::Mean => vec![items.iter().sum::<f64>() / cnt],
    }
}

/// Gradient with respect to the input of [`loss_ext_ref`].
pub fn loss_ext_backward_ref(
    input: &[f64],
    target: &[f64],
    weight: Option<&[f64]>,
    grad_out: &[f64],
    d: &LossDesc,
    ext: &LossExt,
) -> Vec<f64> {
    let (_, cnt) = loss_ext_items(input, target, weight, d, ext);
    let w = |i: usize| weight.map_or(1.0, |w| w[i]);
    let g = |item: usize| match d.reduction {
        Reduction::None => grad_out[item],
        Reduction::Sum => grad_out[0],
        Reduction::Mean => grad_out[0] / cnt,
    };
    let ls = d.label_smoothing;
    let cf = d.c as f64;
    let mut gi = vec![0.0; input.len()];
    match d.kind {
        LossKind::Mse => return loss_backward_ref(input, target, grad_out, d),
        LossKind::Bce => {
            for i in 0..d.n {
                let (x, t) = (input[i], target[i]);
                gi[i] = w(i) * (x - t) / ((1.0 - x) * x).max(1e-12) * g(i);
            }
        }
        LossKind::CrossEntropy | LossKind::Nll => {
            for ni in 0..d.n {
                for i in 0..d.inner {
                    let r = ni * d.inner + i;
                    let at = |cl: usize| (ni * d.c + cl) * d.inner + i;
                    // The loss is sum_c a[c] (lse - x[c]) (nll: -a[t] x[t]); its gradient is
                    // p[c] sum(a) - a[c].
                    let a: Vec<f64> = if ext.prob_target {
                        (0..d.c)
                            .map(|c| w(c) * (target[at(c)] * (1.0 - ls) + ls / cf))
                            .collect()
                    } else {
                        let t = target[r] as i64;
                        if t == d.ignore_index {
                            continue;
                        }
                        let t = t as usize;
                        if d.kind == LossKind::Nll {
                            gi[at(t)] = -w(t) * g(r);
                            continue;
                        }
                        (0..d.c)
                            .map(|c| {
                                let oh = if c == t { (1.0 - ls) * w(t) } else { 0.0 };
                                oh + ls / cf * w(c)
                            })
                            .collect()
                    };
                    let sa: f64 = a.iter().sum();
                    let m = (0..d.c)
                        .map(|c| input[at(c)])
                        .fold(f64::NEG_INFINITY, f64::max);
                    let s: f64 = (0..d.c).map(|c| (input[at(c)] - m).exp()).sum();
                    for c in 0..d.c {
                        let p = (input[at(c)] - m).exp() / s;
                        gi[at(c)] = (p * sa - a[c]) * g(r);
                    }
                }
            }
        }
    }
    gi
}

/// RoPE from cos/sin caches ([`RopeCachedDesc`]) in float64; `positions` are the position
/// ids as f64 (None: `0..seq`), all in range.
pub fn rope_cached_ref(
    x: &[f64],
    cos: &[f64],
    sin: &[f64],
    positions: Option<&[f64]>,
    d: &RopeCachedDesc,
) -> Vec<f64> {
    let half = d.rot / 2;
    let mut y = x.to_vec();
    for o in 0..d.outer {
        for s in 0..d.seq {
            let p = positions.map_or(s, |p| p[d.position_index(o, s)] as usize);
            for j in 0..d.inner {
                let base = ((o * d.seq + s) * d.inner + j) * d.dim;
                for i in 0..half {
                    let (ia, ib) = d.pair(i);
                    let c = cos[p * half + i];
                    let sn = if d.inverse {
                        -sin[p * half + i]
                    } else {
                        sin[p * half + i]
                    };
                    let (a, b) = (x[base + ia], x[base + ib]);
                    y[base + ia] = a * c - b * sn;
                    y[base + ib] = b * c + a * sn;
                }
            }
        }
    }
    y
}

/// Attention probabilities of one query row (zeros past the causal limit).
fn attn_probs(q: &[f64], k: &[f64], d: &AttentionDesc, b: usize, i: usize) -> Vec<f64> {
    let nk = d.keys(i);
    let qr = &q[(b * d.sq + i) * d.d..][..d.d];
    let s: Vec<f64> = (0..nk)
        .map(|j| {
            let kr = &k[(b * d.sk + j) * d.d..][..d.d];
            d.scale * qr.iter().zip(kr).map(|(a, c)| a * c).sum::<f64>()
        })
        .collect();
    let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = s.iter().map(|v| (v - m).exp()).sum();
    let mut p: Vec<f64> = s.iter().map(|v| (v - m).exp() / z).collect();
    p.resize(d.sk, 0.0);
    p
}

/// scaled_dot_product_attention in float64.
pub fn attention_ref(q: &[f64], k: &[f64], v: &[f64], d: &AttentionDesc) -> Vec<f64> {
    let mut o = vec![0.0; d.batch * d.sq * d.dv];
    for b in 0..d.batch {
        for i in 0..d.sq {
            let p = attn_probs(q, k, d, b, i);
            for (j, pj) in p.iter().enumerate() {
                for e in 0..d.dv {
                    o[(b * d.sq + i) * d.dv + e] += pj * v[(b * d.sk + j) * d.dv + e];
                }
            }
        }
    }
    o
}

/// scaled_dot_product_attention backward: `(dq, dk, dv)`.
pub fn attention_backward_ref(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    dout: &[f64],
    d: &AttentionDesc,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut dq, mut dk, mut dvv) = (vec![0.0; q.len()], vec![0.0; k.len()], vec![0.0; v.len()]);
    for b in 0..d.batch {
        for i in 0..d.sq {
            let p = attn_probs(q, k, d, b, i);
            let dor = &dout[(b * d.sq + i) * d.dv..][..d.dv];
            let dp: Vec<f64> = (0..d.sk)
                .map(|j| {
                    let vr = &v[(b * d.sk + j) * d.dv..][..d.dv];
                    dor.iter().zip(vr).map(|(a, c)| a * c).sum()
                })
                .collect();
            let dot: f64 = p.iter().zip(&dp).map(|(a, c)| a * c).sum();
            for j in 0..d.sk {
                let ds = p[j] * (dp[j] - dot) * d.scale;
                for e in 0..d.dv {
                    dvv[(b * d.sk + j) * d.dv + e] += p[j] * dor[e];
                }
                for e in 0..d.d {
                    dq[(b * d.sq + i) * d.d + e] += ds * k[(b * d.sk + j) * d.d + e];
                    dk[(b * d.sk + j) * d.d + e] += ds * q[(b * d.sq + i) * d.d + e];
                }
            }
        }
    }
    (dq, dk, dvv)
}

/// One query row's probabilities under an [`AttentionPlan`] in float64, as PyTorch's math
/// backend computes them: scores `scale * q.k`, the mask added (a false bool entry, or a
/// key past the causal limit, is -inf), then `_safe_softmax` (a row of only -inf gives 0).
fn plan_probs(
    q: &[f64],
    k: &[f64],
    mask: Option<&[f64]>,
    p: &AttentionPlan,
    b: usize,
    i: usize,
) -> Vec<f64> {
    let (qm, km) = (p.matrix_of(&p.q_lead, b), p.matrix_of(&p.k_lead, b));
    let qr = &q[(qm * p.sq + i) * p.d..][..p.d];
    let nk = p.causal.keys(i, p.sq, p.sk);
    let mut s: Vec<f64> = (0..p.sk)
        .map(|j| {
            if j >= nk {
                return f64::NEG_INFINITY;
            }
            let kr = &k[(km * p.sk + j) * p.d..][..p.d];
            p.scale * qr.iter().zip(kr).map(|(a, c)| a * c).sum::<f64>()
        })
        .collect();
    if let (Some(mv), Some((ms, mdt))) = (mask, &p.mask) {
        let r = p.lead.len();
        let mm = p.matrix_of(&ms[..r], b);
        let (mq, mk) = (ms[r], ms[r + 1]);
        for (j, sj) in s.iter_mut().enumerate() {
            let v = mv[(mm * mq + if mq > 1 { i } else { 0 }) * mk + if mk > 1 { j } else { 0 }];
            if *mdt == DType::Bool {
                if v == 0.0 {
                    *sj = f64::NEG_INFINITY;
                }
            } else {
                *sj += v;
            }
        }
    }
    if s.iter().all(|&v| v == f64::NEG_INFINITY) {
        return vec![0.0; p.sk];
    }
    let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = s.iter().map(|v| (v - m).exp()).sum();
    s.iter().map(|v| (v - m).exp() / z).collect()
}

/// scaled_dot_product_attention under an [`AttentionPlan`] in float64, on the callers'
/// tensors (`mask`: its values, a bool mask as 0/1).
pub fn attention_plan_ref(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    mask: Option<&[f64]>,
    p: &AttentionPlan,
) -> Vec<f64> {
    let batch = p.batch();
    let mut o = vec![0.0; batch * p.sq * p.dv];
    for b in 0..batch {
        let vm = p.matrix_of(&p.v_lead, b);
        for i in 0..p.sq {
            let pr = plan_probs(q, k, mask, p, b, i);
            for (j, pj) in pr.iter().enumerate() {
                for e in 0..p.dv {
                    o[(b * p.sq + i) * p.dv + e] += pj * v[(vm * p.sk + j) * p.dv + e];
                }
            }
        }
    }
    o
}

/// The backward of [`attention_plan_ref`]: `(dq, dk, dv)` of the callers' shapes (summed
/// over what each input was broadcast or repeated along).
pub fn attention_plan_backward_ref(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    mask: Option<&[f64]>,
    dout: &[f64],
    p: &AttentionPlan,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut dq, mut dk, mut dvv) = (vec![0.0; q.len()], vec![0.0; k.len()], vec![0.0; v.len()]);
    for b in 0..p.batch() {
        let (qm, km, vm) = (
            p.matrix_of(&p.q_lead, b),
            p.matrix_of(&p.k_lead, b),
            p.matrix_of(&p.v_lead, b),
        );
        for i in 0..p.sq {
            let pr = plan_probs(q, k, mask, p, b, i);
            let dor = &dout[(b * p.sq + i) * p.dv..][..p.dv];
            let dp: Vec<f64> = (0..p.sk)
                .map(|j| {
                    let vr = &v[(vm * p.sk + j) * p.dv..][..p.dv];
                    dor.iter().zip(vr).map(|(a, c)| a * c).sum()
                })
                .collect();
            let dot: f64 = pr.iter().zip(&dp).map(|(a, c)| a * c).sum();
            for j in 0..p.sk {
                let ds = pr[j] * (dp[j] - dot) * p.scale;
                for e in 0..p.dv {
                    dvv[(vm * p.sk + j) * p.dv + e] += pr[j] * dor[e];
                }
                for e in 0..p.d {
                    dq[(qm * p.sq + i) * p.d + e] += ds * k[(km * p.sk + j) * p.d + e];
                    dk[(km * p.sk + j) * p.d + e] += ds * q[(qm * p.sq + i) * p.d + e];
                }
            }
        }
    }
    (dq, dk, dvv)
}

/// weighted_sum in float64.
pub fn weighted_sum_ref(x: &[f64], w: &[f64], d: &WeightedSumDesc) -> Vec<f64> {
    let mut y = vec![0.0; d.outer * d.d];
    for o in 0..d.outer {
        for k in 0..d.n {
            for e in 0..d.d {
                y[o * d.d + e] += w[o * d.n + k] * x[(o * d.n + k) * d.d + e];
            }
        }
    }
    y
}

/// weighted_sum backward: `(dx, dw)`.
pub fn weighted_sum_backward_ref(
    x: &[f64],
    w: &[f64],
    dy: &[f64],
    d: &WeightedSumDesc,
) -> (Vec<f64>, Vec<f64>) {
    let (mut dx, mut dw) = (vec![0.0; x.len()], vec![0.0; w.len()]);
    for o in 0..d.outer {
        for k in 0..d.n {
            for e in 0..d.d {
                dx[(o * d.n + k) * d.d + e] = w[o * d.n + k] * dy[o * d.d + e];
                dw[o * d.n + k] += x[(o * d.n + k) * d.d + e] * dy[o * d.d + e];
            }
        }
    }
    (dx, dw)
}
