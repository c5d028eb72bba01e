/* rocm_backend.hpp: header-only C++17 wrappers over the C API of rocm-backend.
 *
 * Move-only RAII owners of the C handles (rb::Tensor, rb::Stream, rb::Event, rb::Graph,
 * rb::Executor, rb::Comm): each destroys its handle in its destructor, exactly once; a moved-from
 * object holds nothing. Every failed C call becomes an rb::Error exception carrying the
 * rb_status and the library's message (rb_last_error_message of the same thread).
 *
 * Mixing with the C API: `.get()` lends the C handle (still owned by the wrapper: do not
 * destroy it); `.release()` hands it over (the caller now owns it and destroys it with
 * rb_<object>_destroy); `rb::Tensor(handle)` (and the other types' explicit constructors)
 * take ownership of a handle the C API made. Every eager op of rocm_backend.h is reachable
 * through rb::Tensor::make:
 *
 *     rb::Tensor y = rb::Tensor::make([&](rb_tensor** out) {
 *         return rb_gelu(nullptr, x.get(), RB_GELU_APPROXIMATE_NONE, out);
 *     });
 *
 * Threads: as the C API (handles may be used from several threads; one object must not be
 * moved or destroyed while another thread uses it). Destructors never throw: a failure to
 * destroy (impossible for a handle the wrapper owns) is ignored.
 *
 * Installed next to rocm_backend.h by `make install`; `find_package(RocmBackend)` and
 * `target_link_libraries(app PRIVATE RocmBackend::rocm_backend)` put both on the include
 * path. */
#ifndef ROCM_BACKEND_HPP
#define ROCM_BACKEND_HPP

#include <rocm_backend.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rb {

/** A failed call: `status()` is the rb_status, `message()` the library's message; what()
 * is "RB_STATUS_...: message". */
class Error : public std::runtime_error {
 public:
  Error(rb_status status, const std::string& message)
      : std::runtime_error(std::string(rb_status_string(static_cast<int32_t>(status))) + ": " +
                           message),
        status_(status),
        message_(message) {}
  rb_status status() const noexcept { return status_; }
  const std::string& message() const noexcept { return message_; }

 private:
  rb_status status_;
  std::string message_;
};

/** Throws rb::Error with the calling thread's last message unless `status` is SUCCESS. */
inline void check(rb_status status) {
  if (status != RB_STATUS_SUCCESS) {
    const char* m = rb_last_error_message();
    throw Error(status, m ? m : "");
  }
}

/** The library's version string, "MAJOR.MINOR.PATCH" (static; never freed). */
inline const char* version() noexcept { return rb_version(); }

/** Makes `device` ("cpu", "rocm:N", "cuda:N", "auto") the current device of this thread. */
inline void set_device(const char* device) { check(rb_set_device(device)); }

/** Waits for all work queued on the current device. */
inline void synchronize() { check(rb_synchronize()); }

