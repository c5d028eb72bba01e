//! The memory C API on the CPU device (the one every machine has): allocation, copies and
//! memsets (sync and async), misuse answered by statuses and messages, stats, settings and
//! warm-up, the pinned pool, the kernel-cache exports.

use rocm_backend::ffi::memory::*;
use rocm_backend::ffi::status::{rb_last_error_message, rb_status};
use rocm_backend::ffi::stream::{
    rb_stream, rb_stream_create, rb_stream_destroy, rb_stream_synchronize,
};
use std::ffi::{CStr, c_void};
use std::ptr::{null, null_mut};
use std::sync::Mutex;

/// The CPU device's allocator is process-wide: tests that read its stats run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const CPU: *const std::ffi::c_char = c"cpu".as_ptr();

fn msg() -> String {
    unsafe { CStr::from_ptr(rb_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn ok(s: rb_status) {
    assert_eq!(s, rb_status::Success, "{}", msg());
}

fn alloc(n: usize) -> *mut c_void {
    let mut p = null_mut();
    ok(unsafe { rb_memory_allocate(CPU, n, &mut p) });
    assert!(!p.is_null());
    p
}

fn stats() -> rb_memory_stats {
    let mut s = rb_memory_stats::default();
    ok(unsafe { rb_memory_get_stats(CPU, &mut s) });
    s
}

#[test]
fn allocate_copy_memset_roundtrip() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 1000;
    let src: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
    let a = alloc(n);
    let b = alloc(n);
    unsafe {
        ok(rb_memory_copy_host_to_device(
            CPU,
            a,
            src.as_ptr() as *const c_void,
            n,
        ));
        ok(rb_memory_memset(
            CPU,
            (a as *mut u8).add(100) as *mut c_void,
            0x1ab,
            50,
        ));
        ok(rb_memory_copy_device_to_device(CPU, b, a, n));
        let mut back = vec![0u8; n];
        ok(rb_memory_copy_device_to_host(
            CPU,
            back.as_mut_ptr() as *mut c_void,
            b,
            n,
        ));
        let mut want = src.clone();
        want[100..150].fill(0xab); // memset uses the low byte, as C's memset
        assert_eq!(back, want);
        // Overlapping device-to-device copy inside one allocation (memmove semantics).
        ok(rb_memory_copy_device_to_device(
            CPU,
            (b as *mut u8).add(1) as *mut c_void,
            b,
            n - 1,
        ));
        ok(rb_memory_copy_device_to_host(
            CPU,
            back.as_mut_ptr() as *mut c_void,
            b,
            n,
        ));
        assert_eq!(back[1..], want[..n - 1]);
        // Zero bytes: nothing copied, still fine.
        ok(rb_memory_copy_host_to_device(
            CPU,
            a,
            src.as_ptr() as *const c_void,
            0,
        ));
        ok(rb_memory_deallocate(CPU, a));
        ok(rb_memory_deallocate(CPU, b));
        // NULL is a no-op.
        ok(rb_memory_deallocate(CPU, null_mut()));
        // 0 bytes gives a unique, freeable address.
        let z = alloc(0);
        ok(rb_memory_deallocate(CPU, z));
    }
}

#[test]
fn async_variants_on_streams() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut s: *mut rb_stream = null_mut();
    ok(unsafe { rb_stream_create(CPU, &mut s) });
    let n = 4096;
    for stream in [null_mut(), s] {
        let mut p = null_mut();
        let mut q = null_mut();
        unsafe {
            ok(rb_memory_allocate_async(stream, n, &mut p));
            ok(rb_memory_allocate_async(stream, n, &mut q));
            let src = vec![3u8; n];
            ok(rb_memory_copy_host_to_device_async(
                stream,
                p,
                src.as_ptr() as *const c_void,
                n,
            ));
            ok(rb_memory_memset_async(
                stream,
                (p as *mut u8).add(10) as *mut c_void,
                9,
                10,
            ));
            ok(rb_memory_copy_device_to_device_async(stream, q, p, n));
            let mut back = vec![0u8; n];
            ok(rb_memory_copy_device_to_host_async(
                stream,
                back.as_mut_ptr() as *mut c_void,
                q,
                n,
            ));
            if !stream.is_null() {
                ok(rb_stream_synchronize(stream));
            }
            assert!(back[..10].iter().all(|&x| x == 3));
            assert!(back[10..20].iter().all(|&x| x == 9));
            assert!(back[20..].iter().all(|&x| x == 3));
            ok(rb_memory_deallocate_async(stream, p));
            ok(rb_memory_deallocate_async(stream, q));
        }
    }
    ok(unsafe { rb_stream_destroy(s) });
    // A destroyed stream is a stale handle.
    let mut p = null_mut();
    assert_eq!(
        unsafe { rb_memory_allocate_async(s, 8, &mut p) },
        rb_status::InvalidHandle
    );
    assert!(p.is_null());
}

#[test]
fn misuse_gives_statuses_and_messages() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut local = [0u8; 64];
    let foreign = local.as_mut_ptr() as *mut c_void;
    unsafe {
        // Unknown pointer: never UB, INVALID_ARGUMENT with the address in the message.
        assert_eq!(
            rb_memory_deallocate(CPU, foreign),
            rb_status::InvalidArgument
        );
        assert!(
            msg().contains(&format!("{:#x}", foreign as usize)),
            "{}",
            msg()
        );
        assert!(msg().starts_with("rb_memory_deallocate"), "{}", msg());
        let before = stats();
        let p = alloc(100);
        ok(rb_memory_deallocate(CPU, p));
        assert_eq!(
            rb_memory_deallocate(CPU, p),
            rb_status::InvalidArgument,
            "double free"
        );
        assert_eq!(
            rb_memory_deallocate_async(null_mut(), p),
            rb_status::InvalidArgument
        );
        let after = stats();
        assert_eq!(after.num_deallocations, before.num_deallocations + 1);
        let p = alloc(100);
        // Ranges outside the allocation, or in memory that is not an allocation.
        let src = [0u8; 200];
        assert_eq!(
            rb_memory_copy_host_to_device(CPU, p, src.as_ptr() as *const c_void, 101),
            rb_status::InvalidArgument
        );
        assert!(msg().contains("past the end"), "{}", msg());
        assert_eq!(
            rb_memory_copy_host_to_device(CPU, foreign, src.as_ptr() as *const c_void, 1),
            rb_status::InvalidArgument
        );
        assert!(msg().contains("dst"), "{}", msg());
        let mut back = [0u8; 8];
        assert_eq!(
            rb_memory_copy_device_to_host(CPU, back.as_mut_ptr() as *mut c_void, foreign, 8),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_memory_copy_device_to_device(CPU, p, foreign, 8),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_memory_memset(CPU, (p as *mut u8).add(99) as *mut c_void, 0, 2),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_memory_memset_async(null_mut(), foreign, 0, 1),
            rb_status::InvalidArgument
        );
        // NULL pointers.
        assert_eq!(
            rb_memory_allocate(CPU, 8, null_mut()),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_memory_copy_host_to_device(CPU, p, null(), 8),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_memory_copy_host_to_device(CPU, null_mut(), src.as_ptr() as *const c_void, 8),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_memory_copy_device_to_host(CPU, null_mut(), p, 8),
            rb_status::NullPointer
        );
        assert_eq!(rb_memory_get_stats(CPU, null_mut()), rb_status::NullPointer);
        assert_eq!(rb_memory_set_config(CPU, null()), rb_status::NullPointer);
        let mut f = 0u64;
        assert_eq!(
            rb_memory_get_info(CPU, &mut f, null_mut()),
            rb_status::NullPointer
        );
        assert_eq!(f, 0, "outputs untouched on failure");
        // Devices.
        let mut q = null_mut();
        assert_eq!(
            rb_memory_allocate(c"tpu".as_ptr(), 8, &mut q),
            rb_status::InvalidArgument
        );
        let st = rb_memory_allocate(c"rocm:0".as_ptr(), 8, &mut q);
        assert!(
            st == rb_status::DeviceUnavailable || st == rb_status::Success,
            "{st:?}"
        );
        if st == rb_status::Success {
            ok(rb_memory_deallocate(c"rocm:0".as_ptr(), q));
        }
        // Warm-up arguments.
        assert_eq!(
            rb_memory_warmup_pool(CPU, 0, c"small".as_ptr()),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_memory_warmup_pool(CPU, 1, c"gigantic".as_ptr()),
            rb_status::InvalidArgument
        );
        assert!(msg().contains("gigantic"), "{}", msg());
        assert_eq!(
            rb_memory_warmup_pool(CPU, 1, null()),
            rb_status::NullPointer
        );
        // Too large: OUT_OF_MEMORY, not a crash.
        let mut big = null_mut();
        assert_eq!(
            rb_memory_allocate(CPU, usize::MAX - 10, &mut big),
            rb_status::OutOfMemory
        );
        assert!(big.is_null());
        ok(rb_memory_deallocate(CPU, p));
    }
}

