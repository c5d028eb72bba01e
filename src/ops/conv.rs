//! Convolution's contract (`torch.nn.functional.conv1d/2d/3d`, `conv_transpose2d`), NCHW:
//! attributes, shape inference with errors that name the op, the geometry handed to devices,
//! and the float64 references (direct loops) the tests compare with.

use crate::ops::elementwise::UnaryOp;
use crate::{Error, Result};

/// Which of a convolution's tensors are in the blocked layout `[n, c / 16, h, w, 16]`
/// (ONNX Runtime's NCHWc with [`BLOCK_LANES`] channels a block: a position's 16 channels in
/// one 64-byte line) instead of NCHW: the input `x`, and the output `y` with the residual,
/// which has `y`'s layout. The executor chooses it between the CPU's packed convolutions
/// ([`crate::graph::passes::block_conv_layouts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Blocked {
    pub x: bool,
    pub y: bool,
}

/// Channels of a block of the blocked layout ([`Blocked`]).
pub const BLOCK_LANES: usize = 16;

/// The blocked layout's shape `[n, c / 16, spatial.., 16]` of the NCHW-shaped `shape`
/// (`c` a multiple of [`BLOCK_LANES`]).
pub fn blocked_shape(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![shape[0], shape[1] / BLOCK_LANES];
    s.extend_from_slice(&shape[2..]);
    s.push(BLOCK_LANES);
    s
}

/// Attributes of a convolution with `ndim` spatial dimensions; each list has 1 entry (used for
/// every dimension) or `ndim` entries, as PyTorch accepts an int or a tuple.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvAttrs {
    pub stride: Vec<usize>,
    pub padding: Vec<usize>,
    pub dilation: Vec<usize>,
    pub groups: usize,
    /// Transposed convolution only.
    pub output_padding: Vec<usize>,
}

impl Default for ConvAttrs {
    fn default() -> Self {
        ConvAttrs {
            stride: vec![1],
            padding: vec![0],
            dilation: vec![1],
            groups: 1,
            output_padding: vec![0],
        }
    }
}

/// Attributes of a convolution with padding per side (`rb_conv_params_ex`):
/// `attrs.padding` is the padding before each spatial dim, `pad_after` the padding after it
/// (1 or `ndim` entries each). PyTorch's `padding='same'` with an odd total, ONNX's
/// SAME_UPPER / SAME_LOWER and explicit `pads` are such convolutions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvAttrsEx {
    pub attrs: ConvAttrs,
    pub pad_after: Vec<usize>,
    /// The layout of the input, output and filter tensors (channels-first by default).
    pub layout: Layout,
}

/// The memory layout of the tensors of a convolution, pooling or batch norm (the C ABI's
/// `rb_layout`): channels first (`[N, C, D, H, W]`, PyTorch's default) or channels last
/// (`[N, D, H, W, C]`, PyTorch's `channels_last` / `channels_last_3d` memory format, the
/// layout tensor cores want for f16/bf16). A channels-last op's results equal the
/// channels-first op's up to that permutation; a channels-last convolution's filter is
/// `[K, kD, kH, kW, C / groups]` (PyTorch's channels_last weight).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    #[default]
    ChannelsFirst = 0,
    ChannelsLast = 1,
}

impl Layout {
    pub fn from_i32(v: i32, op: &str) -> Result<Self> {
        match v {
            0 => Ok(Layout::ChannelsFirst),
            1 => Ok(Layout::ChannelsLast),
            _ => Err(Error::invalid(format!(
                "{op}: layout={v} is not an rb_layout (0 channels first (NCHW), 1 channels last (NHWC))"
            ))),
        }
    }

    /// The permutation taking a channels-first tensor of `rank` (>= 2) to channels last:
    /// `[0, 2, 3, ..., rank - 1, 1]`.
    pub fn to_last_perm(rank: usize) -> Vec<usize> {
        let mut p = vec![0];
        p.extend(2..rank);
        if rank > 1 {
            p.push(1);
        }
        p
    }

