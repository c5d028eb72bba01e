//! Communicators and collectives (issue 16): every collective and dtype on the CPU
//! communicator with 2, 3 and 4 ranks (threads) against a float64 reference; groups (one
//! thread driving every rank, paired send/recv); error cases (local and cross-rank size
//! mismatches, bad ranks and roots, destroyed communicators, a peer gone -> TIMEOUT, a peer
//! destroyed or aborted -> ABORTED); the C API; and, where a GPU with RCCL/NCCL exists, a
//! one-rank communicator exercising every call (skipped with the reason elsewhere); with
//! `--ignored` on two or more GPUs, every collective and dtype across them.

use half::{bf16, f16};
use rocm_backend::base::dtype::DType;
use rocm_backend::device::comm::{ReduceOp, UniqueId};
use rocm_backend::device::{Device, DeviceKind};
use rocm_backend::ffi::comm::*;
use rocm_backend::ffi::status::{rb_last_error_message, rb_status};
use rocm_backend::ffi::tensor::{
    rb_tensor, rb_tensor_copy_to_host, rb_tensor_destroy, rb_tensor_from_host,
};
use rocm_backend::runtime::comm::{self, Comm};
use rocm_backend::runtime::{DeviceSpec, Tensor, device};
use rocm_backend::{ErrorKind, Result};
use std::ffi::{CStr, c_void};
use std::ptr::null_mut;
use std::sync::Arc;
use std::time::Duration;

const DTYPES: [DType; 5] = [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64];

fn cpu() -> Arc<dyn Device> {
    device(DeviceSpec::parse("cpu").unwrap()).unwrap()
}

/// Small integers (exact in every dtype, and their sums and products of up to 4 ranks).
fn values(rank: usize, n: usize, salt: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let h = (i * 7919 + rank * 104_729 + salt * 13) % 9;
            h as f64 - 4.0
                + if (i + rank).is_multiple_of(5) {
                    0.5
                } else {
                    0.0
                }
        })
        .collect()
}

fn encode(v: &[f64], d: DType) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * d.size());
    for &x in v {
        match d {
            DType::F32 => out.extend((x as f32).to_le_bytes()),
            DType::F16 => out.extend(f16::from_f64(x).to_le_bytes()),
            DType::BF16 => out.extend(bf16::from_f64(x).to_le_bytes()),
            DType::I32 => out.extend((x.trunc() as i32).to_le_bytes()),
            DType::I64 => out.extend((x.trunc() as i64).to_le_bytes()),
            // collectives refuse these (device::comm::check_dtype)
            DType::Bool | DType::F64 | DType::I8 | DType::U8 | DType::I16 => unreachable!(),
        }
    }
    out
}

/// What the tensor holds as each dtype sees its input (ints truncate the .5).
fn as_dtype(v: &[f64], d: DType) -> Vec<f64> {
    v.iter()
        .map(|&x| if d.is_int() { x.trunc() } else { x })
        .collect()
}

fn tensor(v: &[f64], d: DType) -> Tensor {
    Tensor::from_bytes(cpu(), &encode(v, d), &[v.len()], d).unwrap()
}

fn reduce_ref(parts: &[Vec<f64>], op: ReduceOp, d: DType) -> Vec<f64> {
    let n = parts.len();
    (0..parts[0].len())
        .map(|i| {
            let it = parts.iter().map(|p| p[i]);
            let v = match op {
                ReduceOp::Sum | ReduceOp::Avg => it.sum::<f64>(),
                ReduceOp::Prod => it.product(),
                ReduceOp::Max => it.fold(f64::MIN, f64::max),
                ReduceOp::Min => it.fold(f64::MAX, f64::min),
            };
            if op == ReduceOp::Avg {
                if d.is_int() {
                    (v / n as f64).trunc()
                } else {
                    v / n as f64
                }
            } else {
                v
            }
        })
        .collect()
}

fn check(got: &[f64], want: &[f64], d: DType, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let tol = match d {
        DType::F16 | DType::BF16 => 1e-2,
        DType::F32 => 1e-6,
        _ => 0.0,
    };
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}: element {i}: got {g}, want {w}"
        );
    }
}

