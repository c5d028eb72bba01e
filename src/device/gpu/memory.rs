//! A GPU's memory manager: the caching allocator and pinned pool of [`super::manager`] over
//! the vendor's memory calls, and the `MemoryOps` of [`GpuDevice`] forwarded to it.

use super::GpuDevice;
use super::allocator::MemoryBackend;
use super::vendor::Vendor;
use crate::Result;
use crate::device::memory::{AllocatorConfig, MemoryOps, MemoryStats, PinnedBlock, PinnedStats};
use crate::device::{DevPtr, RawStream};
use std::sync::Arc;

/// The vendor's allocation, event and pinned-memory calls on one device (made current
/// before each call).
pub struct VendorMemory {
    pub vendor: Arc<dyn Vendor>,
    pub ordinal: usize,
}

impl VendorMemory {
    fn bind(&self) -> Result<&dyn Vendor> {
        self.vendor.bind(self.ordinal)?;
        Ok(self.vendor.as_ref())
    }
}

impl MemoryBackend for VendorMemory {
    fn raw_alloc(&self, bytes: usize) -> Result<DevPtr> {
        self.bind()?.mem_alloc(bytes)
    }
    fn raw_free(&self, ptr: DevPtr) -> Result<()> {
        self.bind()?.mem_free(ptr)
    }
    fn mem_info(&self) -> Result<(u64, u64)> {
        self.bind()?.mem_info()
    }
    fn synchronize(&self) -> Result<()> {
        self.bind()?.device_synchronize()
    }
    fn event_create(&self) -> Result<u64> {
        self.bind()?.event_create(false)
    }
    fn event_record(&self, event: u64, stream: RawStream) -> Result<()> {
        self.bind()?.event_record(event, stream)
    }
    fn event_query(&self, event: u64) -> Result<bool> {
        self.bind()?.event_query(event)
    }
    fn event_destroy(&self, event: u64) {
        let _ = self.bind().and_then(|v| v.event_destroy(event));
    }
    fn host_alloc_pinned(&self, bytes: usize) -> Result<*mut u8> {
        self.bind()?.host_alloc_pinned(bytes)
    }
    fn host_free_pinned(&self, ptr: *mut u8) -> Result<()> {
        self.bind()?.host_free_pinned(ptr)
    }
}

impl MemoryOps for GpuDevice {
    fn memory_allocate(&self, bytes: usize, stream: RawStream) -> Result<DevPtr> {
        self.memory.memory_allocate(bytes, stream)
    }
    fn memory_deallocate(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        self.memory.memory_deallocate(ptr, stream)
    }
    fn memory_record_stream(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        self.memory.memory_record_stream(ptr, stream)
    }
    fn memory_check_range(&self, ptr: DevPtr, bytes: usize) -> Result<()> {
        self.memory.memory_check_range(ptr, bytes)
    }
    fn memory_stats(&self) -> Result<MemoryStats> {
        self.memory.memory_stats()
    }
    fn memory_reset_stats(&self) -> Result<()> {
        self.memory.memory_reset_stats()
    }
    fn memory_clear_pool(&self) -> Result<()> {
        self.memory.memory_clear_pool()
    }
    fn memory_info(&self) -> Result<(u64, u64)> {
        self.memory.memory_info()
    }
    fn memory_config(&self) -> Result<AllocatorConfig> {
        self.memory.memory_config()
    }
    fn memory_set_config(&self, config: AllocatorConfig) -> Result<()> {
        self.memory.memory_set_config(config)
    }
    fn memory_warmup(&self, sizes: &[usize]) -> Result<()> {
        self.memory.memory_warmup(sizes)
    }
    fn pinned_acquire(&self, bytes: usize) -> Result<PinnedBlock> {
        self.memory.pinned_acquire(bytes)
    }
    fn pinned_release(&self, ptr: *mut u8) -> Result<()> {
        self.memory.pinned_release(ptr)
    }
    fn pinned_warmup(&self, sizes: &[usize]) -> Result<()> {
        self.memory.pinned_warmup(sizes)
    }
    fn pinned_clear(&self) -> Result<()> {
        self.memory.pinned_clear()
    }
    fn pinned_stats(&self) -> Result<PinnedStats> {
        self.memory.pinned_stats()
    }
}
