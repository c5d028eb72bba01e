//! Device-graph capture on GPUs (CUDA graphs, hipGraph): the work queued on a stream
//! between [`GpuDevice::capture_begin`] and [`GpuDevice::capture_end`] is recorded, not run,
//! and the instantiated graph replays it with one launch.
//!
//! * Capture runs in relaxed mode, so other threads may go on using the runtime (and the
//!   allocator may get new segments). Still forbidden while a stream of the device is
//!   capturing, by the vendors' rules: synchronizing the capturing stream or the device, and
//!   any use of the legacy default stream (our streams are blocking streams, which the
//!   default stream implicitly waits for). Such an operation fails and invalidates the
//!   capture; [`GpuDevice::capture_end`] then reports it as a VENDOR error naming the
//!   end-capture call and its code, and the stream is usable again.
//! * Memory: a block freed while a capture is active is held by the caching allocator
//!   ([`super::allocator::CachingAllocator::capture_begin`]) instead of going back to the
//!   pool, since every replay may write into it; the graph takes the held blocks at capture
//!   end and [`GpuDevice::graph_release`] frees them once the graph's last replay on every
//!   stream it was launched on has completed (an event recorded after each launch).
//! * Graph handles are registered: launching or destroying an unknown handle is an error /
//!   a no-op, never a vendor call on garbage.
//! * Counters: kernels that let the last of their blocks finish the work (a decode step's
//!   rms_norm after its product, [`GpuDevice::capture_counters`]) count their finished
//!   blocks in zeroed u32 counters that the last block sets back to zero. A capture takes
//!   them from one arena per device, zeroed once when made (before the device's first
//!   capture), and its graph keeps them until it is destroyed: no two graphs share a
//!   counter, and a graph's replays run in stream order (as its scratch memory needs).
//!   Outside a capture there are none, and those ops run their unfused kernels.

use super::GpuDevice;
use crate::device::{DevPtr, Device, RawStream};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;

/// Counters in the arena (u32 each).
const COUNTERS: usize = 1 << 16;

/// The device's zeroed counters (see the module doc): free ranges `(start, len)` of
/// [`COUNTERS`] u32 at `base` (made on the first capture; `None` until then, or if making
/// it failed: no counters then).
#[derive(Debug, Default)]
struct CounterArena {
    base: Option<DevPtr>,
    free: Vec<(usize, usize)>,
}

impl CounterArena {
    /// `n` counters (first fit), or None when no range is that long.
    fn take(&mut self, n: usize) -> Option<(usize, usize)> {
        self.base?;
        let i = self.free.iter().position(|&(_, len)| len >= n)?;
        let (start, len) = self.free[i];
        if len == n {
            self.free.remove(i);
        } else {
            self.free[i] = (start + n, len - n);
        }
        Some((start, n))
    }

    /// Gives ranges back (merging neighbours).
    fn give(&mut self, ranges: &[(usize, usize)]) {
        self.free.extend_from_slice(ranges);
        self.free.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(self.free.len());
        for &(s, l) in &self.free {
            match merged.last_mut() {
                Some(m) if m.0 + m.1 == s => m.1 += l,
                _ => merged.push((s, l)),
            }
        }
        self.free = merged;
    }
}

/// A capture in progress: its allocator token and the counters it took.
#[derive(Debug)]
struct Capture {
    token: u64,
    counters: Vec<(usize, usize)>,
}

/// A graph made by this device.
#[derive(Debug, Default)]
struct GraphRecord {
    /// Blocks freed during its capture, held until it is destroyed.
    held: Vec<DevPtr>,
    /// Counters its kernels use, given back when it is destroyed.
    counters: Vec<(usize, usize)>,
    /// For each stream it was launched on, an event recorded after its last launch there.
    launched: HashMap<RawStream, u64>,
}

/// A device's captures in progress and its graphs.
#[derive(Debug, Default)]
pub struct GraphState {
    /// Capturing streams, their allocator tokens and counters.
    captures: Mutex<HashMap<RawStream, Capture>>,
    /// Executable graphs by handle.
    graphs: Mutex<HashMap<u64, GraphRecord>>,
    /// Zeroed counters for the captures.
    counters: Mutex<CounterArena>,
}

impl GraphState {
    /// True while `stream` is capturing.
    pub fn is_capturing(&self, stream: RawStream) -> bool {
        self.captures.lock().contains_key(&stream)
    }
}

impl GpuDevice {
    /// [`Device::graph_capture_begin`] on this GPU.
    pub(super) fn capture_begin(&self, stream: RawStream) -> Result<()> {
        if stream == RawStream::DEFAULT {
            return Err(Error::invalid(format!(
                "{}: device-graph capture needs a stream of its own, not the default stream",
                self.name()
            )));
        }
        let mut caps = self.graphs.captures.lock();
        if caps.contains_key(&stream) {
            return Err(Error::invalid(format!(
                "{}: stream {:#x} is already capturing",
                self.name(),
                stream.0
            )));
        }
        self.bind()?;
        self.make_counters(stream);
        // Hold frees from now on: a free between the two calls below may already belong to
        // the capture.
        let token = self.memory.allocator.capture_begin();
        if let Err(e) = self.vendor.stream_begin_capture(stream) {
            let held = self.memory.allocator.capture_end(token);
            self.memory.allocator.release_held(&held);
            return Err(e.context(&format!("{}: device-graph capture", self.name())));
        }
        caps.insert(
            stream,
            Capture {
                token,
                counters: vec![],
            },
        );
        Ok(())
    }

