//! The op registry: one [`OpKind`] per row of the op table, one attribute struct per
//! op that has attributes, and [`Op`] (a kind with its attributes), the node type of
//! the graph executor. The runtime call of every op is `crate::runtime::dispatch::run`.
//!
//! @generated from src/ops/table.rs by tools/opgen.rs; do not edit (`make generate`).

use crate::base::dtype::DType;
use crate::ops::conv::{Activation, ConvAttrs, ConvAttrsEx};
use crate::ops::elementwise::{CompareOp, UnaryOp};
use crate::ops::nn::{Causal, Reduction};
use crate::ops::data::ScatterReduce;
use crate::ops::pool::{PoolAttrs, PoolAttrsEx, PoolKind};
use crate::ops::table::{OPS, OpDef};

/// Every op of the table, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    AddRelu,
    MulAdd,
    Add,
    Relu,
    Sub,
    Mul,
    Div,
    Pow,
    Maximum,
    Minimum,
    Neg,
    Abs,
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Sigmoid,
    Tanh,
    Silu,
    Hardswish,
    Gelu,
    Clamp,
    LeakyRelu,
    Elu,
    Selu,
    Celu,
    Hardsigmoid,
    Softplus,
    Softsign,
    Mish,
    Erf,
    Sign,
    Floor,
    Ceil,
    Round,
    Reciprocal,
    ReluBackward,
    NegBackward,
    AbsBackward,
    SqrtBackward,
    ExpBackward,
    LogBackward,
    SinBackward,
    CosBackward,
    SigmoidBackward,
    TanhBackward,
    SiluBackward,
    HardswishBackward,
    GeluBackward,
    ClampBackward,
    LeakyReluBackward,
    EluBackward,
    SeluBackward,
    CeluBackward,
    HardsigmoidBackward,
    SoftplusBackward,
    SoftsignBackward,
    MishBackward,
    ErfBackward,
    SignBackward,
    FloorBackward,
    CeilBackward,
    RoundBackward,
    ReciprocalBackward,
    Prelu,
    PreluBackward,
    AddBackward,
    SubBackward,
    MulBackward,
    DivBackward,
    PowBackward,
    MaximumBackward,
    MinimumBackward,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Where,
    WhereCompare,
    ClampTensor,
    ClampTensorBackward,
    WhereBackward,
    AddScaled,
    SubScaled,
    AddScaledBackward,
    SubScaledBackward,
    Sum,
    SumBackward,
    Mean,
    MeanBackward,
    Max,
    MaxBackward,
    Min,
    MinBackward,
    Prod,
    ProdBackward,
    ArgmaxAll,
    Argmax,
    MaxDim,
    MinDim,
    MaxDimBackward,
    SumDtype,
    ProdDtype,
    Permute,
    Concat,
    Slice,
    Cast,
    Fill,
    Copy,
    Embedding,
    EmbeddingBackward,
    PermuteBackward,
    ToChannelsLast,
    ToChannelsFirst,
    ConcatBackward,
    SliceBackward,
    Gather,
    GatherBackward,
    Take,
    TakeBackward,
    Pad,
    PadBackward,
    IndexSelect,
    IndexSelectBackward,
    Expand,
    ExpandBackward,
    Tile,
    TileBackward,
    Flatten,
    Cumsum,
    CumsumBackward,
    Trilu,
    TriluBackward,
    ScatterAdd,
    ScatterAddBackward,
    IndexCopy,
    IndexCopyBackward,
    Topk,
    TopkBackward,
    Scatter,
    ScatterBackward,
    Arange,
    OneHot,
    Linear,
    LinearBackward,
    MatmulBiasAct,
    Matmul,
    MatmulBackward,
    Conv,
    ConvBnRelu,
    ConvTranspose,
    ConvBackwardData,
    ConvBackwardWeight,
    ConvTransposeBackwardData,
    ConvTransposeBackwardWeight,
    ConvEx,
    ConvExBackwardData,
    ConvExBackwardWeight,
    ConvTransposeEx,
    ConvTransposeExBackwardData,
    ConvTransposeExBackwardWeight,
    Pool,
    PoolBackward,
    PoolEx,
    PoolExBackward,
    MaxPoolWithIndices,
    MaxUnpool,
    MaxUnpoolBackward,
    Interpolate,
    InterpolateBackward,
    MaxPoolBackwardIndices,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool2dBackward,
    AdaptiveAvgPool,
    AdaptiveAvgPoolBackward,
    AdaptiveMaxPool,
    AdaptiveMaxPoolBackward,
    MaxPoolWithIndicesEx,
    MaxPoolBackwardIndicesEx,
    Softmax,
    LogSoftmax,
    SoftmaxBackward,
    LogSoftmaxBackward,
    LocalResponseNorm,
    LocalResponseNormBackward,
    LayerNorm,
    LayerNormBackward,
    RmsNorm,
    RmsNormBackward,
    GroupNorm,
    GroupNormBackward,
    BatchNorm,
    BatchNormBackward,
    BatchNormChannelsLast,
    BatchNormChannelsLastBackward,
    MseLoss,
    MseLossBackward,
    BceLoss,
    BceLossBackward,
    CrossEntropy,
    CrossEntropyBackward,
    NllLoss,
    NllLossBackward,
    CrossEntropyWeighted,
    CrossEntropyWeightedBackward,
    NllLossWeighted,
    NllLossWeightedBackward,
    BceLossWeighted,
    BceLossWeightedBackward,
    ScaledDotProductAttention,
    ScaledDotProductAttentionBackward,
    ScaledDotProductAttentionEx,
    ScaledDotProductAttentionExBackward,
    Rope,
    RopeBackward,
    RopeCached,
    RopeCachedBackward,
    WeightedSum,
    WeightedSumBackward,
    SgdStep,
    AdamStep,
    AdamwStep,
}

