/* A table of misuse of the C ABI (DESIGN.md §4, §8): every row makes one mistake a caller can
 * make and checks the exact status, that rb_last_error_message() is non-empty and names the
 * failing function, that out-parameters are untouched, and that nothing crashed.
 *
 * Under AddressSanitizer run it with ASAN_OPTIONS=allocator_may_return_null=1: the
 * out-of-memory rows ask for more memory than exists, and the library must answer
 * RB_STATUS_OUT_OF_MEMORY, which it can only do when malloc returns NULL.
 *
 * Each row runs in its own forked child (the parent never calls the library), so a crash,
 * an abort or a sanitizer report fails that row with the signal instead of ending the run.
 * Prints "misuse: N passed, M failed, K skipped" and exits non-zero when a row failed. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rocm_backend.h"

/* Set by a row when a check beyond the status fails (e.g. an out-parameter was written). */
static const char *g_extra_fail = NULL;

#define SENTINEL ((rb_tensor *)(uintptr_t)0x5a5a5a5aU)

static void setup_fail(const char *what, rb_status st) {
    printf("  setup failed: %s -> %s: %s\n", what, rb_status_string(st), rb_last_error_message());
    fflush(stdout);
    _exit(3);
}

#define MUST(call)                              \
    do {                                        \
        rb_status st_ = (call);                 \
        if (st_ != RB_STATUS_SUCCESS)           \
            setup_fail(#call, st_);             \
    } while (0)

static rb_tensor *mk(int64_t d0, int64_t d1, int32_t dtype) {
    int64_t shape[2] = {d0, d1};
    rb_tensor *t = NULL;
    MUST(rb_tensor_zeros("cpu", shape, 2, dtype, &t));
    return t;
}

static rb_tensor *mk1(int64_t d0, int32_t dtype) {
    rb_tensor *t = NULL;
    MUST(rb_tensor_zeros("cpu", &d0, 1, dtype, &t));
    return t;
}

/* Creation with a mistake: returns the status and checks *out stayed untouched. */
static rb_status create_bad(const char *device, const int64_t *shape, size_t ndim, int32_t dtype) {
    rb_tensor *out = SENTINEL;
    rb_status st = rb_tensor_empty(device, shape, ndim, dtype, &out);
    if (st != RB_STATUS_SUCCESS && out != SENTINEL) g_extra_fail = "*out was written on failure";
    if (st == RB_STATUS_SUCCESS) rb_tensor_destroy(out);
    return st;
}

/* ---- devices ---- */
static rb_status set_device_null(void) { return rb_set_device(NULL); }
static rb_status set_device_unknown(void) { return rb_set_device("tpu:0"); }
static rb_status set_device_empty(void) { return rb_set_device(""); }
static rb_status set_device_rocm0(void) {
    rb_status st = rb_set_device("rocm:0");
    char buf[32];
    if (rb_get_device(buf, sizeof buf) == RB_STATUS_SUCCESS && strncmp(buf, "rocm", 4) == 0)
        g_extra_fail = "current device changed although rb_set_device failed";
    return st;
}
static rb_status set_device_cuda0(void) { return rb_set_device("cuda:0"); }
static rb_status get_device_null(void) { return rb_get_device(NULL, 32); }
static rb_status get_allow_tf32_null(void) { return rb_get_allow_tf32(NULL); }
static rb_status get_device_short(void) {
    char buf[2] = {'x', 'y'};
    rb_status st = rb_get_device(buf, sizeof buf);
    if (buf[0] != 'x' || buf[1] != 'y') g_extra_fail = "buf was written on failure";
    return st;
}
static rb_status device_info_null_out(void) { return rb_device_info("cpu", NULL); }
static rb_status device_info_unknown(void) {
    rb_device_properties p;
    return rb_device_info("gpu7", &p);
}
static rb_status rocm_set_device_negative(void) { return rb_rocm_set_device(-1); }
static rb_status rocm_set_device_0(void) { return rb_rocm_set_device(0); }
static rb_status rocm_get_device_info_0(void) {
    rb_device_properties p;
    return rb_rocm_get_device_info(0, &p);
}
static rb_status rocm_synchronize_on_cpu(void) {
    MUST(rb_set_device("cpu"));
    return rb_rocm_synchronize();
}
static rb_status stream_create_unknown(void) {
    rb_stream *s = (rb_stream *)SENTINEL;
    rb_status st = rb_stream_create("npu", &s);
    if (s != (rb_stream *)SENTINEL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status stream_create_null_out(void) { return rb_stream_create("cpu", NULL); }

/* ---- tensor creation ---- */
static const int64_t shape23[2] = {2, 3};
static rb_status create_null_out(void) { return rb_tensor_empty("cpu", shape23, 2, RB_DTYPE_F32, NULL); }
static rb_status create_null_shape(void) { return create_bad("cpu", NULL, 2, RB_DTYPE_F32); }
static rb_status create_dtype_minus1(void) { return create_bad("cpu", shape23, 2, -1); }
static rb_status create_dtype_99(void) { return create_bad("cpu", shape23, 2, 99); }
static rb_status create_negative_extent(void) {
    const int64_t s[2] = {4, -1};
    return create_bad("cpu", s, 2, RB_DTYPE_F32);
}
static rb_status create_overflow(void) {
    const int64_t s[2] = {INT64_MAX, INT64_MAX};
    return create_bad("cpu", s, 2, RB_DTYPE_F32);
}
static rb_status create_bytes_overflow(void) {
    /* 2^61 elements fit in size_t, 2^61 * 8 bytes do not. */
    const int64_t s[2] = {(int64_t)1 << 31, (int64_t)1 << 30};
    return create_bad("cpu", s, 2, RB_DTYPE_I64);
}
static rb_status create_huge(void) {
    /* 2^62 bytes: a valid size that no machine has; must be OUT_OF_MEMORY, not an abort. */
    const int64_t s[2] = {(int64_t)1 << 30, (int64_t)1 << 30};
    return create_bad("cpu", s, 2, RB_DTYPE_F32);
}
static rb_status zeros_huge(void) {
    const int64_t s[1] = {(int64_t)1 << 41};
    rb_tensor *out = SENTINEL;
    return rb_tensor_zeros("cpu", s, 1, RB_DTYPE_F32, &out);
}
static rb_status create_too_many_dims(void) {
    int64_t s[17];
    for (int i = 0; i < 17; i++) s[i] = 1;
    return create_bad("cpu", s, 17, RB_DTYPE_F32);
}
static rb_status create_unknown_device(void) { return create_bad("fpga", shape23, 2, RB_DTYPE_F32); }
static rb_status create_on_rocm(void) { return create_bad("rocm:0", shape23, 2, RB_DTYPE_F32); }
static rb_status from_host_wrong_nbytes(void) {
    float data[6] = {0};
    rb_tensor *out = SENTINEL;
    rb_status st = rb_tensor_from_host("cpu", data, 5 * sizeof(float), shape23, 2, RB_DTYPE_F32, &out);
    if (out != SENTINEL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status from_host_null_data(void) {
    rb_tensor *out = SENTINEL;
    return rb_tensor_from_host("cpu", NULL, 6 * sizeof(float), shape23, 2, RB_DTYPE_F32, &out);
}
static rb_status randn_int_dtype(void) {
    rb_tensor *out = SENTINEL;
    return rb_tensor_randn("cpu", shape23, 2, RB_DTYPE_I32, 1, &out);
}
static rb_status randint_empty_range(void) {
    rb_tensor *out = SENTINEL;
    return rb_tensor_randint("cpu", shape23, 2, RB_DTYPE_I64, 5, 5, 1, &out);
}
static rb_status randint_float_dtype(void) {
    rb_tensor *out = SENTINEL;
    return rb_tensor_randint("cpu", shape23, 2, RB_DTYPE_F32, 0, 5, 1, &out);
}

/* ---- handles ---- */
static rb_status use_destroyed(void) {
    rb_tensor *t = mk(2, 3, RB_DTYPE_F32);
    MUST(rb_tensor_destroy(t));
    size_t nd = 77;
    rb_status st = rb_tensor_ndim(t, &nd);
    if (nd != 77) g_extra_fail = "ndim was written on failure";
    return st;
}
static rb_status double_destroy(void) {
    rb_tensor *t = mk(2, 3, RB_DTYPE_F32);
    MUST(rb_tensor_destroy(t));
    return rb_tensor_destroy(t);
}
static rb_status stream_as_tensor(void) {
    rb_stream *s = NULL;
    MUST(rb_stream_create("cpu", &s));
    int32_t dt = -7;
    rb_status st = rb_tensor_dtype((const rb_tensor *)(void *)s, &dt);
    if (dt != -7) g_extra_fail = "dtype was written on failure";
    return st;
}
static rb_status tensor_as_stream(void) {
    rb_tensor *t = mk(2, 3, RB_DTYPE_F32);
    return rb_stream_synchronize((rb_stream *)(void *)t);
}
static rb_status destroy_stream_as_tensor(void) {
    rb_stream *s = NULL;
    MUST(rb_stream_create("cpu", &s));
    rb_status st = rb_tensor_destroy((rb_tensor *)(void *)s);
    if (rb_stream_synchronize(s) != RB_STATUS_SUCCESS) g_extra_fail = "the stream was destroyed by rb_tensor_destroy";
    return st;
}
static rb_status made_up_pointer(void) {
    size_t n = 0;
    return rb_tensor_numel((const rb_tensor *)(uintptr_t)0xdeadbeef0ULL, &n);
}
static rb_status pointer_to_caller_memory(void) {
    /* An aligned pointer to real memory that the library never handed out. */
    static uint64_t fake[64];
    return rb_tensor_destroy((rb_tensor *)(void *)fake);
}
static rb_status destroyed_stream_in_op(void) {
    rb_stream *s = NULL;
    MUST(rb_stream_create("cpu", &s));
    MUST(rb_stream_destroy(s));
    rb_tensor *x = mk(2, 3, RB_DTYPE_F32), *out = NULL;
    rb_status st = rb_relu(s, x, &out);
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}

/* ---- queries and copies ---- */
static rb_status ndim_null_out(void) { return rb_tensor_ndim(mk(2, 3, RB_DTYPE_F32), NULL); }
static rb_status ndim_null_tensor(void) {
    size_t n;
    return rb_tensor_ndim(NULL, &n);
}
static rb_status shape_capacity_small(void) {
    int64_t dims[1] = {-5};
    rb_status st = rb_tensor_shape(mk(2, 3, RB_DTYPE_F32), dims, 1);
    if (dims[0] != -5) g_extra_fail = "dims was written on failure";
    return st;
}
static rb_status shape_null_dims(void) { return rb_tensor_shape(mk(2, 3, RB_DTYPE_F32), NULL, 4); }
static rb_status copy_to_host_wrong_size(void) {
    float buf[6];
    return rb_tensor_copy_to_host(mk(2, 3, RB_DTYPE_F32), buf, sizeof buf - 1);
}
static rb_status copy_to_host_too_big(void) {
    float buf[8];
    return rb_tensor_copy_to_host(mk(2, 3, RB_DTYPE_F32), buf, sizeof buf);
}
static rb_status copy_to_host_null(void) { return rb_tensor_copy_to_host(mk(2, 3, RB_DTYPE_F32), NULL, 24); }
static rb_status copy_from_host_wrong_size(void) {
    float buf[6] = {0};
    return rb_tensor_copy_from_host(mk(2, 3, RB_DTYPE_F32), buf, 4);
}
static rb_status reshape_wrong_numel(void) {
    const int64_t s[2] = {4, 2};
    rb_tensor *out = SENTINEL;
    rb_status st = rb_tensor_reshape(mk(2, 3, RB_DTYPE_F32), s, 2, &out);
    if (out != SENTINEL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status reshape_negative(void) {
    const int64_t s[2] = {-2, -3};
    rb_tensor *out = SENTINEL;
    return rb_tensor_reshape(mk(2, 3, RB_DTYPE_F32), s, 2, &out);
}

/* ---- DLPack and the trace export ---- */
/* dlpack.h's layouts (DLPack 1.1), as a caller that includes it would have them. */
typedef struct { int32_t device_type, device_id; } t_dl_device;
typedef struct { uint8_t code, bits; uint16_t lanes; } t_dl_dtype;
typedef struct {
    void *data;
    t_dl_device device;
    int32_t ndim;
    t_dl_dtype dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} t_dl_tensor;
typedef struct t_dl_managed_v {
    uint32_t major, minor;
    void *manager_ctx;
    void (*deleter)(struct t_dl_managed_v *);
    uint64_t flags;
    t_dl_tensor dl_tensor;
} t_dl_managed_v;
static int g_dl_deleted = 0;
static void dl_deleter(t_dl_managed_v *m) { (void)m; g_dl_deleted++; }
static float g_dl_data[6];
static int64_t g_dl_shape[2] = {2, 3};
static int64_t g_dl_strides[2] = {1, 2}; /* a transposed view: not contiguous */
static t_dl_managed_v dl_make(int32_t device_type) {
    t_dl_managed_v m;
    memset(&m, 0, sizeof m);
    m.major = 1;
    m.deleter = dl_deleter;
    m.dl_tensor.data = g_dl_data;
    m.dl_tensor.device.device_type = device_type;
    m.dl_tensor.ndim = 2;
    m.dl_tensor.dtype.code = 2;
    m.dl_tensor.dtype.bits = 32;
    m.dl_tensor.dtype.lanes = 1;
    m.dl_tensor.shape = g_dl_shape;
    return m;
}
static rb_status dlpack_null(void) {
    rb_tensor *out = SENTINEL;
    rb_status st = rb_tensor_from_dlpack(NULL, &out);
    if (out != SENTINEL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status dlpack_strided(void) {
    t_dl_managed_v m = dl_make(1);
    m.dl_tensor.strides = g_dl_strides;
    rb_tensor *out = SENTINEL;
    rb_status st = rb_tensor_from_dlpack(&m, &out);
    if (out != SENTINEL) g_extra_fail = "*out was written on failure";
    if (g_dl_deleted != 0) g_extra_fail = "the deleter ran on failure";
    return st;
}
static rb_status dlpack_vulkan(void) {
    t_dl_managed_v m = dl_make(7);
    rb_tensor *out = SENTINEL;
    rb_status st = rb_tensor_from_dlpack(&m, &out);
    if (g_dl_deleted != 0) g_extra_fail = "the deleter ran on failure";
    return st;
}
static rb_status dlpack_uint32(void) {
    t_dl_managed_v m = dl_make(1);
    m.dl_tensor.dtype.code = 1; /* kDLUInt: uint32 has no rb_dtype (float64 is RB_DTYPE_F64) */
    rb_tensor *out = SENTINEL;
    return rb_tensor_from_dlpack(&m, &out);
}
static rb_status dlpack_misaligned(void) {
    t_dl_managed_v m = dl_make(1);
    m.dl_tensor.byte_offset = 2;
    m.dl_tensor.shape[0] = 1;
    rb_tensor *out = SENTINEL;
    rb_status st = rb_tensor_from_dlpack(&m, &out);
    m.dl_tensor.shape[0] = 2;
    return st;
}
static rb_status dlpack_read_only_write(void) {
    t_dl_managed_v m = dl_make(1);
    m.flags = 1; /* DLPACK_FLAG_BITMASK_READ_ONLY */
    rb_tensor *t = NULL;
    MUST(rb_tensor_from_dlpack(&m, &t));
    return rb_fill(NULL, t, 1.0);
}
static rb_status to_dlpack_bad_flags(void) {
    void *m = NULL;
    return rb_tensor_to_dlpack(mk(2, 3, RB_DTYPE_F32), 1u << 7, false, &m);
}
static rb_status to_dlpack_null_out(void) { return rb_tensor_to_dlpack(mk(2, 3, RB_DTYPE_F32), 0, false, NULL); }
static rb_status trace_null_path(void) { return rb_profiler_export_chrome_trace(NULL); }
static rb_status trace_unwritable(void) { return rb_profiler_export_chrome_trace("/nonexistent-dir/x/t.json"); }

/* ---- eager ops ---- */
static rb_status matmul_inner_mismatch(void) {
    rb_tensor *out = NULL;
    rb_status st = rb_matmul(NULL, mk(2, 3, RB_DTYPE_F32), mk(4, 5, RB_DTYPE_F32), &out);
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status matmul_dtype_mismatch(void) {
    rb_tensor *out = NULL;
    return rb_matmul(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 4, RB_DTYPE_F16), &out);
}
static rb_status matmul_int(void) {
    rb_tensor *out = NULL;
    return rb_matmul(NULL, mk(2, 3, RB_DTYPE_I32), mk(3, 4, RB_DTYPE_I32), &out);
}
static rb_status matmul_wrong_out_shape(void) {
    rb_tensor *out = mk(3, 3, RB_DTYPE_F32);
    return rb_matmul(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 4, RB_DTYPE_F32), &out);
}
static rb_status matmul_null_a(void) {
    rb_tensor *out = NULL;
    return rb_matmul(NULL, NULL, mk(3, 4, RB_DTYPE_F32), &out);
}
static rb_status add_no_broadcast(void) {
    rb_tensor *out = NULL;
    return rb_add(NULL, mk(2, 3, RB_DTYPE_F32), mk1(4, RB_DTYPE_F32), &out);
}
static rb_status add_null_out(void) { return rb_add(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), NULL); }
static rb_status add_destroyed_out(void) {
    rb_tensor *out = mk(2, 3, RB_DTYPE_F32);
    MUST(rb_tensor_destroy(out));
    return rb_add(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), &out);
}
static rb_status add_out_wrong_dtype(void) {
    rb_tensor *out = mk(2, 3, RB_DTYPE_F16);
    return rb_add(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), &out);
}
static rb_status add_dtype_mismatch(void) {
    rb_tensor *out = NULL;
    return rb_add(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_I64), &out);
}
static rb_status relu_bool(void) {
    rb_tensor *out = NULL;
    return rb_relu(NULL, mk(2, 3, RB_DTYPE_BOOL), &out);
}
static rb_status hardswish_int(void) {
    rb_tensor *out = NULL;
    return rb_hardswish(NULL, mk(2, 3, RB_DTYPE_I32), &out);
}
static rb_status hardswish_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_hardswish_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status leaky_relu_int(void) {
    rb_tensor *out = NULL;
    return rb_leaky_relu(NULL, mk(2, 3, RB_DTYPE_I32), 1.0f, &out);
}
static rb_status leaky_relu_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_leaky_relu_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), 1.0f, &out);
}
static rb_status elu_int(void) {
    rb_tensor *out = NULL;
    return rb_elu(NULL, mk(2, 3, RB_DTYPE_I32), 1.0f, &out);
}
static rb_status elu_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_elu_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), 1.0f, &out);
}
static rb_status selu_int(void) {
    rb_tensor *out = NULL;
    return rb_selu(NULL, mk(2, 3, RB_DTYPE_I32), &out);
}
static rb_status selu_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_selu_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status celu_int(void) {
    rb_tensor *out = NULL;
    return rb_celu(NULL, mk(2, 3, RB_DTYPE_I32), 1.0f, &out);
}
static rb_status celu_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_celu_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), 1.0f, &out);
}
static rb_status hardsigmoid_int(void) {
    rb_tensor *out = NULL;
    return rb_hardsigmoid(NULL, mk(2, 3, RB_DTYPE_I32), &out);
}
static rb_status hardsigmoid_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_hardsigmoid_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status softplus_int(void) {
    rb_tensor *out = NULL;
    return rb_softplus(NULL, mk(2, 3, RB_DTYPE_I32), 1.0f, 1.0f, &out);
}
static rb_status softplus_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_softplus_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), 1.0f, 1.0f, &out);
}
static rb_status softsign_int(void) {
    rb_tensor *out = NULL;
    return rb_softsign(NULL, mk(2, 3, RB_DTYPE_I32), &out);
}
static rb_status softsign_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_softsign_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status mish_int(void) {
    rb_tensor *out = NULL;
    return rb_mish(NULL, mk(2, 3, RB_DTYPE_I32), &out);
}
static rb_status mish_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_mish_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status erf_int(void) {
    rb_tensor *out = NULL;
    return rb_erf(NULL, mk(2, 3, RB_DTYPE_I32), &out);
}
static rb_status erf_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_erf_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status sign_bool(void) {
    rb_tensor *out = NULL;
    return rb_sign(NULL, mk(2, 3, RB_DTYPE_BOOL), &out);
}
static rb_status sign_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_sign_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status floor_int(void) {
    rb_tensor *out = NULL;
    return rb_floor(NULL, mk(2, 3, RB_DTYPE_I32), &out);
}
static rb_status floor_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_floor_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status ceil_int(void) {
    rb_tensor *out = NULL;
    return rb_ceil(NULL, mk(2, 3, RB_DTYPE_I32), &out);
}
static rb_status ceil_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_ceil_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status round_int(void) {
    rb_tensor *out = NULL;
    return rb_round(NULL, mk(2, 3, RB_DTYPE_I32), &out);
}
static rb_status round_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_round_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status reciprocal_int(void) {
    rb_tensor *out = NULL;
    return rb_reciprocal(NULL, mk(2, 3, RB_DTYPE_I32), &out);
}
static rb_status reciprocal_backward_shape(void) {
    rb_tensor *out = NULL;
    return rb_reciprocal_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), &out);
}
static rb_status prelu_weight_size(void) {
    rb_tensor *out = NULL;
    return rb_prelu(NULL, mk(2, 3, RB_DTYPE_F32), mk1(5, RB_DTYPE_F32), &out);
}
static rb_status pad_null_pads(void) {
    rb_tensor *out = NULL;
    return rb_pad(NULL, mk(2, 3, RB_DTYPE_F32), NULL, 2, 0, 0.0, &out);
}
static rb_status pad_bad_mode(void) {
    int64_t pads[2] = {1, 1};
    rb_tensor *out = NULL;
    return rb_pad(NULL, mk(2, 3, RB_DTYPE_F32), pads, 2, 7, 0.0, &out);
}
static rb_status cumsum_bad_dim(void) {
    rb_tensor *out = NULL;
    return rb_cumsum(NULL, mk(2, 3, RB_DTYPE_F32), 5, 0, 0, &out);
}
static rb_status cumsum_int_out_not_i64(void) {
    /* PyTorch's integer cumsum is i64: an i32 out for an i32 input is refused. */
    rb_tensor *out = mk(2, 3, RB_DTYPE_I32);
    return rb_cumsum(NULL, mk(2, 3, RB_DTYPE_I32), 1, 0, 0, &out);
}
static rb_status cumsum_backward_int(void) {
    rb_tensor *out = NULL;
    return rb_cumsum_backward(NULL, mk(2, 3, RB_DTYPE_I64), 1, 0, 0, &out);
}
static rb_status clamp_int_fractional_bound(void) {
    /* torch would promote the result to float: cast first. */
    rb_tensor *out = NULL;
    return rb_clamp(NULL, mk(2, 3, RB_DTYPE_I32), 2.5, 4.0, &out);
}
static rb_status clamp_u8_bound_overflows(void) {
    rb_tensor *out = NULL;
    return rb_clamp(NULL, mk(2, 3, RB_DTYPE_U8), -1000.0, INFINITY, &out);
}
static rb_status clamp_bool(void) {
    rb_tensor *out = NULL;
    return rb_clamp(NULL, mk(2, 3, RB_DTYPE_BOOL), 0.0, 1.0, &out);
}
static rb_status one_hot_float_index(void) {
    rb_tensor *out = NULL;
    return rb_one_hot(NULL, mk(2, 3, RB_DTYPE_F32), 4, &out);
}
static rb_status index_select_bad_dim(void) {
    rb_tensor *out = NULL;
    return rb_index_select(NULL, mk(2, 3, RB_DTYPE_F32), 3, mk1(2, RB_DTYPE_I64), &out);
}
static rb_status scatter_add_float_index(void) {
    rb_tensor *out = NULL;
    return rb_scatter_add(NULL, mk(2, 3, RB_DTYPE_F32), 1, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), &out);
}
static rb_status index_copy_float_index(void) {
    return rb_index_copy(NULL, mk(2, 3, RB_DTYPE_F32), 1, mk1(2, RB_DTYPE_F32), mk(2, 2, RB_DTYPE_F32));
}
static rb_status index_copy_backward_null_out(void) {
    return rb_index_copy_backward(NULL, mk(2, 3, RB_DTYPE_F32), 1, mk1(2, RB_DTYPE_I64), NULL, NULL);
}
static rb_status topk_k_too_large(void) {
    rb_tensor *values = NULL, *indices = NULL;
    return rb_topk(NULL, mk(2, 3, RB_DTYPE_F32), 4, -1, 1, 1, &values, &indices);
}
static rb_status topk_bool(void) {
    rb_tensor *values = NULL, *indices = NULL;
    return rb_topk(NULL, mk(2, 3, RB_DTYPE_BOOL), 1, -1, 1, 1, &values, &indices);
}
static rb_status topk_backward_null_shape(void) {
    rb_tensor *out = NULL;
    return rb_topk_backward(NULL, mk(2, 1, RB_DTYPE_F32), NULL, 2, 1, mk(2, 1, RB_DTYPE_I64), &out);
}
static rb_status scatter_bad_reduce(void) {
    rb_tensor *out = NULL;
    return rb_scatter(NULL, mk(2, 3, RB_DTYPE_F32), 1, mk(2, 3, RB_DTYPE_I64), mk(2, 3, RB_DTYPE_F32), 9, &out);
}
static rb_status scatter_float_index(void) {
    rb_tensor *out = NULL;
    return rb_scatter(NULL, mk(2, 3, RB_DTYPE_F32), 1, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), RB_SCATTER_REDUCE_NONE, &out);
}
static rb_status scatter_backward_mul(void) {
    rb_tensor *dx = NULL, *dsrc = NULL;
    return rb_scatter_backward(NULL, mk(2, 3, RB_DTYPE_F32), 1, mk(2, 3, RB_DTYPE_I64), RB_SCATTER_REDUCE_MUL, &dx, &dsrc);
}
static rb_status arange_zero_step(void) {
    rb_tensor *out = NULL;
    return rb_arange(NULL, 0.0, 5.0, 0.0, RB_DTYPE_F32, &out);
}
static rb_status arange_null_out(void) { return rb_arange(NULL, 0.0, 5.0, 1.0, RB_DTYPE_F32, NULL); }
static rb_status arange_bool(void) {
    rb_tensor *out = NULL;
    return rb_arange(NULL, 0.0, 5.0, 1.0, RB_DTYPE_BOOL, &out);
}
static rb_status silu_i8(void) {
    rb_tensor *out = NULL;
    return rb_silu(NULL, mk(2, 3, RB_DTYPE_I8), &out);
}
static rb_status exp_i16(void) {
    rb_tensor *out = NULL;
    return rb_exp(NULL, mk(2, 3, RB_DTYPE_I16), &out);
}
static rb_status add_i8_f64(void) {
    rb_tensor *out = NULL;
    return rb_add(NULL, mk(2, 3, RB_DTYPE_I8), mk(2, 3, RB_DTYPE_F64), &out);
}
static rb_status div_u8(void) {
    rb_tensor *out = NULL;
    return rb_div(NULL, mk(2, 3, RB_DTYPE_U8), mk(2, 3, RB_DTYPE_U8), &out);
}
static rb_status matmul_i16(void) {
    rb_tensor *out = NULL;
    return rb_matmul(NULL, mk(2, 2, RB_DTYPE_I16), mk(2, 2, RB_DTYPE_I16), &out);
}
static rb_status create_dtype_10(void) { return create_bad("cpu", shape23, 2, 10); }
static rb_status trilu_rank1(void) {
    rb_tensor *out = NULL;
    return rb_trilu(NULL, mk1(4, RB_DTYPE_F32), 1, 0, &out);
}
static rb_status expand_null_shape(void) {
    rb_tensor *out = NULL;
    return rb_expand(NULL, mk(2, 3, RB_DTYPE_F32), NULL, 2, &out);
}
static rb_status tile_null_repeats(void) {
    rb_tensor *out = NULL;
    return rb_tile(NULL, mk(2, 3, RB_DTYPE_F32), NULL, 2, &out);
}
static rb_status flatten_bad_dims(void) {
    rb_tensor *out = NULL;
    return rb_flatten(NULL, mk(2, 3, RB_DTYPE_F32), 1, 0, &out);
}
static rb_status interpolate_null_size(void) {
    rb_tensor *out = NULL;
    return rb_interpolate(NULL, mk(2, 3, RB_DTYPE_F32), NULL, 1, 0, 0, &out);
}
static rb_status lrn_rank2(void) {
    rb_tensor *out = NULL;
    return rb_local_response_norm(NULL, mk(2, 3, RB_DTYPE_F32), 0, 1e-4, 0.75, 1.0, &out);
}
static rb_status max_unpool_rank2(void) {
    int64_t size[1] = {6};
    rb_tensor *out = NULL;
    return rb_max_unpool(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), size, 1, &out);
}
static rb_status to_channels_last_rank2(void) {
    rb_tensor *out = NULL;
    return rb_to_channels_last(NULL, mk1(4, RB_DTYPE_F32), &out);
}
static rb_status to_channels_first_null(void) {
    rb_tensor *out = NULL;
    return rb_to_channels_first(NULL, NULL, &out);
}
static rb_status graph_destroyed(void) {
    rb_graph *g = NULL;
    MUST(rb_graph_create("cpu", &g));
    MUST(rb_graph_destroy(g));
    size_t n = 0;
    return rb_graph_num_nodes(g, &n);
}
static rb_status executor_destroyed(void) {
    rb_executor *e = NULL;
    rb_graph *g = NULL;
    rb_tensor *x = NULL, *y = NULL;
    rb_stream *s = NULL;
    const int64_t shape[1] = {3};
    MUST(rb_graph_create("cpu", &g));
    MUST(rb_stream_create("cpu", &s));
    MUST(rb_graph_input(g, shape, 1, RB_DTYPE_F32, &x));
    MUST(rb_graph_capture_begin(g, s));
    MUST(rb_relu(s, x, &y));
    MUST(rb_graph_capture_end(g, s));
    MUST(rb_graph_mark_output(g, y, NULL));
    MUST(rb_executor_create(g, NULL, &e));
    MUST(rb_executor_destroy(e));
    rb_executor_stats st;
    return rb_executor_get_stats(e, &st);
}
static rb_status executor_no_outputs(void) {
    rb_graph *g = NULL;
    rb_executor *e = NULL;
    MUST(rb_graph_create("cpu", &g));
    return rb_executor_create(g, NULL, &e);
}
static rb_status executor_level_9(void) {
    rb_graph *g = NULL;
    rb_executor *e = NULL;
    rb_executor_config c;
    MUST(rb_graph_create("cpu", &g));
    MUST(rb_executor_config_default(&c));
    c.opt_level = 9;
    return rb_executor_create(g, &c, &e);
}
static rb_executor *relu_executor(void) {
    rb_executor *e = NULL;
    rb_graph *g = NULL;
    rb_tensor *x = NULL, *y = NULL;
    rb_stream *s = NULL;
    const int64_t shape[2] = {2, 3};
    MUST(rb_graph_create("cpu", &g));
    MUST(rb_stream_create("cpu", &s));
    MUST(rb_graph_input(g, shape, 2, RB_DTYPE_F32, &x));
    MUST(rb_graph_capture_begin(g, s));
    MUST(rb_relu(s, x, &y));
    MUST(rb_graph_capture_end(g, s));
    MUST(rb_graph_mark_output(g, y, NULL));
    MUST(rb_executor_create(g, NULL, &e));
    return e;
}
static rb_status executor_wrong_input_count(void) {
    rb_tensor *outs[1] = {NULL};
    return rb_executor_run(relu_executor(), NULL, NULL, 0, outs, 1);
}
static rb_status executor_wrong_dtype(void) {
    const rb_tensor *ins[1] = {mk(2, 3, RB_DTYPE_I32)};
    rb_tensor *outs[1] = {NULL};
    return rb_executor_run(relu_executor(), NULL, ins, 1, outs, 1);
}
static rb_status executor_wrong_rank(void) {
    const rb_tensor *ins[1] = {mk1(6, RB_DTYPE_F32)};
    rb_tensor *outs[1] = {NULL};
    return rb_executor_run(relu_executor(), NULL, ins, 1, outs, 1);
}
static rb_status executor_null_inputs(void) {
    rb_tensor *outs[1] = {NULL};
    return rb_executor_run(relu_executor(), NULL, NULL, 1, outs, 1);
}
static rb_status graph_placeholder_to_host(void) {
    rb_graph *g = NULL;
    rb_tensor *x = NULL;
    const int64_t shape[1] = {3};
    float buf[3];
    MUST(rb_graph_create("cpu", &g));
    MUST(rb_graph_input(g, shape, 1, RB_DTYPE_F32, &x));
    return rb_tensor_copy_to_host(x, buf, sizeof buf);
}
static rb_status graph_placeholder_other_stream(void) {
    rb_graph *g = NULL;
    rb_tensor *x = NULL, *y = NULL;
    rb_stream *s = NULL;
    const int64_t shape[1] = {3};
    MUST(rb_graph_create("cpu", &g));
    MUST(rb_stream_create("cpu", &s));
    MUST(rb_graph_input(g, shape, 1, RB_DTYPE_F32, &x));
    MUST(rb_graph_capture_begin(g, s));
    return rb_relu(NULL, x, &y);
}
static rb_status graph_capture_twice(void) {
    rb_graph *g = NULL;
    rb_stream *s = NULL;
    MUST(rb_graph_create("cpu", &g));
    MUST(rb_stream_create("cpu", &s));
    MUST(rb_graph_capture_begin(g, s));
    return rb_graph_capture_begin(g, s);
}
static rb_status graph_capture_null_stream(void) {
    rb_graph *g = NULL;
    MUST(rb_graph_create("cpu", &g));
    return rb_graph_capture_begin(g, NULL);
}
static rb_status graph_mark_foreign(void) {
    rb_graph *g = NULL;
    MUST(rb_graph_create("cpu", &g));
    return rb_graph_mark_output(g, mk(2, 2, RB_DTYPE_F32), NULL);
}
static rb_status graph_input_bad_dtype(void) {
    rb_graph *g = NULL;
    rb_tensor *x = NULL;
    const int64_t shape[1] = {3};
    MUST(rb_graph_create("cpu", &g));
    return rb_graph_input(g, shape, 1, 99, &x);
}
static rb_status graph_as_stream(void) {
    rb_graph *g = NULL;
    rb_tensor *out = NULL;
    MUST(rb_graph_create("cpu", &g));
    return rb_relu((rb_stream *)(void *)g, mk(2, 2, RB_DTYPE_F32), &out);
}
static rb_status graph_raw_call_into_placeholder(void) {
    rb_graph *g = NULL;
    rb_stream *s = NULL;
    rb_tensor *x = NULL;
    void *p = NULL;
    const int64_t shape[1] = {4};
    static float y[4];
    MUST(rb_graph_create("cpu", &g));
    MUST(rb_stream_create("cpu", &s));
    MUST(rb_graph_input(g, shape, 1, RB_DTYPE_F32, &x));
    MUST(rb_tensor_data_ptr(x, &p));
    MUST(rb_graph_capture_begin(g, s));
    return rb_kernel_relu(s, RB_DTYPE_F32, p, y, 4);
}
static rb_status graph_event_record_on_recorded_stream(void) {
    rb_graph *g = NULL;
    rb_stream *s = NULL;
    rb_event *e = NULL;
    MUST(rb_graph_create("cpu", &g));
    MUST(rb_stream_create("cpu", &s));
    MUST(rb_event_create("cpu", &e));
    MUST(rb_graph_capture_begin(g, s));
    return rb_event_record(e, s);
}
static rb_status can_fuse_null_name(void) {
    const char *names[2] = {"add", NULL};
    int32_t p;
    return rb_can_fuse(names, 2, &p);
}
static rb_status relu_stream_as_tensor(void) {
    rb_stream *s = NULL;
    MUST(rb_stream_create("cpu", &s));
    rb_tensor *out = NULL;
    return rb_relu(NULL, (const rb_tensor *)(void *)s, &out);
}

