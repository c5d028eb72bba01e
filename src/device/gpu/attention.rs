//! scaled_dot_product_attention on GPUs, forward and backward: strided-batched f32 GEMMs
//! (the vendor BLAS) for the scores and products, a row-softmax kernel with the mask and the
//! causal limit (kernels/attention.hip); f16/bf16 operands are cast to f32 scratch first.
//! Grouped-query attention needs no copies: the query heads of one key (value) group are
//! consecutive, so they are the rows of one GEMM batch entry, and the products that reduce
//! over queries (dK, dV) sum over the group. Semantics are those of `crate::ops::nn`.

use super::kernels::{ATT_DSCORES, ATT_SOFTMAX, float_suffix};
use super::{GpuDevice, Scratch, pad};
use crate::Result;
use crate::base::dtype::DType;
use crate::device::{
    AttentionOps, BlasOps, DevPtr, ElementwiseOps, GemmDesc, RawStream, Transpose,
};
use crate::ops::nn::AttentionDesc;

impl GpuDevice {
    /// Row-major f32 `C = alpha op(A) op(B)` (m×n, inner k), strided-batched, through the
    /// column-major BLAS (C^T = op(B)^T op(A)^T).
    #[allow(clippy::too_many_arguments)]
    fn rm_gemm(
        &self,
        stream: RawStream,
        (ta, tb): (bool, bool),
        (m, n, k): (usize, usize, usize),
        alpha: f32,
        (a, lda, sa): (DevPtr, usize, usize),
        (b, ldb, sb): (DevPtr, usize, usize),
        (c, ldc, sc): (DevPtr, usize, usize),
        batch: usize,
    ) -> Result<()> {
        let t = |x: bool| if x { Transpose::Yes } else { Transpose::No };
        self.gemm(
            stream,
            &GemmDesc {
                dtype: DType::F32,
                trans_a: t(tb),
                trans_b: t(ta),
                m: n,
                n: m,
                k,
                alpha,
                a: b,
                lda: ldb.max(1),
                b: a,
                ldb: lda.max(1),
                beta: 0.0,
                c,
                ldc: ldc.max(1),
                batch,
                stride_a: sb,
                stride_b: sa,
                stride_c: sc,
            },
        )
    }

    /// S = scale Q K^T, then P = softmax(S) in place (mask, causal limit), all f32. The
    /// query heads of a key group are consecutive rows of one GEMM batch entry.
    fn attention_probs(
        &self,
        stream: RawStream,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        mask: DevPtr,
        s: DevPtr,
    ) -> Result<()> {
        let (b, sq, sk, dd, g) = (d.batch, d.sq, d.sk, d.d, d.k_group);
        self.rm_gemm(
            stream,
            (false, true),
            (g * sq, sk, dd),
            d.scale as f32,
            (q, dd, g * sq * dd),
            (k, dd, sk * dd),
            (s, sk, g * sq * sk),
            b / g,
        )?;
        let rows = b * sq;
        let (rows64, sq64, sk64, causal) = (rows as u64, sq as u64, sk as u64, d.causal as i32);
        let (mkind, minner, mso, msi, msq, msk) = match &d.mask {
            None => (0i32, 1u64, 0u64, 0u64, 0u64, 0u64),
            Some(m) => (
                match m.dtype {
                    DType::Bool => 1,
                    DType::F32 => 2,
                    DType::F16 => 3,
                    _ => 4,
                },
                m.inner as u64,
                m.stride_outer as u64,
                m.stride_inner as u64,
                m.stride_q as u64,
                m.stride_k as u64,
            ),
        };
        self.launch_1d(
            stream,
            ATT_SOFTMAX.src,
            ATT_SOFTMAX.lone(),
            rows.min(1 << 16),
            128,
            &mut kargs![
                s.0, rows64, sq64, sk64, causal, mask.0, mkind, minner, mso, msi, msq, msk
            ],
        )
    }

    /// One scratch allocation split into f32 buffers of the given element counts.
    fn f32_scratch(
        &self,
        stream: RawStream,
        sizes: &[usize],
    ) -> Result<(Scratch<'_>, Vec<DevPtr>)> {
        let total: usize = sizes.iter().map(|n| pad(n * 4)).sum();
        let buf = Scratch::new(self, total, stream)?;
        let mut at = 0;
        let parts = sizes
            .iter()
            .map(|n| {
                let p = buf.ptr.offset(at);
                at += pad(n * 4);
                p
            })
            .collect();
        Ok((buf, parts))
    }
}