    /// The permutation taking a channels-last tensor of `rank` (>= 2) to channels first:
    /// `[0, rank - 1, 1, ..., rank - 2]`.
    pub fn to_first_perm(rank: usize) -> Vec<usize> {
        let mut p = vec![0];
        if rank > 1 {
            p.push(rank - 1);
        }
        p.extend(1..rank.saturating_sub(1));
        p
    }

    /// A channels-last shape as channels first (`[N, H, W, C]` -> `[N, C, H, W]`).
    pub fn first_shape(last: &[usize]) -> Vec<usize> {
        Self::to_first_perm(last.len())
            .iter()
            .map(|&d| last[d])
            .collect()
    }

    /// A channels-first shape as channels last (`[N, C, H, W]` -> `[N, H, W, C]`).
    pub fn last_shape(first: &[usize]) -> Vec<usize> {
        Self::to_last_perm(first.len())
            .iter()
            .map(|&d| first[d])
            .collect()
    }
}

impl ConvAttrsEx {
    /// The padding before and after each spatial dim (3 entries, the front ones 0), or None
    /// when they are equal (a plain convolution with `attrs`).
    pub fn asymmetric(&self, op: &str, ndim: usize) -> Result<Option<([usize; 3], [usize; 3])>> {
        let before = expand(op, "padding", &self.attrs.padding, ndim, 0)?;
        let after = expand(op, "padding", &self.pad_after, ndim, 0)?;
        Ok((before != after).then_some((before, after)))
    }
}

/// The activation applied in a fused epilogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Activation {
    #[default]
    None,
    Relu,
    /// `tanh`: the tanh approximation, else the exact erf form.
    Gelu {
        tanh: bool,
    },
}

impl Activation {
    #[inline(always)]
    pub fn apply_f32(self, v: f32) -> f32 {
        match self {
            Activation::None => v,
            Activation::Relu => crate::ops::elementwise::relu_f32(v),
            Activation::Gelu { tanh } => UnaryOp::Gelu { tanh }.apply_f32(v),
        }
    }
    pub fn apply_f64(self, v: f64) -> f64 {
        match self {
            Activation::None => v,
            Activation::Relu => crate::ops::elementwise::relu_f64(v),
            Activation::Gelu { tanh } => UnaryOp::Gelu { tanh }.reference(v),
        }
    }
}

/// A convolution as the device sees it: `y = conv(x, w)` with `x` `[n, c_in, in_sp]`, `w`
/// `[c_out, c_in / groups, k_sp]`, `y` `[n, c_out, out_sp]`. Spatial extents are padded at
/// the front to three dimensions with size 1 (stride 1, padding 0, dilation 1), so 1-D and 2-D
/// problems are 3-D problems. A transposed convolution is described by the convolution whose
/// data gradient it is (its output is this geometry's `x`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvGeom {
    /// 1, 2 or 3: how many spatial dimensions the caller's tensors have.
    pub ndim: usize,
    pub n: usize,
    pub c_in: usize,
    pub c_out: usize,
    pub groups: usize,
    pub in_sp: [usize; 3],
    pub k_sp: [usize; 3],
    pub out_sp: [usize; 3],
    pub stride: [usize; 3],
    pub pad: [usize; 3],
    pub dil: [usize; 3],
    /// The tensors are channels-last (`x` `[N, ..., C]`, `w` `[K, ..., C / groups]`, `y`
    /// `[N, ..., K]`); the fields above keep their channels-first meaning. Only devices that
    /// answer `ConvOps::has_channels_last_conv` get such a geometry.
    pub channels_last: bool,
}

/// Expands an attribute list (1 value, or `ndim` values, as PyTorch accepts an int or a tuple)
/// to three spatial dimensions, padding the front with `fill`. Shared with pooling.
pub(crate) fn expand(
    op: &str,
    name: &str,
    v: &[usize],
    ndim: usize,
    fill: usize,
) -> Result<[usize; 3]> {
    let vals: Vec<usize> = match v.len() {
        1 => vec![v[0]; ndim],
        l if l == ndim => v.to_vec(),
        l => {
            return Err(Error::invalid(format!(
                "{op}: {name} has {l} values, expected 1 or {ndim}"
            )));
        }
    };
    if let Some(v) = vals.iter().find(|&&v| v > i32::MAX as usize) {
        return Err(Error::invalid(format!(
            "{op}: {name} value {v} is too large"
        )));
    }
    let mut out = [fill; 3];
    out[3 - ndim..].copy_from_slice(&vals);
    Ok(out)
}

