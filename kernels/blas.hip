// Matrix-vector and skinny products for decoding (linear at batch 1-8), the GEMM dispatch's
// small-n path (src/device/gpu/blas.rs): column-major C (m x nb) = alpha * A^T B + beta * C,
// A k x m (lda; output i's k weights contiguous: nn.Linear's [out, in] weight), B k x nb
// (ldb; nb <= 8 columns, the inputs), f32 accumulation, one rounding on store. The weights
// are read once, in 16-byte vectors; B (a few KiB) comes from the caches.
//
// D selects the dtype: 0 f32, 1 f16, 2 bf16. VEC: 16-byte vectors (k, lda and ldb multiples of
// the vector width, the pointers 16-byte aligned), else one element at a time. S warps (the
// `split` argument, dividing the warps of a block) share one output row: warp s takes the
// chunks s, s + S, ... of RB_GEMV_U vectors per lane, each warp sums its lanes, and the
// first warp of the group adds the S partial sums from shared memory (a fixed order:
// deterministic). beta == 0 never reads C (BLAS semantics).
//
// Measured on an H100 over a Llama-7B step's 56 distinct weights (scripts/gemv_cold.py, cold
// L2): one warp per row reached 0.88 of the copy bandwidth, eight warps per row with two
// vectors in flight per lane 0.93, and the same kernel with the NaN-payload-keeping
// conversions of the casts (rb_half_to_f32: a compare and a select per element, twice per
// product) ran at about half that: a matrix-vector product is bound by issue as soon as the
// arithmetic per loaded byte grows, so the operands here convert with one instruction each.
#include "common.h"
#include "rows.h"

struct alignas(16) rb_gv16 { rb_u32 w[4]; };
#define RB_GEMV_U 2
// The same for the grouped products (rb_gemv_grp_*): four vectors per lane and row, blocks
// of 128 threads (the host's GEMV_GRP_BLOCK; a gated product's of 256), no L2 prefetch of the
// rows, so a k of 4096 f16 is one round of four warps per row. Over a Llama-7B step's distinct
// weights on an H200 (scripts/gemv_cold.py: the executor's grouped shapes, cold L2) that read
// at 0.971 of the copy bandwidth, eight vectors with two warps per row at 0.914, one warp per
// row at 0.866 (eight vectors) or 0.816 (sixteen), PyTorch's matmul chain at 0.882; the
// L2::256B prefetch-size hint on the loads cost 5% everywhere, persistent blocks 5-10%.
// The sizes can be set for a tuning run through RB_GPU_KERNEL_DEFINES (src/device/gpu/jit.rs),
// which the host reads too.
#ifndef RB_GEMV_GRP_U
#define RB_GEMV_GRP_U 4
#endif
// 1: the grouped products ask for their rows in L2 before rb_pdl_enter() (no gain on the H200).
#ifndef RB_GEMV_GRP_PREFETCH
#define RB_GEMV_GRP_PREFETCH 0
#endif
// 1: a grouped product's residual (r_g) is read right after the block's wait, with its
// weights in flight, instead of after the block's sums (one L2 trip less at the end of every
// block). H200, the Llama decode step at O3 (scripts/gpu-ab.sh, alternated): 1021.6-1034.1 us
// (median 1025.4-1026.0 over two calls) against 1031.0-1040.0 (median 1032.8); the o and down
// products' adds 287.2 against 295.4 us a step (scripts/llama_timeline.py). 56 registers
// against 52 for rb_gemv_grp_f16_v (nine blocks of 128 threads per SM either way).
#ifndef RB_GEMV_GRP_RES_EARLY
#define RB_GEMV_GRP_RES_EARLY 1
#endif
// Warps per block at most (1024 threads / 32): the partial sums in shared memory.
#define RB_GEMV_MAXW 32

// A half operand of a product as f32 (rb_half_to_f32_arith: one instruction on NVIDIA).
template <int D> RB_DEVICE float rb_gv_cvt(rb_u16 h) {
  return D == 1 ? rb_half_to_f32_arith(h) : rb_bfloat_to_f32(h);
}
template <int D> RB_DEVICE float rb_gv_ld(const void* p, rb_i64 i) {
  if (D == 0) return ((const float*)p)[i];
  return rb_gv_cvt<D>(((const rb_u16*)p)[i]);
}
// 16 bytes read once (the weights): on NVIDIA sm_70+ a non-coherent load that does not
// allocate in L1, so the streamed weights leave L1 to the input vector (measured on an H100 by
// scripts/gemv_probe.py: 47 us instead of 54 for a 4096x11008 f16 product).
RB_DEVICE rb_gv16 rb_gv_stream(const rb_gv16* p) {
#if defined(RB_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  rb_gv16 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3])
               : "l"(p));
  return r;
#else
  return *p;
#endif
}
// W elements from element i (16 bytes: 4 f32 or 8 halves, little-endian pairs); STREAM: the
// bytes are read once (rb_gv_stream).
template <int D, int STREAM = 0> RB_DEVICE rb_gv16 rb_gv_raw(const void* p, rb_i64 i) {
  const rb_gv16* at = (const rb_gv16*)((const char*)p + i * (D == 0 ? 4 : 2));
  return STREAM ? rb_gv_stream(at) : *at;
}
template <int D> RB_DEVICE void rb_gv_unpack(const rb_gv16& q, float* v) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (D == 0) {
      v[j] = __uint_as_float(q.w[j]);
    } else {
      v[2 * j] = rb_gv_cvt<D>((rb_u16)(q.w[j] & 0xffffu));
      v[2 * j + 1] = rb_gv_cvt<D>((rb_u16)(q.w[j] >> 16));
    }
  }
}
template <int D> RB_DEVICE void rb_gv_st(void* p, rb_i64 i, float v) {
  if (D == 0) ((float*)p)[i] = v;
  else ((rb_u16*)p)[i] = rb_hstore<D - 1>(v);
}

