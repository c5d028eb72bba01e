// A C++ client of the installed package through rocm_backend.hpp (built with -std=c++17
// -Wall -Wextra -Werror -pedantic, and once more with ASan+UBSan): RAII owners, moves,
// errors as rb::Error, mixing with the C API, streams and events, a recorded graph run by an
// executor, DLPack round trips and the Chrome trace. Prints one line and exits 0 on success.
#include <rocm_backend.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#ifndef RB_CONSUMER_KIND
#define RB_CONSUMER_KIND "c++"
#endif

#define EXPECT(cond)                                                          \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

namespace {

// The first DLPack fields we read here (dlpack.h's layout; the library's header passes the
// managed tensors as void* so it never clashes with a dlpack.h of the caller's).
struct DLManagedTensorVersionedHead {
  uint32_t major, minor;
  void* manager_ctx;
  void (*deleter)(void*);
  uint64_t flags;
  void* data;
};

int run() {
  rb::set_device("cpu");
  std::vector<float> a = {1, -2, 3, -4, 5, -6}, b = {0.5f, 1, -1, 2, 0.25f, -0.5f};
  rb::Tensor ta = rb::Tensor::from_vector(a, {2, 3});
  rb::Tensor tb = rb::Tensor::from_vector(b, {3, 2});
  rb::Tensor y = rb::relu(rb::matmul(ta, tb));
  std::vector<float> got = y.to_vector<float>();
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      float s = 0;
      for (int k = 0; k < 3; k++) s += a[i * 3 + k] * b[k * 2 + j];
      EXPECT(std::fabs((s > 0 ? s : 0) - got[i * 2 + j]) < 1e-5f);
    }
  EXPECT(y.shape() == (std::vector<int64_t>{2, 2}) && y.dtype() == RB_DTYPE_F32 && y.numel() == 4);

  // Errors: status and message.
  try {
    rb::Tensor bad = rb::matmul(ta, ta);  // 2x3 @ 2x3
    EXPECT(false);
  } catch (const rb::Error& e) {
    EXPECT(e.status() == RB_STATUS_SHAPE_MISMATCH);
    EXPECT(!e.message().empty());
    EXPECT(std::string(e.what()).rfind("RB_STATUS_SHAPE_MISMATCH", 0) == 0);
  }

  // Move-only ownership; release/adopt to mix with the C API.
  rb::Tensor moved = std::move(y);
  EXPECT(!y && moved);
  rb_tensor* raw = moved.release();
  EXPECT(!moved);
  rb_tensor* sum = nullptr;
  rb::check(rb_add(nullptr, raw, raw, &sum));
  rb::Tensor owned(sum);
  EXPECT(rb_tensor_destroy(raw) == RB_STATUS_SUCCESS);
  rb::Tensor g = rb::Tensor::make(
      [&](rb_tensor** o) { return rb_gelu(nullptr, owned.get(), RB_GELU_APPROXIMATE_NONE, o); });
  EXPECT(g.numel() == 4);
  moved = std::move(owned);  // move-assign over an empty owner

  // Streams and events.
  rb::Stream s;
  rb::Event e0, e1;
  e0.record(s);
  rb::Tensor z = rb::add(ta, ta, &s);
  e1.record(s);
  e1.synchronize();
  EXPECT(e1.query());
  EXPECT(rb::Event::elapsed_ms(e0, e1) >= 0.0f);
  s.synchronize();

  // A recorded graph and its executor at O1.
  rb::Graph graph;
  rb::Tensor x = graph.input({2, 3});
  {
    rb::Graph::Capture cap(graph, s);
    rb::Tensor h = rb::relu(rb::add(x, ta, &s), &s);
    graph.mark_output(h);
    cap.end();
  }
  EXPECT(graph.num_nodes() >= 2);
  rb_executor_config cfg = rb::Executor::config(1);
  rb::Executor exec(graph, &cfg);
  std::vector<rb::Tensor> outs = exec.run({&ta}, 1);
  std::vector<float> r = outs.at(0).to_vector<float>();
  for (std::size_t i = 0; i < r.size(); i++) EXPECT(r[i] == (2 * a[i] > 0 ? 2 * a[i] : 0));

  // DLPack: export, import back (zero-copy both ways; each deleter runs once: ASan checks).
  void* m = ta.to_dlpack();
  auto* head = static_cast<DLManagedTensorVersionedHead*>(m);
  EXPECT(head->major == 1 && head->data == ta.data_ptr());
  rb::Tensor back = rb::Tensor::from_dlpack(m);
  EXPECT(back.data_ptr() == ta.data_ptr());
  void* m2 = ta.to_dlpack_legacy();
  rb::Tensor back2 = rb::Tensor::from_dlpack_legacy(m2);
  EXPECT(back2.to_vector<float>() == a);
  void* m3 = ta.to_dlpack();
  static_cast<DLManagedTensorVersionedHead*>(m3)->deleter(m3);  // a consumer that gives up
  try {
    rb::Tensor::from_dlpack(nullptr);
    EXPECT(false);
  } catch (const rb::Error& err) {
    EXPECT(err.status() == RB_STATUS_NULL_POINTER);
  }

  // The profiler's Chrome trace.
  rb::profiler::enable();
  rb::Tensor p = rb::matmul(ta, tb);
  std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                     "/rb_consumer_trace_" + RB_CONSUMER_KIND + ".json";
  rb::profiler::export_chrome_trace(path.c_str());
  rb::profiler::enable(false);
  FILE* f = std::fopen(path.c_str(), "r");
  EXPECT(f != nullptr);
  char buf[32] = {0};
  EXPECT(std::fread(buf, 1, 15, f) == 15);
  std::fclose(f);
  std::remove(path.c_str());
  EXPECT(std::string(buf).rfind("{\"traceEvents\":", 0) == 0);
  EXPECT(rb::profiler::summary().find("rb_matmul") != std::string::npos);

  std::printf("consumer_%s: rocm_backend.hpp %s: RAII, errors, streams, graph, DLPack, trace ok\n",
              RB_CONSUMER_KIND, rb::version());
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const rb::Error& e) {
    std::fprintf(stderr, "unexpected rb::Error: %s\n", e.what());
    return 1;
  }
}
