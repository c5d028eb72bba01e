//! [`HostMemory`]: a [`MemoryBackend`] over host memory. The CPU device uses it (events
//! complete at once, as CPU work is synchronous); tests use it as a stand-in for a GPU, with
//! a capacity to force out-of-memory and streams whose work completes only when told to.

use super::allocator::MemoryBackend;
use crate::device::{DevPtr, RawStream};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::alloc::{Layout, alloc, dealloc};
use std::collections::HashMap;

/// Alignment of every raw allocation.
pub const HOST_ALIGN: usize = 256;

#[derive(Default)]
struct Inner {
    live: HashMap<u64, usize>,
    used: u64,
    pinned: HashMap<usize, usize>,
    /// event -> (stream, ticket) of its last record.
    events: HashMap<u64, Option<(RawStream, u64)>>,
    next_event: u64,
    submitted: HashMap<RawStream, u64>,
    completed: HashMap<RawStream, u64>,
    raw_allocs: u64,
    raw_frees: u64,
    syncs: u64,
}

/// Host memory behind the [`MemoryBackend`] interface.
pub struct HostMemory {
    capacity: Option<u64>,
    /// When true every event is complete as soon as it is recorded (the CPU device).
    synchronous: bool,
    inner: Mutex<Inner>,
}

impl HostMemory {
    /// The CPU device's backend: no capacity beyond the host's, synchronous events.
    pub fn synchronous() -> Self {
        HostMemory {
            capacity: None,
            synchronous: true,
            inner: Mutex::default(),
        }
    }

    /// A simulated device of `capacity` bytes (None: unbounded) whose streams complete their
    /// work only at [`Self::complete`] or [`MemoryBackend::synchronize`].
    pub fn simulated(capacity: Option<u64>) -> Self {
        HostMemory {
            capacity,
            synchronous: false,
            inner: Mutex::default(),
        }
    }

    /// Queues (simulated) work on `stream`: events recorded from now on complete only after
    /// [`Self::complete`].
    pub fn submit(&self, stream: RawStream) {
        *self.inner.lock().submitted.entry(stream).or_default() += 1;
    }

    /// Completes all work queued on `stream` so far.
    pub fn complete(&self, stream: RawStream) {
        let mut g = self.inner.lock();
        let s = g.submitted.get(&stream).copied().unwrap_or(0);
        g.completed.insert(stream, s);
    }

    /// Segments currently held from this backend.
    pub fn live_allocations(&self) -> usize {
        self.inner.lock().live.len()
    }
    /// Bytes currently held.
    pub fn used_bytes(&self) -> u64 {
        self.inner.lock().used
    }
    /// Pinned blocks currently held.
    pub fn live_pinned(&self) -> usize {
        self.inner.lock().pinned.len()
    }
    /// Events currently created and not destroyed.
    pub fn live_events(&self) -> usize {
        self.inner.lock().events.len()
    }
    /// (raw allocations, raw frees, synchronizations) so far.
    pub fn counters(&self) -> (u64, u64, u64) {
        let g = self.inner.lock();
        (g.raw_allocs, g.raw_frees, g.syncs)
    }
}

/// Allocations at least this large are aligned to [`HUGE_PAGE`] and advised to use
/// transparent huge pages (as NumPy does from 4 MiB): large tensors are streamed, and with
/// 4 KiB pages the TLB misses and page faults cost a visible share of the bandwidth.
const HUGE_FROM: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

fn layout(bytes: usize) -> Result<Layout> {
    let align = if bytes >= HUGE_FROM {
        HUGE_PAGE
    } else {
        HOST_ALIGN
    };
    Layout::from_size_align(bytes.max(1), align)
        .map_err(|_| Error::oom(format!("cannot allocate {bytes} bytes of host memory")))
}

