// Data movement: strided copies (permute, slice, concat), a tiled transpose, embedding and
// its backward. Semantics match the CPU device (src/device/cpu/data.rs). All indexing is
// 64-bit.
#include "common.h"

struct alignas(16) rb_b16 { rb_u32 a, b, c, d; };

// A copy of at most 16 dimensions (already merged on the host): strides in elements.
struct RbCopyLayout {
  rb_i64 nd;
  rb_i64 shape[16];
  rb_i64 ss[16];
  rb_i64 ds[16];
};

// Element e (row-major over shape) of the copy: thread per element, grid-stride. The host
// widens the element to 16 bytes where the innermost run allows it.
template <typename T>
RB_DEVICE void rb_copy_nd_t(const T* src, T* dst, rb_u64 n, const RbCopyLayout& l) {
  for (rb_u64 e = rb_gid(); e < n; e += rb_gstride()) {
    rb_u64 rem = e, so = 0, dof = 0;
    for (int d = (int)l.nd - 1; d >= 0; --d) {
      const rb_u64 ext = (rb_u64)l.shape[d];
      const rb_u64 i = rem % ext;
      rem /= ext;
      so += i * (rb_u64)l.ss[d];
      dof += i * (rb_u64)l.ds[d];
    }
    dst[dof] = src[so];
  }
}

// A 32x32 tile of the two dimensions p (source stride 1) and q (destination stride 1),
// read coalesced along p and written coalesced along q through shared memory; the other
// dimensions are batch. grid: (tiles of q, tiles of p, batch), each a grid-stride loop.
template <typename T>
RB_DEVICE void rb_transpose_t(const T* src, T* dst, const RbCopyLayout& l, int p, int q, rb_u64 nbatch) {
  __shared__ T tile[32][33];
  const rb_u64 np = (rb_u64)l.shape[p], nq = (rb_u64)l.shape[q];
  const rb_u64 tp = (np + 31) / 32, tq = (nq + 31) / 32;
  const int tx = threadIdx.x, ty = threadIdx.y;  // block (32, 8)
  for (rb_u64 b = blockIdx.z; b < nbatch; b += gridDim.z) {
    rb_u64 rem = b, sb = 0, db = 0;
    for (int d = (int)l.nd - 1; d >= 0; --d) {
      if (d == p || d == q) continue;
      const rb_u64 ext = (rb_u64)l.shape[d];
      const rb_u64 i = rem % ext;
      rem /= ext;
      sb += i * (rb_u64)l.ss[d];
      db += i * (rb_u64)l.ds[d];
    }
    for (rb_u64 bp = blockIdx.y; bp < tp; bp += gridDim.y) {
      for (rb_u64 bq = blockIdx.x; bq < tq; bq += gridDim.x) {
        const rb_u64 p0 = bp * 32, q0 = bq * 32;
        for (int j = ty; j < 32; j += 8) {
          const rb_u64 ip = p0 + tx, iq = q0 + j;
          if (ip < np && iq < nq) tile[j][tx] = src[sb + ip * (rb_u64)l.ss[p] + iq * (rb_u64)l.ss[q]];
        }
        __syncthreads();
        for (int j = ty; j < 32; j += 8) {
          const rb_u64 ip = p0 + j, iq = q0 + tx;
          if (ip < np && iq < nq) dst[db + ip * (rb_u64)l.ds[p] + iq * (rb_u64)l.ds[q]] = tile[tx][j];
        }
        __syncthreads();
      }
    }
  }
}

#define RB_COPY_KERNELS(S, T)                                                                     \
  RB_KERNEL void rb_copy_nd_##S(const T* src, T* dst, rb_u64 n, RbCopyLayout l) {                 \
    rb_copy_nd_t(src, dst, n, l);                                                                 \
  }                                                                                               \
  RB_KERNEL void rb_transpose_##S(const T* src, T* dst, RbCopyLayout l, int p, int q,             \
                                  rb_u64 nbatch) {                                                \
    rb_transpose_t(src, dst, l, p, q, nbatch);                                                    \
  }

RB_COPY_KERNELS(b1, rb_u8)
RB_COPY_KERNELS(b2, rb_u16)
RB_COPY_KERNELS(b4, rb_u32)
RB_COPY_KERNELS(b8, rb_u64)
RB_KERNEL void rb_copy_nd_b16(const rb_b16* src, rb_b16* dst, rb_u64 n, RbCopyLayout l) {
  rb_copy_nd_t(src, dst, n, l);
}