#[test]
fn stats_info_config_and_warmup() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    unsafe {
        let (mut free, mut total) = (0u64, 0u64);
        ok(rb_memory_get_info(CPU, &mut free, &mut total));
        assert!(total > 0 && free <= total, "{free} {total}");

        let mut c = rb_memory_config {
            pooling: true,
            pool_size: 0,
            max_pool_size: 0,
        };
        ok(rb_memory_get_config(CPU, &mut c));
        assert!(!c.pooling, "the CPU device does not pool by default");

        ok(rb_memory_reset_stats(CPU));
        let s0 = stats();
        let p = alloc(3000);
        let s1 = stats();
        assert_eq!(s1.num_allocations, s0.num_allocations + 1);
        assert_eq!(s1.allocated_bytes, s0.allocated_bytes + 3072);
        assert_eq!(s1.requested_bytes, s0.requested_bytes + 3000);
        ok(rb_memory_deallocate(CPU, p));
        let s2 = stats();
        assert_eq!(s2.allocated_bytes, s0.allocated_bytes);
        assert!(s2.peak_allocated_bytes >= s0.allocated_bytes + 3072);
        ok(rb_memory_reset_stats(CPU));
        let s3 = stats();
        assert_eq!((s3.num_allocations, s3.num_deallocations), (0, 0));
        assert_eq!(s3.peak_allocated_bytes, s3.allocated_bytes);

        // Pooling on with a reserved pool.
        let cfg = rb_memory_config {
            pooling: true,
            pool_size: 8 << 20,
            max_pool_size: 0,
        };
        ok(rb_memory_set_config(CPU, &cfg));
        ok(rb_memory_get_config(CPU, &mut c));
        assert!(c.pooling && c.pool_size == 8 << 20 && c.max_pool_size == 0);
        assert!(stats().reserved_bytes >= 8 << 20);
        // Warm-up: then the preset sizes are cache hits.
        ok(rb_memory_warmup_pool(CPU, 2, c"small".as_ptr()));
        ok(rb_memory_reset_stats(CPU));
        let ptrs: Vec<_> = [128usize << 10, 512 << 10, 2 << 20]
            .iter()
            .map(|&n| alloc(n))
            .collect();
        let s = stats();
        assert_eq!((s.cache_hits, s.cache_misses), (3, 0), "{s:?}");
        for p in ptrs {
            ok(rb_memory_deallocate(CPU, p));
        }
        ok(rb_memory_clear_pool(CPU));
        let s = stats();
        assert_eq!(s.reserved_bytes, s.allocated_bytes);
        // A bad combination is refused.
        let bad = rb_memory_config {
            pooling: true,
            pool_size: 4 << 20,
            max_pool_size: 2 << 20,
        };
        assert_eq!(rb_memory_set_config(CPU, &bad), rb_status::InvalidArgument);
        // A pool limit turns into OUT_OF_MEMORY with the numbers in the message.
        let lim = rb_memory_config {
            pooling: true,
            pool_size: 0,
            max_pool_size: 4 << 20,
        };
        ok(rb_memory_set_config(CPU, &lim));
        let mut q = null_mut();
        assert_eq!(
            rb_memory_allocate(CPU, 5 << 20, &mut q),
            rb_status::OutOfMemory
        );
        assert!(
            msg().contains("reserved") && msg().contains("allocated"),
            "{}",
            msg()
        );
        assert!(stats().num_ooms >= 1);
        // Back to the default.
        let off = rb_memory_config {
            pooling: false,
            pool_size: 0,
            max_pool_size: 0,
        };
        ok(rb_memory_set_config(CPU, &off));
    }
}

