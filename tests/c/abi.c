/* The happy path of the C ABI: version, devices, tensor creation/queries/copies, the first
 * ops (add, relu, matmul, sgemm) checked against plain C loops, views, streams, destruction.
 * Prints "abi: N passed, M failed" and exits non-zero when a check failed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocm_backend.h"

static int passed = 0, failed = 0;

static void check(int cond, const char *what) {
    if (cond) {
        passed++;
    } else {
        failed++;
        printf("  FAIL %s (last error: \"%s\")\n", what, rb_last_error_message());
    }
}

#define OK(call) check((call) == RB_STATUS_SUCCESS, #call)

static float max_abs_diff(const float *a, const float *b, size_t n) {
    float m = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float d = fabsf(a[i] - b[i]);
        if (!(d <= m)) m = d; /* NaN propagates */
    }
    return m;
}

static void test_version_and_status(void) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", RB_VERSION_MAJOR, RB_VERSION_MINOR, RB_VERSION_PATCH);
    check(strcmp(rb_version(), want) == 0, "rb_version() equals the header's macros");
    check(strcmp(rb_status_string(RB_STATUS_SUCCESS), "RB_STATUS_SUCCESS") == 0, "status name SUCCESS");
    check(strcmp(rb_status_string(RB_STATUS_SHAPE_MISMATCH), "RB_STATUS_SHAPE_MISMATCH") == 0,
          "status name SHAPE_MISMATCH");
    check(strcmp(rb_status_string(RB_STATUS_INTERNAL), "RB_STATUS_INTERNAL") == 0, "status name INTERNAL");
    check(strcmp(rb_status_string(12345), "RB_STATUS_UNKNOWN") == 0, "unknown status name");
    check(rb_last_error_message() != NULL, "rb_last_error_message never NULL");
}

static void test_devices(void) {
    char buf[32];
    OK(rb_set_device("cpu"));
    OK(rb_get_device(buf, sizeof buf));
    check(strcmp(buf, "cpu") == 0, "current device is cpu after rb_set_device(\"cpu\")");
    bool tf32 = true;
    OK(rb_get_allow_tf32(&tf32));
    check(!tf32, "TF32 is off by default");
    OK(rb_set_allow_tf32(true));
    OK(rb_get_allow_tf32(&tf32));
    check(tf32, "rb_set_allow_tf32(true) is read back");
    OK(rb_set_allow_tf32(false));
    OK(rb_get_allow_tf32(&tf32));
    check(!tf32, "rb_set_allow_tf32(false) is read back");
    OK(rb_set_device("auto"));
    OK(rb_get_device(buf, sizeof buf));
    if (!rb_rocm_is_available() && !rb_cuda_is_available())
        check(strcmp(buf, "cpu") == 0, "auto picks the CPU without GPUs");
    rb_device_properties p;
    memset(&p, 0, sizeof p);
    OK(rb_device_info("cpu", &p));
    check(p.kind == RB_DEVICE_KIND_CPU && p.ordinal == 0, "cpu info kind/ordinal");
    check(strcmp(p.device, "cpu") == 0, "cpu info device string");
    check(p.name[0] != '\0' && p.arch[0] != '\0' && p.family[0] != '\0', "cpu info strings non-empty");
    check(p.total_memory > 0 && p.free_memory <= p.total_memory, "cpu info memory");
    check(p.compute_units >= 1 && p.warp_size == 1, "cpu info compute units and warp size");
    check(rb_rocm_is_available() == (rb_rocm_device_count() > 0), "rocm availability matches the count");
    if (!rb_rocm_is_available()) {
        check(rb_rocm_unavailable_reason()[0] != '\0', "rocm unavailable reason is given");
        check(rb_rocm_get_device() == -1, "rb_rocm_get_device is -1 on the CPU");
    }
    check(rb_cuda_is_available() == (rb_cuda_device_count() > 0), "cuda availability matches the count");
    OK(rb_synchronize());
    OK(rb_set_device("cpu"));
}