impl OpKind {
    /// Every kind, in table order.
    pub const ALL: [OpKind; 225] = [
        OpKind::AddRelu,
        OpKind::MulAdd,
        OpKind::Add,
        OpKind::Relu,
        OpKind::Sub,
        OpKind::Mul,
        OpKind::Div,
        OpKind::Pow,
        OpKind::Maximum,
        OpKind::Minimum,
        OpKind::Neg,
        OpKind::Abs,
        OpKind::Sqrt,
        OpKind::Exp,
        OpKind::Log,
        OpKind::Sin,
        OpKind::Cos,
        OpKind::Sigmoid,
        OpKind::Tanh,
        OpKind::Silu,
        OpKind::Hardswish,
        OpKind::Gelu,
        OpKind::Clamp,
        OpKind::LeakyRelu,
        OpKind::Elu,
        OpKind::Selu,
        OpKind::Celu,
        OpKind::Hardsigmoid,
        OpKind::Softplus,
        OpKind::Softsign,
        OpKind::Mish,
        OpKind::Erf,
        OpKind::Sign,
        OpKind::Floor,
        OpKind::Ceil,
        OpKind::Round,
        OpKind::Reciprocal,
        OpKind::ReluBackward,
        OpKind::NegBackward,
        OpKind::AbsBackward,
        OpKind::SqrtBackward,
        OpKind::ExpBackward,
        OpKind::LogBackward,
        OpKind::SinBackward,
        OpKind::CosBackward,
        OpKind::SigmoidBackward,
        OpKind::TanhBackward,
        OpKind::SiluBackward,
        OpKind::HardswishBackward,
        OpKind::GeluBackward,
        OpKind::ClampBackward,
        OpKind::LeakyReluBackward,
        OpKind::EluBackward,
        OpKind::SeluBackward,
        OpKind::CeluBackward,
        OpKind::HardsigmoidBackward,
        OpKind::SoftplusBackward,
        OpKind::SoftsignBackward,
        OpKind::MishBackward,
        OpKind::ErfBackward,
        OpKind::SignBackward,
        OpKind::FloorBackward,
        OpKind::CeilBackward,
        OpKind::RoundBackward,
        OpKind::ReciprocalBackward,
        OpKind::Prelu,
        OpKind::PreluBackward,
        OpKind::AddBackward,
        OpKind::SubBackward,
        OpKind::MulBackward,
        OpKind::DivBackward,
        OpKind::PowBackward,
        OpKind::MaximumBackward,
        OpKind::MinimumBackward,
        OpKind::Eq,
        OpKind::Ne,
        OpKind::Lt,
        OpKind::Le,
        OpKind::Gt,
        OpKind::Ge,
        OpKind::Where,
        OpKind::WhereCompare,
        OpKind::ClampTensor,
        OpKind::ClampTensorBackward,
        OpKind::WhereBackward,
        OpKind::AddScaled,
        OpKind::SubScaled,
        OpKind::AddScaledBackward,
        OpKind::SubScaledBackward,
        OpKind::Sum,
        OpKind::SumBackward,
        OpKind::Mean,
        OpKind::MeanBackward,
        OpKind::Max,
        OpKind::MaxBackward,
        OpKind::Min,
        OpKind::MinBackward,
        OpKind::Prod,
        OpKind::ProdBackward,
        OpKind::ArgmaxAll,
        OpKind::Argmax,
        OpKind::MaxDim,
        OpKind::MinDim,
        OpKind::MaxDimBackward,
        OpKind::SumDtype,
        OpKind::ProdDtype,
        OpKind::Permute,
        OpKind::Concat,
        OpKind::Slice,
        OpKind::Cast,
        OpKind::Fill,
        OpKind::Copy,
        OpKind::Embedding,
        OpKind::EmbeddingBackward,
        OpKind::PermuteBackward,
        OpKind::ToChannelsLast,
        OpKind::ToChannelsFirst,
        OpKind::ConcatBackward,
        OpKind::SliceBackward,
        OpKind::Gather,
        OpKind::GatherBackward,
        OpKind::Take,
        OpKind::TakeBackward,
        OpKind::Pad,
        OpKind::PadBackward,
        OpKind::IndexSelect,
        OpKind::IndexSelectBackward,
        OpKind::Expand,
        OpKind::ExpandBackward,
        OpKind::Tile,
        OpKind::TileBackward,
        OpKind::Flatten,
        OpKind::Cumsum,
        OpKind::CumsumBackward,
        OpKind::Trilu,
        OpKind::TriluBackward,
        OpKind::ScatterAdd,
        OpKind::ScatterAddBackward,
        OpKind::IndexCopy,
        OpKind::IndexCopyBackward,
        OpKind::Topk,
        OpKind::TopkBackward,
        OpKind::Scatter,
        OpKind::ScatterBackward,
        OpKind::Arange,
        OpKind::OneHot,
        OpKind::Linear,
        OpKind::LinearBackward,
        OpKind::MatmulBiasAct,
        OpKind::Matmul,
        OpKind::MatmulBackward,
        OpKind::Conv,
        OpKind::ConvBnRelu,
        OpKind::ConvTranspose,
        OpKind::ConvBackwardData,
        OpKind::ConvBackwardWeight,
        OpKind::ConvTransposeBackwardData,
        OpKind::ConvTransposeBackwardWeight,
        OpKind::ConvEx,
        OpKind::ConvExBackwardData,
        OpKind::ConvExBackwardWeight,
        OpKind::ConvTransposeEx,
        OpKind::ConvTransposeExBackwardData,
        OpKind::ConvTransposeExBackwardWeight,
        OpKind::Pool,
        OpKind::PoolBackward,
        OpKind::PoolEx,
        OpKind::PoolExBackward,
        OpKind::MaxPoolWithIndices,
        OpKind::MaxUnpool,
        OpKind::MaxUnpoolBackward,
        OpKind::Interpolate,
        OpKind::InterpolateBackward,
        OpKind::MaxPoolBackwardIndices,
        OpKind::AdaptiveAvgPool2d,
        OpKind::AdaptiveAvgPool2dBackward,
        OpKind::AdaptiveAvgPool,
        OpKind::AdaptiveAvgPoolBackward,
        OpKind::AdaptiveMaxPool,
        OpKind::AdaptiveMaxPoolBackward,
        OpKind::MaxPoolWithIndicesEx,
        OpKind::MaxPoolBackwardIndicesEx,
        OpKind::Softmax,
        OpKind::LogSoftmax,
        OpKind::SoftmaxBackward,
        OpKind::LogSoftmaxBackward,
        OpKind::LocalResponseNorm,
        OpKind::LocalResponseNormBackward,
        OpKind::LayerNorm,
        OpKind::LayerNormBackward,
        OpKind::RmsNorm,
        OpKind::RmsNormBackward,
        OpKind::GroupNorm,
        OpKind::GroupNormBackward,
        OpKind::BatchNorm,
        OpKind::BatchNormBackward,
        OpKind::BatchNormChannelsLast,
        OpKind::BatchNormChannelsLastBackward,
        OpKind::MseLoss,
        OpKind::MseLossBackward,
        OpKind::BceLoss,
        OpKind::BceLossBackward,
        OpKind::CrossEntropy,
        OpKind::CrossEntropyBackward,
        OpKind::NllLoss,
        OpKind::NllLossBackward,
        OpKind::CrossEntropyWeighted,
        OpKind::CrossEntropyWeightedBackward,
        OpKind::NllLossWeighted,
        OpKind::NllLossWeightedBackward,
        OpKind::BceLossWeighted,
        OpKind::BceLossWeightedBackward,
        OpKind::ScaledDotProductAttention,
        OpKind::ScaledDotProductAttentionBackward,
        OpKind::ScaledDotProductAttentionEx,
        OpKind::ScaledDotProductAttentionExBackward,
        OpKind::Rope,
        OpKind::RopeBackward,
        OpKind::RopeCached,
        OpKind::RopeCachedBackward,
        OpKind::WeightedSum,
        OpKind::WeightedSumBackward,
        OpKind::SgdStep,
        OpKind::AdamStep,
        OpKind::AdamwStep,
    ];

    /// The op's row of the table.
    pub fn def(self) -> &'static OpDef {
        &OPS[self as usize]
    }

    /// The op's name (the C export is `rb_<name>`).
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// The kind of the op called `name`.
    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// The attribute struct of every op that has attributes (its non-tensor parameters).
pub mod attrs {
    use super::*;

    /// The attributes of `rb_gelu`.
    #[derive(Clone, Debug)]
    pub struct Gelu {
        pub approximate: UnaryOp,
    }

    /// The attributes of `rb_clamp`.
    #[derive(Clone, Debug)]
    pub struct Clamp {
        pub min: f64,
        pub max: f64,
    }

    /// The attributes of `rb_leaky_relu`.
    #[derive(Clone, Debug)]
    pub struct LeakyRelu {
        pub negative_slope: f32,
    }

    /// The attributes of `rb_elu`.
    #[derive(Clone, Debug)]
    pub struct Elu {
        pub alpha: f32,
    }

    /// The attributes of `rb_celu`.
    #[derive(Clone, Debug)]
    pub struct Celu {
        pub alpha: f32,
    }

    /// The attributes of `rb_softplus`.
    #[derive(Clone, Debug)]
    pub struct Softplus {
        pub beta: f32,
        pub threshold: f32,
    }

    /// The attributes of `rb_gelu_backward`.
    #[derive(Clone, Debug)]
    pub struct GeluBackward {
        pub approximate: UnaryOp,
    }

    /// The attributes of `rb_clamp_backward`.
    #[derive(Clone, Debug)]
    pub struct ClampBackward {
        pub min: f64,
        pub max: f64,
    }

    /// The attributes of `rb_leaky_relu_backward`.
    #[derive(Clone, Debug)]
    pub struct LeakyReluBackward {
        pub negative_slope: f32,
    }

    /// The attributes of `rb_elu_backward`.
    #[derive(Clone, Debug)]
    pub struct EluBackward {
        pub alpha: f32,
    }

    /// The attributes of `rb_celu_backward`.
    #[derive(Clone, Debug)]
    pub struct CeluBackward {
        pub alpha: f32,
    }

    /// The attributes of `rb_softplus_backward`.
    #[derive(Clone, Debug)]
    pub struct SoftplusBackward {
        pub beta: f32,
        pub threshold: f32,
    }

    /// The attributes of `rb_where_compare`.
    #[derive(Clone, Debug)]
    pub struct WhereCompare {
        pub op: CompareOp,
    }

    /// The attributes of `rb_add_scaled`.
    #[derive(Clone, Debug)]
    pub struct AddScaled {
        pub alpha: f64,
    }

    /// The attributes of `rb_sub_scaled`.
    #[derive(Clone, Debug)]
    pub struct SubScaled {
        pub alpha: f64,
    }

