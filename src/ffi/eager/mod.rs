//! The eager ops' C exports, one module per op family.
//!
//! @generated from src/ops/table.rs by tools/opgen.rs; do not edit (`make generate`).

#[rustfmt::skip]
pub mod elementwise;
pub use elementwise::*;
#[rustfmt::skip]
pub mod reduce;
pub use reduce::*;
#[rustfmt::skip]
pub mod data;
pub use data::*;
#[rustfmt::skip]
pub mod blas;
pub use blas::*;
#[rustfmt::skip]
pub mod conv;
pub use conv::*;
#[rustfmt::skip]
pub mod pool;
pub use pool::*;
#[rustfmt::skip]
pub mod softmax;
pub use softmax::*;
#[rustfmt::skip]
pub mod norm;
pub use norm::*;
#[rustfmt::skip]
pub mod loss;
pub use loss::*;
#[rustfmt::skip]
pub mod attention;
pub use attention::*;
#[rustfmt::skip]
pub mod transformer;
pub use transformer::*;
#[rustfmt::skip]
pub mod optim;
pub use optim::*;