static void test_tensors(void) {
    const int64_t shape[3] = {2, 3, 4};
    float host[24], back[24];
    for (int i = 0; i < 24; i++) host[i] = (float)i * 0.5f - 3.0f;
    rb_tensor *t = NULL;
    OK(rb_tensor_from_host("cpu", host, sizeof host, shape, 3, RB_DTYPE_F32, &t));
    size_t nd = 0, numel = 0, nbytes = 0;
    int64_t dims[16] = {0};
    int32_t dt = -1, kind = -1, ord = -1;
    OK(rb_tensor_ndim(t, &nd));
    OK(rb_tensor_shape(t, dims, 3));
    OK(rb_tensor_dtype(t, &dt));
    OK(rb_tensor_numel(t, &numel));
    OK(rb_tensor_nbytes(t, &nbytes));
    OK(rb_tensor_device(t, &kind, &ord));
    check(nd == 3 && dims[0] == 2 && dims[1] == 3 && dims[2] == 4, "shape queries");
    check(dt == RB_DTYPE_F32 && numel == 24 && nbytes == 96, "dtype/numel/nbytes queries");
    check(kind == RB_DEVICE_KIND_CPU && ord == 0, "device query");
    void *data = NULL;
    OK(rb_tensor_data_ptr(t, &data));
    check(data != NULL && memcmp(data, host, sizeof host) == 0, "data_ptr sees the host data");
    OK(rb_tensor_copy_to_host(t, back, sizeof back));
    check(memcmp(host, back, sizeof host) == 0, "from_host/copy_to_host round trip");

    /* A view shares storage. */
    const int64_t flat[1] = {24};
    rb_tensor *v = NULL;
    OK(rb_tensor_reshape(t, flat, 1, &v));
    OK(rb_tensor_destroy(t)); /* the view keeps the storage alive */
    for (int i = 0; i < 24; i++) host[i] = (float)(100 + i);
    OK(rb_tensor_copy_from_host(v, host, sizeof host));
    OK(rb_tensor_copy_to_host(v, back, sizeof back));
    check(memcmp(host, back, sizeof host) == 0, "copy_from_host through a view");
    OK(rb_tensor_destroy(v));

    /* zeros, empty, 0-d and empty tensors, every dtype. */
    for (int32_t d = RB_DTYPE_F32; d <= RB_DTYPE_BOOL; d++) {
        rb_tensor *z = NULL;
        unsigned char zb[24 * 8];
        memset(zb, 0xAB, sizeof zb);
        size_t nb = 0;
        OK(rb_tensor_zeros("cpu", shape, 3, d, &z));
        OK(rb_tensor_nbytes(z, &nb));
        OK(rb_tensor_copy_to_host(z, zb, nb));
        int allzero = nb > 0;
        for (size_t i = 0; i < nb; i++) allzero &= zb[i] == 0;
        check(allzero, "zeros are zero (every dtype)");
        OK(rb_tensor_destroy(z));
        rb_tensor *e = NULL;
        OK(rb_tensor_empty(NULL, shape, 3, d, &e));
        OK(rb_tensor_destroy(e));
    }
    rb_tensor *scalar = NULL, *empty = NULL;
    float one = 1.5f, got = 0.0f;
    OK(rb_tensor_from_host(NULL, &one, sizeof one, NULL, 0, RB_DTYPE_F32, &scalar));
    OK(rb_tensor_copy_to_host(scalar, &got, sizeof got));
    check(got == 1.5f, "0-d tensor round trip");
    const int64_t zero_shape[2] = {0, 5};
    OK(rb_tensor_zeros("cpu", zero_shape, 2, RB_DTYPE_F32, &empty));
    OK(rb_tensor_numel(empty, &numel));
    check(numel == 0, "empty tensor has no elements");
    OK(rb_tensor_copy_to_host(empty, NULL, 0));
    OK(rb_tensor_destroy(scalar));
    OK(rb_tensor_destroy(empty));
    OK(rb_tensor_destroy(NULL));
    OK(rb_stream_destroy(NULL));
}

