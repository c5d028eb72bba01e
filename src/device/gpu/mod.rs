//! GPU devices (`rocm:N`, `cuda:N`): everything GPU-generic, over the vendor-neutral
//! [`vendor::Vendor`] trait. Nothing here names a HIP or CUDA symbol; the same code runs on
//! AMD through HIP and on NVIDIA through CUDA.
//!
//! * [`GpuDevice`] implements [`Device`] and the op traits, one file per op family as in the
//!   other layers (`blas.rs`, `elementwise.rs`, `conv.rs`, `pool.rs`, `softmax.rs`,
//!   `norm.rs`, `loss.rs`, `attention.rs`, `transformer.rs`, `reduce.rs`, `data.rs`,
//!   `optim.rs`): memory, copies, streams, and the ops through JIT-compiled kernels
//!   (`kernels/*.hip`), GEMM through the vendor BLAS, convolution through MIOpen / cuDNN.
//! * [`kernels`]: the name of every kernel an op launches, one table per kernel family, and
//!   the op codes the kernels' switches take (checked against kernels/*.hip by its tests).
//! * [`jit`]: compile (hiprtc / NVRTC) on first use for the device's architecture, cache the
//!   code per source/options/arch/compiler, load modules and functions per device, launch.
//! * [`timing`]: per-kernel timing with events while the [`profiler`] is enabled.
//! * [`fused`]: kernels generated for the graph executor's fused elementwise programs;
//!   `graph.rs`: device-graph capture (CUDA graphs / hipGraph) and the memory it holds.
//! * From the gpu-memory-jit branch: [`allocator`] (caching allocator), [`pinned`],
//!   [`manager`], [`kernel_cache`] (memory + disk code cache, used by [`jit`]), [`profiler`].
//!   `MemoryOps` (the memory C API) is served by [`manager::DeviceMemory`] over the vendor
//!   ([`memory`]); `Device::alloc`/`free` (tensor storage) use the same caching allocator.
//! * [`registry`]: one `Arc<GpuDevice>` per (kind, ordinal), and why a kind is unavailable.

pub mod allocator;
pub mod comm;
pub mod host;
pub mod jit;
pub mod kernel_cache;
pub mod kernels;
pub mod manager;
pub mod memory;
pub mod pinned;
pub mod profiler;
pub mod timing;
pub mod vendor;

use super::{DevPtr, Device, DeviceInfo, DeviceKind, RawStream};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, LazyLock};
use vendor::{Attr, Vendor};

/// Static facts about a GPU, read once.
#[derive(Clone, Debug)]
struct Facts {
    name: String,
    arch: String,
    compute_units: u32,
    warp_size: u32,
    max_threads: u32,
    /// The built-in kernels of `kernels::EARLY` launch early (Vendor::has_early_launch, and
    /// `RB_GPU_EARLY_LAUNCH` is not `0`).
    early_launch: bool,
}

/// A GPU of either vendor.
pub struct GpuDevice {
    vendor: Arc<dyn Vendor>,
    ordinal: usize,
    facts: Facts,
    blas: Mutex<Option<u64>>,
    pub(crate) modules: jit::ModuleTable,
    /// The generated fused elementwise kernels loaded on this device.
    fused: fused::FusedCache,
    /// Device-graph captures in progress and the graphs made by them.
    graphs: graph::GraphState,
    memory: manager::DeviceMemory<memory::VendorMemory>,
}

impl std::fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GpuDevice({}:{}, {} {})",
            self.kind().prefix(),
            self.ordinal,
            self.facts.name,
            self.facts.arch
        )
    }
}

/// The family of an architecture string ("gfx90a" -> "CDNA2", "sm_90" -> "Hopper").
pub fn family_of(arch: &str) -> &'static str {
    if let Some(g) = arch.strip_prefix("gfx") {
        return match g {
            "900" | "902" | "904" | "906" | "909" | "90c" => "GCN5",
            "908" => "CDNA1",
            "90a" => "CDNA2",
            "940" | "941" | "942" => "CDNA3",
            "950" => "CDNA4",
            g if g.starts_with("101") => "RDNA1",
            g if g.starts_with("103") => "RDNA2",
            g if g.starts_with("110") => "RDNA3",
            g if g.starts_with("115") => "RDNA3.5",
            g if g.starts_with("120") => "RDNA4",
            _ => "AMD",
        };
    }
    if let Some(v) = arch
        .strip_prefix("sm_")
        .and_then(|s| s.trim_end_matches(['a', 'f']).parse::<u32>().ok())
    {
        return match v {
            60..=62 => "Pascal",
            70 | 72 => "Volta",
            75 => "Turing",
            80 | 86 | 87 | 88 => "Ampere",
            89 => "Ada",
            90 => "Hopper",
            100..=129 => "Blackwell",
            _ => "NVIDIA",
        };
    }
    "unknown"
}

