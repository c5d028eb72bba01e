//! Memory: device allocation from the caching allocator, copies and memsets, pinned host
//! memory and its pool, pool warm-up, statistics and settings; plus the kernel compile
//! cache. Every function works on every device: on the CPU device "device
//! memory" is host memory and "pinned" memory is ordinary host memory.
//!
//! Device pointers given to copies and memsets must lie inside memory from
//! `rb_memory_allocate*` on that device (checked: otherwise RB_STATUS_INVALID_ARGUMENT).
//! Host pointers are the caller's and cannot be checked beyond NULL.

use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::util::{bytes, bytes_mut, check_out, cstr, cstr_opt, null, write_out};
use crate::device::gpu::kernel_cache::kernel_cache;
use crate::device::memory::AllocatorConfig;
use crate::device::{DevPtr, Device};
use crate::runtime::{Stream, context, memory};
use crate::{Error, Result};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// Counters of a device's memory manager. "Current" values are exact; peaks and counters
/// restart at `rb_memory_reset_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct rb_memory_stats {
    /// Bytes in blocks handed out and not freed (rounded to 512 bytes).
    pub allocated_bytes: u64,
    pub peak_allocated_bytes: u64,
    /// Bytes the allocator holds from the device (segments).
    pub reserved_bytes: u64,
    pub peak_reserved_bytes: u64,
    /// Allocated bytes plus freed blocks still in use by other streams.
    pub active_bytes: u64,
    pub peak_active_bytes: u64,
    /// Bytes the callers asked for in live blocks.
    pub requested_bytes: u64,
    pub num_allocations: u64,
    pub num_deallocations: u64,
    /// Allocations served from the cache.
    pub cache_hits: u64,
    /// Allocations that needed new device memory.
    pub cache_misses: u64,
    pub segment_allocations: u64,
    pub segment_frees: u64,
    /// Out-of-memory answered by freeing the cache and retrying.
    pub num_alloc_retries: u64,
    /// Allocations that failed with RB_STATUS_OUT_OF_MEMORY.
    pub num_ooms: u64,
    pub num_segments: u64,
    pub num_active_blocks: u64,
    /// Pinned host bytes acquired and not released.
    pub pinned_in_use_bytes: u64,
    pub pinned_peak_in_use_bytes: u64,
    /// Pinned host bytes cached by the pinned pool.
    pub pinned_cached_bytes: u64,
    pub pinned_hits: u64,
    pub pinned_misses: u64,
}

/// Settings of a device's caching allocator.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rb_memory_config {
    /// Cache freed blocks (true, the GPU default) or return them to the device at once
    /// (false, the CPU default). Turning pooling off releases the cache.
    pub pooling: bool,
    /// Bytes reserved up front when the settings are applied (0: none).
    pub pool_size: u64,
    /// Upper bound on the bytes the allocator holds (0: the device's memory).
    pub max_pool_size: u64,
}

/// Counters of the kernel compile cache.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct rb_kernel_cache_stats {
    pub memory_hits: u64,
    pub disk_hits: u64,
    /// Look-ups that compiled.
    pub misses: u64,
    /// (memory_hits + disk_hits) / look-ups; 0 before the first look-up.
    pub hit_rate: f64,
    /// Milliseconds spent compiling.
    pub compile_ms: f64,
    pub compile_errors: u64,
    /// Disk entries found corrupt or truncated (and recompiled).
    pub corrupt_entries: u64,
    /// Entries that could not be written to disk.
    pub disk_write_errors: u64,
    /// Entries held in memory now.
    pub memory_entries: u64,
}

fn device_arg(device: *const c_char) -> Result<Arc<dyn Device>> {
    context::resolve(unsafe { cstr_opt(device, "device") }?)
}

/// The stream argument, or the default stream of the current device for NULL.
fn stream_or_default(s: *mut rb_stream) -> Result<Arc<Stream>> {
    Ok(match stream_arg(s)? {
        Some(s) => s,
        None => Arc::new(Stream::default_for(context::current_device())),
    })
}