/* ---- BLAS on host pointers ---- */
static float A[64], B[64], C[64];
static rb_status sgemm_lda_small(void) {
    return rb_blas_sgemm(NULL, RB_OPERATION_NONE, RB_OPERATION_NONE, 4, 4, 4, 1.0f, A, 3, B, 4, 0.0f, C, 4);
}
static rb_status sgemm_negative_m(void) {
    return rb_blas_sgemm(NULL, RB_OPERATION_NONE, RB_OPERATION_NONE, -1, 4, 4, 1.0f, A, 4, B, 4, 0.0f, C, 4);
}
static rb_status sgemm_bad_trans(void) {
    return rb_blas_sgemm(NULL, 7, RB_OPERATION_NONE, 4, 4, 4, 1.0f, A, 4, B, 4, 0.0f, C, 4);
}
static rb_status sgemm_null_a(void) {
    return rb_blas_sgemm(NULL, RB_OPERATION_NONE, RB_OPERATION_NONE, 4, 4, 4, 1.0f, NULL, 4, B, 4, 0.0f, C, 4);
}
static rb_status sgemm_stream_is_tensor(void) {
    rb_tensor *t = mk(2, 2, RB_DTYPE_F32);
    return rb_blas_sgemm((rb_stream *)(void *)t, RB_OPERATION_NONE, RB_OPERATION_NONE, 4, 4, 4, 1.0f, A, 4,
                         B, 4, 0.0f, C, 4);
}
static rb_status gemm_batched_int_dtype(void) {
    return rb_blas_gemm_strided_batched(NULL, RB_DTYPE_I32, RB_OPERATION_NONE, RB_OPERATION_NONE, 2, 2, 2,
                                        1.0f, A, 2, 4, B, 2, 4, 0.0f, C, 2, 4, 2);
}
static rb_status gemm_batched_dtype_99(void) {
    return rb_blas_gemm_strided_batched(NULL, 99, RB_OPERATION_NONE, RB_OPERATION_NONE, 2, 2, 2, 1.0f, A,
                                        2, 4, B, 2, 4, 0.0f, C, 2, 4, 2);
}
static rb_status geam_c_overlaps_transposed_a(void) {
    return rb_blas_geam(NULL, RB_DTYPE_F32, RB_OPERATION_TRANSPOSE, RB_OPERATION_NONE, 4, 4, 1.0f, A, 4, 1.0f,
                        B, 4, A, 4);
}
static rb_status geam_null_c(void) {
    return rb_blas_geam(NULL, RB_DTYPE_F32, RB_OPERATION_NONE, RB_OPERATION_NONE, 4, 4, 1.0f, A, 4, 1.0f, B,
                        4, NULL, 4);
}
static rb_status dnn_reduce_bad_op(void) { return rb_dnn_reduce(NULL, 5, RB_DTYPE_F32, A, 2, 4, 2, C); }
static rb_status dnn_argmax_empty_r(void) {
    static int64_t idx[4];
    return rb_dnn_argmax(NULL, RB_DTYPE_F32, A, 2, 0, 2, idx);
}
static rb_status argmax_all_null_x(void) {
    rb_tensor *out = NULL;
    return rb_argmax_all(NULL, NULL, 0, &out);
}
static rb_status argmax_all_empty(void) {
    rb_tensor *out = NULL;
    return rb_argmax_all(NULL, mk(0, 3, RB_DTYPE_F32), 0, &out);
}
static rb_status argmax_all_bool(void) {
    rb_tensor *out = NULL;
    return rb_argmax_all(NULL, mk(2, 3, RB_DTYPE_BOOL), 0, &out);
}
static rb_status argmax_all_keepdim_2(void) {
    rb_tensor *out = NULL;
    return rb_argmax_all(NULL, mk(2, 3, RB_DTYPE_F32), 2, &out);
}
static rb_status argmax_all_out_wrong_shape(void) {
    rb_tensor *out = mk1(1, RB_DTYPE_I64);
    return rb_argmax_all(NULL, mk(2, 3, RB_DTYPE_F32), 0, &out);
}
static rb_status copy_strided_ndim_17(void) {
    static const int64_t shape[17] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    return rb_kernel_copy_strided(NULL, 4, 17, shape, A, shape, C, shape);
}
static rb_status copy_strided_negative_stride(void) {
    static const int64_t shape[2] = {4, 4}, ss[2] = {-4, 1}, ds[2] = {4, 1};
    return rb_kernel_copy_strided(NULL, 4, 2, shape, A + 32, ss, C, ds);
}