// Before rb_pdl_enter: the block's rows of A asked for in L2 (rb_prefetch_l2), one 128-byte
// line per thread of the row's group at a time, so a block that starts while the previous
// kernel finishes has its weights on the way. `rows_per_block` groups of `split` warps.
template <int D>
RB_DEVICE void rb_gemv_prefetch(const void* a, rb_i64 lda, rb_i64 m, rb_i64 k, int split) {
  const int ws = RB_WARP_SIZE;
  const int wib = (int)(threadIdx.x / ws);
  const int grp = wib / split, t = (wib % split) * ws + (int)(threadIdx.x % ws);
  const rb_i64 row = (rb_i64)blockIdx.x * ((blockDim.x / ws) / split) + grp;
  if (row >= m) return;
  const int es = D == 0 ? 4 : 2;
  const char* p = (const char*)a + row * lda * es;
  for (rb_i64 off = (rb_i64)t * 128; off < k * es; off += (rb_i64)split * ws * 128) rb_prefetch_l2(p + off);
}
template <int D, int VEC, int NB>
RB_DEVICE void rb_gemv_t(const void* a, rb_i64 lda, const void* b, rb_i64 ldb, void* c, rb_i64 ldc, rb_i64 m,
                         rb_i64 k, int nb, float alpha, float beta, int split) {
  __shared__ float part[RB_GEMV_MAXW][NB];
  const int W = VEC ? (D == 0 ? 4 : 8) : 1;
  const int ws = RB_WARP_SIZE;
  const int lane = (int)(threadIdx.x % ws);
  const int wib = (int)(threadIdx.x / ws);
  const int grp = wib / split, sub = wib % split;
  const rb_i64 row = (rb_i64)blockIdx.x * ((blockDim.x / ws) / split) + grp;
  float acc[NB];
#pragma unroll
  for (int j = 0; j < NB; ++j) acc[j] = 0.0f;
  if (row < m) {  // a whole group at once; no return: the group meets the barrier below
    // RB_GEMV_U vectors of A in flight per lane before any arithmetic.
    const rb_i64 arow = row * lda, step = (rb_i64)ws * W, chunk = step * RB_GEMV_U;
    for (rb_i64 k0 = (rb_i64)sub * chunk + (rb_i64)lane * W; k0 < k; k0 += chunk * split) {
      rb_gv16 raw[RB_GEMV_U];
      float av[RB_GEMV_U][W];
#pragma unroll
      for (int u = 0; u < RB_GEMV_U; ++u) {
        const rb_i64 kk = k0 + u * step;
        if (kk < k) {
          if (VEC) raw[u] = rb_gv_raw<D, 1>(a, arow + kk);
          else av[u][0] = rb_gv_ld<D>(a, arow + kk);
        }
      }
      if (VEC) {
#pragma unroll
        for (int u = 0; u < RB_GEMV_U; ++u)
          if (k0 + u * step < k) rb_gv_unpack<D>(raw[u], av[u]);
      }
#pragma unroll
      for (int j = 0; j < NB; ++j) {
        if (j < nb) {
#pragma unroll
          for (int u = 0; u < RB_GEMV_U; ++u) {
            const rb_i64 kk = k0 + u * step;
            if (kk < k) {
              float bv[W];
              if (VEC) rb_gv_unpack<D>(rb_gv_raw<D>(b, (rb_i64)j * ldb + kk), bv);
              else bv[0] = rb_gv_ld<D>(b, (rb_i64)j * ldb + kk);
#pragma unroll
              for (int t = 0; t < W; ++t) acc[j] += av[u][t] * bv[t];
            }
          }
        }
      }
    }
  }
#pragma unroll
  for (int j = 0; j < NB; ++j) {
    if (j < nb) {
      float s = acc[j];
      for (int d = ws / 2; d > 0; d >>= 1) s += rb_shfl_xor(s, d);
      acc[j] = s;
    }
  }
  if (split > 1) {
    if (lane == 0) {
#pragma unroll
      for (int j = 0; j < NB; ++j)
        if (j < nb) part[wib][j] = acc[j];
    }
    __syncthreads();
    if (sub != 0 || row >= m || lane >= nb) return;
    float s = 0.0f;
    for (int w = 0; w < split; ++w) s += part[grp * split + w][lane];
    const rb_i64 at = row + (rb_i64)lane * ldc;
    const float old = beta == 0.0f ? 0.0f : beta * rb_gv_ld<D>(c, at);
    rb_gv_st<D>(c, at, alpha * s + old);
    return;
  }
  if (row >= m || lane != 0) return;
#pragma unroll
  for (int j = 0; j < NB; ++j) {
    if (j < nb) {
      const rb_i64 at = row + (rb_i64)j * ldc;
      const float old = beta == 0.0f ? 0.0f : beta * rb_gv_ld<D>(c, at);
      rb_gv_st<D>(c, at, alpha * acc[j] + old);
    }
  }
}
// NB: the columns a kernel holds accumulators for (8, or 1 for the `_v1` matrix-vector
// kernel: eight accumulators and their loop cost registers, and registers bound how many
// blocks, so how many loads, a multiprocessor keeps in flight).
#define RB_GEMV(SUF, D)                                                                                   \
  RB_KERNEL void rb_gemv_t_##SUF##_v(const void* a, rb_i64 lda, const void* b, rb_i64 ldb, void* c,      \
                                     rb_i64 ldc, rb_i64 m, rb_i64 k, int nb, float alpha, float beta,   \
                                     int split) {                                                         \
    rb_gemv_prefetch<D>(a, lda, m, k, split);                                                            \
    rb_pdl_enter();                                                                                      \
    rb_gemv_t<D, 1, 8>(a, lda, b, ldb, c, ldc, m, k, nb, alpha, beta, split);                            \
  }                                                                                                       \
  RB_KERNEL void rb_gemv_t_##SUF##_v1(const void* a, rb_i64 lda, const void* b, rb_i64 ldb, void* c,     \
                                      rb_i64 ldc, rb_i64 m, rb_i64 k, int nb, float alpha, float beta,  \
                                      int split) {                                                        \
    rb_gemv_prefetch<D>(a, lda, m, k, split);                                                            \
    rb_pdl_enter();                                                                                      \
    rb_gemv_t<D, 1, 1>(a, lda, b, ldb, c, ldc, m, k, 1, alpha, beta, split);                             \
  }                                                                                                       \
  RB_KERNEL void rb_gemv_t_##SUF##_s(const void* a, rb_i64 lda, const void* b, rb_i64 ldb, void* c,      \
                                     rb_i64 ldc, rb_i64 m, rb_i64 k, int nb, float alpha, float beta,   \
                                     int split) {                                                         \
    rb_gemv_prefetch<D>(a, lda, m, k, split);                                                            \
    rb_pdl_enter();                                                                                      \
    rb_gemv_t<D, 0, 8>(a, lda, b, ldb, c, ldc, m, k, nb, alpha, beta, split);                            \
  }