fn dev_ptr(p: *const c_void, arg: &str) -> Result<DevPtr> {
    if p.is_null() {
        return Err(null(arg));
    }
    Ok(DevPtr(p as usize as u64))
}

/// Allocates `bytes` of memory on `device` (a device string, or NULL for the current
/// device) from its caching allocator; usable at once by every stream.
///
/// On success `*out` is the device address; the caller owns it and frees it with
/// `rb_memory_deallocate`. `bytes` may be 0 (a unique, non-NULL address). Fails with
/// RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT, RB_STATUS_DEVICE_UNAVAILABLE or
/// RB_STATUS_OUT_OF_MEMORY (after the cache was freed and the allocation retried; the
/// message gives the requested, allocated and reserved bytes); `*out` is then unchanged.
/// Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_allocate(
    device: *const c_char,
    bytes: usize,
    out: *mut *mut c_void,
) -> rb_status {
    guard("rb_memory_allocate", || {
        check_out(out, "out")?;
        let d = device_arg(device)?;
        let p = memory::allocate(&d, bytes)?;
        unsafe { write_out(out, "out", p.0 as usize as *mut c_void) }
    })
}

/// Allocates `bytes` on the device of `stream` (NULL: the current device's default stream)
/// for work ordered on that stream: the memory may still be in use by earlier work of the
/// stream that freed it, and is safe for `stream` (other streams must synchronize with it).
///
/// Ownership, failures and threads as `rb_memory_allocate`; RB_STATUS_INVALID_HANDLE for a
/// stale stream.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_allocate_async(
    stream: *mut rb_stream,
    bytes: usize,
    out: *mut *mut c_void,
) -> rb_status {
    guard("rb_memory_allocate_async", || {
        check_out(out, "out")?;
        let s = stream_or_default(stream)?;
        let p = memory::allocate_async(&s, bytes)?;
        unsafe { write_out(out, "out", p.0 as usize as *mut c_void) }
    })
}

/// Returns `ptr` (from `rb_memory_allocate*` on `device`, NULL: the current device) to the
/// device's allocator. Work already queued on the device's default stream may finish using
/// it. NULL `ptr` is a no-op.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT when `ptr` is not a live allocation of that device
/// (never allocated there, or already freed): nothing changes. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_deallocate(
    device: *const c_char,
    ptr: *mut c_void,
) -> rb_status {
    guard("rb_memory_deallocate", || {
        let d = device_arg(device)?;
        if ptr.is_null() {
            return Ok(());
        }
        memory::deallocate(&d, DevPtr(ptr as usize as u64))
    })
}

/// Returns `ptr` to the allocator of `stream`'s device (NULL stream: the current device's
/// default stream) once the work queued on `stream` until now no longer uses it; other
/// streams reuse it only after that work completed. NULL `ptr` is a no-op.
///
/// Fails with RB_STATUS_INVALID_HANDLE (stream) or RB_STATUS_INVALID_ARGUMENT (`ptr` not a
/// live allocation of that device; nothing changes). Thread-safe.
///
/// # Safety
/// None: the handle and the pointer are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_deallocate_async(
    stream: *mut rb_stream,
    ptr: *mut c_void,
) -> rb_status {
    guard("rb_memory_deallocate_async", || {
        let s = stream_or_default(stream)?;
        if ptr.is_null() {
            return Ok(());
        }
        memory::deallocate_async(&s, DevPtr(ptr as usize as u64))
    })
}

/// Copies `bytes` from host memory `src` to device memory `dst` on `device` (NULL: current)
/// and waits for the copy.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (`dst..dst+bytes` is not
/// inside one allocation of that device), RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_VENDOR;
/// nothing is copied then. `bytes` 0 copies nothing (pointers still checked). Thread-safe.
///
/// # Safety
/// `src` is readable for `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_copy_host_to_device(
    device: *const c_char,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
) -> rb_status {
    guard("rb_memory_copy_host_to_device", || {
        let d = device_arg(device)?;
        let dst = dev_ptr(dst, "dst")?;
        if src.is_null() {
            return Err(null("src"));
        }
        let src = unsafe { self::bytes(src, bytes, "src") }?;
        memory::copy_host_to_device(&Stream::default_for(d), dst, src, true)
    })
}

