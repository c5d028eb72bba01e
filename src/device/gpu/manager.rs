//! [`DeviceMemory`]: one device's caching allocator and pinned host pool over one backend,
//! with the operations of [`crate::device::MemoryOps`]. A device holds one and forwards its
//! `MemoryOps` methods to it (the CPU device does so over [`super::host::HostMemory`]).

use super::allocator::{AllocatorConfig, CachingAllocator, MemoryBackend, MemoryStats};
use super::pinned::{PinnedBlock, PinnedPool, PinnedStats};
use crate::Result;
use crate::device::{DevPtr, RawStream};
use std::sync::Arc;

pub struct DeviceMemory<B: MemoryBackend> {
    pub allocator: CachingAllocator<B>,
    pub pinned: PinnedPool<B>,
}

impl<B: MemoryBackend> DeviceMemory<B> {
    pub fn new(backend: B, config: AllocatorConfig) -> Self {
        let backend = Arc::new(backend);
        DeviceMemory {
            allocator: CachingAllocator::with_backend(backend.clone(), config),
            pinned: PinnedPool::new(backend),
        }
    }
    pub fn backend(&self) -> &Arc<B> {
        self.allocator.backend()
    }
    pub fn memory_allocate(&self, bytes: usize, stream: RawStream) -> Result<DevPtr> {
        self.allocator.allocate(bytes, stream)
    }
    pub fn memory_deallocate(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        self.allocator.deallocate(ptr, stream)
    }
    pub fn memory_record_stream(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        self.allocator.record_stream(ptr, stream)
    }
    pub fn memory_check_range(&self, ptr: DevPtr, bytes: usize) -> Result<()> {
        self.allocator.check_range(ptr, bytes).map(|_| ())
    }
    pub fn memory_stats(&self) -> Result<MemoryStats> {
        Ok(self.allocator.stats())
    }
    /// Resets the allocator's and the pinned pool's peaks and counters.
    pub fn memory_reset_stats(&self) -> Result<()> {
        self.allocator.reset_stats();
        self.pinned.reset_stats();
        Ok(())
    }
    pub fn memory_clear_pool(&self) -> Result<()> {
        self.allocator.empty_cache()
    }
    pub fn memory_info(&self) -> Result<(u64, u64)> {
        self.allocator.memory_info()
    }
    pub fn memory_config(&self) -> Result<AllocatorConfig> {
        Ok(self.allocator.config())
    }
    pub fn memory_set_config(&self, config: AllocatorConfig) -> Result<()> {
        self.allocator.set_config(config)
    }
    pub fn memory_warmup(&self, sizes: &[usize]) -> Result<()> {
        self.allocator.warmup(sizes)
    }
    pub fn pinned_acquire(&self, bytes: usize) -> Result<PinnedBlock> {
        self.pinned.acquire(bytes)
    }
    pub fn pinned_release(&self, ptr: *mut u8) -> Result<()> {
        self.pinned.release(ptr)
    }
    pub fn pinned_warmup(&self, sizes: &[usize]) -> Result<()> {
        self.pinned.warmup(sizes)
    }
    pub fn pinned_clear(&self) -> Result<()> {
        self.pinned.clear()
    }
    pub fn pinned_stats(&self) -> Result<PinnedStats> {
        Ok(self.pinned.stats())
    }
    /// See [`CachingAllocator::stream_destroyed`].
    pub fn stream_destroyed(&self, stream: RawStream) {
        self.allocator.stream_destroyed(stream)
    }
}