static void test_random(void) {
    const int64_t shape[1] = {4096};
    rb_tensor *a = NULL, *b = NULL, *c = NULL, *r = NULL;
    static float fa[4096], fb[4096], fc[4096];
    OK(rb_tensor_randn("cpu", shape, 1, RB_DTYPE_F32, 42, &a));
    OK(rb_tensor_randn("cpu", shape, 1, RB_DTYPE_F32, 42, &b));
    OK(rb_tensor_randn("cpu", shape, 1, RB_DTYPE_F32, 43, &c));
    OK(rb_tensor_copy_to_host(a, fa, sizeof fa));
    OK(rb_tensor_copy_to_host(b, fb, sizeof fb));
    OK(rb_tensor_copy_to_host(c, fc, sizeof fc));
    check(memcmp(fa, fb, sizeof fa) == 0, "randn is reproducible from the seed");
    check(memcmp(fa, fc, sizeof fa) != 0, "randn differs for another seed");
    double mean = 0, var = 0;
    for (int i = 0; i < 4096; i++) mean += fa[i];
    mean /= 4096;
    for (int i = 0; i < 4096; i++) var += (fa[i] - mean) * (fa[i] - mean);
    var /= 4095;
    check(fabs(mean) < 0.1 && fabs(var - 1.0) < 0.1, "randn has mean 0 and variance 1");
    static int64_t ri[4096];
    OK(rb_tensor_randint("cpu", shape, 1, RB_DTYPE_I64, -3, 7, 5, &r));
    OK(rb_tensor_copy_to_host(r, ri, sizeof ri));
    int inrange = 1, seen_lo = 0, seen_hi = 0;
    for (int i = 0; i < 4096; i++) {
        inrange &= ri[i] >= -3 && ri[i] < 7;
        seen_lo |= ri[i] == -3;
        seen_hi |= ri[i] == 6;
    }
    check(inrange && seen_lo && seen_hi, "randint covers [low, high) and nothing else");
    OK(rb_tensor_destroy(a));
    OK(rb_tensor_destroy(b));
    OK(rb_tensor_destroy(c));
    OK(rb_tensor_destroy(r));
}

static void test_ops(void) {
    enum { M = 5, K = 7, N = 3 };
    float ha[M * K], hb[K * N], hbias[N], want[M * N], got[M * N];
    for (int i = 0; i < M * K; i++) ha[i] = (float)((i * 7) % 11) - 5.0f;
    for (int i = 0; i < K * N; i++) hb[i] = (float)((i * 5) % 13) * 0.25f - 1.5f;
    for (int i = 0; i < N; i++) hbias[i] = (float)i - 1.0f;
    const int64_t sa[2] = {M, K}, sb[2] = {K, N}, sbias[1] = {N};
    rb_tensor *a = NULL, *b = NULL, *bias = NULL, *mm = NULL, *sum = NULL, *act = NULL;
    OK(rb_tensor_from_host("cpu", ha, sizeof ha, sa, 2, RB_DTYPE_F32, &a));
    OK(rb_tensor_from_host("cpu", hb, sizeof hb, sb, 2, RB_DTYPE_F32, &b));
    OK(rb_tensor_from_host("cpu", hbias, sizeof hbias, sbias, 1, RB_DTYPE_F32, &bias));
    OK(rb_matmul(NULL, a, b, &mm));
    OK(rb_add(NULL, mm, bias, &sum)); /* broadcast [M,N] + [N] */
    OK(rb_relu(NULL, sum, &act));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0.0f;
            for (int k = 0; k < K; k++) s += ha[i * K + k] * hb[k * N + j];
            s += hbias[j];
            want[i * N + j] = s > 0.0f ? s : 0.0f;
        }
    OK(rb_tensor_copy_to_host(act, got, sizeof got));
    check(max_abs_diff(got, want, M * N) < 1e-4f, "relu(matmul(a, b) + bias) equals the C loop");

    /* Output into an existing tensor (in place), on an explicit stream. */
    rb_stream *s = NULL;
    OK(rb_stream_create("cpu", &s));
    rb_tensor *dst = sum;
    OK(rb_relu(s, sum, &dst));
    check(dst == sum, "given output handle is kept");
    OK(rb_stream_synchronize(s));
    OK(rb_tensor_copy_to_host(sum, got, sizeof got));
    check(max_abs_diff(got, want, M * N) < 1e-4f, "in-place relu into *out");
    OK(rb_stream_destroy(s));

    /* BLAS sgemm on host pointers, column-major with a transpose and alpha/beta: C = 2*A^T*B + C. */
    float A[K * M], B[K * N], C[M * N], R[M * N];
    for (int i = 0; i < K * M; i++) A[i] = (float)(i % 5) - 2.0f; /* A is K x M, lda = K */
    for (int i = 0; i < K * N; i++) B[i] = (float)(i % 3) + 0.5f;  /* B is K x N, ldb = K */
    for (int i = 0; i < M * N; i++) C[i] = R[i] = (float)i;         /* C is M x N, ldc = M */
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) acc += A[i * K + k] * B[j * K + k];
            R[j * M + i] = 2.0f * acc + R[j * M + i];
        }
    OK(rb_blas_sgemm(NULL, RB_OPERATION_TRANSPOSE, RB_OPERATION_NONE, M, N, K, 2.0f, A, K, B, K, 1.0f, C, M));
    check(max_abs_diff(C, R, M * N) < 1e-4f, "sgemm (A^T B, alpha 2, beta 1) equals the C loop");

    rb_tensor *all[] = {a, b, bias, mm, sum, act};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) OK(rb_tensor_destroy(all[i]));
}

