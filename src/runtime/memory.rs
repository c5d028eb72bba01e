//! The memory API of the C ABI in safe Rust: allocation from a device's caching allocator
//! (synchronous on the default stream, or ordered on a stream), copies and memsets on device
//! memory checked against the allocator's live allocations, the pinned host pool, pool
//! warm-up presets, statistics and settings. Works on every device (the CPU device's
//! "device memory" is host memory).

use crate::device::memory::{AllocatorConfig, MemoryStats, PinnedBlock, PinnedStats};
use crate::device::{DevPtr, Device, RawStream};
use crate::runtime::Stream;
use crate::{Error, Result};
use std::sync::Arc;

/// A device's allocator and pinned-pool counters together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceMemoryStats {
    pub allocator: MemoryStats,
    pub pinned: PinnedStats,
}

/// Allocates `bytes` on `device`, usable at once by any stream.
pub fn allocate(device: &Arc<dyn Device>, bytes: usize) -> Result<DevPtr> {
    device.memory_allocate(bytes, RawStream::DEFAULT)
}

/// Allocates `bytes` for work ordered on `stream` (other streams may use it after
/// synchronizing with `stream`).
pub fn allocate_async(stream: &Stream, bytes: usize) -> Result<DevPtr> {
    stream.device().memory_allocate(bytes, stream.raw())
}

/// Frees `ptr` (from [`allocate`] or [`allocate_async`] on `device`) once the work queued on
/// the device's default stream is done with it. An unknown pointer is InvalidArgument.
pub fn deallocate(device: &Arc<dyn Device>, ptr: DevPtr) -> Result<()> {
    device.memory_deallocate(ptr, RawStream::DEFAULT)
}

/// Frees `ptr` once the work queued on `stream` until now is done with it.
pub fn deallocate_async(stream: &Stream, ptr: DevPtr) -> Result<()> {
    stream.device().memory_deallocate(ptr, stream.raw())
}

fn check(device: &Arc<dyn Device>, ptr: DevPtr, bytes: usize, arg: &str) -> Result<()> {
    device
        .memory_check_range(ptr, bytes)
        .map_err(|e| e.context(arg))
}

/// Copies `src` (host memory) to `dst` on `stream`'s device; with `wait`, returns after the
/// copy finished, else the copy is ordered on `stream` and `src` must stay valid until then.
pub fn copy_host_to_device(stream: &Stream, dst: DevPtr, src: &[u8], wait: bool) -> Result<()> {
    let d = stream.device();
    check(d, dst, src.len(), "dst")?;
    d.copy_h2d(src, dst, stream.raw())?;
    if wait { stream.synchronize() } else { Ok(()) }
}

/// Copies device memory `src` to host memory `dst` (as [`copy_host_to_device`]).
pub fn copy_device_to_host(stream: &Stream, dst: &mut [u8], src: DevPtr, wait: bool) -> Result<()> {
    let d = stream.device();
    check(d, src, dst.len(), "src")?;
    d.copy_d2h(src, dst, stream.raw())?;
    if wait { stream.synchronize() } else { Ok(()) }
}

/// Copies `bytes` between two allocations of `stream`'s device (ranges may overlap).
pub fn copy_device_to_device(
    stream: &Stream,
    dst: DevPtr,
    src: DevPtr,
    bytes: usize,
    wait: bool,
) -> Result<()> {
    let d = stream.device();
    check(d, src, bytes, "src")?;
    check(d, dst, bytes, "dst")?;
    d.copy_d2d(src, dst, bytes, stream.raw())?;
    if wait { stream.synchronize() } else { Ok(()) }
}

/// Sets `bytes` bytes at `dst` to `value`.
pub fn memset(stream: &Stream, dst: DevPtr, value: u8, bytes: usize, wait: bool) -> Result<()> {
    let d = stream.device();
    check(d, dst, bytes, "dst")?;
    d.memset(dst, value, bytes, stream.raw())?;
    if wait { stream.synchronize() } else { Ok(()) }
}

pub fn pinned_acquire(device: &Arc<dyn Device>, bytes: usize) -> Result<PinnedBlock> {
    device.pinned_acquire(bytes)
}