fn pad3(v: &[usize]) -> [usize; 3] {
    let mut out = [1; 3];
    out[3 - v.len()..].copy_from_slice(v);
    out
}

impl ConvGeom {
    fn sp(&self, a: [usize; 3]) -> Vec<usize> {
        a[3 - self.ndim..].to_vec()
    }
    pub fn x_shape(&self) -> Vec<usize> {
        [vec![self.n, self.c_in], self.sp(self.in_sp)].concat()
    }
    pub fn w_shape(&self) -> Vec<usize> {
        [
            vec![self.c_out, self.c_in / self.groups],
            self.sp(self.k_sp),
        ]
        .concat()
    }
    pub fn y_shape(&self) -> Vec<usize> {
        [vec![self.n, self.c_out], self.sp(self.out_sp)].concat()
    }
    pub fn in_vol(&self) -> usize {
        self.in_sp.iter().product()
    }
    pub fn k_vol(&self) -> usize {
        self.k_sp.iter().product()
    }
    pub fn out_vol(&self) -> usize {
        self.out_sp.iter().product()
    }
    /// Elements of one image's im2col matrix: `(c_in / groups) * k_vol` rows, `out_vol`
    /// columns, for every group.
    pub fn col_elems(&self) -> usize {
        self.c_in * self.k_vol() * self.out_vol()
    }
    /// Multiply-adds of the forward pass.
    pub fn macs(&self) -> usize {
        self.n * self.c_out * self.out_vol() * (self.c_in / self.groups) * self.k_vol()
    }
    /// Checks that every buffer size of the problem (x, w, y, the im2col matrix, in bytes of
    /// f32) fits in `usize`.
    pub fn check_sizes(&self, op: &str) -> Result<()> {
        let prod = |v: &[usize]| v.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
        let cols = prod(&[self.c_in, self.k_vol(), self.out_vol(), 4]);
        let ok = [
            prod(&self.x_shape()),
            prod(&self.w_shape()),
            prod(&self.y_shape()),
            prod(&self.in_sp),
            prod(&self.k_sp),
            prod(&self.out_sp),
        ]
        .iter()
        .all(|v| v.and_then(|n| n.checked_mul(8)).is_some());
        if !ok || cols.is_none() {
            return Err(Error::invalid(format!(
                "{op}: the problem's sizes overflow (input {:?}, weight {:?})",
                self.x_shape(),
                self.w_shape()
            )));
        }
        Ok(())
    }

    /// Checks the geometry's own consistency (for the raw `rb_dnn_*` entry points).
    pub fn validate(&self, op: &str) -> Result<()> {
        if !(1..=3).contains(&self.ndim) {
            return Err(Error::invalid(format!(
                "{op}: ndim={} is not 1, 2 or 3",
                self.ndim
            )));
        }
        if self.groups == 0
            || !self.c_in.is_multiple_of(self.groups)
            || !self.c_out.is_multiple_of(self.groups)
        {
            return Err(Error::invalid(format!(
                "{op}: groups={} must divide in_channels={} and out_channels={}",
                self.groups, self.c_in, self.c_out
            )));
        }
        for d in 0..3 {
            if self.stride[d] == 0 || self.dil[d] == 0 {
                return Err(Error::invalid(format!(
                    "{op}: stride and dilation must be positive, got {:?} and {:?}",
                    self.sp(self.stride),
                    self.sp(self.dil)
                )));
            }
            let eff = self.dil[d] * (self.k_sp[d].max(1) - 1) + 1;
            let padded = self.in_sp[d] + 2 * self.pad[d];
            if self.k_sp[d] == 0 || padded < eff {
                return Err(Error::shape(format!(
                    "{op}: kernel {:?} (dilation {:?}) is larger than the padded input {:?}",
                    self.sp(self.k_sp),
                    self.sp(self.dil),
                    self.sp(self.in_sp)
                )));
            }
            // Equal for a convolution; a transposed convolution's output_padding may leave
            // input positions no window reaches (they get zero gradient).
            if self.out_sp[d] == 0 || self.out_sp[d] > (padded - eff) / self.stride[d] + 1 {
                return Err(Error::shape(format!(
                    "{op}: output size {:?} does not match input {:?}, kernel {:?}, stride {:?}, padding {:?}, dilation {:?}",
                    self.sp(self.out_sp),
                    self.sp(self.in_sp),
                    self.sp(self.k_sp),
                    self.sp(self.stride),
                    self.sp(self.pad),
                    self.sp(self.dil)
                )));
            }
        }
        Ok(())
    }
}

