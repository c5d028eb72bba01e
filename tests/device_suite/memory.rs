//! The memory manager on every device, through `runtime::memory`: allocation, copies and
//! memsets (sync and on a stream), stream-ordered frees, unknown pointers, stats balance,
//! pool warm-up, the pinned pool, and an 8-thread hammer on the device's allocator.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::device::DevPtr;
use rocm_backend::device::memory::AllocatorConfig;
use rocm_backend::runtime::{Stream, memory};
use std::sync::{Arc, Mutex};

/// The bodies below read a device's allocator stats: they run one at a time.
pub static SERIAL: Mutex<()> = Mutex::new(());

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("memory_roundtrip", memory_roundtrip),
        ("memory_streams", memory_streams),
        ("memory_misuse", memory_misuse),
        ("memory_pooling_stats_warmup", memory_pooling_stats_warmup),
        ("memory_pinned_pool", memory_pinned_pool),
        ("memory_threads", memory_threads),
    ]
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn memory_roundtrip(dev: &Dev) -> TestResult {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Stream::default_for(dev.clone());
    // Sizes across the small/large pools and off the 512-byte grid.
    for n in [1usize, 511, 513, 4096, 1 << 20, (1 << 20) + 1, 3 << 20] {
        let src = pattern(n, n as u8);
        let a = ok(memory::allocate(dev, n))?;
        let b = ok(memory::allocate(dev, n))?;
        ok(memory::copy_host_to_device(&s, a, &src, true))?;
        ok(memory::copy_device_to_device(&s, b, a, n, true))?;
        let m = n / 3;
        ok(memory::memset(&s, b.offset(m), 0x5a, n - m, true))?;
        let mut back = vec![0u8; n];
        ok(memory::copy_device_to_host(&s, &mut back, b, true))?;
        let mut want = src.clone();
        want[m..].fill(0x5a);
        ensure(back == want, format!("roundtrip of {n} bytes differs"))?;
        ok(memory::deallocate(dev, a))?;
        ok(memory::deallocate(dev, b))?;
    }
    Ok(())
}

fn memory_streams(dev: &Dev) -> TestResult {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s1 = ok(Stream::new(dev.clone()))?;
    let s2 = ok(Stream::new(dev.clone()))?;
    let n = 1 << 16;
    let src = pattern(n, 7);
    let mut back = vec![0u8; n];
    for _ in 0..4 {
        let a = ok(memory::allocate_async(&s1, n))?;
        ok(memory::copy_host_to_device(&s1, a, &src, false))?;
        ok(memory::memset(&s1, a, 1, 16, false))?;
        ok(memory::copy_device_to_host(&s1, &mut back, a, false))?;
        // Freed on s1 while its work may still run; the next allocation on s2 must not
        // clobber it before s1 is done.
        ok(memory::deallocate_async(&s1, a))?;
        let b = ok(memory::allocate_async(&s2, n))?;
        ok(memory::memset(&s2, b, 0xee, n, false))?;
        ok(s1.synchronize())?;
        let mut want = src.clone();
        want[..16].fill(1);
        ensure(back == want, "data on s1 was overwritten by s2's reuse")?;
        ok(s2.synchronize())?;
        ok(memory::deallocate_async(&s2, b))?;
    }
    ok(s2.synchronize())
}

fn memory_misuse(dev: &Dev) -> TestResult {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Stream::default_for(dev.clone());
    let unknown = DevPtr(0x10_0000_1000);
    let e = memory::deallocate(dev, unknown).err();
    ensure(
        e.as_ref().is_some_and(|e| {
            e.kind == ErrorKind::InvalidArgument && e.message.contains("0x1000001000")
        }),
        format!("unknown pointer: {e:?}"),
    )?;
    let a = ok(memory::allocate(dev, 100))?;
    let src = [0u8; 128];
    let e = memory::copy_host_to_device(&s, a, &src, true).err();
    ensure(
        e.is_some_and(|e| e.kind == ErrorKind::InvalidArgument),
        "a copy past the end is refused",
    )?;
    let e = memory::copy_device_to_device(&s, a, unknown, 8, true).err();
    ensure(
        e.is_some_and(|e| e.kind == ErrorKind::InvalidArgument),
        "a copy from an unknown pointer is refused",
    )?;
    ok(memory::deallocate(dev, a))?;
    let e = memory::deallocate(dev, a).err();
    ensure(
        e.is_some_and(|e| e.kind == ErrorKind::InvalidArgument),
        "double free is refused",
    )?;
    let e = memory::allocate(dev, usize::MAX / 2).err();
    ensure(
        e.is_some_and(|e| e.kind == ErrorKind::OutOfMemory),
        "an impossible size is OUT_OF_MEMORY",
    )
}