/* ---- raw entry points on empty problems (issue 17 items 4, 5) ----
 * The stream is looked up before any early return, and indices and group counts are checked
 * even when there is nothing to compute. */
static rb_stream *dead_stream(void) {
    rb_stream *s = NULL;
    MUST(rb_stream_create("cpu", &s));
    MUST(rb_stream_destroy(s));
    return s;
}
static rb_stream *tensor_stream(void) { return (rb_stream *)(void *)mk(2, 3, RB_DTYPE_F32); }
static rb_status kernel_relu_dead_stream_n0(void) { return rb_kernel_relu(dead_stream(), RB_DTYPE_F32, NULL, NULL, 0); }
static rb_status kernel_relu_tensor_stream_n0(void) {
    return rb_kernel_relu(tensor_stream(), RB_DTYPE_F32, NULL, NULL, 0);
}
static rb_status dnn_softmax_dead_stream_empty(void) {
    return rb_dnn_softmax_forward(dead_stream(), RB_DTYPE_F32, false, 0, 0, 0, NULL, NULL);
}
static rb_status dnn_softmax_tensor_stream_empty(void) {
    return rb_dnn_softmax_forward(tensor_stream(), RB_DTYPE_F32, false, 0, 0, 0, NULL, NULL);
}
static rb_status sgemm_dead_stream_empty(void) {
    return rb_blas_sgemm(dead_stream(), RB_OPERATION_NONE, RB_OPERATION_NONE, 0, 0, 0, 1.0f, NULL, 1, NULL, 1,
                         0.0f, NULL, 1);
}
static rb_status sgemm_tensor_stream_empty(void) {
    return rb_blas_sgemm(tensor_stream(), RB_OPERATION_NONE, RB_OPERATION_NONE, 0, 0, 0, 1.0f, NULL, 1, NULL,
                         1, 0.0f, NULL, 1);
}
static rb_status kernel_embedding_backward_no_rows(void) {
    static const int64_t idx[1] = {0};
    C[0] = 7.0f;
    rb_status st = rb_kernel_embedding_backward(NULL, RB_DTYPE_F32, A, RB_DTYPE_I64, idx, 1, 0, 2, C);
    if (C[0] != 7.0f) g_extra_fail = "dw was written";
    return st;
}
static rb_status embedding_backward_no_rows(void) {
    rb_tensor *out = NULL;
    rb_status st = rb_embedding_backward(NULL, mk(1, 2, RB_DTYPE_F32), mk1(1, RB_DTYPE_I64), 0, &out);
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}
/* ---- issue 17: tensor bounds, alpha, negative steps, gather/take, max/min with indices,
 * the backward ops of matmul, permute, concat, slice, where and conv_transpose ---- */