/// The checks every convolution starts with: input and weight of rank `ndim + 2`, positive
/// groups (returned).
fn check_rank_groups(
    op: &str,
    x: &[usize],
    w: &[usize],
    attrs: &ConvAttrs,
    ndim: usize,
) -> Result<usize> {
    if x.len() != ndim + 2 {
        return Err(Error::shape(format!(
            "{op}: input must have {} dimensions (N, C, {} spatial), got shape {x:?}",
            ndim + 2,
            ndim
        )));
    }
    if w.len() != ndim + 2 {
        return Err(Error::shape(format!(
            "{op}: weight must have {} dimensions, got shape {w:?}",
            ndim + 2
        )));
    }
    let groups = attrs.groups;
    if groups == 0 {
        return Err(Error::invalid(format!("{op}: groups must be positive")));
    }
    Ok(groups)
}

/// Geometry of `conv{ndim}d(x, w)` (PyTorch's rules and error cases).
pub fn conv_geom(
    op: &str,
    x: &[usize],
    w: &[usize],
    attrs: &ConvAttrs,
    ndim: usize,
) -> Result<ConvGeom> {
    let groups = check_rank_groups(op, x, w, attrs, ndim)?;
    if !w[0].is_multiple_of(groups) {
        return Err(Error::invalid(format!(
            "{op}: out_channels={} (weight dim 0) is not divisible by groups={groups}",
            w[0]
        )));
    }
    if x[1] != w[1] * groups {
        return Err(Error::shape(format!(
            "{op}: input has {} channels but weight {w:?} with groups={groups} expects {}",
            x[1],
            w[1] * groups
        )));
    }
    let stride = expand(op, "stride", &attrs.stride, ndim, 1)?;
    let pad = expand(op, "padding", &attrs.padding, ndim, 0)?;
    let dil = expand(op, "dilation", &attrs.dilation, ndim, 1)?;
    let in_sp = pad3(&x[2..]);
    let k_sp = pad3(&w[2..]);
    let mut out_sp = [1; 3];
    for d in 0..3 {
        if stride[d] == 0 {
            return Err(Error::invalid(format!(
                "{op}: stride must be positive, got {:?}",
                attrs.stride
            )));
        }
        if dil[d] == 0 {
            return Err(Error::invalid(format!(
                "{op}: dilation must be positive, got {:?}",
                attrs.dilation
            )));
        }
        if k_sp[d] == 0 {
            return Err(Error::shape(format!(
                "{op}: weight {w:?} has an empty kernel"
            )));
        }
        let eff = dil[d] * (k_sp[d] - 1) + 1;
        let padded = in_sp[d] + 2 * pad[d];
        if padded < eff {
            return Err(Error::shape(format!(
                "{op}: kernel size {:?} (dilated) is larger than the padded input size {:?}",
                &w[2..],
                &x[2..]
            )));
        }
        out_sp[d] = (padded - eff) / stride[d] + 1;
    }
    let g = ConvGeom {
        ndim,
        n: x[0],
        c_in: x[1],
        c_out: w[0],
        groups,
        in_sp,
        k_sp,
        out_sp,
        stride,
        pad,
        dil,
        channels_last: false,
    };
    g.check_sizes(op)?;
    Ok(g)
}

