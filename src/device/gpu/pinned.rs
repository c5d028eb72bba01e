//! The pinned (page-locked) host memory pool, for fast and asynchronous host<->device copies.
//!
//! Pinning memory is slow (it maps pages for the device), so released blocks are cached by
//! size class and handed out again: classes are powers of two from 4 KiB up to 64 MiB, then
//! multiples of 2 MiB. A block must not be released while an asynchronous copy still uses
//! it (synchronize the stream first), as with `hipHostFree`.

use super::allocator::MemoryBackend;
use crate::{Error, ErrorKind, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// Smallest size class.
pub const MIN_CLASS: usize = 4096;
/// Up to this size classes are powers of two; above it, multiples of [`LARGE_STEP`].
pub const POW2_LIMIT: usize = 64 << 20;
pub const LARGE_STEP: usize = 2 << 20;

/// A block of pinned host memory from [`PinnedPool::acquire`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedBlock {
    ptr: *mut u8,
    len: usize,
    capacity: usize,
}

// SAFETY: the block is plain host memory; ownership is tracked by the pool.
unsafe impl Send for PinnedBlock {}
// SAFETY: as above.
unsafe impl Sync for PinnedBlock {}

impl PinnedBlock {
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
    /// Bytes asked for.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Bytes usable (the size class).
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

/// Counters of a [`PinnedPool`]; peaks and counters restart at `reset_stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PinnedStats {
    /// Bytes (size classes) of blocks acquired and not released.
    pub in_use_bytes: u64,
    pub peak_in_use_bytes: u64,
    /// Bytes of released blocks kept for reuse.
    pub cached_bytes: u64,
    pub acquires: u64,
    pub releases: u64,
    /// Acquires served from the cache.
    pub hits: u64,
    /// Acquires that pinned new memory.
    pub misses: u64,
    /// Pinned allocations and frees made with the backend.
    pub host_allocs: u64,
    pub host_frees: u64,
}

#[derive(Default)]
struct State {
    free: HashMap<usize, Vec<usize>>,
    in_use: HashMap<usize, (usize, usize)>,
    stats: PinnedStats,
}

/// The pool; `Send + Sync`, internally locked.
pub struct PinnedPool<B: MemoryBackend> {
    backend: Arc<B>,
    state: Mutex<State>,
}

/// The size class of a request.
pub fn size_class(bytes: usize) -> Result<usize> {
    let b = bytes.max(MIN_CLASS);
    let c = if b <= POW2_LIMIT {
        b.next_power_of_two()
    } else {
        b.checked_add(LARGE_STEP - 1)
            .map(|x| x / LARGE_STEP * LARGE_STEP)
            .ok_or_else(|| Error::oom(format!("cannot pin {bytes} bytes: the size overflows")))?
    };
    Ok(c)
}

impl<B: MemoryBackend> PinnedPool<B> {
    pub fn new(backend: Arc<B>) -> Self {
        PinnedPool {
            backend,
            state: Mutex::default(),
        }
    }

    /// A pinned block of at least `bytes` (0 allowed: the smallest class).
    pub fn acquire(&self, bytes: usize) -> Result<PinnedBlock> {
        let class = size_class(bytes)?;
        let mut st = self.state.lock();
        let reused = st.free.get_mut(&class).and_then(|v| v.pop());
        let ptr = match reused {
            Some(p) => {
                st.stats.hits += 1;
                st.stats.cached_bytes -= class as u64;
                p
            }
            None => {
                st.stats.misses += 1;
                let p = match self.backend.host_alloc_pinned(class) {
                    Ok(p) => p,
                    Err(e) if e.kind == ErrorKind::OutOfMemory => {
                        // Give the cache back and try once more.
                        self.free_cached(&mut st)?;
                        self.backend.host_alloc_pinned(class).map_err(|e2| {
                            Error::oom(format!(
                                "cannot pin {bytes} bytes of host memory ({} pinned in use): {}",
                                st.stats.in_use_bytes, e2.message
                            ))
                        })?
                    }
                    Err(e) => return Err(e),
                };
                st.stats.host_allocs += 1;
                p as usize
            }
        };
        st.in_use.insert(ptr, (class, bytes));
        let s = &mut st.stats;
        s.acquires += 1;
        s.in_use_bytes += class as u64;
        s.peak_in_use_bytes = s.peak_in_use_bytes.max(s.in_use_bytes);
        Ok(PinnedBlock {
            ptr: ptr as *mut u8,
            len: bytes,
            capacity: class,
        })
    }

