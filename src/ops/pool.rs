//! Pooling's contract (`torch.nn.functional.max_pool1d/2d/3d`, `avg_pool1d/2d/3d`,
//! `adaptive_avg_pool1d/2d/3d`, `adaptive_max_pool1d/2d/3d`): attributes, output sizes (PyTorch's `ceil_mode` rule), the
//! geometry handed to devices, and the float64 references.

use crate::ops::conv::{Layout, expand};
use crate::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolKind {
    /// NaN propagates; ties give the first position in scan order (gradient goes there),
    /// among NaNs the last (PyTorch's kernels let every NaN replace the maximum).
    Max,
    Avg {
        count_include_pad: bool,
    },
}

impl PoolKind {
    pub fn name(self) -> &'static str {
        match self {
            PoolKind::Max => "max_pool",
            PoolKind::Avg { .. } => "avg_pool",
        }
    }
}

/// Attributes; each list has 1 entry or one per spatial dimension. `stride` empty means
/// "equal to the kernel" (PyTorch's default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolAttrs {
    pub kernel: Vec<usize>,
    pub stride: Vec<usize>,
    pub padding: Vec<usize>,
    /// Max pooling only (avg pooling requires 1).
    pub dilation: Vec<usize>,
    pub ceil_mode: bool,
}

/// Pooling attributes with padding per side and average pooling's `divisor_override`
/// (`rb_pool_params_ex`): `attrs.padding` is the padding before each spatial dim,
/// `pad_after` the padding after it (1 or ndim entries, each at most half the kernel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolAttrsEx {
    pub attrs: PoolAttrs,
    pub pad_after: Vec<usize>,
    /// Average pooling: divide every window sum by this (PyTorch's `divisor_override`;
    /// nonzero) instead of the window's count.
    pub divisor_override: Option<i64>,
    /// The layout of the input and output (channels-first by default).
    pub layout: Layout,
}

/// Pooling as the device sees it, padded to three spatial dimensions like [`ConvGeom`].
///
/// [`ConvGeom`]: crate::ops::conv::ConvGeom
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolGeom {
    pub ndim: usize,
    pub kind: PoolKind,
    pub n: usize,
    pub c: usize,
    pub in_sp: [usize; 3],
    pub out_sp: [usize; 3],
    pub k: [usize; 3],
    pub stride: [usize; 3],
    /// Padding before each spatial dim (where windows start).
    pub pad: [usize; 3],
    /// Padding after each spatial dim (equal to `pad` for PyTorch's symmetric padding):
    /// average pooling's windows are clipped to `in + pad_after`.
    pub pad_after: [usize; 3],
    pub dil: [usize; 3],
    /// Average pooling's divisor when nonzero (PyTorch's `divisor_override`).
    pub divisor_override: i64,
}

/// PyTorch's `pooling_output_shape_pad_lr` (`pooling_output_shape` when `pa == p`): the
/// last window of ceil_mode must start inside the input or the padding before it.
#[allow(clippy::too_many_arguments)]
fn out_size(
    op: &str,
    i: usize,
    k: usize,
    s: usize,
    p: usize,
    pa: usize,
    d: usize,
    ceil: bool,
) -> Result<usize> {
    let eff = d * (k - 1) + 1;
    let num = (i + p + pa) as isize - eff as isize;
    if num < 0 {
        return Err(Error::shape(if p == pa {
            format!("{op}: kernel {k} (dilation {d}) is larger than the padded input {i} + 2*{p}")
        } else {
            format!(
                "{op}: kernel {k} (dilation {d}) is larger than the padded input {p} + {i} + {pa}"
            )
        }));
    }
    let num = num as usize;
    let mut o = if ceil { num.div_ceil(s) } else { num / s } + 1;
    if ceil && (o - 1) * s >= i + p {
        o -= 1;
    }
    Ok(o)
}

impl PoolGeom {
    fn sp(&self, a: [usize; 3]) -> Vec<usize> {
        a[3 - self.ndim..].to_vec()
    }
    pub fn x_shape(&self) -> Vec<usize> {
        [vec![self.n, self.c], self.sp(self.in_sp)].concat()
    }
    pub fn y_shape(&self) -> Vec<usize> {
        [vec![self.n, self.c], self.sp(self.out_sp)].concat()
    }
    pub fn in_vol(&self) -> usize {
        self.in_sp.iter().product()
    }
    pub fn out_vol(&self) -> usize {
        self.out_sp.iter().product()
    }

