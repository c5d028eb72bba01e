//! `ElementwiseOps` on GPUs: unary maps and their backwards, broadcasting binary ops and
//! their backwards, comparisons, `where`, the fused add+relu and mul+add, fills, casts and
//! random fills, with the kernels of kernels/elementwise.hip and kernels/pointwise.hip.
//!
//! Fast paths (one 16-byte vector per thread, the op folded at compile time, f32 math, one
//! rounding on store: the scalar kernels' bits): f32 unary (`rb_unary_f32_x4_*`) and binary;
//! f16/bf16 unary, binary with same-shape, scalar or trailing-broadcast operands
//! (`BroadcastLayout::period`), comparisons, `where` and `where(a op b, x, y)`; unary
//! backward in every float dtype; f32 <-> f16/bf16 casts. Misaligned pointers and other
//! layouts take the scalar broadcast kernels.

use super::kernels::{self, *};
use super::{GpuDevice, aligned16};
use crate::base::dtype::DType;
use crate::base::shape::BroadcastLayout;
use crate::device::{DevPtr, ElementwiseOps, RawStream};
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::{Error, Result};

/// 16-byte vectors per thread of `rb_unary_f32_x4_*` (RB_EW_UNROLL of kernels/elementwise.hip).
const UNARY_UNROLL: usize = 1;
/// Groups of 4 per thread of the `*_flat` kernels of kernels/pointwise.hip (RB_PW_UNROLL).
const PW_UNROLL: usize = 4;

/// A grid width the launch API accepts, or INVALID_ARGUMENT naming `kernel`.
pub(super) fn grid_x(blocks: usize, kernel: &str) -> Result<u32> {
    u32::try_from(blocks.max(1))
        .ok()
        .filter(|b| *b <= i32::MAX as u32)
        .ok_or_else(|| Error::invalid(format!("{kernel}: {blocks} blocks exceed the grid limit")))
}

/// `RbLayout` of kernels/elementwise.hip: the same fields as `RbPwLayout2` (nd, shape, then
/// the two operands' strides).
type RbLayout = PwLayout<2>;

/// `RbPwLayout2` / `RbPwLayout3` of kernels/pointwise.hip: the merged output shape and
/// `K` operands' element strides.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct PwLayout<const K: usize> {
    nd: i64,
    shape: [i64; 16],
    strides: [[i64; 16]; K],
}

impl<const K: usize> PwLayout<K> {
    /// `layout` (which has `K` operands) for the kernels, or INVALID_ARGUMENT naming `op`.
    pub(super) fn new(op: &str, layout: &BroadcastLayout) -> Result<Self> {
        let nd = layout.shape.len();
        if nd > 16 {
            return Err(Error::invalid(format!(
                "{op}: {nd} dimensions after merging; at most 16"
            )));
        }
        if layout.strides.len() != K {
            return Err(Error::invalid(format!(
                "{op}: the layout has {} operands, expected {K}",
                layout.strides.len()
            )));
        }
        let mut l = PwLayout {
            nd: nd as i64,
            shape: [1; 16],
            strides: [[0; 16]; K],
        };
        for d in 0..nd {
            l.shape[d] = layout.shape[d] as i64;
            for k in 0..K {
                l.strides[k][d] = layout.strides[k][d] as i64;
            }
        }
        Ok(l)
    }
}

impl GpuDevice {
    /// Launches a `*_flat` kernel of kernels/pointwise.hip over `n` elements (groups of 4,
    /// PW_UNROLL groups per thread; block 0 also does the last `n % 4`).
    pub(super) fn launch_pw_flat(
        &self,
        stream: RawStream,
        k: &Kernel,
        n: usize,
        args: &mut [*mut std::ffi::c_void],
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let kernel = k.lone();
        let block = 256u32.min(self.max_threads_per_block());
        let blocks = (n / 4).div_ceil(block as usize * PW_UNROLL);
        let grid = [grid_x(blocks, kernel)? as usize, 1, 1];
        self.launch_grid(stream, k.src, kernel, grid, [block, 1, 1], args)
    }