/// (matrix cores, bf16, fp8) of an architecture.
pub fn features_of(arch: &str) -> (bool, bool, bool) {
    match family_of(arch) {
        "CDNA1" => (true, true, false),
        "CDNA2" => (true, true, false),
        "CDNA3" | "CDNA4" => (true, true, true),
        "RDNA3" | "RDNA3.5" => (true, true, false),
        "RDNA4" => (true, true, true),
        "RDNA2" | "RDNA1" | "GCN5" => (false, false, false),
        "Volta" | "Turing" => (true, false, false),
        "Ampere" => (true, true, false),
        "Ada" | "Hopper" | "Blackwell" => (true, true, true),
        _ => (false, false, false),
    }
}

impl GpuDevice {
    fn open(vendor: Arc<dyn Vendor>, ordinal: usize) -> Result<Self> {
        vendor.bind(ordinal)?;
        let facts = Facts {
            name: vendor.device_name(ordinal)?,
            arch: vendor.device_arch(ordinal)?,
            compute_units: vendor.attribute(ordinal, Attr::ComputeUnits)?.max(0) as u32,
            warp_size: vendor.attribute(ordinal, Attr::WarpSize)?.max(1) as u32,
            max_threads: vendor.attribute(ordinal, Attr::MaxThreadsPerBlock)?.max(1) as u32,
            early_launch: vendor.has_early_launch(ordinal)
                && std::env::var("RB_GPU_EARLY_LAUNCH").map_or(true, |v| v != "0"),
        };
        Ok(GpuDevice {
            ordinal,
            facts,
            blas: Mutex::new(None),
            modules: Default::default(),
            fused: Default::default(),
            graphs: Default::default(),
            memory: manager::DeviceMemory::new(
                memory::VendorMemory {
                    vendor: vendor.clone(),
                    ordinal,
                },
                crate::device::memory::AllocatorConfig::default(),
            ),
            vendor,
        })
    }

    /// Makes this device current on the calling thread (every entry point does this first).
    pub fn bind(&self) -> Result<()> {
        self.vendor.bind(self.ordinal)
    }
    pub fn vendor(&self) -> &Arc<dyn Vendor> {
        &self.vendor
    }
    pub fn arch(&self) -> &str {
        &self.facts.arch
    }
    /// Whether the built-in kernels of `kernels::EARLY` start before the previous kernel of
    /// their stream finishes (see `Vendor::launch_early`).
    pub fn early_launch(&self) -> bool {
        self.facts.early_launch
    }
    pub fn warp_size(&self) -> u32 {
        self.facts.warp_size
    }
    pub fn max_threads_per_block(&self) -> u32 {
        self.facts.max_threads
    }

    /// A timing event (for the runtime's events).
    pub fn event_create(&self) -> Result<u64> {
        self.bind()?;
        self.vendor.event_create(true)
    }
    pub fn event_destroy(&self, event: u64) {
        let _ = self.bind().and_then(|_| self.vendor.event_destroy(event));
    }
    pub fn event_record(&self, event: u64, stream: RawStream) -> Result<()> {
        self.bind()?;
        self.vendor.event_record(event, stream)
    }
    pub fn event_synchronize(&self, event: u64) -> Result<()> {
        self.bind()?;
        self.vendor.event_synchronize(event)
    }
    pub fn event_query(&self, event: u64) -> Result<bool> {
        self.bind()?;
        self.vendor.event_query(event)
    }
    pub fn event_elapsed_ms(&self, start: u64, end: u64) -> Result<f32> {
        self.bind()?;
        self.vendor.event_elapsed_ms(start, end)
    }
    pub fn stream_wait_event(&self, stream: RawStream, event: u64) -> Result<()> {
        self.bind()?;
        self.vendor.stream_wait_event(stream, event)
    }

