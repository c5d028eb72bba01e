//! The profiler core: (kernel name, milliseconds) records and their summary (count, total,
//! mean, min and max per name), and a timeline of the same spans and of memory counters that
//! exports as Chrome trace JSON ([`Profiler::chrome_trace_json`]; Perfetto and
//! chrome://tracing open it). The GPU device feeds it event timings of its launches, the C
//! ABI the host time of each call, and tensor allocations the memory counters, while it is
//! enabled. It is enabled by `RB_PROFILE=1` (read once, at first use) or
//! [`Profiler::set_enabled`]. Thread-safe.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The timings of one kernel name.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSummary {
    pub name: String,
    pub count: u64,
    pub total_ms: f64,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

#[derive(Default)]
struct Acc {
    count: u64,
    total: f64,
    min: f64,
    max: f64,
}

/// One span of the timeline: `name` ran on `track` of `process` from `ts_us` (microseconds
/// since the profiler's origin) for `dur_us`.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpan {
    pub name: String,
    /// "kernel" (device work), "api" (a C call on the host).
    pub cat: &'static str,
    /// The device ("cuda:0", "rocm:1", "cpu") or "host".
    pub process: String,
    /// The stream (a device's raw stream handle) or the host thread's number.
    pub track: u64,
    pub ts_us: f64,
    pub dur_us: f64,
}

/// One sample of a device's memory counters.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceCounter {
    pub process: String,
    pub ts_us: f64,
    /// (series name, value), e.g. ("tensor_bytes", 4096.0).
    pub values: Vec<(&'static str, f64)>,
}

/// The most timeline entries kept (spans and counters each); later ones are counted, not
/// kept, so a long profiled run cannot grow without bound.
pub const TRACE_CAPACITY: usize = 1 << 20;

#[derive(Default)]
struct Timeline {
    spans: Vec<TraceSpan>,
    counters: Vec<TraceCounter>,
    dropped: u64,
    /// End of the last span per (process, track): GPU spans start no earlier.
    stream_end: HashMap<(String, u64), f64>,
}

/// Collects kernel timings.
pub struct Profiler {
    enabled: AtomicBool,
    records: Mutex<HashMap<String, Acc>>,
    timeline: Mutex<Timeline>,
    origin: std::time::Instant,
}

impl Profiler {
    pub fn new(enabled: bool) -> Self {
        Profiler {
            enabled: AtomicBool::new(enabled),
            records: Mutex::default(),
            timeline: Mutex::default(),
            origin: std::time::Instant::now(),
        }
    }

    /// Microseconds from the profiler's origin to `t`.
    pub fn micros(&self, t: std::time::Instant) -> f64 {
        t.saturating_duration_since(self.origin).as_secs_f64() * 1e6
    }

    /// Microseconds since the profiler's origin.
    pub fn now_us(&self) -> f64 {
        self.micros(std::time::Instant::now())
    }

    /// Adds a span to the timeline and its time to the summary (ignored while disabled or
    /// for a duration that is not a finite, non-negative number). With `serialize`, the
    /// span starts no earlier than the end of the previous one on the same track (device
    /// streams run their work in order; `ts_us` is then the launch time on the host).
    pub fn record_span(&self, mut span: TraceSpan, serialize: bool) {
        if !self.enabled() || !span.dur_us.is_finite() || span.dur_us < 0.0 {
            return;
        }
        self.record(&span.name, span.dur_us / 1e3);
        let mut tl = self.timeline.lock();
        if serialize {
            let end = tl
                .stream_end
                .entry((span.process.clone(), span.track))
                .or_insert(0.0);
            span.ts_us = span.ts_us.max(*end);
            *end = span.ts_us + span.dur_us;
        }
        if tl.spans.len() < TRACE_CAPACITY {
            tl.spans.push(span);
        } else {
            tl.dropped += 1;
        }
    }