    /// Launches a one-vector-per-thread kernel (`rb_*_h8_*`, `rb_pw_unary_bwd_v_*`) over `n`
    /// elements in vectors of `width`: thread `i < n / width` maps vector `i`, thread
    /// `n / width` the last `n % width` elements.
    pub(super) fn launch_vec(
        &self,
        stream: RawStream,
        src: &'static super::jit::Source,
        kernel: &str,
        n: usize,
        width: usize,
        args: &mut [*mut std::ffi::c_void],
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let block = 256u32.min(self.max_threads_per_block());
        let threads = n / width + 1;
        let grid = [
            grid_x(threads.div_ceil(block as usize), kernel)? as usize,
            1,
            1,
        ];
        self.launch_grid(stream, src, kernel, grid, [block, 1, 1], args)
    }
}

/// Whether `dtype` is f16 or bf16 (the `*_h8` kernels' dtypes).
fn is_half(dtype: DType) -> bool {
    matches!(dtype, DType::F16 | DType::BF16)
}

impl ElementwiseOps for GpuDevice {
    fn unary(
        &self,
        stream: RawStream,
        op: UnaryOp,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        n: usize,
    ) -> Result<()> {
        if dtype == DType::F64 {
            let kernel = UNARY_D.dtype(op.name(), dtype)?;
            let (uop, p0, p1) = kernels::unary_op(op);
            let (code, n64) = (uop.code, n as u64);
            return self.launch_elems(
                stream,
                UNARY_D.src,
                &kernel,
                n,
                &mut kargs![x.0, y.0, n64, code, p0, p1],
            );
        }
        let name = UNARY.dtype(op.name(), dtype)?;
        let (uop, p0, p1) = kernels::unary_op(op);
        let code = uop.code;
        if is_half(dtype) && aligned16(&[x, y]) {
            // 8 halves per thread, a kernel per op; the tail in the same launch.
            let kernel = UNARY_H8.dtype_op(op.name(), dtype, uop)?;
            let n64 = n as u64;
            return self.launch_vec(
                stream,
                UNARY_H8.src,
                &kernel,
                n,
                8,
                &mut kargs![x.0, y.0, n64, p0, p1],
            );
        }
        let (x, y, n) = if dtype == DType::F32 && aligned16(&[x, y]) && n >= 4 {
            // The bulk as 16-byte vectors (a kernel per op, UNROLL vectors per thread), the
            // tail below as scalars.
            let n4 = n / 4;
            let block = 256u32.min(self.facts.max_threads);
            let per_block = block as usize * UNARY_UNROLL;
            let kernel = UNARY_F32_X4.op(uop);
            let n4_64 = n4 as u64;
            let grid = [grid_x(n4.div_ceil(per_block), &kernel)? as usize, 1, 1];
            self.launch_grid(
                stream,
                UNARY_F32_X4.src,
                &kernel,
                grid,
                [block, 1, 1],
                &mut kargs![x.0, y.0, n4_64, p0, p1],
            )?;
            let done = n4 * 4;
            (x.offset(done * 4), y.offset(done * 4), n - done)
        } else {
            (x, y, n)
        };
        let n64 = n as u64;
        self.launch_elems(
            stream,
            UNARY.src,
            &name,
            n,
            &mut kargs![x.0, y.0, n64, code, p0, p1],
        )
    }

