//! cuDNN's backend (graph) API of `cudnn_graph.h` (cuDNN 9): operation graphs, engine
//! heuristics and execution plans, for the work the legacy descriptor API has no fast engine
//! for. Two graphs are built here:
//!
//! - one convolution (forward, backward data, backward filter) in f16/bf16 with f32
//!   accumulation: the tensor-core engines PyTorch reaches through the same API (the legacy
//!   API's choice for an f16 NCHW 3x3 convolution is about 3x slower on the H100);
//! - scaled-dot-product attention, `O = softmax(scale Q K^T [causal]) V`, written as
//!   matmul → scale → [row ≥ col select] → max → sub → exp → sum → (log + max: the row
//!   statistics) → div → matmul, the pattern cuDNN recognises and runs as one fused
//!   flash-attention kernel (no S×S matrix in memory).
//!
//! A plan is made once per (handle, problem) by the caller ([`super::cuda::CudnnDnn`]) and
//! kept; each call binds its device pointers in a variant pack and executes on the handle's
//! stream. Every descriptor is owned by a [`Desc`], destroyed when its plan is dropped.
//! The scripts/cudnn_graph_probe.py probe builds the same graphs through ctypes beside
//! PyTorch (the way these were checked on the GPU before this file was written).

use super::cuda::Cudnn;
use super::vendor_error;
use super::{AttnProblem, ConvDir, ConvEpilogue, ConvProblem};
use crate::base::dtype::DType;
use crate::{Error, Result};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Arc;

type Handle = *mut c_void;

// cudnnBackendAttributeType_t
const T_HANDLE: c_int = 0;
const T_DATA_TYPE: c_int = 1;
const T_BOOLEAN: c_int = 2;
const T_INT64: c_int = 3;
const T_FLOAT: c_int = 4;
const T_VOID_PTR: c_int = 6;
const T_CONV_MODE: c_int = 7;
const T_HEUR_MODE: c_int = 8;
const T_NAN_PROPAGATION: c_int = 10;
const T_POINTWISE_MODE: c_int = 14;
const T_DESCRIPTOR: c_int = 15;
const T_REDUCTION_OP: c_int = 18;

// cudnnBackendDescriptorType_t
const D_POINTWISE: c_int = 0;
const D_CONVOLUTION: c_int = 1;
const D_ENGINECFG: c_int = 3;
const D_ENGINEHEUR: c_int = 4;
const D_PLAN: c_int = 5;
const D_OP_CONV_FWD: c_int = 10;
const D_OP_CONV_BWD_FILTER: c_int = 11;
const D_OP_CONV_BWD_DATA: c_int = 12;
const D_OP_POINTWISE: c_int = 13;
const D_OPGRAPH: c_int = 15;
const D_VARIANT_PACK: c_int = 16;
const D_TENSOR: c_int = 17;
const D_MATMUL: c_int = 18;
const D_OP_MATMUL: c_int = 19;
const D_REDUCTION: c_int = 21;
const D_OP_REDUCTION: c_int = 22;
const D_OP_RESHAPE: c_int = 31;

// cudnnBackendAttributeName_t
const PW_MODE: c_int = 0;
const PW_MATH_PREC: c_int = 1;
const PW_NAN_PROP: c_int = 2;
/// cudnnNanPropagation_t's CUDNN_PROPAGATE_NAN.
const PROPAGATE_NAN: c_int = 1;
const PW_AXIS: c_int = 9;
const CONV_COMP_TYPE: c_int = 100;
const CONV_MODE: c_int = 101;
const CONV_DILATIONS: c_int = 102;
const CONV_STRIDES: c_int = 103;
const CONV_POST_PAD: c_int = 104;
const CONV_PRE_PAD: c_int = 105;
const CONV_SPATIAL_DIMS: c_int = 106;
const HEUR_MODE: c_int = 200;
const HEUR_OPGRAPH: c_int = 201;
const HEUR_RESULTS: c_int = 202;
const PLAN_HANDLE: c_int = 400;
const PLAN_ENGINE_CFG: c_int = 401;
const PLAN_WORKSPACE: c_int = 402;
/// Forward, backward-data and backward-filter operations: alpha, beta, conv, and the three
/// tensors (forward: w x y; backward data: w dx dy; backward filter: dw x dy), consecutive.
const OP_CONV_BASE: [c_int; 3] = [700, 706, 712];
const OPW_DESC: c_int = 750;
const OPW_X: c_int = 751;
const OPW_B: c_int = 752;
const OPW_Y: c_int = 753;
const OPW_T: c_int = 758;
const GRAPH_HANDLE: c_int = 800;
const GRAPH_OPS: c_int = 801;
const T_ALIGNMENT: c_int = 900;
const T_DTYPE: c_int = 901;
const T_DIMS: c_int = 902;
const T_STRIDES: c_int = 903;
const T_UID: c_int = 906;
const T_IS_VIRTUAL: c_int = 907;
const T_IS_BY_VALUE: c_int = 908;
const VP_UIDS: c_int = 1000;
const VP_POINTERS: c_int = 1001;
const VP_WORKSPACE: c_int = 1003;
const MM_COMP_TYPE: c_int = 1500;
const OMM_A: c_int = 1520;
const OMM_B: c_int = 1521;
const OMM_C: c_int = 1522;
const OMM_DESC: c_int = 1523;
const RED_OPERATOR: c_int = 1600;
const RED_COMP_TYPE: c_int = 1601;
const ORED_X: c_int = 1610;
const ORED_Y: c_int = 1611;
const ORED_DESC: c_int = 1612;
const RESHAPE_X: c_int = 2200;
const RESHAPE_Y: c_int = 2201;