    /// Returns a block (by its start address) to the pool. An address the pool did not hand
    /// out, or already released, is InvalidArgument and changes nothing.
    pub fn release(&self, ptr: *mut u8) -> Result<()> {
        let mut st = self.state.lock();
        let Some((class, _)) = st.in_use.remove(&(ptr as usize)) else {
            return Err(Error::invalid(format!(
                "{ptr:p} is not a pinned block of this pool (never acquired, or already released)"
            )));
        };
        st.free.entry(class).or_default().push(ptr as usize);
        let s = &mut st.stats;
        s.releases += 1;
        s.in_use_bytes -= class as u64;
        s.cached_bytes += class as u64;
        Ok(())
    }

    /// Returns `block` to the pool (as [`Self::release`] of its address).
    pub fn release_block(&self, block: PinnedBlock) -> Result<()> {
        self.release(block.as_ptr())
    }

    /// The acquired block holding `[ptr, ptr + bytes)`, as (start, bytes asked for).
    pub fn check_range(&self, ptr: *const u8, bytes: usize) -> Result<(usize, usize)> {
        let st = self.state.lock();
        let a = ptr as usize;
        for (&start, &(_, len)) in &st.in_use {
            if a >= start && a < start + len.max(1) {
                return if (a - start).checked_add(bytes).is_some_and(|e| e <= len) {
                    Ok((start, len))
                } else {
                    Err(Error::invalid(format!(
                        "{bytes} bytes at {ptr:p} run past the end of the {len}-byte pinned block at {start:#x}"
                    )))
                };
            }
        }
        Err(Error::invalid(format!(
            "{ptr:p} is not inside an acquired pinned block"
        )))
    }

    /// Pins one block of each size and releases them into the cache.
    pub fn warmup(&self, sizes: &[usize]) -> Result<()> {
        let mut got = Vec::with_capacity(sizes.len());
        let mut res = Ok(());
        for &s in sizes {
            match self.acquire(s) {
                Ok(b) => got.push(b),
                Err(e) => {
                    res = Err(e);
                    break;
                }
            }
        }
        for b in got {
            self.release(b.as_ptr())?;
        }
        res
    }

    /// Unpins every cached block (blocks in use stay with their owners).
    pub fn clear(&self) -> Result<()> {
        let mut st = self.state.lock();
        self.free_cached(&mut st)
    }

    fn free_cached(&self, st: &mut State) -> Result<()> {
        let mut res = Ok(());
        let free = std::mem::take(&mut st.free);
        for (class, ptrs) in free {
            for p in ptrs {
                match self.backend.host_free_pinned(p as *mut u8) {
                    Ok(()) => {
                        st.stats.cached_bytes -= class as u64;
                        st.stats.host_frees += 1;
                    }
                    Err(e) => {
                        st.free.entry(class).or_default().push(p);
                        res = Err(e);
                    }
                }
            }
        }
        res
    }

    pub fn stats(&self) -> PinnedStats {
        self.state.lock().stats
    }

    /// Keeps current values, resets peaks and counters.
    pub fn reset_stats(&self) {
        let mut st = self.state.lock();
        let s = st.stats;
        st.stats = PinnedStats {
            in_use_bytes: s.in_use_bytes,
            peak_in_use_bytes: s.in_use_bytes,
            cached_bytes: s.cached_bytes,
            ..PinnedStats::default()
        };
    }
}