namespace detail {

/** The owner of one C handle, destroyed with `Destroy` (move-only). */
template <typename T, rb_status (*Destroy)(T*)>
class Handle {
 public:
  Handle() noexcept = default;
  explicit Handle(T* h) noexcept : h_(h) {}
  ~Handle() { reset(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : h_(o.release()) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  /** The C handle, still owned here (NULL when empty). */
  T* get() const noexcept { return h_; }
  /** Gives the C handle up: the caller owns it now; this object is empty. */
  T* release() noexcept {
    T* h = h_;
    h_ = nullptr;
    return h;
  }
  /** Destroys the handle held (if any) and holds `h` instead. */
  void reset(T* h = nullptr) noexcept {
    if (h_ != nullptr) (void)Destroy(h_);
    h_ = h;
  }
  explicit operator bool() const noexcept { return h_ != nullptr; }

 private:
  T* h_ = nullptr;
};

inline std::string text(rb_status (*query)(char*, std::size_t, std::size_t*)) {
  std::size_t n = 0;
  check(query(nullptr, 0, &n));
  std::string s(n, '\0');
  check(query(&s[0], n, nullptr));
  s.resize(n > 0 ? n - 1 : 0);
  return s;
}

}  // namespace detail

/** A stream on a device (default: the current one). Owns its rb_stream. */
class Stream : public detail::Handle<rb_stream, rb_stream_destroy> {
 public:
  /** Takes ownership of a stream handle the C API made (NULL: an empty object). */
  explicit Stream(rb_stream* h) noexcept : Handle(h) {}
  /** Makes a new stream on `device` (NULL: the current device). */
  explicit Stream(const char* device = nullptr) {
    rb_stream* h = nullptr;
    check(rb_stream_create(device, &h));
    reset(h);
  }
  /** Waits for the work queued on the stream. */
  void synchronize() const { check(rb_stream_synchronize(get())); }
};

/** An event on a device, for ordering and timing streams. Owns its rb_event. */
class Event : public detail::Handle<rb_event, rb_event_destroy> {
 public:
  explicit Event(rb_event* h) noexcept : Handle(h) {}
  explicit Event(const char* device = nullptr) {
    rb_event* h = nullptr;
    check(rb_event_create(device, &h));
    reset(h);
  }
  /** Records the event on `stream` (NULL: the device's default stream). */
  void record(const Stream* stream = nullptr) const {
    check(rb_event_record(get(), stream ? stream->get() : nullptr));
  }
  void record(const Stream& stream) const { record(&stream); }
  /** Waits until the work before the recording is done. */
  void synchronize() const { check(rb_event_synchronize(get())); }
  /** True when the work before the recording is done. */
  bool query() const {
    bool done = false;
    check(rb_event_query(get(), &done));
    return done;
  }
  /** Milliseconds between two recorded events. */
  static float elapsed_ms(const Event& start, const Event& end) {
    float ms = 0;
    check(rb_event_elapsed_time(start.get(), end.get(), &ms));
    return ms;
  }
  /** Makes work queued on `stream` after this call wait for the event. */
  void wait_on(const Stream& stream) const { check(rb_stream_wait_event(stream.get(), get())); }
};

/** A dense row-major tensor owned by the library. Owns its rb_tensor handle; views
 * (reshape) and DLPack exports keep the storage alive on their own. */
class Tensor : public detail::Handle<rb_tensor, rb_tensor_destroy> {
 public:
  /** An empty object (no handle). */
  Tensor() noexcept = default;
  /** Takes ownership of a tensor handle the C API made. */
  explicit Tensor(rb_tensor* h) noexcept : Handle(h) {}

  /** Calls `f(rb_tensor** out)` (an eager op or any C call that makes a tensor) with
   * `*out == NULL`, throws on failure, and owns the new tensor. */
  template <typename F>
  static Tensor make(F&& f) {
    rb_tensor* h = nullptr;
    check(std::forward<F>(f)(&h));
    return Tensor(h);
  }

  /** Uninitialized, zeros, standard normal samples, or a copy of host data, of `shape` and
   * `dtype` on `device` (NULL: the current device). */
  static Tensor empty(const std::vector<int64_t>& shape, rb_dtype dtype = RB_DTYPE_F32,
                      const char* device = nullptr) {
    return make([&](rb_tensor** o) {
      return rb_tensor_empty(device, shape.data(), shape.size(), dtype, o);
    });
  }
  static Tensor zeros(const std::vector<int64_t>& shape, rb_dtype dtype = RB_DTYPE_F32,
                      const char* device = nullptr) {
    return make([&](rb_tensor** o) {
      return rb_tensor_zeros(device, shape.data(), shape.size(), dtype, o);
    });
  }
  static Tensor randn(const std::vector<int64_t>& shape, uint64_t seed = 0,
                      rb_dtype dtype = RB_DTYPE_F32, const char* device = nullptr) {
    return make([&](rb_tensor** o) {
      return rb_tensor_randn(device, shape.data(), shape.size(), dtype, seed, o);
    });
  }
  /** A copy of `nbytes` bytes at `data` (the caller keeps `data`). */
  static Tensor from_host(const void* data, std::size_t nbytes, const std::vector<int64_t>& shape,
                          rb_dtype dtype, const char* device = nullptr) {
    return make([&](rb_tensor** o) {
      return rb_tensor_from_host(device, data, nbytes, shape.data(), shape.size(), dtype, o);
    });
  }
  static Tensor from_vector(const std::vector<float>& v, const std::vector<int64_t>& shape,
                            const char* device = nullptr) {
    return from_host(v.data(), v.size() * sizeof(float), shape, RB_DTYPE_F32, device);
  }

