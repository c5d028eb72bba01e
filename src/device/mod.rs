//! The device layer: one trait per op family, which every device implements. The runtime
//! holds an `Arc<dyn Device>` and never asks which one it has.
//!
//! Memory is addressed by [`DevPtr`], an address in the device's own address space (a host
//! address for the CPU device). Work is ordered on a [`RawStream`]; `RawStream::DEFAULT` is the
//! device's default stream. Each op family has its own trait and file, named as in every other
//! layer (`device/conv.rs`, `cpu/conv.rs`, `gpu/conv.rs`, `runtime/conv.rs`): [`BlasOps`],
//! [`ElementwiseOps`], [`ConvOps`], [`PoolOps`], [`SoftmaxOps`], [`NormOps`], [`LossOps`],
//! [`AttentionOps`], [`TransformerOps`], [`ReduceOps`], [`DataOps`], [`OptimOps`] and
//! [`MemoryOps`]; [`prelude`] brings them all into scope. A device that lacks an op answers
//! `ErrorKind::Unsupported`.

pub mod attention;
pub mod blas;
pub mod comm;
pub mod conv;
pub mod cpu;
pub mod data;
pub mod elementwise;
pub mod fused;
pub mod gpu;
pub mod loss;
pub mod memory;
pub mod norm;
pub mod optim;
pub mod pool;
pub mod reduce;
pub mod softmax;
pub mod transformer;
pub mod tuning;

pub use attention::AttentionOps;
pub use blas::{BlasOps, GeamDesc, GemmDesc, Transpose};
pub use comm::CommOps;
pub use conv::ConvOps;
pub use data::{AxisIndex, DataOps};
pub use elementwise::ElementwiseOps;
pub use loss::LossOps;
pub use memory::MemoryOps;
pub use norm::NormOps;
pub use optim::OptimOps;
pub use pool::PoolOps;
pub use reduce::ReduceOps;
pub use softmax::SoftmaxOps;
pub use transformer::TransformerOps;

/// Every op trait, for `use crate::device::prelude::*` (calling an op on a concrete device
/// type needs its trait in scope; on `dyn Device` the supertraits suffice).
pub mod prelude {
    pub use super::{
        AttentionOps, BlasOps, CommOps, ConvOps, DataOps, Device, ElementwiseOps, LossOps,
        MemoryOps, NormOps, OptimOps, PoolOps, ReduceOps, SoftmaxOps, TransformerOps,
    };
}

use crate::Result;
use std::fmt;

/// Which kind of device. The discriminants are the C ABI's `rb_device_kind` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Cpu = 0,
    Rocm = 1,
    Cuda = 2,
}

impl DeviceKind {
    pub fn prefix(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Rocm => "rocm",
            DeviceKind::Cuda => "cuda",
        }
    }
}

/// An address in a device's memory (a host address on the CPU device).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DevPtr(pub u64);

impl DevPtr {
    pub const NULL: DevPtr = DevPtr(0);
    pub fn is_null(self) -> bool {
        self.0 == 0
    }
    /// The address `bytes` further on.
    pub fn offset(self, bytes: usize) -> DevPtr {
        DevPtr(self.0 + bytes as u64)
    }
    pub fn as_ptr<T>(self) -> *const T {
        self.0 as usize as *const T
    }
    pub fn as_mut_ptr<T>(self) -> *mut T {
        self.0 as usize as *mut T
    }
}

/// A device's stream handle (`hipStream_t` / `CUstream`); 0 is the default stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct RawStream(pub u64);

impl RawStream {
    pub const DEFAULT: RawStream = RawStream(0);
}

/// What a device says about itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceInfo {
    /// e.g. "cpu", "rocm:0", "cuda:0".
    pub device: String,
    /// Marketing name, e.g. "AMD Instinct MI250X" or the CPU model.
    pub name: String,
    /// gfx/sm string, e.g. "gfx90a", "sm_90", or the CPU ISA ("x86_64-avx512").
    pub arch: String,
    /// e.g. "CDNA2", "Hopper", "CPU".
    pub family: String,
    pub total_memory: u64,
    pub free_memory: u64,
    /// Compute units / SMs, or CPU cores.
    pub compute_units: u32,
    /// Warp/wavefront size (1 on the CPU).
    pub warp_size: u32,
    pub matrix_cores: bool,
    pub bf16: bool,
    pub fp8: bool,
}

/// One input of a fused elementwise launch ([`Device::fused_elementwise`]): where it lives
/// and how it broadcasts to the output, as `strides` (in elements) over the output's
/// dimensions, 0 along a broadcast dimension.
#[derive(Clone, Debug)]
pub struct FusedInput {
    pub ptr: DevPtr,
    pub strides: Vec<usize>,
}