static rb_tensor *mk_i64(const int64_t *vals, int64_t n) {
    rb_tensor *t = NULL;
    MUST(rb_tensor_from_host("cpu", vals, (size_t)n * sizeof(int64_t), &n, 1, RB_DTYPE_I64, &t));
    return t;
}
static rb_status clamp_tensor_no_bounds(void) {
    rb_tensor *out = NULL;
    rb_status st = rb_clamp_tensor(NULL, mk(2, 3, RB_DTYPE_F32), NULL, NULL, &out);
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status clamp_tensor_backward_dy_shape(void) {
    rb_tensor *dx = NULL, *dmin = NULL;
    rb_status st = rb_clamp_tensor_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk1(3, RB_DTYPE_F32), NULL,
                                            mk(3, 3, RB_DTYPE_F32), &dx, &dmin, NULL);
    if (dx != NULL || dmin != NULL) g_extra_fail = "a gradient was written on failure";
    return st;
}
static rb_status where_backward_cond_not_bool(void) {
    rb_tensor *da = NULL, *db = NULL;
    return rb_where_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32),
                             mk(2, 3, RB_DTYPE_F32), &da, &db);
}
static rb_status add_scaled_int_fractional_alpha(void) {
    rb_tensor *out = NULL;
    return rb_add_scaled(NULL, mk(2, 3, RB_DTYPE_I32), mk(2, 3, RB_DTYPE_I32), 0.5, &out);
}
static rb_status sub_scaled_nan_alpha(void) {
    rb_tensor *out = NULL;
    return rb_sub_scaled(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), (double)NAN, &out);
}
static rb_status add_scaled_backward_null_dy(void) {
    rb_tensor *da = NULL, *db = NULL;
    return rb_add_scaled_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), NULL, 2.0, &da, &db);
}
static rb_status sub_scaled_backward_dy_shape(void) {
    rb_tensor *da = NULL, *db = NULL;
    return rb_sub_scaled_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), mk(3, 2, RB_DTYPE_F32), 2.0,
                                  &da, &db);
}
static rb_status max_dim_empty_dim(void) {
    rb_tensor *v = NULL, *i = NULL;
    rb_status st = rb_max_dim(NULL, mk(0, 3, RB_DTYPE_F32), 0, 0, &v, &i);
    if (v != NULL || i != NULL) g_extra_fail = "an output was written on failure";
    return st;
}
static rb_status min_dim_null_indices(void) {
    rb_tensor *v = NULL;
    return rb_min_dim(NULL, mk(2, 3, RB_DTYPE_F32), 1, 0, &v, NULL);
}
static rb_status max_dim_backward_index_out_of_range(void) {
    static const int64_t idx[2] = {0, 3}, xs[2] = {2, 3};
    rb_tensor *out = NULL;
    return rb_max_dim_backward(NULL, mk1(2, RB_DTYPE_F32), mk_i64(idx, 2), xs, 2, 1, 0, &out);
}
static rb_status permute_backward_not_a_permutation(void) {
    static const int64_t perm[2] = {1, 1};
    rb_tensor *out = NULL;
    return rb_permute_backward(NULL, mk(2, 3, RB_DTYPE_F32), perm, 2, &out);
}
static rb_status concat_backward_index_out_of_range(void) {
    const rb_tensor *xs[2] = {mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32)};
    rb_tensor *out = NULL;
    return rb_concat_backward(NULL, mk(4, 3, RB_DTYPE_F32), xs, 2, 0, 2, &out);
}
static rb_status slice_step_zero(void) {
    rb_tensor *out = NULL;
    return rb_slice(NULL, mk(2, 3, RB_DTYPE_F32), 1, 0, 3, 0, &out);
}
static rb_status slice_backward_step_zero(void) {
    static const int64_t xs[2] = {2, 3};
    rb_tensor *out = NULL;
    return rb_slice_backward(NULL, mk(2, 3, RB_DTYPE_F32), xs, 2, 1, 0, 3, 0, &out);
}
static rb_status gather_index_out_of_range(void) {
    static const int64_t idx[2] = {0, -4};
    const int64_t s[2] = {1, 2};
    rb_tensor *index = NULL, *out = NULL;
    MUST(rb_tensor_from_host("cpu", idx, sizeof idx, s, 2, RB_DTYPE_I64, &index));
    rb_status st = rb_gather(NULL, mk(2, 3, RB_DTYPE_F32), 1, index, &out);
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status gather_backward_dy_shape(void) {
    static const int64_t xs[2] = {2, 3};
    rb_tensor *out = NULL;
    return rb_gather_backward(NULL, mk(2, 2, RB_DTYPE_F32), xs, 2, 1, mk(1, 2, RB_DTYPE_I64), &out);
}
static rb_status take_float_indices(void) {
    rb_tensor *out = NULL;
    return rb_take(NULL, mk(2, 3, RB_DTYPE_F32), 0, mk1(2, RB_DTYPE_F32), &out);
}
static rb_status take_backward_dy_shape(void) {
    static const int64_t xs[2] = {2, 3};
    rb_tensor *out = NULL;
    return rb_take_backward(NULL, mk(2, 3, RB_DTYPE_F32), xs, 2, 0, mk1(4, RB_DTYPE_I64), &out);
}
static rb_status matmul_backward_dy_shape(void) {
    rb_tensor *da = NULL, *db = NULL;
    rb_status st = rb_matmul_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(3, 4, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), &da,
                                      &db);
    if (da != NULL || db != NULL) g_extra_fail = "a gradient was written on failure";
    return st;
}
static rb_status conv_transpose_backward_data_null_params(void) {
    static const int64_t xs[4] = {1, 2, 3, 3};
    int64_t ws[4] = {2, 3, 2, 2}, dys[4] = {1, 3, 4, 4};
    rb_tensor *w = NULL, *dy = NULL, *out = NULL;
    MUST(rb_tensor_zeros("cpu", ws, 4, RB_DTYPE_F32, &w));
    MUST(rb_tensor_zeros("cpu", dys, 4, RB_DTYPE_F32, &dy));
    return rb_conv_transpose_backward_data(NULL, dy, w, xs, 4, NULL, &out);
}
static rb_status conv_transpose_backward_weight_dy_shape(void) {
    static const int64_t ws[4] = {2, 3, 2, 2};
    int64_t xs[4] = {1, 2, 3, 3}, dys[4] = {1, 3, 5, 5};
    rb_conv_params p = {2, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 1};
    rb_tensor *x = NULL, *dy = NULL, *dw = SENTINEL, *db = SENTINEL;
    MUST(rb_tensor_zeros("cpu", xs, 4, RB_DTYPE_F32, &x));
    MUST(rb_tensor_zeros("cpu", dys, 4, RB_DTYPE_F32, &dy));
    rb_status st = rb_conv_transpose_backward_weight(NULL, x, dy, ws, 4, &p, &dw, &db);
    if (dw != SENTINEL || db != SENTINEL) g_extra_fail = "an output was written on failure";
    return st;
}
/* Without the check these loop over n * groups (2^28: most of a second; INT64_MAX: forever);
 * the alarm turns a slow answer into a failed row. */
static rb_status group_norm_backward_no_channels(int64_t groups) {
    alarm(5);
    return rb_dnn_group_norm_backward(NULL, RB_DTYPE_F32, 2, 0, 3, groups, 1e-5, A, NULL, A, C, C, C);
}
static rb_status group_norm_backward_no_channels_2p28(void) {
    return group_norm_backward_no_channels((int64_t)1 << 28);
}
static rb_status group_norm_backward_no_channels_max(void) { return group_norm_backward_no_channels(INT64_MAX); }

/* ---- class weights, class-probability targets, rope from caches (issue 17) ---- */
static rb_tensor *ids_i64(const int64_t *v, int64_t n) {
    rb_tensor *t = NULL;
    MUST(rb_tensor_from_host("cpu", v, (size_t)n * sizeof(int64_t), &n, 1, RB_DTYPE_I64, &t));
    return t;
}
static const int64_t targets2[2] = {0, 2};
static rb_status loss_out_untouched(rb_status st, rb_tensor *out) {
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status cross_entropy_weighted_wrong_len(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_cross_entropy_weighted(NULL, mk(2, 3, RB_DTYPE_F32), ids_i64(targets2, 2),
                                                        mk1(4, RB_DTYPE_F32), RB_REDUCTION_MEAN, -100, 0.0, &out),
                              out);
}
static rb_status cross_entropy_weighted_backward_wrong_len(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_cross_entropy_weighted_backward(NULL, mk1(2, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32),
                                                                 ids_i64(targets2, 2), mk1(2, RB_DTYPE_F32),
                                                                 RB_REDUCTION_NONE, -100, 0.0, &out),
                              out);
}
static rb_status cross_entropy_weighted_wrong_dtype(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_cross_entropy_weighted(NULL, mk(2, 3, RB_DTYPE_F32), ids_i64(targets2, 2),
                                                        mk1(3, RB_DTYPE_F16), RB_REDUCTION_SUM, -100, 0.0, &out),
                              out);
}
static rb_status nll_loss_weighted_wrong_len(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_nll_loss_weighted(NULL, mk(2, 3, RB_DTYPE_F32), ids_i64(targets2, 2),
                                                   mk1(2, RB_DTYPE_F32), RB_REDUCTION_MEAN, -100, &out),
                              out);
}
static rb_status nll_loss_weighted_backward_wrong_len(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_nll_loss_weighted_backward(NULL, mk1(2, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32),
                                                            ids_i64(targets2, 2), mk1(4, RB_DTYPE_F32),
                                                            RB_REDUCTION_NONE, -100, &out),
                              out);
}
static rb_status nll_loss_weighted_bad_target(void) {
    static const int64_t bad[2] = {0, 3};
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_nll_loss_weighted(NULL, mk(2, 3, RB_DTYPE_F32), ids_i64(bad, 2),
                                                   mk1(3, RB_DTYPE_F32), RB_REDUCTION_MEAN, -100, &out),
                              out);
}
static rb_status bce_loss_weighted_not_broadcast(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_bce_loss_weighted(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32),
                                                   mk1(2, RB_DTYPE_F32), RB_REDUCTION_MEAN, &out),
                              out);
}
static rb_status bce_loss_weighted_backward_not_broadcast(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_bce_loss_weighted_backward(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32),
                                                            mk(2, 3, RB_DTYPE_F32), mk(4, 3, RB_DTYPE_F32),
                                                            RB_REDUCTION_NONE, &out),
                              out);
}
static rb_status cross_entropy_probs_ignore_index(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(
        rb_cross_entropy(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32), RB_REDUCTION_MEAN, 0, 0.0, &out), out);
}
static rb_status cross_entropy_weighted_probs_ignore_index(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_cross_entropy_weighted(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 3, RB_DTYPE_F32),
                                                        mk1(3, RB_DTYPE_F32), RB_REDUCTION_MEAN, 1, 0.0, &out),
                              out);
}
static rb_status cross_entropy_probs_wrong_shape(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(
        rb_cross_entropy(NULL, mk(2, 3, RB_DTYPE_F32), mk(2, 4, RB_DTYPE_F32), RB_REDUCTION_MEAN, -100, 0.0, &out),
        out);
}
static rb_status rope_cached_short_caches(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_rope_cached(NULL, mk(5, 8, RB_DTYPE_F32), mk(4, 4, RB_DTYPE_F32),
                                             mk(4, 4, RB_DTYPE_F32), NULL, 0, 0, &out),
                              out);
}
static rb_status rope_cached_backward_short_caches(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_rope_cached_backward(NULL, mk(5, 8, RB_DTYPE_F32), mk(4, 2, RB_DTYPE_F32),
                                                      mk(4, 2, RB_DTYPE_F32), NULL, 0, 1, &out),
                              out);
}
static rb_status rope_cached_position_out_of_range(void) {
    static const int64_t ids[5] = {0, 1, 2, 3, 9};
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_rope_cached(NULL, mk(5, 8, RB_DTYPE_F32), mk(5, 4, RB_DTYPE_F32),
                                             mk(5, 4, RB_DTYPE_F32), ids_i64(ids, 5), 0, 1, &out),
                              out);
}
static rb_status rope_cached_negative_position(void) {
    static const int64_t ids[5] = {0, -1, 2, 3, 4};
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_rope_cached_backward(NULL, mk(5, 8, RB_DTYPE_F32), mk(5, 4, RB_DTYPE_F32),
                                                      mk(5, 4, RB_DTYPE_F32), ids_i64(ids, 5), 0, 0, &out),
                              out);
}
static rb_status rope_cached_interleaved_2(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_rope_cached(NULL, mk(5, 8, RB_DTYPE_F32), mk(5, 4, RB_DTYPE_F32),
                                             mk(5, 4, RB_DTYPE_F32), NULL, 0, 2, &out),
                              out);
}
static rb_status rope_cached_rotary_dim_too_big(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(rb_rope_cached(NULL, mk(5, 8, RB_DTYPE_F32), mk(5, 5, RB_DTYPE_F32),
                                             mk(5, 5, RB_DTYPE_F32), NULL, 0, 0, &out),
                              out);
}
static rb_status rope_cached_null_cos(void) {
    rb_tensor *out = NULL;
    return loss_out_untouched(
        rb_rope_cached(NULL, mk(5, 8, RB_DTYPE_F32), NULL, mk(5, 4, RB_DTYPE_F32), NULL, 0, 0, &out), out);
}

/* ---- issue 17 "missing arguments": attention mask / GQA / causal modes, pooling indices,
 * per-side padding and divisor_override ---- */
