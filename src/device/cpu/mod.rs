//! The CPU device: the embedded default, multi-threaded, and the reference the GPU devices
//! are tested against. Memory is 64-byte-aligned host memory; every op runs synchronously
//! on the calling thread and the device's thread pool, so streams are trivially ordered.
//!
//! One file per op family, named as in the other layers (`conv.rs`, `pool.rs`, `softmax.rs`,
//! `norm.rs`, `loss.rs`, `attention.rs`, `transformer.rs`, `blas.rs`, `elementwise.rs`,
//! `fused.rs` (the graph executor's fused elementwise programs), ...);
//! helpers: [`elem`] (element types, loads and stores), [`par`] (the thread pool),
//! [`sysblas`] (a system BLAS when one is installed), `gemm_skinny`, `conv/direct.rs` and
//! `softmax/x86.rs` (hand-written AVX-512 kernels).

mod attention;
mod blas;
pub mod comm;
mod conv;
mod data;
pub mod elem;
mod elementwise;
mod fused;
pub mod gemm_packed;
mod gemm_skinny;
mod loss;
mod memory;
mod norm;
mod optim;
pub mod par;
mod pool;
mod reduce;
mod softmax;
pub mod sysblas;
mod transformer;

use super::{DevPtr, Device, DeviceInfo, DeviceKind, RawStream};
use crate::{Error, Result};
use std::alloc::{Layout, alloc, dealloc};
use std::sync::{Arc, LazyLock};

/// How many f32 values past `p` the first 64-byte boundary lies (0 to 15): where the
/// kernels' aligned views into buffers taken with 16 values to spare begin.
pub(crate) fn aligned_offset(p: *const f32) -> usize {
    (64 - (p as usize % 64)) % 64 / 4
}

/// Alignment of every CPU allocation (one cache line, one AVX-512 vector).
pub const ALIGN: usize = 64;

/// A transparent huge page (x86-64 and most aarch64 Linux kernels).
const HUGE_PAGE: usize = 2 << 20;

/// Whether allocations of at least [`HUGE_PAGE`] bytes ask Linux for transparent huge pages
/// (`RB_CPU_HUGE_PAGES=0`: no): they are then aligned to one and marked `MADV_HUGEPAGE`, which
/// kernels whose THP setting is `madvise` (Debian's and Ubuntu's default) need before they
/// back a range with 2 MiB pages. A model's weights and activations are then reached through
/// a few hundred TLB entries instead of tens of thousands of 4 KiB pages. ResNet-50 batch 1
/// (the recorded executor, O3) on the 2-core VM, medians of 15 runs, off and on alternated
/// twice: back to back 26.1-26.9 -> 24.1-24.4 ms, 20 ms idle before each run 26.5-28.7 ->
/// 25.4-26.6 ms, 100 ms idle no clear change (30.5-31.5 against 29.7-31.4). NumPy marks its
/// large arrays so, and PyTorch's CPU allocator under `THP_MEM_ALLOC_ENABLE=1`.
fn huge_pages() -> bool {
    static ON: LazyLock<bool> = LazyLock::new(|| {
        cfg!(target_os = "linux")
            && std::env::var("RB_CPU_HUGE_PAGES").map_or(true, |v| v.trim() != "0")
    });
    *ON
}

/// The layout of a CPU allocation of `bytes` (the same for its `free`).
fn layout_of(bytes: usize) -> Option<Layout> {
    let align = if bytes >= HUGE_PAGE && huge_pages() {
        HUGE_PAGE
    } else {
        ALIGN
    };
    Layout::from_size_align(bytes.max(1), align).ok()
}

#[derive(Debug, Default)]
pub struct CpuDevice;

static CPU: LazyLock<Arc<CpuDevice>> = LazyLock::new(|| Arc::new(CpuDevice));

/// The process's one CPU device.
pub fn cpu_device() -> Arc<CpuDevice> {
    CPU.clone()
}

