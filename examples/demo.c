/* The rocm-backend demo: picks the best device present (rb_set_device("auto")), prints what
 * it is, runs the forward pass of a small MLP (784-256-128-10, batch 32, random weights)
 * through the C API (rb_tensor_randn, rb_matmul, rb_add, rb_relu), checked against a plain
 * C loop and timed, then trains the same MLP on synthetic data for a few hundred steps
 * (rb_linear, rb_relu, rb_cross_entropy and their backwards, rb_sgd_step), printing the
 * falling loss and the throughput: eagerly, then with the step recorded once into a graph
 * and run by an executor (O3 on a GPU, O1 on the CPU), one run per step.   make demo */
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

/* ---- training: the same MLP, torch.nn.Linear layout (W [out, in]), cross entropy, SGD ---- */

enum { TRAIN_SAMPLES = 2048, TRAIN_STEPS = 300 };

static float host_scalar(const rb_tensor *t) {
    float v = 0.0f;
    CHECK(rb_tensor_copy_to_host(t, &v, sizeof v));
    return v;
}

static void destroy_all(rb_tensor **ts, int n) {
    for (int i = 0; i < n; i++) {
        CHECK(rb_tensor_destroy(ts[i]));
        ts[i] = NULL;
    }
}

static const float LR = 0.05f, MOMENTUM = 0.9f;

/* Parameters and their momentum buffers. */
struct mlp_params {
    rb_tensor *w[LAYERS], *b[LAYERS], *mw[LAYERS], *mb[LAYERS];
};

static void init_params(struct mlp_params *p) {
    for (int l = 0; l < LAYERS; l++) {
        const int64_t ws[2] = {DIMS[l + 1], DIMS[l]}, bs[1] = {DIMS[l + 1]};
        p->w[l] = randn_scaled(ws, 2, 300 + (uint64_t)l, sqrtf(2.0f / (float)DIMS[l]));
        p->b[l] = p->mw[l] = p->mb[l] = NULL;
        CHECK(rb_tensor_zeros(NULL, bs, 1, RB_DTYPE_F32, &p->b[l]));
        CHECK(rb_tensor_zeros(NULL, ws, 2, RB_DTYPE_F32, &p->mw[l]));
        CHECK(rb_tensor_zeros(NULL, bs, 1, RB_DTYPE_F32, &p->mb[l]));
    }
}

static void free_params(struct mlp_params *p) {
    destroy_all(p->w, LAYERS);
    destroy_all(p->b, LAYERS);
    destroy_all(p->mw, LAYERS);
    destroy_all(p->mb, LAYERS);
}

/* One training step on stream `s` (NULL: the default stream): forward, cross entropy,
 * backward, SGD with momentum on every parameter. Returns the loss (the caller destroys it).
 * On a stream being recorded into a graph, the same calls are recorded instead of run. The
 * momentum buffers start at zero, so the first step needs no special case (dampening 0). */
static rb_tensor *train_step(rb_stream *s, struct mlp_params *p, rb_tensor *x, rb_tensor *y, rb_tensor *one) {
    rb_tensor *z[LAYERS] = {NULL}, *h[LAYERS] = {NULL};
    rb_tensor *in = x;
    for (int l = 0; l < LAYERS; l++) {
        CHECK(rb_linear(s, in, p->w[l], p->b[l], &z[l]));
        if (l + 1 < LAYERS) {
            CHECK(rb_relu(s, z[l], &h[l]));
            in = h[l];
        }
    }
    rb_tensor *loss = NULL, *g = NULL;
    CHECK(rb_cross_entropy(s, z[LAYERS - 1], y, RB_REDUCTION_MEAN, -100, 0.0, &loss));
    CHECK(rb_cross_entropy_backward(s, one, z[LAYERS - 1], y, RB_REDUCTION_MEAN, -100, 0.0, &g));
    /* backward, last layer first; g is d(loss)/dz[l] */
    for (int l = LAYERS - 1; l >= 0; l--) {
        rb_tensor *dx = NULL, *dw = NULL, *db = NULL;
        /* the first layer's input needs no gradient: a NULL dx is not computed */
        CHECK(rb_linear_backward(s, l > 0 ? h[l - 1] : x, p->w[l], g, l > 0 ? &dx : NULL, &dw,
                                 &db));
        CHECK(rb_sgd_step(s, p->w[l], dw, p->mw[l], LR, MOMENTUM, 0.0f, 0.0f, 0, 0));
        CHECK(rb_sgd_step(s, p->b[l], db, p->mb[l], LR, MOMENTUM, 0.0f, 0.0f, 0, 0));
        CHECK(rb_tensor_destroy(g));
        g = NULL;
        if (l > 0) CHECK(rb_relu_backward(s, z[l - 1], dx, &g));
        CHECK(rb_tensor_destroy(dx));
        CHECK(rb_tensor_destroy(dw));
        CHECK(rb_tensor_destroy(db));
    }
    destroy_all(z, LAYERS);
    destroy_all(h, LAYERS - 1);
    return loss;
}