    /// The input positions (flat within one channel) of output position `o` (flat), each with
    /// its weight for average pooling; for max pooling every valid position has weight 1.
    /// Calls `f(index, weight)`; returns nothing for a window with no valid position.
    #[inline]
    pub fn window(&self, o: usize, mut f: impl FnMut(usize)) -> usize {
        let [_, oh, ow] = self.out_sp;
        let [id, ih, iw] = self.in_sp;
        let od_i = o / (oh * ow);
        let oh_i = (o / ow) % oh;
        let ow_i = o % ow;
        let start = |oi: usize, d: usize| (oi * self.stride[d]) as isize - self.pad[d] as isize;
        let (s0, s1, s2) = (start(od_i, 0), start(oh_i, 1), start(ow_i, 2));
        let mut valid = 0;
        for a in 0..self.k[0] {
            let z = s0 + (a * self.dil[0]) as isize;
            if z < 0 || z >= id as isize {
                continue;
            }
            for b in 0..self.k[1] {
                let y = s1 + (b * self.dil[1]) as isize;
                if y < 0 || y >= ih as isize {
                    continue;
                }
                for c in 0..self.k[2] {
                    let x = s2 + (c * self.dil[2]) as isize;
                    if x < 0 || x >= iw as isize {
                        continue;
                    }
                    valid += 1;
                    f((z as usize * ih + y as usize) * iw + x as usize);
                }
            }
        }
        valid
    }

    /// Average pooling's divisor at output position `o` (PyTorch's rule: windows are clipped
    /// to the padded input; `count_include_pad` counts padding, else only valid positions;
    /// `divisor_override` replaces it).
    pub fn avg_divisor(&self, o: usize, count_include_pad: bool) -> f64 {
        if self.divisor_override != 0 {
            return self.divisor_override as f64;
        }
        let [_, oh, ow] = self.out_sp;
        let idx = [o / (oh * ow), (o / ow) % oh, o % ow];
        let mut div = 1usize;
        for (d, &i) in idx.iter().enumerate() {
            let start = (i * self.stride[d]) as isize - self.pad[d] as isize;
            let end =
                (start + self.k[d] as isize).min((self.in_sp[d] + self.pad_after[d]) as isize);
            let size = if count_include_pad {
                end - start
            } else {
                end.min(self.in_sp[d] as isize) - start.max(0)
            };
            div *= size.max(0) as usize;
        }
        div as f64
    }

    /// Max pooling's window `o` as PyTorch picks its arg-max (`max_pool*_with_indices`): the
    /// flat index within the plane of the largest value, the first in scan order among
    /// ties, the last NaN when there is one, the first valid position when every value is
    /// -inf, and the value (`get(i)` reads position `i`). A window with no valid position
    /// (a dilation larger than the input) gives -inf at PyTorch's index: its start moved
    /// past the padding by whole dilations.
    #[inline]
    pub fn torch_argmax(&self, o: usize, get: impl Fn(usize) -> f64) -> (usize, f64) {
        let mut best: Option<(usize, f64)> = None;
        self.window(o, |i| {
            let v = get(i);
            if best.is_none_or(|(_, m)| v > m || v.is_nan()) {
                best = Some((i, v));
            }
        });
        best.unwrap_or_else(|| {
            let [_, oh, ow] = self.out_sp;
            let idx = [o / (oh * ow), (o / ow) % oh, o % ow];
            let mut flat = 0;
            for (d, i) in idx.into_iter().enumerate() {
                let mut start = (i * self.stride[d]) as isize - self.pad[d] as isize;
                while start < 0 {
                    start += self.dil[d] as isize;
                }
                flat = flat * self.in_sp[d] + start as usize;
            }
            (flat, f64::NEG_INFINITY)
        })
    }