// cudnnDataType_t, cudnnPointwiseMode_t, cudnnReduceTensorOp_t, heuristics modes
const DT_FLOAT: c_int = 0;
const DT_HALF: c_int = 2;
const DT_INT32: c_int = 4;
const DT_BF16: c_int = 9;
const DT_BOOL: c_int = 11;
const PW_ADD: c_int = 0;
const PW_RELU_FWD: c_int = 100;
const PW_MUL: c_int = 1;
const PW_DIV: c_int = 6;
const PW_SUB: c_int = 9;
const PW_EXP: c_int = 13;
const PW_LOG: c_int = 15;
const PW_CMP_GE: c_int = 303;
const PW_IDENTITY: c_int = 21;
const PW_GEN_INDEX: c_int = 501;
const PW_BINARY_SELECT: c_int = 601;
const REDUCE_ADD: c_int = 0;
const REDUCE_MAX: c_int = 3;
const CROSS_CORRELATION: c_int = 1;
const HEUR_MODE_A: c_int = 3;

/// The backend entry points of a loaded cuDNN (all optional in the table: a cuDNN without
/// them keeps the legacy paths).
#[derive(Clone, Copy)]
pub struct Api {
    create: unsafe extern "C" fn(c_int, *mut Handle) -> c_int,
    destroy: unsafe extern "C" fn(Handle) -> c_int,
    finalize: unsafe extern "C" fn(Handle) -> c_int,
    set: unsafe extern "C" fn(Handle, c_int, c_int, i64, *const c_void) -> c_int,
    get: unsafe extern "C" fn(Handle, c_int, c_int, i64, *mut i64, *mut c_void) -> c_int,
    execute: unsafe extern "C" fn(Handle, Handle, Handle) -> c_int,
    error_string: Option<unsafe extern "C" fn(c_int) -> *const c_char>,
    last_error: Option<unsafe extern "C" fn(*mut c_char, usize)>,
}

// SAFETY: plain function pointers into a library that stays loaded.
unsafe impl Send for Api {}
unsafe impl Sync for Api {}

/// One backend descriptor, destroyed on drop.
pub struct Desc {
    p: Handle,
    destroy: unsafe extern "C" fn(Handle) -> c_int,
}

// SAFETY: a finalized descriptor is an immutable host object; cuDNN allows its use from any
// thread (executions on one handle are serialized by the caller).
unsafe impl Send for Desc {}
unsafe impl Sync for Desc {}

impl Drop for Desc {
    fn drop(&mut self) {
        // SAFETY: created by cudnnBackendCreateDescriptor, destroyed once.
        unsafe {
            (self.destroy)(self.p);
        }
    }
}

/// A finalized execution plan with everything it refers to.
pub struct Plan {
    plan: Desc,
    /// Scratch bytes an execution needs.
    pub workspace: usize,
    /// The engine configuration and the graph's descriptors, alive as long as the plan.
    _keep: (Desc, Arc<Vec<Desc>>),
    /// The last variant packs made for device pointers alone (no by-value scalars), by
    /// their pointers and workspace: a call on the same buffers (a benchmark loop, a layer
    /// run again) skips making and finalizing one, a few microseconds of host time.
    packs: parking_lot::Mutex<Vec<(Vec<usize>, Desc)>>,
}

/// Variant packs a plan keeps.
const PACKS_KEPT: usize = 8;

/// A tensor of a graph being built: its descriptor and unique id.
#[derive(Clone, Copy)]
struct T {
    h: Handle,
    uid: i64,
}

impl Api {
    /// The backend API of `l`, or None when this cuDNN lacks it.
    pub fn of(l: &Cudnn) -> Option<Api> {
        Some(Api {
            create: l.cudnnBackendCreateDescriptor?,
            destroy: l.cudnnBackendDestroyDescriptor?,
            finalize: l.cudnnBackendFinalize?,
            set: l.cudnnBackendSetAttribute?,
            get: l.cudnnBackendGetAttribute?,
            execute: l.cudnnBackendExecute?,
            error_string: l.cudnnGetErrorString,
            last_error: l.cudnnGetLastErrorString,
        })
    }

    fn check(&self, what: &str, r: c_int) -> Result<()> {
        if r == 0 {
            return Ok(());
        }
        let mut name = format!("CUDNN_STATUS_{r}");
        if let Some(f) = self.error_string {
            // SAFETY: returns a static string or null.
            let p = unsafe { f(r) };
            if !p.is_null() {
                name = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
            }
        }
        if let Some(f) = self.last_error {
            let mut buf = [0 as c_char; 512];
            // SAFETY: writes at most `buf.len()` bytes, NUL-terminated.
            unsafe { f(buf.as_mut_ptr(), buf.len()) };
            let s = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy();
            if !s.is_empty() {
                name = format!("{name}: {s}");
            }
        }
        Err(vendor_error(what, &name, r as i64, r == 4003 || r == 4004))
    }

