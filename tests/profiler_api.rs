//! The profiler exports: enable, summary (size query, too-small buffer, text layout), reset.

use rocm_backend::device::gpu::profiler::profiler;
use rocm_backend::ffi::profiler::*;
use rocm_backend::ffi::status::{rb_last_error_message, rb_status};
use std::ffi::CStr;
use std::ptr::null_mut;

fn ok(s: rb_status) {
    let m = unsafe { CStr::from_ptr(rb_last_error_message()) }.to_string_lossy();
    assert_eq!(s, rb_status::Success, "{m}");
}

#[test]
fn profiler_exports() {
    unsafe {
        // Profiler.
        ok(rb_profiler_enable(true));
        ok(rb_profiler_reset());
        profiler().record("vector_add", 1.5);
        profiler().record("vector_add", 2.5);
        profiler().record("softmax", 0.25);
        let mut needed = 0usize;
        ok(rb_profiler_summary(null_mut(), 0, &mut needed));
        assert!(needed > 10);
        let mut small = vec![0 as std::ffi::c_char; 4];
        assert_eq!(
            rb_profiler_summary(small.as_mut_ptr(), 4, &mut needed),
            rb_status::InvalidArgument
        );
        assert_eq!(small, vec![0; 4], "buf untouched");
        let mut buf = vec![0 as std::ffi::c_char; needed];
        ok(rb_profiler_summary(buf.as_mut_ptr(), needed, null_mut()));
        let text = CStr::from_ptr(buf.as_ptr()).to_str().unwrap().to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        let va: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(va[..4], ["vector_add", "2", "4.0000", "2.0000"], "{text}");
        assert!(lines[2].starts_with("softmax"), "{text}");
        ok(rb_profiler_enable(false));
        profiler().record("ignored", 1.0);
        ok(rb_profiler_reset());
        ok(rb_profiler_summary(null_mut(), 0, &mut needed));
        let mut buf = vec![0 as std::ffi::c_char; needed];
        ok(rb_profiler_summary(buf.as_mut_ptr(), needed, null_mut()));
        assert_eq!(
            CStr::from_ptr(buf.as_ptr())
                .to_str()
                .unwrap()
                .lines()
                .count(),
            1
        );
    }
}