    /// Checks the geometry's own consistency (for the raw `rb_dnn_*` entry points).
    pub fn validate(&self, op: &str) -> Result<()> {
        if !(1..=3).contains(&self.ndim) {
            return Err(Error::invalid(format!(
                "{op}: ndim={} is not 1, 2 or 3",
                self.ndim
            )));
        }
        for d in 0..3 {
            if self.k[d] == 0 || self.stride[d] == 0 || self.dil[d] == 0 {
                return Err(Error::invalid(format!(
                    "{op}: kernel, stride and dilation must be positive"
                )));
            }
            if self.pad[d] * 2 > self.k[d] || self.pad_after[d] * 2 > self.k[d] {
                return Err(Error::invalid(format!(
                    "{op}: padding {:?} must be at most half the kernel {:?}",
                    self.sp(self.pad),
                    self.sp(self.k)
                )));
            }
            let lo = out_size(
                op,
                self.in_sp[d],
                self.k[d],
                self.stride[d],
                self.pad[d],
                self.pad_after[d],
                self.dil[d],
                false,
            )?;
            let hi = out_size(
                op,
                self.in_sp[d],
                self.k[d],
                self.stride[d],
                self.pad[d],
                self.pad_after[d],
                self.dil[d],
                true,
            )?;
            if self.out_sp[d] != lo && self.out_sp[d] != hi {
                return Err(Error::shape(format!(
                    "{op}: output size {:?} does not follow from input {:?}",
                    self.sp(self.out_sp),
                    self.sp(self.in_sp)
                )));
            }
        }
        Ok(())
    }
}

/// Geometry of a `{max,avg}_pool{ndim}d(x, ...)` call, with PyTorch's checks.
pub fn pool_geom(
    op: &str,
    kind: PoolKind,
    x: &[usize],
    attrs: &PoolAttrs,
    ndim: usize,
) -> Result<PoolGeom> {
    pool_geom_ex(
        op,
        kind,
        x,
        &PoolAttrsEx {
            attrs: attrs.clone(),
            pad_after: attrs.padding.clone(),
            divisor_override: None,
            layout: Layout::ChannelsFirst,
        },
        ndim,
    )
}

/// Geometry of a pooling with padding per side and an optional divisor (PyTorch's checks
/// applied to each side; `divisor_override` only for average pooling, nonzero).
pub fn pool_geom_ex(
    op: &str,
    kind: PoolKind,
    x: &[usize],
    ex: &PoolAttrsEx,
    ndim: usize,
) -> Result<PoolGeom> {
    let attrs = &ex.attrs;
    if x.len() != ndim + 2 {
        return Err(Error::shape(format!(
            "{op}: input must have {} dimensions (N, C, {} spatial), got shape {x:?}",
            ndim + 2,
            ndim
        )));
    }
    let divisor_override = match (ex.divisor_override, kind) {
        (None, _) => 0,
        (Some(0), _) => {
            return Err(Error::invalid(format!(
                "{op}: divisor_override must not be zero"
            )));
        }
        (Some(_), PoolKind::Max) => {
            return Err(Error::invalid(format!(
                "{op}: divisor_override is for average pooling only"
            )));
        }
        (Some(v), PoolKind::Avg { .. }) => v,
    };
    let k = expand(op, "kernel_size", &attrs.kernel, ndim, 1)?;
    let stride = if attrs.stride.is_empty() {
        k
    } else {
        expand(op, "stride", &attrs.stride, ndim, 1)?
    };
    let pad = expand(op, "padding", &attrs.padding, ndim, 0)?;
    let pad_after = expand(op, "padding", &ex.pad_after, ndim, 0)?;
    let dil = expand(op, "dilation", &attrs.dilation, ndim, 1)?;
    if matches!(kind, PoolKind::Avg { .. }) && dil != [1; 3] {
        return Err(Error::invalid(format!(
            "{op}: dilation must be 1 for average pooling"
        )));
    }
    let mut in_sp = [1; 3];
    in_sp[3 - ndim..].copy_from_slice(&x[2..]);
    let mut out_sp = [1; 3];
    for d in 0..3 {
        if k[d] == 0 {
            return Err(Error::invalid(format!(
                "{op}: kernel_size must be positive, got {:?}",
                attrs.kernel
            )));
        }
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
        if pad[d] * 2 > k[d] || pad_after[d] * 2 > k[d] {
            return Err(Error::invalid(if ex.pad_after == attrs.padding {
                format!(
                    "{op}: padding {:?} should be at most half of kernel size {:?}",
                    attrs.padding, attrs.kernel
                )
            } else {
                format!(
                    "{op}: padding before {:?} and after {:?} should each be at most half of \
                     kernel size {:?}",
                    attrs.padding, ex.pad_after, attrs.kernel
                )
            }));
        }
        if in_sp[d] == 0 {
            return Err(Error::shape(format!(
                "{op}: input {x:?} has an empty spatial dimension"
            )));
        }
        out_sp[d] = out_size(
            op,
            in_sp[d],
            k[d],
            stride[d],
            pad[d],
            pad_after[d],
            dil[d],
            attrs.ceil_mode,
        )?;
    }
    let prod = |v: &[usize]| v.iter().try_fold(8usize, |a, &b| a.checked_mul(b));
    if prod(x).is_none() || prod(&[x[0], x[1], out_sp[0], out_sp[1], out_sp[2]]).is_none() {
        return Err(Error::invalid(format!(
            "{op}: the sizes of input {x:?} overflow"
        )));
    }
    Ok(PoolGeom {
        ndim,
        kind,
        n: x[0],
        c: x[1],
        in_sp,
        out_sp,
        k,
        stride,
        pad,
        pad_after,
        dil,
        divisor_override,
    })
}