/// Copies `bytes` from device memory `src` on `device` (NULL: current) to host memory `dst`
/// and waits for the copy.
///
/// Failures as `rb_memory_copy_host_to_device` (`src` is the checked device range).
/// Thread-safe.
///
/// # Safety
/// `dst` is writable for `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_copy_device_to_host(
    device: *const c_char,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
) -> rb_status {
    guard("rb_memory_copy_device_to_host", || {
        let d = device_arg(device)?;
        let src = dev_ptr(src, "src")?;
        if dst.is_null() {
            return Err(null("dst"));
        }
        let dst = unsafe { bytes_mut(dst, bytes, "dst") }?;
        memory::copy_device_to_host(&Stream::default_for(d), dst, src, true)
    })
}

/// Copies `bytes` between two allocations of `device` (NULL: current; the ranges may
/// overlap) and waits for the copy.
///
/// Failures as `rb_memory_copy_host_to_device` (both ranges are checked). Thread-safe.
///
/// # Safety
/// None: both device ranges are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_copy_device_to_device(
    device: *const c_char,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
) -> rb_status {
    guard("rb_memory_copy_device_to_device", || {
        let d = device_arg(device)?;
        let dst = dev_ptr(dst, "dst")?;
        let src = dev_ptr(src, "src")?;
        memory::copy_device_to_device(&Stream::default_for(d), dst, src, bytes, true)
    })
}

/// Queues a copy of `bytes` from host `src` to device `dst` on `stream` (NULL: the current
/// device's default stream) and returns. `src` must stay valid and unchanged until the
/// stream has run the copy (pinned memory from `rb_pinned_pool_acquire` makes it truly
/// asynchronous on GPUs).
///
/// Failures as `rb_memory_copy_host_to_device`, plus RB_STATUS_INVALID_HANDLE for a stale
/// stream. Thread-safe.
///
/// # Safety
/// `src` is readable for `bytes` bytes until the copy ran.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_copy_host_to_device_async(
    stream: *mut rb_stream,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
) -> rb_status {
    guard("rb_memory_copy_host_to_device_async", || {
        let s = stream_or_default(stream)?;
        let dst = dev_ptr(dst, "dst")?;
        if src.is_null() {
            return Err(null("src"));
        }
        let src = unsafe { self::bytes(src, bytes, "src") }?;
        memory::copy_host_to_device(&s, dst, src, false)
    })
}

/// Queues a copy of `bytes` from device `src` to host `dst` on `stream` (NULL: the current
/// device's default stream); `dst` holds the data once the stream has run the copy
/// (`rb_stream_synchronize`).
///
/// Failures as `rb_memory_copy_host_to_device_async`. Thread-safe.
///
/// # Safety
/// `dst` is writable for `bytes` bytes until the copy ran.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_copy_device_to_host_async(
    stream: *mut rb_stream,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
) -> rb_status {
    guard("rb_memory_copy_device_to_host_async", || {
        let s = stream_or_default(stream)?;
        let src = dev_ptr(src, "src")?;
        if dst.is_null() {
            return Err(null("dst"));
        }
        let dst = unsafe { bytes_mut(dst, bytes, "dst") }?;
        memory::copy_device_to_host(&s, dst, src, false)
    })
}

/// Queues a copy of `bytes` between two allocations of `stream`'s device on `stream`.
///
/// Failures as `rb_memory_copy_device_to_device`, plus RB_STATUS_INVALID_HANDLE.
/// Thread-safe.
///
/// # Safety
/// None: the handle and both device ranges are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_copy_device_to_device_async(
    stream: *mut rb_stream,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
) -> rb_status {
    guard("rb_memory_copy_device_to_device_async", || {
        let s = stream_or_default(stream)?;
        let dst = dev_ptr(dst, "dst")?;
        let src = dev_ptr(src, "src")?;
        memory::copy_device_to_device(&s, dst, src, bytes, false)
    })
}