// ---- embedding ---------------------------------------------------------------------------
RB_DEVICE rb_i64 rb_index(const void* idx, int is64, rb_u64 j) {
  return is64 ? ((const rb_i64*)idx)[j] : (rb_i64)((const rb_i32*)idx)[j];
}

// out[j, :] = w[idx[j], :], rows of `words` elements of T (the host picks the widest T that
// divides the row and the alignment). An index outside [0, num) records the smallest such
// position in *bad (atomicMin; the host reads it back) and writes a zero row.
template <typename T>
RB_DEVICE void rb_embedding_t(const T* w, rb_u64 num, rb_u64 words, const void* idx, int is64,
                              rb_u64 n_idx, T* out, rb_u64* bad) {
  for (rb_u64 j = blockIdx.x; j < n_idx; j += gridDim.x) {
    const rb_i64 k = rb_index(idx, is64, j);
    const bool ok = k >= 0 && (rb_u64)k < num;
    if (!ok && threadIdx.x == 0) atomicMin((unsigned long long*)bad, (unsigned long long)j);
    T* o = out + j * words;
    if (ok) {
      const T* s = w + (rb_u64)k * words;
      for (rb_u64 c = threadIdx.x; c < words; c += blockDim.x) o[c] = s[c];
    } else {
      T zero;
      for (int b = 0; b < (int)sizeof(T); ++b) ((rb_u8*)&zero)[b] = 0;
      for (rb_u64 c = threadIdx.x; c < words; c += blockDim.x) o[c] = zero;
    }
  }
}

RB_KERNEL void rb_embedding_w2(const rb_u16* w, rb_u64 num, rb_u64 words, const void* idx, int is64, rb_u64 n, rb_u16* out, rb_u64* bad) { rb_embedding_t(w, num, words, idx, is64, n, out, bad); }
RB_KERNEL void rb_embedding_w4(const rb_u32* w, rb_u64 num, rb_u64 words, const void* idx, int is64, rb_u64 n, rb_u32* out, rb_u64* bad) { rb_embedding_t(w, num, words, idx, is64, n, out, bad); }
RB_KERNEL void rb_embedding_w8(const rb_u64* w, rb_u64 num, rb_u64 words, const void* idx, int is64, rb_u64 n, rb_u64* out, rb_u64* bad) { rb_embedding_t(w, num, words, idx, is64, n, out, bad); }
RB_KERNEL void rb_embedding_w16(const rb_b16* w, rb_u64 num, rb_u64 words, const void* idx, int is64, rb_u64 n, rb_b16* out, rb_u64* bad) { rb_embedding_t(w, num, words, idx, is64, n, out, bad); }

// acc[idx[j], c] += dy[j, c] in f32 with atomicAdd (acc zeroed by the host; for f32 it is
// dw itself, for f16/bf16 an f32 scratch cast afterwards). Bad indices as in embedding.
template <typename T>
RB_DEVICE void rb_embedding_bwd_t(const T* dy, const void* idx, int is64, rb_u64 n_idx, rb_u64 num,
                                  rb_u64 dim, float* acc, rb_u64* bad) {
  const rb_u64 n = n_idx * dim;
  for (rb_u64 e = rb_gid(); e < n; e += rb_gstride()) {
    const rb_u64 j = e / dim, c = e % dim;
    const rb_i64 k = rb_index(idx, is64, j);
    if (k < 0 || (rb_u64)k >= num) {
      if (c == 0) atomicMin((unsigned long long*)bad, (unsigned long long)j);
      continue;
    }
    atomicAdd(acc + (rb_u64)k * dim + c, rb_to_f32(dy[e]));
  }
}

RB_KERNEL void rb_embedding_bwd_f32(const float* dy, const void* idx, int is64, rb_u64 n_idx, rb_u64 num, rb_u64 dim, float* acc, rb_u64* bad) { rb_embedding_bwd_t(dy, idx, is64, n_idx, num, dim, acc, bad); }
RB_KERNEL void rb_embedding_bwd_f16(const rb_f16* dy, const void* idx, int is64, rb_u64 n_idx, rb_u64 num, rb_u64 dim, float* acc, rb_u64* bad) { rb_embedding_bwd_t(dy, idx, is64, n_idx, num, dim, acc, bad); }
RB_KERNEL void rb_embedding_bwd_bf16(const rb_bf16* dy, const void* idx, int is64, rb_u64 n_idx, rb_u64 num, rb_u64 dim, float* acc, rb_u64* bad) { rb_embedding_bwd_t(dy, idx, is64, n_idx, num, dim, acc, bad); }