impl<B: MemoryBackend> Drop for PinnedPool<B> {
    fn drop(&mut self) {
        let _ = self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::gpu::host::HostMemory;

    fn pool() -> (PinnedPool<HostMemory>, Arc<HostMemory>) {
        let b = Arc::new(HostMemory::simulated(None));
        (PinnedPool::new(b.clone()), b)
    }

    #[test]
    fn classes() {
        assert_eq!(size_class(0).unwrap(), 4096);
        assert_eq!(size_class(4097).unwrap(), 8192);
        assert_eq!(size_class(1 << 20).unwrap(), 1 << 20);
        assert_eq!(size_class(POW2_LIMIT).unwrap(), POW2_LIMIT);
        assert_eq!(size_class(POW2_LIMIT + 1).unwrap(), POW2_LIMIT + LARGE_STEP);
        assert!(size_class(usize::MAX).is_err());
    }

    #[test]
    fn reuse_by_class_and_stats() {
        let (p, b) = pool();
        let x = p.acquire(5000).unwrap();
        assert_eq!((x.len(), x.capacity()), (5000, 8192));
        // The memory is usable.
        unsafe { std::ptr::write_bytes(x.as_ptr(), 7, x.capacity()) };
        p.release(x.as_ptr()).unwrap();
        let y = p.acquire(8000).unwrap();
        assert_eq!(y.as_ptr(), x.as_ptr());
        let z = p.acquire(100).unwrap();
        assert_ne!(z.as_ptr(), x.as_ptr());
        let s = p.stats();
        assert_eq!((s.acquires, s.hits, s.misses, s.host_allocs), (3, 1, 2, 2));
        assert_eq!(s.in_use_bytes, 8192 + 4096);
        p.release_block(y).unwrap();
        p.release_block(z).unwrap();
        assert_eq!(p.stats().cached_bytes, 8192 + 4096);
        assert_eq!(b.live_pinned(), 2);
        p.clear().unwrap();
        let s = p.stats();
        assert_eq!((s.cached_bytes, s.in_use_bytes, s.host_frees), (0, 0, 2));
        assert_eq!(b.live_pinned(), 0);
    }

    #[test]
    fn bad_release_and_ranges() {
        let (p, _b) = pool();
        let x = p.acquire(100).unwrap();
        let mut local = 0u8;
        assert_eq!(
            p.release(&mut local).unwrap_err().kind,
            ErrorKind::InvalidArgument
        );
        assert!(p.check_range(x.as_ptr(), 100).is_ok());
        assert!(p.check_range(unsafe { x.as_ptr().add(50) }, 51).is_err());
        assert!(p.check_range(&local, 1).is_err());
        p.release(x.as_ptr()).unwrap();
        assert!(p.release(x.as_ptr()).is_err(), "double release");
        assert_eq!(p.stats().releases, 1);
    }

    #[test]
    fn warmup_then_hits_and_threads() {
        let (p, b) = pool();
        p.warmup(&[1 << 20, 1 << 20, 10_000]).unwrap();
        assert_eq!(p.stats().cached_bytes, 2 * (1 << 20) + 16384);
        p.reset_stats();
        let p = Arc::new(p);
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for j in 0..200 {
                        let blk = p.acquire((i * 1000 + j * 37) % (2 << 20)).unwrap();
                        unsafe { *blk.as_ptr() = i as u8 };
                        p.release(blk.as_ptr()).unwrap();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let s = p.stats();
        assert_eq!(s.acquires, 1600);
        assert_eq!(s.acquires, s.releases);
        assert_eq!(s.hits + s.misses, s.acquires);
        assert_eq!(s.in_use_bytes, 0);
        p.clear().unwrap();
        assert_eq!(b.live_pinned(), 0);
    }
}
