//! Modules: compile a caller's own HIP kernel source for a GPU (hiprtc on AMD, NVRTC on
//! NVIDIA; `#include "common.h"` gives the library's kernels/common.h, and
//! `#include <hip/hip_runtime.h>` is accepted on both), get its `extern "C"` kernels by name,
//! and launch them with grid, block, shared memory, stream and arguments.

use super::handles::{arc, new_handle, release};
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::util::{check_out, cstr, cstr_opt, null, write_out};
use crate::runtime::context;
use crate::runtime::module::Module;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// An opaque handle to a compiled, loaded module.
pub struct rb_module {
    _private: [u8; 0],
}

/// An opaque handle to a kernel of a module (it keeps its module loaded).
pub struct rb_function {
    _private: [u8; 0],
}

/// Compiles `source` (HIP C++, NUL-terminated) for `device` (a device string, or NULL for
/// the current device, which must be a GPU) and loads it. `name` (may be NULL) names the
/// source in diagnostics; `options` holds `num_options` extra compiler options (may be NULL
/// when 0). Compiled code is cached: the same source, options and architecture compile once
/// per process.
///
/// On success `*out` is a new handle the caller owns (free it with `rb_module_destroy`).
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_DEVICE_UNAVAILABLE, RB_STATUS_UNSUPPORTED (the CPU device, or no runtime
/// compiler installed), RB_STATUS_COMPILATION (the message holds the compiler's log) or
/// RB_STATUS_VENDOR; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// Strings are NULL or NUL-terminated; `options` is NULL or holds `num_options` strings;
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_module_create(
    device: *const c_char,
    source: *const c_char,
    name: *const c_char,
    options: *const *const c_char,
    num_options: usize,
    out: *mut *mut rb_module,
) -> rb_status {
    guard("rb_module_create", || {
        check_out(out, "out")?;
        let d = context::resolve(unsafe { cstr_opt(device, "device") }?)?;
        let src = unsafe { cstr(source, "source") }?;
        let name = unsafe { cstr_opt(name, "name") }?.unwrap_or("module.hip");
        if num_options > 0 && options.is_null() {
            return Err(null("options"));
        }
        let mut opts = Vec::with_capacity(num_options);
        for i in 0..num_options {
            // SAFETY: options holds num_options pointers (caller's contract).
            let p = unsafe { *options.add(i) };
            opts.push(unsafe { cstr(p, "options[i]") }?.to_string());
        }
        let m = Module::compile(d, src, name, &opts)?;
        unsafe { write_out(out, "out", new_handle(m)) }
    })
}

/// Releases a module handle; the code stays loaded while a function of it lives. NULL is a
/// no-op. Fails with RB_STATUS_INVALID_HANDLE for a stale, foreign or non-module handle.
/// Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_module_destroy(module: *mut rb_module) -> rb_status {
    guard("rb_module_destroy", || release(module, "module"))
}

/// Looks up the `extern "C"` kernel `name` in `module`.
///
/// On success `*out` is a new handle the caller owns (free it with `rb_function_destroy`).
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE or RB_STATUS_VENDOR (no such
/// kernel: the vendor's not-found error); `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_module_get_function(
    module: *mut rb_module,
    name: *const c_char,
    out: *mut *mut rb_function,
) -> rb_status {
    guard("rb_module_get_function", || {
        check_out(out, "out")?;
        let m: Arc<Module> = arc(module, "module")?;
        let n = unsafe { cstr(name, "name") }?;
        let f = m.function(n)?;
        unsafe { write_out(out, "out", new_handle(f)) }
    })
}

/// Releases a function handle. NULL is a no-op. Fails with RB_STATUS_INVALID_HANDLE for a
/// stale, foreign or non-function handle. Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_function_destroy(function: *mut rb_function) -> rb_status {
    guard("rb_function_destroy", || release(function, "function"))
}

/// Launches `function` on a grid of `grid_x * grid_y * grid_z` blocks of
/// `block_x * block_y * block_z` threads with `shared_bytes` of dynamic shared memory, on
/// `stream` (NULL: the default stream of the module's device). `args` holds one pointer per
/// kernel parameter, each to a value of that parameter's type (as hipModuleLaunchKernel and
/// cuLaunchKernel take them); it may be NULL for a kernel without parameters. The launch is
/// asynchronous: synchronize the stream before reading results.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (a zero dimension, too many threads per block, a stream of another device),
/// RB_STATUS_UNSUPPORTED (a stream being recorded into a graph: the arguments come without
/// their sizes, so the launch cannot be copied; use the raw entry points or end the
/// capture) or RB_STATUS_VENDOR. Thread-safe.
///
/// # Safety
/// `args` matches the kernel's parameters; what the kernel reads and writes is the caller's
/// responsibility (a kernel can corrupt device memory).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_function_launch(
    function: *mut rb_function,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    block_x: u32,
    block_y: u32,
    block_z: u32,
    shared_bytes: u32,
    stream: *mut rb_stream,
    args: *mut *mut c_void,
) -> rb_status {
    guard("rb_function_launch", || {
        let f = arc(function, "function")?;
        let s = stream_arg(stream)?;
        if let Some(st) = &s {
            crate::graph::capture::check_unrecordable(
                "rb_function_launch",
                "a launch passes its arguments by address without their sizes, so it \
                 cannot be copied into a graph",
                st,
            )?;
        }
        // SAFETY: the caller's contract.
        unsafe {
            f.launch(
                [grid_x, grid_y, grid_z],
                [block_x, block_y, block_z],
                shared_bytes,
                s.as_deref(),
                args,
            )
        }
    })
}
