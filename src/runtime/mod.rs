//! What the C ABI exposes, in safe Rust: device selection, streams, tensors and eager ops.
//!
//! The eager ops live in one file per op family, named as in the device layer
//! (`elementwise.rs`, `blas.rs`, `conv.rs`, `pool.rs`, `softmax.rs`, `norm.rs`, `loss.rs`,
//! `attention.rs`, `transformer.rs`, `reduce.rs`, `data.rs`, `optim.rs`), over the shared
//! plumbing of [`eager`]; [`prelude`] re-exports every one of them.

pub mod attention;
pub mod blas;
pub mod comm;
pub mod context;
pub mod conv;
pub mod data;
#[rustfmt::skip]
pub mod dispatch;
pub mod eager;
pub mod elementwise;
pub mod event;
pub mod loss;
pub mod memory;
pub mod module;
pub mod norm;
pub mod optim;
pub mod pool;
pub mod raw;
pub mod reduce;
pub mod softmax;
pub mod stream;
pub mod tensor;
pub mod transformer;

pub use crate::base::dtype::DType;
pub use context::{DeviceSpec, current_device, device, set_device};
pub use stream::Stream;
pub use tensor::Tensor;

/// Every eager op (and [`Grad`](eager::Grad)), for `use crate::runtime::prelude::*` or a
/// short module alias (`use crate::runtime::prelude as nn;`).
pub mod prelude {
    pub use super::attention::{
        scaled_dot_product_attention, scaled_dot_product_attention_backward,
        scaled_dot_product_attention_ex, scaled_dot_product_attention_ex_backward,
    };
    pub use super::blas::{linear, linear_backward, matmul, matmul_backward, matmul_bias_act};
    pub use super::conv::{
        conv, conv_backward_data, conv_backward_weight, conv_bn_relu, conv_ex,
        conv_ex_backward_data, conv_ex_backward_weight, conv_transpose, conv_transpose_backward,
        conv_transpose_backward_data, conv_transpose_backward_weight, conv_transpose_ex,
        conv_transpose_ex_backward_data, conv_transpose_ex_backward_weight,
    };
    pub use super::data::{
        cast, concat, concat_backward, copy, embedding, embedding_backward, fill, gather,
        gather_backward, permute, permute_backward, slice, slice_backward, take, take_backward,
        to_channels_first, to_channels_last,
    };
    pub use super::eager::Grad;
    pub use super::elementwise::{
        add_relu, add_scaled, add_scaled_backward, binary, binary_backward, clamp_tensor,
        clamp_tensor_backward, compare, mul_add, unary, unary_backward, where_, where_backward,
        where_compare,
    };
    pub use super::loss::{loss, loss_backward, loss_weighted, loss_weighted_backward};
    pub use super::norm::{
        batch_norm, batch_norm_backward, batch_norm_channels_last,
        batch_norm_channels_last_backward, group_norm, group_norm_backward, layer_norm,
        layer_norm_backward, rms_norm, rms_norm_backward,
    };
    pub use super::optim::{adam_step, sgd_step};
    pub use super::pool::{
        adaptive_avg_pool, adaptive_avg_pool_backward, adaptive_avg_pool2d,
        adaptive_avg_pool2d_backward, adaptive_max_pool, adaptive_max_pool_backward,
        max_pool_backward_indices, max_pool_backward_indices_ex, max_pool_with_indices,
        max_pool_with_indices_ex, pool, pool_backward, pool_ex, pool_ex_backward,
    };
    pub use super::reduce::{
        argmax, argmax_all, max_dim, max_dim_backward, reduce, reduce_backward, reduce_dtype,
    };
    pub use super::softmax::{log_softmax, log_softmax_backward, softmax, softmax_backward};
    pub use super::transformer::{rope, rope_cached, weighted_sum, weighted_sum_backward};
}
