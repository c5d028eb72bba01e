//! `rb_loss_kind`, the `kind` values of the raw loss kernels (`rb_kernel_loss`,
//! `rb_kernel_loss_backward` in [`crate::ffi::raw::kernel`]).

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