impl Device for CpuDevice {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Cpu
    }
    fn ordinal(&self) -> usize {
        0
    }
    fn faster_in_bf16(&self) -> bool {
        false
    }
    fn info(&self) -> Result<DeviceInfo> {
        let (total, free) = meminfo();
        Ok(DeviceInfo {
            device: "cpu".into(),
            name: cpu_model_name(),
            arch: cpu_arch(),
            family: "CPU".into(),
            total_memory: total,
            free_memory: free,
            compute_units: par::num_threads() as u32,
            warp_size: 1,
            matrix_cores: false,
            bf16: true,
            fp8: false,
        })
    }

    fn alloc(&self, bytes: usize) -> Result<DevPtr> {
        let layout = layout_of(bytes)
            .ok_or_else(|| Error::oom(format!("cannot allocate {bytes} bytes on the CPU")))?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc(layout) };
        if p.is_null() {
            return Err(Error::oom(format!(
                "cannot allocate {bytes} bytes on the CPU"
            )));
        }
        #[cfg(target_os = "linux")]
        if layout.align() == HUGE_PAGE {
            // The whole huge pages inside the allocation (a hint: an error changes nothing).
            // SAFETY: the range lies inside the allocation just made.
            unsafe { libc::madvise(p.cast(), bytes & !(HUGE_PAGE - 1), libc::MADV_HUGEPAGE) };
        }
        Ok(DevPtr(p as usize as u64))
    }

    fn free(&self, ptr: DevPtr, bytes: usize) {
        if ptr.is_null() {
            return;
        }
        let layout = layout_of(bytes).expect("layout was valid");
        // SAFETY: `ptr` came from `alloc` with this layout (the Device contract).
        unsafe { dealloc(ptr.as_mut_ptr(), layout) }
    }

    fn copy_h2d(&self, src: &[u8], dst: DevPtr, _s: RawStream) -> Result<()> {
        // SAFETY: `dst` is a device allocation of at least `src.len()` bytes (caller's contract).
        unsafe { par::copy(src.as_ptr(), dst.as_mut_ptr(), src.len()) };
        Ok(())
    }
    fn copy_d2h(&self, src: DevPtr, dst: &mut [u8], _s: RawStream) -> Result<()> {
        // SAFETY: as above.
        unsafe { par::copy(src.as_ptr(), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }
    fn copy_d2d(&self, src: DevPtr, dst: DevPtr, bytes: usize, _s: RawStream) -> Result<()> {
        // SAFETY: as above; `copy` handles overlap by using memmove per chunk.
        unsafe { par::copy(src.as_ptr(), dst.as_mut_ptr(), bytes) };
        Ok(())
    }
    fn memset(&self, dst: DevPtr, value: u8, bytes: usize, _s: RawStream) -> Result<()> {
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(dst.as_mut_ptr::<u8>(), value, bytes) };
        Ok(())
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    fn stream_create(&self) -> Result<RawStream> {
        Ok(RawStream::DEFAULT)
    }
    fn stream_destroy(&self, _s: RawStream) {}
    fn stream_synchronize(&self, _s: RawStream) -> Result<()> {
        Ok(())
    }

    /// The fused loop of [`fused`]: chunked, multi-threaded, in f32.
    fn fused_elementwise(
        &self,
        _stream: RawStream,
        prog: &crate::ops::fused::FusedProgram,
        inputs: &[super::FusedInput],
        out_shape: &[usize],
        out: DevPtr,
    ) -> Result<()> {
        fused::fused_elementwise(prog, inputs, out_shape, out)
    }
}

/// True when the CPU has AVX-512F and FMA, which the hand-written kernels (direct conv,
/// skinny GEMM, row softmax) need; `switch` names the kernel's environment switch, which
/// turns it off when set to `0`.
fn avx512_kernel_on(switch: Option<&str>) -> bool {
    let on = switch.is_none_or(|v| std::env::var(v).map_or(true, |v| v.trim() != "0"));
    #[cfg(target_arch = "x86_64")]
    {
        on && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = on;
        false
    }
}

fn meminfo() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0)
    };
    (field("MemTotal:"), field("MemAvailable:"))
}

fn cpu_model_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

fn cpu_arch() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        let level = if std::arch::is_x86_feature_detected!("avx512f") {
            "avx512"
        } else if std::arch::is_x86_feature_detected!("avx2") {
            "avx2"
        } else {
            "sse2"
        };
        format!("x86_64-{level}")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        std::env::consts::ARCH.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocations of at least a huge page start on one (where huge pages are on) and hold
    /// their bytes; smaller ones keep the cache-line alignment.
    #[test]
    fn large_allocations_are_huge_page_aligned() {
        let dev = CpuDevice;
        for bytes in [HUGE_PAGE - 4, HUGE_PAGE, 3 * HUGE_PAGE + 12] {
            let p = dev.alloc(bytes).unwrap();
            let align = if bytes >= HUGE_PAGE && huge_pages() {
                HUGE_PAGE
            } else {
                ALIGN
            };
            assert_eq!(p.0 as usize % align, 0, "{bytes} bytes at {:#x}", p.0);
            // SAFETY: p holds `bytes` bytes.
            let s = unsafe { std::slice::from_raw_parts_mut(p.as_mut_ptr(), bytes) };
            for (i, b) in s.iter_mut().enumerate() {
                *b = (i % 251) as u8;
            }
            assert!(s.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
            dev.free(p, bytes);
        }
    }
}