    /// Compiles a caller's HIP `source` (through the shared code cache) for this device and
    /// loads it; returns the module.
    pub fn module_compile(&self, source: &str, name: &str, options: &[String]) -> Result<u64> {
        let text = jit::prepare(source, self.kind());
        let code = jit::compile_cached(self.vendor.as_ref(), &text, name, options, self.arch())?;
        self.bind()?;
        self.vendor.module_load(&code)
    }
    pub fn module_function(&self, module: u64, name: &str) -> Result<u64> {
        self.modules.function(self, module, name)
    }
    pub fn module_unload(&self, module: u64) {
        self.modules.forget(module);
        let _ = self.bind().and_then(|_| self.vendor.module_unload(module));
    }
    /// Launches a function of a caller's module (a plain launch, never early).
    ///
    /// # Safety
    /// `args` holds one pointer per kernel parameter, each to a live value of its type.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn launch_function(
        &self,
        func: u64,
        name: &str,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        stream: RawStream,
        args: *mut *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe {
            jit::launch(
                self,
                func,
                name,
                grid,
                block,
                shared_bytes,
                stream,
                args,
                jit::Origin::Caller,
            )
        }
    }

    fn blas_handle(&self) -> Result<u64> {
        let mut b = self.blas.lock();
        if let Some(h) = *b {
            return Ok(h);
        }
        let h = self.vendor.blas_create()?;
        *b = Some(h);
        Ok(h)
    }

    /// Launches `kernel` of the built-in `src` with an explicit grid and block.
    pub(super) fn launch_grid(
        &self,
        stream: RawStream,
        src: &'static jit::Source,
        kernel: &str,
        grid: [usize; 3],
        block: [u32; 3],
        args: &mut [*mut c_void],
    ) -> Result<()> {
        let f = self.modules.builtin_function(self, src, kernel)?;
        let g = grid.map(|v| v.clamp(1, u32::MAX as usize) as u32);
        // SAFETY: `args` matches the kernel's parameters (the callers and the .hip files are
        // written together).
        unsafe {
            jit::launch(
                self,
                f,
                kernel,
                g,
                block,
                0,
                stream,
                args.as_mut_ptr(),
                jit::Origin::Builtin,
            )
        }
    }

    /// Launches `kernel` of the built-in source `src` over `n` elements (grid-stride loops).
    fn launch_elems(
        &self,
        stream: RawStream,
        src: &'static jit::Source,
        kernel: &str,
        n: usize,
        args: &mut [*mut c_void],
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let block = 256u32.min(self.facts.max_threads);
        let blocks = n.div_ceil(block as usize).min(1 << 20) as u32;
        let f = self.modules.builtin_function(self, src, kernel)?;
        // SAFETY: `args` matches the kernel's parameters (the callers below and the .hip file
        // are written together).
        unsafe {
            jit::launch(
                self,
                f,
                kernel,
                [blocks, 1, 1],
                [block, 1, 1],
                0,
                stream,
                args.as_mut_ptr(),
                jit::Origin::Builtin,
            )
        }
    }

    /// Launches `kernel` of `src` on a one-dimensional grid.
    pub(super) fn launch_1d(
        &self,
        stream: RawStream,
        src: &'static jit::Source,
        kernel: &str,
        grid: usize,
        block: u32,
        args: &mut [*mut c_void],
    ) -> Result<()> {
        self.launch_grid(stream, src, kernel, [grid, 1, 1], [block, 1, 1], args)
    }
}

/// Stream-ordered scratch memory from the device's caching allocator, given back on drop on
/// the same stream (so only work queued after the kernels that use it can reuse it).
pub(super) struct Scratch<'a> {
    dev: &'a GpuDevice,
    pub ptr: DevPtr,
    stream: RawStream,
}

impl<'a> Scratch<'a> {
    /// At least `bytes` (the allocator rounds every request up; 0 still allocates).
    pub(super) fn new(dev: &'a GpuDevice, bytes: usize, stream: RawStream) -> Result<Self> {
        let ptr = dev.memory.memory_allocate(bytes.max(1), stream)?;
        Ok(Scratch { dev, ptr, stream })
    }

    /// `bytes`, or a NULL pointer (nothing allocated) when `bytes` is 0: for library
    /// workspaces, where an empty one is passed as NULL.
    pub(super) fn unless_empty(
        dev: &'a GpuDevice,
        bytes: usize,
        stream: RawStream,
    ) -> Result<Self> {
        if bytes == 0 {
            return Ok(Scratch {
                dev,
                ptr: DevPtr::NULL,
                stream,
            });
        }
        Self::new(dev, bytes, stream)
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        // Failure means the allocator no longer knows the block: nothing to do in a drop.
        if !self.ptr.is_null() {
            let _ = self.dev.memory.memory_deallocate(self.ptr, self.stream);
        }
    }
}

/// Bytes rounded up to 256 (every scratch sub-buffer starts aligned).
pub(super) fn pad(bytes: usize) -> usize {
    bytes.div_ceil(256) * 256
}

