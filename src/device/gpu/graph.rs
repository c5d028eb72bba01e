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

use super::GpuDevice;
use crate::device::{DevPtr, Device, RawStream};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;

/// A graph made by this device.
#[derive(Debug, Default)]
struct GraphRecord {
    /// Blocks freed during its capture, held until it is destroyed.
    held: Vec<DevPtr>,
    /// For each stream it was launched on, an event recorded after its last launch there.
    launched: HashMap<RawStream, u64>,
}

/// A device's captures in progress and its graphs.
#[derive(Debug, Default)]
pub struct GraphState {
    /// Capturing streams and their allocator tokens.
    captures: Mutex<HashMap<RawStream, u64>>,
    /// Executable graphs by handle.
    graphs: Mutex<HashMap<u64, GraphRecord>>,
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
        // Hold frees from now on: a free between the two calls below may already belong to
        // the capture.
        let token = self.memory.allocator.capture_begin();
        if let Err(e) = self.vendor.stream_begin_capture(stream) {
            let held = self.memory.allocator.capture_end(token);
            self.memory.allocator.release_held(&held);
            return Err(e.context(&format!("{}: device-graph capture", self.name())));
        }
        caps.insert(stream, token);
        Ok(())
    }

    /// [`Device::graph_capture_end`] on this GPU.
    pub(super) fn capture_end(&self, stream: RawStream) -> Result<u64> {
        self.bind()?;
        let token = self.graphs.captures.lock().remove(&stream).ok_or_else(|| {
            Error::invalid(format!(
                "{}: stream {:#x} is not capturing",
                self.name(),
                stream.0
            ))
        })?;
        let r = self.vendor.stream_end_capture(stream);
        let held = self.memory.allocator.capture_end(token);
        match r {
            Ok(exec) => {
                self.graphs.graphs.lock().insert(
                    exec,
                    GraphRecord {
                        held,
                        launched: HashMap::new(),
                    },
                );
                Ok(exec)
            }
            Err(e) => {
                // Nothing captured ever ran, and no graph can replay it.
                self.memory.allocator.release_held(&held);
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