// ---- GEAM: C = alpha * op(A) + beta * op(B), column-major, m x n (BLAS geam) ---------------
// A thread per element of C, f32 math. A (B) is not read when alpha (beta) is 0. Element
// (i, j) of C is written after A and B at (i, j) are read, so C may be A or B in place.
template <typename T>
RB_DEVICE void rb_geam_t(const T* a, rb_i64 lda, int ta, const T* b, rb_i64 ldb, int tb, T* c,
                         rb_i64 ldc, rb_i64 m, rb_i64 n, float alpha, float beta) {
  const rb_u64 total = (rb_u64)m * (rb_u64)n;
  for (rb_u64 e = rb_gid(); e < total; e += rb_gstride()) {
    const rb_i64 i = (rb_i64)(e % (rb_u64)m), j = (rb_i64)(e / (rb_u64)m);
    float v = 0.0f;
    if (alpha != 0.0f) v = alpha * rb_to_f32(a[ta ? j + i * lda : i + j * lda]);
    if (beta != 0.0f) v += beta * rb_to_f32(b[tb ? j + i * ldb : i + j * ldb]);
    rb_from_f32(c + i + j * ldc, v);
  }
}
#define RB_GEAM(S, T)                                                                            \
  RB_KERNEL void rb_geam_##S(const T* a, rb_i64 lda, int ta, const T* b, rb_i64 ldb, int tb,     \
                             T* c, rb_i64 ldc, rb_i64 m, rb_i64 n, float alpha, float beta) {    \
    rb_geam_t(a, lda, ta, b, ldb, tb, c, ldc, m, n, alpha, beta);                                 \
  }
RB_GEAM(f32, float)
RB_GEAM(f16, rb_f16)
RB_GEAM(bf16, rb_bf16)

// ---- signed strided copy (negative-step slices) -------------------------------------------
// As rb_copy_nd with signed source strides: offsets are computed in signed 64-bit, so a
// walk may go down from `src` (which points at the first element read).
template <typename T>
RB_DEVICE void rb_copy_nd_signed_t(const T* src, T* dst, rb_u64 n, const RbCopyLayout& l) {
  for (rb_u64 e = rb_gid(); e < n; e += rb_gstride()) {
    rb_u64 rem = e, dof = 0;
    rb_i64 so = 0;
    for (int d = (int)l.nd - 1; d >= 0; --d) {
      const rb_u64 ext = (rb_u64)l.shape[d];
      const rb_u64 i = rem % ext;
      rem /= ext;
      so += (rb_i64)i * l.ss[d];
      dof += i * (rb_u64)l.ds[d];
    }
    dst[dof] = src[so];
  }
}

RB_KERNEL void rb_copy_nd_signed_b1(const rb_u8* src, rb_u8* dst, rb_u64 n, RbCopyLayout l) { rb_copy_nd_signed_t(src, dst, n, l); }
RB_KERNEL void rb_copy_nd_signed_b2(const rb_u16* src, rb_u16* dst, rb_u64 n, RbCopyLayout l) { rb_copy_nd_signed_t(src, dst, n, l); }
RB_KERNEL void rb_copy_nd_signed_b4(const rb_u32* src, rb_u32* dst, rb_u64 n, RbCopyLayout l) { rb_copy_nd_signed_t(src, dst, n, l); }
RB_KERNEL void rb_copy_nd_signed_b8(const rb_u64* src, rb_u64* dst, rb_u64 n, RbCopyLayout l) { rb_copy_nd_signed_t(src, dst, n, l); }

// ---- gather / scatter-add along one axis (torch.gather, ONNX Gather/GatherElements) -------
// The walk: `shape` (at most 16 dims) is the gather's result / the scatter's source, both
// contiguous; element e (multi-index i) reads the index at sum(i[d] * is[d]) and addresses
// the indexed tensor at sum_{d != dim}(i[d] * ds[d]) + k * ds[dim], k the index (negative
// counts from the end). An index outside [-axis_len, axis_len) records the smallest such
// index position in *bad (the host reads it back); the gather writes a zero there, the
// scatter skips it.
struct RbAxisLayout {
  rb_i64 nd;
  rb_i64 dim;
  rb_i64 axis_len;
  rb_i64 shape[16];
  rb_i64 ds[16];
  rb_i64 is[16];
};