    fn binary(
        &self,
        stream: RawStream,
        op: BinaryOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        if dtype == DType::Bool {
            return Err(Error::dtype(format!(
                "{}: bool tensors are not supported",
                op.name()
            )));
        }
        let name = BINARY.dtype(op.name(), dtype)?;
        let n = layout.numel();
        let bop = kernels::binary_op(op);
        let code = bop.code;
        if is_half(dtype)
            && out.0.is_multiple_of(16)
            && let (Some(pa), Some(pb)) = (layout.period(0), layout.period(1))
        {
            // Same-shape, scalar or trailing-broadcast operands: 8 halves per thread, a
            // vector (or one scalar) of each operand, a kernel per op.
            let vec = |p: usize, ptr: DevPtr| {
                p == 1 || ((p == n || p.is_multiple_of(8)) && ptr.0.is_multiple_of(16))
            };
            if vec(pa, a) && vec(pb, b) {
                let kernel = BINARY_H8.dtype_op(op.name(), dtype, bop)?;
                let (n64, pa, pb) = (n as u64, pa as u64, pb as u64);
                return self.launch_vec(
                    stream,
                    BINARY_H8.src,
                    &kernel,
                    n,
                    8,
                    &mut kargs![a.0, b.0, out.0, n64, pa, pb],
                );
            }
        }
        if dtype == DType::F32 && layout.is_flat() {
            // Same-shape operands: vectors for the bulk, a flat scalar kernel for the tail.
            let (mut a, mut b, mut out, mut rest) = (a, b, out, n);
            if aligned16(&[a, b, out]) && n >= 4 {
                let n4 = (n / 4) as u64;
                self.launch_elems(
                    stream,
                    BINARY_F32_FLAT_V4.src,
                    BINARY_F32_FLAT_V4.lone(),
                    (n / 4).div_ceil(2),
                    &mut kargs![a.0, b.0, out.0, n4, code],
                )?;
                let done = n / 4 * 4;
                (a, b, out, rest) = (
                    a.offset(done * 4),
                    b.offset(done * 4),
                    out.offset(done * 4),
                    n - done,
                );
            }
            let r64 = rest as u64;
            return self.launch_elems(
                stream,
                BINARY_F32_FLAT.src,
                BINARY_F32_FLAT.lone(),
                rest,
                &mut kargs![a.0, b.0, out.0, r64, code],
            );
        }
        let l = RbLayout::new(op.name(), layout)?;
        let n64 = n as u64;
        self.launch_elems(
            stream,
            BINARY.src,
            &name,
            n,
            &mut kargs![a.0, b.0, out.0, n64, code, l],
        )
    }

    fn fill(
        &self,
        stream: RawStream,
        dtype: DType,
        dst: DevPtr,
        n: usize,
        value: f64,
    ) -> Result<()> {
        let mut one = [0u8; 8];
        // SAFETY: `one` holds 8 bytes, enough for any dtype.
        unsafe { crate::device::cpu::elem::store_f64(dtype, one.as_mut_ptr(), 0, value) };
        let pattern = u64::from_le_bytes(one);
        let name = FILL.size(dtype.size());
        let n64 = n as u64;
        self.launch_elems(stream, FILL.src, &name, n, &mut kargs![dst.0, n64, pattern])
    }

    fn cast(
        &self,
        stream: RawStream,
        src_dtype: DType,
        src: DevPtr,
        dst_dtype: DType,
        dst: DevPtr,
        n: usize,
    ) -> Result<()> {
        let (s, d) = (src_dtype as i32, dst_dtype as i32);
        let n64 = n as u64;
        if aligned16(&[src, dst]) {
            // f32 <-> f16/bf16 (mixed precision's casts): 8 elements per thread.
            let fast = match (src_dtype, dst_dtype) {
                (DType::F32, h) if is_half(h) => Some((&CAST_F32_H8, h)),
                (h, DType::F32) if is_half(h) => Some((&CAST_H8_F32, h)),
                _ => None,
            };
            if let Some((k, h)) = fast {
                let kernel = k.dtype("cast", h)?;
                return self.launch_vec(
                    stream,
                    k.src,
                    &kernel,
                    n,
                    8,
                    &mut kargs![src.0, dst.0, n64],
                );
            }
        }
        self.launch_elems(
            stream,
            CAST.src,
            CAST.lone(),
            n,
            &mut kargs![src.0, s, dst.0, d, n64],
        )
    }

    fn randn(
        &self,
        stream: RawStream,
        dtype: DType,
        dst: DevPtr,
        n: usize,
        seed: u64,
    ) -> Result<()> {
        let name = RANDN.dtype("randn", dtype)?;
        let n64 = n as u64;
        self.launch_elems(stream, RANDN.src, &name, n, &mut kargs![dst.0, n64, seed])
    }

    fn randint(
        &self,
        stream: RawStream,
        dtype: DType,
        dst: DevPtr,
        n: usize,
        low: i64,
        high: i64,
        seed: u64,
    ) -> Result<()> {
        let is64: i32 = match dtype {
            DType::I32 => 0,
            DType::I64 => 1,
            other => {
                return Err(Error::dtype(format!(
                    "randint: dtype {other} is not i32 or i64"
                )));
            }
        };
        let n64 = n as u64;
        self.launch_elems(
            stream,
            RANDINT.src,
            RANDINT.lone(),
            n,
            &mut kargs![dst.0, is64, n64, low, high, seed],
        )
    }