impl AttentionOps for GpuDevice {
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        mask: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        float_suffix("scaled_dot_product_attention", dtype)?;
        let (b, sq, sk, dd, dv, gv) = (d.batch, d.sq, d.sk, d.d, d.dv, d.v_group);
        let no = b * sq * dv;
        if no == 0 {
            return Ok(());
        }
        if let Some(r) = self.vendor_attention(stream, dtype, d, q, k, v, out) {
            return r;
        }
        let (nq, nk, nv) = (b * sq * dd, b / d.k_group * sk * dd, b / gv * sk * dv);
        let f32in = dtype == DType::F32;
        let sizes = if f32in {
            vec![b * sq * sk]
        } else {
            vec![b * sq * sk, nq, nk, nv, no]
        };
        let (_buf, parts) = self.f32_scratch(stream, &sizes)?;
        let s = parts[0];
        let (q32, k32, v32, o32) = if f32in {
            (q, k, v, out)
        } else {
            self.cast(stream, dtype, q, DType::F32, parts[1], nq)?;
            self.cast(stream, dtype, k, DType::F32, parts[2], nk)?;
            self.cast(stream, dtype, v, DType::F32, parts[3], nv)?;
            (parts[1], parts[2], parts[3], parts[4])
        };
        self.attention_probs(stream, d, q32, k32, mask, s)?;
        // O = P V, the query heads of a value group as the rows of one batch entry.
        self.rm_gemm(
            stream,
            (false, false),
            (gv * sq, dv, sk),
            1.0,
            (s, sk, gv * sq * sk),
            (v32, dv, sk * dv),
            (o32, dv, gv * sq * dv),
            b / gv,
        )?;
        if !f32in {
            self.cast(stream, DType::F32, o32, dtype, out, no)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn attention_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        mask: DevPtr,
        dout: DevPtr,
        dq: DevPtr,
        dk: DevPtr,
        dv: DevPtr,
    ) -> Result<()> {
        float_suffix("scaled_dot_product_attention_backward", dtype)?;
        if let Some(r) = self.vendor_attention_backward(stream, dtype, d, q, k, v, dout, dq, dk, dv)
        {
            return r;
        }
        let (b, sq, sk, dd, ddv) = (d.batch, d.sq, d.sk, d.d, d.dv);
        let (gk, gv) = (d.k_group, d.v_group);
        let (nq, nk, nv, no, ns) = (
            b * sq * dd,
            b / gk * sk * dd,
            b / gv * sk * ddv,
            b * sq * ddv,
            b * sq * sk,
        );
        let f32in = dtype == DType::F32;
        let mut sizes = vec![ns, ns];
        if !f32in {
            // q, k, v, dout, dq, dk, dv in f32
            sizes.extend([nq, nk, nv, no, nq, nk, nv]);
        }
        let (_buf, parts) = self.f32_scratch(stream, &sizes)?;
        let (p, dp) = (parts[0], parts[1]);
        let (q32, k32, v32, do32, dq32, dk32, dv32) = if f32in {
            (q, k, v, dout, dq, dk, dv)
        } else {
            self.cast(stream, dtype, q, DType::F32, parts[2], nq)?;
            self.cast(stream, dtype, k, DType::F32, parts[3], nk)?;
            self.cast(stream, dtype, v, DType::F32, parts[4], nv)?;
            self.cast(stream, dtype, dout, DType::F32, parts[5], no)?;
            (
                parts[2], parts[3], parts[4], parts[5], parts[6], parts[7], parts[8],
            )
        };
        self.attention_probs(stream, d, q32, k32, mask, p)?;
        // dP = dO V^T (value groups)
        self.rm_gemm(
            stream,
            (false, true),
            (gv * sq, sk, ddv),
            1.0,
            (do32, ddv, gv * sq * ddv),
            (v32, ddv, sk * ddv),
            (dp, sk, gv * sq * sk),
            b / gv,
        )?;
        // dV = P^T dO: the inner dimension runs over the group's query heads, so the sum
        // over the group comes with the product.
        self.rm_gemm(
            stream,
            (true, false),
            (sk, ddv, gv * sq),
            1.0,
            (p, sk, gv * sq * sk),
            (do32, ddv, gv * sq * ddv),
            (dv32, ddv, sk * ddv),
            b / gv,
        )?;
        // dS = P (dP - rowsum(P dP)) scale, in place in dp
        let rows = b * sq;
        let (rows64, sk64, scale) = (rows as u64, sk as u64, d.scale as f32);
        self.launch_1d(
            stream,
            ATT_DSCORES.src,
            ATT_DSCORES.lone(),
            rows.min(1 << 16),
            128,
            &mut kargs![p.0, dp.0, rows64, sk64, scale],
        )?;
        // dQ = dS K (key groups)
        self.rm_gemm(
            stream,
            (false, false),
            (gk * sq, dd, sk),
            1.0,
            (dp, sk, gk * sq * sk),
            (k32, dd, sk * dd),
            (dq32, dd, gk * sq * dd),
            b / gk,
        )?;
        // dK = dS^T Q (summed over the group's query heads)
        self.rm_gemm(
            stream,
            (true, false),
            (sk, dd, gk * sq),
            1.0,
            (dp, sk, gk * sq * sk),
            (q32, dd, gk * sq * dd),
            (dk32, dd, sk * dd),
            b / gk,
        )?;
        if !f32in {
            self.cast(stream, DType::F32, dq32, dtype, dq, nq)?;
            self.cast(stream, DType::F32, dk32, dtype, dk, nk)?;
            self.cast(stream, DType::F32, dv32, dtype, dv, nv)?;
        }
        Ok(())
    }
}