RB_GEMV(f32, 0)
RB_GEMV(f16, 1)
RB_GEMV(bf16, 2)

// ---- grouped matrix-vector products for the executor's decode fusions ---------------------
// One launch computes y_g = A_g x (+ r_g) for up to three weights A_g [m_g, k] (row-major,
// contiguous: nn.Linear's [out, in]) that read the same input x (k), or, with `glu`, the
// SwiGLU product y = silu(A_0 x) * (A_1 x) of two weights of m_0 rows: the rows of all the
// weights form one sequence of "virtual rows" (with `glu`, row i of A_0 and row i of A_1 are
// the virtual rows 2i and 2i + 1, so a block holds both). S warps (`split`) share a virtual
// row as in rb_gemv_t; every warp leaves its lane sum in shared memory and one thread per
// output adds the S partials in a fixed order (deterministic), adds r_g (a residual or bias
// of m_g elements, optional) or applies the gate, and rounds once. Saves the launches (each
// about 4 us of ramp on an H100) of the q/k/v and gate/up products of a decode step and the
// separate residual add / silu * mul kernels.
// Virtual row v of a grouped product (see rb_gemv_grp): its weight and its row there; false
// past the last one.
RB_DEVICE bool rb_gemv_grp_row(rb_i64 v, int glu, const void* a0, const void* a1, const void* a2,
                               rb_i64 m0, rb_i64 m1, rb_i64 m2, const void*& a, rb_i64& row) {
  if (glu) {
    a = (v & 1) ? a1 : a0;
    row = v >> 1;
    return v < 2 * m0;
  }
  if (v < m0) {
    a = a0, row = v;
  } else if (v < m0 + m1) {
    a = a1, row = v - m0;
  } else {
    a = a2, row = v - m0 - m1;
  }
  return v < m0 + m1 + m2;
}
// rb_gemv_prefetch for the grouped product: the rows of the block's virtual rows.
RB_DEVICE void rb_gemv_grp_prefetch(rb_i64 es, rb_i64 k, const void* a0, const void* a1,
                                    const void* a2, rb_i64 m0, rb_i64 m1, rb_i64 m2, int split,
                                    int glu) {
  if (!RB_GEMV_GRP_PREFETCH) return;
  const int ws = RB_WARP_SIZE;
  const int wib = (int)(threadIdx.x / ws);
  const int groups = (int)(blockDim.x / ws) / split;
  const int grp = wib / split, t = (wib % split) * ws + (int)(threadIdx.x % ws);
  const void* a;
  rb_i64 row;
  if (!rb_gemv_grp_row((rb_i64)blockIdx.x * groups + grp, glu, a0, a1, a2, m0, m1, m2, a, row)) return;
  const char* p = (const char*)a + row * k * es;
  for (rb_i64 off = (rb_i64)t * 128; off < k * es; off += (rb_i64)split * ws * 128) rb_prefetch_l2(p + off);
}
// (EARLY: `res` holds the output's residual, read by rb_gemv_grp: RB_GEMV_GRP_RES_EARLY)
template <int D, int EARLY>
RB_DEVICE void rb_gemv_grp_store(const float* part, const float* ssq, float inv_k, float eps,
                                 int groups, void* c0, void* c1, void* c2, const void* r0,
                                 const void* r1, const void* r2, rb_i64 m0, rb_i64 m1, rb_i64 m2,
                                 int split, int glu, float res);
// ROPE (rb_gemv_grp_*_vr / _vnr: the executor's linear+rope+store): the products' results go
// through rope_store (kernels/loss.hip's rb_rope_store_unit) instead of being written: row
// groups take rope_store's units (a rotated pair's two rows, or a trailing feature's one),
// round each f32 sum to the element type as the product's store does, then rotate it with
// the one position and write it to its result or into its cache's slot there: the bits of
// the product and the rope_store one after the other.
struct rb_grp_rope {
  const void* cs;
  const void* sn;
  const void* pos;
  int is64;
  rb_i64 dim, rot, max_pos;
  int il;
  void* y[3];
  int rotate[3];
  rb_i64 inner[3], t[3];
};
// Unit u of rb_grp_rope's parts (rope_store's units, part after part: m_g / dim vectors of
// rot / 2 pairs and dim - rot trailing features each): its part, the rows of the part's
// weight (ib < 0: a trailing feature's one row) and the pair's index j in its vector (its
// cos/sin column); false past the last unit.
// (32-bit arithmetic: the host keeps rows and units below 2^31)
RB_DEVICE bool rb_grp_rope_unit(int u, int m0, int m1, int m2, const rb_grp_rope& rp, int& part,
                                int& ia, int& ib, int& j) {
  const int dim = (int)rp.dim, rot = (int)rp.rot;
  const int half = rot / 2, per = half + (dim - rot);
  const int u0 = m0 / dim * per, u1 = m1 / dim * per, u2 = m2 / dim * per;
  int e = u;
  if (e < u0) {
    part = 0;
  } else if (e < u0 + u1) {
    part = 1, e -= u0;
  } else if (e < u0 + u1 + u2) {
    part = 2, e -= u0 + u1;
  } else {
    return false;
  }
  const int b = e / per * dim;
  j = e % per;
  if (j >= half) {
    ia = b + rot + (j - half), ib = -1;
  } else {
    ia = b + (rp.il ? 2 * j : j), ib = b + (rp.il ? 2 * j + 1 : j + half);
  }
  return true;
}
template <int D>
RB_DEVICE void rb_gemv_grp_store_rope(const float* part, const float* ssq, float inv_k, float eps,
                                      int groups, const rb_grp_rope& rp, rb_i64 m0, rb_i64 m1,
                                      rb_i64 m2, int split);