/// Sets `bytes` bytes of device memory at `dst` on `device` (NULL: current) to `value`
/// (converted to unsigned char, as C's memset does) and waits.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (range not inside one
/// allocation of that device), RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_VENDOR.
/// Thread-safe.
///
/// # Safety
/// None: the device range is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_memset(
    device: *const c_char,
    dst: *mut c_void,
    value: i32,
    bytes: usize,
) -> rb_status {
    guard("rb_memory_memset", || {
        let d = device_arg(device)?;
        let dst = dev_ptr(dst, "dst")?;
        memory::memset(&Stream::default_for(d), dst, value as u8, bytes, true)
    })
}

/// Queues a memset of `bytes` bytes at `dst` to `value` on `stream` (NULL: the current
/// device's default stream).
///
/// Failures as `rb_memory_memset`, plus RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// None: the handle and the device range are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_memset_async(
    stream: *mut rb_stream,
    dst: *mut c_void,
    value: i32,
    bytes: usize,
) -> rb_status {
    guard("rb_memory_memset_async", || {
        let s = stream_or_default(stream)?;
        let dst = dev_ptr(dst, "dst")?;
        memory::memset(&s, dst, value as u8, bytes, false)
    })
}

/// Allocates `bytes` of pinned (page-locked) host memory for fast copies with `device`
/// (NULL: current; on the CPU device it is ordinary host memory). Served by the device's
/// pinned pool: the same as `rb_pinned_pool_acquire`.
///
/// On success `*out` is the host address; the caller owns it and frees it with
/// `rb_memory_deallocate_pinned`. Fails with RB_STATUS_NULL_POINTER,
/// RB_STATUS_INVALID_ARGUMENT, RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_OUT_OF_MEMORY;
/// `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_allocate_pinned(
    device: *const c_char,
    bytes: usize,
    out: *mut *mut c_void,
) -> rb_status {
    guard("rb_memory_allocate_pinned", || {
        check_out(out, "out")?;
        let d = device_arg(device)?;
        let b = memory::pinned_acquire(&d, bytes)?;
        unsafe { write_out(out, "out", b.as_ptr() as *mut c_void) }
    })
}

/// Frees pinned memory from `rb_memory_allocate_pinned` (or `rb_pinned_pool_acquire`) on
/// `device` (NULL: current); it returns to the pinned pool. No copy may still be using it.
/// NULL `ptr` is a no-op.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT when `ptr` is not a live pinned block of that
/// device: nothing changes. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_deallocate_pinned(
    device: *const c_char,
    ptr: *mut c_void,
) -> rb_status {
    guard("rb_memory_deallocate_pinned", || {
        let d = device_arg(device)?;
        if ptr.is_null() {
            return Ok(());
        }
        memory::pinned_release(&d, ptr as *mut u8)
    })
}

/// Takes a pinned host block of at least `bytes` from `device`'s pinned pool (NULL: the
/// current device); blocks are cached by size class (powers of two from 4 KiB).
///
/// Ownership and failures as `rb_memory_allocate_pinned`; give it back with
/// `rb_pinned_pool_release`. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pinned_pool_acquire(
    device: *const c_char,
    bytes: usize,
    out: *mut *mut c_void,
) -> rb_status {
    guard("rb_pinned_pool_acquire", || {
        check_out(out, "out")?;
        let d = device_arg(device)?;
        let b = memory::pinned_acquire(&d, bytes)?;
        unsafe { write_out(out, "out", b.as_ptr() as *mut c_void) }
    })
}

/// Gives a block from `rb_pinned_pool_acquire` back to the pool of `device` (NULL:
/// current), which keeps it for reuse. No copy may still be using it. NULL is a no-op.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT when `ptr` is not a live block of that pool.
/// Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pinned_pool_release(
    device: *const c_char,
    ptr: *mut c_void,
) -> rb_status {
    guard("rb_pinned_pool_release", || {
        let d = device_arg(device)?;
        if ptr.is_null() {
            return Ok(());
        }
        memory::pinned_release(&d, ptr as *mut u8)
    })
}