    /// The attributes of `rb_add_scaled_backward`.
    #[derive(Clone, Debug)]
    pub struct AddScaledBackward {
        pub alpha: f64,
    }

    /// The attributes of `rb_sub_scaled_backward`.
    #[derive(Clone, Debug)]
    pub struct SubScaledBackward {
        pub alpha: f64,
    }

    /// The attributes of `rb_sum`.
    #[derive(Clone, Debug)]
    pub struct Sum {
        pub dims: Vec<i64>,
        pub keepdim: bool,
    }

    /// The attributes of `rb_sum_backward`.
    #[derive(Clone, Debug)]
    pub struct SumBackward {
        pub dims: Vec<i64>,
        pub keepdim: bool,
    }

    /// The attributes of `rb_mean`.
    #[derive(Clone, Debug)]
    pub struct Mean {
        pub dims: Vec<i64>,
        pub keepdim: bool,
    }

    /// The attributes of `rb_mean_backward`.
    #[derive(Clone, Debug)]
    pub struct MeanBackward {
        pub dims: Vec<i64>,
        pub keepdim: bool,
    }

    /// The attributes of `rb_max`.
    #[derive(Clone, Debug)]
    pub struct Max {
        pub dims: Vec<i64>,
        pub keepdim: bool,
    }

    /// The attributes of `rb_max_backward`.
    #[derive(Clone, Debug)]
    pub struct MaxBackward {
        pub dims: Vec<i64>,
        pub keepdim: bool,
    }

    /// The attributes of `rb_min`.
    #[derive(Clone, Debug)]
    pub struct Min {
        pub dims: Vec<i64>,
        pub keepdim: bool,
    }

    /// The attributes of `rb_min_backward`.
    #[derive(Clone, Debug)]
    pub struct MinBackward {
        pub dims: Vec<i64>,
        pub keepdim: bool,
    }

    /// The attributes of `rb_prod`.
    #[derive(Clone, Debug)]
    pub struct Prod {
        pub dims: Vec<i64>,
        pub keepdim: bool,
    }

    /// The attributes of `rb_prod_backward`.
    #[derive(Clone, Debug)]
    pub struct ProdBackward {
        pub dims: Vec<i64>,
        pub keepdim: bool,
    }

    /// The attributes of `rb_argmax_all`.
    #[derive(Clone, Debug)]
    pub struct ArgmaxAll {
        pub keepdim: bool,
    }

    /// The attributes of `rb_argmax`.
    #[derive(Clone, Debug)]
    pub struct Argmax {
        pub dim: i64,
        pub keepdim: bool,
    }

    /// The attributes of `rb_max_dim`.
    #[derive(Clone, Debug)]
    pub struct MaxDim {
        pub dim: i64,
        pub keepdim: bool,
    }

    /// The attributes of `rb_min_dim`.
    #[derive(Clone, Debug)]
    pub struct MinDim {
        pub dim: i64,
        pub keepdim: bool,
    }

    /// The attributes of `rb_max_dim_backward`.
    #[derive(Clone, Debug)]
    pub struct MaxDimBackward {
        pub x_shape: Vec<usize>,
        pub dim: i64,
        pub keepdim: bool,
    }

    /// The attributes of `rb_sum_dtype`.
    #[derive(Clone, Debug)]
    pub struct SumDtype {
        pub dims: Vec<i64>,
        pub keepdim: bool,
        pub dtype: DType,
    }

    /// The attributes of `rb_prod_dtype`.
    #[derive(Clone, Debug)]
    pub struct ProdDtype {
        pub dims: Vec<i64>,
        pub keepdim: bool,
        pub dtype: DType,
    }

    /// The attributes of `rb_permute`.
    #[derive(Clone, Debug)]
    pub struct Permute {
        pub perm: Vec<i64>,
    }

    /// The attributes of `rb_concat`.
    #[derive(Clone, Debug)]
    pub struct Concat {
        pub dim: i64,
    }

    /// The attributes of `rb_slice`.
    #[derive(Clone, Debug)]
    pub struct Slice {
        pub dim: i64,
        pub start: i64,
        pub end: i64,
        pub step: i64,
    }

    /// The attributes of `rb_cast`.
    #[derive(Clone, Debug)]
    pub struct Cast {
        pub dtype: DType,
    }

    /// The attributes of `rb_fill`.
    #[derive(Clone, Debug)]
    pub struct Fill {
        pub value: f64,
    }

    /// The attributes of `rb_embedding_backward`.
    #[derive(Clone, Debug)]
    pub struct EmbeddingBackward {
        pub num_embeddings: usize,
    }

    /// The attributes of `rb_permute_backward`.
    #[derive(Clone, Debug)]
    pub struct PermuteBackward {
        pub perm: Vec<i64>,
    }

    /// The attributes of `rb_concat_backward`.
    #[derive(Clone, Debug)]
    pub struct ConcatBackward {
        pub dim: i64,
        pub index: usize,
    }

    /// The attributes of `rb_slice_backward`.
    #[derive(Clone, Debug)]
    pub struct SliceBackward {
        pub x_shape: Vec<usize>,
        pub dim: i64,
        pub start: i64,
        pub end: i64,
        pub step: i64,
    }

    /// The attributes of `rb_gather`.
    #[derive(Clone, Debug)]
    pub struct Gather {
        pub dim: i64,
    }

    /// The attributes of `rb_gather_backward`.
    #[derive(Clone, Debug)]
    pub struct GatherBackward {
        pub x_shape: Vec<usize>,
        pub dim: i64,
    }

    /// The attributes of `rb_take`.
    #[derive(Clone, Debug)]
    pub struct Take {
        pub axis: i64,
    }

    /// The attributes of `rb_take_backward`.
    #[derive(Clone, Debug)]
    pub struct TakeBackward {
        pub x_shape: Vec<usize>,
        pub axis: i64,
    }

    /// The attributes of `rb_pad`.
    #[derive(Clone, Debug)]
    pub struct Pad {
        pub pads: Vec<i64>,
        pub mode: i64,
        pub value: f64,
    }

    /// The attributes of `rb_pad_backward`.
    #[derive(Clone, Debug)]
    pub struct PadBackward {
        pub x_shape: Vec<usize>,
        pub pads: Vec<i64>,
        pub mode: i64,
    }

    /// The attributes of `rb_index_select`.
    #[derive(Clone, Debug)]
    pub struct IndexSelect {
        pub dim: i64,
    }

    /// The attributes of `rb_index_select_backward`.
    #[derive(Clone, Debug)]
    pub struct IndexSelectBackward {
        pub x_shape: Vec<usize>,
        pub dim: i64,
    }

    /// The attributes of `rb_expand`.
    #[derive(Clone, Debug)]
    pub struct Expand {
        pub shape: Vec<i64>,
    }

    /// The attributes of `rb_expand_backward`.
    #[derive(Clone, Debug)]
    pub struct ExpandBackward {
        pub x_shape: Vec<usize>,
    }

    /// The attributes of `rb_tile`.
    #[derive(Clone, Debug)]
    pub struct Tile {
        pub repeats: Vec<i64>,
    }

    /// The attributes of `rb_tile_backward`.
    #[derive(Clone, Debug)]
    pub struct TileBackward {
        pub x_shape: Vec<usize>,
        pub repeats: Vec<i64>,
    }

    /// The attributes of `rb_flatten`.
    #[derive(Clone, Debug)]
    pub struct Flatten {
        pub start_dim: i64,
        pub end_dim: i64,
    }

    /// The attributes of `rb_cumsum`.
    #[derive(Clone, Debug)]
    pub struct Cumsum {
        pub dim: i64,
        pub exclusive: bool,
        pub reverse: bool,
    }

    /// The attributes of `rb_cumsum_backward`.
    #[derive(Clone, Debug)]
    pub struct CumsumBackward {
        pub dim: i64,
        pub exclusive: bool,
        pub reverse: bool,
    }

    /// The attributes of `rb_trilu`.
    #[derive(Clone, Debug)]
    pub struct Trilu {
        pub upper: bool,
        pub diagonal: i64,
    }

    /// The attributes of `rb_trilu_backward`.
    #[derive(Clone, Debug)]
    pub struct TriluBackward {
        pub upper: bool,
        pub diagonal: i64,
    }

    /// The attributes of `rb_scatter_add`.
    #[derive(Clone, Debug)]
    pub struct ScatterAdd {
        pub dim: i64,
    }