// NORM: b is the un-normalized input y; the products read rms_norm(y) * nw (nw may be NULL)
// computed in f32: each row's warps, which between them read all of y, also sum y^2, and
// the row's sum is scaled by 1 / sqrt(mean(y^2) + eps) before the residual or gate (the
// normalized input is never rounded to the element type). No launch, no pass over y of its own.
// PAIR (a gated product only): each row group computes both virtual rows of an output, the
// gate row and its up row (R = 2 rows, U vectors of each in flight per lane), so a block of
// one group holds a whole output and the split need not halve for the pair (H200, the Llama
// decode step: 1143-1148 us so against 1158-1164 us with one row per group at half the split).
// The L2 prefetch (RB_GEMV_GRP_PREFETCH) does not know the pairs: a tuning aid only.
template <int D, int VEC, int U, int NORM = 0, int PAIR = 0, int ROPE = 0>
RB_DEVICE void rb_gemv_grp(const void* b, rb_i64 k, const void* a0, const void* a1, const void* a2,
                           void* c0, void* c1, void* c2, const void* r0, const void* r1,
                           const void* r2, rb_i64 m0, rb_i64 m1, rb_i64 m2, int split, int glu,
                           const void* nw = 0, float eps = 0.0f, int early = 0,
                           const rb_grp_rope* rp = 0) {
  const int R = PAIR || ROPE ? 2 : 1;
  __shared__ float part[RB_GEMV_MAXW * R];
  __shared__ float ssq[NORM ? RB_GEMV_MAXW * R : 1];
  const int W = VEC ? (D == 0 ? 4 : 8) : 1;
  const int ws = RB_WARP_SIZE;
  const int lane = (int)(threadIdx.x % ws);
  const int wib = (int)(threadIdx.x / ws);
  const int groups = (int)(blockDim.x / ws) / split;
  const int grp = wib / split, sub = wib % split;
  const rb_i64 v = ((rb_i64)blockIdx.x * groups + grp) * R;
  float acc[R], sq = 0.0f;
  const void* a[R];
  rb_i64 row[R];
  bool on = true;
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  if (ROPE) {
    // a unit's rows (a trailing feature's one row read twice: its second sum unused), their
    // offsets in the pointers
    int pt = 0, ia = 0, ib = 0, j = 0;
    on = rb_grp_rope_unit((int)(v / 2), (int)m0, (int)m1, (int)m2, *rp, pt, ia, ib, j);
    const char* ap = (const char*)(pt == 0 ? a0 : pt == 1 ? a1 : a2);
    const rb_i64 rs = k * (D == 0 ? 4 : 2);
    a[0] = ap + ia * rs, a[R - 1] = ap + (ib < 0 ? ia : ib) * rs;
    row[0] = row[R - 1] = 0;
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r)
      on = rb_gemv_grp_row(v + r, glu, a0, a1, a2, m0, m1, m2, a[r], row[r]) && on;
  }
  // early (the caller's word that no kernel before this one in its stream writes the weights
  // while this one may run; kernel entries then skip their own rb_pdl_enter): the first
  // round of weight loads goes out before the wait, while the previous kernel finishes.
  bool waited = !early;
  // RB_GEMV_GRP_RES_EARLY: the residual of this thread's output (rb_gemv_grp_store's thread
  // t < groups; its part and row as the weights' rows map, rb_gemv_grp_row), read once the
  // wait is behind, so its latency hides under the weights'.
  constexpr int EARLY_RES = RB_GEMV_GRP_RES_EARLY && !ROPE && !PAIR;
  float res = 0.0f;
  const void* rsrc = 0;
  rb_i64 ri = 0;
  if (EARLY_RES && !glu && (int)threadIdx.x < groups) {
    const void* p;
    rb_i64 row;
    if (rb_gemv_grp_row((rb_i64)blockIdx.x * groups + threadIdx.x, 0, r0, r1, r2, m0, m1, m2, p, row))
      rsrc = p, ri = row;
  }
  auto load_res = [&]() {
    if (rsrc) res = rb_gv_ld<D>(rsrc, ri);
  };
  if (waited) load_res();
  if (on) {  // no return: the barrier below
    const rb_i64 step = (rb_i64)ws * W, chunk = step * U;
    for (rb_i64 k0 = (rb_i64)sub * chunk + (rb_i64)lane * W; k0 < k; k0 += chunk * split) {
      rb_gv16 raw[R][U];
      float as[R][U];
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const rb_i64 kk = k0 + u * step;
          if (kk < k) {
            if (VEC) raw[r][u] = rb_gv_raw<D, 1>(a[r], row[r] * k + kk);
            else as[r][u] = rb_gv_ld<D>(a[r], row[r] * k + kk);
          }
        }
      if (!waited) {
        rb_pdl_enter();
        waited = true;
        load_res();
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const rb_i64 kk = k0 + u * step;
        if (kk < k) {
          float bv[W];
          if (VEC) rb_gv_unpack<D>(rb_gv_raw<D>(b, kk), bv);
          else bv[0] = rb_gv_ld<D>(b, kk);
          if (NORM) {
#pragma unroll
            for (int t = 0; t < W; ++t) sq += bv[t] * bv[t];
            if (nw) {
              float wv[W];
              if (VEC) rb_gv_unpack<D>(rb_gv_raw<D>(nw, kk), wv);
              else wv[0] = rb_gv_ld<D>(nw, kk);
#pragma unroll
              for (int t = 0; t < W; ++t) bv[t] *= wv[t];
            }
          }
#pragma unroll
          for (int r = 0; r < R; ++r) {
            float av[W];
            if (VEC) rb_gv_unpack<D>(raw[r][u], av);
            else av[0] = as[r][u];
#pragma unroll
            for (int t = 0; t < W; ++t) acc[r] += av[t] * bv[t];
          }
        }
      }
    }
  }
  if (!waited) {
    rb_pdl_enter();
    load_res();
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
    for (int d = ws / 2; d > 0; d >>= 1) acc[r] += rb_shfl_xor(acc[r], d);
  if (NORM)
    for (int d = ws / 2; d > 0; d >>= 1) sq += rb_shfl_xor(sq, d);
  if (lane == 0) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      part[(grp * R + r) * split + sub] = acc[r];  // R 1: part[wib]
      if (NORM) ssq[(grp * R + r) * split + sub] = sq;
    }
  }
  __syncthreads();
  if (ROPE)
    rb_gemv_grp_store_rope<D>(part, NORM ? ssq : (const float*)0, 1.0f / (float)k, eps,
                              groups * R, *rp, m0, m1, m2, split);
  else
    rb_gemv_grp_store<D, EARLY_RES>(
        part, NORM ? ssq : (const float*)0, 1.0f / (float)k, eps, groups * R, c0, c1, c2, r0, r1,
        r2, m0, m1, m2, split, glu, res);
}
// rb_gemv_grp's outputs: one thread per output of the block adds its S partials (`part`).
// The input's rms_norm scale of virtual row v's warps (their y^2 partials, `ssq`), as the
// rms_norm computes it: 1 / sqrt(sum * (1 / k) + eps); 1 without a norm.
RB_DEVICE float rb_gemv_norm_scale(const float* ssq, int v, int split, float inv_k, float eps) {
  if (!ssq) return 1.0f;
  float q = 0.0f;
  for (int w = 0; w < split; ++w) q += ssq[v * split + w];
  return 1.0f / sqrtf(q * inv_k + eps);
}
template <int D, int EARLY>
RB_DEVICE void rb_gemv_grp_store(const float* part, const float* ssq, float inv_k, float eps,
                                 int groups, void* c0, void* c1, void* c2, const void* r0,
                                 const void* r1, const void* r2, rb_i64 m0, rb_i64 m1, rb_i64 m2,
                                 int split, int glu, float res) {
  const rb_i64 total = glu ? 2 * m0 : m0 + m1 + m2;
  const int t = (int)threadIdx.x;
  if (glu) {
    if (t >= groups / 2) return;
    const rb_i64 i = (rb_i64)blockIdx.x * (groups / 2) + t;
    if (i >= m0) return;
    float g = 0.0f, u = 0.0f;
    for (int w = 0; w < split; ++w) g += part[(2 * t) * split + w];
    for (int w = 0; w < split; ++w) u += part[(2 * t + 1) * split + w];
    g *= rb_gemv_norm_scale(ssq, 2 * t, split, inv_k, eps);
    u *= rb_gemv_norm_scale(ssq, 2 * t + 1, split, inv_k, eps);
    rb_gv_st<D>(c0, i, g / (1.0f + expf(-g)) * u);
    return;
  }
  if (t >= groups) return;
  const rb_i64 vr = (rb_i64)blockIdx.x * groups + t;
  if (vr >= total) return;
  void* c;
  const void* r;
  rb_i64 orow;
  if (vr < m0) {
    c = c0, r = r0, orow = vr;
  } else if (vr < m0 + m1) {
    c = c1, r = r1, orow = vr - m0;
  } else {
    c = c2, r = r2, orow = vr - m0 - m1;
  }
  float s = 0.0f;
  for (int w = 0; w < split; ++w) s += part[t * split + w];
  s *= rb_gemv_norm_scale(ssq, t, split, inv_k, eps);
  if (r) s += EARLY ? res : rb_gv_ld<D>(r, orow);
  rb_gv_st<D>(c, orow, s);
}