    /// Adds a memory counter sample (ignored while disabled).
    pub fn record_counter(&self, c: TraceCounter) {
        if !self.enabled() {
            return;
        }
        let mut tl = self.timeline.lock();
        if tl.counters.len() < TRACE_CAPACITY {
            tl.counters.push(c);
        } else {
            tl.dropped += 1;
        }
    }

    /// The timeline's spans, in the order recorded.
    pub fn spans(&self) -> Vec<TraceSpan> {
        self.timeline.lock().spans.clone()
    }

    /// The timeline as Chrome trace JSON (the Trace Event Format's object form): a
    /// `traceEvents` array with one process per device (and one, "host", for the C calls),
    /// named by `process_name` metadata; one thread (track) per stream, named by
    /// `thread_name` ("stream 0x..." or "default stream" on a device; "thread N" on the
    /// host and any other process); a
    /// complete event (`"ph":"X"`, `ts` and `dur` in microseconds) per span, with its
    /// kernel or call name; and counter events (`"ph":"C"`, name "memory") with the
    /// device's memory figures in bytes. `otherData` carries how many entries were dropped
    /// past [`TRACE_CAPACITY`].
    pub fn chrome_trace_json(&self) -> String {
        let tl = self.timeline.lock();
        let mut pids: Vec<String> = vec![];
        let mut pid = |name: &str| -> usize {
            match pids.iter().position(|p| p == name) {
                Some(i) => i + 1,
                None => {
                    pids.push(name.to_string());
                    pids.len()
                }
            }
        };
        let mut tids: Vec<(usize, u64)> = vec![];
        let mut ev: Vec<String> = vec![];
        for s in &tl.spans {
            let p = pid(&s.process);
            let t = match tids.iter().position(|&k| k == (p, s.track)) {
                Some(i) => i + 1,
                None => {
                    tids.push((p, s.track));
                    let device = s.process == "cpu"
                        || s.process.starts_with("cuda:")
                        || s.process.starts_with("rocm:");
                    let tname = if !device {
                        format!("thread {}", s.track)
                    } else if s.track == 0 {
                        "default stream".to_string()
                    } else {
                        format!("stream {:#x}", s.track)
                    };
                    ev.push(format!(
                        r#"{{"ph":"M","name":"thread_name","pid":{p},"tid":{},"args":{{"name":{}}}}}"#,
                        tids.len(),
                        json_str(&tname)
                    ));
                    tids.len()
                }
            };
            ev.push(format!(
                r#"{{"ph":"X","name":{},"cat":"{}","pid":{p},"tid":{t},"ts":{:.3},"dur":{:.3}}}"#,
                json_str(&s.name),
                s.cat,
                s.ts_us,
                s.dur_us
            ));
        }
        for c in &tl.counters {
            let p = pid(&c.process);
            let args: Vec<String> = c
                .values
                .iter()
                .map(|(k, v)| format!("{}:{}", json_str(k), json_num(*v)))
                .collect();
            ev.push(format!(
                r#"{{"ph":"C","name":"memory","pid":{p},"tid":0,"ts":{:.3},"args":{{{}}}}}"#,
                c.ts_us,
                args.join(",")
            ));
        }
        for (i, name) in pids.iter().enumerate() {
            ev.push(format!(
                r#"{{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}}"#,
                i + 1,
                json_str(name)
            ));
        }
        format!(
            "{{\"traceEvents\":[\n{}\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"producer\":\"rocm-backend {}\",\"dropped_events\":{}}}}}\n",
            ev.join(",\n"),
            env!("CARGO_PKG_VERSION"),
            tl.dropped
        )
    }