    fn desc(&self, kind: c_int) -> Result<Desc> {
        let mut p: Handle = std::ptr::null_mut();
        // SAFETY: writes one handle.
        self.check("cudnnBackendCreateDescriptor", unsafe {
            (self.create)(kind, &mut p)
        })?;
        Ok(Desc {
            p,
            destroy: self.destroy,
        })
    }

    fn set_raw(&self, d: &Desc, attr: c_int, ty: c_int, n: usize, v: *const c_void) -> Result<()> {
        // SAFETY: `v` points at `n` elements of the attribute's type.
        self.check(&format!("cudnnBackendSetAttribute({attr})"), unsafe {
            (self.set)(d.p, attr, ty, n as i64, v)
        })
    }

    fn set_i64(&self, d: &Desc, attr: c_int, v: &[i64]) -> Result<()> {
        self.set_raw(d, attr, T_INT64, v.len(), v.as_ptr().cast())
    }

    /// A 32-bit enumeration value of attribute type `ty`.
    fn set_enum(&self, d: &Desc, attr: c_int, ty: c_int, v: c_int) -> Result<()> {
        self.set_raw(d, attr, ty, 1, (&v as *const c_int).cast())
    }

    fn set_bool(&self, d: &Desc, attr: c_int, v: bool) -> Result<()> {
        self.set_raw(d, attr, T_BOOLEAN, 1, (&v as *const bool).cast())
    }

    fn set_f32(&self, d: &Desc, attr: c_int, v: f32) -> Result<()> {
        self.set_raw(d, attr, T_FLOAT, 1, (&v as *const f32).cast())
    }

    fn set_descs(&self, d: &Desc, attr: c_int, v: &[Handle]) -> Result<()> {
        self.set_raw(d, attr, T_DESCRIPTOR, v.len(), v.as_ptr().cast())
    }

    fn set_ptrs(&self, d: &Desc, attr: c_int, ty: c_int, v: &[Handle]) -> Result<()> {
        self.set_raw(d, attr, ty, v.len(), v.as_ptr().cast())
    }

    fn fin(&self, d: &Desc) -> Result<()> {
        // SAFETY: a descriptor of this library.
        self.check("cudnnBackendFinalize", unsafe { (self.finalize)(d.p) })
    }

    /// Runs `plan` on cuDNN handle `hd` (and its stream) with the tensors `uids` at `ptrs` (device
    /// pointers, or host pointers for by-value scalars) and `ws` bytes of scratch.
    pub fn execute(
        &self,
        hd: usize,
        plan: &Plan,
        uids: &[i64],
        ptrs: &[Handle],
        ws: Handle,
    ) -> Result<()> {
        self.execute_with(hd, plan, uids, ptrs, ws, false)
    }

    /// [`Api::execute`] where every pointer is a device buffer (no by-value scalar, whose
    /// host address and value change per call): the variant pack is kept and reused for
    /// the same pointers.
    pub fn execute_device_only(
        &self,
        hd: usize,
        plan: &Plan,
        uids: &[i64],
        ptrs: &[Handle],
        ws: Handle,
    ) -> Result<()> {
        self.execute_with(hd, plan, uids, ptrs, ws, true)
    }

    fn execute_with(
        &self,
        hd: usize,
        plan: &Plan,
        uids: &[i64],
        ptrs: &[Handle],
        ws: Handle,
        keep: bool,
    ) -> Result<()> {
        let key: Vec<usize> = if keep {
            ptrs.iter().chain([&ws]).map(|p| *p as usize).collect()
        } else {
            Vec::new()
        };
        let mut packs = plan.packs.lock();
        let at = if keep {
            packs.iter().position(|(k, _)| *k == key)
        } else {
            None
        };
        let at = match at {
            Some(i) => i,
            None => {
                let vp = self.desc(D_VARIANT_PACK)?;
                self.set_i64(&vp, VP_UIDS, uids)?;
                self.set_ptrs(&vp, VP_POINTERS, T_VOID_PTR, ptrs)?;
                self.set_ptrs(&vp, VP_WORKSPACE, T_VOID_PTR, &[ws])?;
                self.fin(&vp)?;
                if !keep {
                    drop(packs);
                    // SAFETY: a finalized plan and variant pack; the pointers are the
                    // caller's buffers of the plan's tensor sizes.
                    return self.check("cudnnBackendExecute", unsafe {
                        (self.execute)(hd as Handle, plan.plan.p, vp.p)
                    });
                }
                if packs.len() >= PACKS_KEPT {
                    packs.remove(0);
                }
                packs.push((key, vp));
                packs.len() - 1
            }
        };
        // SAFETY: as above; a kept pack binds the same pointers this call passes.
        self.check("cudnnBackendExecute", unsafe {
            (self.execute)(hd as Handle, plan.plan.p, packs[at].1.p)
        })
    }
}

