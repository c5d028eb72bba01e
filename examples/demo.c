/* The rocm-backend demo: picks the best device present (rb_set_device("auto")), prints what
 * it is, and runs the forward pass of a small MLP (784-256-128-10, batch 32, random weights)
 * through the C API (rb_tensor_randn, rb_matmul, rb_add, rb_relu), checked against a plain
 * C loop and timed.   make demo */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rocm_backend.h"

#define CHECK(call)                                                                          \
    do {                                                                                     \
        rb_status st_ = (call);                                                              \
        if (st_ != RB_STATUS_SUCCESS) {                                                      \
            fprintf(stderr, "%s failed: %s: %s\n", #call, rb_status_string(st_), rb_last_error_message()); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

enum { BATCH = 32, LAYERS = 3 };
static const int64_t DIMS[LAYERS + 1] = {784, 256, 128, 10};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *to_host(const rb_tensor *t, size_t *n) {
    CHECK(rb_tensor_numel(t, n));
    float *h = malloc(*n * sizeof *h + 1);
    if (!h) exit(1);
    CHECK(rb_tensor_copy_to_host(t, h, *n * sizeof *h));
    return h;
}

/* A randn tensor scaled by `scale` (He initialisation: sqrt(2 / fan_in)). */
static rb_tensor *randn_scaled(const int64_t *shape, size_t ndim, uint64_t seed, float scale) {
    rb_tensor *t = NULL;
    CHECK(rb_tensor_randn(NULL, shape, ndim, RB_DTYPE_F32, seed, &t));
    size_t n = 0;
    float *h = to_host(t, &n);
    for (size_t i = 0; i < n; i++) h[i] *= scale;
    CHECK(rb_tensor_copy_from_host(t, h, n * sizeof *h));
    free(h);
    return t;
}

/* logits = W3 relu(W2 relu(W1 x + b1) + b2) + b3, row-major [batch, features]. */
static rb_tensor *forward(rb_tensor *x, rb_tensor *const *w, rb_tensor *const *b) {
    rb_tensor *h = x;
    for (int l = 0; l < LAYERS; l++) {
        rb_tensor *mm = NULL, *z = NULL;
        CHECK(rb_matmul(NULL, h, w[l], &mm));
        CHECK(rb_add(NULL, mm, b[l], &z));
        CHECK(rb_tensor_destroy(mm));
        if (l + 1 < LAYERS) CHECK(rb_relu(NULL, z, &z)); /* in place */
        if (h != x) CHECK(rb_tensor_destroy(h));
        h = z;
    }
    return h;
}

int main(void) {
    printf("rocm-backend %s\n", rb_version());
    CHECK(rb_set_device("auto"));
    if (!rb_rocm_is_available()) printf("ROCm: not used (%s)\n", rb_rocm_unavailable_reason());
    printf("CUDA: %s\n", rb_cuda_is_available() ? "available" : "not available");

    rb_device_properties p;
    CHECK(rb_device_info(NULL, &p));
    printf("\ndevice (rb_device_info):\n");
    printf("  device         %s\n", p.device);
    printf("  kind, ordinal  %d, %d\n", p.kind, p.ordinal);
    printf("  name           %s\n", p.name);
    printf("  arch, family   %s, %s\n", p.arch, p.family);
    printf("  memory         %.1f GiB total, %.1f GiB free\n", (double)p.total_memory / (1 << 30),
           (double)p.free_memory / (1 << 30));
    printf("  compute units  %u, warp size %u\n", p.compute_units, p.warp_size);
    printf("  features       matrix cores %s, bf16 %s, fp8 %s\n", p.matrix_cores ? "yes" : "no",
           p.bf16 ? "yes" : "no", p.fp8 ? "yes" : "no");

    /* Weights, biases and input. */
    rb_tensor *w[LAYERS], *b[LAYERS], *x = NULL;
    for (int l = 0; l < LAYERS; l++) {
        const int64_t ws[2] = {DIMS[l], DIMS[l + 1]}, bs[1] = {DIMS[l + 1]};
        w[l] = randn_scaled(ws, 2, 100 + (uint64_t)l, sqrtf(2.0f / (float)DIMS[l]));
        b[l] = randn_scaled(bs, 1, 200 + (uint64_t)l, 0.1f);
    }
    const int64_t xs[2] = {BATCH, DIMS[0]};
    CHECK(rb_tensor_randn(NULL, xs, 2, RB_DTYPE_F32, 7, &x));

    /* Warm up, then time. */
    rb_tensor *logits = forward(x, w, b);
    CHECK(rb_synchronize());
    const int reps = 20;
    double t0 = now_s();
    for (int r = 0; r < reps; r++) {
        CHECK(rb_tensor_destroy(logits));
        logits = forward(x, w, b);
    }
    CHECK(rb_synchronize());
    double per = (now_s() - t0) / reps;

    int64_t shape[16];
    size_t nd = 0, n = 0;
    CHECK(rb_tensor_ndim(logits, &nd));
    CHECK(rb_tensor_shape(logits, shape, 16));
    float *out = to_host(logits, &n);

    /* The same forward pass in plain C, for a check. */
    size_t nx = 0;
    float *h = to_host(x, &nx);
    for (int l = 0; l < LAYERS; l++) {
        size_t nw = 0, nb = 0;
        float *hw = to_host(w[l], &nw), *hb = to_host(b[l], &nb);
        const int64_t in = DIMS[l], o = DIMS[l + 1];
        float *z = calloc((size_t)(BATCH * o), sizeof *z);
        if (!z) return 1;
        for (int i = 0; i < BATCH; i++)
            for (int64_t j = 0; j < o; j++) {
                float s = 0.0f;
                for (int64_t k = 0; k < in; k++) s += h[i * in + k] * hw[k * o + j];
                s += hb[j];
                z[i * o + j] = (l + 1 < LAYERS && s < 0.0f) ? 0.0f : s;
            }
        free(h);
        free(hw);
        free(hb);
        h = z;
    }
    double sum = 0, sq = 0, maxerr = 0, maxref = 0;
    float mn = out[0], mx = out[0];
    for (size_t i = 0; i < n; i++) {
        sum += out[i];
        sq += (double)out[i] * out[i];
        mn = out[i] < mn ? out[i] : mn;
        mx = out[i] > mx ? out[i] : mx;
        maxerr = fmax(maxerr, fabs((double)out[i] - h[i]));
        maxref = fmax(maxref, fabs((double)h[i]));
    }
    double mean = sum / (double)n, sd = sqrt(sq / (double)n - mean * mean);
    double flops = 2.0 * BATCH * (784.0 * 256 + 256.0 * 128 + 128.0 * 10);

    printf("\nMLP forward 784-256-128-10, batch %d, f32, random weights (He init):\n", BATCH);
    printf("  logits shape   [%lld, %lld] (%zu dims)\n", (long long)shape[0], (long long)shape[1], nd);
    printf("  logits         mean %.4f, std %.4f, min %.4f, max %.4f\n", mean, sd, mn, mx);
    printf("  row 0          ");
    int arg = 0;
    for (int j = 0; j < 10; j++) {
        printf("%.3f ", out[j]);
        if (out[j] > out[arg]) arg = j;
    }
    printf("-> class %d\n", arg);
    printf("  time           %.3f ms per forward (mean of %d), %.2f GFLOP/s\n", per * 1e3, reps,
           flops / per * 1e-9);
    int ok = maxerr <= 1e-4 * fmax(1.0, maxref);
    printf("  check          max |rb - C loop| = %.2e (%s)\n", maxerr, ok ? "ok" : "MISMATCH");

    free(out);
    free(h);
    CHECK(rb_tensor_destroy(logits));
    CHECK(rb_tensor_destroy(x));
    for (int l = 0; l < LAYERS; l++) {
        CHECK(rb_tensor_destroy(w[l]));
        CHECK(rb_tensor_destroy(b[l]));
    }
    return ok ? 0 : 1;
}