// The indexed tensor's offset of walk element e, or -1 for a bad index (recorded in *bad).
RB_DEVICE rb_i64 rb_axis_offset(rb_u64 e, const void* idx, int is64, const RbAxisLayout& l, rb_u64* bad) {
  rb_u64 rem = e, base = 0, ip = 0;
  for (int d = (int)l.nd - 1; d >= 0; --d) {
    const rb_u64 ext = (rb_u64)l.shape[d];
    const rb_u64 i = rem % ext;
    rem /= ext;
    ip += i * (rb_u64)l.is[d];
    if (d != (int)l.dim) base += i * (rb_u64)l.ds[d];
  }
  rb_i64 k = rb_index(idx, is64, ip);
  if (k < 0) k += l.axis_len;
  if (k < 0 || k >= l.axis_len) {
    atomicMin((unsigned long long*)bad, (unsigned long long)ip);
    return -1;
  }
  return (rb_i64)(base + (rb_u64)k * (rb_u64)l.ds[l.dim]);
}

template <typename T>
RB_DEVICE void rb_gather_axis_t(const T* src, const void* idx, int is64, T* out, rb_u64 n, const RbAxisLayout& l, rb_u64* bad) {
  for (rb_u64 e = rb_gid(); e < n; e += rb_gstride()) {
    const rb_i64 o = rb_axis_offset(e, idx, is64, l, bad);
    if (o >= 0) {
      out[e] = src[o];
    } else {
      T zero;
      for (int b = 0; b < (int)sizeof(T); ++b) ((rb_u8*)&zero)[b] = 0;
      out[e] = zero;
    }
  }
}

RB_KERNEL void rb_gather_axis_b1(const rb_u8* src, const void* idx, int is64, rb_u8* out, rb_u64 n, RbAxisLayout l, rb_u64* bad) { rb_gather_axis_t(src, idx, is64, out, n, l, bad); }
RB_KERNEL void rb_gather_axis_b2(const rb_u16* src, const void* idx, int is64, rb_u16* out, rb_u64 n, RbAxisLayout l, rb_u64* bad) { rb_gather_axis_t(src, idx, is64, out, n, l, bad); }
RB_KERNEL void rb_gather_axis_b4(const rb_u32* src, const void* idx, int is64, rb_u32* out, rb_u64 n, RbAxisLayout l, rb_u64* bad) { rb_gather_axis_t(src, idx, is64, out, n, l, bad); }
RB_KERNEL void rb_gather_axis_b8(const rb_u64* src, const void* idx, int is64, rb_u64* out, rb_u64 n, RbAxisLayout l, rb_u64* bad) { rb_gather_axis_t(src, idx, is64, out, n, l, bad); }

// acc (f32, zeroed by the host; dst itself for f32, a scratch cast afterwards for f16/bf16)
// += src[e] at the element the gather would read, with atomicAdd (repeated indices sum in
// an order that may vary between runs).
template <typename T>
RB_DEVICE void rb_scatter_add_axis_t(const T* src, const void* idx, int is64, float* acc, rb_u64 n, const RbAxisLayout& l, rb_u64* bad) {
  for (rb_u64 e = rb_gid(); e < n; e += rb_gstride()) {
    const rb_i64 o = rb_axis_offset(e, idx, is64, l, bad);
    if (o >= 0) atomicAdd(acc + o, rb_to_f32(src[e]));
  }
}

RB_KERNEL void rb_scatter_add_axis_f32(const float* src, const void* idx, int is64, float* acc, rb_u64 n, RbAxisLayout l, rb_u64* bad) { rb_scatter_add_axis_t(src, idx, is64, acc, n, l, bad); }
RB_KERNEL void rb_scatter_add_axis_f16(const rb_f16* src, const void* idx, int is64, float* acc, rb_u64 n, RbAxisLayout l, rb_u64* bad) { rb_scatter_add_axis_t(src, idx, is64, acc, n, l, bad); }
RB_KERNEL void rb_scatter_add_axis_bf16(const rb_bf16* src, const void* idx, int is64, float* acc, rb_u64 n, RbAxisLayout l, rb_u64* bad) { rb_scatter_add_axis_t(src, idx, is64, acc, n, l, bad); }