    fn unary_backward(
        &self,
        stream: RawStream,
        op: UnaryOp,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        n: usize,
    ) -> Result<()> {
        if dtype == DType::F64 {
            let kernel = UNARY_BWD_D.dtype(op.name(), dtype)?;
            let (uop, p0, p1) = kernels::unary_op(op);
            let (code, n64) = (uop.code, n as u64);
            return self.launch_elems(
                stream,
                UNARY_BWD_D.src,
                &kernel,
                n,
                &mut kargs![x.0, dy.0, dx.0, n64, code, p0, p1],
            );
        }
        let name = PW_UNARY_BWD.dtype(op.name(), dtype)?;
        let (uop, p0, p1) = kernels::unary_op(op);
        let (code, n64) = (uop.code, n as u64);
        if aligned16(&[x, dy, dx]) {
            // 16-byte vectors of x and dy per thread, a kernel per op and dtype.
            let kernel = PW_UNARY_BWD_V.dtype_op(op.name(), dtype, uop)?;
            return self.launch_vec(
                stream,
                PW_UNARY_BWD_V.src,
                &kernel,
                n,
                16 / dtype.size(),
                &mut kargs![x.0, dy.0, dx.0, n64, p0, p1],
            );
        }
        self.launch_elems(
            stream,
            PW_UNARY_BWD.src,
            &name,
            n,
            &mut kargs![x.0, dy.0, dx.0, n64, code, p0, p1],
        )
    }

    fn binary_backward(
        &self,
        stream: RawStream,
        op: BinaryOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        dy: DevPtr,
        ga: DevPtr,
        gb: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        let name = PW_BINARY_BWD.dtype(op.name(), dtype)?;
        let l = PwLayout::<3>::new(op.name(), layout)?;
        let n = layout.numel();
        let (code, n64) = (kernels::binary_op(op).code, n as u64);
        self.launch_elems(
            stream,
            PW_BINARY_BWD.src,
            &name,
            n,
            &mut kargs![a.0, b.0, dy.0, ga.0, gb.0, n64, code, l],
        )
    }

    fn compare(
        &self,
        stream: RawStream,
        op: CompareOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        let n = layout.numel();
        let code = kernels::compare_op(op).code;
        let n64 = n as u64;
        if dtype == DType::F32 && layout.is_flat() && aligned16(&[a, b]) && out.0.is_multiple_of(4)
        {
            return self.launch_pw_flat(
                stream,
                &PW_COMPARE_F32_FLAT,
                n,
                &mut kargs![a.0, b.0, out.0, n64, code],
            );
        }
        if is_half(dtype) && layout.is_flat() && aligned16(&[a, b]) && out.0.is_multiple_of(8) {
            let kernel = PW_COMPARE_H8.dtype(op.name(), dtype)?;
            return self.launch_vec(
                stream,
                PW_COMPARE_H8.src,
                &kernel,
                n,
                8,
                &mut kargs![a.0, b.0, out.0, n64, code],
            );
        }
        let name = PW_COMPARE.dtype(op.name(), dtype)?;
        let l = PwLayout::<2>::new(op.name(), layout)?;
        self.launch_elems(
            stream,
            PW_COMPARE.src,
            &name,
            n,
            &mut kargs![a.0, b.0, out.0, n64, code, l],
        )
    }

    fn where_select(
        &self,
        stream: RawStream,
        dtype: DType,
        cond: DevPtr,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        let n = layout.numel();
        let n64 = n as u64;
        if dtype.size() == 4
            && layout.is_flat()
            && aligned16(&[a, b, out])
            && cond.0.is_multiple_of(4)
        {
            return self.launch_pw_flat(
                stream,
                &PW_WHERE_B4_FLAT,
                n,
                &mut kargs![cond.0, a.0, b.0, out.0, n64],
            );
        }
        if dtype.size() == 2
            && layout.is_flat()
            && aligned16(&[a, b, out])
            && cond.0.is_multiple_of(8)
        {
            return self.launch_vec(
                stream,
                PW_WHERE_B2_FLAT.src,
                PW_WHERE_B2_FLAT.lone(),
                n,
                8,
                &mut kargs![cond.0, a.0, b.0, out.0, n64],
            );
        }
        let l = PwLayout::<3>::new("where", layout)?;
        self.launch_elems(
            stream,
            PW_WHERE.src,
            &PW_WHERE.size(dtype.size()),
            n,
            &mut kargs![cond.0, a.0, b.0, out.0, n64, l],
        )
    }