    /// The attributes of `rb_scatter_add_backward`.
    #[derive(Clone, Debug)]
    pub struct ScatterAddBackward {
        pub dim: i64,
    }

    /// The attributes of `rb_index_copy`.
    #[derive(Clone, Debug)]
    pub struct IndexCopy {
        pub dim: i64,
    }

    /// The attributes of `rb_index_copy_backward`.
    #[derive(Clone, Debug)]
    pub struct IndexCopyBackward {
        pub dim: i64,
    }

    /// The attributes of `rb_topk`.
    #[derive(Clone, Debug)]
    pub struct Topk {
        pub k: i64,
        pub dim: i64,
        pub largest: bool,
        pub sorted: bool,
    }

    /// The attributes of `rb_topk_backward`.
    #[derive(Clone, Debug)]
    pub struct TopkBackward {
        pub x_shape: Vec<usize>,
        pub dim: i64,
    }

    /// The attributes of `rb_scatter`.
    #[derive(Clone, Debug)]
    pub struct Scatter {
        pub dim: i64,
        pub reduce: ScatterReduce,
    }

    /// The attributes of `rb_scatter_backward`.
    #[derive(Clone, Debug)]
    pub struct ScatterBackward {
        pub dim: i64,
        pub reduce: ScatterReduce,
    }

    /// The attributes of `rb_arange`.
    #[derive(Clone, Debug)]
    pub struct Arange {
        pub start: f64,
        pub end: f64,
        pub step: f64,
        pub dtype: DType,
    }

    /// The attributes of `rb_one_hot`.
    #[derive(Clone, Debug)]
    pub struct OneHot {
        pub num_classes: i64,
    }

    /// The attributes of `rb_matmul_bias_act`.
    #[derive(Clone, Debug)]
    pub struct MatmulBiasAct {
        pub activation: Activation,
    }

    /// The attributes of `rb_conv`.
    #[derive(Clone, Debug)]
    pub struct Conv {
        pub params: (ConvAttrs, usize),
        pub activation: Activation,
    }

    /// The attributes of `rb_conv_bn_relu`.
    #[derive(Clone, Debug)]
    pub struct ConvBnRelu {
        pub eps: f64,
        pub params: (ConvAttrs, usize),
    }

    /// The attributes of `rb_conv_transpose`.
    #[derive(Clone, Debug)]
    pub struct ConvTranspose {
        pub params: (ConvAttrs, usize),
    }

    /// The attributes of `rb_conv_backward_data`.
    #[derive(Clone, Debug)]
    pub struct ConvBackwardData {
        pub x_shape: Vec<usize>,
        pub params: (ConvAttrs, usize),
    }

    /// The attributes of `rb_conv_backward_weight`.
    #[derive(Clone, Debug)]
    pub struct ConvBackwardWeight {
        pub w_shape: Vec<usize>,
        pub params: (ConvAttrs, usize),
    }

    /// The attributes of `rb_conv_transpose_backward_data`.
    #[derive(Clone, Debug)]
    pub struct ConvTransposeBackwardData {
        pub x_shape: Vec<usize>,
        pub params: (ConvAttrs, usize),
    }

    /// The attributes of `rb_conv_transpose_backward_weight`.
    #[derive(Clone, Debug)]
    pub struct ConvTransposeBackwardWeight {
        pub w_shape: Vec<usize>,
        pub params: (ConvAttrs, usize),
    }

    /// The attributes of `rb_conv_ex`.
    #[derive(Clone, Debug)]
    pub struct ConvEx {
        pub params: (ConvAttrsEx, usize),
        pub activation: Activation,
    }

    /// The attributes of `rb_conv_ex_backward_data`.
    #[derive(Clone, Debug)]
    pub struct ConvExBackwardData {
        pub x_shape: Vec<usize>,
        pub params: (ConvAttrsEx, usize),
    }

    /// The attributes of `rb_conv_ex_backward_weight`.
    #[derive(Clone, Debug)]
    pub struct ConvExBackwardWeight {
        pub w_shape: Vec<usize>,
        pub params: (ConvAttrsEx, usize),
    }

    /// The attributes of `rb_conv_transpose_ex`.
    #[derive(Clone, Debug)]
    pub struct ConvTransposeEx {
        pub params: (ConvAttrsEx, usize),
    }

    /// The attributes of `rb_conv_transpose_ex_backward_data`.
    #[derive(Clone, Debug)]
    pub struct ConvTransposeExBackwardData {
        pub x_shape: Vec<usize>,
        pub params: (ConvAttrsEx, usize),
    }

    /// The attributes of `rb_conv_transpose_ex_backward_weight`.
    #[derive(Clone, Debug)]
    pub struct ConvTransposeExBackwardWeight {
        pub w_shape: Vec<usize>,
        pub params: (ConvAttrsEx, usize),
    }

    /// The attributes of `rb_pool`.
    #[derive(Clone, Debug)]
    pub struct Pool {
        pub mode: PoolKind,
        pub params: (PoolAttrs, usize),
    }

    /// The attributes of `rb_pool_backward`.
    #[derive(Clone, Debug)]
    pub struct PoolBackward {
        pub mode: PoolKind,
        pub params: (PoolAttrs, usize),
    }

    /// The attributes of `rb_pool_ex`.
    #[derive(Clone, Debug)]
    pub struct PoolEx {
        pub mode: PoolKind,
        pub params: (PoolAttrsEx, usize),
    }

    /// The attributes of `rb_pool_ex_backward`.
    #[derive(Clone, Debug)]
    pub struct PoolExBackward {
        pub mode: PoolKind,
        pub params: (PoolAttrsEx, usize),
    }

    /// The attributes of `rb_max_pool_with_indices`.
    #[derive(Clone, Debug)]
    pub struct MaxPoolWithIndices {
        pub params: (PoolAttrs, usize),
    }

    /// The attributes of `rb_max_unpool`.
    #[derive(Clone, Debug)]
    pub struct MaxUnpool {
        pub output_size: Vec<usize>,
    }

    /// The attributes of `rb_interpolate`.
    #[derive(Clone, Debug)]
    pub struct Interpolate {
        pub size: Vec<usize>,
        pub mode: i64,
        pub align_corners: bool,
    }

    /// The attributes of `rb_interpolate_backward`.
    #[derive(Clone, Debug)]
    pub struct InterpolateBackward {
        pub x_shape: Vec<usize>,
        pub mode: i64,
        pub align_corners: bool,
    }

    /// The attributes of `rb_max_pool_backward_indices`.
    #[derive(Clone, Debug)]
    pub struct MaxPoolBackwardIndices {
        pub x_shape: Vec<usize>,
    }

    /// The attributes of `rb_adaptive_avg_pool2d`.
    #[derive(Clone, Debug)]
    pub struct AdaptiveAvgPool2d {
        pub out_h: usize,
        pub out_w: usize,
    }

    /// The attributes of `rb_adaptive_avg_pool2d_backward`.
    #[derive(Clone, Debug)]
    pub struct AdaptiveAvgPool2dBackward {
        pub x_shape: Vec<usize>,
    }

    /// The attributes of `rb_adaptive_avg_pool`.
    #[derive(Clone, Debug)]
    pub struct AdaptiveAvgPool {
        pub output_size: Vec<usize>,
        pub layout: i64,
    }

    /// The attributes of `rb_adaptive_avg_pool_backward`.
    #[derive(Clone, Debug)]
    pub struct AdaptiveAvgPoolBackward {
        pub x_shape: Vec<usize>,
        pub layout: i64,
    }

    /// The attributes of `rb_adaptive_max_pool`.
    #[derive(Clone, Debug)]
    pub struct AdaptiveMaxPool {
        pub output_size: Vec<usize>,
        pub layout: i64,
    }

    /// The attributes of `rb_adaptive_max_pool_backward`.
    #[derive(Clone, Debug)]
    pub struct AdaptiveMaxPoolBackward {
        pub x_shape: Vec<usize>,
        pub layout: i64,
    }

    /// The attributes of `rb_max_pool_with_indices_ex`.
    #[derive(Clone, Debug)]
    pub struct MaxPoolWithIndicesEx {
        pub params: (PoolAttrsEx, usize),
    }