/// Pointers to kernel arguments, in order: `kargs![a, b, c]` (each a place that lives until
/// the launch returns).
macro_rules! kargs {
    ($($a:expr),* $(,)?) => {
        [$( &$a as *const _ as *mut std::ffi::c_void ),*]
    };
}

mod attention;
mod attention_vendor;
mod blas;
pub mod conv;
mod data;
mod elementwise;
pub mod fused;
mod graph;
mod loss;
mod norm;
mod optim;
mod pool;
mod reduce;
mod softmax;
mod transformer;

impl Device for GpuDevice {
    /// The table's rule, less the convolutions where the DNN library (MIOpen, cuDNN) is
    /// missing.
    fn supports(
        &self,
        op: crate::ops::registry::OpKind,
        dtypes: &[crate::base::dtype::DType],
    ) -> bool {
        if op.def().family == crate::ops::table::Family::Conv && self.vendor.dnn().is_err() {
            return false;
        }
        crate::ops::support::table_allows(op, dtypes)
    }

    fn kind(&self) -> DeviceKind {
        self.vendor.kind()
    }
    fn ordinal(&self) -> usize {
        self.ordinal
    }
    fn info(&self) -> Result<DeviceInfo> {
        self.bind()?;
        let (free, total) = self.vendor.mem_info()?;
        let (matrix_cores, bf16, fp8) = features_of(&self.facts.arch);
        Ok(DeviceInfo {
            device: self.name(),
            name: self.facts.name.clone(),
            arch: self.facts.arch.clone(),
            family: family_of(&self.facts.arch).to_string(),
            total_memory: total,
            free_memory: free,
            compute_units: self.facts.compute_units,
            warp_size: self.facts.warp_size,
            matrix_cores,
            bf16,
            fp8,
        })
    }

    /// Tensor storage comes from the caching allocator, ordered on the default stream (a
    /// block freed there is reused by later work on that stream without a synchronize).
    fn alloc(&self, bytes: usize) -> Result<DevPtr> {
        self.memory.memory_allocate(bytes, RawStream::DEFAULT)
    }
    fn free(&self, ptr: DevPtr, _bytes: usize) {
        if ptr.is_null() {
            return;
        }
        // A failure here means the pointer is unknown or the context is broken; nothing
        // useful can be done in a destructor.
        let _ = self.memory.memory_deallocate(ptr, RawStream::DEFAULT);
    }

    fn copy_h2d(&self, src: &[u8], dst: DevPtr, stream: RawStream) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: pageable source memory is staged before the call returns, so `src` may go
        // away afterwards; `dst` holds `src.len()` bytes (the Device contract).
        unsafe { self.vendor.copy_h2d(dst, src.as_ptr(), src.len(), stream) }
    }
    fn copy_d2h(&self, src: DevPtr, dst: &mut [u8], stream: RawStream) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: a copy into pageable memory completes before the call returns; the
        // stream is synchronized as well so the contract holds for pinned memory too.
        unsafe {
            self.vendor
                .copy_d2h(dst.as_mut_ptr(), src, dst.len(), stream)
        }?;
        self.vendor.stream_synchronize(stream)
    }
    fn copy_d2d(&self, src: DevPtr, dst: DevPtr, bytes: usize, stream: RawStream) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.bind()?;
        self.vendor.copy_d2d(dst, src, bytes, stream)
    }
    fn memset(&self, dst: DevPtr, value: u8, bytes: usize, stream: RawStream) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.bind()?;
        self.vendor.memset_d8(dst, value, bytes, stream)
    }
    fn synchronize(&self) -> Result<()> {
        self.bind()?;
        self.vendor.device_synchronize()
    }
    fn stream_create(&self) -> Result<RawStream> {
        self.bind()?;
        self.vendor.stream_create()
    }
    fn stream_destroy(&self, stream: RawStream) {
        if stream == RawStream::DEFAULT {
            return;
        }
        self.capture_abandon(stream);
        // The memory manager forgets the stream's pending frees once its work is done.
        let _ = self
            .bind()
            .and_then(|_| self.vendor.stream_synchronize(stream));
        self.memory.stream_destroyed(stream);
        let _ = self.bind().and_then(|_| self.vendor.stream_destroy(stream));
    }
    fn stream_synchronize(&self, stream: RawStream) -> Result<()> {
        self.bind()?;
        self.vendor.stream_synchronize(stream)
    }

    /// A kernel generated for the program ([`fused`]).
    fn fused_elementwise(
        &self,
        stream: RawStream,
        prog: &crate::ops::fused::FusedProgram,
        inputs: &[super::FusedInput],
        out_shape: &[usize],
        out: DevPtr,
    ) -> Result<()> {
        self.fused_launch(stream, prog, inputs, out_shape, out)
    }

    /// CUDA graph / hipGraph capture in relaxed mode ([`graph`]).
    fn graph_capture_begin(&self, stream: RawStream) -> Result<()> {
        self.capture_begin(stream)
    }
    /// Ends the capture and instantiates the graph; the memory freed during the capture is
    /// held by the graph until [`Device::graph_destroy`].
    fn graph_capture_end(&self, stream: RawStream) -> Result<u64> {
        self.capture_end(stream)
    }
    fn graph_launch(&self, graph: u64, stream: RawStream) -> Result<()> {
        self.graph_run(graph, stream)
    }
    fn graph_destroy(&self, graph: u64) {
        self.graph_release(graph)
    }
}