/// Geometry of `conv_transpose{ndim}d(x, w)` with `x` `[n, c_in, sp]` and `w`
/// `[c_in, c_out / groups, k]`: the convolution whose data gradient it is (that
/// convolution's `x` is the result, its `y` is this op's input).
pub fn conv_transpose_geom(
    op: &str,
    x: &[usize],
    w: &[usize],
    attrs: &ConvAttrs,
    ndim: usize,
) -> Result<ConvGeom> {
    let groups = check_rank_groups(op, x, w, attrs, ndim)?;
    if x[1] != w[0] {
        return Err(Error::shape(format!(
            "{op}: input has {} channels but weight {w:?} expects {}",
            x[1], w[0]
        )));
    }
    if !w[0].is_multiple_of(groups) {
        return Err(Error::invalid(format!(
            "{op}: in_channels={} is not divisible by groups={groups}",
            w[0]
        )));
    }
    let stride = expand(op, "stride", &attrs.stride, ndim, 1)?;
    let pad = expand(op, "padding", &attrs.padding, ndim, 0)?;
    let dil = expand(op, "dilation", &attrs.dilation, ndim, 1)?;
    let opad = expand(op, "output_padding", &attrs.output_padding, ndim, 0)?;
    let out_sp = pad3(&x[2..]);
    let k_sp = pad3(&w[2..]);
    let mut in_sp = [1; 3];
    for d in 0..3 {
        if stride[d] == 0 || dil[d] == 0 {
            return Err(Error::invalid(format!(
                "{op}: stride and dilation must be positive, got {:?} and {:?}",
                attrs.stride, attrs.dilation
            )));
        }
        if opad[d] >= stride[d].max(dil[d]) {
            return Err(Error::invalid(format!(
                "{op}: output_padding {:?} must be smaller than stride or dilation",
                attrs.output_padding
            )));
        }
        if k_sp[d] == 0 {
            return Err(Error::shape(format!(
                "{op}: weight {w:?} has an empty kernel"
            )));
        }
        if out_sp[d] == 0 {
            return Err(Error::shape(format!(
                "{op}: input {x:?} has an empty spatial dimension"
            )));
        }
        let full = (out_sp[d] - 1) * stride[d] + dil[d] * (k_sp[d] - 1) + opad[d] + 1;
        if full <= 2 * pad[d] {
            return Err(Error::shape(format!(
                "{op}: padding {:?} leaves an empty output for input {x:?}",
                attrs.padding
            )));
        }
        in_sp[d] = full - 2 * pad[d];
    }
    let g = ConvGeom {
        ndim,
        n: x[0],
        c_in: w[1] * groups,
        c_out: w[0],
        groups,
        in_sp,
        k_sp,
        out_sp,
        stride,
        pad,
        dil,
        channels_last: false,
    };
    g.check_sizes(op)?;
    Ok(g)
}

