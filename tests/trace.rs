//! The Chrome trace export: a profiled run on the CPU written by
//! `rb_profiler_export_chrome_trace` parses as JSON and has the tracks, spans and memory
//! counters Perfetto and chrome://tracing need; bad paths give a status and a message.

use rocm_backend::ffi::eager::rb_matmul;
use rocm_backend::ffi::profiler::*;
use rocm_backend::ffi::status::{rb_last_error_message, rb_status};
use rocm_backend::ffi::tensor::*;
use serde_json::Value;
use std::ffi::{CStr, CString};
use std::ptr::null_mut;

fn ok(s: rb_status) {
    let m = unsafe { CStr::from_ptr(rb_last_error_message()) }.to_string_lossy();
    assert_eq!(s, rb_status::Success, "{m}");
}

#[test]
fn chrome_trace_of_a_cpu_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.json");
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    unsafe {
        ok(rb_profiler_enable(true));
        ok(rb_profiler_reset());
        let (mut a, mut b, mut c) = (null_mut(), null_mut(), null_mut());
        let dims = [64i64, 64];
        ok(rb_tensor_randn(
            c"cpu".as_ptr(),
            dims.as_ptr(),
            2,
            0,
            1,
            &mut a,
        ));
        ok(rb_tensor_randn(
            c"cpu".as_ptr(),
            dims.as_ptr(),
            2,
            0,
            2,
            &mut b,
        ));
        ok(rb_matmul(null_mut(), a, b, &mut c));
        for t in [a, b, c] {
            ok(rb_tensor_destroy(t));
        }
        ok(rb_profiler_export_chrome_trace(cpath.as_ptr()));
        ok(rb_profiler_enable(false));
        // Bad paths: a status and a message, never a crash.
        assert_eq!(
            rb_profiler_export_chrome_trace(null_mut()),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_profiler_export_chrome_trace(c"".as_ptr()),
            rb_status::InvalidArgument
        );
        let st = rb_profiler_export_chrome_trace(c"/nonexistent-dir/x/trace.json".as_ptr());
        assert_eq!(st, rb_status::InvalidArgument);
        let m = CStr::from_ptr(rb_last_error_message()).to_string_lossy();
        assert!(
            m.contains("cannot write /nonexistent-dir/x/trace.json"),
            "{m}"
        );
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_json::from_str(&text).expect("valid JSON");
    let ev = v["traceEvents"].as_array().expect("traceEvents array");
    let names = |ph: &str| -> Vec<&Value> { ev.iter().filter(|e| e["ph"] == ph).collect() };
    // Processes are named: the host (C calls) and the CPU device (memory counters).
    let procs: Vec<(&str, u64)> = names("M")
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| {
            (
                e["args"]["name"].as_str().unwrap(),
                e["pid"].as_u64().unwrap(),
            )
        })
        .collect();
    let pid_of = |n: &str| procs.iter().find(|p| p.0 == n).map(|p| p.1);
    let host = pid_of("host").expect("a host process");
    let cpu = pid_of("cpu").expect("a cpu process");
    // Complete events: the calls, in order, with durations, on a named host thread.
    let spans = names("X");
    let calls: Vec<&str> = spans.iter().map(|e| e["name"].as_str().unwrap()).collect();
    let i = calls
        .iter()
        .position(|n| *n == "rb_matmul")
        .expect("rb_matmul span");
    assert!(calls[..i].contains(&"rb_tensor_randn"), "{calls:?}");
    assert!(calls.contains(&"rb_tensor_destroy"), "{calls:?}");
    for e in &spans {
        assert_eq!(e["pid"].as_u64(), Some(host));
        assert!(e["dur"].as_f64().unwrap() >= 0.0 && e["ts"].as_f64().unwrap() >= 0.0);
    }
    let mm = spans[i];
    assert!(mm["dur"].as_f64().unwrap() > 0.0);
    assert!(names("M").iter().any(|e| e["name"] == "thread_name"
        && e["pid"].as_u64() == Some(host)
        && e["tid"] == mm["tid"]));
    // Memory counters on the CPU device: 3 tensors of 16 KiB up, then back down.
    let mem: Vec<f64> = names("C")
        .iter()
        .filter(|e| e["name"] == "memory" && e["pid"].as_u64() == Some(cpu))
        .map(|e| e["args"]["tensor_bytes"].as_f64().unwrap())
        .collect();
    assert!(mem.len() >= 6, "{mem:?}");
    let peak = mem.iter().cloned().fold(0.0, f64::max);
    assert!(peak >= 3.0 * 16384.0, "{mem:?}");
    assert!(*mem.last().unwrap() <= peak - 3.0 * 16384.0, "{mem:?}");
    assert!(v["otherData"]["dropped_events"] == 0);
}