    /// Writes [`Profiler::chrome_trace_json`] to `path` (through a temporary file in the
    /// same folder and a rename, so a reader never sees half a file).
    pub fn export_chrome_trace(&self, path: &std::path::Path) -> crate::Result<()> {
        let text = self.chrome_trace_json();
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let name = path.file_name().ok_or_else(|| {
            crate::Error::invalid(format!("{} is not a file path", path.display()))
        })?;
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let io = |e: std::io::Error, what: &std::path::Path| {
            crate::Error::invalid(format!("cannot write {}: {e}", what.display()))
        };
        std::fs::write(&tmp, text).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e, path)
        })?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e, path)
        })
    }
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }
    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed)
    }

    /// Adds one timing (ignored while disabled, or when `ms` is not a finite, non-negative
    /// number).
    pub fn record(&self, name: &str, ms: f64) {
        if !self.enabled() || !ms.is_finite() || ms < 0.0 {
            return;
        }
        let mut r = self.records.lock();
        let a = r.entry(name.to_string()).or_insert(Acc {
            count: 0,
            total: 0.0,
            min: f64::INFINITY,
            max: 0.0,
        });
        a.count += 1;
        a.total += ms;
        a.min = a.min.min(ms);
        a.max = a.max.max(ms);
    }

    /// Per-name summaries, the largest total first (ties by name).
    pub fn summary(&self) -> Vec<KernelSummary> {
        let r = self.records.lock();
        let mut v: Vec<KernelSummary> = r
            .iter()
            .map(|(n, a)| KernelSummary {
                name: n.clone(),
                count: a.count,
                total_ms: a.total,
                mean_ms: a.total / a.count as f64,
                min_ms: a.min,
                max_ms: a.max,
            })
            .collect();
        v.sort_by(|a, b| {
            b.total_ms
                .total_cmp(&a.total_ms)
                .then_with(|| a.name.cmp(&b.name))
        });
        v
    }

    /// The summary as a text table: a header line, then one line per kernel
    /// (`name count total_ms mean_ms min_ms max_ms`).
    pub fn summary_text(&self) -> String {
        let rows = self.summary();
        let w = rows.iter().map(|r| r.name.len()).max().unwrap_or(6).max(6);
        let mut s = format!(
            "{:<w$} {:>8} {:>12} {:>12} {:>12} {:>12}\n",
            "kernel", "count", "total_ms", "mean_ms", "min_ms", "max_ms"
        );
        for r in rows {
            let _ = writeln!(
                s,
                "{:<w$} {:>8} {:>12.4} {:>12.4} {:>12.4} {:>12.4}",
                r.name, r.count, r.total_ms, r.mean_ms, r.min_ms, r.max_ms
            );
        }
        s
    }

    /// Drops every record and the timeline (the enabled flag stays).
    pub fn reset(&self) {
        self.records.lock().clear();
        *self.timeline.lock() = Timeline::default();
    }
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A JSON number (non-finite values, which JSON lacks, become 0).
fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "0".to_string()
    }
}

/// Ordinals counted apart per device kind (higher ones share the last counter).
const ORDINALS: usize = 16;

static TENSOR_BYTES: [std::sync::atomic::AtomicI64; 3 * ORDINALS] =
    [const { std::sync::atomic::AtomicI64::new(0) }; 3 * ORDINALS];

/// Counts tensor storage of a device (`kind` is the `DeviceKind` value) going up or down by
/// `delta` bytes, and while profiling samples the device's memory counters: `tensor_bytes`
/// (its live tensor storage) and the allocator's `allocated_bytes` and `reserved_bytes`
/// when `sample` gives them (with the device's name).
pub fn tensor_memory(
    kind: usize,
    ordinal: usize,
    delta: i64,
    sample: impl FnOnce() -> (String, Option<(u64, u64)>),
) {
    let Some(c) = TENSOR_BYTES.get(kind * ORDINALS + ordinal.min(ORDINALS - 1)) else {
        return;
    };
    let now = c.fetch_add(delta, Ordering::Relaxed) + delta;
    let p = profiler();
    if !p.enabled() {
        return;
    }
    let (process, stats) = sample();
    let mut values = vec![("tensor_bytes", now.max(0) as f64)];
    if let Some((alloc, reserved)) = stats {
        values.push(("allocated_bytes", alloc as f64));
        values.push(("reserved_bytes", reserved as f64));
    }
    p.record_counter(TraceCounter {
        process,
        ts_us: p.now_us(),
        values,
    });
}