/// Runs `body(comm)` on `n` threads, one rank each, and returns their results in rank order.
fn ranks<T: Send + 'static>(n: usize, body: impl Fn(Comm) -> T + Send + Sync + 'static) -> Vec<T> {
    let id = comm::unique_id(&cpu()).unwrap();
    let body = Arc::new(body);
    let hs: Vec<_> = (0..n)
        .map(|r| {
            let b = body.clone();
            std::thread::spawn(move || {
                let c = Comm::init(cpu(), &id, n, r).unwrap();
                c.set_timeout(Duration::from_secs(20));
                b(c)
            })
        })
        .collect();
    hs.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn every_collective_and_dtype_on_2_3_4_ranks() {
    for n in [2usize, 3, 4] {
        for d in DTYPES {
            let len = 37;
            let inputs: Vec<Vec<f64>> = (0..n)
                .map(|r| as_dtype(&values(r, len * n, 1), d))
                .collect();
            let inputs2 = inputs.clone();
            let out = ranks(n, move |c| {
                let r = c.rank();
                let mut res = Vec::new();
                for op in ReduceOp::ALL {
                    // all_reduce, out of place and in place
                    let s = tensor(&inputs2[r], d);
                    let o = Tensor::empty(cpu(), &[len * n], d).unwrap();
                    c.all_reduce(None, &s, &o, op).unwrap();
                    res.push(o.to_f64_vec().unwrap());
                    c.all_reduce(None, &s, &s, op).unwrap();
                    res.push(s.to_f64_vec().unwrap());
                    // reduce_scatter
                    let s = tensor(&inputs2[r], d);
                    let o = Tensor::empty(cpu(), &[len], d).unwrap();
                    c.reduce_scatter(None, &s, &o, op).unwrap();
                    res.push(o.to_f64_vec().unwrap());
                }
                // all_gather of each rank's first `len`
                let s = tensor(&inputs2[r][..len], d);
                let o = Tensor::empty(cpu(), &[len * n], d).unwrap();
                c.all_gather(None, &s, &o).unwrap();
                res.push(o.to_f64_vec().unwrap());
                // broadcast from every root, and in place
                for root in 0..n {
                    let s = tensor(&inputs2[r], d);
                    let o = Tensor::zeros(cpu(), &[len * n], d).unwrap();
                    c.broadcast(None, Some(&s), &o, root).unwrap();
                    res.push(o.to_f64_vec().unwrap());
                    c.broadcast(None, None, &s, root).unwrap();
                    res.push(s.to_f64_vec().unwrap());
                }
                // ring send/recv in a group
                let s = tensor(&inputs2[r], d);
                let o = Tensor::zeros(cpu(), &[len * n], d).unwrap();
                comm::group_begin().unwrap();
                c.send(None, &s, (r + 1) % n).unwrap();
                c.recv(None, &o, (r + n - 1) % n).unwrap();
                comm::group_end().unwrap();
                res.push(o.to_f64_vec().unwrap());
                res
            });
            for (r, res) in out.iter().enumerate() {
                let what = |k: &str| format!("{n} ranks, {d}, rank {r}: {k}");
                let mut k = 0;
                for op in ReduceOp::ALL {
                    let full = reduce_ref(&inputs, op, d);
                    check(
                        &res[k],
                        &full,
                        d,
                        &what(&format!("all_reduce {}", op.name())),
                    );
                    check(
                        &res[k + 1],
                        &full,
                        d,
                        &what(&format!("all_reduce {} in place", op.name())),
                    );
                    check(
                        &res[k + 2],
                        &full[r * len..(r + 1) * len],
                        d,
                        &what(&format!("reduce_scatter {}", op.name())),
                    );
                    k += 3;
                }
                let gathered: Vec<f64> = inputs.iter().flat_map(|p| p[..len].to_vec()).collect();
                check(&res[k], &gathered, d, &what("all_gather"));
                k += 1;
                for (root, input) in inputs.iter().enumerate() {
                    check(&res[k], input, d, &what(&format!("broadcast root {root}")));
                    check(
                        &res[k + 1],
                        input,
                        d,
                        &what(&format!("broadcast in place root {root}")),
                    );
                    k += 2;
                }
                check(
                    &res[k],
                    &inputs[(r + n - 1) % n],
                    d,
                    &what("ring send/recv"),
                );
            }
        }
    }
}

#[test]
fn one_thread_drives_every_rank_in_a_group() {
    let n = 3;
    let comms = Comm::init_all(&vec![cpu(); n]).unwrap();
    let ins: Vec<Tensor> = (0..n)
        .map(|r| tensor(&values(r, 10, 2), DType::F32))
        .collect();
    let outs: Vec<Tensor> = (0..n)
        .map(|_| Tensor::empty(cpu(), &[10], DType::F32).unwrap())
        .collect();
    comm::group_begin().unwrap();
    for r in 0..n {
        comms[r]
            .all_reduce(None, &ins[r], &outs[r], ReduceOp::Sum)
            .unwrap();
    }
    comm::group_end().unwrap();
    let want = reduce_ref(
        &(0..n).map(|r| values(r, 10, 2)).collect::<Vec<_>>(),
        ReduceOp::Sum,
        DType::F32,
    );
    for o in &outs {
        check(
            &o.to_f64_vec().unwrap(),
            &want,
            DType::F32,
            "init_all + group",
        );
    }
    assert_eq!(
        comms.iter().map(|c| c.rank()).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert!(comms.iter().all(|c| c.size() == n));
    // a group end without a begin
    assert_eq!(
        comm::group_end().unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
}

#[test]
fn zero_elements_and_single_rank() {
    let id = comm::unique_id(&cpu()).unwrap();
    let c = Comm::init(cpu(), &id, 1, 0).unwrap();
    let s = tensor(&[1.0, 2.0, 3.0], DType::F32);
    let o = Tensor::empty(cpu(), &[3], DType::F32).unwrap();
    for op in ReduceOp::ALL {
        c.all_reduce(None, &s, &o, op).unwrap();
        assert_eq!(o.to_f64_vec().unwrap(), vec![1.0, 2.0, 3.0]);
    }
    let e = Tensor::empty(cpu(), &[0], DType::F32).unwrap();
    c.all_reduce(None, &e, &e, ReduceOp::Sum).unwrap();
    c.send(None, &s, 0).unwrap();
    c.recv(None, &o, 0).unwrap();
    assert_eq!(o.to_f64_vec().unwrap(), vec![1.0, 2.0, 3.0]);
}

#[test]
fn local_mismatches_and_bad_arguments() {
    let id = comm::unique_id(&cpu()).unwrap();
    let c = Comm::init(cpu(), &id, 1, 0).unwrap();
    let a = tensor(&[1.0; 4], DType::F32);
    let b = tensor(&[1.0; 3], DType::F32);
    let h = tensor(&[1.0; 4], DType::F16);
    let kind = |r: Result<()>| r.unwrap_err().kind;
    assert_eq!(
        kind(c.all_reduce(None, &a, &b, ReduceOp::Sum)),
        ErrorKind::ShapeMismatch
    );
    assert_eq!(
        kind(c.all_reduce(None, &a, &h, ReduceOp::Sum)),
        ErrorKind::DtypeMismatch
    );
    assert_eq!(kind(c.all_gather(None, &a, &b)), ErrorKind::ShapeMismatch);
    assert_eq!(
        kind(c.reduce_scatter(None, &a, &b, ReduceOp::Sum)),
        ErrorKind::ShapeMismatch
    );
    assert_eq!(
        kind(c.broadcast(None, Some(&a), &b, 0)),
        ErrorKind::ShapeMismatch
    );
    assert_eq!(
        kind(c.broadcast(None, None, &a, 1)),
        ErrorKind::InvalidArgument
    );
    assert_eq!(kind(c.send(None, &a, 1)), ErrorKind::InvalidArgument);
    assert_eq!(kind(c.recv(None, &a, 5)), ErrorKind::InvalidArgument);
    let bools = Tensor::empty(cpu(), &[4], DType::Bool).unwrap();
    assert_eq!(
        kind(c.all_reduce(None, &bools, &bools, ReduceOp::Sum)),
        ErrorKind::DtypeMismatch
    );
    // bad ranks and world sizes at init; a rank joining twice; a foreign id
    assert_eq!(
        Comm::init(cpu(), &id, 0, 0).unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        Comm::init(cpu(), &id, 2, 2).unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        Comm::init(cpu(), &id, 1, 0).unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        Comm::init(cpu(), &id, 3, 1).unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        Comm::init(cpu(), &UniqueId([7; 128]), 1, 0)
            .unwrap_err()
            .kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        ReduceOp::from_i32(5).unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        ReduceOp::from_i32(-1).unwrap_err().kind,
        ErrorKind::InvalidArgument
    );
}

#[test]
fn ranks_that_disagree_get_shape_mismatch() {
    let out = ranks(2, |c| {
        let n = 4 + c.rank();
        let s = tensor(&vec![1.0; n], DType::F32);
        let r1 = c
            .all_reduce(None, &s, &s, ReduceOp::Sum)
            .map_err(|e| (e.kind, e.message));
        let op = if c.rank() == 0 {
            ReduceOp::Sum
        } else {
            ReduceOp::Max
        };
        let t = tensor(&[1.0; 4], DType::F32);
        let r2 = c.all_reduce(None, &t, &t, op).map_err(|e| e.kind);
        // message-size mismatch on send/recv
        if c.rank() == 0 {
            c.send(None, &tensor(&[1.0; 3], DType::F32), 1).unwrap();
        }
        let r3 = if c.rank() == 1 {
            c.recv(None, &t, 0).map_err(|e| e.kind)
        } else {
            Err(ErrorKind::ShapeMismatch)
        };
        (r1, r2, r3)
    });
    for (r1, r2, r3) in out {
        let (k, m) = r1.unwrap_err();
        assert_eq!(k, ErrorKind::ShapeMismatch);
        assert!(m.contains("4 f32") && m.contains("5 f32"), "{m}");
        assert_eq!(r2.unwrap_err(), ErrorKind::ShapeMismatch);
        assert_eq!(r3.unwrap_err(), ErrorKind::ShapeMismatch);
    }
}

#[test]
fn a_peer_gone_times_out_and_abort_releases_waiters() {
    // rank 1 never calls: rank 0 times out with a clear status.
    let id = comm::unique_id(&cpu()).unwrap();
    let c0 = Comm::init(cpu(), &id, 2, 0).unwrap();
    let _c1 = Comm::init(cpu(), &id, 2, 1).unwrap();
    c0.set_timeout(Duration::from_millis(200));
    let t = tensor(&[1.0; 4], DType::F32);
    let e = c0.all_reduce(None, &t, &t, ReduceOp::Sum).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Timeout, "{}", e.message);
    assert!(
        e.message.contains("ranks [1]") && e.message.contains("abort"),
        "{}",
        e.message
    );

    // rank 0 waits; another thread aborts rank 0: the waiter fails with ABORTED at once.
    let id = comm::unique_id(&cpu()).unwrap();
    let c0 = Arc::new(Comm::init(cpu(), &id, 2, 0).unwrap());
    let _c1 = Comm::init(cpu(), &id, 2, 1).unwrap();
    let w = {
        let c0 = c0.clone();
        std::thread::spawn(move || {
            let t = tensor(&[1.0; 4], DType::F32);
            c0.all_reduce(None, &t, &t, ReduceOp::Sum)
                .map_err(|e| e.kind)
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    c0.abort().unwrap();
    c0.abort().unwrap();
    assert_eq!(w.join().unwrap().unwrap_err(), ErrorKind::Aborted);
    let t = tensor(&[1.0; 4], DType::F32);
    assert_eq!(
        c0.all_reduce(None, &t, &t, ReduceOp::Sum).unwrap_err().kind,
        ErrorKind::Aborted
    );

    // a peer destroyed while needed: ABORTED naming it; a receive from it too.
    let id = comm::unique_id(&cpu()).unwrap();
    let c0 = Comm::init(cpu(), &id, 2, 0).unwrap();
    let c1 = Comm::init(cpu(), &id, 2, 1).unwrap();
    c1.destroy().unwrap();
    let e = c0.all_reduce(None, &t, &t, ReduceOp::Sum).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Aborted);
    assert!(e.message.contains("rank 1 was destroyed"), "{}", e.message);
    assert_eq!(c0.recv(None, &t, 1).unwrap_err().kind, ErrorKind::Aborted);
    assert_eq!(c1.send(None, &t, 0).unwrap_err().kind, ErrorKind::Aborted);
}

fn msg() -> String {
    unsafe { CStr::from_ptr(rb_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn ffi_tensor(v: &[f32]) -> *mut rb_tensor {
    let mut t = null_mut();
    let shape = [v.len() as i64];
    let st = unsafe {
        rb_tensor_from_host(
            c"cpu".as_ptr(),
            v.as_ptr() as *const c_void,
            v.len() * 4,
            shape.as_ptr(),
            1,
            0,
            &mut t,
        )
    };
    assert_eq!(st, rb_status::Success);
    t
}

fn ffi_read(t: *mut rb_tensor, n: usize) -> Vec<f32> {
    let mut v = vec![0f32; n];
    let st = unsafe { rb_tensor_copy_to_host(t, v.as_mut_ptr() as *mut c_void, n * 4) };
    assert_eq!(st, rb_status::Success, "{}", msg());
    v
}

#[test]
fn c_api_on_two_threads() {
    let mut id = rb_comm_unique_id { internal: [0; 128] };
    assert_eq!(
        unsafe { rb_comm_get_unique_id(c"cpu".as_ptr(), &mut id) },
        rb_status::Success
    );
    let idb = id.internal.map(|b| b as u8);
    let hs: Vec<_> = (0..2)
        .map(|r| {
            std::thread::spawn(move || unsafe {
                let id = rb_comm_unique_id {
                    internal: idb.map(|b| b as std::ffi::c_char),
                };
                let mut c: *mut rb_comm = null_mut();
                assert_eq!(
                    rb_comm_init(c"cpu".as_ptr(), &id, 2, r, &mut c),
                    rb_status::Success,
                    "{}",
                    msg()
                );
                let (mut rank, mut size) = (-1, -1);
                assert_eq!(rb_comm_rank(c, &mut rank), rb_status::Success);
                assert_eq!(rb_comm_size(c, &mut size), rb_status::Success);
                assert_eq!((rank, size), (r, 2));
                assert_eq!(rb_comm_set_timeout_ms(c, 20_000), rb_status::Success);
                let base = (r + 1) as f32;
                let s = ffi_tensor(&[base; 4]);
                let o = ffi_tensor(&[0.0; 4]);
                assert_eq!(
                    rb_all_reduce(c, null_mut(), s, o, RB_SUM),
                    rb_status::Success,
                    "{}",
                    msg()
                );
                assert_eq!(ffi_read(o, 4), vec![3.0; 4]);
                let g = ffi_tensor(&[0.0; 8]);
                assert_eq!(rb_all_gather(c, null_mut(), s, g), rb_status::Success);
                assert_eq!(ffi_read(g, 8), vec![1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]);
                let rs = ffi_tensor(&[0.0; 2]);
                let big = ffi_tensor(&[base; 4]);
                assert_eq!(
                    rb_reduce_scatter(c, null_mut(), big, rs, RB_MAX),
                    rb_status::Success
                );
                assert_eq!(ffi_read(rs, 2), vec![2.0; 2]);
                assert_eq!(
                    rb_broadcast(c, null_mut(), std::ptr::null(), s, 1),
                    rb_status::Success
                );
                assert_eq!(ffi_read(s, 4), vec![2.0; 4]);
                // raw forms on host pointers
                let mut x = [base; 3];
                let mut y = [0f32; 3];
                assert_eq!(
                    rb_all_reduce_raw(
                        c,
                        null_mut(),
                        x.as_ptr() as *const c_void,
                        y.as_mut_ptr() as *mut c_void,
                        3,
                        0,
                        RB_PROD
                    ),
                    rb_status::Success
                );
                assert_eq!(y, [2.0; 3]);
                let mut gy = [0f32; 6];
                assert_eq!(
                    rb_all_gather_raw(
                        c,
                        null_mut(),
                        x.as_ptr() as *const c_void,
                        gy.as_mut_ptr() as *mut c_void,
                        3,
                        0
                    ),
                    rb_status::Success
                );
                assert_eq!(gy, [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
                let mut rsy = [0f32; 1];
                let two = [base, base];
                assert_eq!(
                    rb_reduce_scatter_raw(
                        c,
                        null_mut(),
                        two.as_ptr() as *const c_void,
                        rsy.as_mut_ptr() as *mut c_void,
                        1,
                        0,
                        RB_AVG
                    ),
                    rb_status::Success
                );
                assert_eq!(rsy, [1.5]);
                assert_eq!(
                    rb_broadcast_raw(
                        c,
                        null_mut(),
                        x.as_ptr() as *const c_void,
                        x.as_mut_ptr() as *mut c_void,
                        3,
                        0,
                        0
                    ),
                    rb_status::Success
                );
                assert_eq!(x, [1.0; 3]);
                let peer = 1 - r;
                let mine = [base * 10.0; 2];
                let mut theirs = [0f32; 2];
                assert_eq!(rb_comm_group_begin(), rb_status::Success);
                assert_eq!(
                    rb_send_raw(c, null_mut(), mine.as_ptr() as *const c_void, 2, 0, peer),
                    rb_status::Success
                );
                assert_eq!(
                    rb_recv_raw(
                        c,
                        null_mut(),
                        theirs.as_mut_ptr() as *mut c_void,
                        2,
                        0,
                        peer
                    ),
                    rb_status::Success
                );
                assert_eq!(rb_comm_group_end(), rb_status::Success, "{}", msg());
                assert_eq!(theirs, [(peer + 1) as f32 * 10.0; 2]);
                assert_eq!(rb_comm_group_begin(), rb_status::Success);
                assert_eq!(rb_send(c, null_mut(), o, peer), rb_status::Success);
                assert_eq!(rb_recv(c, null_mut(), g, peer), rb_status::Success);
                assert_eq!(rb_comm_group_end(), rb_status::ShapeMismatch);
                for t in [s, o, g, rs, big] {
                    rb_tensor_destroy(t);
                }
                assert_eq!(rb_comm_destroy(c), rb_status::Success);
                // a destroyed communicator
                assert_eq!(rb_comm_rank(c, &mut rank), rb_status::InvalidHandle);
                assert_eq!(rb_comm_destroy(c), rb_status::InvalidHandle);
                assert_eq!(rb_comm_destroy(null_mut()), rb_status::Success);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

const RB_SUM: i32 = rb_collective_op_sum();
const RB_PROD: i32 = 1;
const RB_MAX: i32 = 2;
const RB_AVG: i32 = 4;
const fn rb_collective_op_sum() -> i32 {
    rocm_backend::ffi::types::rb_collective_op::Sum as i32
}

#[test]
fn c_api_misuse() {
    unsafe {
        let mut id = rb_comm_unique_id { internal: [0; 128] };
        assert_eq!(
            rb_comm_get_unique_id(c"cpu".as_ptr(), null_mut()),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_comm_get_unique_id(c"nope".as_ptr(), &mut id),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_comm_get_unique_id(c"cpu".as_ptr(), &mut id),
            rb_status::Success
        );
        let mut c: *mut rb_comm = null_mut();
        assert_eq!(
            rb_comm_init(c"cpu".as_ptr(), std::ptr::null(), 1, 0, &mut c),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_comm_init(c"cpu".as_ptr(), &id, 1, 0, null_mut()),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_comm_init(c"cpu".as_ptr(), &id, 2, 2, &mut c),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_comm_init(c"cpu".as_ptr(), &id, 2, -1, &mut c),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_comm_init(c"cpu".as_ptr(), &id, -3, 0, &mut c),
            rb_status::InvalidArgument
        );
        assert!(c.is_null());
        assert_eq!(
            rb_comm_init(c"cpu".as_ptr(), &id, 1, 0, &mut c),
            rb_status::Success
        );
        let t = ffi_tensor(&[1.0; 4]);
        let short = ffi_tensor(&[1.0; 3]);
        assert_eq!(
            rb_all_reduce(c, null_mut(), t, t, 9),
            rb_status::InvalidArgument
        );
        assert!(msg().contains("op"), "{}", msg());
        assert_eq!(
            rb_all_reduce(c, null_mut(), t, short, 0),
            rb_status::ShapeMismatch
        );
        assert_eq!(
            rb_all_reduce(null_mut(), null_mut(), t, t, 0),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_all_reduce(t as *mut rb_comm, null_mut(), t, t, 0),
            rb_status::InvalidHandle
        );
        assert_eq!(
            rb_all_reduce(c, null_mut(), std::ptr::null(), t, 0),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_all_reduce(c, null_mut(), c as *const rb_tensor, t, 0),
            rb_status::InvalidHandle
        );
        assert_eq!(
            rb_all_gather(c, null_mut(), t, short),
            rb_status::ShapeMismatch
        );
        assert_eq!(
            rb_reduce_scatter(c, null_mut(), t, short, 0),
            rb_status::ShapeMismatch
        );
        assert_eq!(
            rb_broadcast(c, null_mut(), t, t, 1),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_broadcast(c, null_mut(), t, t, -1),
            rb_status::InvalidArgument
        );
        assert_eq!(rb_send(c, null_mut(), t, 3), rb_status::InvalidArgument);
        assert_eq!(rb_recv(c, null_mut(), t, -2), rb_status::InvalidArgument);
        assert_eq!(
            rb_all_reduce_raw(c, null_mut(), std::ptr::null(), null_mut(), 4, 0, 0),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_all_reduce_raw(c, null_mut(), std::ptr::null(), null_mut(), 0, 0, 0),
            rb_status::Success
        );
        assert_eq!(
            rb_all_reduce_raw(c, null_mut(), std::ptr::null(), null_mut(), 4, 5, 0),
            rb_status::DtypeMismatch
        );
        assert_eq!(
            rb_all_reduce_raw(c, null_mut(), std::ptr::null(), null_mut(), 4, 77, 0),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_all_gather_raw(
                c,
                null_mut(),
                std::ptr::null(),
                null_mut(),
                usize::MAX / 2,
                0
            ),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_send_raw(c, null_mut(), std::ptr::null(), 4, 0, 0),
            rb_status::NullPointer
        );
        assert_eq!(rb_comm_set_timeout_ms(c, 0), rb_status::InvalidArgument);
        assert_eq!(rb_comm_rank(c, null_mut()), rb_status::NullPointer);
        assert_eq!(rb_comm_size(null_mut(), null_mut()), rb_status::NullPointer);
        assert_eq!(rb_comm_destroy(t as *mut rb_comm), rb_status::InvalidHandle);
        assert_eq!(rb_comm_abort(null_mut()), rb_status::NullPointer);
        assert_eq!(rb_comm_abort(c), rb_status::Success);
        assert_eq!(rb_all_reduce(c, null_mut(), t, t, 0), rb_status::Aborted);
        assert_eq!(rb_comm_destroy(c), rb_status::Success);
        assert_eq!(
            rb_all_reduce(c, null_mut(), t, t, 0),
            rb_status::InvalidHandle
        );
        assert_eq!(rb_comm_group_end(), rb_status::InvalidArgument);
        let devs = [c"cpu".as_ptr(), c"cpu".as_ptr()];
        let mut cs: [*mut rb_comm; 2] = [null_mut(); 2];
        assert_eq!(
            rb_comm_init_all(devs.as_ptr(), 0, cs.as_mut_ptr()),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_comm_init_all(std::ptr::null(), 2, cs.as_mut_ptr()),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_comm_init_all(devs.as_ptr(), 2, null_mut()),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_comm_init_all(devs.as_ptr(), 2, cs.as_mut_ptr()),
            rb_status::Success
        );
        let mut size = 0;
        assert_eq!(rb_comm_size(cs[1], &mut size), rb_status::Success);
        assert_eq!(size, 2);
        for c in cs {
            assert_eq!(rb_comm_destroy(c), rb_status::Success);
        }
        rb_tensor_destroy(t);
        rb_tensor_destroy(short);
    }
}

/// One rank on one GPU through RCCL/NCCL: every call. Skips, with the reason, where there is
/// no GPU or no collective library.
#[test]
fn gpu_one_rank_communicator_every_call() {
    let mut ran = false;
    for kind in [DeviceKind::Cuda, DeviceKind::Rocm] {
        let name = format!("{}:0", kind.prefix());
        let dev = match device(DeviceSpec::parse(&name).unwrap()) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("comm: {name} skipped: {}", e.message);
                continue;
            }
        };
        let id = match comm::unique_id(&dev) {
            Ok(id) => id,
            Err(e) if e.kind == ErrorKind::Unsupported => {
                eprintln!(
                    "comm: {name} skipped (no collective library): {}",
                    e.message
                );
                continue;
            }
            Err(e) => panic!("{name}: unique id: {}", e.message),
        };
        let c = Comm::init(dev.clone(), &id, 1, 0).unwrap();
        // an id made for the CPU is refused before NCCL sees it
        let cpu_id = comm::unique_id(&cpu()).unwrap();
        assert_eq!(
            Comm::init(dev.clone(), &cpu_id, 1, 0).unwrap_err().kind,
            ErrorKind::InvalidArgument
        );
        assert_eq!((c.rank(), c.size()), (0, 1));
        let stream = rocm_backend::runtime::Stream::new(dev.clone()).unwrap();
        for d in DTYPES {
            let v = as_dtype(&values(0, 1000, 3), d);
            let x = Tensor::from_bytes(dev.clone(), &encode(&v, d), &[1000], d).unwrap();
            let y = Tensor::empty(dev.clone(), &[1000], d).unwrap();
            for op in ReduceOp::ALL {
                c.all_reduce(Some(&stream), &x, &y, op).unwrap();
                stream.synchronize().unwrap();
                check(
                    &y.to_f64_vec().unwrap(),
                    &v,
                    d,
                    &format!("{name} all_reduce {} {d}", op.name()),
                );
            }
            c.all_gather(Some(&stream), &x, &y).unwrap();
            c.reduce_scatter(Some(&stream), &x, &y, ReduceOp::Sum)
                .unwrap();
            c.broadcast(Some(&stream), Some(&x), &y, 0).unwrap();
            stream.synchronize().unwrap();
            check(
                &y.to_f64_vec().unwrap(),
                &v,
                d,
                &format!("{name} broadcast {d}"),
            );
            let z = Tensor::zeros(dev.clone(), &[1000], d).unwrap();
            comm::group_begin().unwrap();
            c.send(Some(&stream), &x, 0).unwrap();
            c.recv(Some(&stream), &z, 0).unwrap();
            comm::group_end().unwrap();
            stream.synchronize().unwrap();
            check(
                &z.to_f64_vec().unwrap(),
                &v,
                d,
                &format!("{name} send/recv to itself {d}"),
            );
        }
        let bad = Tensor::empty(dev.clone(), &[999], DType::F32).unwrap();
        let x = Tensor::empty(dev.clone(), &[1000], DType::F32).unwrap();
        assert_eq!(
            c.all_reduce(None, &x, &bad, ReduceOp::Sum)
                .unwrap_err()
                .kind,
            ErrorKind::ShapeMismatch
        );
        c.async_error().unwrap();
        // init_all over the one GPU
        let all = Comm::init_all(std::slice::from_ref(&dev)).unwrap();
        all[0].all_reduce(None, &x, &x, ReduceOp::Sum).unwrap();
        all[0].destroy().unwrap();
        c.abort().unwrap();
        assert_eq!(
            c.all_reduce(None, &x, &x, ReduceOp::Sum).unwrap_err().kind,
            ErrorKind::Aborted
        );
        c.destroy().unwrap();
        eprintln!("comm: {name}: one-rank communicator ran every call");
        ran = true;
    }
    if !ran {
        eprintln!("comm: gpu_one_rank_communicator_every_call skipped: no GPU with RCCL/NCCL");
    }
}

/// Every GPU of a kind (two or more) in one communicator through RCCL/NCCL
/// (`Comm::init_all`, one thread driving every rank in groups, each rank on a stream of its
/// own GPU): all_reduce with every op (out of place and in place), reduce_scatter,
/// all_gather, broadcast from every root and a ring of send/recv, every dtype, against the
/// float64 reference of the CPU test. Ignored by default (CI has no GPU): run it with
/// `--ignored` on a machine of two or more GPUs (`scripts/gpu-run.sh comm` does), where it
/// fails unless some kind has two GPUs with their collective library.
#[test]
#[ignore = "needs two or more GPUs with RCCL/NCCL: run with --ignored there"]
fn gpus_every_collective_and_dtype() {
    use rocm_backend::runtime::Stream;
    use rocm_backend::runtime::context::device_count;
    let mut ran = false;
    for kind in [DeviceKind::Cuda, DeviceKind::Rocm] {
        let n = device_count(kind);
        if n < 2 {
            eprintln!(
                "comm: {} skipped for several GPUs: {n} present",
                kind.prefix()
            );
            continue;
        }
        let devs: Vec<Arc<dyn Device>> = (0..n)
            .map(|i| device(DeviceSpec::parse(&format!("{}:{i}", kind.prefix())).unwrap()).unwrap())
            .collect();
        let comms = match Comm::init_all(&devs) {
            Ok(c) => c,
            Err(e) if e.kind == ErrorKind::Unsupported => {
                eprintln!(
                    "comm: {} skipped (no collective library): {}",
                    kind.prefix(),
                    e.message
                );
                continue;
            }
            Err(e) => panic!("{}: init_all over {n} GPUs: {}", kind.prefix(), e.message),
        };
        let streams: Vec<Stream> = devs
            .iter()
            .map(|d| Stream::new(d.clone()).unwrap())
            .collect();
        // One call per rank inside one group, then every stream waited for.
        let each = |f: &dyn Fn(usize, &Comm, &Stream) -> Result<()>| {
            comm::group_begin().unwrap();
            let r = comms
                .iter()
                .zip(&streams)
                .enumerate()
                .try_for_each(|(r, (c, s))| f(r, c, s));
            comm::group_end().unwrap();
            r.unwrap();
            streams.iter().for_each(|s| s.synchronize().unwrap());
        };
        let len = 1000;
        for d in DTYPES {
            let inputs: Vec<Vec<f64>> = (0..n)
                .map(|r| as_dtype(&values(r, len * n, 5), d))
                .collect();
            let on = |r: usize, v: &[f64]| {
                Tensor::from_bytes(devs[r].clone(), &encode(v, d), &[v.len()], d).unwrap()
            };
            let what = |r: usize, k: &str| format!("{} x{n}, {d}, rank {r}: {k}", kind.prefix());
            for op in ReduceOp::ALL {
                let full = reduce_ref(&inputs, op, d);
                let xs: Vec<Tensor> = (0..n).map(|r| on(r, &inputs[r])).collect();
                let ys: Vec<Tensor> = (0..n)
                    .map(|r| Tensor::empty(devs[r].clone(), &[len * n], d).unwrap())
                    .collect();
                each(&|r, c, s| c.all_reduce(Some(s), &xs[r], &ys[r], op));
                each(&|r, c, s| c.all_reduce(Some(s), &xs[r], &xs[r], op));
                let zs: Vec<Tensor> = (0..n)
                    .map(|r| Tensor::empty(devs[r].clone(), &[len], d).unwrap())
                    .collect();
                let fresh: Vec<Tensor> = (0..n).map(|r| on(r, &inputs[r])).collect();
                each(&|r, c, s| c.reduce_scatter(Some(s), &fresh[r], &zs[r], op));
                for r in 0..n {
                    let name = op.name();
                    check(
                        &ys[r].to_f64_vec().unwrap(),
                        &full,
                        d,
                        &what(r, &format!("all_reduce {name}")),
                    );
                    check(
                        &xs[r].to_f64_vec().unwrap(),
                        &full,
                        d,
                        &what(r, &format!("all_reduce {name} in place")),
                    );
                    check(
                        &zs[r].to_f64_vec().unwrap(),
                        &full[r * len..(r + 1) * len],
                        d,
                        &what(r, &format!("reduce_scatter {name}")),
                    );
                }
            }
            let firsts: Vec<Tensor> = (0..n).map(|r| on(r, &inputs[r][..len])).collect();
            let gathered: Vec<Tensor> = (0..n)
                .map(|r| Tensor::zeros(devs[r].clone(), &[len * n], d).unwrap())
                .collect();
            each(&|r, c, s| c.all_gather(Some(s), &firsts[r], &gathered[r]));
            let want: Vec<f64> = inputs.iter().flat_map(|p| p[..len].to_vec()).collect();
            for (r, g) in gathered.iter().enumerate() {
                check(&g.to_f64_vec().unwrap(), &want, d, &what(r, "all_gather"));
            }
            for root in 0..n {
                let xs: Vec<Tensor> = (0..n).map(|r| on(r, &inputs[r])).collect();
                let ys: Vec<Tensor> = (0..n)
                    .map(|r| Tensor::zeros(devs[r].clone(), &[len * n], d).unwrap())
                    .collect();
                each(&|r, c, s| c.broadcast(Some(s), Some(&xs[r]), &ys[r], root));
                each(&|r, c, s| c.broadcast(Some(s), None, &xs[r], root));
                for r in 0..n {
                    let k = format!("broadcast root {root}");
                    check(&ys[r].to_f64_vec().unwrap(), &inputs[root], d, &what(r, &k));
                    check(
                        &xs[r].to_f64_vec().unwrap(),
                        &inputs[root],
                        d,
                        &what(r, &format!("{k} in place")),
                    );
                }
            }
            let xs: Vec<Tensor> = (0..n).map(|r| on(r, &inputs[r])).collect();
            let ys: Vec<Tensor> = (0..n)
                .map(|r| Tensor::zeros(devs[r].clone(), &[len * n], d).unwrap())
                .collect();
            each(&|r, c, s| {
                c.send(Some(s), &xs[r], (r + 1) % n)?;
                c.recv(Some(s), &ys[r], (r + n - 1) % n)
            });
            for (r, y) in ys.iter().enumerate() {
                check(
                    &y.to_f64_vec().unwrap(),
                    &inputs[(r + n - 1) % n],
                    d,
                    &what(r, "ring send/recv"),
                );
            }
        }
        for c in &comms {
            c.async_error().unwrap();
            c.destroy().unwrap();
        }
        eprintln!(
            "comm: {}: {n} GPUs ran every collective and dtype",
            kind.prefix()
        );
        ran = true;
    }
    assert!(ran, "no kind has two or more GPUs with RCCL/NCCL");
}