// ---- topk (torch.topk along the last axis of a contiguous [rows, n]) ----------------------
// Every element gets an order-preserving 64-bit key (larger numbers larger keys, NaN above
// +inf as in torch.topk, -0 equal to +0) and a rank: the key (smallest) or its complement
// (largest), so a smaller (rank, position) pair is better everywhere; equal ranks go by
// position, as on the CPU (src/device/cpu/data.rs, ops::data::topk_key_*).
RB_DEVICE rb_u64 rb_topk_key(float v) {
  if (v != v) return ~0ull;
  const rb_u32 u = v == 0.0f ? 0u : rb_f32_bits(v);
  return (rb_u64)((u & 0x80000000u) ? ~u : (u | 0x80000000u));
}
RB_DEVICE rb_u64 rb_topk_key(rb_f16 v) { return rb_topk_key(rb_to_f32(v)); }
RB_DEVICE rb_u64 rb_topk_key(rb_bf16 v) { return rb_topk_key(rb_to_f32(v)); }
RB_DEVICE rb_u64 rb_topk_key(rb_i32 v) { return (rb_u64)(rb_i64)v ^ 0x8000000000000000ull; }
RB_DEVICE rb_u64 rb_topk_key(rb_i64 v) { return (rb_u64)v ^ 0x8000000000000000ull; }
RB_DEVICE rb_u64 rb_topk_key(rb_i8 v) { return (rb_u64)(rb_i64)v ^ 0x8000000000000000ull; }
RB_DEVICE rb_u64 rb_topk_key(rb_u8 v) { return (rb_u64)v ^ 0x8000000000000000ull; }
RB_DEVICE rb_u64 rb_topk_key(rb_i16 v) { return (rb_u64)(rb_i64)v ^ 0x8000000000000000ull; }
RB_DEVICE rb_u64 rb_topk_key(double v) {
  if (v != v) return ~0ull;
  const rb_u64 u = v == 0.0 ? 0ull : (rb_u64)__double_as_longlong(v);
  return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}

// Rows of at most RB_TOPK_SORT_MAX elements: a block per row sorts (rank, position) pairs
// in shared memory with a bitonic network over `p` slots (the power of two >= n; the slots
// past n hold the worst pair), then writes the first k.
#define RB_TOPK_SORT_MAX 2048
template <typename T>
RB_DEVICE void rb_topk_sort_t(const T* x, rb_u64 rows, rb_u64 n, rb_u64 k, int largest, int p,
                              T* values, rb_i64* indices) {
  __shared__ rb_u64 sk[RB_TOPK_SORT_MAX];
  __shared__ rb_u32 si[RB_TOPK_SORT_MAX];
  for (rb_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * n;
    for (int j = threadIdx.x; j < p; j += blockDim.x) {
      if ((rb_u64)j < n) {
        const rb_u64 key = rb_topk_key(row[j]);
        sk[j] = largest ? ~key : key;
        si[j] = (rb_u32)j;
      } else {
        sk[j] = ~0ull;
        si[j] = 0xffffffffu;
      }
    }
    for (int size = 2; size <= p; size <<= 1) {
      for (int stride = size >> 1; stride > 0; stride >>= 1) {
        __syncthreads();
        for (int t = threadIdx.x; t < p / 2; t += blockDim.x) {
          const int a = 2 * t - (t & (stride - 1));
          const int b = a + stride;
          const bool up = (a & size) == 0;  // this run ends best first
          const rb_u64 ka = sk[a], kb = sk[b];
          const rb_u32 ia = si[a], ib = si[b];
          const bool b_first = kb < ka || (kb == ka && ib < ia);
          if (b_first == up) {
            sk[a] = kb;
            sk[b] = ka;
            si[a] = ib;
            si[b] = ia;
          }
        }
      }
    }
    __syncthreads();
    for (rb_u64 j = threadIdx.x; j < k; j += blockDim.x) {
      const rb_u32 pos = si[j];
      values[r * k + j] = row[pos];
      indices[r * k + j] = (rb_i64)pos;
    }
    __syncthreads();
  }
}

// Longer rows: a block per row picks the k best one at a time, each the best pair strictly
// worse than the previous pick (a block-wide minimum in shared memory; blockDim a power of
// two up to 256). O(k n) work per row.
template <typename T>
RB_DEVICE void rb_topk_select_t(const T* x, rb_u64 rows, rb_u64 n, rb_u64 k, int largest,
                                T* values, rb_i64* indices) {
  __shared__ rb_u64 rk[256];
  __shared__ rb_u64 ri[256];
  const int t = threadIdx.x;
  for (rb_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * n;
    rb_u64 pk = 0, pi = 0;
    bool have = false;
    for (rb_u64 j = 0; j < k; ++j) {
      rb_u64 bk = ~0ull, bi = ~0ull;
      for (rb_u64 e = t; e < n; e += blockDim.x) {
        const rb_u64 key = rb_topk_key(row[e]);
        const rb_u64 rank = largest ? ~key : key;
        const bool cand = !have || rank > pk || (rank == pk && e > pi);
        if (cand && (rank < bk || (rank == bk && e < bi))) {
          bk = rank;
          bi = e;
        }
      }
      rk[t] = bk;
      ri[t] = bi;
      __syncthreads();
      for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
          const rb_u64 ok = rk[t + s], oi = ri[t + s];
          if (ok < rk[t] || (ok == rk[t] && oi < ri[t])) {
            rk[t] = ok;
            ri[t] = oi;
          }
        }
        __syncthreads();
      }
      pk = rk[0];
      pi = ri[0];
      have = true;
      if (t == 0) {
        values[r * k + j] = row[pi];
        indices[r * k + j] = (rb_i64)pi;
      }
      __syncthreads();
    }
  }
}