fn memory_pooling_stats_warmup(dev: &Dev) -> TestResult {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let saved = ok(memory::config(dev))?;
    ok(memory::set_config(
        dev,
        AllocatorConfig {
            pooling: true,
            ..AllocatorConfig::default()
        },
    ))?;
    ok(memory::clear_pool(dev))?;
    ok(memory::reset_stats(dev))?;
    let base = ok(memory::stats(dev))?.allocator;
    let p = ok(memory::allocate(dev, 1000))?;
    ok(memory::deallocate(dev, p))?;
    let q = ok(memory::allocate(dev, 1000))?;
    let s = ok(memory::stats(dev))?.allocator;
    ensure(q == p, "a freed block is reused by the same stream")?;
    ensure(
        s.cache_hits == base.cache_hits + 1 && s.allocated_bytes == base.allocated_bytes + 1024,
        format!("stats after reuse: {s:?}"),
    )?;
    ok(memory::deallocate(dev, q))?;
    ok(memory::warmup_pool(dev, 4, "medium"))?;
    ok(memory::reset_stats(dev))?;
    let sizes = ok(memory::warmup_sizes(4, "medium"))?;
    let ptrs: Vec<DevPtr> = sizes
        .iter()
        .map(|&n| ok(memory::allocate(dev, n)))
        .collect::<Result<_, _>>()?;
    let s = ok(memory::stats(dev))?.allocator;
    ensure(
        s.cache_misses == 0 && s.cache_hits == sizes.len() as u64,
        format!("after warm-up every preset size hits: {s:?}"),
    )?;
    for p in ptrs {
        ok(memory::deallocate(dev, p))?;
    }
    ok(memory::clear_pool(dev))?;
    let s = ok(memory::stats(dev))?.allocator;
    ensure(
        s.allocated_bytes == base.allocated_bytes
            && s.reserved_bytes <= s.allocated_bytes.max(base.reserved_bytes),
        format!("clear_pool returns the cache: {s:?}"),
    )?;
    let (free, total) = ok(memory::info(dev))?;
    ensure(
        total > 0 && free <= total,
        format!("memory info {free}/{total}"),
    )?;
    ok(memory::set_config(dev, saved))
}

fn memory_pinned_pool(dev: &Dev) -> TestResult {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    ok(memory::pinned_clear(dev))?;
    let b = ok(memory::pinned_acquire(dev, 100_000))?;
    ensure(b.capacity() >= 100_000, "pinned block too small")?;
    // Pinned memory is a fast staging buffer for copies.
    let src = pattern(100_000, 3);
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), b.as_ptr(), src.len()) };
    let s = Stream::default_for(dev.clone());
    let d = ok(memory::allocate(dev, src.len()))?;
    let pinned_src = unsafe { std::slice::from_raw_parts(b.as_ptr(), src.len()) };
    ok(memory::copy_host_to_device(&s, d, pinned_src, true))?;
    let mut back = vec![0u8; src.len()];
    ok(memory::copy_device_to_host(&s, &mut back, d, true))?;
    ensure(back == src, "copy through pinned memory differs")?;
    ok(memory::deallocate(dev, d))?;
    ok(memory::pinned_release(dev, b.as_ptr()))?;
    let again = ok(memory::pinned_acquire(dev, 90_000))?;
    ensure(
        again.as_ptr() == b.as_ptr(),
        "the pinned pool reuses a released block",
    )?;
    ok(memory::pinned_release(dev, again.as_ptr()))?;
    let e = memory::pinned_release(dev, again.as_ptr()).err();
    ensure(
        e.is_some_and(|e| e.kind == ErrorKind::InvalidArgument),
        "double release is refused",
    )?;
    ok(memory::pinned_warmup(dev, &[1 << 20]))?;
    let st = ok(memory::stats(dev))?.pinned;
    ensure(
        st.cached_bytes >= 1 << 20 && st.in_use_bytes == 0,
        format!("{st:?}"),
    )?;
    ok(memory::pinned_clear(dev))?;
    ensure(
        ok(memory::stats(dev))?.pinned.cached_bytes == 0,
        "clear unpins the cache",
    )
}

fn memory_threads(dev: &Dev) -> TestResult {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = ok(memory::stats(dev))?.allocator;
    let dev = dev.clone();
    let hs: Vec<_> = (0..8u64)
        .map(|t| {
            let dev: Dev = Arc::clone(&dev);
            std::thread::spawn(move || -> Result<(), String> {
                let s = Stream::new(dev.clone()).map_err(|e| e.message)?;
                let mut live = Vec::new();
                for i in 0..200u64 {
                    let n = 1 + ((t * 7919 + i * 104_729) % (300 << 10)) as usize;
                    let p = memory::allocate_async(&s, n).map_err(|e| e.message)?;
                    live.push((p, n));
                    if i % 3 == 0 {
                        let (p, _) = live.swap_remove((i as usize * 13) % live.len());
                        memory::deallocate_async(&s, p).map_err(|e| e.message)?;
                    }
                }
                for (p, _) in live {
                    memory::deallocate_async(&s, p).map_err(|e| e.message)?;
                }
                s.synchronize().map_err(|e| e.message)
            })
        })
        .collect();
    for h in hs {
        h.join().map_err(|_| "thread panicked")??;
    }
    let after = ok(memory::stats(&dev))?.allocator;
    ensure(
        after.allocated_bytes == before.allocated_bytes
            && after.num_allocations - before.num_allocations == 1600
            && after.num_deallocations - before.num_deallocations == 1600,
        format!("stats balance: before {before:?}, after {after:?}"),
    )
}