    /// The attributes of `rb_max_pool_backward_indices_ex`.
    #[derive(Clone, Debug)]
    pub struct MaxPoolBackwardIndicesEx {
        pub x_shape: Vec<usize>,
        pub layout: i64,
    }

    /// The attributes of `rb_softmax`.
    #[derive(Clone, Debug)]
    pub struct Softmax {
        pub dim: i64,
    }

    /// The attributes of `rb_log_softmax`.
    #[derive(Clone, Debug)]
    pub struct LogSoftmax {
        pub dim: i64,
    }

    /// The attributes of `rb_softmax_backward`.
    #[derive(Clone, Debug)]
    pub struct SoftmaxBackward {
        pub dim: i64,
    }

    /// The attributes of `rb_log_softmax_backward`.
    #[derive(Clone, Debug)]
    pub struct LogSoftmaxBackward {
        pub dim: i64,
    }

    /// The attributes of `rb_local_response_norm`.
    #[derive(Clone, Debug)]
    pub struct LocalResponseNorm {
        pub size: i64,
        pub alpha: f64,
        pub beta: f64,
        pub k: f64,
    }

    /// The attributes of `rb_local_response_norm_backward`.
    #[derive(Clone, Debug)]
    pub struct LocalResponseNormBackward {
        pub size: i64,
        pub alpha: f64,
        pub beta: f64,
        pub k: f64,
    }

    /// The attributes of `rb_layer_norm`.
    #[derive(Clone, Debug)]
    pub struct LayerNorm {
        pub normalized_shape: Vec<usize>,
        pub eps: f64,
    }

    /// The attributes of `rb_layer_norm_backward`.
    #[derive(Clone, Debug)]
    pub struct LayerNormBackward {
        pub normalized_shape: Vec<usize>,
        pub eps: f64,
    }

    /// The attributes of `rb_rms_norm`.
    #[derive(Clone, Debug)]
    pub struct RmsNorm {
        pub normalized_shape: Vec<usize>,
        pub eps: f64,
    }

    /// The attributes of `rb_rms_norm_backward`.
    #[derive(Clone, Debug)]
    pub struct RmsNormBackward {
        pub normalized_shape: Vec<usize>,
        pub eps: f64,
    }

    /// The attributes of `rb_group_norm`.
    #[derive(Clone, Debug)]
    pub struct GroupNorm {
        pub num_groups: usize,
        pub eps: f64,
    }

    /// The attributes of `rb_group_norm_backward`.
    #[derive(Clone, Debug)]
    pub struct GroupNormBackward {
        pub num_groups: usize,
        pub eps: f64,
    }

    /// The attributes of `rb_batch_norm`.
    #[derive(Clone, Debug)]
    pub struct BatchNorm {
        pub training: bool,
        pub momentum: f64,
        pub eps: f64,
    }

    /// The attributes of `rb_batch_norm_backward`.
    #[derive(Clone, Debug)]
    pub struct BatchNormBackward {
        pub training: bool,
        pub eps: f64,
    }

    /// The attributes of `rb_batch_norm_channels_last`.
    #[derive(Clone, Debug)]
    pub struct BatchNormChannelsLast {
        pub training: bool,
        pub momentum: f64,
        pub eps: f64,
    }

    /// The attributes of `rb_batch_norm_channels_last_backward`.
    #[derive(Clone, Debug)]
    pub struct BatchNormChannelsLastBackward {
        pub training: bool,
        pub eps: f64,
    }

    /// The attributes of `rb_mse_loss`.
    #[derive(Clone, Debug)]
    pub struct MseLoss {
        pub reduction: Reduction,
    }

    /// The attributes of `rb_mse_loss_backward`.
    #[derive(Clone, Debug)]
    pub struct MseLossBackward {
        pub reduction: Reduction,
    }

    /// The attributes of `rb_bce_loss`.
    #[derive(Clone, Debug)]
    pub struct BceLoss {
        pub reduction: Reduction,
    }

    /// The attributes of `rb_bce_loss_backward`.
    #[derive(Clone, Debug)]
    pub struct BceLossBackward {
        pub reduction: Reduction,
    }

    /// The attributes of `rb_cross_entropy`.
    #[derive(Clone, Debug)]
    pub struct CrossEntropy {
        pub reduction: Reduction,
        pub ignore_index: i64,
        pub label_smoothing: f64,
    }

    /// The attributes of `rb_cross_entropy_backward`.
    #[derive(Clone, Debug)]
    pub struct CrossEntropyBackward {
        pub reduction: Reduction,
        pub ignore_index: i64,
        pub label_smoothing: f64,
    }

    /// The attributes of `rb_nll_loss`.
    #[derive(Clone, Debug)]
    pub struct NllLoss {
        pub reduction: Reduction,
        pub ignore_index: i64,
    }

    /// The attributes of `rb_nll_loss_backward`.
    #[derive(Clone, Debug)]
    pub struct NllLossBackward {
        pub reduction: Reduction,
        pub ignore_index: i64,
    }

    /// The attributes of `rb_cross_entropy_weighted`.
    #[derive(Clone, Debug)]
    pub struct CrossEntropyWeighted {
        pub reduction: Reduction,
        pub ignore_index: i64,
        pub label_smoothing: f64,
    }

    /// The attributes of `rb_cross_entropy_weighted_backward`.
    #[derive(Clone, Debug)]
    pub struct CrossEntropyWeightedBackward {
        pub reduction: Reduction,
        pub ignore_index: i64,
        pub label_smoothing: f64,
    }

    /// The attributes of `rb_nll_loss_weighted`.
    #[derive(Clone, Debug)]
    pub struct NllLossWeighted {
        pub reduction: Reduction,
        pub ignore_index: i64,
    }

    /// The attributes of `rb_nll_loss_weighted_backward`.
    #[derive(Clone, Debug)]
    pub struct NllLossWeightedBackward {
        pub reduction: Reduction,
        pub ignore_index: i64,
    }

    /// The attributes of `rb_bce_loss_weighted`.
    #[derive(Clone, Debug)]
    pub struct BceLossWeighted {
        pub reduction: Reduction,
    }

    /// The attributes of `rb_bce_loss_weighted_backward`.
    #[derive(Clone, Debug)]
    pub struct BceLossWeightedBackward {
        pub reduction: Reduction,
    }

    /// The attributes of `rb_scaled_dot_product_attention`.
    #[derive(Clone, Debug)]
    pub struct ScaledDotProductAttention {
        pub is_causal: bool,
        pub scale: Option<f64>,
    }

    /// The attributes of `rb_scaled_dot_product_attention_backward`.
    #[derive(Clone, Debug)]
    pub struct ScaledDotProductAttentionBackward {
        pub is_causal: bool,
        pub scale: Option<f64>,
    }

    /// The attributes of `rb_scaled_dot_product_attention_ex`.
    #[derive(Clone, Debug)]
    pub struct ScaledDotProductAttentionEx {
        pub causal: Causal,
        pub scale: Option<f64>,
        pub enable_gqa: bool,
    }

    /// The attributes of `rb_scaled_dot_product_attention_ex_backward`.
    #[derive(Clone, Debug)]
    pub struct ScaledDotProductAttentionExBackward {
        pub causal: Causal,
        pub scale: Option<f64>,
        pub enable_gqa: bool,
    }

    /// The attributes of `rb_rope`.
    #[derive(Clone, Debug)]
    pub struct Rope {
        pub seq_dim: i64,
        pub base: f64,
        pub position_offset: i64,
    }

    /// The attributes of `rb_rope_backward`.
    #[derive(Clone, Debug)]
    pub struct RopeBackward {
        pub seq_dim: i64,
        pub base: f64,
        pub position_offset: i64,
    }

    /// The attributes of `rb_rope_cached`.
    #[derive(Clone, Debug)]
    pub struct RopeCached {
        pub seq_dim: i64,
        pub interleaved: bool,
    }

    /// The attributes of `rb_rope_cached_backward`.
    #[derive(Clone, Debug)]
    pub struct RopeCachedBackward {
        pub seq_dim: i64,
        pub interleaved: bool,
    }

    /// The attributes of `rb_sgd_step`.
    #[derive(Clone, Debug)]
    pub struct SgdStep {
        pub lr: f64,
        pub momentum: f64,
        pub dampening: f64,
        pub weight_decay: f64,
        pub nesterov: bool,
        pub first_step: bool,
    }