  /** Imports a DLPack 1.x `DLManagedTensorVersioned*` without copying. On success the
   * tensor owns `managed` (its deleter runs once, when the storage goes); on failure
   * (rb::Error) the caller still owns it. */
  static Tensor from_dlpack(void* managed) {
    return make([&](rb_tensor** o) { return rb_tensor_from_dlpack(managed, o); });
  }
  /** As from_dlpack, for a legacy `DLManagedTensor*`. */
  static Tensor from_dlpack_legacy(void* managed) {
    return make([&](rb_tensor** o) { return rb_tensor_from_dlpack_legacy(managed, o); });
  }
  /** Exports as a `DLManagedTensorVersioned*` over the same memory; the caller owns the
   * result and calls its deleter once. `synchronize`: wait for the device's queued work. */
  void* to_dlpack(uint64_t flags = 0, bool synchronize = true) const {
    void* m = nullptr;
    check(rb_tensor_to_dlpack(get(), flags, synchronize, &m));
    return m;
  }
  /** As to_dlpack, as a legacy `DLManagedTensor*`. */
  void* to_dlpack_legacy(bool synchronize = true) const {
    void* m = nullptr;
    check(rb_tensor_to_dlpack_legacy(get(), synchronize, &m));
    return m;
  }

  std::vector<int64_t> shape() const {
    std::vector<int64_t> s(ndim());
    if (!s.empty()) check(rb_tensor_shape(get(), s.data(), s.size()));
    return s;
  }
  std::size_t ndim() const {
    std::size_t n = 0;
    check(rb_tensor_ndim(get(), &n));
    return n;
  }
  rb_dtype dtype() const {
    int32_t d = 0;
    check(rb_tensor_dtype(get(), &d));
    return static_cast<rb_dtype>(d);
  }
  std::size_t numel() const {
    std::size_t n = 0;
    check(rb_tensor_numel(get(), &n));
    return n;
  }
  std::size_t nbytes() const {
    std::size_t n = 0;
    check(rb_tensor_nbytes(get(), &n));
    return n;
  }
  /** The address of the first element (device memory on a GPU), the tensor's own. */
  void* data_ptr() const {
    void* p = nullptr;
    check(rb_tensor_data_ptr(get(), &p));
    return p;
  }
  /** (rb_device_kind, ordinal). */
  std::pair<int32_t, int32_t> device() const {
    int32_t k = 0, o = 0;
    check(rb_tensor_device(get(), &k, &o));
    return {k, o};
  }
  bool read_only() const {
    bool ro = false;
    check(rb_tensor_is_read_only(get(), &ro));
    return ro;
  }