// rb_gemv_grp's outputs through rope_store: one thread per unit of the block (a row group's
// two virtual rows), rb_rope_store_unit's arithmetic on the rounded sums. The position and
// the unit's cos/sin load here, after the sums (H200: loading them with the first weight
// loads took 93 registers against 72, and a slower step).
template <typename T>
RB_DEVICE void rb_gemv_grp_rope_out(const float* part, const float* ssq, float inv_k, float eps,
                                    int groups, const rb_grp_rope& rp, rb_i64 m0, rb_i64 m1,
                                    rb_i64 m2, int split) {
  const int t = (int)threadIdx.x;
  if (t >= groups / 2) return;
  int pt = 0, ia = 0, ib = 0, j = 0;
  if (!rb_grp_rope_unit((int)blockIdx.x * (groups / 2) + t, (int)m0, (int)m1, (int)m2, rp, pt, ia,
                        ib, j))
    return;
  float sa = 0.0f, sb = 0.0f;
  for (int w = 0; w < split; ++w) sa += part[(2 * t) * split + w];
  for (int w = 0; w < split; ++w) sb += part[(2 * t + 1) * split + w];
  sa *= rb_gemv_norm_scale(ssq, 2 * t, split, inv_k, eps);
  sb *= rb_gemv_norm_scale(ssq, 2 * t + 1, split, inv_k, eps);
  // the product's results as its store rounds them
  T xa, xb;
  rb_from_f32(&xa, sa);
  rb_from_f32(&xb, sb);
  T* y = (T*)(pt == 0 ? rp.y[0] : pt == 1 ? rp.y[1] : rp.y[2]);
  const int rotate = pt == 0 ? rp.rotate[0] : pt == 1 ? rp.rotate[1] : rp.rotate[2];
  const rb_i64 inner = pt == 0 ? rp.inner[0] : pt == 1 ? rp.inner[1] : rp.inner[2];
  const rb_i64 tt = pt == 0 ? rp.t[0] : pt == 1 ? rp.t[1] : rp.t[2];
  const rb_i64 p = rp.is64 ? ((const rb_i64*)rp.pos)[0] : (rb_i64)((const int*)rp.pos)[0];
  if (tt && (p < 0 || p >= tt)) return;
  auto at = [&](rb_i64 i) -> T* { return tt ? y + (i / inner) * tt * inner + p * inner + i % inner : y + i; };
  if (ib < 0) {
    *at(ia) = xa;
    return;
  }
  if (!rotate) {
    *at(ia) = xa;
    *at(ib) = xb;
    return;
  }
  if (p < 0 || p >= rp.max_pos) {
    rb_from_f32(at(ia), __int_as_float(0x7fc00000));
    rb_from_f32(at(ib), __int_as_float(0x7fc00000));
    return;
  }
  const float c = rb_to_f32(((const T*)rp.cs)[p * (rp.rot / 2) + j]);
  const float sv = rb_to_f32(((const T*)rp.sn)[p * (rp.rot / 2) + j]);
  const float va = rb_to_f32(xa), vb = rb_to_f32(xb);
  rb_from_f32(at(ia), rb_rot_a(va, vb, c, sv));
  rb_from_f32(at(ib), rb_rot_b(va, vb, c, sv));
}
template <int D>
RB_DEVICE void rb_gemv_grp_store_rope(const float* part, const float* ssq, float inv_k, float eps,
                                      int groups, const rb_grp_rope& rp, rb_i64 m0, rb_i64 m1,
                                      rb_i64 m2, int split) {
  if (D == 0) rb_gemv_grp_rope_out<float>(part, ssq, inv_k, eps, groups, rp, m0, m1, m2, split);
  else if (D == 1) rb_gemv_grp_rope_out<rb_f16>(part, ssq, inv_k, eps, groups, rp, m0, m1, m2, split);
  else rb_gemv_grp_rope_out<rb_bf16>(part, ssq, inv_k, eps, groups, rp, m0, m1, m2, split);
}