/// A graph under construction: its descriptors (kept), operations and the next tensor uid.
struct Builder<'a> {
    api: &'a Api,
    keep: Vec<Desc>,
    ops: Vec<Handle>,
    uid: i64,
}

impl<'a> Builder<'a> {
    fn new(api: &'a Api) -> Self {
        Builder {
            api,
            keep: Vec::new(),
            ops: Vec::new(),
            uid: 0,
        }
    }

    fn hold(&mut self, d: Desc) -> Handle {
        let p = d.p;
        self.keep.push(d);
        p
    }

    fn tensor(
        &mut self,
        dims: &[i64],
        strides: &[i64],
        dt: c_int,
        virt: bool,
        by_value: bool,
    ) -> Result<T> {
        let a = self.api;
        let d = a.desc(D_TENSOR)?;
        self.uid += 1;
        a.set_enum(&d, T_DTYPE, T_DATA_TYPE, dt)?;
        a.set_i64(&d, T_DIMS, dims)?;
        a.set_i64(&d, T_STRIDES, strides)?;
        a.set_i64(&d, T_UID, &[self.uid])?;
        a.set_i64(&d, T_ALIGNMENT, &[if by_value { 4 } else { 16 }])?;
        if virt {
            a.set_bool(&d, T_IS_VIRTUAL, true)?;
        }
        if by_value {
            a.set_bool(&d, T_IS_BY_VALUE, true)?;
        }
        a.fin(&d)?;
        let uid = self.uid;
        Ok(T {
            h: self.hold(d),
            uid,
        })
    }

    /// A real (caller-bound) tensor.
    fn real(&mut self, dims: &[i64], strides: &[i64], dt: c_int) -> Result<T> {
        self.tensor(dims, strides, dt, false, false)
    }

    /// An intermediate that never reaches memory.
    fn virt(&mut self, dims: &[i64], strides: &[i64], dt: c_int) -> Result<T> {
        self.tensor(dims, strides, dt, true, false)
    }

    /// A scalar bound by value (a host pointer in the variant pack).
    fn scalar(&mut self, rank: usize, dt: c_int) -> Result<T> {
        let ones = vec![1i64; rank];
        self.tensor(&ones, &ones, dt, false, true)
    }