/// Pins one block of each of the `count` sizes at `sizes` and caches them in the pinned pool
/// of `device` (NULL: current), so later acquires of those sizes are fast.
///
/// Fails with RB_STATUS_NULL_POINTER (`sizes` NULL with `count` > 0),
/// RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_OUT_OF_MEMORY (the blocks pinned before the
/// failure stay cached). Thread-safe.
///
/// # Safety
/// `sizes` is NULL or readable for `count` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pinned_pool_warmup(
    device: *const c_char,
    sizes: *const usize,
    count: usize,
) -> rb_status {
    guard("rb_pinned_pool_warmup", || {
        let d = device_arg(device)?;
        let sizes: &[usize] = if count == 0 {
            &[]
        } else if sizes.is_null() {
            return Err(null("sizes"));
        } else {
            unsafe { std::slice::from_raw_parts(sizes, count) }
        };
        memory::pinned_warmup(&d, sizes)
    })
}

/// Unpins every cached block of the pinned pool of `device` (NULL: current); blocks in use
/// stay valid.
///
/// Fails with RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_VENDOR. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pinned_pool_clear(device: *const c_char) -> rb_status {
    guard("rb_pinned_pool_clear", || {
        memory::pinned_clear(&device_arg(device)?)
    })
}

/// Fills the caching allocator of `device` (NULL: current) with blocks sized for
/// `batch_size` samples of a "small", "medium" or "large" model (per sample: small 64 KiB,
/// 256 KiB, 1 MiB; medium 256 KiB, 1, 4, 16 MiB; large 1, 4, 16, 64 MiB), so the first
/// iterations of a training loop hit the cache. Does nothing while pooling is off.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (batch_size < 1, unknown
/// preset, overflowing size), RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_OUT_OF_MEMORY.
/// Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `preset` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_warmup_pool(
    device: *const c_char,
    batch_size: i32,
    preset: *const c_char,
) -> rb_status {
    guard("rb_memory_warmup_pool", || {
        let d = device_arg(device)?;
        let preset = unsafe { cstr(preset, "preset") }?;
        if batch_size < 1 {
            return Err(Error::invalid(format!(
                "batch_size is {batch_size}, must be at least 1"
            )));
        }
        memory::warmup_pool(&d, batch_size as usize, preset)
    })
}

/// Writes the memory counters of `device` (NULL: current) to `*out`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT or
/// RB_STATUS_DEVICE_UNAVAILABLE; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_get_stats(
    device: *const c_char,
    out: *mut rb_memory_stats,
) -> rb_status {
    guard("rb_memory_get_stats", || {
        check_out(out, "out")?;
        let s = memory::stats(&device_arg(device)?)?;
        let (a, p) = (s.allocator, s.pinned);
        let v = rb_memory_stats {
            allocated_bytes: a.allocated_bytes,
            peak_allocated_bytes: a.peak_allocated_bytes,
            reserved_bytes: a.reserved_bytes,
            peak_reserved_bytes: a.peak_reserved_bytes,
            active_bytes: a.active_bytes,
            peak_active_bytes: a.peak_active_bytes,
            requested_bytes: a.requested_bytes,
            num_allocations: a.num_allocations,
            num_deallocations: a.num_deallocations,
            cache_hits: a.cache_hits,
            cache_misses: a.cache_misses,
            segment_allocations: a.segment_allocations,
            segment_frees: a.segment_frees,
            num_alloc_retries: a.num_alloc_retries,
            num_ooms: a.num_ooms,
            num_segments: a.num_segments,
            num_active_blocks: a.num_active_blocks,
            pinned_in_use_bytes: p.in_use_bytes,
            pinned_peak_in_use_bytes: p.peak_in_use_bytes,
            pinned_cached_bytes: p.cached_bytes,
            pinned_hits: p.hits,
            pinned_misses: p.misses,
        };
        unsafe { write_out(out, "out", v) }
    })
}

/// Resets the peaks of `device`'s memory counters (NULL: current) to the current values and
/// its event counters to zero; current values are kept.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT or RB_STATUS_DEVICE_UNAVAILABLE. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_reset_stats(device: *const c_char) -> rb_status {
    guard("rb_memory_reset_stats", || {
        memory::reset_stats(&device_arg(device)?)
    })
}

