//! GPU runtime tests through the C ABI: device info, streams, events, tensors across
//! devices, the module API (including a compile error), the kernel cache and the profiler.
//! Each GPU trial runs on rocm:0 and cuda:0 where present and is reported ignored, with the
//! reason printed once, where not. The CPU trials check what must hold everywhere.

use libtest_mimic::{Arguments, Failed, Trial};
use rocm_backend::device::DeviceKind;
use rocm_backend::device::gpu::{jit, profiler};
use rocm_backend::ffi::device::{rb_device_info, rb_device_properties};
use rocm_backend::ffi::event::*;
use rocm_backend::ffi::module::*;
use rocm_backend::ffi::profiler::*;
use rocm_backend::ffi::status::{rb_last_error_message, rb_status};
use rocm_backend::ffi::stream::*;
use rocm_backend::ffi::tensor::*;
use rocm_backend::runtime::context::{self, DeviceSpec};
use std::ffi::{CStr, CString, c_void};
use std::ptr::null_mut;

type R = Result<(), Failed>;
type GpuTest = fn(&CString) -> R;

fn last_error() -> String {
    unsafe { CStr::from_ptr(rb_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn check(what: &str, s: rb_status) -> R {
    if s == rb_status::Success {
        Ok(())
    } else {
        Err(format!("{what}: {s:?}: {}", last_error()).into())
    }
}

fn expect(what: &str, s: rb_status, want: rb_status) -> R {
    if s == want {
        Ok(())
    } else {
        Err(format!("{what}: got {s:?}, expected {want:?} ({})", last_error()).into())
    }
}

fn ensure(c: bool, msg: impl Into<String>) -> R {
    if c { Ok(()) } else { Err(msg.into().into()) }
}

fn f32_tensor(dev: &CString, data: &[f32]) -> Result<*mut rb_tensor, Failed> {
    let mut t = null_mut();
    let shape = [data.len() as i64];
    check("rb_tensor_from_host", unsafe {
        rb_tensor_from_host(
            dev.as_ptr(),
            data.as_ptr() as *const c_void,
            data.len() * 4,
            shape.as_ptr(),
            1,
            0,
            &mut t,
        )
    })?;
    Ok(t)
}

fn read_f32(t: *mut rb_tensor, n: usize) -> Result<Vec<f32>, Failed> {
    let mut v = vec![0f32; n];
    check("rb_tensor_copy_to_host", unsafe {
        rb_tensor_copy_to_host(t, v.as_mut_ptr() as *mut c_void, n * 4)
    })?;
    Ok(v)
}

fn device_info(dev: &CString) -> R {
    let mut p: rb_device_properties = unsafe { std::mem::zeroed() };
    check("rb_device_info", unsafe {
        rb_device_info(dev.as_ptr(), &mut p)
    })?;
    let s = |b: &[std::ffi::c_char]| {
        unsafe { CStr::from_ptr(b.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    let (arch, family, name) = (s(&p.arch), s(&p.family), s(&p.name));
    eprintln!(
        "{}: {name}, {arch} ({family}), {} CUs, warp {}, {}/{} MiB free, matrix cores {}, bf16 {}, fp8 {}",
        s(&p.device),
        p.compute_units,
        p.warp_size,
        p.free_memory >> 20,
        p.total_memory >> 20,
        p.matrix_cores,
        p.bf16,
        p.fp8
    );
    ensure(
        arch.starts_with("gfx") || arch.starts_with("sm_"),
        format!("arch {arch}"),
    )?;
    ensure(family != "unknown", format!("family of {arch} unknown"))?;
    ensure(!name.is_empty(), "empty name")?;
    ensure(
        p.total_memory > 0 && p.free_memory <= p.total_memory,
        "memory sizes",
    )?;
    ensure(p.compute_units > 0, "compute units")?;
    let want_warp = if family.starts_with("CDNA") || family == "GCN5" {
        64
    } else {
        32
    };
    ensure(
        p.warp_size == want_warp,
        format!("warp size {} on {family}", p.warp_size),
    )
}

fn streams_and_events(dev: &CString) -> R {
    unsafe {
        let (mut s1, mut s2) = (null_mut(), null_mut());
        check("rb_stream_create", rb_stream_create(dev.as_ptr(), &mut s1))?;
        check("rb_stream_create", rb_stream_create(dev.as_ptr(), &mut s2))?;
        let (mut e0, mut e1) = (null_mut(), null_mut());
        check("rb_event_create", rb_event_create(dev.as_ptr(), &mut e0))?;
        check("rb_event_create", rb_event_create(dev.as_ptr(), &mut e1))?;
        // Elapsed time needs recorded events.
        let mut ms = -1f32;
        expect(
            "elapsed before record",
            rb_event_elapsed_time(e0, e1, &mut ms),
            rb_status::InvalidArgument,
        )?;
        let n = 1 << 22;
        let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 - 500.0).collect();
        let t = f32_tensor(dev, &x)?;
        check("record", rb_event_record(e0, s1))?;
        let mut y = null_mut();
        check("rb_relu on s1", rocm_backend::ffi::rb_relu(s1, t, &mut y))?;
        check("record", rb_event_record(e1, s1))?;
        // s2 waits for s1's relu, then runs another relu on its result.
        check("rb_stream_wait_event", rb_stream_wait_event(s2, e1))?;
        let mut z = null_mut();
        check("rb_relu on s2", rocm_backend::ffi::rb_relu(s2, y, &mut z))?;
        check("rb_stream_synchronize", rb_stream_synchronize(s2))?;
        check("rb_event_synchronize", rb_event_synchronize(e1))?;
        let mut done = false;
        check("rb_event_query", rb_event_query(e1, &mut done))?;
        ensure(done, "event not complete after synchronize")?;
        check(
            "rb_event_elapsed_time",
            rb_event_elapsed_time(e0, e1, &mut ms),
        )?;
        ensure((0.0..10_000.0).contains(&ms), format!("elapsed {ms} ms"))?;
        let got = read_f32(z, n)?;
        for (i, (g, v)) in got.iter().zip(&x).enumerate() {
            if *g != v.max(0.0) {
                return Err(format!("element {i}: {g} != relu({v})").into());
            }
        }
        // Misuse: wrong handle kinds and stale handles.
        expect(
            "record with a tensor as event",
            rb_event_record(t as *mut rb_event, null_mut()),
            rb_status::InvalidHandle,
        )?;
        for h in [t, y, z] {
            check("rb_tensor_destroy", rb_tensor_destroy(h))?;
        }
        check("rb_event_destroy", rb_event_destroy(e0))?;
        expect(
            "stale event",
            rb_event_synchronize(e0),
            rb_status::InvalidHandle,
        )?;
        check("rb_event_destroy", rb_event_destroy(e1))?;
        check("rb_event_destroy(NULL)", rb_event_destroy(null_mut()))?;
        check("rb_stream_destroy", rb_stream_destroy(s1))?;
        check("rb_stream_destroy", rb_stream_destroy(s2))?;
    }
    Ok(())
}

/// `rb_event_elapsed_time(e, e)` is INVALID_ARGUMENT before `e` is recorded and 0 ms after
/// (it once took the event's lock twice and never returned). The calls run on a helper
/// thread, so a hang fails the trial instead of stalling the run.
fn event_elapsed_to_itself(dev: &CString) -> R {
    let dev = dev.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = (|| -> Result<f32, String> {
            let mut e = null_mut();
            let st = unsafe { rb_event_create(dev.as_ptr(), &mut e) };
            if st != rb_status::Success {
                return Err(format!("rb_event_create: {st:?}: {}", last_error()));
            }
            let mut ms = -1f32;
            let st = unsafe { rb_event_elapsed_time(e, e, &mut ms) };
            if st != rb_status::InvalidArgument {
                return Err(format!("elapsed(e, e) before record: {st:?}"));
            }
            let st = unsafe { rb_event_record(e, null_mut()) };
            let st2 = unsafe { rb_event_synchronize(e) };
            if st != rb_status::Success || st2 != rb_status::Success {
                return Err(format!(
                    "record/synchronize: {st:?} {st2:?}: {}",
                    last_error()
                ));
            }
            let st = unsafe { rb_event_elapsed_time(e, e, &mut ms) };
            if st != rb_status::Success {
                return Err(format!("elapsed(e, e): {st:?}: {}", last_error()));
            }
            unsafe { rb_event_destroy(e) };
            Ok(ms)
        })();
        let _ = tx.send(r);
    });
    let ms = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .map_err(|_| "rb_event_elapsed_time(e, e) did not return within 20 s")??;
    ensure(ms == 0.0, format!("elapsed(e, e) = {ms} ms, expected 0"))
}

fn cpu_event_elapsed_to_itself() -> R {
    event_elapsed_to_itself(&CString::new("cpu").unwrap())
}

fn tensor_to_device(dev: &CString) -> R {
    let cpu = CString::new("cpu").unwrap();
    let x: Vec<f32> = (0..1237).map(|i| i as f32 * 0.5 - 3.0).collect();
    unsafe {
        let a = f32_tensor(&cpu, &x)?;
        let (mut g, mut g2, mut back) = (null_mut(), null_mut(), null_mut());
        check("cpu -> gpu", rb_tensor_to_device(a, dev.as_ptr(), &mut g))?;
        check("gpu -> gpu", rb_tensor_to_device(g, dev.as_ptr(), &mut g2))?;
        check(
            "gpu -> cpu",
            rb_tensor_to_device(g2, cpu.as_ptr(), &mut back),
        )?;
        ensure(read_f32(g2, x.len())? == x, "gpu copy differs")?;
        ensure(read_f32(back, x.len())? == x, "round trip differs")?;
        for h in [a, g, g2, back] {
            check("destroy", rb_tensor_destroy(h))?;
        }
    }
    Ok(())
}

const SCALE_SRC: &str = r#"
#include <hip/hip_runtime.h>
#include "common.h"
extern "C" __global__ void scale_add(float* x, float a, float b, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}
// Every lane adds 1; lane 0 of each warp writes the warp's sum (the warp size).
extern "C" __global__ void warp_width(float* out) {
    float s = rb_warp_sum(1.0f);
    if (threadIdx.x % RB_WARP_SIZE == 0) out[threadIdx.x / RB_WARP_SIZE] = s;
}
"#;

fn module_api(dev: &CString) -> R {
    unsafe {
        let src = CString::new(SCALE_SRC).unwrap();
        let name = CString::new("scale.hip").unwrap();
        let before = jit::cache_stats();
        let mut m = null_mut();
        check(
            "rb_module_create",
            rb_module_create(
                dev.as_ptr(),
                src.as_ptr(),
                name.as_ptr(),
                std::ptr::null(),
                0,
                &mut m,
            ),
        )?;
        // The same source again comes from the cache.
        let mut m2 = null_mut();
        check(
            "rb_module_create (cached)",
            rb_module_create(
                dev.as_ptr(),
                src.as_ptr(),
                name.as_ptr(),
                std::ptr::null(),
                0,
                &mut m2,
            ),
        )?;
        let after = jit::cache_stats();
        ensure(
            after.memory_hits + after.disk_hits > before.memory_hits + before.disk_hits,
            format!("no cache hit: {before:?} -> {after:?}"),
        )?;
        eprintln!("kernel cache: {after:?}");
        let mut f = null_mut();
        let fname = CString::new("scale_add").unwrap();
        check(
            "rb_module_get_function",
            rb_module_get_function(m, fname.as_ptr(), &mut f),
        )?;
        let n = 3000usize;
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let t = f32_tensor(dev, &x)?;
        let mut p: *mut c_void = null_mut();
        check("rb_tensor_data_ptr", rb_tensor_data_ptr(t, &mut p))?;
        let (a, b, nn) = (2.0f32, 1.0f32, n as u64);
        let mut args = [
            &p as *const _ as *mut c_void,
            &a as *const _ as *mut c_void,
            &b as *const _ as *mut c_void,
            &nn as *const _ as *mut c_void,
        ];
        let blocks = n.div_ceil(256) as u32;
        check(
            "rb_function_launch",
            rb_function_launch(f, blocks, 1, 1, 256, 1, 1, 0, null_mut(), args.as_mut_ptr()),
        )?;
        let got = read_f32(t, n)?;
        for (i, g) in got.iter().enumerate() {
            ensure(*g == 2.0 * i as f32 + 1.0, format!("element {i}: {g}"))?;
        }
        // The warp width seen by kernels equals the device's.
        let mut props: rb_device_properties = std::mem::zeroed();
        check("rb_device_info", rb_device_info(dev.as_ptr(), &mut props))?;
        let warp = props.warp_size as usize;
        let out = f32_tensor(dev, &vec![0f32; 256 / warp])?;
        let mut op: *mut c_void = null_mut();
        check("rb_tensor_data_ptr", rb_tensor_data_ptr(out, &mut op))?;
        let mut wf = null_mut();
        let wname = CString::new("warp_width").unwrap();
        check(
            "get warp_width",
            rb_module_get_function(m, wname.as_ptr(), &mut wf),
        )?;
        let mut wargs = [&op as *const _ as *mut c_void];
        check(
            "launch warp_width",
            rb_function_launch(wf, 1, 1, 1, 256, 1, 1, 0, null_mut(), wargs.as_mut_ptr()),
        )?;
        let w = read_f32(out, 256 / warp)?;
        ensure(
            w.iter().all(|&v| v == warp as f32),
            format!("warp sums {w:?}, warp size {warp}"),
        )?;
        // Misuse.
        expect(
            "zero grid",
            rb_function_launch(f, 0, 1, 1, 256, 1, 1, 0, null_mut(), args.as_mut_ptr()),
            rb_status::InvalidArgument,
        )?;
        expect(
            "too many threads",
            rb_function_launch(f, 1, 1, 1, 4096, 1, 1, 0, null_mut(), args.as_mut_ptr()),
            rb_status::InvalidArgument,
        )?;
        let missing = CString::new("no_such_kernel").unwrap();
        let mut nf = null_mut();
        expect(
            "missing kernel",
            rb_module_get_function(m, missing.as_ptr(), &mut nf),
            rb_status::Vendor,
        )?;
        ensure(nf.is_null(), "out written on failure")?;
        let bad = CString::new(
            "extern \"C\" __global__ void broken(float* x) { x[0] = undefined_name; }",
        )
        .unwrap();
        let mut bm = null_mut();
        expect(
            "compile error",
            rb_module_create(
                dev.as_ptr(),
                bad.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
                &mut bm,
            ),
            rb_status::Compilation,
        )?;
        let msg = last_error();
        ensure(
            msg.contains("undefined_name"),
            format!("the compiler log is missing from: {msg}"),
        )?;
        ensure(bm.is_null(), "out written on failure")?;
        // The function keeps its module alive after the module handle goes.
        check("rb_module_destroy", rb_module_destroy(m))?;
        check(
            "launch after module destroy",
            rb_function_launch(f, blocks, 1, 1, 256, 1, 1, 0, null_mut(), args.as_mut_ptr()),
        )?;
        check("rb_function_destroy", rb_function_destroy(f))?;
        check("rb_function_destroy", rb_function_destroy(wf))?;
        check("rb_module_destroy", rb_module_destroy(m2))?;
        for h in [t, out] {
            check("destroy", rb_tensor_destroy(h))?;
        }
    }
    Ok(())
}

fn profiler_summary(dev: &CString) -> R {
    unsafe {
        check("rb_profiler_enable", rb_profiler_enable(true))?;
        check("rb_profiler_reset", rb_profiler_reset())?;
        let t = f32_tensor(dev, &vec![1.0f32; 1 << 16])?;
        for _ in 0..3 {
            let mut y = null_mut();
            check("rb_relu", rocm_backend::ffi::rb_relu(null_mut(), t, &mut y))?;
            check("destroy", rb_tensor_destroy(y))?;
        }
        let mut need = 0usize;
        check(
            "summary size",
            rb_profiler_summary(null_mut(), 0, &mut need),
        )?;
        // Other tests may add kernels meanwhile: leave room.
        let mut buf = vec![0 as std::ffi::c_char; need + (1 << 16)];
        check(
            "summary",
            rb_profiler_summary(buf.as_mut_ptr(), buf.len(), &mut need),
        )?;
        let text = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
        eprintln!("{text}");
        check("rb_profiler_enable", rb_profiler_enable(false))?;
        let s = profiler::profiler().summary();
        let relu = s
            .iter()
            .find(|k| k.name.starts_with("rb_unary_f32"))
            .ok_or("no rb_unary_f32* kernel in the summary")?;
        ensure(relu.count >= 3 && relu.total_ms > 0.0, format!("{relu:?}"))?;
        check("destroy", rb_tensor_destroy(t))?;
    }
    Ok(())
}

// ---- trials that hold on every machine --------------------------------------------------

fn cpu_events_and_unsupported_module() -> R {
    let cpu = CString::new("cpu").unwrap();
    unsafe {
        let (mut a, mut b) = (null_mut(), null_mut());
        check("rb_event_create", rb_event_create(cpu.as_ptr(), &mut a))?;
        check("rb_event_create", rb_event_create(cpu.as_ptr(), &mut b))?;
        check("record", rb_event_record(a, null_mut()))?;
        check("record", rb_event_record(b, null_mut()))?;
        let mut ms = -1f32;
        check("elapsed", rb_event_elapsed_time(a, b, &mut ms))?;
        ensure(ms >= 0.0, format!("{ms}"))?;
        let mut done = false;
        check("query", rb_event_query(a, &mut done))?;
        ensure(done, "cpu event not done")?;
        expect(
            "null out",
            rb_event_query(a, std::ptr::null_mut()),
            rb_status::NullPointer,
        )?;
        check("destroy", rb_event_destroy(a))?;
        check("destroy", rb_event_destroy(b))?;
        let src = CString::new(SCALE_SRC).unwrap();
        let mut m = null_mut();
        expect(
            "module on the CPU",
            rb_module_create(
                cpu.as_ptr(),
                src.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
                &mut m,
            ),
            rb_status::Unsupported,
        )?;
    }
    Ok(())
}

fn loader_reports_why() -> R {
    for kind in [DeviceKind::Rocm, DeviceKind::Cuda] {
        match context::unavailable_reason(kind) {
            Some(why) => {
                eprintln!("{}: unavailable: {why}", kind.prefix());
                ensure(!why.is_empty(), "empty reason")?;
                let spec = if kind == DeviceKind::Rocm {
                    DeviceSpec::Rocm(0)
                } else {
                    DeviceSpec::Cuda(0)
                };
                let e = context::device(spec).unwrap_err();
                ensure(
                    e.kind == rocm_backend::ErrorKind::DeviceUnavailable,
                    format!("{e:?}"),
                )?;
                ensure(e.message.contains(&why), format!("{e:?}"))?;
                ensure(
                    context::device_count(kind) == 0,
                    "count > 0 but unavailable",
                )?;
            }
            None => {
                let n = context::device_count(kind);
                ensure(n > 0, "available but no devices")?;
                // One Arc per ordinal.
                let spec = if kind == DeviceKind::Rocm {
                    DeviceSpec::Rocm(0)
                } else {
                    DeviceSpec::Cuda(0)
                };
                let (a, b) = (
                    context::device(spec).unwrap(),
                    context::device(spec).unwrap(),
                );
                ensure(std::sync::Arc::ptr_eq(&a, &b), "two Arcs for one device")?;
                let e = context::device(if kind == DeviceKind::Rocm {
                    DeviceSpec::Rocm(n)
                } else {
                    DeviceSpec::Cuda(n)
                })
                .unwrap_err();
                ensure(
                    e.kind == rocm_backend::ErrorKind::DeviceUnavailable,
                    format!("{e:?}"),
                )?;
            }
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let gpu_tests: [(&str, GpuTest); 6] = [
        ("device_info", device_info),
        ("streams_and_events", streams_and_events),
        ("event_elapsed_to_itself", event_elapsed_to_itself),
        ("tensor_to_device", tensor_to_device),
        ("module_api", module_api),
        ("profiler_summary", profiler_summary),
    ];
    let mut trials = vec![
        Trial::test(
            "cpu::events_and_unsupported_module",
            cpu_events_and_unsupported_module,
        ),
        Trial::test("loader_reports_why", loader_reports_why),
        Trial::test("cpu::event_elapsed_to_itself", cpu_event_elapsed_to_itself),
    ];
    for (label, kind) in [("rocm", DeviceKind::Rocm), ("cuda", DeviceKind::Cuda)] {
        let why = context::unavailable_reason(kind);
        if let Some(w) = &why {
            eprintln!("gpu_runtime: {label} tests skipped: {w}");
        }
        for (name, f) in gpu_tests {
            let dev = CString::new(format!("{label}:0")).unwrap();
            trials.push(
                Trial::test(format!("{label}::{name}"), move || f(&dev))
                    .with_ignored_flag(why.is_some()),
            );
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