/// Asks for transparent huge pages over a large block (a hint: failure changes nothing).
fn advise_huge(p: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    if bytes >= HUGE_FROM {
        // SAFETY: [p, p + bytes) is a live allocation of ours, aligned to a huge page (so to
        // the base page); madvise only changes how the kernel backs it.
        unsafe {
            libc::madvise(p.cast(), bytes, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, bytes);
}

impl MemoryBackend for HostMemory {
    fn raw_alloc(&self, bytes: usize) -> Result<DevPtr> {
        let mut g = self.inner.lock();
        if let Some(cap) = self.capacity
            && g.used + bytes as u64 > cap
        {
            return Err(Error::oom(format!(
                "simulated device: {bytes} bytes requested, {} of {cap} in use",
                g.used
            )));
        }
        let l = layout(bytes)?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc(l) };
        if p.is_null() {
            return Err(Error::oom(format!(
                "cannot allocate {bytes} bytes of host memory"
            )));
        }
        advise_huge(p, bytes);
        g.live.insert(p as usize as u64, bytes);
        g.used += bytes as u64;
        g.raw_allocs += 1;
        Ok(DevPtr(p as usize as u64))
    }

    fn raw_free(&self, ptr: DevPtr) -> Result<()> {
        let mut g = self.inner.lock();
        let Some(bytes) = g.live.remove(&ptr.0) else {
            return Err(Error::invalid(format!(
                "raw_free: {:#x} is not a live host allocation",
                ptr.0
            )));
        };
        g.used -= bytes as u64;
        g.raw_frees += 1;
        // SAFETY: allocated by raw_alloc with this layout.
        unsafe { dealloc(ptr.as_mut_ptr(), layout(bytes)?) };
        Ok(())
    }

    fn mem_info(&self) -> Result<(u64, u64)> {
        let used = self.inner.lock().used;
        match self.capacity {
            Some(cap) => Ok((cap - used.min(cap), cap)),
            None => {
                let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
                let field = |name: &str| {
                    text.lines()
                        .find(|l| l.starts_with(name))
                        .and_then(|l| l.split_whitespace().nth(1))
                        .and_then(|v| v.parse::<u64>().ok())
                        .map(|kb| kb * 1024)
                        .unwrap_or(0)
                };
                Ok((field("MemAvailable:"), field("MemTotal:")))
            }
        }
    }

    fn synchronize(&self) -> Result<()> {
        let mut g = self.inner.lock();
        let sub = g.submitted.clone();
        g.completed = sub;
        g.syncs += 1;
        Ok(())
    }

    fn event_create(&self) -> Result<u64> {
        let mut g = self.inner.lock();
        g.next_event += 1;
        let e = g.next_event;
        g.events.insert(e, None);
        Ok(e)
    }

    fn event_record(&self, event: u64, stream: RawStream) -> Result<()> {
        let mut g = self.inner.lock();
        let ticket = g.submitted.get(&stream).copied().unwrap_or(0);
        match g.events.get_mut(&event) {
            Some(e) => {
                *e = Some((stream, ticket));
                Ok(())
            }
            None => Err(Error::invalid(format!("event {event} does not exist"))),
        }
    }

    fn event_query(&self, event: u64) -> Result<bool> {
        let g = self.inner.lock();
        match g.events.get(&event) {
            None => Err(Error::invalid(format!("event {event} does not exist"))),
            Some(None) => Ok(true),
            Some(Some((s, ticket))) => {
                Ok(self.synchronous || g.completed.get(s).copied().unwrap_or(0) >= *ticket)
            }
        }
    }

    fn event_destroy(&self, event: u64) {
        self.inner.lock().events.remove(&event);
    }

    fn host_alloc_pinned(&self, bytes: usize) -> Result<*mut u8> {
        let l = layout(bytes)?;
        // SAFETY: non-zero size.
        let p = unsafe { alloc(l) };
        if p.is_null() {
            return Err(Error::oom(format!(
                "cannot allocate {bytes} bytes of pinned host memory"
            )));
        }
        self.inner.lock().pinned.insert(p as usize, bytes);
        Ok(p)
    }

    // The pointer is looked up among this backend's live blocks before it is freed, so a
    // foreign pointer is an error, never a free.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn host_free_pinned(&self, ptr: *mut u8) -> Result<()> {
        let Some(bytes) = self.inner.lock().pinned.remove(&(ptr as usize)) else {
            return Err(Error::invalid(format!(
                "{ptr:p} is not a live pinned host allocation"
            )));
        };
        // SAFETY: allocated by host_alloc_pinned with this layout.
        unsafe { dealloc(ptr, layout(bytes)?) };
        Ok(())
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        let g = self.inner.get_mut();
        for (&p, &b) in &g.live {
            if let Ok(l) = layout(b) {
                // SAFETY: allocated by raw_alloc with this layout and not yet freed.
                unsafe { dealloc(p as usize as *mut u8, l) };
            }
        }
        for (&p, &b) in &g.pinned {
            if let Ok(l) = layout(b) {
                // SAFETY: as above.
                unsafe { dealloc(p as *mut u8, l) };
            }
        }
    }
}
