//! The handle registry. A handle given to C is an opaque number, never a pointer to Rust
//! memory: every use looks it up, so a destroyed, foreign or wrong-kind handle is answered
//! with RB_STATUS_INVALID_HANDLE instead of undefined behaviour. Numbers are never reused.

use crate::graph::capture::GraphHandle;
use crate::graph::exec::Executor;
use crate::runtime::comm::Comm;
use crate::runtime::event::Event;
use crate::runtime::module::{Function, Module};
use crate::runtime::{Stream, Tensor};
use crate::{Error, ErrorKind, Result};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

/// Every kind of object C can hold a handle to.
#[derive(Clone)]
pub enum Object {
    Tensor(Arc<Tensor>),
    Stream(Arc<Stream>),
    Event(Arc<Event>),
    Module(Arc<Module>),
    Function(Arc<Function>),
    Graph(Arc<GraphHandle>),
    Executor(Arc<Executor>),
    Comm(Arc<Comm>),
}

impl Object {
    fn kind_name(&self) -> &'static str {
        match self {
            Object::Tensor(_) => "rb_tensor",
            Object::Stream(_) => "rb_stream",
            Object::Event(_) => "rb_event",
            Object::Module(_) => "rb_module",
            Object::Function(_) => "rb_function",
            Object::Graph(_) => "rb_graph",
            Object::Executor(_) => "rb_executor",
            Object::Comm(_) => "rb_comm",
        }
    }
}

/// A Rust type that C sees through a handle of one kind.
pub trait HandleKind: Sized {
    const NAME: &'static str;
    fn wrap(v: Arc<Self>) -> Object;
    fn unwrap(o: &Object) -> Option<Arc<Self>>;
}

macro_rules! handle_kind {
    ($t:ty, $variant:ident, $name:literal) => {
        impl HandleKind for $t {
            const NAME: &'static str = $name;
            fn wrap(v: Arc<Self>) -> Object {
                Object::$variant(v)
            }
            fn unwrap(o: &Object) -> Option<Arc<Self>> {
                match o {
                    Object::$variant(v) => Some(v.clone()),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        }
    };
}
handle_kind!(Tensor, Tensor, "rb_tensor");
handle_kind!(Stream, Stream, "rb_stream");
handle_kind!(Event, Event, "rb_event");
handle_kind!(Module, Module, "rb_module");
handle_kind!(Function, Function, "rb_function");
handle_kind!(GraphHandle, Graph, "rb_graph");
handle_kind!(Executor, Executor, "rb_executor");
handle_kind!(Comm, Comm, "rb_comm");

static REGISTRY: LazyLock<RwLock<HashMap<u64, Object>>> = LazyLock::new(Default::default);
/// Handle numbers are `(counter << 8) | 0x5b`: odd, so never an aligned pointer.
static NEXT: AtomicU64 = AtomicU64::new(1);
const TAG: u64 = 0x5b;

/// Registers `v` and returns its handle.
pub fn register<T: HandleKind>(v: T) -> *mut std::ffi::c_void {
    let id = (NEXT.fetch_add(1, Ordering::Relaxed) << 8) | TAG;
    REGISTRY.write().insert(id, T::wrap(Arc::new(v)));
    id as usize as *mut std::ffi::c_void
}

fn invalid(h: u64, expected: &str) -> Error {
    Error::new(
        ErrorKind::InvalidHandle,
        format!(
            "{h:#x} is not a live {expected} handle (destroyed, or never made by this library)"
        ),
    )
}

/// Looks a handle up; NULL gives NULL_POINTER, anything else not live or of another kind
/// INVALID_HANDLE.
pub fn get<T: HandleKind>(h: *const std::ffi::c_void, arg: &str) -> Result<Arc<T>> {
    if h.is_null() {
        return Err(Error::new(ErrorKind::NullPointer, format!("{arg} is NULL")));
    }
    let id = h as usize as u64;
    let reg = REGISTRY.read();
    let o = reg
        .get(&id)
        .ok_or_else(|| invalid(id, T::NAME).context(arg))?;
    T::unwrap(o).ok_or_else(|| wrong_kind::<T>(id, o, arg))
}

fn wrong_kind<T: HandleKind>(id: u64, o: &Object, arg: &str) -> Error {
    Error::new(
        ErrorKind::InvalidHandle,
        format!(
            "{arg}: handle {id:#x} is an {}, not an {}",
            o.kind_name(),
            T::NAME
        ),
    )
}

/// Like [`get`], but NULL gives `None`.
pub fn get_opt<T: HandleKind>(h: *const std::ffi::c_void, arg: &str) -> Result<Option<Arc<T>>> {
    if h.is_null() {
        Ok(None)
    } else {
        get(h, arg).map(Some)
    }
}

/// Unregisters a handle (the object lives on while Rust code still holds it). NULL is a
/// no-op; a stale or wrong-kind handle is INVALID_HANDLE and nothing changes. The look-up and
/// the removal are one step under the registry's write lock, so of two threads destroying
/// the same handle at once exactly one succeeds; the other gets INVALID_HANDLE.
pub fn destroy<T: HandleKind>(h: *const std::ffi::c_void, arg: &str) -> Result<()> {
    if h.is_null() {
        return Ok(());
    }
    let id = h as usize as u64;
    let mut reg = REGISTRY.write();
    match reg.get(&id) {
        None => Err(invalid(id, T::NAME).context(arg)),
        Some(o) if T::unwrap(o).is_none() => Err(wrong_kind::<T>(id, o, arg)),
        Some(_) => {
            reg.remove(&id);
            Ok(())
        }
    }
}

/// Live handles of every kind (for leak tests).
pub fn live_count() -> usize {
    REGISTRY.read().len()
}

/// A C handle type and the Rust type behind it (rustls-ffi's `Castable`): `rb_tensor` is a
/// [`Tensor`], `rb_stream` a [`Stream`], and so on. The typed look-ups below take the C
/// pointer as the caller passed it, so no export casts or names the Rust type itself.
pub trait Castable {
    type Rust: HandleKind;
}

macro_rules! castable {
    ($($c:ty => $r:ty),* $(,)?) => {
        $(impl Castable for $c {
            type Rust = $r;
        })*
    };
}
castable!(
    super::tensor::rb_tensor => Tensor,
    super::stream::rb_stream => Stream,
    super::event::rb_event => Event,
    super::module::rb_module => Module,
    super::module::rb_function => Function,
    super::comm::rb_comm => Comm,
);

/// The object behind a C handle: NULL is NULL_POINTER naming `arg`; a destroyed, foreign or
/// other-kind handle is INVALID_HANDLE.
pub fn arc<C: Castable>(h: *const C, arg: &str) -> Result<Arc<C::Rust>> {
    get::<C::Rust>(h as *const std::ffi::c_void, arg)
}

/// Like [`arc`], but NULL gives `None` (an optional argument).
pub fn arc_opt<C: Castable>(h: *const C, arg: &str) -> Result<Option<Arc<C::Rust>>> {
    get_opt::<C::Rust>(h as *const std::ffi::c_void, arg)
}

/// Registers `v` and returns its C handle, owned by the caller.
pub fn new_handle<C: Castable>(v: C::Rust) -> *mut C {
    register(v) as *mut C
}

/// Unregisters a C handle ([`destroy`]).
pub fn release<C: Castable>(h: *const C, arg: &str) -> Result<()> {
    destroy::<C::Rust>(h as *const std::ffi::c_void, arg)
}
