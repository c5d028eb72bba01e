//! The collective libraries, RCCL (AMD, table [`super::hip::Rccl`]) and NCCL (NVIDIA, table
//! [`super::cuda::Nccl`]): one C API, so one set of calls here over either table. Loaded on
//! the first communicator of a device kind; a missing library makes collectives on that
//! kind UNSUPPORTED with the loader's message, nothing else.
//!
//! ABI (nccl.h / rccl.h; RCCL's values are checked against Debian's rccl.h by the AMD
//! conformance test): `ncclUniqueId` is a 128-byte struct passed by value to
//! ncclCommInitRank; `ncclDataType_t` int32 2, int64 4, float16 6, float32 7, bfloat16 9;
//! `ncclRedOp_t` sum 0, prod 1, max 2, min 3, avg 4; `ncclResult_t` success 0 (Debian's
//! RCCL 5.4 has no ncclInProgress, so non-blocking communicators are not used).

use super::hip::{
    NCCL_AVG, NCCL_BFLOAT16, NCCL_FLOAT16, NCCL_FLOAT32, NCCL_INT32, NCCL_INT64, NCCL_MAX,
    NCCL_MIN, NCCL_PROD, NCCL_SUCCESS, NCCL_SUM, NCCL_UNIQUE_ID_BYTES,
};
use crate::base::dtype::DType;
use crate::device::comm::{ReduceOp, UniqueId};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::ffi::{CStr, c_char, c_int};
use std::sync::{Arc, LazyLock};

/// `ncclUniqueId`: `struct { char internal[NCCL_UNIQUE_ID_BYTES]; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NcclUniqueId {
    pub internal: [c_char; NCCL_UNIQUE_ID_BYTES],
}

const _: () = assert!(std::mem::size_of::<NcclUniqueId>() == crate::device::comm::UNIQUE_ID_BYTES);

impl From<&UniqueId> for NcclUniqueId {
    fn from(u: &UniqueId) -> Self {
        NcclUniqueId {
            internal: u.0.map(|b| b as c_char),
        }
    }
}
impl From<&NcclUniqueId> for UniqueId {
    fn from(u: &NcclUniqueId) -> Self {
        UniqueId(u.internal.map(|b| b as u8))
    }
}

/// Which table.
pub enum Table {
    Rccl(super::hip::Rccl),
    Nccl(super::cuda::Nccl),
}

/// A loaded collective library.
pub struct CollLib {
    pub table: Table,
    /// "RCCL" or "NCCL".
    pub name: &'static str,
    /// ncclGetVersion's code, e.g. 22805 for 2.28.5.
    pub version: i32,
}

/// Calls a required entry of whichever table is loaded.
macro_rules! nccl {
    ($lib:expr, $sym:ident ( $($a:expr),* $(,)? )) => {
        match &$lib.table {
            // SAFETY: the entry has nccl.h's prototype; callers pass valid arguments.
            $crate::device::gpu::vendor::nccl::Table::Rccl(t) => unsafe { (t.$sym)($($a),*) },
            // SAFETY: as above.
            $crate::device::gpu::vendor::nccl::Table::Nccl(t) => unsafe { (t.$sym)($($a),*) },
        }
    };
}

/// Calls an optional entry: `None` when the library lacks it.
macro_rules! nccl_opt {
    ($lib:expr, $sym:ident ( $($a:expr),* $(,)? )) => {
        match &$lib.table {
            // SAFETY: as in `nccl!`.
            $crate::device::gpu::vendor::nccl::Table::Rccl(t) => t.$sym.map(|f| unsafe { f($($a),*) }),
            // SAFETY: as above.
            $crate::device::gpu::vendor::nccl::Table::Nccl(t) => t.$sym.map(|f| unsafe { f($($a),*) }),
        }
    };
}
pub(crate) use {nccl, nccl_opt};

/// The libraries loaded so far (group start/end go to each).
static LOADED: LazyLock<Mutex<Vec<Arc<CollLib>>>> = LazyLock::new(Default::default);

/// Every library loaded so far.
pub fn loaded() -> Vec<Arc<CollLib>> {
    LOADED.lock().clone()
}

impl CollLib {
    /// Wraps a loaded table (reads its version) and lists it in [`loaded`].
    pub fn new(table: Table) -> Arc<CollLib> {
        let name = match table {
            Table::Rccl(_) => "RCCL",
            Table::Nccl(_) => "NCCL",
        };
        let mut lib = CollLib {
            table,
            name,
            version: 0,
        };
        let mut v: c_int = 0;
        if nccl!(lib, ncclGetVersion(&mut v)) == NCCL_SUCCESS {
            lib.version = v;
        }
        let lib = Arc::new(lib);
        LOADED.lock().push(lib.clone());
        lib
    }

    /// An error for a failed call, with the library's own name and message.
    pub fn check(&self, what: &str, r: c_int) -> Result<()> {
        if r == NCCL_SUCCESS {
            return Ok(());
        }
        let p: *const c_char = nccl!(self, ncclGetErrorString(r));
        let msg = if p.is_null() {
            "unknown error".to_string()
        } else {
            // SAFETY: a static NUL-terminated string of the library.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        };
        Err(Error::vendor(format!(
            "{what} failed: {} error {r} ({msg})",
            self.name
        )))
    }
}

/// NCCL's `ncclDataType_t` for a dtype.
pub fn nccl_dtype(d: DType) -> Result<c_int> {
    Ok(match d {
        DType::F32 => NCCL_FLOAT32,
        DType::F16 => NCCL_FLOAT16,
        DType::BF16 => NCCL_BFLOAT16,
        DType::I32 => NCCL_INT32,
        DType::I64 => NCCL_INT64,
        other @ (DType::Bool | DType::F64 | DType::I8 | DType::U8 | DType::I16) => {
            return Err(Error::dtype(format!("collectives do not take {other}")));
        }
    })
}

/// NCCL's `ncclRedOp_t` for a reduction.
pub fn nccl_op(op: ReduceOp) -> c_int {
    match op {
        ReduceOp::Sum => NCCL_SUM,
        ReduceOp::Prod => NCCL_PROD,
        ReduceOp::Max => NCCL_MAX,
        ReduceOp::Min => NCCL_MIN,
        ReduceOp::Avg => NCCL_AVG,
    }
}
