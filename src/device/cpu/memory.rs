//! The CPU device's memory manager: the caching allocator and pinned pool over plain host
//! memory ("pinned" is ordinary host memory here). Pooling is off by default, since host
//! allocation is cheap; `memory_set_config` turns it on.

use super::CpuDevice;
use crate::Result;
use crate::device::gpu::allocator::CachingAllocator;
use crate::device::gpu::host::HostMemory;
use crate::device::gpu::pinned::PinnedPool;
use crate::device::memory::{AllocatorConfig, MemoryOps, MemoryStats, PinnedBlock, PinnedStats};
use crate::device::{DevPtr, RawStream};
use std::sync::{Arc, LazyLock};

struct CpuMemory {
    allocator: CachingAllocator<HostMemory>,
    pinned: PinnedPool<HostMemory>,
}

static MEMORY: LazyLock<CpuMemory> = LazyLock::new(|| {
    let backend = Arc::new(HostMemory::synchronous());
    CpuMemory {
        allocator: CachingAllocator::with_backend(
            backend.clone(),
            AllocatorConfig {
                pooling: false,
                ..AllocatorConfig::default()
            },
        ),
        pinned: PinnedPool::new(backend),
    }
});

impl MemoryOps for CpuDevice {
    fn memory_allocate(&self, bytes: usize, stream: RawStream) -> Result<DevPtr> {
        MEMORY.allocator.allocate(bytes, stream)
    }
    fn memory_deallocate(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        MEMORY.allocator.deallocate(ptr, stream)
    }
    fn memory_record_stream(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        MEMORY.allocator.record_stream(ptr, stream)
    }
    fn memory_check_range(&self, ptr: DevPtr, bytes: usize) -> Result<()> {
        MEMORY.allocator.check_range(ptr, bytes).map(|_| ())
    }
    fn memory_stats(&self) -> Result<MemoryStats> {
        Ok(MEMORY.allocator.stats())
    }
    fn memory_reset_stats(&self) -> Result<()> {
        MEMORY.allocator.reset_stats();
        MEMORY.pinned.reset_stats();
        Ok(())
    }
    fn memory_clear_pool(&self) -> Result<()> {
        MEMORY.allocator.empty_cache()
    }
    fn memory_info(&self) -> Result<(u64, u64)> {
        MEMORY.allocator.memory_info()
    }
    fn memory_config(&self) -> Result<AllocatorConfig> {
        Ok(MEMORY.allocator.config())
    }
    fn memory_set_config(&self, config: AllocatorConfig) -> Result<()> {
        MEMORY.allocator.set_config(config)
    }
    fn memory_warmup(&self, sizes: &[usize]) -> Result<()> {
        MEMORY.allocator.warmup(sizes)
    }
    fn pinned_acquire(&self, bytes: usize) -> Result<PinnedBlock> {
        MEMORY.pinned.acquire(bytes)
    }
    fn pinned_release(&self, ptr: *mut u8) -> Result<()> {
        MEMORY.pinned.release(ptr)
    }
    fn pinned_warmup(&self, sizes: &[usize]) -> Result<()> {
        MEMORY.pinned.warmup(sizes)
    }
    fn pinned_clear(&self) -> Result<()> {
        MEMORY.pinned.clear()
    }
    fn pinned_stats(&self) -> Result<PinnedStats> {
        Ok(MEMORY.pinned.stats())
    }
}
