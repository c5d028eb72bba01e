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