#[test]
fn pinned_memory_and_pool() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    unsafe {
        ok(rb_pinned_pool_clear(CPU));
        ok(rb_memory_reset_stats(CPU));
        let mut p = null_mut();
        ok(rb_memory_allocate_pinned(CPU, 10_000, &mut p));
        std::ptr::write_bytes(p as *mut u8, 1, 10_000);
        let s = stats();
        assert_eq!(s.pinned_in_use_bytes, 16384);
        ok(rb_memory_deallocate_pinned(CPU, p));
        assert_eq!(stats().pinned_cached_bytes, 16384);
        // The pool hands the same block out again.
        let mut q = null_mut();
        ok(rb_pinned_pool_acquire(CPU, 16000, &mut q));
        assert_eq!(p, q);
        ok(rb_pinned_pool_release(CPU, q));
        assert_eq!(
            rb_pinned_pool_release(CPU, q),
            rb_status::InvalidArgument,
            "double release"
        );
        let mut local = 0u8;
        assert_eq!(
            rb_memory_deallocate_pinned(CPU, &mut local as *mut u8 as *mut c_void),
            rb_status::InvalidArgument
        );
        ok(rb_pinned_pool_release(CPU, null_mut()));
        let sizes = [1usize << 20, 4096];
        ok(rb_pinned_pool_warmup(CPU, sizes.as_ptr(), sizes.len()));
        assert_eq!(
            rb_pinned_pool_warmup(CPU, null(), 2),
            rb_status::NullPointer
        );
        let s = stats();
        assert_eq!(s.pinned_cached_bytes, 16384 + (1 << 20) + 4096);
        assert_eq!(s.pinned_in_use_bytes, 0);
        ok(rb_pinned_pool_clear(CPU));
        assert_eq!(stats().pinned_cached_bytes, 0);
        assert_eq!(
            rb_pinned_pool_acquire(CPU, 8, null_mut()),
            rb_status::NullPointer
        );
    }
}

