//! The DNN library's fused attention in front of the library's own attention kernels:
//! cuDNN's flash-attention engine (an operation graph of the backend API, see
//! `vendor::cudnn_graph`) on NVIDIA. Taken for f16/bf16 without a mask, head dims that
//! are multiples of 8 up to 128, keys and values of one group size, no causal limit or the
//! top-left one (bottom-right where it is the same: `sq == sk`), and `sq >= 16` (decoding
//! runs the split-KV kernel). Anything else, a library without fused attention (MIOpen here,
//! for now), a path other than `Auto` forced (`RB_ATTENTION_PATH=portable|gemm`,
//! `set_attention_path`), or a graph the library refuses (remembered per problem) answers
//! None and the caller runs its own kernels.

use super::conv::dnn_state;
use super::vendor::{AttnBufs, AttnBwdBufs, AttnProblem, Dnn};
use super::{GpuDevice, Scratch, timing};
use crate::Result;
use crate::base::dtype::DType;
use crate::device::{DevPtr, RawStream};
use crate::ops::nn::{AttentionDesc, Causal};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::LazyLock;

/// Problems the library refused on a device, forward or backward (not asked again).
static REFUSED: LazyLock<Mutex<HashSet<(usize, AttnProblem, bool)>>> =
    LazyLock::new(Default::default);

impl GpuDevice {
    /// The library's fused problem for `d`, or None when the case is not one it takes.
    fn vendor_attention_problem(dtype: DType, d: &AttentionDesc) -> Option<AttnProblem> {
        if !matches!(dtype, DType::F16 | DType::BF16)
            || d.mask.is_some()
            || d.dv != d.d
            || d.v_group != d.k_group
            || !d.d.is_multiple_of(8)
            || d.d > 128
            || d.sq < 16
            || d.sk == 0
            || d.d == 0
            || d.batch == 0
            || d.k_group == 0
            || !d.batch.is_multiple_of(d.k_group)
        {
            return None;
        }
        let causal = match d.causal {
            Causal::None => false,
            Causal::TopLeft => true,
            Causal::BottomRight if d.sq == d.sk => true,
            Causal::BottomRight => return None,
        };
        if crate::device::attention::attention_path()
            != crate::device::attention::AttentionPath::Auto
        {
            return None;
        }
        Some(AttnProblem {
            dtype,
            b: d.batch / d.k_group,
            h: d.k_group,
            sq: d.sq,
            sk: d.sk,
            d: d.d,
            causal,
        })
    }

    /// Runs `f` with the library's problem for `d`, the library, its handle (its lock held
    /// during `f`) and the workspace bytes the call needs (the forward's, or for `backward`
    /// the larger of the forward's and the backward's): Some with `f`'s result, or None when
    /// the case is not the library's, or the library refused it (remembered per problem).
    fn with_vendor(
        &self,
        dtype: DType,
        d: &AttentionDesc,
        backward: bool,
        f: impl FnOnce(AttnProblem, &dyn Dnn, u64, usize) -> Result<()>,
    ) -> Option<Result<()>> {
        let p = Self::vendor_attention_problem(dtype, d)?;
        let key = (self.ordinal, p, backward);
        if REFUSED.lock().contains(&key) {
            return None;
        }
        let dnn = self.vendor().dnn().ok()?;
        let st = dnn_state(self, dnn).ok()?;
        let st = st.lock();
        if self.bind().is_err() {
            return None;
        }
        let need = dnn.attention_workspace(st.handle, &p).and_then(|fwd| {
            Ok(if backward {
                fwd.max(dnn.attention_backward_workspace(st.handle, &p)?)
            } else {
                fwd
            })
        });
        match need {
            Ok(need) => Some(f(p, dnn, st.handle, need)),
            Err(e) => {
                if std::env::var_os("RB_DNN_LOG").is_some() {
                    let what = if backward { "backward " } else { "" };
                    eprintln!(
                        "rb dnn: fused attention {what}{p:?} refused, own kernels instead: {e}"
                    );
                }
                REFUSED.lock().insert(key);
                None
            }
        }
    }

    /// Runs `d` through the DNN library's fused attention when it takes the case: Some with
    /// the call's result, or None (the caller runs its own kernels).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn vendor_attention(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        out: DevPtr,
    ) -> Option<Result<()>> {
        self.with_vendor(dtype, d, false, |p, dnn, handle, need| {
            let stats = Scratch::new(self, p.b * p.h * p.sq * 4, stream)?;
            let ws = Scratch::unless_empty(self, need, stream)?;
            let t = timing::Span::begin(self, "scaled_dot_product_attention", stream);
            dnn.attention(
                handle,
                stream,
                &p,
                d.scale as f32,
                AttnBufs {
                    q,
                    k,
                    v,
                    o: out,
                    stats: stats.ptr,
                },
                ws.ptr,
            )
            .map_err(|e| e.context("scaled_dot_product_attention"))?;
            t.end(self, stream);
            Ok(())
        })
    }

    /// The backward of [`GpuDevice::vendor_attention`]'s cases: the library's forward graph
    /// recomputes the output and the row statistics (the backward API is given q, k, v and
    /// dout only), then its backward graph gives dq, dk, dv. Some with the result, or None.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn vendor_attention_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        dout: DevPtr,
        dq: DevPtr,
        dk: DevPtr,
        dv: DevPtr,
    ) -> Option<Result<()>> {
        self.with_vendor(dtype, d, true, |p, dnn, handle, need| {
            let rows = p.b * p.h * p.sq;
            let o = Scratch::new(self, rows * p.d * dtype.size(), stream)?;
            let stats = Scratch::new(self, rows * 4, stream)?;
            let dsum = Scratch::new(self, rows * 4, stream)?;
            let dq_acc = Scratch::new(self, rows * p.d * 4, stream)?;
            let ws = Scratch::unless_empty(self, need, stream)?;
            let t = timing::Span::begin(self, "scaled_dot_product_attention_backward", stream);
            let scale = d.scale as f32;
            let fwd = AttnBufs {
                q,
                k,
                v,
                o: o.ptr,
                stats: stats.ptr,
            };
            dnn.attention(handle, stream, &p, scale, fwd, ws.ptr)?;
            self.vendor()
                .memset_d8(dq_acc.ptr, 0, rows * p.d * 4, stream)?;
            let bufs = AttnBwdBufs {
                q,
                k,
                v,
                o: o.ptr,
                dout,
                stats: stats.ptr,
                dq,
                dk,
                dv,
                dsum: dsum.ptr,
                dq_acc: dq_acc.ptr,
            };
            dnn.attention_backward(handle, stream, &p, scale, bufs, ws.ptr)
                .map_err(|e| e.context("scaled_dot_product_attention_backward"))?;
            t.end(self, stream);
            Ok(())
        })
    }
}