  /** Copies all `nbytes()` bytes to `dst` (waits for queued work). */
  void copy_to_host(void* dst, std::size_t nbytes) const {
    check(rb_tensor_copy_to_host(get(), dst, nbytes));
  }
  /** Overwrites the tensor with `nbytes()` bytes from `src`. */
  void copy_from_host(const void* src, std::size_t nbytes) const {
    check(rb_tensor_copy_from_host(get(), src, nbytes));
  }
  /** The elements as a vector of T (T's size must be the dtype's). */
  template <typename T>
  std::vector<T> to_vector() const {
    std::size_t nb = nbytes();
    if (nb % sizeof(T) != 0) {
      throw Error(RB_STATUS_DTYPE_MISMATCH, "to_vector: element size differs from the dtype's");
    }
    std::vector<T> v(nb / sizeof(T));
    copy_to_host(v.data(), nb);
    return v;
  }
  /** A view of the same storage with another shape. */
  Tensor reshape(const std::vector<int64_t>& shape) const {
    return make([&](rb_tensor** o) { return rb_tensor_reshape(get(), shape.data(), shape.size(), o); });
  }
  /** A copy on `device` (NULL: the current device). */
  Tensor to_device(const char* device) const {
    return make([&](rb_tensor** o) { return rb_tensor_to_device(get(), device, o); });
  }
};

namespace detail {
inline rb_stream* stream_of(const Stream* s) noexcept { return s ? s->get() : nullptr; }
}  // namespace detail

/** A few eager ops (a new result each; `stream` NULL: the inputs' default stream). Every
 * other op: Tensor::make with the rb_<op> of rocm_backend.h. */
inline Tensor add(const Tensor& a, const Tensor& b, const Stream* stream = nullptr) {
  return Tensor::make([&](rb_tensor** o) { return rb_add(detail::stream_of(stream), a.get(), b.get(), o); });
}
inline Tensor mul(const Tensor& a, const Tensor& b, const Stream* stream = nullptr) {
  return Tensor::make([&](rb_tensor** o) { return rb_mul(detail::stream_of(stream), a.get(), b.get(), o); });
}
inline Tensor matmul(const Tensor& a, const Tensor& b, const Stream* stream = nullptr) {
  return Tensor::make(
      [&](rb_tensor** o) { return rb_matmul(detail::stream_of(stream), a.get(), b.get(), o); });
}
inline Tensor relu(const Tensor& x, const Stream* stream = nullptr) {
  return Tensor::make([&](rb_tensor** o) { return rb_relu(detail::stream_of(stream), x.get(), o); });
}

/** A graph recorded from eager calls on a stream. Owns its rb_graph. */
class Graph : public detail::Handle<rb_graph, rb_graph_destroy> {
 public:
  explicit Graph(rb_graph* h) noexcept : Handle(h) {}
  /** A new, empty graph for `device` (NULL: the current device). */
  explicit Graph(const char* device = nullptr) {
    rb_graph* h = nullptr;
    check(rb_graph_create(device, &h));
    reset(h);
  }
  /** A placeholder input (shape and dtype, no data); the graph's inputs in call order. */
  Tensor input(const std::vector<int64_t>& shape, rb_dtype dtype = RB_DTYPE_F32) const {
    return Tensor::make([&](rb_tensor** o) { return rb_graph_input(get(), shape.data(), shape.size(), dtype, o); });
  }
  void capture_begin(const Stream& stream) const { check(rb_graph_capture_begin(get(), stream.get())); }
  void capture_end(const Stream& stream) const { check(rb_graph_capture_end(get(), stream.get())); }
  /** Marks `t` as the next output; returns its index. */
  std::size_t mark_output(const Tensor& t) const {
    std::size_t i = 0;
    check(rb_graph_mark_output(get(), t.get(), &i));
    return i;
  }
  std::size_t num_nodes() const {
    std::size_t n = 0;
    check(rb_graph_num_nodes(get(), &n));
    return n;
  }
  std::string to_string() const {
    std::size_t n = 0;
    check(rb_graph_to_string(get(), nullptr, 0, &n));
    std::string s(n, '\0');
    check(rb_graph_to_string(get(), &s[0], n, nullptr));
    s.resize(n > 0 ? n - 1 : 0);
    return s;
  }

  /** Records the eager calls on `stream` while it lives (capture_begin .. capture_end).
   * The destructor ends the capture without throwing; call end() to see its error. */
  class Capture {
   public:
    Capture(const Graph& g, const Stream& s) : g_(&g), s_(&s) { g.capture_begin(s); }
    ~Capture() {
      if (g_ != nullptr) (void)rb_graph_capture_end(g_->get(), s_->get());
    }
    Capture(const Capture&) = delete;
    Capture& operator=(const Capture&) = delete;
    void end() {
      const Graph* g = g_;
      g_ = nullptr;
      if (g != nullptr) g->capture_end(*s_);
    }