#[test]
fn kernel_cache_exports() {
    use rocm_backend::device::gpu::kernel_cache::{KernelCompiler, kernel_cache};
    let dir = tempfile::tempdir().unwrap();
    // The process-wide cache reads its directory at first use; nothing used it before here.
    unsafe { std::env::set_var("RB_CACHE_DIR", dir.path()) };
    struct Cc;
    impl KernelCompiler for Cc {
        fn compile(
            &self,
            s: &str,
            _: &str,
            _: &[String],
            a: &str,
        ) -> rocm_backend::Result<Vec<u8>> {
            Ok(format!("{s}@{a}").into_bytes())
        }
        fn compiler_version(&self) -> String {
            "cc 1".into()
        }
    }
    assert_eq!(kernel_cache().dir(), Some(dir.path()));
    let mut s = rb_kernel_cache_stats::default();
    unsafe {
        kernel_cache()
            .get_or_compile(&Cc, "k()", "k", &[], "gfx90a")
            .unwrap();
        kernel_cache()
            .get_or_compile(&Cc, "k()", "k", &[], "gfx90a")
            .unwrap();
        ok(rb_kernel_cache_get_stats(&mut s));
        assert_eq!((s.misses, s.memory_hits, s.memory_entries), (1, 1, 1));
        assert!((s.hit_rate - 0.5).abs() < 1e-12);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        ok(rb_kernel_cache_clear());
        ok(rb_kernel_cache_get_stats(&mut s));
        assert_eq!(s.memory_entries, 0);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert_eq!(
            rb_kernel_cache_get_stats(null_mut()),
            rb_status::NullPointer
        );
    }
}