// A decode step's rms_norm of a product's result, in the product's kernel
// (rb_gemv_grp_norm_*): every block counts itself done in `cnt` (a zeroed counter) once its
// outputs are visible device-wide; the last one normalizes the whole result y (`cols`
// elements) into h with rb_rownorm_pre_rows_*'s arithmetic for its plan (block rows, V = 4,
// N chunks per thread over the block's threads, the plan's block: equal bits), then sets the
// counter back to 0.
template <typename T, int N>
RB_DEVICE void rb_gemv_norm_tail(const T* y, const T* w, T* h, int cols, float eps,
                                 unsigned* cnt) {
  __shared__ float sh[64];
  __shared__ int last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(cnt, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  rb_rownorm_rows<T, 4, N, false, true>(y, w, (const T*)0, h, (float*)0, (float*)0, 1, cols, eps,
                                        1, sh, true);
  if (threadIdx.x == 0) atomicExch(cnt, 0u);
}
#define RB_GEMV_GRP(SUF, D)                                                                              \
  RB_KERNEL void rb_gemv_grp_##SUF##_v(const void* b, rb_i64 k, const void* a0, const void* a1,          \
                                       const void* a2, void* c0, void* c1, void* c2, const void* r0,     \
                                       const void* r1, const void* r2, rb_i64 m0, rb_i64 m1,             \
                                       rb_i64 m2, int split, int glu, int early) {                       \
    rb_gemv_grp_prefetch(D == 0 ? 4 : 2, k, a0, a1, a2, m0, m1, m2, split, glu);                         \
    if (!early) rb_pdl_enter();                                                                          \
    rb_gemv_grp<D, 1, RB_GEMV_GRP_U>(b, k, a0, a1, a2, c0, c1, c2, r0, r1, r2, m0, m1, m2,               \
                                     split, glu, 0, 0.0f, early);                                        \
  }                                                                                                      \
  RB_KERNEL void rb_gemv_grp_##SUF##_s(const void* b, rb_i64 k, const void* a0, const void* a1,          \
                                       const void* a2, void* c0, void* c1, void* c2, const void* r0,     \
                                       const void* r1, const void* r2, rb_i64 m0, rb_i64 m1,             \
                                       rb_i64 m2, int split, int glu, int early) {                       \
    rb_gemv_grp_prefetch(D == 0 ? 4 : 2, k, a0, a1, a2, m0, m1, m2, split, glu);                         \
    rb_pdl_enter();                                                                                      \
    rb_gemv_grp<D, 0, RB_GEMV_GRP_U>(b, k, a0, a1, a2, c0, c1, c2, r0, r1, r2, m0, m1, m2,               \
                                     split, glu, 0, 0.0f, 0);                                            \
  }                                                                                                      \
  RB_KERNEL void rb_gemv_grp_##SUF##_vn(const void* b, rb_i64 k, const void* a0, const void* a1,         \
                                        const void* a2, void* c0, void* c1, void* c2, const void* r0,    \
                                        const void* r1, const void* r2, rb_i64 m0, rb_i64 m1,            \
                                        rb_i64 m2, int split, int glu, const void* nw, float eps,        \
                                        int early) {                                                     \
    rb_gemv_grp_prefetch(D == 0 ? 4 : 2, k, a0, a1, a2, m0, m1, m2, split, glu);                         \
    if (!early) rb_pdl_enter();                                                                          \
    rb_gemv_grp<D, 1, RB_GEMV_GRP_U, 1>(b, k, a0, a1, a2, c0, c1, c2, r0, r1, r2, m0, m1, m2, split,     \
                                        glu, nw, eps, early);                                            \
  }                                                                                                      \
  RB_KERNEL void rb_gemv_grp_##SUF##_vg(const void* b, rb_i64 k, const void* a0, const void* a1,         \
                                        const void* a2, void* c0, void* c1, void* c2, const void* r0,    \
                                        const void* r1, const void* r2, rb_i64 m0, rb_i64 m1,            \
                                        rb_i64 m2, int split, int glu, int early) {                      \
    rb_gemv_grp_prefetch(D == 0 ? 4 : 2, k, a0, a1, a2, m0, m1, m2, split, glu);                         \
    if (!early) rb_pdl_enter();                                                                          \
    rb_gemv_grp<D, 1, RB_GEMV_GRP_U, 0, 1>(b, k, a0, a1, a2, c0, c1, c2, r0, r1, r2, m0, m1, m2,         \
                                           split, glu, 0, 0.0f, early);                                  \
  }                                                                                                      \
  RB_KERNEL void rb_gemv_grp_##SUF##_vng(const void* b, rb_i64 k, const void* a0, const void* a1,        \
                                         const void* a2, void* c0, void* c1, void* c2, const void* r0,   \
                                         const void* r1, const void* r2, rb_i64 m0, rb_i64 m1,           \
                                         rb_i64 m2, int split, int glu, const void* nw, float eps,       \
                                        int early) {                                                     \
    rb_gemv_grp_prefetch(D == 0 ? 4 : 2, k, a0, a1, a2, m0, m1, m2, split, glu);                         \
    if (!early) rb_pdl_enter();                                                                          \
    rb_gemv_grp<D, 1, RB_GEMV_GRP_U, 1, 1>(b, k, a0, a1, a2, c0, c1, c2, r0, r1, r2, m0, m1, m2,         \
                                           split, glu, nw, eps, early);                                  \
  }