/// The memory and ordering half of a device.
pub trait Device:
    BlasOps
    + ElementwiseOps
    + ConvOps
    + PoolOps
    + SoftmaxOps
    + NormOps
    + LossOps
    + AttentionOps
    + TransformerOps
    + MemoryOps
    + ReduceOps
    + DataOps
    + OptimOps
    + CommOps
    + Send
    + Sync
    + fmt::Debug
{
    fn kind(&self) -> DeviceKind;
    fn ordinal(&self) -> usize;
    /// "cpu", "rocm:0", "cuda:1".
    fn name(&self) -> String {
        match self.kind() {
            DeviceKind::Cpu => "cpu".to_string(),
            k => format!("{}:{}", k.prefix(), self.ordinal()),
        }
    }
    fn info(&self) -> Result<DeviceInfo>;

    /// Whether this device runs `op` on inputs whose first tensor has `dtypes[0]` (ggml's
    /// supports_op): the graph executor places ops by it, and rb-bench prints "unsupported"
    /// instead of trying. The default is the op table's dtype rule
    /// ([`crate::ops::support::table_allows`]); a device narrows it where it lacks a
    /// library or a kernel.
    fn supports(
        &self,
        op: crate::ops::registry::OpKind,
        dtypes: &[crate::base::dtype::DType],
    ) -> bool {
        crate::ops::support::table_allows(op, dtypes)
    }

    /// Whether bf16 products (matmul, linear, convolution, attention) run faster here than
    /// f32 ones: the executor's O2 mixed precision rewrites them only where they do. GPUs
    /// (tensor cores / matrix cores) say yes; the CPU device says no, since its kernels
    /// compute bf16 by widening to f32 and rounding back (the casts would only cost time
    /// and precision).
    fn faster_in_bf16(&self) -> bool {
        true
    }

    /// Allocates `bytes` (> 0) of device memory.
    fn alloc(&self, bytes: usize) -> Result<DevPtr>;
    /// Returns memory from [`Device::alloc`]; `bytes` is the size it was allocated with.
    fn free(&self, ptr: DevPtr, bytes: usize);

    fn copy_h2d(&self, src: &[u8], dst: DevPtr, stream: RawStream) -> Result<()>;
    fn copy_d2h(&self, src: DevPtr, dst: &mut [u8], stream: RawStream) -> Result<()>;
    fn copy_d2d(&self, src: DevPtr, dst: DevPtr, bytes: usize, stream: RawStream) -> Result<()>;
    fn memset(&self, dst: DevPtr, value: u8, bytes: usize, stream: RawStream) -> Result<()>;

    /// Waits for all work on the device.
    fn synchronize(&self) -> Result<()>;
    fn stream_create(&self) -> Result<RawStream>;
    fn stream_destroy(&self, stream: RawStream);
    fn stream_synchronize(&self, stream: RawStream) -> Result<()>;

    /// Runs a fused elementwise program (the graph executor's fused chains) over the
    /// `out_shape` elements of `out`, which is dense in `prog.out_dtype`; each input is read
    /// through its broadcast strides over `out_shape` ([`crate::ops::fused`]). The default
    /// answers UNSUPPORTED (the executor then runs the chain unfused); so does a GPU when
    /// the inputs need more than 8 dimensions after merging ([`fused::FusedPlan`]).
    fn fused_elementwise(
        &self,
        stream: RawStream,
        prog: &crate::ops::fused::FusedProgram,
        inputs: &[FusedInput],
        out_shape: &[usize],
        out: DevPtr,
    ) -> Result<()> {
        let _ = (stream, prog, inputs, out_shape, out);
        Err(crate::Error::unsupported(format!(
            "{}: no fused elementwise kernels",
            self.name()
        )))
    }

    /// Starts capturing the work queued on `stream` into a device graph (CUDA graph /
    /// hipGraph) instead of running it. Devices without graphs answer UNSUPPORTED.
    ///
    /// On GPUs (relaxed capture mode, `gpu/graph.rs`): `stream` must be one of
    /// [`Device::stream_create`]'s; until the capture ends nothing may synchronize that
    /// stream or the device, nor use the default stream (it implicitly waits for every
    /// other stream), else the capture is invalidated and its end fails. Run the work once
    /// before capturing it, so kernels are compiled and loaded outside the capture. Memory
    /// freed on the device while a capture is active is held by the resulting graph until
    /// [`Device::graph_destroy`], so replays never write into reused blocks.
    fn graph_capture_begin(&self, stream: RawStream) -> Result<()> {
        let _ = stream;
        Err(crate::Error::unsupported(format!(
            "{}: no device-graph capture",
            self.name()
        )))
    }

    /// Ends the capture begun on `stream` and returns the instantiated, launchable graph
    /// (a handle for [`Device::graph_launch`] and [`Device::graph_destroy`]). On failure the
    /// stream is no longer capturing.
    fn graph_capture_end(&self, stream: RawStream) -> Result<u64> {
        let _ = stream;
        Err(crate::Error::unsupported(format!(
            "{}: no device-graph capture",
            self.name()
        )))
    }

    /// Launches a graph from [`Device::graph_capture_end`] on `stream`.
    fn graph_launch(&self, graph: u64, stream: RawStream) -> Result<()> {
        let _ = (graph, stream);
        Err(crate::Error::unsupported(format!(
            "{}: no device-graph capture",
            self.name()
        )))
    }

    /// Frees a graph from [`Device::graph_capture_end`].
    fn graph_destroy(&self, graph: u64) {
        let _ = graph;
    }
}