#define RB_TOPK(S, T)                                                                            \
  RB_KERNEL void rb_topk_sort_##S(const T* x, rb_u64 rows, rb_u64 n, rb_u64 k, int largest,      \
                                  int p, T* values, rb_i64* indices) {                           \
    rb_topk_sort_t(x, rows, n, k, largest, p, values, indices);                                  \
  }                                                                                              \
  RB_KERNEL void rb_topk_select_##S(const T* x, rb_u64 rows, rb_u64 n, rb_u64 k, int largest,    \
                                    T* values, rb_i64* indices) {                                \
    rb_topk_select_t(x, rows, n, k, largest, values, indices);                                   \
  }
RB_TOPK(f32, float)
RB_TOPK(f16, rb_f16)
RB_TOPK(bf16, rb_bf16)
RB_TOPK(i32, rb_i32)
RB_TOPK(i64, rb_i64)
RB_TOPK(f64, double)
RB_TOPK(i8, rb_i8)
RB_TOPK(u8, rb_u8)
RB_TOPK(i16, rb_i16)

// ---- scatter along one axis (torch.scatter / scatter_reduce, ONNX ScatterElements) --------
// A thread per fiber along dim (the other coordinates of the walk fixed): it applies the
// fiber's source elements (src contiguous over the walk) in index order, so repeated indices
// resolve as on the CPU (the last write wins; reductions in order) without atomics. Bad
// indices as in the gather (recorded, skipped).
// The byte-size (write-only) instantiations never combine: the primary template writes.
template <typename T>
RB_DEVICE T rb_scatter_combine(int, T, T b) { return b; }

RB_DEVICE float rb_scatter_f(int op, float a, float b) {
  if (op == 1) return a + b;
  if (op == 2) return a * b;
  if (a != a || b != b) return a + b;  // max/min propagate NaN
  if (op == 3) return a > b ? a : b;
  return a < b ? a : b;
}
template <typename T>
RB_DEVICE T rb_scatter_i(int op, T a, T b) {
  if (op == 1) return (T)((rb_u64)a + (rb_u64)b);  // wrapping, as PyTorch's integers
  if (op == 2) return (T)((rb_u64)a * (rb_u64)b);
  if (op == 3) return a > b ? a : b;
  return a < b ? a : b;
}
template <> RB_DEVICE float rb_scatter_combine<float>(int op, float a, float b) { return rb_scatter_f(op, a, b); }
template <> RB_DEVICE rb_f16 rb_scatter_combine<rb_f16>(int op, rb_f16 a, rb_f16 b) {
  rb_f16 r;
  rb_from_f32(&r, rb_scatter_f(op, rb_to_f32(a), rb_to_f32(b)));
  return r;
}
template <> RB_DEVICE rb_bf16 rb_scatter_combine<rb_bf16>(int op, rb_bf16 a, rb_bf16 b) {
  rb_bf16 r;
  rb_from_f32(&r, rb_scatter_f(op, rb_to_f32(a), rb_to_f32(b)));
  return r;
}
template <> RB_DEVICE rb_i32 rb_scatter_combine<rb_i32>(int op, rb_i32 a, rb_i32 b) { return rb_scatter_i(op, a, b); }
template <> RB_DEVICE rb_i64 rb_scatter_combine<rb_i64>(int op, rb_i64 a, rb_i64 b) { return rb_scatter_i(op, a, b); }
template <> RB_DEVICE rb_i8 rb_scatter_combine<rb_i8>(int op, rb_i8 a, rb_i8 b) { return rb_scatter_i(op, a, b); }
template <> RB_DEVICE rb_u8 rb_scatter_combine<rb_u8>(int op, rb_u8 a, rb_u8 b) { return rb_scatter_i(op, a, b); }
template <> RB_DEVICE rb_i16 rb_scatter_combine<rb_i16>(int op, rb_i16 a, rb_i16 b) { return rb_scatter_i(op, a, b); }
// f64 in double (the CPU's f64 reductions).
template <> RB_DEVICE double rb_scatter_combine<double>(int op, double a, double b) {
  if (op == 1) return a + b;
  if (op == 2) return a * b;
  if (a != a || b != b) return a + b;  // max/min propagate NaN
  if (op == 3) return a > b ? a : b;
  return a < b ? a : b;
}