/// True when every address is 16-byte aligned (vector loads are allowed).
fn aligned16(ptrs: &[DevPtr]) -> bool {
    ptrs.iter().all(|p| p.0 % 16 == 0)
}

/// The device registry: one `Arc<GpuDevice>` per (kind, ordinal).
pub mod registry {
    use super::*;

    type Registry = Mutex<HashMap<(DeviceKind, usize), Arc<GpuDevice>>>;
    static DEVICES: LazyLock<Registry> = LazyLock::new(Default::default);

    /// The vendor of `kind`, or why it cannot be used.
    pub fn vendor_of(kind: DeviceKind) -> std::result::Result<Arc<dyn Vendor>, String> {
        match kind {
            DeviceKind::Rocm => vendor::hip::hip().map(|v| v as Arc<dyn Vendor>),
            DeviceKind::Cuda => vendor::cuda::cuda().map(|v| v as Arc<dyn Vendor>),
            DeviceKind::Cpu => Err("the CPU is not a GPU".into()),
        }
    }

    /// Why GPUs of `kind` are unusable, or `None` when at least one is present.
    pub fn unavailable_reason(kind: DeviceKind) -> Option<String> {
        match vendor_of(kind) {
            Err(e) => Some(e),
            Ok(v) => match v.device_count() {
                Ok(0) => Some(format!(
                    "{} reports no {} device",
                    v.describe(),
                    kind.prefix()
                )),
                Ok(_) => None,
                Err(e) => Some(e.message),
            },
        }
    }

    pub fn device_count(kind: DeviceKind) -> usize {
        vendor_of(kind)
            .ok()
            .and_then(|v| v.device_count().ok())
            .unwrap_or(0)
    }

    /// The device `kind:ordinal`, opened once and shared.
    pub fn device(kind: DeviceKind, ordinal: usize) -> Result<Arc<GpuDevice>> {
        let mut map = DEVICES.lock();
        if let Some(d) = map.get(&(kind, ordinal)) {
            return Ok(d.clone());
        }
        let v = vendor_of(kind).map_err(|e| {
            Error::unavailable(format!("{}:{ordinal} is unavailable: {e}", kind.prefix()))
        })?;
        let count = v.device_count()?;
        if ordinal >= count {
            return Err(Error::unavailable(format!(
                "{}:{ordinal} does not exist ({count} device(s) of that kind)",
                kind.prefix()
            )));
        }
        let d = Arc::new(GpuDevice::open(v, ordinal)?);
        map.insert((kind, ordinal), d.clone());
        Ok(d)
    }

    /// Every device opened so far.
    pub fn opened() -> Vec<Arc<GpuDevice>> {
        DEVICES.lock().values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn families_and_features() {
        assert_eq!(family_of("gfx90a"), "CDNA2");
        assert_eq!(family_of("gfx942"), "CDNA3");
        assert_eq!(family_of("gfx940"), "CDNA3");
        assert_eq!(family_of("gfx1030"), "RDNA2");
        assert_eq!(family_of("gfx1100"), "RDNA3");
        assert_eq!(family_of("sm_80"), "Ampere");
        assert_eq!(family_of("sm_89"), "Ada");
        assert_eq!(family_of("sm_90"), "Hopper");
        assert_eq!(family_of("sm_90a"), "Hopper");
        assert_eq!(features_of("gfx942"), (true, true, true));
        assert_eq!(features_of("gfx1030"), (false, false, false));
        assert_eq!(features_of("sm_90"), (true, true, true));
        assert_eq!(features_of("sm_80"), (true, true, false));
    }
}
