//! Per-kernel timing: while the [`super::profiler`] is enabled (`RB_PROFILE=1`, or
//! `rb_profiler_enable`), every GPU kernel launch and GEMM is bracketed by two timing events
//! on its stream; [`drain`] (called before the profiler's summary or reset) waits for the
//! recorded events and records each time with the profiler. Off, a launch costs one load.
//!
//! On the profiler's timeline each kernel is a span on its device's stream track: its
//! duration is the event timing; its start is reconstructed as the later of its launch
//! time on the host and the end of the previous kernel on the same stream (the device runs
//! a stream's work in order), so no second clock has to be read from the device.

use super::GpuDevice;
use super::profiler::profiler;
use super::vendor::Vendor;
use crate::Result;
use crate::device::RawStream;
use parking_lot::Mutex;
use std::sync::Arc;

struct Pending {
    name: String,
    device: String,
    stream: u64,
    launched_us: f64,
    vendor: Arc<dyn Vendor>,
    ordinal: usize,
    start: u64,
    end: u64,
}

static PENDING: Mutex<Vec<Pending>> = Mutex::new(Vec::new());

fn enabled() -> bool {
    profiler().enabled()
}

/// One kernel's timing, from before its launch to after.
pub struct Span {
    name: String,
    events: Option<(u64, u64)>,
    launched_us: f64,
}

impl Span {
    pub fn begin(dev: &GpuDevice, name: &str, stream: RawStream) -> Span {
        let mut events = None;
        let mut launched_us = 0.0;
        if enabled() {
            launched_us = profiler().now_us();
            let v = &dev.vendor;
            if let (Ok(a), Ok(b)) = (v.event_create(true), v.event_create(true)) {
                if v.event_record(a, stream).is_ok() {
                    events = Some((a, b));
                } else {
                    let _ = v.event_destroy(a);
                    let _ = v.event_destroy(b);
                }
            }
        }
        Span {
            name: name.to_string(),
            events,
            launched_us,
        }
    }

    pub fn end(self, dev: &GpuDevice, stream: RawStream) {
        if let Some((a, b)) = self.events {
            let v = &dev.vendor;
            if v.event_record(b, stream).is_ok() {
                use crate::device::Device;
                PENDING.lock().push(Pending {
                    name: self.name,
                    device: dev.name(),
                    stream: stream.0,
                    launched_us: self.launched_us,
                    vendor: v.clone(),
                    ordinal: dev.ordinal,
                    start: a,
                    end: b,
                });
            } else {
                let _ = v.event_destroy(a);
                let _ = v.event_destroy(b);
            }
        }
    }
}

/// Waits for the timed kernels and hands their times to the [`super::profiler`].
pub fn drain() -> Result<()> {
    let pending: Vec<Pending> = std::mem::take(&mut *PENDING.lock());
    let mut first_err = None;
    for p in pending {
        let r = p
            .vendor
            .bind(p.ordinal)
            .and_then(|_| p.vendor.event_synchronize(p.end))
            .and_then(|_| p.vendor.event_elapsed_ms(p.start, p.end));
        match r {
            Ok(ms) => {
                profiler().record_span(
                    super::profiler::TraceSpan {
                        name: p.name,
                        cat: "kernel",
                        process: p.device,
                        track: p.stream,
                        ts_us: p.launched_us,
                        dur_us: ms as f64 * 1e3,
                    },
                    true,
                );
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
        let _ = p.vendor.event_destroy(p.start);
        let _ = p.vendor.event_destroy(p.end);
    }
    first_err.map_or(Ok(()), Err)
}
