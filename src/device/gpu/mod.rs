//! Everything GPU-generic: caching allocator, pinned host pool, kernel cache, profiler.
//! Nothing here names a vendor symbol; the vendor tables live in `vendor/`.
//!
//! How a GPU device plugs these in: implement [`allocator::MemoryBackend`] over the vendor
//! table (`raw_alloc` maps the vendor's out-of-memory code to `ErrorKind::OutOfMemory`), hold
//! a [`manager::DeviceMemory`] and forward the [`crate::device::MemoryOps`] methods to it,
//! serve `Device::alloc`/`free` from its allocator (so tensors share the cache and
//! `memory_check_range` knows their memory), synchronize a stream and call
//! [`manager::DeviceMemory::stream_destroyed`] before destroying it, compile through
//! [`kernel_cache::kernel_cache`] with a [`kernel_cache::KernelCompiler`] over hiprtc/nvrtc,
//! and feed launch timings to [`profiler::profiler`] while it is enabled.

pub mod allocator;
pub mod host;
pub mod kernel_cache;
pub mod manager;
pub mod pinned;
pub mod profiler;