/// Float64 reference of pooling forward.
pub fn pool_reference(g: &PoolGeom, x: &[f64]) -> Vec<f64> {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let mut y = vec![0.0; g.n * g.c * ov];
    for nc in 0..g.n * g.c {
        let xs = &x[nc * iv..(nc + 1) * iv];
        for o in 0..ov {
            y[nc * ov + o] = match g.kind {
                PoolKind::Max => {
                    let mut m = f64::NEG_INFINITY;
                    g.window(o, |i| {
                        if xs[i] > m || xs[i].is_nan() {
                            m = xs[i];
                        }
                    });
                    m
                }
                PoolKind::Avg { count_include_pad } => {
                    let mut s = 0.0;
                    g.window(o, |i| s += xs[i]);
                    s / g.avg_divisor(o, count_include_pad)
                }
            };
        }
    }
    y
}

/// Float64 reference of pooling backward: `dx` from `x` and `dy` (max pooling: the gradient
/// goes to the first maximum in scan order, or to the last NaN, as PyTorch's indices say).
pub fn pool_backward_reference(g: &PoolGeom, x: &[f64], dy: &[f64]) -> Vec<f64> {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let mut dx = vec![0.0; g.n * g.c * iv];
    for nc in 0..g.n * g.c {
        let xs = &x[nc * iv..(nc + 1) * iv];
        let d = &mut dx[nc * iv..(nc + 1) * iv];
        for o in 0..ov {
            let gy = dy[nc * ov + o];
            match g.kind {
                PoolKind::Max => {
                    let mut best: Option<usize> = None;
                    g.window(o, |i| {
                        if best.is_none_or(|b| xs[i] > xs[b] || xs[i].is_nan()) {
                            best = Some(i);
                        }
                    });
                    if let Some(b) = best {
                        d[b] += gy;
                    }
                }
                PoolKind::Avg { count_include_pad } => {
                    let div = g.avg_divisor(o, count_include_pad);
                    g.window(o, |i| d[i] += gy / div);
                }
            }
        }
    }
    dx
}

/// Float64 reference of `max_pool*_with_indices`: the values and PyTorch's indices (flat
/// within each `[spatial...]` plane, see [`PoolGeom::torch_argmax`]).
pub fn max_pool_indices_reference(g: &PoolGeom, x: &[f64]) -> (Vec<f64>, Vec<i64>) {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let mut y = vec![0.0; g.n * g.c * ov];
    let mut idx = vec![0i64; g.n * g.c * ov];
    for nc in 0..g.n * g.c {
        let xs = &x[nc * iv..(nc + 1) * iv];
        for o in 0..ov {
            let (i, v) = g.torch_argmax(o, |i| xs[i]);
            y[nc * ov + o] = v;
            idx[nc * ov + o] = i as i64;
        }
    }
    (y, idx)
}

/// Float64 reference of `max_pool*_with_indices_backward`: `dx[plane, idx] += dy`.
pub fn max_pool_backward_indices_reference(
    dy: &[f64],
    idx: &[i64],
    planes: usize,
    in_vol: usize,
) -> Vec<f64> {
    let mut dx = vec![0.0; planes * in_vol];
    let ov = dy.len().checked_div(planes).unwrap_or(0).max(1);
    for (o, (g, &i)) in dy.iter().zip(idx).enumerate() {
        dx[(o / ov) * in_vol + i as usize] += g;
    }
    dx
}