static rb_tensor *mk4(int64_t d0, int64_t d1, int64_t d2, int64_t d3, int32_t dtype) {
    int64_t shape[4] = {d0, d1, d2, d3};
    rb_tensor *t = NULL;
    MUST(rb_tensor_zeros("cpu", shape, 4, dtype, &t));
    return t;
}
static rb_status sdpa_ex_bad_causal(void) {
    rb_tensor *q = mk4(1, 2, 3, 4, RB_DTYPE_F32), *k = mk4(1, 2, 5, 4, RB_DTYPE_F32), *out = NULL;
    rb_status st = rb_scaled_dot_product_attention_ex(NULL, q, k, k, NULL, 3, NULL, 0, &out);
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status sdpa_ex_int_mask(void) {
    rb_tensor *q = mk4(1, 2, 3, 4, RB_DTYPE_F32), *k = mk4(1, 2, 5, 4, RB_DTYPE_F32), *out = NULL;
    return rb_scaled_dot_product_attention_ex(NULL, q, k, k, mk(3, 5, RB_DTYPE_I64), RB_CAUSAL_MODE_NONE, NULL, 0,
                                              &out);
}
static rb_status sdpa_ex_gqa_heads(void) {
    rb_tensor *q = mk4(1, 3, 3, 4, RB_DTYPE_F32), *k = mk4(1, 2, 5, 4, RB_DTYPE_F32), *out = NULL;
    return rb_scaled_dot_product_attention_ex(NULL, q, k, k, NULL, RB_CAUSAL_MODE_NONE, NULL, 1, &out);
}
static rb_status sdpa_ex_mask_with_causal(void) {
    rb_tensor *q = mk4(1, 2, 3, 4, RB_DTYPE_F32), *k = mk4(1, 2, 5, 4, RB_DTYPE_F32), *out = NULL;
    return rb_scaled_dot_product_attention_ex(NULL, q, k, k, mk(3, 5, RB_DTYPE_BOOL), RB_CAUSAL_MODE_TOP_LEFT, NULL,
                                              0, &out);
}
static rb_status sdpa_ex_backward_null_dk(void) {
    rb_tensor *q = mk4(1, 2, 3, 4, RB_DTYPE_F32), *k = mk4(1, 2, 5, 4, RB_DTYPE_F32), *dq = NULL, *dv = NULL;
    return rb_scaled_dot_product_attention_ex_backward(NULL, q, q, k, k, NULL, RB_CAUSAL_MODE_BOTTOM_RIGHT, NULL, 0,
                                                       &dq, NULL, &dv);
}
static rb_status sdpa_ex_backward_bad_gqa_flag(void) {
    rb_tensor *q = mk4(1, 2, 3, 4, RB_DTYPE_F32), *k = mk4(1, 2, 5, 4, RB_DTYPE_F32), *dq = NULL, *dk = NULL,
              *dv = NULL;
    return rb_scaled_dot_product_attention_ex_backward(NULL, q, q, k, k, NULL, RB_CAUSAL_MODE_NONE, NULL, 2, &dq, &dk,
                                                       &dv);
}
static const rb_pool_params POOL2 = {2, {2, 2, 0}, {2, 2, 0}, {0, 0, 0}, {1, 1, 0}, 0};
static rb_status max_pool_with_indices_null_indices(void) {
    rb_tensor *out = NULL;
    rb_status st = rb_max_pool_with_indices(NULL, mk4(1, 2, 4, 4, RB_DTYPE_F32), &POOL2, &out, NULL);
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status max_pool_with_indices_f32_indices(void) {
    rb_tensor *out = NULL, *idx = mk4(1, 2, 2, 2, RB_DTYPE_F32);
    return rb_max_pool_with_indices(NULL, mk4(1, 2, 4, 4, RB_DTYPE_F32), &POOL2, &out, &idx);
}
static rb_status max_pool_backward_indices_out_of_range(void) {
    static const int64_t shape[4] = {1, 1, 2, 2}, idx[4] = {0, 5, 3, 17}, xs[4] = {1, 1, 4, 4};
    rb_tensor *ind = NULL, *out = NULL;
    MUST(rb_tensor_from_host("cpu", idx, sizeof idx, shape, 4, RB_DTYPE_I64, &ind));
    rb_status st = rb_max_pool_backward_indices(NULL, mk4(1, 1, 2, 2, RB_DTYPE_F32), ind, xs, 4, &out);
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status max_pool_backward_indices_i32(void) {
    static const int64_t xs[4] = {1, 1, 4, 4};
    rb_tensor *out = NULL;
    return rb_max_pool_backward_indices(NULL, mk4(1, 1, 2, 2, RB_DTYPE_F32), mk4(1, 1, 2, 2, RB_DTYPE_I32), xs, 4,
                                        &out);
}
static rb_status max_pool_backward_indices_rank2(void) {
    static const int64_t xs[2] = {4, 4};
    rb_tensor *out = NULL;
    return rb_max_pool_backward_indices(NULL, mk(2, 2, RB_DTYPE_F32), mk(2, 2, RB_DTYPE_I64), xs, 2, &out);
}
static rb_status adaptive_avg_pool_zero_output(void) {
    static const int64_t os[2] = {0, 2};
    rb_tensor *out = NULL;
    return rb_adaptive_avg_pool(NULL, mk4(1, 2, 4, 4, RB_DTYPE_F32), os, 2, 0, &out);
}
static rb_status adaptive_avg_pool_bad_layout(void) {
    static const int64_t os[2] = {2, 2};
    rb_tensor *out = NULL;
    return rb_adaptive_avg_pool(NULL, mk4(1, 2, 4, 4, RB_DTYPE_F32), os, 2, 7, &out);
}
static rb_status adaptive_avg_pool_backward_bad_dy(void) {
    static const int64_t xs[4] = {1, 3, 4, 4};
    rb_tensor *out = NULL;
    return rb_adaptive_avg_pool_backward(NULL, mk4(1, 2, 2, 2, RB_DTYPE_F32), xs, 4, 0, &out);
}
static rb_status adaptive_max_pool_empty_spatial(void) {
    static const int64_t os[2] = {2, 2};
    rb_tensor *out = NULL, *idx = NULL;
    rb_status st = rb_adaptive_max_pool(NULL, mk4(1, 2, 0, 4, RB_DTYPE_F32), os, 2, 0, &out, &idx);
    if (out != NULL || idx != NULL) g_extra_fail = "an output was written on failure";
    return st;
}
static rb_status adaptive_max_pool_null_out(void) {
    static const int64_t os[2] = {2, 2};
    rb_tensor *idx = NULL;
    return rb_adaptive_max_pool(NULL, mk4(1, 2, 4, 4, RB_DTYPE_F32), os, 2, 0, NULL, &idx);
}
static rb_status adaptive_max_pool_backward_outside_window(void) {
    // output (0, 0) of a 4x4 -> 2x2 pooling covers rows and columns 0..1: index 15 is not in it
    static const int64_t shape[4] = {1, 1, 2, 2}, idx[4] = {15, 2, 8, 10}, xs[4] = {1, 1, 4, 4};
    rb_tensor *ind = NULL, *out = NULL;
    MUST(rb_tensor_from_host("cpu", idx, sizeof idx, shape, 4, RB_DTYPE_I64, &ind));
    rb_status st = rb_adaptive_max_pool_backward(NULL, mk4(1, 1, 2, 2, RB_DTYPE_F32), ind, xs, 4, 0, &out);
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status adaptive_max_pool_backward_i32(void) {
    static const int64_t xs[4] = {1, 1, 4, 4};
    rb_tensor *out = NULL;
    return rb_adaptive_max_pool_backward(NULL, mk4(1, 1, 2, 2, RB_DTYPE_F32), mk4(1, 1, 2, 2, RB_DTYPE_I32), xs, 4, 0,
                                         &out);
}
static rb_status max_pool_with_indices_ex_divisor(void) {
    static const rb_pool_params_ex p = {2, {2, 2, 0}, {2, 2, 0}, {0, 0, 0}, {0, 0, 0}, {1, 1, 0}, 0, 3, RB_LAYOUT_NHWC};
    rb_tensor *out = NULL, *idx = NULL;
    return rb_max_pool_with_indices_ex(NULL, mk4(1, 4, 4, 2, RB_DTYPE_F32), &p, &out, &idx);
}
static rb_status max_pool_with_indices_ex_null_params(void) {
    rb_tensor *out = NULL, *idx = NULL;
    return rb_max_pool_with_indices_ex(NULL, mk4(1, 4, 4, 2, RB_DTYPE_F32), NULL, &out, &idx);
}
static rb_status max_pool_backward_indices_ex_bad_layout(void) {
    static const int64_t xs[4] = {1, 4, 4, 1};
    rb_tensor *out = NULL;
    return rb_max_pool_backward_indices_ex(NULL, mk4(1, 2, 2, 1, RB_DTYPE_F32), mk4(1, 2, 2, 1, RB_DTYPE_I64), xs, 4,
                                           -1, &out);
}
static rb_status max_pool_backward_indices_ex_nhwc_out_of_range(void) {
    static const int64_t shape[4] = {1, 2, 2, 1}, idx[4] = {0, 5, 3, 17}, xs[4] = {1, 4, 4, 1};
    rb_tensor *ind = NULL, *out = NULL;
    MUST(rb_tensor_from_host("cpu", idx, sizeof idx, shape, 4, RB_DTYPE_I64, &ind));
    rb_status st = rb_max_pool_backward_indices_ex(NULL, mk4(1, 2, 2, 1, RB_DTYPE_F32), ind, xs, 4, 1, &out);
    if (out != NULL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status pool_ex_divisor_with_max(void) {
    static const rb_pool_params_ex p = {2, {2, 2, 0}, {2, 2, 0}, {0, 0, 0}, {1, 1, 0}, {1, 1, 0}, 0, 3, RB_LAYOUT_NCHW};
    rb_tensor *out = NULL;
    return rb_pool_ex(NULL, RB_POOL_MODE_MAX, mk4(1, 1, 4, 4, RB_DTYPE_F32), &p, &out);
}
static rb_status pool_ex_null_params(void) {
    rb_tensor *out = NULL;
    return rb_pool_ex(NULL, RB_POOL_MODE_AVG_INCLUDE_PAD, mk4(1, 1, 4, 4, RB_DTYPE_F32), NULL, &out);
}
static rb_status pool_ex_backward_negative_pad(void) {
    static const rb_pool_params_ex p = {2, {2, 2, 0}, {2, 2, 0}, {0, 0, 0}, {0, -1, 0}, {1, 1, 0}, 0, 0, RB_LAYOUT_NCHW};
    rb_tensor *out = NULL, *x = mk4(1, 1, 4, 4, RB_DTYPE_F32);
    return rb_pool_ex_backward(NULL, RB_POOL_MODE_MAX, x, mk4(1, 1, 2, 2, RB_DTYPE_F32), &p, &out);
}
static rb_status pool_ex_bad_layout(void) {
    static const rb_pool_params_ex p = {2, {2, 2, 0}, {2, 2, 0}, {0, 0, 0}, {0, 0, 0}, {1, 1, 0}, 0, 0, 7};
    rb_tensor *out = NULL;
    return rb_pool_ex(NULL, RB_POOL_MODE_MAX, mk4(1, 4, 4, 1, RB_DTYPE_F32), &p, &out);
}
static rb_status conv_ex_nhwc_channels_mismatch(void) {
    /* NHWC: x [1, 4, 4, 3] has 3 channels, w [2, 3, 3, 2] expects 2. */
    static const rb_conv_params_ex p = {2, {1, 1, 0}, {0, 0, 0}, {0, 0, 0}, {1, 1, 0}, {0, 0, 0}, 1, RB_LAYOUT_NHWC};
    rb_tensor *out = NULL;
    return rb_conv_ex(NULL, mk4(1, 4, 4, 3, RB_DTYPE_F32), mk4(2, 3, 3, 2, RB_DTYPE_F32), NULL, &p, 0, &out);
}
static rb_status conv_ex_negative_pad(void) {
    static const rb_conv_params_ex p = {2, {1, 1, 0}, {0, 0, 0}, {-1, 0, 0}, {1, 1, 0}, {0, 0, 0}, 1, RB_LAYOUT_NCHW};
    rb_tensor *out = NULL;
    return rb_conv_ex(NULL, mk4(1, 1, 4, 4, RB_DTYPE_F32), mk4(1, 1, 3, 3, RB_DTYPE_F32), NULL, &p, 0, &out);
}
static rb_status conv_ex_backward_data_null_shape(void) {
    static const rb_conv_params_ex p = {2, {1, 1, 0}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}, {0, 0, 0}, 1, RB_LAYOUT_NCHW};
    rb_tensor *out = NULL;
    return rb_conv_ex_backward_data(NULL, mk4(1, 1, 3, 3, RB_DTYPE_F32), mk4(1, 1, 3, 3, RB_DTYPE_F32), NULL, 4, &p,
                                    &out);
}
static rb_status conv_ex_backward_weight_bad_ndim(void) {
    static const rb_conv_params_ex p = {4, {1, 1, 0}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}, {0, 0, 0}, 1, RB_LAYOUT_NCHW};
    static const int64_t ws[4] = {1, 1, 3, 3};
    rb_tensor *dw = NULL;
    return rb_conv_ex_backward_weight(NULL, mk4(1, 1, 4, 4, RB_DTYPE_F32), mk4(1, 1, 3, 3, RB_DTYPE_F32), ws, 4, &p,
                                      &dw, NULL);
}
static rb_status conv_transpose_ex_asymmetric_pad(void) {
    /* A transposed convolution pads both sides alike. */
    static const rb_conv_params_ex p = {2, {1, 1, 0}, {1, 1, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 0}, 1, RB_LAYOUT_NHWC};
    rb_tensor *out = NULL;
    return rb_conv_transpose_ex(NULL, mk4(1, 4, 4, 2, RB_DTYPE_F32), mk4(2, 3, 3, 3, RB_DTYPE_F32), NULL, &p, &out);
}
static rb_status conv_transpose_ex_backward_data_dy_shape(void) {
    /* NHWC: x [1, 3, 3, 2], w [2, 2, 2, 3] give an output [1, 4, 4, 3]; dy is [1, 5, 5, 3]. */
    static const rb_conv_params_ex p = {2, {1, 1, 0}, {0, 0, 0}, {0, 0, 0}, {1, 1, 0}, {0, 0, 0}, 1, RB_LAYOUT_NHWC};
    static const int64_t xs[4] = {1, 3, 3, 2};
    rb_tensor *out = NULL;
    return rb_conv_transpose_ex_backward_data(NULL, mk4(1, 5, 5, 3, RB_DTYPE_F32), mk4(2, 2, 2, 3, RB_DTYPE_F32), xs,
                                              4, &p, &out);
}
static rb_status conv_transpose_ex_backward_weight_int(void) {
    static const rb_conv_params_ex p = {2, {1, 1, 0}, {0, 0, 0}, {0, 0, 0}, {1, 1, 0}, {0, 0, 0}, 1, RB_LAYOUT_NHWC};
    static const int64_t ws[4] = {2, 2, 2, 3};
    rb_tensor *dw = SENTINEL, *db = SENTINEL;
    rb_status st = rb_conv_transpose_ex_backward_weight(NULL, mk4(1, 3, 3, 2, RB_DTYPE_I32),
                                                        mk4(1, 4, 4, 3, RB_DTYPE_I32), ws, 4, &p, &dw, &db);
    if (dw != SENTINEL || db != SENTINEL) g_extra_fail = "an output was written on failure";
    return st;
}

/* ---- the table ---- */
static const char *skip_if_rocm(void) { return rb_rocm_is_available() ? "ROCm is available here" : NULL; }
static const char *skip_if_cuda(void) { return rb_cuda_is_available() ? "CUDA is available here" : NULL; }

typedef struct {
    const char *name;
    const char *func; /* the export whose name the message must contain */
    rb_status expected;
    rb_status (*run)(void);
    const char *(*skip)(void);
} misuse_case;

#define ROW(fn, export, status) {#fn, export, status, fn, NULL}
#define ROW_SKIP(fn, export, status, skip) {#fn, export, status, fn, skip}

/* ---- communicators (issue 16) ---- */
static rb_comm *mk_comm1(void) {
    rb_comm_unique_id id;
    rb_comm *c = NULL;
    MUST(rb_comm_get_unique_id("cpu", &id));
    MUST(rb_comm_init("cpu", &id, 1, 0, &c));
    return c;
}
static rb_status comm_unique_id_null_out(void) { return rb_comm_get_unique_id("cpu", NULL); }
static rb_status comm_init_null_id(void) {
    rb_comm *c = (rb_comm *)SENTINEL;
    rb_status st = rb_comm_init("cpu", NULL, 1, 0, &c);
    if (c != (rb_comm *)SENTINEL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status comm_init_rank_out_of_range(void) {
    rb_comm_unique_id id;
    rb_comm *c = (rb_comm *)SENTINEL;
    MUST(rb_comm_get_unique_id("cpu", &id));
    rb_status st = rb_comm_init("cpu", &id, 2, 2, &c);
    if (c != (rb_comm *)SENTINEL) g_extra_fail = "*out was written on failure";
    return st;
}
static rb_status comm_init_zero_world(void) {
    rb_comm_unique_id id;
    rb_comm *c = NULL;
    MUST(rb_comm_get_unique_id("cpu", &id));
    return rb_comm_init("cpu", &id, 0, 0, &c);
}
static rb_status comm_init_foreign_id(void) {
    rb_comm_unique_id id;
    rb_comm *c = NULL;
    memset(&id, 7, sizeof id);
    return rb_comm_init("cpu", &id, 1, 0, &c);
}
static rb_status comm_init_all_zero(void) {
    const char *devs[1] = {"cpu"};
    rb_comm *cs[1] = {NULL};
    return rb_comm_init_all(devs, 0, cs);
}
static rb_status comm_rank_null_out(void) { return rb_comm_rank(mk_comm1(), NULL); }
static rb_status comm_size_destroyed(void) {
    rb_comm *c = mk_comm1();
    int32_t n = 0;
    MUST(rb_comm_destroy(c));
    return rb_comm_size(c, &n);
}
static rb_status comm_tensor_as_comm(void) {
    int32_t n = 0;
    return rb_comm_size((rb_comm *)mk(2, 2, RB_DTYPE_F32), &n);
}
static rb_status all_reduce_bad_op(void) {
    rb_tensor *t = mk1(4, RB_DTYPE_F32);
    return rb_all_reduce(mk_comm1(), NULL, t, t, 5);
}
static rb_status all_reduce_size_mismatch(void) {
    return rb_all_reduce(mk_comm1(), NULL, mk1(4, RB_DTYPE_F32), mk1(3, RB_DTYPE_F32), RB_COLLECTIVE_OP_SUM);
}
static rb_status all_reduce_dtype_mismatch(void) {
    return rb_all_reduce(mk_comm1(), NULL, mk1(4, RB_DTYPE_F32), mk1(4, RB_DTYPE_F16), RB_COLLECTIVE_OP_SUM);
}
static rb_status all_reduce_bool(void) {
    rb_tensor *t = mk1(4, RB_DTYPE_BOOL);
    return rb_all_reduce(mk_comm1(), NULL, t, t, RB_COLLECTIVE_OP_SUM);
}
static rb_status all_reduce_null_comm(void) {
    rb_tensor *t = mk1(4, RB_DTYPE_F32);
    return rb_all_reduce(NULL, NULL, t, t, RB_COLLECTIVE_OP_SUM);
}
static rb_status all_reduce_after_abort(void) {
    rb_comm *c = mk_comm1();
    rb_tensor *t = mk1(4, RB_DTYPE_F32);
    MUST(rb_comm_abort(c));
    return rb_all_reduce(c, NULL, t, t, RB_COLLECTIVE_OP_SUM);
}
static rb_status all_gather_wrong_recv(void) {
    return rb_all_gather(mk_comm1(), NULL, mk1(4, RB_DTYPE_F32), mk1(8, RB_DTYPE_F32));
}
static rb_status reduce_scatter_wrong_recv(void) {
    return rb_reduce_scatter(mk_comm1(), NULL, mk1(4, RB_DTYPE_F32), mk1(2, RB_DTYPE_F32), RB_COLLECTIVE_OP_AVG);
}
static rb_status broadcast_bad_root(void) {
    rb_tensor *t = mk1(4, RB_DTYPE_F32);
    return rb_broadcast(mk_comm1(), NULL, t, t, 1);
}
static rb_status send_bad_peer(void) { return rb_send(mk_comm1(), NULL, mk1(4, RB_DTYPE_F32), -1); }
static rb_status recv_bad_peer(void) { return rb_recv(mk_comm1(), NULL, mk1(4, RB_DTYPE_F32), 1); }
static rb_status recv_size_mismatch(void) {
    rb_comm *c = mk_comm1();
    MUST(rb_send(c, NULL, mk1(4, RB_DTYPE_F32), 0));
    return rb_recv(c, NULL, mk1(5, RB_DTYPE_F32), 0);
}
static rb_status all_reduce_raw_null(void) {
    return rb_all_reduce_raw(mk_comm1(), NULL, NULL, NULL, 4, RB_DTYPE_F32, RB_COLLECTIVE_OP_SUM);
}
static rb_status all_gather_raw_overflow(void) {
    static float x[4];
    return rb_all_gather_raw(mk_comm1(), NULL, x, x, SIZE_MAX / 2, RB_DTYPE_F32);
}
static rb_status send_raw_bad_dtype(void) {
    static float x[4];
    return rb_send_raw(mk_comm1(), NULL, x, 4, 99, 0);
}
static rb_status comm_set_timeout_zero(void) { return rb_comm_set_timeout_ms(mk_comm1(), 0); }
static rb_status comm_group_end_unmatched(void) { return rb_comm_group_end(); }
static rb_status recv_from_silent_peer_times_out(void) {
    rb_comm_unique_id id;
    rb_comm *c0 = NULL, *c1 = NULL;
    MUST(rb_comm_get_unique_id("cpu", &id));
    MUST(rb_comm_init("cpu", &id, 2, 0, &c0));
    MUST(rb_comm_init("cpu", &id, 2, 1, &c1));
    MUST(rb_comm_set_timeout_ms(c0, 50));
    return rb_recv(c0, NULL, mk1(4, RB_DTYPE_F32), 1);
}
static rb_status all_reduce_peer_destroyed(void) {
    rb_comm_unique_id id;
    rb_comm *c0 = NULL, *c1 = NULL;
    rb_tensor *t = mk1(4, RB_DTYPE_F32);
    MUST(rb_comm_get_unique_id("cpu", &id));
    MUST(rb_comm_init("cpu", &id, 2, 0, &c0));
    MUST(rb_comm_init("cpu", &id, 2, 1, &c1));
    MUST(rb_comm_destroy(c1));
    return rb_all_reduce(c0, NULL, t, t, RB_COLLECTIVE_OP_SUM);
}
static rb_status comm_init_all_null_devices(void) {
    rb_comm *cs[2] = {NULL, NULL};
    return rb_comm_init_all(NULL, 2, cs);
}

static const misuse_case CASES[] = {
    ROW(set_device_null, "rb_set_device", RB_STATUS_NULL_POINTER),
    ROW(set_device_unknown, "rb_set_device", RB_STATUS_INVALID_ARGUMENT),
    ROW(set_device_empty, "rb_set_device", RB_STATUS_INVALID_ARGUMENT),
    ROW_SKIP(set_device_rocm0, "rb_set_device", RB_STATUS_DEVICE_UNAVAILABLE, skip_if_rocm),
    ROW_SKIP(set_device_cuda0, "rb_set_device", RB_STATUS_DEVICE_UNAVAILABLE, skip_if_cuda),
    ROW(get_device_null, "rb_get_device", RB_STATUS_NULL_POINTER),
    ROW(get_allow_tf32_null, "rb_get_allow_tf32", RB_STATUS_NULL_POINTER),
    ROW(get_device_short, "rb_get_device", RB_STATUS_INVALID_ARGUMENT),
    ROW(device_info_null_out, "rb_device_info", RB_STATUS_NULL_POINTER),
    ROW(device_info_unknown, "rb_device_info", RB_STATUS_INVALID_ARGUMENT),
    ROW(rocm_set_device_negative, "rb_rocm_set_device", RB_STATUS_INVALID_ARGUMENT),
    ROW_SKIP(rocm_set_device_0, "rb_rocm_set_device", RB_STATUS_DEVICE_UNAVAILABLE, skip_if_rocm),
    ROW_SKIP(rocm_get_device_info_0, "rb_rocm_get_device_info", RB_STATUS_DEVICE_UNAVAILABLE, skip_if_rocm),
    ROW(rocm_synchronize_on_cpu, "rb_rocm_synchronize", RB_STATUS_DEVICE_UNAVAILABLE),
    ROW(stream_create_unknown, "rb_stream_create", RB_STATUS_INVALID_ARGUMENT),
    ROW(stream_create_null_out, "rb_stream_create", RB_STATUS_NULL_POINTER),
    ROW(create_null_out, "rb_tensor_empty", RB_STATUS_NULL_POINTER),
    ROW(create_null_shape, "rb_tensor_empty", RB_STATUS_NULL_POINTER),
    ROW(create_dtype_minus1, "rb_tensor_empty", RB_STATUS_INVALID_ARGUMENT),
    ROW(create_dtype_99, "rb_tensor_empty", RB_STATUS_INVALID_ARGUMENT),
    ROW(create_negative_extent, "rb_tensor_empty", RB_STATUS_INVALID_ARGUMENT),
    ROW(create_overflow, "rb_tensor_empty", RB_STATUS_INVALID_ARGUMENT),
    ROW(create_bytes_overflow, "rb_tensor_empty", RB_STATUS_INVALID_ARGUMENT),
    ROW(create_huge, "rb_tensor_empty", RB_STATUS_OUT_OF_MEMORY),
    ROW(zeros_huge, "rb_tensor_zeros", RB_STATUS_OUT_OF_MEMORY),
    ROW(create_too_many_dims, "rb_tensor_empty", RB_STATUS_INVALID_ARGUMENT),
    ROW(create_unknown_device, "rb_tensor_empty", RB_STATUS_INVALID_ARGUMENT),
    ROW_SKIP(create_on_rocm, "rb_tensor_empty", RB_STATUS_DEVICE_UNAVAILABLE, skip_if_rocm),
    ROW(from_host_wrong_nbytes, "rb_tensor_from_host", RB_STATUS_INVALID_ARGUMENT),
    ROW(from_host_null_data, "rb_tensor_from_host", RB_STATUS_NULL_POINTER),
    ROW(randn_int_dtype, "rb_tensor_randn", RB_STATUS_DTYPE_MISMATCH),
    ROW(randint_empty_range, "rb_tensor_randint", RB_STATUS_INVALID_ARGUMENT),
    ROW(randint_float_dtype, "rb_tensor_randint", RB_STATUS_DTYPE_MISMATCH),
    ROW(use_destroyed, "rb_tensor_ndim", RB_STATUS_INVALID_HANDLE),
    ROW(double_destroy, "rb_tensor_destroy", RB_STATUS_INVALID_HANDLE),
    ROW(stream_as_tensor, "rb_tensor_dtype", RB_STATUS_INVALID_HANDLE),
    ROW(tensor_as_stream, "rb_stream_synchronize", RB_STATUS_INVALID_HANDLE),
    ROW(destroy_stream_as_tensor, "rb_tensor_destroy", RB_STATUS_INVALID_HANDLE),
    ROW(made_up_pointer, "rb_tensor_numel", RB_STATUS_INVALID_HANDLE),
    ROW(pointer_to_caller_memory, "rb_tensor_destroy", RB_STATUS_INVALID_HANDLE),
    ROW(destroyed_stream_in_op, "rb_relu", RB_STATUS_INVALID_HANDLE),
    ROW(ndim_null_out, "rb_tensor_ndim", RB_STATUS_NULL_POINTER),
    ROW(ndim_null_tensor, "rb_tensor_ndim", RB_STATUS_NULL_POINTER),
    ROW(shape_capacity_small, "rb_tensor_shape", RB_STATUS_INVALID_ARGUMENT),
    ROW(shape_null_dims, "rb_tensor_shape", RB_STATUS_NULL_POINTER),
    ROW(copy_to_host_wrong_size, "rb_tensor_copy_to_host", RB_STATUS_INVALID_ARGUMENT),
    ROW(copy_to_host_too_big, "rb_tensor_copy_to_host", RB_STATUS_INVALID_ARGUMENT),
    ROW(copy_to_host_null, "rb_tensor_copy_to_host", RB_STATUS_NULL_POINTER),
    ROW(copy_from_host_wrong_size, "rb_tensor_copy_from_host", RB_STATUS_INVALID_ARGUMENT),
    ROW(reshape_wrong_numel, "rb_tensor_reshape", RB_STATUS_SHAPE_MISMATCH),
    ROW(reshape_negative, "rb_tensor_reshape", RB_STATUS_INVALID_ARGUMENT),
    ROW(matmul_inner_mismatch, "rb_matmul", RB_STATUS_SHAPE_MISMATCH),
    ROW(matmul_dtype_mismatch, "rb_matmul", RB_STATUS_DTYPE_MISMATCH),
    ROW(matmul_int, "rb_matmul", RB_STATUS_DTYPE_MISMATCH),
    ROW(matmul_wrong_out_shape, "rb_matmul", RB_STATUS_SHAPE_MISMATCH),
    ROW(matmul_null_a, "rb_matmul", RB_STATUS_NULL_POINTER),
    ROW(add_no_broadcast, "rb_add", RB_STATUS_SHAPE_MISMATCH),
    ROW(add_null_out, "rb_add", RB_STATUS_NULL_POINTER),
    ROW(add_destroyed_out, "rb_add", RB_STATUS_INVALID_HANDLE),
    ROW(add_out_wrong_dtype, "rb_add", RB_STATUS_DTYPE_MISMATCH),
    ROW(add_dtype_mismatch, "rb_add", RB_STATUS_DTYPE_MISMATCH),
    ROW(relu_bool, "rb_relu", RB_STATUS_DTYPE_MISMATCH),
    ROW(hardswish_int, "rb_hardswish", RB_STATUS_DTYPE_MISMATCH),
    ROW(hardswish_backward_shape, "rb_hardswish_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(leaky_relu_int, "rb_leaky_relu", RB_STATUS_DTYPE_MISMATCH),
    ROW(leaky_relu_backward_shape, "rb_leaky_relu_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(elu_int, "rb_elu", RB_STATUS_DTYPE_MISMATCH),
    ROW(elu_backward_shape, "rb_elu_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(selu_int, "rb_selu", RB_STATUS_DTYPE_MISMATCH),
    ROW(selu_backward_shape, "rb_selu_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(celu_int, "rb_celu", RB_STATUS_DTYPE_MISMATCH),
    ROW(celu_backward_shape, "rb_celu_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(hardsigmoid_int, "rb_hardsigmoid", RB_STATUS_DTYPE_MISMATCH),
    ROW(hardsigmoid_backward_shape, "rb_hardsigmoid_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(softplus_int, "rb_softplus", RB_STATUS_DTYPE_MISMATCH),
    ROW(softplus_backward_shape, "rb_softplus_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(softsign_int, "rb_softsign", RB_STATUS_DTYPE_MISMATCH),
    ROW(softsign_backward_shape, "rb_softsign_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(mish_int, "rb_mish", RB_STATUS_DTYPE_MISMATCH),
    ROW(mish_backward_shape, "rb_mish_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(erf_int, "rb_erf", RB_STATUS_DTYPE_MISMATCH),
    ROW(erf_backward_shape, "rb_erf_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(sign_bool, "rb_sign", RB_STATUS_DTYPE_MISMATCH),
    ROW(sign_backward_shape, "rb_sign_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(floor_int, "rb_floor", RB_STATUS_DTYPE_MISMATCH),
    ROW(floor_backward_shape, "rb_floor_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(ceil_int, "rb_ceil", RB_STATUS_DTYPE_MISMATCH),
    ROW(ceil_backward_shape, "rb_ceil_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(round_int, "rb_round", RB_STATUS_DTYPE_MISMATCH),
    ROW(round_backward_shape, "rb_round_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(reciprocal_int, "rb_reciprocal", RB_STATUS_DTYPE_MISMATCH),
    ROW(reciprocal_backward_shape, "rb_reciprocal_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(prelu_weight_size, "rb_prelu", RB_STATUS_SHAPE_MISMATCH),
    ROW(pad_null_pads, "rb_pad", RB_STATUS_NULL_POINTER),
    ROW(pad_bad_mode, "rb_pad", RB_STATUS_INVALID_ARGUMENT),
    ROW(cumsum_bad_dim, "rb_cumsum", RB_STATUS_INVALID_ARGUMENT),
    ROW(clamp_int_fractional_bound, "rb_clamp", RB_STATUS_INVALID_ARGUMENT),
    ROW(clamp_u8_bound_overflows, "rb_clamp", RB_STATUS_INVALID_ARGUMENT),
    ROW(clamp_bool, "rb_clamp", RB_STATUS_DTYPE_MISMATCH),
    ROW(cumsum_int_out_not_i64, "rb_cumsum", RB_STATUS_DTYPE_MISMATCH),
    ROW(cumsum_backward_int, "rb_cumsum_backward", RB_STATUS_DTYPE_MISMATCH),
    ROW(one_hot_float_index, "rb_one_hot", RB_STATUS_DTYPE_MISMATCH),
    ROW(index_select_bad_dim, "rb_index_select", RB_STATUS_INVALID_ARGUMENT),
    ROW(scatter_add_float_index, "rb_scatter_add", RB_STATUS_DTYPE_MISMATCH),
    ROW(index_copy_float_index, "rb_index_copy", RB_STATUS_DTYPE_MISMATCH),
    ROW(index_copy_backward_null_out, "rb_index_copy_backward", RB_STATUS_NULL_POINTER),
    ROW(silu_i8, "rb_silu", RB_STATUS_DTYPE_MISMATCH),
    ROW(exp_i16, "rb_exp", RB_STATUS_DTYPE_MISMATCH),
    ROW(add_i8_f64, "rb_add", RB_STATUS_DTYPE_MISMATCH),
    ROW(div_u8, "rb_div", RB_STATUS_DTYPE_MISMATCH),
    ROW(matmul_i16, "rb_matmul", RB_STATUS_DTYPE_MISMATCH),
    ROW(create_dtype_10, "rb_tensor_empty", RB_STATUS_INVALID_ARGUMENT),
    ROW(topk_k_too_large, "rb_topk", RB_STATUS_INVALID_ARGUMENT),
    ROW(topk_bool, "rb_topk", RB_STATUS_DTYPE_MISMATCH),
    ROW(topk_backward_null_shape, "rb_topk_backward", RB_STATUS_NULL_POINTER),
    ROW(scatter_bad_reduce, "rb_scatter", RB_STATUS_INVALID_ARGUMENT),
    ROW(scatter_float_index, "rb_scatter", RB_STATUS_DTYPE_MISMATCH),
    ROW(scatter_backward_mul, "rb_scatter_backward", RB_STATUS_UNSUPPORTED),
    ROW(arange_zero_step, "rb_arange", RB_STATUS_INVALID_ARGUMENT),
    ROW(arange_null_out, "rb_arange", RB_STATUS_NULL_POINTER),
    ROW(arange_bool, "rb_arange", RB_STATUS_DTYPE_MISMATCH),
    ROW(trilu_rank1, "rb_trilu", RB_STATUS_SHAPE_MISMATCH),
    ROW(expand_null_shape, "rb_expand", RB_STATUS_NULL_POINTER),
    ROW(tile_null_repeats, "rb_tile", RB_STATUS_NULL_POINTER),
    ROW(flatten_bad_dims, "rb_flatten", RB_STATUS_INVALID_ARGUMENT),
    ROW(interpolate_null_size, "rb_interpolate", RB_STATUS_NULL_POINTER),
    ROW(lrn_rank2, "rb_local_response_norm", RB_STATUS_SHAPE_MISMATCH),
    ROW(max_unpool_rank2, "rb_max_unpool", RB_STATUS_SHAPE_MISMATCH),
    ROW(to_channels_last_rank2, "rb_to_channels_last", RB_STATUS_SHAPE_MISMATCH),
    ROW(to_channels_first_null, "rb_to_channels_first", RB_STATUS_NULL_POINTER),
    ROW(graph_destroyed, "rb_graph_num_nodes", RB_STATUS_INVALID_HANDLE),
    ROW(executor_destroyed, "rb_executor_get_stats", RB_STATUS_INVALID_HANDLE),
    ROW(executor_no_outputs, "rb_executor_create", RB_STATUS_INVALID_ARGUMENT),
    ROW(executor_level_9, "rb_executor_create", RB_STATUS_INVALID_ARGUMENT),
    ROW(executor_wrong_input_count, "rb_executor_run", RB_STATUS_INVALID_ARGUMENT),
    ROW(executor_wrong_dtype, "rb_executor_run", RB_STATUS_DTYPE_MISMATCH),
    ROW(executor_wrong_rank, "rb_executor_run", RB_STATUS_SHAPE_MISMATCH),
    ROW(executor_null_inputs, "rb_executor_run", RB_STATUS_NULL_POINTER),
    ROW(graph_placeholder_to_host, "rb_tensor_copy_to_host", RB_STATUS_INVALID_ARGUMENT),
    ROW(graph_placeholder_other_stream, "rb_relu", RB_STATUS_INVALID_ARGUMENT),
    ROW(graph_capture_twice, "rb_graph_capture_begin", RB_STATUS_INVALID_ARGUMENT),
    ROW(graph_capture_null_stream, "rb_graph_capture_begin", RB_STATUS_NULL_POINTER),
    ROW(graph_mark_foreign, "rb_graph_mark_output", RB_STATUS_INVALID_ARGUMENT),
    ROW(graph_input_bad_dtype, "rb_graph_input", RB_STATUS_INVALID_ARGUMENT),
    ROW(graph_as_stream, "rb_relu", RB_STATUS_INVALID_HANDLE),
    ROW(graph_raw_call_into_placeholder, "rb_kernel_relu", RB_STATUS_INVALID_ARGUMENT),
    ROW(graph_event_record_on_recorded_stream, "rb_event_record", RB_STATUS_UNSUPPORTED),
    ROW(can_fuse_null_name, "rb_can_fuse", RB_STATUS_NULL_POINTER),
    ROW(relu_stream_as_tensor, "rb_relu", RB_STATUS_INVALID_HANDLE),
    ROW(sgemm_lda_small, "rb_blas_sgemm", RB_STATUS_INVALID_ARGUMENT),
    ROW(sgemm_negative_m, "rb_blas_sgemm", RB_STATUS_INVALID_ARGUMENT),
    ROW(sgemm_bad_trans, "rb_blas_sgemm", RB_STATUS_INVALID_ARGUMENT),
    ROW(sgemm_null_a, "rb_blas_sgemm", RB_STATUS_NULL_POINTER),
    ROW(sgemm_stream_is_tensor, "rb_blas_sgemm", RB_STATUS_INVALID_HANDLE),
    ROW(gemm_batched_int_dtype, "rb_blas_gemm_strided_batched", RB_STATUS_DTYPE_MISMATCH),
    ROW(gemm_batched_dtype_99, "rb_blas_gemm_strided_batched", RB_STATUS_INVALID_ARGUMENT),
    ROW(geam_c_overlaps_transposed_a, "rb_blas_geam", RB_STATUS_INVALID_ARGUMENT),
    ROW(geam_null_c, "rb_blas_geam", RB_STATUS_NULL_POINTER),
    ROW(dnn_reduce_bad_op, "rb_dnn_reduce", RB_STATUS_INVALID_ARGUMENT),
    ROW(dnn_argmax_empty_r, "rb_dnn_argmax", RB_STATUS_INVALID_ARGUMENT),
    ROW(argmax_all_null_x, "rb_argmax_all", RB_STATUS_NULL_POINTER),
    ROW(argmax_all_empty, "rb_argmax_all", RB_STATUS_INVALID_ARGUMENT),
    ROW(argmax_all_bool, "rb_argmax_all", RB_STATUS_DTYPE_MISMATCH),
    ROW(argmax_all_keepdim_2, "rb_argmax_all", RB_STATUS_INVALID_ARGUMENT),
    ROW(argmax_all_out_wrong_shape, "rb_argmax_all", RB_STATUS_SHAPE_MISMATCH),
    ROW(clamp_tensor_no_bounds, "rb_clamp_tensor", RB_STATUS_INVALID_ARGUMENT),
    ROW(clamp_tensor_backward_dy_shape, "rb_clamp_tensor_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(where_backward_cond_not_bool, "rb_where_backward", RB_STATUS_DTYPE_MISMATCH),
    ROW(add_scaled_int_fractional_alpha, "rb_add_scaled", RB_STATUS_INVALID_ARGUMENT),
    ROW(sub_scaled_nan_alpha, "rb_sub_scaled", RB_STATUS_INVALID_ARGUMENT),
    ROW(add_scaled_backward_null_dy, "rb_add_scaled_backward", RB_STATUS_NULL_POINTER),
    ROW(sub_scaled_backward_dy_shape, "rb_sub_scaled_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(max_dim_empty_dim, "rb_max_dim", RB_STATUS_INVALID_ARGUMENT),
    ROW(min_dim_null_indices, "rb_min_dim", RB_STATUS_NULL_POINTER),
    ROW(max_dim_backward_index_out_of_range, "rb_max_dim_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(permute_backward_not_a_permutation, "rb_permute_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(concat_backward_index_out_of_range, "rb_concat_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(slice_step_zero, "rb_slice", RB_STATUS_INVALID_ARGUMENT),
    ROW(slice_backward_step_zero, "rb_slice_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(gather_index_out_of_range, "rb_gather", RB_STATUS_INVALID_ARGUMENT),
    ROW(gather_backward_dy_shape, "rb_gather_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(take_float_indices, "rb_take", RB_STATUS_DTYPE_MISMATCH),
    ROW(take_backward_dy_shape, "rb_take_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(matmul_backward_dy_shape, "rb_matmul_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(conv_transpose_backward_data_null_params, "rb_conv_transpose_backward_data", RB_STATUS_NULL_POINTER),
    ROW(conv_transpose_backward_weight_dy_shape, "rb_conv_transpose_backward_weight", RB_STATUS_SHAPE_MISMATCH),
    ROW(copy_strided_ndim_17, "rb_kernel_copy_strided", RB_STATUS_INVALID_ARGUMENT),
    ROW(copy_strided_negative_stride, "rb_kernel_copy_strided", RB_STATUS_INVALID_ARGUMENT),
    ROW(kernel_relu_dead_stream_n0, "rb_kernel_relu", RB_STATUS_INVALID_HANDLE),
    ROW(kernel_relu_tensor_stream_n0, "rb_kernel_relu", RB_STATUS_INVALID_HANDLE),
    ROW(dnn_softmax_dead_stream_empty, "rb_dnn_softmax_forward", RB_STATUS_INVALID_HANDLE),
    ROW(dnn_softmax_tensor_stream_empty, "rb_dnn_softmax_forward", RB_STATUS_INVALID_HANDLE),
    ROW(sgemm_dead_stream_empty, "rb_blas_sgemm", RB_STATUS_INVALID_HANDLE),
    ROW(sgemm_tensor_stream_empty, "rb_blas_sgemm", RB_STATUS_INVALID_HANDLE),
    ROW(kernel_embedding_backward_no_rows, "rb_kernel_embedding_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(embedding_backward_no_rows, "rb_embedding_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(group_norm_backward_no_channels_2p28, "rb_dnn_group_norm_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(group_norm_backward_no_channels_max, "rb_dnn_group_norm_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(cross_entropy_weighted_wrong_len, "rb_cross_entropy_weighted", RB_STATUS_SHAPE_MISMATCH),
    ROW(cross_entropy_weighted_backward_wrong_len, "rb_cross_entropy_weighted_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(cross_entropy_weighted_wrong_dtype, "rb_cross_entropy_weighted", RB_STATUS_DTYPE_MISMATCH),
    ROW(nll_loss_weighted_wrong_len, "rb_nll_loss_weighted", RB_STATUS_SHAPE_MISMATCH),
    ROW(nll_loss_weighted_backward_wrong_len, "rb_nll_loss_weighted_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(nll_loss_weighted_bad_target, "rb_nll_loss_weighted", RB_STATUS_INVALID_ARGUMENT),
    ROW(bce_loss_weighted_not_broadcast, "rb_bce_loss_weighted", RB_STATUS_SHAPE_MISMATCH),
    ROW(bce_loss_weighted_backward_not_broadcast, "rb_bce_loss_weighted_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(cross_entropy_probs_ignore_index, "rb_cross_entropy", RB_STATUS_INVALID_ARGUMENT),
    ROW(cross_entropy_weighted_probs_ignore_index, "rb_cross_entropy_weighted", RB_STATUS_INVALID_ARGUMENT),
    ROW(cross_entropy_probs_wrong_shape, "rb_cross_entropy", RB_STATUS_DTYPE_MISMATCH),
    ROW(rope_cached_short_caches, "rb_rope_cached", RB_STATUS_INVALID_ARGUMENT),
    ROW(rope_cached_backward_short_caches, "rb_rope_cached_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(rope_cached_position_out_of_range, "rb_rope_cached", RB_STATUS_INVALID_ARGUMENT),
    ROW(rope_cached_negative_position, "rb_rope_cached_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(rope_cached_interleaved_2, "rb_rope_cached", RB_STATUS_INVALID_ARGUMENT),
    ROW(rope_cached_rotary_dim_too_big, "rb_rope_cached", RB_STATUS_SHAPE_MISMATCH),
    ROW(rope_cached_null_cos, "rb_rope_cached", RB_STATUS_NULL_POINTER),
    ROW(sdpa_ex_bad_causal, "rb_scaled_dot_product_attention_ex", RB_STATUS_INVALID_ARGUMENT),
    ROW(sdpa_ex_int_mask, "rb_scaled_dot_product_attention_ex", RB_STATUS_DTYPE_MISMATCH),
    ROW(sdpa_ex_gqa_heads, "rb_scaled_dot_product_attention_ex", RB_STATUS_SHAPE_MISMATCH),
    ROW(sdpa_ex_mask_with_causal, "rb_scaled_dot_product_attention_ex", RB_STATUS_INVALID_ARGUMENT),
    ROW(sdpa_ex_backward_null_dk, "rb_scaled_dot_product_attention_ex_backward", RB_STATUS_NULL_POINTER),
    ROW(sdpa_ex_backward_bad_gqa_flag, "rb_scaled_dot_product_attention_ex_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(max_pool_with_indices_null_indices, "rb_max_pool_with_indices", RB_STATUS_NULL_POINTER),
    ROW(max_pool_with_indices_f32_indices, "rb_max_pool_with_indices", RB_STATUS_DTYPE_MISMATCH),
    ROW(max_pool_backward_indices_out_of_range, "rb_max_pool_backward_indices", RB_STATUS_INVALID_ARGUMENT),
    ROW(dlpack_null, "rb_tensor_from_dlpack", RB_STATUS_NULL_POINTER),
    ROW(dlpack_strided, "rb_tensor_from_dlpack", RB_STATUS_UNSUPPORTED),
    ROW(dlpack_vulkan, "rb_tensor_from_dlpack", RB_STATUS_DEVICE_UNAVAILABLE),
    ROW(dlpack_uint32, "rb_tensor_from_dlpack", RB_STATUS_DTYPE_MISMATCH),
    ROW(dlpack_misaligned, "rb_tensor_from_dlpack", RB_STATUS_INVALID_ARGUMENT),
    ROW(dlpack_read_only_write, "rb_fill", RB_STATUS_INVALID_ARGUMENT),
    ROW(to_dlpack_bad_flags, "rb_tensor_to_dlpack", RB_STATUS_INVALID_ARGUMENT),
    ROW(to_dlpack_null_out, "rb_tensor_to_dlpack", RB_STATUS_NULL_POINTER),
    ROW(trace_null_path, "rb_profiler_export_chrome_trace", RB_STATUS_NULL_POINTER),
    ROW(trace_unwritable, "rb_profiler_export_chrome_trace", RB_STATUS_INVALID_ARGUMENT),
    ROW(max_pool_backward_indices_i32, "rb_max_pool_backward_indices", RB_STATUS_DTYPE_MISMATCH),
    ROW(max_pool_backward_indices_rank2, "rb_max_pool_backward_indices", RB_STATUS_INVALID_ARGUMENT),
    ROW(adaptive_avg_pool_zero_output, "rb_adaptive_avg_pool", RB_STATUS_INVALID_ARGUMENT),
    ROW(adaptive_avg_pool_bad_layout, "rb_adaptive_avg_pool", RB_STATUS_INVALID_ARGUMENT),
    ROW(adaptive_avg_pool_backward_bad_dy, "rb_adaptive_avg_pool_backward", RB_STATUS_SHAPE_MISMATCH),
    ROW(adaptive_max_pool_empty_spatial, "rb_adaptive_max_pool", RB_STATUS_SHAPE_MISMATCH),
    ROW(adaptive_max_pool_null_out, "rb_adaptive_max_pool", RB_STATUS_NULL_POINTER),
    ROW(adaptive_max_pool_backward_outside_window, "rb_adaptive_max_pool_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(adaptive_max_pool_backward_i32, "rb_adaptive_max_pool_backward", RB_STATUS_DTYPE_MISMATCH),
    ROW(max_pool_with_indices_ex_divisor, "rb_max_pool_with_indices_ex", RB_STATUS_INVALID_ARGUMENT),
    ROW(max_pool_with_indices_ex_null_params, "rb_max_pool_with_indices_ex", RB_STATUS_NULL_POINTER),
    ROW(max_pool_backward_indices_ex_bad_layout, "rb_max_pool_backward_indices_ex", RB_STATUS_INVALID_ARGUMENT),
    ROW(max_pool_backward_indices_ex_nhwc_out_of_range, "rb_max_pool_backward_indices_ex", RB_STATUS_INVALID_ARGUMENT),
    ROW(pool_ex_divisor_with_max, "rb_pool_ex", RB_STATUS_INVALID_ARGUMENT),
    ROW(pool_ex_null_params, "rb_pool_ex", RB_STATUS_NULL_POINTER),
    ROW(pool_ex_backward_negative_pad, "rb_pool_ex_backward", RB_STATUS_INVALID_ARGUMENT),
    ROW(pool_ex_bad_layout, "rb_pool_ex", RB_STATUS_INVALID_ARGUMENT),
    ROW(conv_ex_nhwc_channels_mismatch, "rb_conv_ex", RB_STATUS_SHAPE_MISMATCH),
    ROW(conv_ex_negative_pad, "rb_conv_ex", RB_STATUS_INVALID_ARGUMENT),
    ROW(conv_ex_backward_data_null_shape, "rb_conv_ex_backward_data", RB_STATUS_NULL_POINTER),
    ROW(conv_ex_backward_weight_bad_ndim, "rb_conv_ex_backward_weight", RB_STATUS_INVALID_ARGUMENT),
    ROW(conv_transpose_ex_asymmetric_pad, "rb_conv_transpose_ex", RB_STATUS_INVALID_ARGUMENT),
    ROW(conv_transpose_ex_backward_data_dy_shape, "rb_conv_transpose_ex_backward_data", RB_STATUS_SHAPE_MISMATCH),
    ROW(conv_transpose_ex_backward_weight_int, "rb_conv_transpose_ex_backward_weight", RB_STATUS_DTYPE_MISMATCH),
    ROW(comm_unique_id_null_out, "rb_comm_get_unique_id", RB_STATUS_NULL_POINTER),
    ROW(comm_init_null_id, "rb_comm_init", RB_STATUS_NULL_POINTER),
    ROW(comm_init_rank_out_of_range, "rb_comm_init", RB_STATUS_INVALID_ARGUMENT),
    ROW(comm_init_zero_world, "rb_comm_init", RB_STATUS_INVALID_ARGUMENT),
    ROW(comm_init_foreign_id, "rb_comm_init", RB_STATUS_INVALID_ARGUMENT),
    ROW(comm_init_all_zero, "rb_comm_init_all", RB_STATUS_INVALID_ARGUMENT),
    ROW(comm_init_all_null_devices, "rb_comm_init_all", RB_STATUS_NULL_POINTER),
    ROW(comm_rank_null_out, "rb_comm_rank", RB_STATUS_NULL_POINTER),
    ROW(comm_size_destroyed, "rb_comm_size", RB_STATUS_INVALID_HANDLE),
    ROW(comm_tensor_as_comm, "rb_comm_size", RB_STATUS_INVALID_HANDLE),
    ROW(all_reduce_bad_op, "rb_all_reduce", RB_STATUS_INVALID_ARGUMENT),
    ROW(all_reduce_size_mismatch, "rb_all_reduce", RB_STATUS_SHAPE_MISMATCH),
    ROW(all_reduce_dtype_mismatch, "rb_all_reduce", RB_STATUS_DTYPE_MISMATCH),
    ROW(all_reduce_bool, "rb_all_reduce", RB_STATUS_DTYPE_MISMATCH),
    ROW(all_reduce_null_comm, "rb_all_reduce", RB_STATUS_NULL_POINTER),
    ROW(all_reduce_after_abort, "rb_all_reduce", RB_STATUS_ABORTED),
    ROW(all_reduce_peer_destroyed, "rb_all_reduce", RB_STATUS_ABORTED),
    ROW(all_gather_wrong_recv, "rb_all_gather", RB_STATUS_SHAPE_MISMATCH),
    ROW(reduce_scatter_wrong_recv, "rb_reduce_scatter", RB_STATUS_SHAPE_MISMATCH),
    ROW(broadcast_bad_root, "rb_broadcast", RB_STATUS_INVALID_ARGUMENT),
    ROW(send_bad_peer, "rb_send", RB_STATUS_INVALID_ARGUMENT),
    ROW(recv_bad_peer, "rb_recv", RB_STATUS_INVALID_ARGUMENT),
    ROW(recv_size_mismatch, "rb_recv", RB_STATUS_SHAPE_MISMATCH),
    ROW(recv_from_silent_peer_times_out, "rb_recv", RB_STATUS_TIMEOUT),
    ROW(all_reduce_raw_null, "rb_all_reduce_raw", RB_STATUS_NULL_POINTER),
    ROW(all_gather_raw_overflow, "rb_all_gather_raw", RB_STATUS_INVALID_ARGUMENT),
    ROW(send_raw_bad_dtype, "rb_send_raw", RB_STATUS_INVALID_ARGUMENT),
    ROW(comm_set_timeout_zero, "rb_comm_set_timeout_ms", RB_STATUS_INVALID_ARGUMENT),
    ROW(comm_group_end_unmatched, "rb_comm_group_end", RB_STATUS_INVALID_ARGUMENT),
};

/* Runs one row in the child; the exit code is 0 pass, 1 fail, 77 skip. */
static int g_quiet = 0; /* MISUSE_QUIET=1: print failures only */

static int run_case(const misuse_case *c) {
    if (c->skip) {
        const char *why = c->skip();
        if (why) {
            printf("  skip %-28s (%s)\n", c->name, why);
            return 77;
        }
    }
    rb_status st = c->run();
    const char *msg = rb_last_error_message();
    int ok = 1;
    char why[512] = "";
    if (st != c->expected) {
        ok = 0;
        snprintf(why, sizeof why, "got %s, expected %s", rb_status_string(st), rb_status_string(c->expected));
    } else if (msg == NULL || msg[0] == '\0') {
        ok = 0;
        snprintf(why, sizeof why, "rb_last_error_message() is empty");
    } else if (strstr(msg, c->func) == NULL) {
        ok = 0;
        snprintf(why, sizeof why, "message does not name %s", c->func);
    } else if (g_extra_fail) {
        ok = 0;
        snprintf(why, sizeof why, "%s", g_extra_fail);
    }
    if (!ok || !g_quiet)
        printf("  %s %-28s %-28s \"%s\"%s%s\n", ok ? "ok  " : "FAIL", c->name, rb_status_string(st), msg ? msg : "(null)",
           ok ? "" : "  <- ", why);
    return ok ? 0 : 1;
}

int main(void) {
    const size_t n = sizeof CASES / sizeof CASES[0];
    int passed = 0, failed = 0, skipped = 0;
    const char *q = getenv("MISUSE_QUIET");
    g_quiet = q && q[0] == '1';
    for (size_t i = 0; i < n; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 2;
        }
        if (pid == 0) {
            int code = run_case(&CASES[i]);
            fflush(stdout);
            exit(code);
        }
        int ws = 0;
        if (waitpid(pid, &ws, 0) < 0) {
            perror("waitpid");
            return 2;
        }
        if (WIFSIGNALED(ws)) {
            printf("  FAIL %-28s CRASHED with signal %d\n", CASES[i].name, WTERMSIG(ws));
            failed++;
        } else if (WEXITSTATUS(ws) == 0) {
            passed++;
        } else if (WEXITSTATUS(ws) == 77) {
            skipped++;
        } else {
            if (WEXITSTATUS(ws) != 1) printf("  FAIL %-28s exited with %d\n", CASES[i].name, WEXITSTATUS(ws));
            failed++;
        }
    }
    printf("misuse: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed == 0 ? 0 : 1;
}