// op 0 writes (any T of the element's size); 1 add, 2 mul, 3 max, 4 min.
template <typename T, bool SET>
RB_DEVICE void rb_scatter_axis_t(const T* src, const void* idx, int is64, T* dst, rb_u64 fibers,
                                 const RbAxisLayout& l, rb_u64* bad, int op) {
  const int dim = (int)l.dim;
  const rb_u64 along = (rb_u64)l.shape[dim];
  for (rb_u64 f = rb_gid(); f < fibers; f += rb_gstride()) {
    rb_u64 rem = f, base = 0, ip = 0, so = 0, cs = 1, cs_dim = 1;
    for (int d = (int)l.nd - 1; d >= 0; --d) {
      const rb_u64 ext = (rb_u64)l.shape[d];
      if (d == dim) {
        cs_dim = cs;
      } else {
        const rb_u64 i = rem % ext;
        rem /= ext;
        base += i * (rb_u64)l.ds[d];
        ip += i * (rb_u64)l.is[d];
        so += i * cs;
      }
      cs *= ext;
    }
    for (rb_u64 j = 0; j < along; ++j) {
      const rb_u64 p = ip + j * (rb_u64)l.is[dim];
      rb_i64 kk = rb_index(idx, is64, p);
      if (kk < 0) kk += l.axis_len;
      if (kk < 0 || kk >= l.axis_len) {
        // NULL inside a device-graph capture (nothing reads it back): skipped all the same.
        if (bad) atomicMin((unsigned long long*)bad, (unsigned long long)p);
        continue;
      }
      T* a = dst + base + (rb_u64)kk * (rb_u64)l.ds[dim];
      const T v = src[so + j * cs_dim];
      if (SET) {
        *a = v;
      } else {
        *a = rb_scatter_combine<T>(op, *a, v);
      }
    }
  }
}

RB_KERNEL void rb_scatter_axis_b1(const rb_u8* src, const void* idx, int is64, rb_u8* dst, rb_u64 fibers, RbAxisLayout l, rb_u64* bad) { rb_pdl_enter(); rb_scatter_axis_t<rb_u8, true>(src, idx, is64, dst, fibers, l, bad, 0); }
RB_KERNEL void rb_scatter_axis_b2(const rb_u16* src, const void* idx, int is64, rb_u16* dst, rb_u64 fibers, RbAxisLayout l, rb_u64* bad) { rb_pdl_enter(); rb_scatter_axis_t<rb_u16, true>(src, idx, is64, dst, fibers, l, bad, 0); }
RB_KERNEL void rb_scatter_axis_b4(const rb_u32* src, const void* idx, int is64, rb_u32* dst, rb_u64 fibers, RbAxisLayout l, rb_u64* bad) { rb_pdl_enter(); rb_scatter_axis_t<rb_u32, true>(src, idx, is64, dst, fibers, l, bad, 0); }
RB_KERNEL void rb_scatter_axis_b8(const rb_u64* src, const void* idx, int is64, rb_u64* dst, rb_u64 fibers, RbAxisLayout l, rb_u64* bad) { rb_pdl_enter(); rb_scatter_axis_t<rb_u64, true>(src, idx, is64, dst, fibers, l, bad, 0); }

#define RB_SCATTER_RED(S, T)                                                                     \
  RB_KERNEL void rb_scatter_red_##S(const T* src, const void* idx, int is64, T* dst,             \
                                    rb_u64 fibers, RbAxisLayout l, rb_u64* bad, int op) {        \
    rb_scatter_axis_t<T, false>(src, idx, is64, dst, fibers, l, bad, op);                        \
  }
RB_SCATTER_RED(f32, float)
RB_SCATTER_RED(f16, rb_f16)
RB_SCATTER_RED(bf16, rb_bf16)
RB_SCATTER_RED(i32, rb_i32)
RB_SCATTER_RED(i64, rb_i64)
RB_SCATTER_RED(f64, double)
RB_SCATTER_RED(i8, rb_i8)
RB_SCATTER_RED(u8, rb_u8)
RB_SCATTER_RED(i16, rb_i16)

