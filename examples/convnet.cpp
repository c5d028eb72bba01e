// A small convolutional network recorded through the C API (with the C++ wrapper,
// rocm_backend.hpp), run by an executor at O3 on the best device present, checked against
// the same calls made eagerly, and timed.
//
//   conv3x3(3->32) + batch norm + relu, max pool 2x2,
//   conv3x3(32->64) + batch norm + relu, a residual conv3x3(64->64) + batch norm, add, relu,
//   global average pool, linear(64->10)
//
// Build: the CMake consumer test builds it against the installed package
// (find_package(RocmBackend), target RocmBackend::rocm_backend) and runs it with a small
// batch; `convnet [batch] [iterations]` runs it by hand.
#include <rocm_backend.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// One recorded or eager call: every rb_* function takes the stream first.
struct Net {
  rb::Tensor w1, w2, w3, fc_w, fc_b;
  rb::Tensor bn[3][4];  // mean, var, gamma, beta per batch norm

  static rb::Tensor scaled(const std::vector<int64_t>& shape, uint64_t seed, float scale) {
    rb::Tensor r = rb::Tensor::randn(shape, seed);
    rb::Tensor s = rb::Tensor::from_vector({scale}, {});
    return rb::Tensor::make([&](rb_tensor** o) { return rb_mul(nullptr, r.get(), s.get(), o); });
  }

  Net() {
    w1 = scaled({32, 3, 3, 3}, 1, std::sqrt(2.0f / 27.0f));
    w2 = scaled({64, 32, 3, 3}, 2, std::sqrt(2.0f / 288.0f));
    w3 = scaled({64, 64, 3, 3}, 3, std::sqrt(2.0f / 576.0f));
    fc_w = scaled({10, 64}, 4, 0.1f);
    fc_b = scaled({10}, 5, 0.1f);
    const int64_t ch[3] = {32, 64, 64};
    for (int i = 0; i < 3; i++) {
      bn[i][0] = scaled({ch[i]}, 10 + i, 0.1f);                         // running mean
      std::vector<float> var(static_cast<std::size_t>(ch[i]));
      for (std::size_t k = 0; k < var.size(); k++) var[k] = 0.5f + 0.01f * static_cast<float>(k);
      bn[i][1] = rb::Tensor::from_vector(var, {ch[i]});                  // running var
      bn[i][2] = scaled({ch[i]}, 20 + i, 1.0f);                          // gamma
      bn[i][3] = scaled({ch[i]}, 30 + i, 0.1f);                          // beta
    }
  }

  rb::Tensor conv_bn(rb_stream* s, const rb::Tensor& x, const rb::Tensor& w, int i) const {
    rb_conv_params p{};
    p.ndim = 2;
    for (int d = 0; d < 3; d++) {
      p.stride[d] = 1;
      p.padding[d] = 1;
      p.dilation[d] = 1;
    }
    p.groups = 1;
    rb::Tensor y = rb::Tensor::make(
        [&](rb_tensor** o) { return rb_conv(s, x.get(), w.get(), nullptr, &p, RB_ACTIVATION_NONE, o); });
    return rb::Tensor::make([&](rb_tensor** o) {
      return rb_batch_norm(s, y.get(), bn[i][0].get(), bn[i][1].get(), bn[i][2].get(), bn[i][3].get(),
                           false, 0.1, 1e-5, o);
    });
  }

  static rb::Tensor relu(rb_stream* s, const rb::Tensor& x) {
    return rb::Tensor::make([&](rb_tensor** o) { return rb_relu(s, x.get(), o); });
  }

  // The forward pass on stream `s` (NULL: the default stream, eagerly).
  rb::Tensor forward(rb_stream* s, const rb::Tensor& x) const {
    rb::Tensor h = relu(s, conv_bn(s, x, w1, 0));
    rb_pool_params pp{};
    pp.ndim = 2;
    for (int d = 0; d < 3; d++) {
      pp.kernel[d] = 2;
      pp.stride[d] = 2;
      pp.dilation[d] = 1;
    }
    h = rb::Tensor::make([&](rb_tensor** o) { return rb_pool(s, RB_POOL_MODE_MAX, h.get(), &pp, o); });
    h = relu(s, conv_bn(s, h, w2, 1));
    rb::Tensor r = conv_bn(s, h, w3, 2);
    h = rb::Tensor::make([&](rb_tensor** o) { return rb_add(s, r.get(), h.get(), o); });
    h = relu(s, h);
    h = rb::Tensor::make([&](rb_tensor** o) { return rb_adaptive_avg_pool2d(s, h.get(), 1, 1, o); });
    const int64_t n = h.shape()[0];
    h = h.reshape({n, 64});
    return rb::Tensor::make(
        [&](rb_tensor** o) { return rb_linear(s, h.get(), fc_w.get(), fc_b.get(), o); });
  }
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const int64_t batch = argc > 1 ? std::atoll(argv[1]) : 8;
    const int iters = argc > 2 ? std::atoi(argv[2]) : 20;
    rb::check(rb_set_device("auto"));
    char dev[32];
    rb::check(rb_get_device(dev, sizeof dev));
    const Net net;

    // Record the forward pass once: calls on the capturing stream become graph nodes.
    rb::Graph g;
    rb::Stream s;
    rb::Tensor x = g.input({batch, 3, 32, 32});
    rb::Tensor logits;
    {
      rb::Graph::Capture cap(g, s);
      logits = net.forward(s.get(), x);
      cap.end();
    }
    g.mark_output(logits);
    const rb_executor_config cfg = rb::Executor::config(3);
    rb::Executor exe(g, &cfg);

    // The executor's result against the same calls made eagerly.
    const rb::Tensor input = rb::Tensor::randn({batch, 3, 32, 32}, 99);
    const rb::Tensor want = net.forward(nullptr, input);
    std::vector<rb::Tensor> got = exe.run({&input}, 1, &s);
    s.synchronize();
    const std::vector<float> a = got[0].to_vector<float>(), b = want.to_vector<float>();
    double err = 0.0;
    for (std::size_t i = 0; i < a.size(); i++) {
      err = std::fmax(err, std::fabs(a[i] - b[i]) / (1.0 + std::fabs(b[i])));
    }
    // O3 runs products in bf16 on GPUs (O2's mixed precision): allow its rounding.
    const bool ok = a.size() == b.size() && err < 5e-2;

    rb_executor_stats st;
    rb::check(rb_executor_get_stats(exe.get(), &st));
    const rb::Tensor out = rb::Tensor::empty({batch, 10});
    for (int i = 0; i < 3; i++) exe.run_into({&input}, {&out}, &s);
    s.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; i++) exe.run_into({&input}, {&out}, &s);
    s.synchronize();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("convnet on %s at O3: %zu nodes recorded -> %zu launches per run, %.0f images/s "
                "(batch %lld, %d runs), max rel. difference to eager %.2e: %s\n",
                dev, st.nodes_recorded, st.launches_per_run,
                static_cast<double>(batch) * iters / secs, static_cast<long long>(batch), iters, err,
                ok ? "ok" : "MISMATCH");
    return ok ? 0 : 1;
  } catch (const rb::Error& e) {
    std::fprintf(stderr, "convnet: %s\n", e.what());
    return 1;
  }
}
