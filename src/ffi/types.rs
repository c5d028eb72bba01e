//! The C enums and structs the exports take (their values are part of the ABI: a
//! published number is never reused).

/// `approximate` of `rb_gelu` / `rb_gelu_backward`: PyTorch's `approximate="none"` (the
/// exact erf form) or `"tanh"`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_gelu_approximate {
    /// `0.5 * x * (1 + erf(x / sqrt(2)))`.
    None = 0,
    /// `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.
    Tanh = 1,
}

/// The comparison of `rb_where_compare`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_compare_op {
    Eq = 0,
    Ne = 1,
    Lt = 2,
    Le = 3,
    Gt = 4,
    Ge = 5,
}

/// How `rb_scatter` combines a source element with the element it lands on (the `reduce`
/// parameters are `int32_t` holding these values).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rb_scatter_reduce {
    /// Overwrite (`torch.scatter`).
    None = 0,
    Add = 1,
    Mul = 2,
    Max = 3,
    Min = 4,
}

/// Convolution attributes. The first `ndim` (1, 2 or 3) entries of each array are used, one
/// per spatial dimension; `output_padding` only by transposed convolutions.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rb_conv_params {
    pub ndim: i32,
    pub stride: [i64; 3],
    pub padding: [i64; 3],
    pub dilation: [i64; 3],
    pub output_padding: [i64; 3],
    pub groups: i64,
}

/// Pooling attributes. The first `ndim` (1, 2 or 3) entries of each array are used;
/// `dilation` must be 1 for average pooling; `ceil_mode` is 0 or 1.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rb_pool_params {
    pub ndim: i32,
    pub kernel: [i64; 3],
    pub stride: [i64; 3],
    pub padding: [i64; 3],
    pub dilation: [i64; 3],
    pub ceil_mode: i32,
}

/// Convolution attributes with padding per side (`rb_conv_ex`): as `rb_conv_params`, with
/// `pad_before` and `pad_after` (each >= 0) in place of `padding`. PyTorch's
/// `padding='same'` pads `total / 2` before and the rest after (`total = dilation *
/// (kernel - 1)`); ONNX's SAME_UPPER likewise, SAME_LOWER the other way round. `layout` (an
/// `rb_layout`, 0 by zero-initialization) is the layout of the input, output and filter:
/// RB_LAYOUT_NCHW (`x` `[N, C, ...]`, `w` `[K, C / groups, ...]`) or RB_LAYOUT_NHWC
/// (PyTorch's channels_last: `x` `[N, ..., C]`, `w` `[K, ..., C / groups]`, the output
/// `[N, ..., K]`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rb_conv_params_ex {
    pub ndim: i32,
    pub stride: [i64; 3],
    pub pad_before: [i64; 3],
    pub pad_after: [i64; 3],
    pub dilation: [i64; 3],
    pub output_padding: [i64; 3],
    pub groups: i64,
    pub layout: i32,
}

/// Pooling attributes with padding per side and a divisor (`rb_pool_ex`): as
/// `rb_pool_params`, with `pad_before` and `pad_after` in place of `padding`, and
/// `divisor_override` (0: none; otherwise average pooling divides every window sum by it),
/// and `layout` (an `rb_layout`, 0 by zero-initialization): RB_LAYOUT_NCHW (`[N, C, ...]`)
/// or RB_LAYOUT_NHWC (PyTorch's channels_last: `[N, ..., C]`, input and output).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rb_pool_params_ex {
    pub ndim: i32,
    pub kernel: [i64; 3],
    pub stride: [i64; 3],
    pub pad_before: [i64; 3],
    pub pad_after: [i64; 3],
    pub dilation: [i64; 3],
    pub ceil_mode: i32,
    pub divisor_override: i64,
    pub layout: i32,
}

/// The causal mask of `rb_scaled_dot_product_attention_ex` (its `causal` parameter is an
/// `int32_t` holding one of these values). Query i of Sq, key j of Sk.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rb_causal_mode {
    /// No causal mask.
    None = 0,
    /// PyTorch's `is_causal=True`: j <= i (aligned to the top left).
    TopLeft = 1,
    /// PyTorch's `causal_lower_right`: j <= i + Sk - Sq (aligned to the bottom right, as
    /// when decoding with a KV cache); with Sq > Sk the first Sq - Sk queries see no key
    /// and give 0.
    BottomRight = 2,
}

/// The activation of a fused epilogue.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_activation {
    /// No activation.
    None = 0,
    Relu = 1,
    /// GELU, exact (erf) form.
    GeluErf = 2,
    /// GELU, tanh approximation.
    GeluTanh = 3,
}

/// The memory layout of the tensors of a convolution or pooling (the `layout` of
/// `rb_conv_params_ex` / `rb_pool_params_ex`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_layout {
    /// Channels first: `[N, C, D, H, W]` (PyTorch's default, contiguous_format).
    Nchw = 0,
    /// Channels last: `[N, D, H, W, C]` (PyTorch's channels_last / channels_last_3d).
    Nhwc = 1,
}

/// Pooling mode.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_pool_mode {
    Max = 0,
    /// Average; padding counts in the divisor (`count_include_pad=True`).
    AvgIncludePad = 1,
    /// Average over the valid positions only.
    AvgExcludePad = 2,
}

/// The reduction of `rb_dnn_reduce`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_reduce_op {
    Sum = 0,
    /// Sum divided by the reduced extent (NaN for an empty one).
    Mean = 1,
    /// Largest value; a NaN wins.
    Max = 2,
    /// Smallest value; a NaN wins.
    Min = 3,
    Prod = 4,
}

/// PyTorch's `reduction` argument of the losses (the `reduction` parameters are `int32_t`
/// holding these values).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rb_reduction {
    None = 0,
    Mean = 1,
    Sum = 2,
}

/// Which loss `rb_kernel_loss` / `rb_kernel_loss_backward` compute (the `kind` parameters
/// are `int32_t` holding these values).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rb_loss_kind {
    /// `(x - t)^2`; target of the input's dtype and size.
    Mse = 0,
    /// Binary cross-entropy on probabilities, logs clamped at -100 as PyTorch does.
    Bce = 1,
    /// Cross-entropy on logits `[n, c, inner]` with class-index targets `[n, inner]`.
    CrossEntropy = 2,
    /// Negative log-likelihood on log-probabilities `[n, c, inner]`, targets `[n, inner]`.
    Nll = 3,
}

/// The reduction of the collectives (`rb_all_reduce`, `rb_reduce_scatter`; their `op`
/// parameters are `int32_t` holding these values, which are NCCL's `ncclRedOp_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rb_collective_op {
    Sum = 0,
    Prod = 1,
    Max = 2,
    Min = 3,
    /// The sum divided by the number of ranks (integer division for i32/i64).
    Avg = 4,
}