    fn where_compare(
        &self,
        stream: RawStream,
        op: CompareOp,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        x: DevPtr,
        y: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        let n = layout.numel();
        let n64 = n as u64;
        let code = kernels::compare_op(op).code;
        if dtype == DType::F32 && layout.is_flat() && aligned16(&[a, b, x, y, out]) {
            // torch.where(a > b, a, b) and the like: only a and b need loading.
            let same: i32 = (x == a && y == b).into();
            return self.launch_pw_flat(
                stream,
                &PW_WHERE_CMP_F32_FLAT,
                n,
                &mut kargs![a.0, b.0, x.0, y.0, out.0, n64, code, same],
            );
        }
        if is_half(dtype) && layout.is_flat() && aligned16(&[a, b, x, y, out]) {
            let same: i32 = (x == a && y == b).into();
            let kernel = PW_WHERE_CMP_H8.dtype("where_compare", dtype)?;
            return self.launch_vec(
                stream,
                PW_WHERE_CMP_H8.src,
                &kernel,
                n,
                8,
                &mut kargs![a.0, b.0, x.0, y.0, out.0, n64, code, same],
            );
        }
        let name = PW_WHERE_CMP.dtype("where_compare", dtype)?;
        let l = PwLayout::<4>::new("where_compare", layout)?;
        self.launch_elems(
            stream,
            PW_WHERE_CMP.src,
            &name,
            n,
            &mut kargs![a.0, b.0, x.0, y.0, out.0, n64, code, l],
        )
    }

    fn add_relu(
        &self,
        stream: RawStream,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        let name = PW_ADD_RELU.dtype("add_relu", dtype)?;
        let n = layout.numel();
        let n64 = n as u64;
        if dtype == DType::F32 && layout.is_flat() && aligned16(&[a, b, out]) {
            return self.launch_elems(
                stream,
                PW_ADD_RELU_F32_FLAT.src,
                PW_ADD_RELU_F32_FLAT.lone(),
                n.div_ceil(4),
                &mut kargs![a.0, b.0, out.0, n64],
            );
        }
        let l = PwLayout::<2>::new("add_relu", layout)?;
        self.launch_elems(
            stream,
            PW_ADD_RELU.src,
            &name,
            n,
            &mut kargs![a.0, b.0, out.0, n64, l],
        )
    }

    fn mul_add(
        &self,
        stream: RawStream,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        c: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        let name = PW_MUL_ADD.dtype("mul_add", dtype)?;
        let n = layout.numel();
        let n64 = n as u64;
        let l = PwLayout::<3>::new("mul_add", layout)?;
        self.launch_elems(
            stream,
            PW_MUL_ADD.src,
            &name,
            n,
            &mut kargs![a.0, b.0, c.0, out.0, n64, l],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_structs_match_the_kernels() {
        // 8 + 3 * 16 * 8 bytes, no padding: the kernels read them by value.
        assert_eq!(std::mem::size_of::<RbLayout>(), 392);
        assert_eq!(std::mem::size_of::<PwLayout<2>>(), 392);
        assert_eq!(std::mem::size_of::<PwLayout<3>>(), 520);
        assert_eq!(std::mem::size_of::<PwLayout<4>>(), 648);
        let (_, l) = BroadcastLayout::new(&[&[3, 1, 5], &[4, 1]]).unwrap();
        let p = PwLayout::<2>::new("t", &l).unwrap();
        assert_eq!(p.nd, 3);
        assert_eq!(&p.shape[..3], &[3, 4, 5]);
        assert_eq!(&p.strides[0][..3], &[5, 0, 1]);
        assert_eq!(&p.strides[1][..3], &[0, 1, 0]);
        assert!(PwLayout::<3>::new("t", &l).is_err());
    }
}