static GLOBAL: LazyLock<Profiler> = LazyLock::new(|| {
    let on = std::env::var("RB_PROFILE")
        .map(|v| matches!(v.trim(), "1" | "true" | "on" | "yes"))
        .unwrap_or(false);
    Profiler::new(on)
});

/// The process-wide profiler.
pub fn profiler() -> &'static Profiler {
    &GLOBAL
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarizes_per_name() {
        let p = Profiler::new(true);
        for ms in [1.0, 2.0, 3.0] {
            p.record("gemm", ms);
        }
        p.record("relu", 0.5);
        p.record("bad", f64::NAN);
        p.record("bad", -1.0);
        let s = p.summary();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "gemm");
        assert_eq!((s[0].count, s[0].total_ms, s[0].mean_ms), (3, 6.0, 2.0));
        assert_eq!((s[0].min_ms, s[0].max_ms), (1.0, 3.0));
        assert_eq!(
            (s[1].name.as_str(), s[1].count, s[1].mean_ms),
            ("relu", 1, 0.5)
        );
        let t = p.summary_text();
        assert!(t.lines().nth(1).unwrap().starts_with("gemm"), "{t}");
        assert!(t.contains("6.0000"), "{t}");
        p.reset();
        assert!(p.summary().is_empty());
    }

    #[test]
    fn chrome_trace_has_tracks_spans_and_counters() {
        let p = Profiler::new(true);
        let span = |name: &str, process: &str, track: u64, ts: f64, dur: f64| TraceSpan {
            name: name.to_string(),
            cat: "kernel",
            process: process.to_string(),
            track,
            ts_us: ts,
            dur_us: dur,
        };
        p.record_span(span("gemm \"a\"", "cuda:0", 0, 10.0, 5.0), true);
        // Launched at 12 us, but the stream is busy until 15: starts at 15.
        p.record_span(span("relu", "cuda:0", 0, 12.0, 1.0), true);
        p.record_span(span("add", "cuda:0", 0x7f00, 12.0, 2.0), true);
        p.record_span(span("rb_matmul", "host", 1, 9.0, 8.0), false);
        p.record_counter(TraceCounter {
            process: "cuda:0".into(),
            ts_us: 11.0,
            values: vec![("tensor_bytes", 4096.0)],
        });
        let s = p.spans();
        assert_eq!(s[1].ts_us, 15.0);
        assert_eq!(s[2].ts_us, 12.0);
        let j = p.chrome_trace_json();
        assert!(j.starts_with("{\"traceEvents\":["), "{j}");
        assert!(j.contains(r#""name":"gemm \"a\"""#), "{j}");
        assert!(j.contains(r#""ph":"C","name":"memory""#), "{j}");
        assert!(j.contains(r#""args":{"tensor_bytes":4096}"#), "{j}");
        assert!(j.contains(r#""args":{"name":"stream 0x7f00"}"#), "{j}");
        assert!(j.contains(r#""args":{"name":"default stream"}"#), "{j}");
        assert!(j.contains(r#""args":{"name":"cuda:0"}"#), "{j}");
        assert!(j.contains(r#""args":{"name":"host"}"#), "{j}");
        assert_eq!(j.matches(r#""ph":"X""#).count(), 4);
        // The summary saw the same spans.
        assert_eq!(p.summary().len(), 4);
        p.reset();
        assert!(p.spans().is_empty());
    }

    #[test]
    fn disabled_records_nothing() {
        let p = Profiler::new(false);
        p.record("k", 1.0);
        assert!(p.summary().is_empty());
        p.set_enabled(true);
        p.record("k", 1.0);
        assert_eq!(p.summary()[0].count, 1);
    }

    #[test]
    fn threads() {
        let p = std::sync::Arc::new(Profiler::new(true));
        let hs: Vec<_> = (0..4)
            .map(|i| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        p.record(if i % 2 == 0 { "a" } else { "b" }, 0.25);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let s = p.summary();
        assert_eq!(s.iter().map(|r| r.count).sum::<u64>(), 4000);
        assert_eq!(s[0].total_ms, 500.0);
    }
}