/// Visits every (output position, kernel position) pair whose input position is inside the
/// image: `f(n, g, oc, ic, y_index, x_index, w_index)` with flat indices.
fn for_each_tap(g: &ConvGeom, mut f: impl FnMut(usize, usize, usize, usize)) {
    let cg = g.c_in / g.groups;
    let kg = g.c_out / g.groups;
    let [id, ih, iw] = g.in_sp;
    let [od, oh, ow] = g.out_sp;
    let [kd, kh, kw] = g.k_sp;
    for n in 0..g.n {
        for oc in 0..g.c_out {
            let grp = oc / kg;
            for ci in 0..cg {
                let ic = grp * cg + ci;
                for a in 0..od {
                    for b in 0..oh {
                        for c in 0..ow {
                            let yi = (((n * g.c_out + oc) * od + a) * oh + b) * ow + c;
                            for p in 0..kd {
                                let z =
                                    (a * g.stride[0] + p * g.dil[0]) as isize - g.pad[0] as isize;
                                if z < 0 || z >= id as isize {
                                    continue;
                                }
                                for q in 0..kh {
                                    let y = (b * g.stride[1] + q * g.dil[1]) as isize
                                        - g.pad[1] as isize;
                                    if y < 0 || y >= ih as isize {
                                        continue;
                                    }
                                    for r in 0..kw {
                                        let x = (c * g.stride[2] + r * g.dil[2]) as isize
                                            - g.pad[2] as isize;
                                        if x < 0 || x >= iw as isize {
                                            continue;
                                        }
                                        let xi = (((n * g.c_in + ic) * id + z as usize) * ih
                                            + y as usize)
                                            * iw
                                            + x as usize;
                                        let wi = (((oc * cg + ci) * kd + p) * kh + q) * kw + r;
                                        f(yi, xi, wi, oc);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Float64 reference of the forward convolution (`bias` of `c_out` values, optional).
pub fn conv_reference(g: &ConvGeom, x: &[f64], w: &[f64], bias: Option<&[f64]>) -> Vec<f64> {
    let ov = g.out_vol();
    let mut y = vec![0.0; g.n * g.c_out * ov];
    if let Some(b) = bias {
        for (i, v) in y.iter_mut().enumerate() {
            *v = b[(i / ov) % g.c_out];
        }
    }
    for_each_tap(g, |yi, xi, wi, _| y[yi] += x[xi] * w[wi]);
    y
}

/// Float64 reference of the data gradient: `dx` from `dy` (shape of `y`) and `w`.
pub fn conv_backward_data_reference(g: &ConvGeom, dy: &[f64], w: &[f64]) -> Vec<f64> {
    let mut dx = vec![0.0; g.n * g.c_in * g.in_vol()];
    for_each_tap(g, |yi, xi, wi, _| dx[xi] += dy[yi] * w[wi]);
    dx
}

/// Float64 reference of the weight gradient (`dw`) and the bias gradient (`db`).
pub fn conv_backward_weight_reference(g: &ConvGeom, x: &[f64], dy: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut dw = vec![0.0; g.c_out * (g.c_in / g.groups) * g.k_vol()];
    for_each_tap(g, |yi, xi, wi, _| dw[wi] += dy[yi] * x[xi]);
    let ov = g.out_vol();
    let mut db = vec![0.0; g.c_out];
    for (i, v) in dy.iter().enumerate() {
        db[(i / ov) % g.c_out] += v;
    }
    (dw, db)
}

/// Folds an inference batch norm into a convolution's weight and bias:
/// `bn(conv(x, w) + b) = conv(x, w') + b'` with `s = gamma / sqrt(var + eps)`, `w' = w * s`
/// per output channel and `b' = (b - mean) * s + beta`. Returns `(w', b')` in f64.
#[allow(clippy::too_many_arguments)]
pub fn fold_batch_norm(
    w: &[f64],
    bias: Option<&[f64]>,
    mean: &[f64],
    var: &[f64],
    gamma: &[f64],
    beta: &[f64],
    eps: f64,
    c_out: usize,
) -> (Vec<f64>, Vec<f64>) {
    let per = w.len() / c_out.max(1);
    let mut w2 = w.to_vec();
    let mut b2 = vec![0.0; c_out];
    for k in 0..c_out {
        let s = gamma[k] / (var[k] + eps).sqrt();
        for v in &mut w2[k * per..(k + 1) * per] {
            *v *= s;
        }
        b2[k] = (bias.map_or(0.0, |b| b[k]) - mean[k]) * s + beta[k];
    }
    (w2, b2)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn torch_output_sizes() {
        let a = ConvAttrs {
            stride: vec![2],
            padding: vec![1],
            dilation: vec![1],
            groups: 1,
            output_padding: vec![1],
        };
        let g = conv_geom("conv2d", &[1, 3, 7, 8], &[4, 3, 3, 3], &a, 2).unwrap();
        assert_eq!(g.y_shape(), vec![1, 4, 4, 4]);
        let t =
            conv_transpose_geom("conv_transpose2d", &[1, 4, 4, 4], &[4, 3, 3, 3], &a, 2).unwrap();
        assert_eq!(t.x_shape(), vec![1, 3, 8, 8]);
        g.validate("conv2d").unwrap();
        assert!(
            conv_geom(
                "conv2d",
                &[1, 3, 2, 2],
                &[4, 3, 5, 5],
                &ConvAttrs::default(),
                2
            )
            .is_err()
        );
    }
}