    /// The attributes of `rb_adam_step`.
    #[derive(Clone, Debug)]
    pub struct AdamStep {
        pub lr: f64,
        pub beta1: f64,
        pub beta2: f64,
        pub eps: f64,
        pub weight_decay: f64,
        pub step: u64,
        pub amsgrad: bool,
    }

    /// The attributes of `rb_adamw_step`.
    #[derive(Clone, Debug)]
    pub struct AdamwStep {
        pub lr: f64,
        pub beta1: f64,
        pub beta2: f64,
        pub eps: f64,
        pub weight_decay: f64,
        pub step: u64,
        pub amsgrad: bool,
    }
}

/// An op with its attributes.
#[derive(Clone, Debug)]
pub enum Op {
    AddRelu,
    MulAdd,
    Add,
    Relu,
    Sub,
    Mul,
    Div,
    Pow,
    Maximum,
    Minimum,
    Neg,
    Abs,
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Sigmoid,
    Tanh,
    Silu,
    Hardswish,
    Gelu(attrs::Gelu),
    Clamp(attrs::Clamp),
    LeakyRelu(attrs::LeakyRelu),
    Elu(attrs::Elu),
    Selu,
    Celu(attrs::Celu),
    Hardsigmoid,
    Softplus(attrs::Softplus),
    Softsign,
    Mish,
    Erf,
    Sign,
    Floor,
    Ceil,
    Round,
    Reciprocal,
    ReluBackward,
    NegBackward,
    AbsBackward,
    SqrtBackward,
    ExpBackward,
    LogBackward,
    SinBackward,
    CosBackward,
    SigmoidBackward,
    TanhBackward,
    SiluBackward,
    HardswishBackward,
    GeluBackward(attrs::GeluBackward),
    ClampBackward(attrs::ClampBackward),
    LeakyReluBackward(attrs::LeakyReluBackward),
    EluBackward(attrs::EluBackward),
    SeluBackward,
    CeluBackward(attrs::CeluBackward),
    HardsigmoidBackward,
    SoftplusBackward(attrs::SoftplusBackward),
    SoftsignBackward,
    MishBackward,
    ErfBackward,
    SignBackward,
    FloorBackward,
    CeilBackward,
    RoundBackward,
    ReciprocalBackward,
    Prelu,
    PreluBackward,
    AddBackward,
    SubBackward,
    MulBackward,
    DivBackward,
    PowBackward,
    MaximumBackward,
    MinimumBackward,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Where,
    WhereCompare(attrs::WhereCompare),
    ClampTensor,
    ClampTensorBackward,
    WhereBackward,
    AddScaled(attrs::AddScaled),
    SubScaled(attrs::SubScaled),
    AddScaledBackward(attrs::AddScaledBackward),
    SubScaledBackward(attrs::SubScaledBackward),
    Sum(attrs::Sum),
    SumBackward(attrs::SumBackward),
    Mean(attrs::Mean),
    MeanBackward(attrs::MeanBackward),
    Max(attrs::Max),
    MaxBackward(attrs::MaxBackward),
    Min(attrs::Min),
    MinBackward(attrs::MinBackward),
    Prod(attrs::Prod),
    ProdBackward(attrs::ProdBackward),
    ArgmaxAll(attrs::ArgmaxAll),
    Argmax(attrs::Argmax),
    MaxDim(attrs::MaxDim),
    MinDim(attrs::MinDim),
    MaxDimBackward(attrs::MaxDimBackward),
    SumDtype(attrs::SumDtype),
    ProdDtype(attrs::ProdDtype),
    Permute(attrs::Permute),
    Concat(attrs::Concat),
    Slice(attrs::Slice),
    Cast(attrs::Cast),
    Fill(attrs::Fill),
    Copy,
    Embedding,
    EmbeddingBackward(attrs::EmbeddingBackward),
    PermuteBackward(attrs::PermuteBackward),
    ToChannelsLast,
    ToChannelsFirst,
    ConcatBackward(attrs::ConcatBackward),
    SliceBackward(attrs::SliceBackward),
    Gather(attrs::Gather),
    GatherBackward(attrs::GatherBackward),
    Take(attrs::Take),
    TakeBackward(attrs::TakeBackward),
    Pad(attrs::Pad),
    PadBackward(attrs::PadBackward),
    IndexSelect(attrs::IndexSelect),
    IndexSelectBackward(attrs::IndexSelectBackward),
    Expand(attrs::Expand),
    ExpandBackward(attrs::ExpandBackward),
    Tile(attrs::Tile),
    TileBackward(attrs::TileBackward),
    Flatten(attrs::Flatten),
    Cumsum(attrs::Cumsum),
    CumsumBackward(attrs::CumsumBackward),
    Trilu(attrs::Trilu),
    TriluBackward(attrs::TriluBackward),
    ScatterAdd(attrs::ScatterAdd),
    ScatterAddBackward(attrs::ScatterAddBackward),
    IndexCopy(attrs::IndexCopy),
    IndexCopyBackward(attrs::IndexCopyBackward),
    Topk(attrs::Topk),
    TopkBackward(attrs::TopkBackward),
    Scatter(attrs::Scatter),
    ScatterBackward(attrs::ScatterBackward),
    Arange(attrs::Arange),
    OneHot(attrs::OneHot),
    Linear,
    LinearBackward,
    MatmulBiasAct(attrs::MatmulBiasAct),
    Matmul,
    MatmulBackward,
    Conv(attrs::Conv),
    ConvBnRelu(attrs::ConvBnRelu),
    ConvTranspose(attrs::ConvTranspose),
    ConvBackwardData(attrs::ConvBackwardData),
    ConvBackwardWeight(attrs::ConvBackwardWeight),
    ConvTransposeBackwardData(attrs::ConvTransposeBackwardData),
    ConvTransposeBackwardWeight(attrs::ConvTransposeBackwardWeight),
    ConvEx(attrs::ConvEx),
    ConvExBackwardData(attrs::ConvExBackwardData),
    ConvExBackwardWeight(attrs::ConvExBackwardWeight),
    ConvTransposeEx(attrs::ConvTransposeEx),
    ConvTransposeExBackwardData(attrs::ConvTransposeExBackwardData),
    ConvTransposeExBackwardWeight(attrs::ConvTransposeExBackwardWeight),
    Pool(attrs::Pool),
    PoolBackward(attrs::PoolBackward),
    PoolEx(attrs::PoolEx),
    PoolExBackward(attrs::PoolExBackward),
    MaxPoolWithIndices(attrs::MaxPoolWithIndices),
    MaxUnpool(attrs::MaxUnpool),
    MaxUnpoolBackward,
    Interpolate(attrs::Interpolate),
    InterpolateBackward(attrs::InterpolateBackward),
    MaxPoolBackwardIndices(attrs::MaxPoolBackwardIndices),
    AdaptiveAvgPool2d(attrs::AdaptiveAvgPool2d),
    AdaptiveAvgPool2dBackward(attrs::AdaptiveAvgPool2dBackward),
    AdaptiveAvgPool(attrs::AdaptiveAvgPool),
    AdaptiveAvgPoolBackward(attrs::AdaptiveAvgPoolBackward),
    AdaptiveMaxPool(attrs::AdaptiveMaxPool),
    AdaptiveMaxPoolBackward(attrs::AdaptiveMaxPoolBackward),
    MaxPoolWithIndicesEx(attrs::MaxPoolWithIndicesEx),
    MaxPoolBackwardIndicesEx(attrs::MaxPoolBackwardIndicesEx),
    Softmax(attrs::Softmax),
    LogSoftmax(attrs::LogSoftmax),
    SoftmaxBackward(attrs::SoftmaxBackward),
    LogSoftmaxBackward(attrs::LogSoftmaxBackward),
    LocalResponseNorm(attrs::LocalResponseNorm),
    LocalResponseNormBackward(attrs::LocalResponseNormBackward),
    LayerNorm(attrs::LayerNorm),
    LayerNormBackward(attrs::LayerNormBackward),
    RmsNorm(attrs::RmsNorm),
    RmsNormBackward(attrs::RmsNormBackward),
    GroupNorm(attrs::GroupNorm),
    GroupNormBackward(attrs::GroupNormBackward),
    BatchNorm(attrs::BatchNorm),
    BatchNormBackward(attrs::BatchNormBackward),
    BatchNormChannelsLast(attrs::BatchNormChannelsLast),
    BatchNormChannelsLastBackward(attrs::BatchNormChannelsLastBackward),
    MseLoss(attrs::MseLoss),
    MseLossBackward(attrs::MseLossBackward),
    BceLoss(attrs::BceLoss),
    BceLossBackward(attrs::BceLossBackward),
    CrossEntropy(attrs::CrossEntropy),
    CrossEntropyBackward(attrs::CrossEntropyBackward),
    NllLoss(attrs::NllLoss),
    NllLossBackward(attrs::NllLossBackward),
    CrossEntropyWeighted(attrs::CrossEntropyWeighted),
    CrossEntropyWeightedBackward(attrs::CrossEntropyWeightedBackward),
    NllLossWeighted(attrs::NllLossWeighted),
    NllLossWeightedBackward(attrs::NllLossWeightedBackward),
    BceLossWeighted(attrs::BceLossWeighted),
    BceLossWeightedBackward(attrs::BceLossWeightedBackward),
    ScaledDotProductAttention(attrs::ScaledDotProductAttention),
    ScaledDotProductAttentionBackward(attrs::ScaledDotProductAttentionBackward),
    ScaledDotProductAttentionEx(attrs::ScaledDotProductAttentionEx),
    ScaledDotProductAttentionExBackward(attrs::ScaledDotProductAttentionExBackward),
    Rope(attrs::Rope),
    RopeBackward(attrs::RopeBackward),
    RopeCached(attrs::RopeCached),
    RopeCachedBackward(attrs::RopeCachedBackward),
    WeightedSum,
    WeightedSumBackward,
    SgdStep(attrs::SgdStep),
    AdamStep(attrs::AdamStep),
    AdamwStep(attrs::AdamwStep),
}