   private:
    const Graph* g_;
    const Stream* s_;
  };
};

/** A graph compiled for a device and an optimization level, run any number of times.
 * Owns its rb_executor (the graph may be destroyed after it is made). */
class Executor : public detail::Handle<rb_executor, rb_executor_destroy> {
 public:
  explicit Executor(rb_executor* h) noexcept : Handle(h) {}
  /** Compiles `graph` with `config` (NULL: rb_executor_config_default). */
  explicit Executor(const Graph& graph, const rb_executor_config* config = nullptr) {
    rb_executor* h = nullptr;
    check(rb_executor_create(graph.get(), config, &h));
    reset(h);
  }
  /** The default configuration with `opt_level` (0..3). */
  static rb_executor_config config(int32_t opt_level) {
    rb_executor_config c;
    check(rb_executor_config_default(&c));
    c.opt_level = opt_level;
    return c;
  }
  /** Runs on `inputs` (in the graph's input order) and returns `n_outputs` new tensors. */
  std::vector<Tensor> run(std::initializer_list<const Tensor*> inputs, std::size_t n_outputs,
                          const Stream* stream = nullptr) const {
    std::vector<const rb_tensor*> in;
    in.reserve(inputs.size());
    for (const Tensor* t : inputs) in.push_back(t ? t->get() : nullptr);
    std::vector<rb_tensor*> out(n_outputs, nullptr);
    check(rb_executor_run(get(), detail::stream_of(stream), in.data(), in.size(), out.data(),
                          out.size()));
    std::vector<Tensor> r;
    r.reserve(out.size());
    for (rb_tensor* h : out) r.emplace_back(h);
    return r;
  }
  /** Runs writing the outputs into existing tensors (each of the output's shape and dtype). */
  void run_into(std::initializer_list<const Tensor*> inputs, std::initializer_list<const Tensor*> outputs,
                const Stream* stream = nullptr) const {
    std::vector<const rb_tensor*> in;
    for (const Tensor* t : inputs) in.push_back(t ? t->get() : nullptr);
    std::vector<rb_tensor*> out;
    for (const Tensor* t : outputs) out.push_back(t ? t->get() : nullptr);
    check(rb_executor_run(get(), detail::stream_of(stream), in.data(), in.size(), out.data(),
                          out.size()));
  }
  std::string stats_string() const {
    std::size_t n = 0;
    check(rb_executor_stats_string(get(), nullptr, 0, &n));
    std::string s(n, '\0');
    check(rb_executor_stats_string(get(), &s[0], n, nullptr));
    s.resize(n > 0 ? n - 1 : 0);
    return s;
  }
};

/** One rank of a communicator (RCCL / NCCL on GPUs, threads on the CPU). Owns its rb_comm.
 *
 *     rb_comm_unique_id id = rb::Comm::unique_id("cuda:0");   // on one rank; send to all
 *     rb::Comm comm(id, world_size, rank, "cuda:1");
 *     comm.all_reduce(grad, grad, RB_COLLECTIVE_OP_AVG, &stream);
 *     { rb::CommGroup g; comm.send(a, 1); comm.recv(b, 1); }  // issued together
 */
class Comm : public detail::Handle<rb_comm, rb_comm_destroy> {
 public:
  explicit Comm(rb_comm* h) noexcept : Handle(h) {}
  /** Rank `rank` of the `world_size`-rank communicator `id` on `device` (NULL: current). */
  Comm(const rb_comm_unique_id& id, int32_t world_size, int32_t rank, const char* device = nullptr) {
    rb_comm* h = nullptr;
    check(rb_comm_init(device, &id, world_size, rank, &h));
    reset(h);
  }
  /** A fresh unique id for a communicator on `device` (NULL: the current device). */
  static rb_comm_unique_id unique_id(const char* device = nullptr) {
    rb_comm_unique_id id{};
    check(rb_comm_get_unique_id(device, &id));
    return id;
  }
  /** One communicator over `devices` (rank i on devices[i]) driven by this process. */
  static std::vector<Comm> init_all(const std::vector<const char*>& devices) {
    std::vector<rb_comm*> hs(devices.size(), nullptr);
    check(rb_comm_init_all(devices.data(), static_cast<int32_t>(devices.size()), hs.data()));
    std::vector<Comm> out;
    for (rb_comm* h : hs) out.emplace_back(h);
    return out;
  }
  int32_t rank() const {
    int32_t r = 0;
    check(rb_comm_rank(get(), &r));
    return r;
  }
  int32_t size() const {
    int32_t n = 0;
    check(rb_comm_size(get(), &n));
    return n;
  }
  void set_timeout_ms(int64_t ms) const { check(rb_comm_set_timeout_ms(get(), ms)); }
  /** Abandons the communicator (calls in flight and later fail with RB_STATUS_ABORTED). */
  void abort() const { check(rb_comm_abort(get())); }
  void all_reduce(const Tensor& send, Tensor& recv, rb_collective_op op = RB_COLLECTIVE_OP_SUM,
                  const Stream* stream = nullptr) const {
    check(rb_all_reduce(get(), stream ? stream->get() : nullptr, send.get(), recv.get(), op));
  }
  void all_gather(const Tensor& send, Tensor& recv, const Stream* stream = nullptr) const {
    check(rb_all_gather(get(), stream ? stream->get() : nullptr, send.get(), recv.get()));
  }
  void reduce_scatter(const Tensor& send, Tensor& recv, rb_collective_op op = RB_COLLECTIVE_OP_SUM,
                      const Stream* stream = nullptr) const {
    check(rb_reduce_scatter(get(), stream ? stream->get() : nullptr, send.get(), recv.get(), op));
  }
  /** `tensor` on every rank = root's `send` (NULL: root's `tensor`). */
  void broadcast(Tensor& tensor, int32_t root, const Tensor* send = nullptr,
                 const Stream* stream = nullptr) const {
    check(rb_broadcast(get(), stream ? stream->get() : nullptr, send ? send->get() : nullptr,
                       tensor.get(), root));
  }
  void send(const Tensor& tensor, int32_t peer, const Stream* stream = nullptr) const {
    check(rb_send(get(), stream ? stream->get() : nullptr, tensor.get(), peer));
  }
  void recv(Tensor& tensor, int32_t peer, const Stream* stream = nullptr) const {
    check(rb_recv(get(), stream ? stream->get() : nullptr, tensor.get(), peer));
  }
};

/** A group of collective calls on this thread (rb_comm_group_begin in the constructor,
 * rb_comm_group_end in `end()` or the destructor; call `end()` to see the group's failure:
 * the destructor cannot throw and drops it). */
class CommGroup {
 public:
  CommGroup() { check(rb_comm_group_begin()); }
  CommGroup(const CommGroup&) = delete;
  CommGroup& operator=(const CommGroup&) = delete;
  ~CommGroup() {
    if (open_) (void)rb_comm_group_end();
  }
  void end() {
    open_ = false;
    check(rb_comm_group_end());
  }

 private:
  bool open_ = true;
};

/** The profiler: on/off, reset, the text summary and the Chrome trace. */
namespace profiler {
inline void enable(bool on = true) { check(rb_profiler_enable(on)); }
inline void reset() { check(rb_profiler_reset()); }
inline std::string summary() { return detail::text(rb_profiler_summary); }
/** Writes Chrome trace JSON (Perfetto, chrome://tracing) to `path`. */
inline void export_chrome_trace(const char* path) { check(rb_profiler_export_chrome_trace(path)); }
}  // namespace profiler

}  // namespace rb

#endif /* ROCM_BACKEND_HPP */