/// `[start, end)` of adaptive pooling's window `o` of `out` over an input of `inp`.
pub fn adaptive_range(o: usize, inp: usize, out: usize) -> (usize, usize) {
    ((o * inp) / out, ((o + 1) * inp).div_ceil(out))
}

/// Output shape of `adaptive_avg_pool2d(x, output_size)`.
pub fn adaptive_avg_pool2d_shape(op: &str, x: &[usize], out: [usize; 2]) -> Result<Vec<usize>> {
    if x.len() != 4 {
        return Err(Error::shape(format!(
            "{op}: input must have 4 dimensions (N, C, H, W), got shape {x:?}"
        )));
    }
    if out[0] == 0 || out[1] == 0 {
        return Err(Error::invalid(format!(
            "{op}: output_size {out:?} must be positive"
        )));
    }
    if x[2] == 0 || x[3] == 0 {
        return Err(Error::shape(format!(
            "{op}: input {x:?} has an empty spatial dimension"
        )));
    }
    Ok(vec![x[0], x[1], out[0], out[1]])
}

/// Float64 reference of `adaptive_avg_pool2d` on `[nc, h, w]` planes.
pub fn adaptive_avg_pool2d_reference(
    x: &[f64],
    nc: usize,
    inp: [usize; 2],
    out: [usize; 2],
) -> Vec<f64> {
    let mut y = vec![0.0; nc * out[0] * out[1]];
    for p in 0..nc {
        for oy in 0..out[0] {
            let (h0, h1) = adaptive_range(oy, inp[0], out[0]);
            for ox in 0..out[1] {
                let (w0, w1) = adaptive_range(ox, inp[1], out[1]);
                let mut s = 0.0;
                for h in h0..h1 {
                    for w in w0..w1 {
                        s += x[(p * inp[0] + h) * inp[1] + w];
                    }
                }
                y[(p * out[0] + oy) * out[1] + ox] = s / ((h1 - h0) * (w1 - w0)) as f64;
            }
        }
    }
    y
}

/// Float64 reference of `adaptive_avg_pool2d`'s backward.
pub fn adaptive_avg_pool2d_backward_reference(
    dy: &[f64],
    nc: usize,
    inp: [usize; 2],
    out: [usize; 2],
) -> Vec<f64> {
    let mut dx = vec![0.0; nc * inp[0] * inp[1]];
    for p in 0..nc {
        for oy in 0..out[0] {
            let (h0, h1) = adaptive_range(oy, inp[0], out[0]);
            for ox in 0..out[1] {
                let (w0, w1) = adaptive_range(ox, inp[1], out[1]);
                let g = dy[(p * out[0] + oy) * out[1] + ox] / ((h1 - h0) * (w1 - w0)) as f64;
                for h in h0..h1 {
                    for w in w0..w1 {
                        dx[(p * inp[0] + h) * inp[1] + w] += g;
                    }
                }
            }
        }
    }
    dx
}

/// Adaptive pooling (`adaptive_{avg,max}_pool{1,2,3}d`) as the device sees it: `n` x `c`
/// planes of `in_sp` pooled to `out_sp` (padded at the front to three spatial dims), the
/// window of output `o` along a dim being [`adaptive_range`]. `layout`: the layout of the
/// input, output and indices (channels last: `[N, spatial..., C]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdaptiveGeom {
    pub ndim: usize,
    pub n: usize,
    pub c: usize,
    pub in_sp: [usize; 3],
    pub out_sp: [usize; 3],
    pub layout: Layout,
}