/* Prints the mean loss of every 50 steps. */
static void report(int step, float lv, double *first, double *last, double *window) {
    if (step == 0) *first = lv;
    *window += lv;
    if ((step + 1) % 50 == 0) {
        printf("  step %3d  loss %.4f (mean of the last 50 steps)\n", step + 1, *window / 50.0);
        *last = *window / 50.0;
        *window = 0.0;
    }
}

/* Synthetic task: x ~ N(0, 1); the label is the argmax of x·T for a fixed random "teacher"
 * T [784, 10], so a network can learn it. */
static int train(void) {
    /* Training needs cross entropy, linear backward and SGD on the device; where a GPU has no
     * kernels for them yet (RB_STATUS_UNSUPPORTED), say so and train on the CPU. */
    {
        rb_tensor *lg = NULL, *tg = NULL, *l = NULL;
        const int64_t ls[2] = {1, 2}, ts[1] = {1};
        CHECK(rb_tensor_randn(NULL, ls, 2, RB_DTYPE_F32, 1, &lg));
        CHECK(rb_tensor_zeros(NULL, ts, 1, RB_DTYPE_I64, &tg));
        rb_status st = rb_cross_entropy(NULL, lg, tg, RB_REDUCTION_MEAN, -100, 0.0, &l);
        if (st == RB_STATUS_UNSUPPORTED) {
            char dev[32];
            CHECK(rb_get_device(dev, sizeof dev));
            printf("\nTraining: %s has no cross-entropy kernel yet (%s); training on the CPU.\n", dev,
                   rb_last_error_message());
            CHECK(rb_set_device("cpu"));
        } else {
            CHECK(st);
            CHECK(rb_tensor_destroy(l));
        }
        CHECK(rb_tensor_destroy(lg));
        CHECK(rb_tensor_destroy(tg));
    }
    float *xs = malloc(sizeof(float) * TRAIN_SAMPLES * 784);
    int64_t *ys = malloc(sizeof(int64_t) * TRAIN_SAMPLES);
    float *teacher = malloc(sizeof(float) * 784 * 10);
    if (!xs || !ys || !teacher) return 1;
    {
        rb_tensor *tx = NULL, *tt = NULL;
        const int64_t sx[2] = {TRAIN_SAMPLES, 784}, st[2] = {784, 10};
        CHECK(rb_tensor_randn("cpu", sx, 2, RB_DTYPE_F32, 11, &tx));
        CHECK(rb_tensor_randn("cpu", st, 2, RB_DTYPE_F32, 12, &tt));
        CHECK(rb_tensor_copy_to_host(tx, xs, sizeof(float) * TRAIN_SAMPLES * 784));
        CHECK(rb_tensor_copy_to_host(tt, teacher, sizeof(float) * 784 * 10));
        CHECK(rb_tensor_destroy(tx));
        CHECK(rb_tensor_destroy(tt));
    }
    for (int i = 0; i < TRAIN_SAMPLES; i++) {
        int best = 0;
        float bv = -1e30f;
        for (int c = 0; c < 10; c++) {
            float s = 0.0f;
            for (int k = 0; k < 784; k++) s += xs[i * 784 + k] * teacher[k * 10 + c];
            if (s > bv) bv = s, best = c;
        }
        ys[i] = best;
    }

    rb_tensor *x = NULL, *y = NULL, *one = NULL;
    const int64_t xshape[2] = {BATCH, 784}, yshape[1] = {BATCH};
    CHECK(rb_tensor_empty(NULL, xshape, 2, RB_DTYPE_F32, &x));
    CHECK(rb_tensor_empty(NULL, yshape, 1, RB_DTYPE_I64, &y));
    const float onev = 1.0f;
    CHECK(rb_tensor_from_host(NULL, &onev, sizeof onev, NULL, 0, RB_DTYPE_F32, &one));
    struct mlp_params p;

    printf("\nTraining the MLP on synthetic data (%d samples, batch %d, SGD lr %.2f momentum %.1f):\n",
           TRAIN_SAMPLES, BATCH, (double)LR, (double)MOMENTUM);
    printf(" eagerly, one call per op:\n");
    init_params(&p);
    double first = 0.0, last = 0.0, window = 0.0;
    double t0 = now_s();
    for (int step = 0; step < TRAIN_STEPS; step++) {
        int off = (step * BATCH) % TRAIN_SAMPLES;
        CHECK(rb_tensor_copy_from_host(x, xs + (size_t)off * 784, sizeof(float) * BATCH * 784));
        CHECK(rb_tensor_copy_from_host(y, ys + off, sizeof(int64_t) * BATCH));
        rb_tensor *loss = train_step(NULL, &p, x, y, one);
        report(step, host_scalar(loss), &first, &last, &window);
        CHECK(rb_tensor_destroy(loss));
    }
    CHECK(rb_synchronize());
    double eager_secs = now_s() - t0;
    printf("  %d steps in %.3f s: %.0f steps/s, %.0f samples/s (first loss %.4f)\n", TRAIN_STEPS,
           eager_secs, TRAIN_STEPS / eager_secs, TRAIN_STEPS * BATCH / eager_secs, first);
    int ok = last < 0.5 * first;
    printf("  check          loss fell %s (%.4f -> %.4f)\n", ok ? "ok" : "TOO LITTLE", first, last);
    free_params(&p);

    /* The same training, the step recorded once into a graph (forward, backward and the six
     * SGD updates) and run by an executor: one rb_executor_run per step. O3 (device-graph
     * replay) on a GPU; O1 on the CPU, where bf16 products (O2) are slower than f32. */
    char dev[32];
    CHECK(rb_get_device(dev, sizeof dev));
    int level = strncmp(dev, "cpu", 3) == 0 ? 1 : 3;
    printf(" through an executor at O%d, one run per step:\n", level);
    init_params(&p);
    rb_graph *g = NULL;
    rb_stream *s = NULL;
    rb_tensor *xp = NULL, *yp = NULL;
    CHECK(rb_graph_create(NULL, &g));
    CHECK(rb_stream_create(NULL, &s));
    CHECK(rb_graph_input(g, xshape, 2, RB_DTYPE_F32, &xp));
    CHECK(rb_graph_input(g, yshape, 1, RB_DTYPE_I64, &yp));
    CHECK(rb_graph_capture_begin(g, s));
    rb_tensor *rloss = train_step(s, &p, xp, yp, one);
    CHECK(rb_graph_capture_end(g, s));
    CHECK(rb_graph_mark_output(g, rloss, NULL));
    rb_executor_config c;
    CHECK(rb_executor_config_default(&c));
    c.opt_level = level;
    rb_executor *e = NULL;
    CHECK(rb_executor_create(g, &c, &e));
    rb_tensor *loss = NULL;
    CHECK(rb_tensor_empty(NULL, NULL, 0, RB_DTYPE_F32, &loss));
    first = last = window = 0.0;
    t0 = now_s();
    for (int step = 0; step < TRAIN_STEPS; step++) {
        int off = (step * BATCH) % TRAIN_SAMPLES;
        CHECK(rb_tensor_copy_from_host(x, xs + (size_t)off * 784, sizeof(float) * BATCH * 784));
        CHECK(rb_tensor_copy_from_host(y, ys + off, sizeof(int64_t) * BATCH));
        const rb_tensor *ins[2] = {x, y};
        rb_tensor *outs[1] = {loss};
        CHECK(rb_executor_run(e, s, ins, 2, outs, 1));
        CHECK(rb_stream_synchronize(s));
        report(step, host_scalar(loss), &first, &last, &window);
    }
    double secs = now_s() - t0;
    rb_executor_stats es;
    CHECK(rb_executor_get_stats(e, &es));
    printf("  %d steps in %.3f s: %.0f steps/s, %.0f samples/s (eager: %.0f steps/s; %zu nodes "
           "recorded, %zu launches per step)\n",
           TRAIN_STEPS, secs, TRAIN_STEPS / secs, TRAIN_STEPS * BATCH / secs, TRAIN_STEPS / eager_secs,
           es.nodes_recorded, es.launches_per_run);
    int ok2 = last < 0.5 * first;
    printf("  check          loss fell %s (%.4f -> %.4f)\n", ok2 ? "ok" : "TOO LITTLE", first, last);
    ok = ok && ok2;
    CHECK(rb_executor_destroy(e));
    CHECK(rb_graph_destroy(g));
    CHECK(rb_tensor_destroy(rloss));
    CHECK(rb_tensor_destroy(xp));
    CHECK(rb_tensor_destroy(yp));
    CHECK(rb_tensor_destroy(loss));
    CHECK(rb_stream_destroy(s));
    free_params(&p);

    CHECK(rb_tensor_destroy(x));
    CHECK(rb_tensor_destroy(y));
    CHECK(rb_tensor_destroy(one));
    free(xs);
    free(ys);
    free(teacher);
    return ok ? 0 : 1;
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
    if (!ok) return 1;
    return train();
}
