//! Events: markers in a stream's work, for waiting, ordering streams, and timing.
//!
//! On a GPU an event is a vendor event recorded on a stream. On the CPU device, where every
//! op runs to completion before it returns, recording takes the time and an event is
//! always complete.

use crate::device::gpu::{GpuDevice, registry};
use crate::device::{Device, DeviceKind, RawStream};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::same_device;
use crate::{Error, Result};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Instant;

enum Inner {
    Cpu(Mutex<Option<Instant>>),
    Gpu { dev: Arc<GpuDevice>, raw: u64 },
}

/// An event on one device.
pub struct Event {
    device: Arc<dyn Device>,
    inner: Inner,
    recorded: Mutex<bool>,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event({})", self.device.name())
    }
}

/// The GPU device behind a device handle, or Unsupported naming `what`.
pub fn gpu_of(device: &Arc<dyn Device>, what: &str) -> Result<Arc<GpuDevice>> {
    match device.kind() {
        DeviceKind::Cpu => Err(Error::unsupported(format!(
            "{what} needs a GPU device; this is the CPU"
        ))),
        k => registry::device(k, device.ordinal()),
    }
}

impl Event {
    pub fn new(device: Arc<dyn Device>) -> Result<Self> {
        let inner = match device.kind() {
            DeviceKind::Cpu => Inner::Cpu(Mutex::new(None)),
            _ => {
                let dev = gpu_of(&device, "event")?;
                let raw = dev.event_create()?;
                Inner::Gpu { dev, raw }
            }
        };
        Ok(Event {
            device,
            inner,
            recorded: Mutex::new(false),
        })
    }

    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    fn raw_stream(&self, stream: Option<&Stream>) -> Result<RawStream> {
        match stream {
            Some(s) if !same_device(s.device(), &self.device) => Err(Error::invalid(format!(
                "the stream is on {}, the event on {}",
                s.device().name(),
                self.device.name()
            ))),
            Some(s) => Ok(s.raw()),
            None => Ok(RawStream::DEFAULT),
        }
    }

    /// Records the event after the work queued so far on `stream` (None: the default
    /// stream).
    pub fn record(&self, stream: Option<&Stream>) -> Result<()> {
        let s = self.raw_stream(stream)?;
        match &self.inner {
            Inner::Cpu(t) => *t.lock() = Some(Instant::now()),
            Inner::Gpu { dev, raw } => dev.event_record(*raw, s)?,
        }
        *self.recorded.lock() = true;
        Ok(())
    }

    /// Waits until the recorded work has finished (at once if never recorded).
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner {
            Inner::Cpu(_) => Ok(()),
            Inner::Gpu { dev, raw } => dev.event_synchronize(*raw),
        }
    }

    /// True when the recorded work has finished.
    pub fn query(&self) -> Result<bool> {
        match &self.inner {
            Inner::Cpu(_) => Ok(true),
            Inner::Gpu { dev, raw } => dev.event_query(*raw),
        }
    }

    /// Milliseconds between two recorded events of one device.
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        if !same_device(&start.device, &end.device) {
            return Err(Error::invalid(
                "elapsed time: the events are on different devices",
            ));
        }
        // One lock at a time: `start` and `end` may be the same event (parking_lot's
        // mutexes are not reentrant), and two threads may pass them in either order.
        let recorded_start = *start.recorded.lock();
        let recorded_end = *end.recorded.lock();
        if !recorded_start || !recorded_end {
            return Err(Error::invalid(
                "elapsed time: both events must have been recorded",
            ));
        }
        match (&start.inner, &end.inner) {
            (Inner::Cpu(a), Inner::Cpu(b)) => {
                let a = a.lock().unwrap();
                let b = b.lock().unwrap();
                Ok(if b >= a {
                    (b - a).as_secs_f32() * 1e3
                } else {
                    -((a - b).as_secs_f32() * 1e3)
                })
            }
            (Inner::Gpu { dev, raw: a }, Inner::Gpu { raw: b, .. }) => dev.event_elapsed_ms(*a, *b),
            _ => Err(Error::internal("events of one device with different kinds")),
        }
    }

    /// Makes future work on `stream` wait for this event (without blocking the host).
    pub fn wait_on(&self, stream: Option<&Stream>) -> Result<()> {
        let s = self.raw_stream(stream)?;
        match &self.inner {
            Inner::Cpu(_) => Ok(()),
            Inner::Gpu { dev, raw } => dev.stream_wait_event(s, *raw),
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if let Inner::Gpu { dev, raw } = &self.inner {
            dev.event_destroy(*raw);
        }
    }
}
