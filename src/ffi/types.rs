//! The C enums and structs the eager exports take (their values are part of the ABI: a
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