/// Waits for the device (NULL: current) and returns all of its cached, unused memory to it;
/// live allocations are untouched (PyTorch's `empty_cache`).
///
/// Fails with RB_STATUS_INVALID_ARGUMENT, RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_VENDOR.
/// Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_clear_pool(device: *const c_char) -> rb_status {
    guard("rb_memory_clear_pool", || {
        memory::clear_pool(&device_arg(device)?)
    })
}

/// Writes the free and total bytes of `device`'s memory (NULL: current; host memory for the
/// CPU) to `*free_bytes` and `*total_bytes`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_VENDOR; the outputs are then unchanged.
/// Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_get_info(
    device: *const c_char,
    free_bytes: *mut u64,
    total_bytes: *mut u64,
) -> rb_status {
    guard("rb_memory_get_info", || {
        check_out(free_bytes, "free_bytes")?;
        check_out(total_bytes, "total_bytes")?;
        let (f, t) = memory::info(&device_arg(device)?)?;
        unsafe {
            write_out(free_bytes, "free_bytes", f)?;
            write_out(total_bytes, "total_bytes", t)
        }
    })
}

/// Changes the settings of `device`'s caching allocator (NULL: current). A non-zero
/// `pool_size` reserves that much at once (with pooling on); turning pooling off returns
/// the cache to the device.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (`pool_size` above a non-zero
/// `max_pool_size`), RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_OUT_OF_MEMORY (reserving
/// `pool_size`; the other settings are then applied). Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `config` is NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_set_config(
    device: *const c_char,
    config: *const rb_memory_config,
) -> rb_status {
    guard("rb_memory_set_config", || {
        if config.is_null() {
            return Err(null("config"));
        }
        let c = unsafe { *config };
        memory::set_config(
            &device_arg(device)?,
            AllocatorConfig {
                pooling: c.pooling,
                initial_pool_bytes: c.pool_size,
                max_pool_bytes: c.max_pool_size,
            },
        )
    })
}

/// Writes the settings of `device`'s caching allocator (NULL: current) to `*out`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT or
/// RB_STATUS_DEVICE_UNAVAILABLE; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_memory_get_config(
    device: *const c_char,
    out: *mut rb_memory_config,
) -> rb_status {
    guard("rb_memory_get_config", || {
        check_out(out, "out")?;
        let c = memory::config(&device_arg(device)?)?;
        let v = rb_memory_config {
            pooling: c.pooling,
            pool_size: c.initial_pool_bytes,
            max_pool_size: c.max_pool_bytes,
        };
        unsafe { write_out(out, "out", v) }
    })
}

/// Writes the counters of the process's kernel compile cache to `*out`.
///
/// Fails with RB_STATUS_NULL_POINTER; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_cache_get_stats(out: *mut rb_kernel_cache_stats) -> rb_status {
    guard("rb_kernel_cache_get_stats", || {
        check_out(out, "out")?;
        let s = kernel_cache().stats();
        let v = rb_kernel_cache_stats {
            memory_hits: s.memory_hits,
            disk_hits: s.disk_hits,
            misses: s.misses,
            hit_rate: s.hit_rate,
            compile_ms: s.compile_ms,
            compile_errors: s.compile_errors,
            corrupt_entries: s.corrupt_entries,
            disk_write_errors: s.disk_write_errors,
            memory_entries: s.memory_entries,
        };
        unsafe { write_out(out, "out", v) }
    })
}

/// Drops every compiled kernel of the process's kernel cache, in memory and in its disk
/// directory ($RB_CACHE_DIR, else $XDG_CACHE_HOME/rocm_backend, else
/// ~/.cache/rocm_backend; only the cache's own files are removed). Modules already loaded
/// stay usable; later look-ups compile again.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT when the directory cannot be read or an entry
/// cannot be removed (the memory part is cleared anyway). Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_kernel_cache_clear() -> rb_status {
    guard("rb_kernel_cache_clear", || kernel_cache().clear())
}