impl AdaptiveGeom {
    fn sp(&self, a: [usize; 3]) -> Vec<usize> {
        a[3 - self.ndim..].to_vec()
    }
    fn in_layout(&self, first: Vec<usize>) -> Vec<usize> {
        match self.layout {
            Layout::ChannelsFirst => first,
            Layout::ChannelsLast => Layout::last_shape(&first),
        }
    }
    /// The input's shape in `layout`.
    pub fn x_shape(&self) -> Vec<usize> {
        self.in_layout([vec![self.n, self.c], self.sp(self.in_sp)].concat())
    }
    /// The output's (and the indices') shape in `layout`.
    pub fn y_shape(&self) -> Vec<usize> {
        self.in_layout([vec![self.n, self.c], self.sp(self.out_sp)].concat())
    }
    pub fn in_vol(&self) -> usize {
        self.in_sp.iter().product()
    }
    pub fn out_vol(&self) -> usize {
        self.out_sp.iter().product()
    }
    /// The memory blocks the kernels walk: `(blocks, channels per block)`, `(N * C, 1)`
    /// channels first (a block is a plane), `(N, C)` channels last (a block is one sample,
    /// its element `(position, c)` at `position * C + c`).
    pub fn blocks(&self) -> (usize, usize) {
        match self.layout {
            Layout::ChannelsFirst => (self.n * self.c, 1),
            Layout::ChannelsLast => (self.n, self.c),
        }
    }
    /// The window of output position `o` (flat): `[start, end)` per dim (3 entries).
    #[inline]
    pub fn window(&self, o: usize) -> [(usize, usize); 3] {
        let [_, oh, ow] = self.out_sp;
        let idx = [o / (oh * ow), (o / ow) % oh, o % ow];
        std::array::from_fn(|d| adaptive_range(idx[d], self.in_sp[d], self.out_sp[d]))
    }
    /// Whether flat input position `i` lies in window `w`.
    #[inline]
    pub fn in_window(&self, w: &[(usize, usize); 3], i: usize) -> bool {
        let [_, ih, iw] = self.in_sp;
        let p = [i / (ih * iw), (i / iw) % ih, i % iw];
        (0..3).all(|d| w[d].0 <= p[d] && p[d] < w[d].1)
    }
    /// Calls `f(flat input position)` for every position of window `w`, in scan order.
    #[inline]
    pub fn for_window(&self, w: &[(usize, usize); 3], mut f: impl FnMut(usize)) {
        let [_, ih, iw] = self.in_sp;
        for z in w[0].0..w[0].1 {
            for y in w[1].0..w[1].1 {
                for x in w[2].0..w[2].1 {
                    f((z * ih + y) * iw + x);
                }
            }
        }
    }
    /// The number of positions of window `w`.
    pub fn count(w: &[(usize, usize); 3]) -> usize {
        w.iter().map(|(a, b)| b - a).product()
    }
}

/// Geometry of `adaptive_{avg,max}_pool{ndim}d(x, output_size)` (`ndim` = the length of
/// `output_size`, 1 to 3) on `x` of shape `x_shape` in `layout`, with PyTorch's checks: a
/// spatial extent of zero and an output size of zero are errors; N = 0 or C = 0 give an
/// empty output.
pub fn adaptive_geom(
    op: &str,
    x_shape: &[usize],
    output_size: &[usize],
    layout: Layout,
) -> Result<AdaptiveGeom> {
    let ndim = output_size.len();
    if !(1..=3).contains(&ndim) {
        return Err(Error::invalid(format!(
            "{op}: output_size {output_size:?} must have 1 to 3 entries"
        )));
    }
    if x_shape.len() != ndim + 2 {
        return Err(Error::shape(format!(
            "{op}: input must have {} dimensions ({}), got shape {x_shape:?}",
            ndim + 2,
            match layout {
                Layout::ChannelsFirst => format!("N, C, {ndim} spatial"),
                Layout::ChannelsLast => format!("N, {ndim} spatial, C"),
            }
        )));
    }
    let first = match layout {
        Layout::ChannelsFirst => x_shape.to_vec(),
        Layout::ChannelsLast => Layout::first_shape(x_shape),
    };
    if let Some(d) = (2..first.len()).find(|&d| first[d] == 0) {
        let dim = match layout {
            Layout::ChannelsFirst => d,
            Layout::ChannelsLast => d - 1,
        };
        return Err(Error::shape(format!(
            "{op}: Expected input to have non-zero size for non-batch dimensions, but input has \
             sizes {x_shape:?} with dimension {dim} being empty"
        )));
    }
    if output_size.contains(&0) {
        return Err(Error::invalid(format!(
            "{op}: output_size {output_size:?} must be positive"
        )));
    }
    let prod = |v: &[usize]| v.iter().try_fold(8usize, |a, &b| a.checked_mul(b));
    let y_first = [&first[..2], output_size].concat();
    if prod(&first).is_none() || prod(&y_first).is_none() {
        return Err(Error::invalid(format!(
            "{op}: the sizes of input {x_shape:?} and output {output_size:?} overflow"
        )));
    }
    let mut in_sp = [1; 3];
    in_sp[3 - ndim..].copy_from_slice(&first[2..]);
    let mut out_sp = [1; 3];
    out_sp[3 - ndim..].copy_from_slice(output_size);
    Ok(AdaptiveGeom {
        ndim,
        n: first[0],
        c: first[1],
        in_sp,
        out_sp,
        layout,
    })
}