// ---- arange: out[i] = start + i * step ------------------------------------------------------
// Floating dtypes compute in double (f16/bf16 through float); integer dtypes in 64-bit
// integers (wrapping) from the integral istart and istep.
template <typename T>
RB_DEVICE void rb_arange_store(T* p, double v, rb_i64 iv);
template <> RB_DEVICE void rb_arange_store<float>(float* p, double v, rb_i64) { *p = (float)v; }
template <> RB_DEVICE void rb_arange_store<rb_f16>(rb_f16* p, double v, rb_i64) { rb_from_f32(p, (float)v); }
template <> RB_DEVICE void rb_arange_store<rb_bf16>(rb_bf16* p, double v, rb_i64) { rb_from_f32(p, (float)v); }
template <> RB_DEVICE void rb_arange_store<rb_i32>(rb_i32* p, double, rb_i64 iv) { *p = (rb_i32)iv; }
template <> RB_DEVICE void rb_arange_store<rb_i64>(rb_i64* p, double, rb_i64 iv) { *p = iv; }
template <> RB_DEVICE void rb_arange_store<double>(double* p, double v, rb_i64) { *p = v; }
template <> RB_DEVICE void rb_arange_store<rb_i8>(rb_i8* p, double, rb_i64 iv) { *p = (rb_i8)iv; }
template <> RB_DEVICE void rb_arange_store<rb_u8>(rb_u8* p, double, rb_i64 iv) { *p = (rb_u8)iv; }
template <> RB_DEVICE void rb_arange_store<rb_i16>(rb_i16* p, double, rb_i64 iv) { *p = (rb_i16)iv; }

#define RB_ARANGE(S, T)                                                                          \
  RB_KERNEL void rb_arange_##S(T* out, rb_u64 n, double start, double step, rb_i64 istart,      \
                               rb_i64 istep) {                                                   \
    for (rb_u64 e = rb_gid(); e < n; e += rb_gstride()) {                                        \
      rb_arange_store<T>(out + e, start + (double)e * step,                                      \
                         (rb_i64)((rb_u64)istart + e * (rb_u64)istep));                          \
    }                                                                                            \
  }
RB_ARANGE(f32, float)
RB_ARANGE(f16, rb_f16)
RB_ARANGE(bf16, rb_bf16)
RB_ARANGE(i32, rb_i32)
RB_ARANGE(i64, rb_i64)
RB_ARANGE(f64, double)
RB_ARANGE(i8, rb_i8)
RB_ARANGE(u8, rb_u8)
RB_ARANGE(i16, rb_i16)

// ---- cumsum of integers and bool: i64 running sums (torch.cumsum's integer result) -----------
// x viewed as [outer, len, inner] (contiguous), a thread per fiber along len; out has the same
// view in i64. The sums are taken in the accumulator A (rb_u64: two's-complement wrapping,
// as PyTorch's i64 sums wrap) from each element widened through rb_i64 (sign-extending the
// signed dtypes). exclusive leaves each element out of its own sum; reverse sums from the end.
template <typename T, typename A>
RB_DEVICE void rb_cumsum_int_t(const T* x, rb_i64* out, rb_u64 outer, rb_u64 len, rb_u64 inner,
                               int exclusive, int reverse) {
  const rb_u64 fibers = outer * inner;
  for (rb_u64 f = rb_gid(); f < fibers; f += rb_gstride()) {
    const rb_u64 base = (f / inner) * len * inner + f % inner;
    A acc = (A)0;
    for (rb_u64 j = 0; j < len; ++j) {
      const rb_u64 p = base + (reverse ? len - 1 - j : j) * inner;
      const A v = (A)(rb_i64)x[p];
      if (exclusive) {
        out[p] = (rb_i64)acc;
        acc += v;
      } else {
        acc += v;
        out[p] = (rb_i64)acc;
      }
    }
  }
}

#define RB_CUMSUM_INT(S, T)                                                                      \
  RB_KERNEL void rb_cumsum_int_##S(const T* x, rb_i64* out, rb_u64 outer, rb_u64 len,            \
                                   rb_u64 inner, int exclusive, int reverse) {                   \
    rb_cumsum_int_t<T, rb_u64>(x, out, outer, len, inner, exclusive, reverse);                   \
  }
RB_CUMSUM_INT(i32, rb_i32)
RB_CUMSUM_INT(i64, rb_i64)
RB_CUMSUM_INT(bool, rb_u8)
RB_CUMSUM_INT(i8, rb_i8)
RB_CUMSUM_INT(u8, rb_u8)
RB_CUMSUM_INT(i16, rb_i16)