pub fn pinned_release(device: &Arc<dyn Device>, ptr: *mut u8) -> Result<()> {
    device.pinned_release(ptr)
}

pub fn pinned_warmup(device: &Arc<dyn Device>, sizes: &[usize]) -> Result<()> {
    device.pinned_warmup(sizes)
}

pub fn pinned_clear(device: &Arc<dyn Device>) -> Result<()> {
    device.pinned_clear()
}

/// Per-sample block sizes of the warm-up presets: typical activation, gradient and workspace
/// sizes of small (e.g. ResNet-18 at 224²), medium and large models.
pub fn warmup_preset(preset: &str) -> Result<&'static [usize]> {
    const KIB: usize = 1 << 10;
    const MIB: usize = 1 << 20;
    Ok(match preset {
        "small" => &[64 * KIB, 256 * KIB, MIB],
        "medium" => &[256 * KIB, MIB, 4 * MIB, 16 * MIB],
        "large" => &[MIB, 4 * MIB, 16 * MIB, 64 * MIB],
        _ => {
            return Err(Error::invalid(format!(
                "'{preset}' is not a warm-up preset (expected \"small\", \"medium\" or \"large\")"
            )));
        }
    })
}

/// The block sizes [`warmup_pool`] reserves: each preset size times `batch_size`.
pub fn warmup_sizes(batch_size: usize, preset: &str) -> Result<Vec<usize>> {
    if batch_size == 0 {
        return Err(Error::invalid("batch_size must be at least 1"));
    }
    warmup_preset(preset)?
        .iter()
        .map(|&s| {
            s.checked_mul(batch_size).ok_or_else(|| {
                Error::invalid(format!(
                    "batch_size {batch_size} with preset '{preset}' overflows"
                ))
            })
        })
        .collect()
}

/// Fills `device`'s cache with blocks sized for `batch_size` samples of a `preset` model, so
/// the first iterations of a training loop hit the cache. A no-op when pooling is off.
pub fn warmup_pool(device: &Arc<dyn Device>, batch_size: usize, preset: &str) -> Result<()> {
    let sizes = warmup_sizes(batch_size, preset)?;
    device.memory_warmup(&sizes)
}

pub fn stats(device: &Arc<dyn Device>) -> Result<DeviceMemoryStats> {
    Ok(DeviceMemoryStats {
        allocator: device.memory_stats()?,
        pinned: device.pinned_stats()?,
    })
}

pub fn reset_stats(device: &Arc<dyn Device>) -> Result<()> {
    device.memory_reset_stats()
}

/// Returns the cached, unused device memory to the device (PyTorch's `empty_cache`).
pub fn clear_pool(device: &Arc<dyn Device>) -> Result<()> {
    device.memory_clear_pool()
}

/// (free, total) bytes of device memory.
pub fn info(device: &Arc<dyn Device>) -> Result<(u64, u64)> {
    device.memory_info()
}

pub fn config(device: &Arc<dyn Device>) -> Result<AllocatorConfig> {
    device.memory_config()
}

pub fn set_config(device: &Arc<dyn Device>, config: AllocatorConfig) -> Result<()> {
    if config.max_pool_bytes != 0 && config.initial_pool_bytes > config.max_pool_bytes {
        return Err(Error::invalid(format!(
            "initial_pool_bytes ({}) exceeds max_pool_bytes ({})",
            config.initial_pool_bytes, config.max_pool_bytes
        )));
    }
    device.memory_set_config(config)?;
    if config.pooling && config.initial_pool_bytes > 0 {
        device.memory_warmup(&[])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets() {
        assert_eq!(
            warmup_sizes(2, "small").unwrap(),
            vec![128 << 10, 512 << 10, 2 << 20]
        );
        assert_eq!(warmup_sizes(1, "large").unwrap().len(), 4);
        assert!(
            warmup_sizes(1, "huge")
                .unwrap_err()
                .message
                .contains("huge")
        );
        assert!(warmup_sizes(0, "small").is_err());
        assert!(warmup_sizes(usize::MAX, "medium").is_err());
    }
}
