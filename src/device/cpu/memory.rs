//! The CPU device's memory manager: the caching allocator and pinned pool over plain host
//! memory ("pinned" is ordinary host memory here). Pooling is off by default, since host
//! allocation is cheap; `memory_set_config` turns it on.

use super::CpuDevice;
use crate::Result;
use crate::device::gpu::host::HostMemory;
use crate::device::gpu::manager::DeviceMemory;
use crate::device::memory::{AllocatorConfig, MemoryOps, MemoryStats, PinnedBlock, PinnedStats};
use crate::device::{DevPtr, RawStream};
use std::sync::LazyLock;

static MEMORY: LazyLock<DeviceMemory<HostMemory>> = LazyLock::new(|| {
    DeviceMemory::new(
        HostMemory::synchronous(),
        AllocatorConfig {
            pooling: false,
            ..AllocatorConfig::default()
        },
    )
});

impl MemoryOps for CpuDevice {
    fn memory_allocate(&self, bytes: usize, stream: RawStream) -> Result<DevPtr> {
        MEMORY.memory_allocate(bytes, stream)
    }
    fn memory_deallocate(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        MEMORY.memory_deallocate(ptr, stream)
    }
    fn memory_record_stream(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        MEMORY.memory_record_stream(ptr, stream)
    }
    fn memory_check_range(&self, ptr: DevPtr, bytes: usize) -> Result<()> {
        MEMORY.memory_check_range(ptr, bytes)
    }
    fn memory_stats(&self) -> Result<MemoryStats> {
        MEMORY.memory_stats()
    }
    fn memory_reset_stats(&self) -> Result<()> {
        MEMORY.memory_reset_stats()
    }
    fn memory_clear_pool(&self) -> Result<()> {
        MEMORY.memory_clear_pool()
    }
    fn memory_info(&self) -> Result<(u64, u64)> {
        MEMORY.memory_info()
    }
    fn memory_config(&self) -> Result<AllocatorConfig> {
        MEMORY.memory_config()
    }
    fn memory_set_config(&self, config: AllocatorConfig) -> Result<()> {
        MEMORY.memory_set_config(config)
    }
    fn memory_warmup(&self, sizes: &[usize]) -> Result<()> {
        MEMORY.memory_warmup(sizes)
    }
    fn pinned_acquire(&self, bytes: usize) -> Result<PinnedBlock> {
        MEMORY.pinned_acquire(bytes)
    }
    fn pinned_release(&self, ptr: *mut u8) -> Result<()> {
        MEMORY.pinned_release(ptr)
    }
    fn pinned_warmup(&self, sizes: &[usize]) -> Result<()> {
        MEMORY.pinned_warmup(sizes)
    }
    fn pinned_clear(&self) -> Result<()> {
        MEMORY.pinned_clear()
    }
    fn pinned_stats(&self) -> Result<PinnedStats> {
        MEMORY.pinned_stats()
    }
}