RB_GEMV_GRP(f32, 0)
RB_GEMV_GRP(f16, 1)
RB_GEMV_GRP(bf16, 2)
// rb_gemv_grp_<dtype>_vr / _vnr (with the input's norm): the grouped products through
// rope_store (ROPE above): 16-byte vectors, a row group per unit. Part g: its result or
// cache y_g, rotated or copied (rot_g), and with a cache (t_g > 0) its slot layout (inner_g).
#define RB_GEMV_GRP_ROPE_ARGS                                                                     \
  const void *b, rb_i64 k, const void *a0, const void *a1, const void *a2, rb_i64 m0, rb_i64 m1, \
      rb_i64 m2, int split, const void *nw, float eps, int early, const void *cs, const void *sn, \
      const void *pos, int is64, rb_i64 dim, rb_i64 rot, rb_i64 max_pos, int il, void *y0,       \
      int rot0, rb_i64 in0, rb_i64 t0, void *y1, int rot1, rb_i64 in1, rb_i64 t1, void *y2,      \
      int rot2, rb_i64 in2, rb_i64 t2
#define RB_GEMV_GRP_ROPE_BODY(D, NORM)                                                            \
  rb_grp_rope rp;                                                                                 \
  rp.cs = cs, rp.sn = sn, rp.pos = pos, rp.is64 = is64, rp.dim = dim, rp.rot = rot;             \
  rp.max_pos = max_pos, rp.il = il;                                                               \
  rp.y[0] = y0, rp.y[1] = y1, rp.y[2] = y2;                                                       \
  rp.rotate[0] = rot0, rp.rotate[1] = rot1, rp.rotate[2] = rot2;                                  \
  rp.inner[0] = in0, rp.inner[1] = in1, rp.inner[2] = in2;                                        \
  rp.t[0] = t0, rp.t[1] = t1, rp.t[2] = t2;                                                       \
  rb_gemv_grp<D, 1, RB_GEMV_GRP_U, NORM, 0, 1>(b, k, a0, a1, a2, (void*)0, (void*)0, (void*)0,    \
                                               (const void*)0, (const void*)0, (const void*)0, m0, \
                                               m1, m2, split, 0, nw, eps, early, &rp);
#define RB_GEMV_GRP_ROPE(SUF, D)                                  \
  RB_KERNEL void rb_gemv_grp_##SUF##_vr(RB_GEMV_GRP_ROPE_ARGS) {  \
    if (!early) rb_pdl_enter();                                   \
    RB_GEMV_GRP_ROPE_BODY(D, 0)                                   \
  }                                                               \
  RB_KERNEL void rb_gemv_grp_##SUF##_vnr(RB_GEMV_GRP_ROPE_ARGS) { \
    if (!early) rb_pdl_enter();                                   \
    RB_GEMV_GRP_ROPE_BODY(D, 1)                                   \
  }
RB_GEMV_GRP_ROPE(f32, 0)
RB_GEMV_GRP_ROPE(f16, 1)
RB_GEMV_GRP_ROPE(bf16, 2)
// rb_gemv_grp_norm_<dtype>_n<N>: one product with its residual, y = A_0 x + r_0, then
// h = rms_norm(y) * w (eps) in the last block (rb_gemv_norm_tail); 16-byte vectors, blocks
// of the rms_norm row plan's threads (the host checks that they hold whole row groups of the
// grouped product's split, so the sums are rb_gemv_grp_*'s).
#define RB_GEMV_GRP_NORM(SUF, D, T, N)                                                                   \
  RB_KERNEL void rb_gemv_grp_norm_##SUF##_n##N(const void* b, rb_i64 k, const void* a0, void* c0,      \
                                              const void* r0, rb_i64 m0, int split, const T* nw, T* h, \
                                              float eps, unsigned* cnt) {                               \
    rb_gemv_grp_prefetch(D == 0 ? 4 : 2, k, a0, (const void*)0, (const void*)0, m0, 0, 0, split, 0);    \
    rb_pdl_enter();                                                                                    \
    rb_gemv_grp<D, 1, RB_GEMV_GRP_U>(b, k, a0, (const void*)0, (const void*)0, c0, (void*)0, (void*)0, \
                                     r0, (const void*)0, (const void*)0, m0, 0, 0, split, 0);           \
    rb_gemv_norm_tail<T, N>((const T*)c0, nw, h, (int)m0, eps, cnt);                                    \
  }
#define RB_GEMV_GRP_NORMS(SUF, D, T) \
  RB_GEMV_GRP_NORM(SUF, D, T, 1)     \
  RB_GEMV_GRP_NORM(SUF, D, T, 2)     \
  RB_GEMV_GRP_NORM(SUF, D, T, 4)     \
  RB_GEMV_GRP_NORM(SUF, D, T, 8)