    /// Makes the counter arena (once): device memory zeroed on `stream`, which is not
    /// capturing yet, then waited for. A failure leaves the device without counters.
    fn make_counters(&self, stream: RawStream) {
        let mut arena = self.graphs.counters.lock();
        if arena.base.is_some() {
            return;
        }
        let Ok(p) = self.vendor.mem_alloc(COUNTERS * 4) else {
            return;
        };
        let zeroed = self.vendor.memset_d8(p, 0, COUNTERS * 4, stream).is_ok()
            && self.vendor.stream_synchronize(stream).is_ok();
        if zeroed {
            arena.base = Some(p);
            arena.free = vec![(0, COUNTERS)];
        } else {
            let _ = self.vendor.mem_free(p);
        }
    }

    /// `n` zeroed u32 counters for a kernel being captured on `stream` (see the module doc),
    /// kept by the graph the capture makes; None when `stream` is not capturing or no
    /// counters are left (the caller then runs its kernels without them).
    /// `RB_GPU_LAST_BLOCK=0` hands out none (for comparisons: those ops then launch their
    /// unfused kernels inside device graphs too).
    pub(super) fn capture_counters(&self, stream: RawStream, n: usize) -> Option<DevPtr> {
        static ON: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
            std::env::var("RB_GPU_LAST_BLOCK").map_or(true, |v| v != "0")
        });
        if !*ON {
            return None;
        }
        let mut caps = self.graphs.captures.lock();
        let cap = caps.get_mut(&stream)?;
        let mut arena = self.graphs.counters.lock();
        let base = arena.base?;
        let (start, len) = arena.take(n.max(1))?;
        cap.counters.push((start, len));
        Some(base.offset(start * 4))
    }

    /// [`Device::graph_capture_end`] on this GPU.
    pub(super) fn capture_end(&self, stream: RawStream) -> Result<u64> {
        self.bind()?;
        let cap = self.graphs.captures.lock().remove(&stream).ok_or_else(|| {
            Error::invalid(format!(
                "{}: stream {:#x} is not capturing",
                self.name(),
                stream.0
            ))
        })?;
        let r = self.vendor.stream_end_capture(stream);
        let held = self.memory.allocator.capture_end(cap.token);
        match r {
            Ok(exec) => {
                self.graphs.graphs.lock().insert(
                    exec,
                    GraphRecord {
                        held,
                        counters: cap.counters,
                        launched: HashMap::new(),
                    },
                );
                Ok(exec)
            }
            Err(e) => {
                // Nothing captured ever ran, and no graph can replay it.
                self.memory.allocator.release_held(&held);
                self.graphs.counters.lock().give(&cap.counters);
                Err(e.context(&format!(
                    "{}: device-graph capture on stream {:#x} failed (an operation not permitted \
                     during capture, such as synchronizing the stream or the device or using the \
                     default stream, invalidates it); the stream is no longer capturing",
                    self.name(),
                    stream.0
                )))
            }
        }
    }

    /// [`Device::graph_launch`] on this GPU.
    pub(super) fn graph_run(&self, graph: u64, stream: RawStream) -> Result<()> {
        let mut graphs = self.graphs.graphs.lock();
        let rec = graphs.get_mut(&graph).ok_or_else(|| {
            Error::invalid(format!(
                "{}: {graph:#x} is not a device graph of this device (destroyed, or never made)",
                self.name()
            ))
        })?;
        if self.graphs.is_capturing(stream) {
            return Err(Error::unsupported(format!(
                "{}: launching a device graph into another capture",
                self.name()
            )));
        }
        self.bind()?;
        self.vendor.graph_launch(graph, stream)?;
        // Where this replay ends: destroying the graph waits for it before its memory goes
        // back to the pool.
        let ev = match rec.launched.get(&stream) {
            Some(&e) => e,
            None => {
                let e = self.vendor.event_create(false)?;
                rec.launched.insert(stream, e);
                e
            }
        };
        if self.vendor.event_record(ev, stream).is_err() {
            // Without the event, wait for the replay now.
            self.vendor.stream_synchronize(stream)?;
        }
        Ok(())
    }

    /// [`Device::graph_destroy`] on this GPU: waits for the graph's replays, destroys it and
    /// frees the memory it held. An unknown handle is ignored.
    pub(super) fn graph_release(&self, graph: u64) {
        let Some(rec) = self.graphs.graphs.lock().remove(&graph) else {
            return;
        };
        if self.bind().is_err() {
            // The context is gone: keep the held blocks out of the pool for good.
            return;
        }
        let mut done = true;
        for (_, ev) in rec.launched {
            done &= self.vendor.event_synchronize(ev).is_ok();
            let _ = self.vendor.event_destroy(ev);
        }
        let _ = self.vendor.graph_exec_destroy(graph);
        if done {
            self.memory.allocator.release_held(&rec.held);
            self.graphs.counters.lock().give(&rec.counters);
        }
    }

    /// Ends a capture left open on a stream that is being destroyed.
    pub(super) fn capture_abandon(&self, stream: RawStream) {
        if self.graphs.is_capturing(stream)
            && let Ok(g) = self.capture_end(stream)
        {
            self.graph_release(g);
        }
    }
}