impl Op {
    pub fn kind(&self) -> OpKind {
        match self {
            Op::AddRelu => OpKind::AddRelu,
            Op::MulAdd => OpKind::MulAdd,
            Op::Add => OpKind::Add,
            Op::Relu => OpKind::Relu,
            Op::Sub => OpKind::Sub,
            Op::Mul => OpKind::Mul,
            Op::Div => OpKind::Div,
            Op::Pow => OpKind::Pow,
            Op::Maximum => OpKind::Maximum,
            Op::Minimum => OpKind::Minimum,
            Op::Neg => OpKind::Neg,
            Op::Abs => OpKind::Abs,
            Op::Sqrt => OpKind::Sqrt,
            Op::Exp => OpKind::Exp,
            Op::Log => OpKind::Log,
            Op::Sin => OpKind::Sin,
            Op::Cos => OpKind::Cos,
            Op::Sigmoid => OpKind::Sigmoid,
            Op::Tanh => OpKind::Tanh,
            Op::Silu => OpKind::Silu,
            Op::Hardswish => OpKind::Hardswish,
            Op::Gelu(_) => OpKind::Gelu,
            Op::Clamp(_) => OpKind::Clamp,
            Op::LeakyRelu(_) => OpKind::LeakyRelu,
            Op::Elu(_) => OpKind::Elu,
            Op::Selu => OpKind::Selu,
            Op::Celu(_) => OpKind::Celu,
            Op::Hardsigmoid => OpKind::Hardsigmoid,
            Op::Softplus(_) => OpKind::Softplus,
            Op::Softsign => OpKind::Softsign,
            Op::Mish => OpKind::Mish,
            Op::Erf => OpKind::Erf,
            Op::Sign => OpKind::Sign,
            Op::Floor => OpKind::Floor,
            Op::Ceil => OpKind::Ceil,
            Op::Round => OpKind::Round,
            Op::Reciprocal => OpKind::Reciprocal,
            Op::ReluBackward => OpKind::ReluBackward,
            Op::NegBackward => OpKind::NegBackward,
            Op::AbsBackward => OpKind::AbsBackward,
            Op::SqrtBackward => OpKind::SqrtBackward,
            Op::ExpBackward => OpKind::ExpBackward,
            Op::LogBackward => OpKind::LogBackward,
            Op::SinBackward => OpKind::SinBackward,
            Op::CosBackward => OpKind::CosBackward,
            Op::SigmoidBackward => OpKind::SigmoidBackward,
            Op::TanhBackward => OpKind::TanhBackward,
            Op::SiluBackward => OpKind::SiluBackward,
            Op::HardswishBackward => OpKind::HardswishBackward,
            Op::GeluBackward(_) => OpKind::GeluBackward,
            Op::ClampBackward(_) => OpKind::ClampBackward,
            Op::LeakyReluBackward(_) => OpKind::LeakyReluBackward,
            Op::EluBackward(_) => OpKind::EluBackward,
            Op::SeluBackward => OpKind::SeluBackward,
            Op::CeluBackward(_) => OpKind::CeluBackward,
            Op::HardsigmoidBackward => OpKind::HardsigmoidBackward,
            Op::SoftplusBackward(_) => OpKind::SoftplusBackward,
            Op::SoftsignBackward => OpKind::SoftsignBackward,
            Op::MishBackward => OpKind::MishBackward,
            Op::ErfBackward => OpKind::ErfBackward,
            Op::SignBackward => OpKind::SignBackward,
            Op::FloorBackward => OpKind::FloorBackward,
            Op::CeilBackward => OpKind::CeilBackward,
            Op::RoundBackward => OpKind::RoundBackward,
            Op::ReciprocalBackward => OpKind::ReciprocalBackward,
            Op::Prelu => OpKind::Prelu,
            Op::PreluBackward => OpKind::PreluBackward,
            Op::AddBackward => OpKind::AddBackward,
            Op::SubBackward => OpKind::SubBackward,
            Op::MulBackward => OpKind::MulBackward,
            Op::DivBackward => OpKind::DivBackward,
            Op::PowBackward => OpKind::PowBackward,
            Op::MaximumBackward => OpKind::MaximumBackward,
            Op::MinimumBackward => OpKind::MinimumBackward,
            Op::Eq => OpKind::Eq,
            Op::Ne => OpKind::Ne,
            Op::Lt => OpKind::Lt,
            Op::Le => OpKind::Le,
            Op::Gt => OpKind::Gt,
            Op::Ge => OpKind::Ge,
            Op::Where => OpKind::Where,
            Op::WhereCompare(_) => OpKind::WhereCompare,
            Op::ClampTensor => OpKind::ClampTensor,
            Op::ClampTensorBackward => OpKind::ClampTensorBackward,
            Op::WhereBackward => OpKind::WhereBackward,
            Op::AddScaled(_) => OpKind::AddScaled,
            Op::SubScaled(_) => OpKind::SubScaled,
            Op::AddScaledBackward(_) => OpKind::AddScaledBackward,
            Op::SubScaledBackward(_) => OpKind::SubScaledBackward,
            Op::Sum(_) => OpKind::Sum,
            Op::SumBackward(_) => OpKind::SumBackward,
            Op::Mean(_) => OpKind::Mean,
            Op::MeanBackward(_) => OpKind::MeanBackward,
            Op::Max(_) => OpKind::Max,
            Op::MaxBackward(_) => OpKind::MaxBackward,
            Op::Min(_) => OpKind::Min,
            Op::MinBackward(_) => OpKind::MinBackward,
            Op::Prod(_) => OpKind::Prod,
            Op::ProdBackward(_) => OpKind::ProdBackward,
            Op::ArgmaxAll(_) => OpKind::ArgmaxAll,
            Op::Argmax(_) => OpKind::Argmax,
            Op::MaxDim(_) => OpKind::MaxDim,
            Op::MinDim(_) => OpKind::MinDim,
            Op::MaxDimBackward(_) => OpKind::MaxDimBackward,
            Op::SumDtype(_) => OpKind::SumDtype,
            Op::ProdDtype(_) => OpKind::ProdDtype,
            Op::Permute(_) => OpKind::Permute,
            Op::Concat(_) => OpKind::Concat,
            Op::Slice(_) => OpKind::Slice,
            Op::Cast(_) => OpKind::Cast,
            Op::Fill(_) => OpKind::Fill,
            Op::Copy => OpKind::Copy,
            Op::Embedding => OpKind::Embedding,
            Op::EmbeddingBackward(_) => OpKind::EmbeddingBackward,
            Op::PermuteBackward(_) => OpKind::PermuteBackward,
            Op::ToChannelsLast => OpKind::ToChannelsLast,
            Op::ToChannelsFirst => OpKind::ToChannelsFirst,
            Op::ConcatBackward(_) => OpKind::ConcatBackward,
            Op::SliceBackward(_) => OpKind::SliceBackward,
            Op::Gather(_) => OpKind::Gather,
            Op::GatherBackward(_) => OpKind::GatherBackward,
            Op::Take(_) => OpKind::Take,
            Op::TakeBackward(_) => OpKind::TakeBackward,
            Op::Pad(_) => OpKind::Pad,
            Op::PadBackward(_) => OpKind::PadBackward,
            Op::IndexSelect(_) => OpKind::IndexSelect,
            Op::IndexSelectBackward(_) => OpKind::IndexSelectBackward,
            Op::Expand(_) => OpKind::Expand,
            Op::ExpandBackward(_) => OpKind::ExpandBackward,
            Op::Tile(_) => OpKind::Tile,
            Op::TileBackward(_) => OpKind::TileBackward,
            Op::Flatten(_) => OpKind::Flatten,
            Op::Cumsum(_) => OpKind::Cumsum,
            Op::CumsumBackward(_) => OpKind::CumsumBackward,
            Op::Trilu(_) => OpKind::Trilu,
            Op::TriluBackward(_) => OpKind::TriluBackward,
            Op::ScatterAdd(_) => OpKind::ScatterAdd,
            Op::ScatterAddBackward(_) => OpKind::ScatterAddBackward,
            Op::IndexCopy(_) => OpKind::IndexCopy,
            Op::IndexCopyBackward(_) => OpKind::IndexCopyBackward,
            Op::Topk(_) => OpKind::Topk,
            Op::TopkBackward(_) => OpKind::TopkBackward,
            Op::Scatter(_) => OpKind::Scatter,
            Op::ScatterBackward(_) => OpKind::ScatterBackward,
            Op::Arange(_) => OpKind::Arange,
            Op::OneHot(_) => OpKind::OneHot,
            Op::Linear => OpKind::Linear,
            Op::LinearBackward => OpKind::LinearBackward,
            Op::MatmulBiasAct(_) => OpKind::MatmulBiasAct,
            Op::Matmul => OpKind::Matmul,
            Op::MatmulBackward => OpKind::MatmulBackward,
            Op::Conv(_) => OpKind::Conv,
            Op::ConvBnRelu(_) => OpKind::ConvBnRelu,
            Op::ConvTranspose(_) => OpKind::ConvTranspose,
            Op::ConvBackwardData(_) => OpKind::ConvBackwardData,
            Op::ConvBackwardWeight(_) => OpKind::ConvBackwardWeight,
            Op::ConvTransposeBackwardData(_) => OpKind::ConvTransposeBackwardData,
            Op::ConvTransposeBackwardWeight(_) => OpKind::ConvTransposeBackwardWeight,
            Op::ConvEx(_) => OpKind::ConvEx,
            Op::ConvExBackwardData(_) => OpKind::ConvExBackwardData,
            Op::ConvExBackwardWeight(_) => OpKind::ConvExBackwardWeight,
            Op::ConvTransposeEx(_) => OpKind::ConvTransposeEx,
            Op::ConvTransposeExBackwardData(_) => OpKind::ConvTransposeExBackwardData,
            Op::ConvTransposeExBackwardWeight(_) => OpKind::ConvTransposeExBackwardWeight,
            Op::Pool(_) => OpKind::Pool,
            Op::PoolBackward(_) => OpKind::PoolBackward,
            Op::PoolEx(_) => OpKind::PoolEx,
            Op::PoolExBackward(_) => OpKind::PoolExBackward,
            Op::MaxPoolWithIndices(_) => OpKind::MaxPoolWithIndices,
            Op::MaxUnpool(_) => OpKind::MaxUnpool,
            Op::MaxUnpoolBackward => OpKind::MaxUnpoolBackward,
            Op::Interpolate(_) => OpKind::Interpolate,
            Op::InterpolateBackward(_) => OpKind::InterpolateBackward,
            Op::MaxPoolBackwardIndices(_) => OpKind::MaxPoolBackwardIndices,
            Op::AdaptiveAvgPool2d(_) => OpKind::AdaptiveAvgPool2d,
            Op::AdaptiveAvgPool2dBackward(_) => OpKind::AdaptiveAvgPool2dBackward,
            Op::AdaptiveAvgPool(_) => OpKind::AdaptiveAvgPool,
            Op::AdaptiveAvgPoolBackward(_) => OpKind::AdaptiveAvgPoolBackward,
            Op::AdaptiveMaxPool(_) => OpKind::AdaptiveMaxPool,
            Op::AdaptiveMaxPoolBackward(_) => OpKind::AdaptiveMaxPoolBackward,
            Op::MaxPoolWithIndicesEx(_) => OpKind::MaxPoolWithIndicesEx,
            Op::MaxPoolBackwardIndicesEx(_) => OpKind::MaxPoolBackwardIndicesEx,
            Op::Softmax(_) => OpKind::Softmax,
            Op::LogSoftmax(_) => OpKind::LogSoftmax,
            Op::SoftmaxBackward(_) => OpKind::SoftmaxBackward,
            Op::LogSoftmaxBackward(_) => OpKind::LogSoftmaxBackward,
            Op::LocalResponseNorm(_) => OpKind::LocalResponseNorm,
            Op::LocalResponseNormBackward(_) => OpKind::LocalResponseNormBackward,
            Op::LayerNorm(_) => OpKind::LayerNorm,
            Op::LayerNormBackward(_) => OpKind::LayerNormBackward,
            Op::RmsNorm(_) => OpKind::RmsNorm,
            Op::RmsNormBackward(_) => OpKind::RmsNormBackward,
            Op::GroupNorm(_) => OpKind::GroupNorm,
            Op::GroupNormBackward(_) => OpKind::GroupNormBackward,
            Op::BatchNorm(_) => OpKind::BatchNorm,
            Op::BatchNormBackward(_) => OpKind::BatchNormBackward,
            Op::BatchNormChannelsLast(_) => OpKind::BatchNormChannelsLast,
            Op::BatchNormChannelsLastBackward(_) => OpKind::BatchNormChannelsLastBackward,
            Op::MseLoss(_) => OpKind::MseLoss,
            Op::MseLossBackward(_) => OpKind::MseLossBackward,
            Op::BceLoss(_) => OpKind::BceLoss,
            Op::BceLossBackward(_) => OpKind::BceLossBackward,
            Op::CrossEntropy(_) => OpKind::CrossEntropy,
            Op::CrossEntropyBackward(_) => OpKind::CrossEntropyBackward,
            Op::NllLoss(_) => OpKind::NllLoss,
            Op::NllLossBackward(_) => OpKind::NllLossBackward,
            Op::CrossEntropyWeighted(_) => OpKind::CrossEntropyWeighted,
            Op::CrossEntropyWeightedBackward(_) => OpKind::CrossEntropyWeightedBackward,
            Op::NllLossWeighted(_) => OpKind::NllLossWeighted,
            Op::NllLossWeightedBackward(_) => OpKind::NllLossWeightedBackward,
            Op::BceLossWeighted(_) => OpKind::BceLossWeighted,
            Op::BceLossWeightedBackward(_) => OpKind::BceLossWeightedBackward,
            Op::ScaledDotProductAttention(_) => OpKind::ScaledDotProductAttention,
            Op::ScaledDotProductAttentionBackward(_) => OpKind::ScaledDotProductAttentionBackward,
            Op::ScaledDotProductAttentionEx(_) => OpKind::ScaledDotProductAttentionEx,
            Op::ScaledDotProductAttentionExBackward(_) => OpKind::ScaledDotProductAttentionExBackward,
            Op::Rope(_) => OpKind::Rope,
            Op::RopeBackward(_) => OpKind::RopeBackward,
            Op::RopeCached(_) => OpKind::RopeCached,
            Op::RopeCachedBackward(_) => OpKind::RopeCachedBackward,
            Op::WeightedSum => OpKind::WeightedSum,
            Op::WeightedSumBackward => OpKind::WeightedSumBackward,
            Op::SgdStep(_) => OpKind::SgdStep,
            Op::AdamStep(_) => OpKind::AdamStep,
            Op::AdamwStep(_) => OpKind::AdamwStep,
        }
    }
}
