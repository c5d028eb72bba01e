//! The memory manager of a device (DESIGN §6): its caching allocator, pinned host pool and
//! their statistics and settings. GPU devices delegate to
//! [`crate::device::gpu::allocator::CachingAllocator`] and
//! [`crate::device::gpu::pinned::PinnedPool`]; the CPU device uses the same two over plain
//! host memory. Copies and memsets are [`super::Device`]'s own methods.

use super::{DevPtr, RawStream};
use crate::{Error, Result};

pub use super::gpu::allocator::{AllocatorConfig, MemoryStats};
pub use super::gpu::pinned::{PinnedBlock, PinnedStats};

fn unsupported<T>(what: &str) -> Result<T> {
    Err(Error::unsupported(format!(
        "{what} is not implemented on this device"
    )))
}

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables)]
pub trait MemoryOps {
    /// Allocates `bytes` from the device's caching allocator for use on `stream`.
    fn memory_allocate(&self, bytes: usize, stream: RawStream) -> Result<DevPtr> {
        unsupported("memory_allocate")
    }
    /// Frees memory from [`Self::memory_allocate`]; `stream` is the stream that last used
    /// it. An unknown pointer is InvalidArgument.
    fn memory_deallocate(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        unsupported("memory_deallocate")
    }
    /// Marks an allocation as used on `stream` as well (its reuse waits for that stream).
    fn memory_record_stream(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        unsupported("memory_record_stream")
    }
    /// Ok when `[ptr, ptr + bytes)` lies inside one live allocation of the allocator, else
    /// InvalidArgument naming the pointer.
    fn memory_check_range(&self, ptr: DevPtr, bytes: usize) -> Result<()> {
        unsupported("memory_check_range")
    }
    fn memory_stats(&self) -> Result<MemoryStats> {
        unsupported("memory_stats")
    }
    fn memory_reset_stats(&self) -> Result<()> {
        unsupported("memory_reset_stats")
    }
    /// Returns the cached, unused memory to the device.
    fn memory_clear_pool(&self) -> Result<()> {
        unsupported("memory_clear_pool")
    }
    /// (free, total) bytes of device memory.
    fn memory_info(&self) -> Result<(u64, u64)> {
        unsupported("memory_info")
    }
    fn memory_config(&self) -> Result<AllocatorConfig> {
        unsupported("memory_config")
    }
    fn memory_set_config(&self, config: AllocatorConfig) -> Result<()> {
        unsupported("memory_set_config")
    }
    /// Allocates and frees one block of each size so later requests hit the cache.
    fn memory_warmup(&self, sizes: &[usize]) -> Result<()> {
        unsupported("memory_warmup")
    }
    /// A block of pinned (page-locked) host memory from the pinned pool.
    fn pinned_acquire(&self, bytes: usize) -> Result<PinnedBlock> {
        unsupported("pinned_acquire")
    }
    /// Returns a pinned block by its start address; an unknown address is InvalidArgument.
    fn pinned_release(&self, ptr: *mut u8) -> Result<()> {
        unsupported("pinned_release")
    }
    fn pinned_warmup(&self, sizes: &[usize]) -> Result<()> {
        unsupported("pinned_warmup")
    }
    fn pinned_clear(&self) -> Result<()> {
        unsupported("pinned_clear")
    }
    fn pinned_stats(&self) -> Result<PinnedStats> {
        unsupported("pinned_stats")
    }
}