RB_GEMV_GRP_NORMS(f32, 0, float)
RB_GEMV_GRP_NORMS(f16, 1, rb_f16)
RB_GEMV_GRP_NORMS(bf16, 2, rb_bf16)

// ---- small f32 products in one launch (the GEMM dispatch's small path) --------------------
// Column-major C (m x n) = act(alpha * op(A) op(B) + beta * C + bias), op(A) m x k (lda;
// transposed when ta), op(B) k x n (ldb; transposed when tb), bias (optional) one per row of
// C (a linear layer's output feature), act: 1 relu, 0 none. For products too small to fill
// the device through the vendor BLAS (a training step at batch 32: a split-K GEMM plus its
// reduction kernel each): a block computes a 16 x 16 tile of C; its KW warps (blockDim.x /
// 32) take the k range in interleaved chunks of 32, each staging its chunk of op(A) and op(B)
// in shared memory (its own region: no block barrier in the loop) and accumulating eight
// outputs per lane; the KW partial tiles are then added in warp order (deterministic), and
// the epilogue rounds once. "Warp" here is 32 threads on every vendor (a CDNA wavefront holds
// two): the staging is block-synchronized, so nothing depends on the hardware width. f32 FMA throughout (exact fp32: no tensor cores).
#define RB_GS_T 16
#define RB_GS_KC 32
#define RB_GS_MAXW 8
RB_KERNEL void rb_gemm_small_f32(const float* a, rb_i64 lda, int ta, const float* b, rb_i64 ldb,
                                 int tb, float* c, rb_i64 ldc, rb_i64 m, rb_i64 n, rb_i64 k,
                                 float alpha, float beta, const float* bias, int relu) {
  rb_pdl_enter();
  __shared__ float sa[RB_GS_MAXW][RB_GS_KC][RB_GS_T + 1];
  __shared__ float sb[RB_GS_MAXW][RB_GS_KC][RB_GS_T + 1];
  const int lane = (int)(threadIdx.x % 32), w = (int)(threadIdx.x / 32);
  const int kw = (int)(blockDim.x / 32);
  const rb_i64 i0 = (rb_i64)blockIdx.x * RB_GS_T, j0 = (rb_i64)blockIdx.y * RB_GS_T;
  const int li = lane % RB_GS_T, lj = (lane / RB_GS_T) * 8;  // this lane's row, first column
  float acc[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) acc[e] = 0.0f;
  // This lane's 16 elements of op(A) and 16 of op(B) of the chunk at p0 (zeros outside),
  // read along the contiguous index of each layout so a warp's loads coalesce; all 32 loads
  // are issued before any is used.
  float ra[16], rb[16];
  auto fetch = [&](rb_i64 p0) {
#pragma unroll
    for (int r = 0; r < 16; ++r) {
      const int e = lane + 32 * r;
      int p, t;
      if (ta) p = e % RB_GS_KC, t = e / RB_GS_KC;
      else p = e / RB_GS_T, t = e % RB_GS_T;
      const rb_i64 gp = p0 + p, gi = i0 + t;
      ra[r] = (gp < k && gi < m) ? (ta ? a[gp + gi * lda] : a[gi + gp * lda]) : 0.0f;
      if (tb) p = e / RB_GS_T, t = e % RB_GS_T;
      else p = e % RB_GS_KC, t = e / RB_GS_KC;
      const rb_i64 gq = p0 + p, gj = j0 + t;
      rb[r] = (gq < k && gj < n) ? (tb ? b[gj + gq * ldb] : b[gq + gj * ldb]) : 0.0f;
    }
  };
  auto stage = [&]() {
#pragma unroll
    for (int r = 0; r < 16; ++r) {
      const int e = lane + 32 * r;
      int p, t;
      if (ta) p = e % RB_GS_KC, t = e / RB_GS_KC;
      else p = e / RB_GS_T, t = e % RB_GS_T;
      sa[w][p][t] = ra[r];
      if (tb) p = e / RB_GS_T, t = e % RB_GS_T;
      else p = e % RB_GS_KC, t = e / RB_GS_KC;
      sb[w][p][t] = rb[r];
    }
  };
  // The same trip count in every warp (the barriers); a warp past k stages zeros. The next
  // chunk's loads are in flight while this one is multiplied.
  const rb_i64 step = (rb_i64)kw * RB_GS_KC;
  fetch((rb_i64)w * RB_GS_KC);
  for (rb_i64 pb = 0; pb < k; pb += step) {
    stage();
    __syncthreads();
    if (pb + step < k) fetch(pb + step + (rb_i64)w * RB_GS_KC);
#pragma unroll 8
    for (int p = 0; p < RB_GS_KC; ++p) {
      const float av = sa[w][p][li];
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[e] = fmaf(av, sb[w][p][lj + e], acc[e]);
    }
    __syncthreads();
  }
  // The partial tiles in shared memory (sa reused: KW x 256 floats), then one thread per
  // output adds them in warp order.
  __syncthreads();
  float* part = &sa[0][0][0];
#pragma unroll
  for (int e = 0; e < 8; ++e) part[w * 256 + (lj + e) * RB_GS_T + li] = acc[e];
  __syncthreads();
  for (int t = (int)threadIdx.x; t < RB_GS_T * RB_GS_T; t += (int)blockDim.x) {
    const int ti = t % RB_GS_T, tj = t / RB_GS_T;
    const rb_i64 gi = i0 + ti, gj = j0 + tj;
    if (gi >= m || gj >= n) continue;
    float s = 0.0f;
    for (int q = 0; q < kw; ++q) s += part[q * 256 + tj * RB_GS_T + ti];
    float v = alpha * s;
    if (beta != 0.0f) v += beta * c[gi + gj * ldc];
    if (bias) v += bias[gi];
    if (relu) v = rb_relu(v);
    c[gi + gj * ldc] = v;
  }
}