/// The error of an adaptive max pooling backward whose index at `pos` (flat in `dy`, in
/// `g.layout`), `value`, is not a position of that output's window.
pub fn adaptive_index_error(g: &AdaptiveGeom, pos: usize, value: i64) -> Error {
    let (_, cb) = g.blocks();
    let o = (pos / cb) % g.out_vol();
    let w = g.window(o);
    Error::invalid(format!(
        "adaptive_max_pool_backward: index {value} at position {pos} is not in its output's \
         window {:?} (of the input's spatial extents {:?})",
        &w[3 - g.ndim..],
        &g.in_sp[3 - g.ndim..]
    ))
}

/// Float64 reference of `adaptive_avg_pool{n}d` on channels-first planes.
pub fn adaptive_avg_reference(g: &AdaptiveGeom, x: &[f64]) -> Vec<f64> {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let mut y = vec![0.0; g.n * g.c * ov];
    for p in 0..g.n * g.c {
        for o in 0..ov {
            let w = g.window(o);
            let mut s = 0.0;
            g.for_window(&w, |i| s += x[p * iv + i]);
            y[p * ov + o] = s / AdaptiveGeom::count(&w) as f64;
        }
    }
    y
}

/// Float64 reference of `adaptive_avg_pool{n}d`'s backward on channels-first planes.
pub fn adaptive_avg_backward_reference(g: &AdaptiveGeom, dy: &[f64]) -> Vec<f64> {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let mut dx = vec![0.0; g.n * g.c * iv];
    for p in 0..g.n * g.c {
        for o in 0..ov {
            let w = g.window(o);
            let v = dy[p * ov + o] / AdaptiveGeom::count(&w) as f64;
            g.for_window(&w, |i| dx[p * iv + i] += v);
        }
    }
    dx
}

/// Float64 reference of `adaptive_max_pool{n}d(return_indices=True)` on channels-first
/// planes, PyTorch's rule: the first maximum in scan order, the last NaN of a window holding
/// NaNs, the window's first position when every value is -inf. The indices are flat within
/// each `[spatial...]` plane.
pub fn adaptive_max_reference(g: &AdaptiveGeom, x: &[f64]) -> (Vec<f64>, Vec<i64>) {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let mut y = vec![0.0; g.n * g.c * ov];
    let mut idx = vec![0i64; g.n * g.c * ov];
    for p in 0..g.n * g.c {
        for o in 0..ov {
            let w = g.window(o);
            let mut best = None;
            let mut m = f64::NEG_INFINITY;
            g.for_window(&w, |i| {
                let v = x[p * iv + i];
                if best.is_none() {
                    best = Some(i);
                }
                if v > m || v.is_nan() {
                    m = v;
                    best = Some(i);
                }
            });
            y[p * ov + o] = m;
            idx[p * ov + o] = best.unwrap_or(0) as i64;
        }
    }
    (y, idx)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ceil_mode_sizes() {
        let a = PoolAttrs {
            kernel: vec![3],
            stride: vec![2],
            padding: vec![1],
            dilation: vec![1],
            ceil_mode: true,
        };
        // torch: max_pool2d(x of 6x6, 3, 2, 1, ceil_mode=True) gives 4x4 (the extra window
        // starts inside the input); of 5x5 gives 3x3.
        let g = pool_geom("max_pool2d", PoolKind::Max, &[1, 1, 6, 6], &a, 2).unwrap();
        assert_eq!(g.y_shape(), vec![1, 1, 4, 4]);
        let g = pool_geom("max_pool2d", PoolKind::Max, &[1, 1, 5, 5], &a, 2).unwrap();
        assert_eq!(g.y_shape(), vec![1, 1, 3, 3]);
        assert_eq!(adaptive_range(1, 5, 3), (1, 4));
    }
}