/* A graph recorded from eager calls on a stream, run by executors at O0 and O1. */
static void test_graph(void) {
    enum { M = 4, K = 6, N = 3 };
    float hw[K * N], hb[N], hx[M * K], want[M * N], got[M * N];
    for (int i = 0; i < K * N; i++) hw[i] = (float)((i * 5) % 7) * 0.25f - 0.75f;
    for (int i = 0; i < N; i++) hb[i] = 0.5f * (float)i - 0.5f;
    const int64_t sw[2] = {K, N}, sb[1] = {N}, sx[2] = {M, K};
    rb_tensor *w = NULL, *b = NULL, *x = NULL, *mm = NULL, *sum = NULL, *y = NULL;
    OK(rb_tensor_from_host("cpu", hw, sizeof hw, sw, 2, RB_DTYPE_F32, &w));
    OK(rb_tensor_from_host("cpu", hb, sizeof hb, sb, 1, RB_DTYPE_F32, &b));
    rb_graph *g = NULL;
    rb_stream *s = NULL;
    OK(rb_graph_create("cpu", &g));
    OK(rb_stream_create("cpu", &s));
    OK(rb_graph_input(g, sx, 2, RB_DTYPE_F32, &x));
    OK(rb_graph_capture_begin(g, s));
    OK(rb_matmul(s, x, w, &mm));
    OK(rb_add(s, mm, b, &sum));
    OK(rb_relu(s, sum, &y));
    /* what cannot be recorded: a status naming the call, the graph unchanged */
    check(rb_tensor_copy_to_host(y, got, sizeof got) == RB_STATUS_INVALID_ARGUMENT,
          "copying a placeholder to the host is refused");
    check(strstr(rb_last_error_message(), "rb_tensor_copy_to_host") != NULL, "the message names the call");
    check(rb_stream_synchronize(s) == RB_STATUS_INVALID_ARGUMENT, "synchronizing the recorded stream is refused");
    OK(rb_graph_capture_end(g, s));
    OK(rb_graph_mark_output(g, y, NULL));
    size_t n = 0;
    OK(rb_graph_num_nodes(g, &n));
    check(n == 3, "three nodes recorded");
    size_t need = 0;
    OK(rb_graph_to_string(g, NULL, 0, &need));
    char text[2048];
    check(need < sizeof text, "the dump fits");
    OK(rb_graph_to_string(g, text, sizeof text, NULL));
    check(strstr(text, "matmul") != NULL && strstr(text, "relu") != NULL, "the dump names the ops");

    for (int i = 0; i < M * K; i++) hx[i] = (float)((i * 7) % 11) * 0.5f - 2.5f;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = hb[j];
            for (int k = 0; k < K; k++) acc += hx[i * K + k] * hw[k * N + j];
            want[i * N + j] = acc > 0.0f ? acc : 0.0f;
        }
    rb_tensor *xin = NULL;
    OK(rb_tensor_from_host("cpu", hx, sizeof hx, sx, 2, RB_DTYPE_F32, &xin));
    for (int level = 0; level <= 1; level++) {
        rb_executor_config c;
        OK(rb_executor_config_default(&c));
        check(!c.allow_tf32, "executor configs default to exact f32 (allow_tf32 false)");
        c.opt_level = level;
        c.allow_tf32 = level == 1;
        rb_executor *e = NULL;
        OK(rb_executor_create(g, &c, &e));
        const rb_tensor *ins[1] = {xin};
        rb_tensor *outs[1] = {NULL};
        OK(rb_executor_run(e, s, ins, 1, outs, 1));
        OK(rb_stream_synchronize(s));
        OK(rb_tensor_copy_to_host(outs[0], got, sizeof got));
        check(max_abs_diff(got, want, M * N) < 1e-4f, "the executor's result equals the C loop");
        rb_executor_stats st;
        OK(rb_executor_get_stats(e, &st));
        check(st.nodes_recorded == 3, "stats: three nodes recorded");
        check(st.launches_per_run == (level == 0 ? 3u : 1u), "stats: O1 runs one fused matmul+bias+relu");
        if (level == 1) check(st.fused_by_pattern[RB_FUSED_OP_MATMUL_BIAS_RELU] == 1, "stats: the pattern is counted");
        OK(rb_tensor_destroy(outs[0]));
        OK(rb_executor_destroy(e));
    }
    const char *names[3] = {"matmul", "add", "relu"};
    int32_t pat = RB_FUSED_OP_NONE;
    OK(rb_can_fuse(names, 3, &pat));
    check(pat == RB_FUSED_OP_MATMUL_BIAS_RELU, "rb_can_fuse names matmul+bias+relu");
    rb_tensor *all[] = {w, b, x, mm, sum, y};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) OK(rb_tensor_destroy(all[i]));
    OK(rb_graph_destroy(g));

    /* Raw calls on the recorded stream are recorded too: checked while recording, run on the
       caller's memory (bound by reference) at every executor run, in order with the rest. */
    float ra[4] = {1, 2, 3, 4}, rbuf[4] = {10, 20, 30, 40}, rc[4] = {0, 0, 0, 0};
    float C2[M * N] = {0}, A2[M * K], B2[K * N];
    for (int i = 0; i < M * K; i++) A2[i] = (float)(i % 3);
    for (int i = 0; i < K * N; i++) B2[i] = 1.0f;
    rb_graph *g2 = NULL;
    rb_tensor *ph = NULL;
    OK(rb_graph_create("cpu", &g2));
    OK(rb_graph_input(g2, sx, 2, RB_DTYPE_F32, &ph));
    OK(rb_graph_capture_begin(g2, s));
    OK(rb_kernel_add(s, RB_DTYPE_F32, ra, rbuf, rc, 4));
    check(rc[0] == 0.0f, "a recorded raw call does not run while recording");
    OK(rb_kernel_mul(s, RB_DTYPE_F32, rc, rc, rc, 4));
    OK(rb_blas_sgemm(s, RB_OPERATION_NONE, RB_OPERATION_NONE, M, N, K, 1.0f, A2, M, B2, K, 0.0f, C2, M));
    check(rb_kernel_add(s, RB_DTYPE_F32, ra, NULL, rc, 4) == RB_STATUS_NULL_POINTER,
          "a recorded raw call is checked while recording");
    void *php = NULL;
    OK(rb_tensor_data_ptr(ph, &php));
    check(rb_kernel_add(s, RB_DTYPE_F32, php, ra, rc, 4) == RB_STATUS_INVALID_ARGUMENT,
          "a raw pointer into a placeholder is refused");
    check(strstr(rb_last_error_message(), "placeholder") != NULL, "the message says why");
    OK(rb_graph_capture_end(g2, s));
    size_t n2 = 0;
    OK(rb_graph_num_nodes(g2, &n2));
    check(n2 == 3, "three raw calls recorded (the refused ones are not)");
    for (int level = 0; level <= 3; level += 3) {
        rb_executor_config c;
        OK(rb_executor_config_default(&c));
        c.opt_level = level;
        rb_executor *e = NULL;
        OK(rb_executor_create(g2, &c, &e));
        const rb_tensor *ins[1] = {xin};
        ra[0] = (float)level;
        for (int i = 0; i < M * N; i++) C2[i] = -1.0f;
        OK(rb_executor_run(e, s, ins, 1, NULL, 0));
        OK(rb_stream_synchronize(s));
        check(rc[0] == (10.0f + (float)level) * (10.0f + (float)level) && rc[3] == 44.0f * 44.0f,
              "the raw calls ran on the caller's memory, in order, seeing its latest data");
        float want2 = 0.0f;
        for (int k = 0; k < K; k++) want2 += A2[k * M + 1];
        check(C2[1] == want2, "the recorded sgemm wrote the caller's C");
        OK(rb_executor_destroy(e));
    }
    OK(rb_tensor_destroy(xin));
    OK(rb_tensor_destroy(ph));
    OK(rb_graph_destroy(g2));
    OK(rb_stream_destroy(s));
}

int main(void) {
    test_version_and_status();
    test_devices();
    test_tensors();
    test_random();
    test_ops();
    test_graph();
    printf("abi: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