    fn op(&mut self, d: Desc) -> Result<()> {
        self.api.fin(&d)?;
        let p = self.hold(d);
        self.ops.push(p);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn pointwise(
        &mut self,
        mode: c_int,
        x: T,
        b: Option<T>,
        t: Option<T>,
        y: T,
        axis: Option<i64>,
        comp: c_int,
    ) -> Result<()> {
        let a = self.api;
        let pw = a.desc(D_POINTWISE)?;
        a.set_enum(&pw, PW_MODE, T_POINTWISE_MODE, mode)?;
        a.set_enum(&pw, PW_MATH_PREC, T_DATA_TYPE, comp)?;
        if mode == PW_RELU_FWD {
            // PyTorch's relu: NaN stays NaN.
            a.set_enum(&pw, PW_NAN_PROP, T_NAN_PROPAGATION, PROPAGATE_NAN)?;
        }
        if let Some(ax) = axis {
            a.set_i64(&pw, PW_AXIS, &[ax])?;
        }
        a.fin(&pw)?;
        let pw = self.hold(pw);
        let op = a.desc(D_OP_POINTWISE)?;
        a.set_descs(&op, OPW_DESC, &[pw])?;
        a.set_descs(&op, OPW_X, &[x.h])?;
        if let Some(b) = b {
            a.set_descs(&op, OPW_B, &[b.h])?;
        }
        if let Some(t) = t {
            a.set_descs(&op, OPW_T, &[t.h])?;
        }
        a.set_descs(&op, OPW_Y, &[y.h])?;
        self.op(op)
    }

    fn reduction(&mut self, operator: c_int, x: T, y: T) -> Result<()> {
        let a = self.api;
        let r = a.desc(D_REDUCTION)?;
        a.set_enum(&r, RED_OPERATOR, T_REDUCTION_OP, operator)?;
        a.set_enum(&r, RED_COMP_TYPE, T_DATA_TYPE, DT_FLOAT)?;
        a.fin(&r)?;
        let r = self.hold(r);
        let op = a.desc(D_OP_REDUCTION)?;
        a.set_descs(&op, ORED_X, &[x.h])?;
        a.set_descs(&op, ORED_Y, &[y.h])?;
        a.set_descs(&op, ORED_DESC, &[r])?;
        self.op(op)
    }

    /// `y` views `x`'s data with other dims/strides (a transpose by strides).
    fn reshape(&mut self, x: T, y: T) -> Result<()> {
        let a = self.api;
        let op = a.desc(D_OP_RESHAPE)?;
        a.set_descs(&op, RESHAPE_X, &[x.h])?;
        a.set_descs(&op, RESHAPE_Y, &[y.h])?;
        self.op(op)
    }

    fn matmul(&mut self, x: T, w: T, y: T) -> Result<()> {
        let a = self.api;
        let m = a.desc(D_MATMUL)?;
        a.set_enum(&m, MM_COMP_TYPE, T_DATA_TYPE, DT_FLOAT)?;
        a.fin(&m)?;
        let m = self.hold(m);
        let op = a.desc(D_OP_MATMUL)?;
        a.set_descs(&op, OMM_A, &[x.h])?;
        a.set_descs(&op, OMM_B, &[w.h])?;
        a.set_descs(&op, OMM_C, &[y.h])?;
        a.set_descs(&op, OMM_DESC, &[m])?;
        self.op(op)
    }

    /// Scores `s` with the top-left causal limit (when `causal`): keys past the query's row
    /// take a by-value masked score (its uid appended to `scalars`).
    fn causal(&mut self, causal: bool, s: T, dims: &[i64; 4], scalars: &mut Vec<i64>) -> Result<T> {
        if !causal {
            return Ok(s);
        }
        let st = packed(dims);
        let row = self.virt(dims, &st, DT_INT32)?;
        let col = self.virt(dims, &st, DT_INT32)?;
        self.pointwise(PW_GEN_INDEX, s, None, None, row, Some(2), DT_INT32)?;
        self.pointwise(PW_GEN_INDEX, s, None, None, col, Some(3), DT_INT32)?;
        let keep = self.virt(dims, &st, DT_BOOL)?;
        self.pointwise(PW_CMP_GE, row, Some(col), None, keep, None, DT_BOOL)?;
        let masked = self.scalar(4, DT_FLOAT)?;
        scalars.push(masked.uid);
        let out = self.virt(dims, &st, DT_FLOAT)?;
        self.pointwise(
            PW_BINARY_SELECT,
            s,
            Some(masked),
            Some(keep),
            out,
            None,
            DT_FLOAT,
        )?;
        Ok(out)
    }

    /// The graph's engine configurations ranked by heuristics mode A, and a plan for each
    /// of the first `limit` that finalizes (an engine that cannot run this problem on this
    /// device fails there and is skipped). Errors only when none does.
    fn plans(self, hd: usize, limit: usize) -> Result<Vec<(usize, Plan)>> {
        let a = *self.api;
        let g = a.desc(D_OPGRAPH)?;
        a.set_ptrs(&g, GRAPH_HANDLE, T_HANDLE, &[hd as Handle])?;
        a.set_descs(&g, GRAPH_OPS, &self.ops)?;
        a.fin(&g)?;
        let mut keep = self.keep;
        let gp = g.p;
        keep.push(g);
        let keep = Arc::new(keep);
        let heur = a.desc(D_ENGINEHEUR)?;
        a.set_descs(&heur, HEUR_OPGRAPH, &[gp])?;
        a.set_enum(&heur, HEUR_MODE, T_HEUR_MODE, HEUR_MODE_A)?;
        a.fin(&heur)?;
        let mut count = 0i64;
        // SAFETY: a count query (no elements requested).
        a.check("cudnnBackendGetAttribute(heuristic results)", unsafe {
            (a.get)(
                heur.p,
                HEUR_RESULTS,
                T_DESCRIPTOR,
                0,
                &mut count,
                std::ptr::null_mut(),
            )
        })?;
        let n = (count.max(0) as usize).min(limit);
        let cfgs: Vec<Desc> = (0..n).map(|_| a.desc(D_ENGINECFG)).collect::<Result<_>>()?;
        let mut ptrs: Vec<Handle> = cfgs.iter().map(|c| c.p).collect();
        let mut got = 0i64;
        // SAFETY: `ptrs` holds `n` created engine-config descriptors to fill.
        a.check("cudnnBackendGetAttribute(heuristic results)", unsafe {
            (a.get)(
                heur.p,
                HEUR_RESULTS,
                T_DESCRIPTOR,
                n as i64,
                &mut got,
                ptrs.as_mut_ptr().cast(),
            )
        })?;
        let mut out = Vec::new();
        let mut last_err = None;
        for (rank, cfg) in cfgs.into_iter().enumerate().take(got.max(0) as usize) {
            let made = (|| -> Result<Plan> {
                let plan = a.desc(D_PLAN)?;
                a.set_ptrs(&plan, PLAN_HANDLE, T_HANDLE, &[hd as Handle])?;
                a.set_descs(&plan, PLAN_ENGINE_CFG, &[cfg.p])?;
                a.fin(&plan)?;
                let mut ws = 0i64;
                let mut k = 0i64;
                // SAFETY: one int64 read.
                a.check("cudnnBackendGetAttribute(workspace)", unsafe {
                    (a.get)(
                        plan.p,
                        PLAN_WORKSPACE,
                        T_INT64,
                        1,
                        &mut k,
                        (&mut ws as *mut i64).cast(),
                    )
                })?;
                Ok(Plan {
                    plan,
                    packs: Default::default(),
                    workspace: ws.max(0) as usize,
                    _keep: (
                        Desc {
                            p: std::ptr::null_mut(),
                            destroy: noop_destroy,
                        },
                        keep.clone(),
                    ),
                })
            })();
            match made {
                Ok(mut p) => {
                    p._keep.0 = cfg;
                    out.push((rank, p));
                }
                Err(e) => last_err = Some(e),
            }
        }
        if out.is_empty() {
            return Err(last_err.unwrap_or_else(|| {
                Error::unsupported(format!(
                    "cuDNN's heuristics offer no engine for this graph ({count} configurations)"
                ))
            }));
        }
        Ok(out)
    }
}

unsafe extern "C" fn noop_destroy(_: Handle) -> c_int {
    0
}

/// cuDNN's data type of a floating dtype.
fn data_type(d: DType) -> Result<c_int> {
    Ok(match d {
        DType::F32 => DT_FLOAT,
        DType::F16 => DT_HALF,
        DType::BF16 => DT_BF16,
        other => {
            return Err(Error::dtype(format!(
                "cuDNN graph: dtype {other} is not supported (f32, f16 or bf16)"
            )));
        }
    })
}

fn packed(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// The uids a convolution plan binds, in the order of [`super::ConvBufs`] (a, b, c).
pub const CONV_UIDS: [i64; 3] = [1, 2, 3];
/// The uid of a fused epilogue's bias ([`super::ConvBufs::bias`]).
pub const CONV_BIAS_UID: i64 = 4;

/// Plans for the convolution `p` (the first `limit` engines that apply, ranked by cuDNN's
/// heuristics), binding `a`, `b`, `c` of [`super::ConvBufs`] as uids 1, 2, 3.
pub fn conv_plans(
    api: &Api,
    hd: usize,
    p: &ConvProblem,
    limit: usize,
) -> Result<Vec<(usize, Plan)>> {
    let dt = data_type(p.dtype)?;
    let n = p.dims;
    let sp = p.spatial();
    let dims = |d: &[i32; 5]| -> Vec<i64> { d[..n].iter().map(|&v| v as i64).collect() };
    let (x, w, y) = (dims(&p.x), dims(&p.w), dims(&p.y));
    let mut b = Builder::new(api);
    // uids 1..3 in ConvBufs order: forward (x, w, y), backward data (dy, w, dx), backward
    // filter (x, dy, dw).
    let (ta, tb, tc) = match p.dir {
        ConvDir::Forward => (&x, &w, &y),
        ConvDir::BackwardData => (&y, &w, &x),
        ConvDir::BackwardWeight => (&x, &y, &w),
    };
    let strides = |d: &[i64]| -> Vec<i64> {
        let a: Vec<i32> = d.iter().map(|&v| v as i32).collect();
        p.strides(&a).into_iter().map(i64::from).collect()
    };
    let ta = b.real(ta, &strides(ta), dt)?;
    let tb = b.real(tb, &strides(tb), dt)?;
    let out = b.real(tc, &strides(tc), dt)?;
    debug_assert_eq!([ta.uid, tb.uid, out.uid], CONV_UIDS);
    let fused = p.epi != ConvEpilogue::None;
    if fused && p.dir != ConvDir::Forward {
        return Err(Error::internal(
            "cuDNN graph: an epilogue on a backward convolution",
        ));
    }
    // With an epilogue the convolution's result is virtual (f32), then + bias [1, C, 1..],
    // then (BiasRelu) relu, into the output: one rounding.
    let (tc, bias) = if fused {
        let mut bd = vec![1i64; n];
        bd[1] = tc[1];
        let bias = b.real(&bd, &strides(&bd), dt)?;
        debug_assert_eq!(bias.uid, CONV_BIAS_UID);
        (b.virt(tc, &strides(tc), DT_FLOAT)?, Some(bias))
    } else {
        (out, None)
    };
    let a = *api;
    let conv = a.desc(D_CONVOLUTION)?;
    let off = 3 - sp;
    let v = |s: &[i32; 3]| -> Vec<i64> { s[off..].iter().map(|&v| v as i64).collect() };
    a.set_enum(&conv, CONV_COMP_TYPE, T_DATA_TYPE, DT_FLOAT)?;
    a.set_enum(&conv, CONV_MODE, T_CONV_MODE, CROSS_CORRELATION)?;
    a.set_i64(&conv, CONV_SPATIAL_DIMS, &[sp as i64])?;
    a.set_i64(&conv, CONV_DILATIONS, &v(&p.dil))?;
    a.set_i64(&conv, CONV_STRIDES, &v(&p.stride))?;
    a.set_i64(&conv, CONV_PRE_PAD, &v(&p.pad))?;
    a.set_i64(&conv, CONV_POST_PAD, &v(&p.pad))?;
    a.fin(&conv)?;
    let conv = b.hold(conv);
    let (kind, base) = match p.dir {
        ConvDir::Forward => (D_OP_CONV_FWD, OP_CONV_BASE[0]),
        ConvDir::BackwardData => (D_OP_CONV_BWD_DATA, OP_CONV_BASE[1]),
        ConvDir::BackwardWeight => (D_OP_CONV_BWD_FILTER, OP_CONV_BASE[2]),
    };
    let op = a.desc(kind)?;
    a.set_f32(&op, base, 1.0)?;
    a.set_f32(&op, base + 1, 0.0)?;
    a.set_descs(&op, base + 2, &[conv])?;
    // Attribute order after the descriptor: forward w x y; backward data w dx dy; backward
    // filter dw x dy.
    let (t3, t4, t5) = match p.dir {
        ConvDir::Forward => (tb, ta, tc),
        ConvDir::BackwardData => (tb, tc, ta),
        ConvDir::BackwardWeight => (tc, ta, tb),
    };
    a.set_descs(&op, base + 3, &[t3.h])?;
    a.set_descs(&op, base + 4, &[t4.h])?;
    a.set_descs(&op, base + 5, &[t5.h])?;
    b.op(op)?;
    if let Some(bias) = bias {
        let dims = &y;
        if p.epi == ConvEpilogue::BiasRelu {
            let t = b.virt(dims, &strides(dims), DT_FLOAT)?;
            b.pointwise(PW_ADD, tc, Some(bias), None, t, None, DT_FLOAT)?;
            b.pointwise(PW_RELU_FWD, t, None, None, out, None, DT_FLOAT)?;
        } else {
            b.pointwise(PW_ADD, tc, Some(bias), None, out, None, DT_FLOAT)?;
        }
    }
    b.plans(hd, limit)
}

/// uids of an attention plan: q, k, v, o, stats, then the by-value scale and mask value.
pub const SDPA_UIDS: [i64; 5] = [1, 2, 3, 4, 5];

/// The fused attention plan of `p` (the heuristics' first engine that finalizes: on the
/// H100 it is the flash-attention engine, about as fast as PyTorch's). Binds q, k, v, o,
/// stats as [`SDPA_UIDS`]; the scale (and, causal, the masked value) are by-value f32
/// scalars whose uids are returned.
pub fn sdpa_plan(api: &Api, hd: usize, p: &AttnProblem) -> Result<(Plan, Vec<i64>)> {
    let dt = data_type(p.dtype)?;
    let (b, h, sq, sk, d) = (p.b as i64, p.h as i64, p.sq as i64, p.sk as i64, p.d as i64);
    let mut g = Builder::new(api);
    let q = g.real(&[b, h, sq, d], &packed(&[b, h, sq, d]), dt)?;
    // K^T by strides: [b, 1, d, sk] over K's [b, 1, sk, d] memory.
    let k = g.real(&[b, 1, d, sk], &[sk * d, sk * d, 1, d], dt)?;
    let v = g.real(&[b, 1, sk, d], &packed(&[b, 1, sk, d]), dt)?;
    let o = g.real(&[b, h, sq, d], &packed(&[b, h, sq, d]), dt)?;
    let rdims = [b, h, sq, 1];
    let stats = g.real(&rdims, &packed(&rdims), DT_FLOAT)?;
    debug_assert_eq!([q.uid, k.uid, v.uid, o.uid, stats.uid], SDPA_UIDS);
    let sdims = [b, h, sq, sk];
    let sst = packed(&sdims);
    let rst = packed(&rdims);
    let s1 = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.matmul(q, k, s1)?;
    let scale = g.scalar(4, DT_FLOAT)?;
    let s2 = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.pointwise(PW_MUL, s1, Some(scale), None, s2, None, DT_FLOAT)?;
    let mut scalars = vec![scale.uid];
    let last = g.causal(p.causal, s2, &sdims, &mut scalars)?;
    let mx = g.virt(&rdims, &rst, DT_FLOAT)?;
    g.reduction(REDUCE_MAX, last, mx)?;
    let sub = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.pointwise(PW_SUB, last, Some(mx), None, sub, None, DT_FLOAT)?;
    let ex = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.pointwise(PW_EXP, sub, None, None, ex, None, DT_FLOAT)?;
    let sum = g.virt(&rdims, &rst, DT_FLOAT)?;
    g.reduction(REDUCE_ADD, ex, sum)?;
    let lg = g.virt(&rdims, &rst, DT_FLOAT)?;
    g.pointwise(PW_LOG, sum, None, None, lg, None, DT_FLOAT)?;
    g.pointwise(PW_ADD, mx, Some(lg), None, stats, None, DT_FLOAT)?;
    let prob = g.virt(&sdims, &sst, dt)?;
    g.pointwise(PW_DIV, ex, Some(sum), None, prob, None, DT_FLOAT)?;
    g.matmul(prob, v, o)?;
    let mut plans = g.plans(hd, 1)?;
    Ok((plans.remove(0).1, scalars))
}

/// uids of an attention backward plan: q, k, v, o, dout, stats, dq, dk, dv, the f32 row
/// sums `D = rowsum(dout * o)` `[b, h, sq]` and the f32 dq accumulator `[b, h, sq, d]`
/// (zeroed before each execution); then the by-value scale, one, and (causal) masked value.
pub const SDPA_BWD_UIDS: [i64; 11] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];

/// The fused attention backward plan of `p` (the graph of cuDNN's frontend for it, without
/// dropout or bias): `P = exp(scale q k^T [causal] - stats)`, `dv = P^T dout`,
/// `dS = P (dout v^T - D) scale`, `dk = dS^T q`, `dq = dS k` (through the f32 accumulator;
/// grouped queries sum dk and dv over their group). Binds [`SDPA_BWD_UIDS`]; returns the
/// by-value scalars' uids.
pub fn sdpa_backward_plan(api: &Api, hd: usize, p: &AttnProblem) -> Result<(Plan, Vec<i64>)> {
    let dt = data_type(p.dtype)?;
    let (b, h, sq, sk, d) = (p.b as i64, p.h as i64, p.sq as i64, p.sk as i64, p.d as i64);
    let mut g = Builder::new(api);
    let qdims = [b, h, sq, d];
    let q = g.real(&qdims, &packed(&qdims), dt)?;
    let kt = g.real(&[b, 1, d, sk], &[sk * d, sk * d, 1, d], dt)?;
    let vt = g.real(&[b, 1, d, sk], &[sk * d, sk * d, 1, d], dt)?;
    let o = g.real(&qdims, &packed(&qdims), dt)?;
    let dout = g.real(&qdims, &packed(&qdims), dt)?;
    let rdims = [b, h, sq, 1];
    let rst = packed(&rdims);
    let stats = g.real(&rdims, &rst, DT_FLOAT)?;
    let dq = g.real(&qdims, &packed(&qdims), dt)?;
    let kdims = [b, 1, sk, d];
    let dk = g.real(&kdims, &packed(&kdims), dt)?;
    let dv = g.real(&kdims, &packed(&kdims), dt)?;
    let dsum = g.real(&rdims, &rst, DT_FLOAT)?;
    let dq_acc = g.real(&qdims, &packed(&qdims), DT_FLOAT)?;
    let scale = g.scalar(4, DT_FLOAT)?;
    let one = g.scalar(4, DT_FLOAT)?;
    let mut scalars = vec![scale.uid, one.uid];
    // D = rowsum(dout * o)
    let prod = g.virt(&qdims, &packed(&qdims), DT_FLOAT)?;
    g.pointwise(PW_MUL, dout, Some(o), None, prod, None, DT_FLOAT)?;
    let rsum = g.virt(&rdims, &rst, DT_FLOAT)?;
    g.reduction(REDUCE_ADD, prod, rsum)?;
    g.pointwise(PW_MUL, rsum, Some(one), None, dsum, None, DT_FLOAT)?;
    // P = exp(scale q k^T [causal] - stats)
    let sdims = [b, h, sq, sk];
    let sst = packed(&sdims);
    let s1 = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.matmul(q, kt, s1)?;
    let s2 = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.pointwise(PW_MUL, s1, Some(scale), None, s2, None, DT_FLOAT)?;
    let s3 = g.causal(p.causal, s2, &sdims, &mut scalars)?;
    let s4 = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.pointwise(PW_SUB, s3, Some(stats), None, s4, None, DT_FLOAT)?;
    let prob = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.pointwise(PW_EXP, s4, None, None, prob, None, DT_FLOAT)?;
    // P^T (by strides), in the input dtype.
    let tdims = [b, h, sk, sq];
    let tst = [h * sq * sk, sq * sk, 1, sk];
    let prob_t = g.virt(&tdims, &tst, dt)?;
    g.reshape(prob, prob_t)?;
    let full = [b, h, sk, d];
    // dv = P^T dout (summed over a query group)
    if h == 1 {
        g.matmul(prob_t, dout, dv)?;
    } else {
        let dv_full = g.virt(&full, &packed(&full), dt)?;
        g.matmul(prob_t, dout, dv_full)?;
        g.reduction(REDUCE_ADD, dv_full, dv)?;
    }
    // dS = P (dout v^T - D) scale
    let dp = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.matmul(dout, vt, dp)?;
    let t1 = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.pointwise(PW_SUB, dp, Some(dsum), None, t1, None, DT_FLOAT)?;
    let t2 = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.pointwise(PW_MUL, t1, Some(prob), None, t2, None, DT_FLOAT)?;
    let ds = g.virt(&sdims, &sst, DT_FLOAT)?;
    g.pointwise(PW_MUL, t2, Some(scale), None, ds, None, DT_FLOAT)?;
    // dk = dS^T q
    let ds_t = g.virt(&tdims, &tst, dt)?;
    g.reshape(ds, ds_t)?;
    if h == 1 {
        g.matmul(ds_t, q, dk)?;
    } else {
        let dk_full = g.virt(&full, &packed(&full), dt)?;
        g.matmul(ds_t, q, dk_full)?;
        g.reduction(REDUCE_ADD, dk_full, dk)?;
    }
    // dq = dS k, accumulated in f32, then rounded once.
    let k_rows = g.virt(&kdims, &packed(&kdims), dt)?;
    g.reshape(kt, k_rows)?;
    g.matmul(ds, k_rows, dq_acc)?;
    g.pointwise(PW_IDENTITY, dq_acc, None, None, dq, None, DT_FLOAT)?;
    let mut plans = g.plans(hd, 1)?;
    Ok((plans.remove(0).1, scalars))
}
