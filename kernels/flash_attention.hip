// Fused scaled_dot_product_attention (FlashAttention-2): no S x S matrix in memory.
// src/device/gpu/attention.rs launches these; the semantics are those of crate::ops::nn
// (AttentionDesc): q [batch, sq, d], k [batch / kgroup, sk, d], v [batch / vgroup, sk, dv],
// out [batch, sq, dv], contiguous; causal 0 none, 1 top-left (j <= i), 2 bottom-right
// (j <= i + sk - sq); an optional mask (bool or additive f32/f16/bf16) read through strides as
// kernels/attention.hip reads it; a row with no visible key gives zeros (PyTorch's
// _safe_softmax).
//
// Work unit: the G query heads that share one key/value head (G = kgroup = vgroup under
// grouped-query attention, else 1) are consecutive batch entries, so their G * sq query rows
// are contiguous and form the rows of one unit; the unit reads one K/V head (no copies). Block
// (blockIdx.x = unit * row_tiles + row_tile, blockIdx.y = split) takes BR = 16 NW rows (NW
// warps, 16 rows each), streams the key tiles [split * tps, (split + 1) * tps) of BC keys
// through shared memory and keeps the online softmax (running max and sum, log2 domain, f32)
// and the f32 output accumulator in registers. The products run on the matrix cores through
// rb_mma16 (kernels/common.h); P is rounded to the input format before P V (f32 stays exact).
// With one split the block writes the output (and, when `lse` is not NULL, the natural
// logsumexp of each row: -inf for a row with no visible key); with several ("flash
// decoding": few query rows, long key sequences) it writes its partial (max, sum, acc) and
// rb_fa_combine_* merges them.
#include "common.h"

#define RB_FA_LOG2E 1.4426950408889634f
#define RB_FA_LN2 0.6931471805599453f

RB_DEVICE float rb_fa_neg_inf() { return __int_as_float(0xff800000); }

// Keys query i may see (a prefix).
RB_DEVICE long long rb_fa_keys(long long i, long long sq, long long sk, int causal) {
  if (causal == 1) return i + 1 < sk ? i + 1 : sk;
  if (causal == 2) {
    long long lim = i + 1 + sk - sq;
    return lim < 0 ? 0 : (lim < sk ? lim : sk);
  }
  return sk;
}

RB_DEVICE float rb_fa_mask(const void* m, int kind, rb_u64 off) {
  if (kind == 1) return ((const rb_u8*)m)[off] ? 0.0f : rb_fa_neg_inf();
  if (kind == 2) return ((const float*)m)[off];
  if (kind == 3) return rb_half_to_f32(((const rb_u16*)m)[off]);
  return rb_bfloat_to_f32(((const rb_u16*)m)[off]);
}

struct alignas(16) rb_fa_v16 { rb_u32 w[4]; };

// Rows [0, nrows) of a shared tile (row stride LD elements, D columns) from `src` (row
// stride `sld` elements): rows < rows_valid and columns < cols_valid are loaded, the rest
// zeroed. 16-byte accesses where the source allows.
template <typename S, int D, int LD>
RB_DEVICE void rb_fa_load(S* dst, int nrows, const S* src, rb_u64 sld, long long rows_valid,
                          int cols_valid) {
  const int V = 16 / (int)sizeof(S);
  const int chunks = D / V;
  for (int c = threadIdx.x; c < nrows * chunks; c += blockDim.x) {
    int r = c / chunks, c0 = (c % chunks) * V;
    S* d = dst + r * LD + c0;
    if (r < rows_valid && c0 + V <= cols_valid) {
      const S* s = src + (rb_u64)r * sld + c0;
      if (((rb_u64)s & 15) == 0) {
        *(rb_fa_v16*)d = *(const rb_fa_v16*)s;
        continue;
      }
    }
    for (int e = 0; e < V; e++) {
      bool ok = r < rows_valid && c0 + e < cols_valid;
      d[e] = ok ? src[(rb_u64)r * sld + c0 + e] : (S)0;
    }
  }
}

template <int H, typename S, int D, int NW, int BC>
RB_DEVICE void rb_fa_fwd(const S* __restrict__ q, const S* __restrict__ k,
                         const S* __restrict__ v, S* __restrict__ out, float* __restrict__ lse,
                         float* __restrict__ part_o, float* __restrict__ part_ml, int row_tiles,
                         int G, int kgroup, int vgroup, long long sq, long long sk, int d,
                         int dv, float scale, int causal, const void* mask, int mkind,
                         rb_u64 minner, rb_u64 mso, rb_u64 msi, rb_u64 msq, rb_u64 msk,
                         int nsplit, int tps) {
  const int BR = 16 * NW;
  const int PAD = 16 / (int)sizeof(S);
  const int LDQ = D + PAD, LDP = BC + PAD;
  const int NT = BC / 16, DT = D / 16, A = RB_MMA_ACC;
  __shared__ __attribute__((aligned(16))) S sq_[BR * LDQ];
  __shared__ __attribute__((aligned(16))) S sk_[BC * LDQ];
  __shared__ __attribute__((aligned(16))) S sv_[BC * LDQ];
  __shared__ __attribute__((aligned(16))) S sp_[BR * LDP];
  if (blockDim.x != NW * RB_MMA_W) return;  // launched for another warp width: nothing
  const rb_u64 unit = blockIdx.x / row_tiles;
  const long long r0 = (long long)(blockIdx.x % row_tiles) * BR;
  const int split = blockIdx.y;
  const long long R = (long long)G * sq;  // rows of the unit
  const rb_u64 b0 = unit * G;             // its first query head
  const S* qu = q + (b0 * sq + r0) * d;
  const S* ku = k + (b0 / kgroup) * sk * d;
  const S* vu = v + (b0 / vgroup) * sk * dv;
  const int w = threadIdx.x / RB_MMA_W;

  rb_fa_load<S, D, LDQ>(sq_, BR, qu, d, R - r0, d);

  // The keys any row of the tile sees: a tile across heads sees up to query sq - 1.
  long long rl = (r0 + BR < R ? r0 + BR : R) - 1;
  long long imax = (r0 / sq != rl / sq) ? sq - 1 : rl % sq;
  long long kend = rb_fa_keys(imax, sq, sk, causal);
  long long ntiles = (kend + BC - 1) / BC;
  long long t0 = (long long)split * tps, t1 = t0 + tps < ntiles ? t0 + tps : ntiles;

  const float sl2 = scale * RB_FA_LOG2E;
  __syncthreads();  // the Q tile is loaded
  rb_mma_afrag<H, S> qf[DT];  // this warp's 16 query rows, held for every key tile
#pragma unroll
  for (int kk = 0; kk < DT; kk++) rb_mma_load_a<H, S>(qf[kk], sq_ + w * 16 * LDQ + kk * 16, LDQ);
  float m[A], l[A], o[DT][A];
#pragma unroll
  for (int i = 0; i < A; i++) {
    m[i] = rb_fa_neg_inf();
    l[i] = 0.0f;
#pragma unroll
    for (int t = 0; t < DT; t++) o[t][i] = 0.0f;
  }
  // This lane's rows: unit row, query index, query head (for the mask).
  long long row_r[A], row_i[A], row_lim[A];
#pragma unroll
  for (int i = 0; i < A; i++) {
    row_r[i] = r0 + w * 16 + rb_mma_row<H>(i);
    row_i[i] = row_r[i] % sq;
    row_lim[i] = row_r[i] < R ? rb_fa_keys(row_i[i], sq, sk, causal) : 0;
  }

  for (long long kt = t0; kt < t1; kt++) {
    const long long j0 = kt * BC;
    __syncthreads();  // the previous tile's K, V, P are consumed
    rb_fa_load<S, D, LDQ>(sk_, BC, ku + j0 * d, d, sk - j0, d);
    rb_fa_load<S, D, LDQ>(sv_, BC, vu + j0 * dv, dv, sk - j0, dv);
    __syncthreads();
    float s[NT][A];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
#pragma unroll
      for (int i = 0; i < A; i++) s[nt][i] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < DT; kk++)
        rb_mma16_af<H, false, S>(s[nt], qf[kk], sk_ + nt * 16 * LDQ + kk * 16, LDQ);
    }
    float mx[A];
#pragma unroll
    for (int i = 0; i < A; i++) mx[i] = rb_fa_neg_inf();
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
#pragma unroll
      for (int i = 0; i < A; i++) {
        long long j = j0 + nt * 16 + rb_mma_col<H>(i);
        float x = s[nt][i] * sl2;
        if (j >= row_lim[i]) {
          x = rb_fa_neg_inf();
        } else if (mkind != 0) {
          rb_u64 b = b0 + row_r[i] / sq;
          rb_u64 off = (b / minner) * mso + (b % minner) * msi + row_i[i] * msq + j * msk;
          x = fmaf(rb_fa_mask(mask, mkind, off), RB_FA_LOG2E, x);
        }
        s[nt][i] = x;
        mx[i] = fmaxf(mx[i], x);
      }
    }
    rb_mma_row_reduce<H>(mx, 0);
    float ps[A];
#pragma unroll
    for (int i = 0; i < A; i++) {
      float mn = fmaxf(m[i], mx[i]);
      float mu = mn == rb_fa_neg_inf() ? 0.0f : mn;
      float alpha = exp2f(m[i] - mu);  // 0 while the row has seen no key
      m[i] = mn;
      l[i] *= alpha;
#pragma unroll
      for (int t = 0; t < DT; t++) o[t][i] *= alpha;
      ps[i] = 0.0f;
#pragma unroll
      for (int nt = 0; nt < NT; nt++) {
        // P as P V multiplies it (rounded to the element format): the row sums match it.
        float p = rb_mma_ld<H, S>(rb_mma_st<H, S>(exp2f(s[nt][i] - mu)));
        s[nt][i] = p;
        ps[i] += p;
      }
    }
    rb_mma_row_reduce<H>(ps, 1);
#pragma unroll
    for (int i = 0; i < A; i++) l[i] += ps[i];
    // O += P V, P from registers (through this warp's rows of sp_ where the layouts differ).
#pragma unroll
    for (int kk = 0; kk < NT; kk++) {
      rb_mma_afrag<H, S> pf;
      rb_mma_a_from_acc<H, S>(pf, s[kk], sp_ + w * 16 * LDP + kk * 16, LDP);
#pragma unroll
      for (int t = 0; t < DT; t++)
        rb_mma16_af<H, true, S>(o[t], pf, sv_ + kk * 16 * LDQ + t * 16, LDQ);
    }
  }

  const rb_u64 grow0 = unit * (rb_u64)R;  // the unit's first row of all batch * sq rows
  if (nsplit == 1) {
#pragma unroll
    for (int i = 0; i < A; i++) {
      if (row_r[i] >= R) continue;
      rb_u64 gr = grow0 + row_r[i];
      float inv = l[i] == 0.0f ? 0.0f : 1.0f / l[i];
#pragma unroll
      for (int t = 0; t < DT; t++) {
        int c = t * 16 + rb_mma_col<H>(i);
        if (c < dv) out[gr * dv + c] = rb_mma_st<H, S>(o[t][i] * inv);
      }
      if (lse && rb_mma_col<H>(i) == 0)
        lse[gr] = l[i] == 0.0f ? rb_fa_neg_inf() : m[i] * RB_FA_LN2 + logf(l[i]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < A; i++) {
      if (row_r[i] >= R) continue;
      rb_u64 pr = (grow0 + row_r[i]) * nsplit + split;
#pragma unroll
      for (int t = 0; t < DT; t++) {
        int c = t * 16 + rb_mma_col<H>(i);
        if (c < dv) part_o[pr * dv + c] = o[t][i];
      }
      if (rb_mma_col<H>(i) == 0) {
        part_ml[pr * 2] = m[i];
        part_ml[pr * 2 + 1] = l[i];
      }
    }
  }
}

// Decoding (rb_fa_dec_<dtype>_d<D>): a unit's R <= RB_FA_DEC_R query rows (one token, or
// the G query heads of a grouped-query head) against a long key range, without the matrix
// cores: the problem reads every key and value once and does two multiply-adds per byte, so
// it is bound by the bytes in flight, which the tiled kernel above (keys staged through shared
// memory, one load per lane at a time) left at a sixth of the bandwidth (a [1, 32, 1, 128]
// query against 2048 keys: 76 us on an H100).
//
// Block (blockIdx.x = unit, blockIdx.y = split) of NW warps takes the split's keys
// [split * kps, (split + 1) * kps). A key's row is LPK = D / V lanes' 16-byte vectors (V
// elements each), so a warp holds 32 / LPK keys at once and each lane group takes every
// (NW * 32 / LPK)-th key, RB_FA_DEC_U keys per lane in flight with their values. A "warp" is
// 32 lanes here (half a wavefront on 64-lane AMD parts: the shuffles stay within it). Per row, a
// lane group keeps its own online softmax (max and sum, log2 domain, f32) and its V columns of
// the f32 output; the groups merge through shared memory at the end, in a fixed order. P is
// rounded to the element format before it weighs V, as rb_fa_fwd does (the row sums match
// it). Output as rb_fa_fwd's: the result (and lse) with one split, else the partials that
// rb_fa_combine_* merges. The caller guarantees d, dv <= D, both multiples of V, and 16-byte
// aligned q, k and v.
// Output e = r * dv + c of rb_fa_combine (below): row r's nsplit partials merged.
template <int H, typename S>
RB_DEVICE void rb_fa_combine_at(const float* part_o, const float* part_ml, S* out, float* lse,
                                rb_u64 r, int c, int dv, int nsplit) {
  // Up to 16 splits (decoding's usual count): every load first, in one round trip, then the
  // arithmetic; more: one split at a time. The same operations in the same order either way.
  const float* ml = part_ml + r * nsplit * 2;
  const float* po = part_o + r * nsplit * dv + c;
  float M = rb_fa_neg_inf();
  float L = 0.0f, acc = 0.0f;
  if (nsplit <= 16) {
    float mv[16], lv[16], ov[16];
#pragma unroll
    for (int i = 0; i < 16; i++) {
      const bool in = i < nsplit;
      mv[i] = in ? ml[2 * i] : rb_fa_neg_inf();
      lv[i] = in ? ml[2 * i + 1] : 0.0f;
      ov[i] = in ? po[(rb_u64)i * dv] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < 16; i++) M = fmaxf(M, mv[i]);
    if (M != rb_fa_neg_inf()) {
#pragma unroll
      for (int i = 0; i < 16; i++) {
        if (i < nsplit) {
          float f = exp2f(mv[i] - M);
          L += f * lv[i];
          acc += f * ov[i];
        }
      }
    }
  } else {
    for (int s = 0; s < nsplit; s++) M = fmaxf(M, ml[2 * s]);
    if (M != rb_fa_neg_inf()) {
      for (int s = 0; s < nsplit; s++) {
        float f = exp2f(ml[2 * s] - M);
        L += f * ml[2 * s + 1];
        acc += f * po[(rb_u64)s * dv];
      }
    }
  }
  out[r * dv + c] = rb_mma_st<H, S>(L == 0.0f ? 0.0f : acc / L);
  if (lse && c == 0) lse[r] = L == 0.0f ? rb_fa_neg_inf() : M * RB_FA_LN2 + logf(L);
}

// The one-row kernels load each round's keys a round ahead (1; 0: when they are used). H200,
// [1, 32, 1, 128] against 2048 keys, eight caches in turn (scripts/attn_probe.py): 14.0 us
// against 14.8.
#ifndef RB_FA_DEC_PIPE
#define RB_FA_DEC_PIPE 1
#endif
#define RB_FA_DEC_R 8
#define RB_FA_DEC_U 4
// The same for one query row per unit (`_r1`, batch-1 decoding), whose registers allow more
// keys in flight (the host's DEC_U1; RB_GPU_KERNEL_DEFINES can set it for a tuning run).
#ifndef RB_FA_DEC_U1
#define RB_FA_DEC_U1 4
#endif

// An element of a product as f32 (f16: rb_half_to_f32_arith, one instruction on NVIDIA).
template <int H, typename S> RB_DEVICE float rb_fa_cvt(S x) {
  if (H == 0) return rb_half_to_f32_arith((rb_u16)x);
  return rb_mma_ld<H, S>(x);
}
template <int H, typename S> RB_DEVICE void rb_fa_unpack(const rb_fa_v16& q, float* v) {
  const S* e = (const S*)&q;
#pragma unroll
  for (int i = 0; i < 16 / (int)sizeof(S); i++) v[i] = rb_fa_cvt<H, S>(e[i]);
}

template <int H, typename S, int D, int NW, int RR>
RB_DEVICE void rb_fa_dec(const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
                         S* __restrict__ out, float* __restrict__ lse, float* __restrict__ part_o,
                         float* __restrict__ part_ml, int G, int kgroup, int vgroup, long long sq,
                         long long sk, int d, int dv, float scale, int causal, const void* mask,
                         int mkind, rb_u64 minner, rb_u64 mso, rb_u64 msi, rb_u64 msq, rb_u64 msk,
                         int nsplit, long long kps, unsigned* cnt, const void* fresh,
                         int fresh64) {
  const int V = 16 / (int)sizeof(S);
  const int LPK = D / V;            // lanes per key row
  const int KPW = 32 / LPK;         // keys a warp holds at once
  const int NG = NW * KPW;          // lane groups of the block
  const int U = RR == 1 ? RB_FA_DEC_U1 : RB_FA_DEC_U;
  __shared__ float sm_o[NG * RR * D];
  __shared__ float sm_ml[NG * RR * 2];
  if (blockDim.x != NW * 32) return;  // launched for another warp width: nothing
  const rb_u64 unit = blockIdx.x;
  const int split = blockIdx.y;
  const long long R = (long long)G * sq;
  const rb_u64 b0 = unit * G;
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const int sub = lane % LPK;                   // this lane's vector of a row
  const int grp = w * KPW + lane / LPK;         // this lane's group in the block
  const int c0 = sub * V;
  const bool kon = c0 < d, von = c0 < dv;
  const S* ku = k + (b0 / kgroup) * sk * d;
  const S* vu = v + (b0 / vgroup) * sk * dv;
  const float sl2 = scale * RB_FA_LOG2E;
  // Each row's visible keys, and the split's.
  long long lim[RR];
  long long kend = 0;
#pragma unroll
  for (int r = 0; r < RR; r++) {
    lim[r] = r < R ? rb_fa_keys(r % sq, sq, sk, causal) : 0;
    kend = lim[r] > kend ? lim[r] : kend;
  }
  // Key u of round `it` of this lane group; past j1: masked.
  const long long j0 = (long long)split * kps;
  const long long j1 = j0 + kps < kend ? j0 + kps : kend;
  auto key = [&](long long it, int u) -> long long { return j0 + (it * U + u) * NG + grp; };
  // One query row (RB_FA_DEC_PIPE): each round's keys and values are loaded a round ahead
  // (kn, vn). With `fresh` (the position, int32 or int64 by fresh64, at which the kernel
  // before this one, still running, may write the caches' key and value rows; no other row
  // is written by it, and every earlier kernel has completed: the executor's word), the
  // first round's other rows are loaded before the wait for that kernel.
  const bool pipe = RB_FA_DEC_PIPE && RR == 1;
  // Key j's row of this lane's columns.
  auto load = [&](long long j, rb_fa_v16& kd, rb_fa_v16& vd) {
    if (kon) kd = *(const rb_fa_v16*)(ku + j * d + c0);
    if (von) vd = *(const rb_fa_v16*)(vu + j * dv + c0);
  };
  rb_fa_v16 kn[U], vn[U];
  const long long fp = pipe && fresh ? (fresh64 ? *(const long long*)fresh : *(const int*)fresh) : -1;
  // The first round's rows other than fp (at_fp false: all of them without `fresh`), or fp's.
  auto first_round = [&](bool at_fp) {
#pragma unroll
    for (int u = 0; u < U; u++) {
      const long long j = key(0, u);
      if (j < j1 && (j == fp) == at_fp) load(j, kn[u], vn[u]);
    }
  };
  if (pipe) first_round(false);
  if (fresh) {  // (the kernel's entry left the wait to here)
    rb_pdl_enter();
    if (pipe) first_round(true);
  }
  // This lane's slice of every row's query.
  float qv[RR][16 / sizeof(S)];
#pragma unroll
  for (int r = 0; r < RR; r++) {
#pragma unroll
    for (int e = 0; e < V; e++) qv[r][e] = 0.0f;
    if (r < R && kon) {
      rb_fa_v16 t = *(const rb_fa_v16*)(q + ((b0 * sq) + r) * d + c0);
      rb_fa_unpack<H, S>(t, qv[r]);
    }
  }
  float m[RR], l[RR], o[RR][16 / sizeof(S)];
#pragma unroll
  for (int r = 0; r < RR; r++) {
    m[r] = rb_fa_neg_inf();
    l[r] = 0.0f;
#pragma unroll
    for (int e = 0; e < V; e++) o[r][e] = 0.0f;
  }
  for (long long it = 0; key(it, 0) - grp < j1; it++) {
    rb_fa_v16 kr[U], vr[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const long long j = key(it, u);
      if (pipe) {
        kr[u] = kn[u];
        vr[u] = vn[u];
        if (key(it + 1, u) < j1) load(key(it + 1, u), kn[u], vn[u]);
      } else if (j < j1) {
        load(j, kr[u], vr[u]);
      }
    }
    float x[U][RR];
#pragma unroll
    for (int u = 0; u < U; u++) {
      float kf[16 / sizeof(S)];
#pragma unroll
      for (int e = 0; e < V; e++) kf[e] = 0.0f;
      const long long j = key(it, u);
      if (kon && j < j1) rb_fa_unpack<H, S>(kr[u], kf);
#pragma unroll
      for (int r = 0; r < RR; r++) {
        float s = 0.0f;
#pragma unroll
        for (int e = 0; e < V; e++) s = fmaf(qv[r][e], kf[e], s);
        for (int off = LPK / 2; off > 0; off >>= 1) s += rb_shfl_xor(s, off);
        float xv = s * sl2;
        if (r >= R || j >= j1 || j >= lim[r]) {
          xv = rb_fa_neg_inf();
        } else if (mkind != 0) {
          rb_u64 b = b0 + r / sq;
          rb_u64 mo = (b / minner) * mso + (b % minner) * msi + (rb_u64)(r % sq) * msq + j * msk;
          xv = fmaf(rb_fa_mask(mask, mkind, mo), RB_FA_LOG2E, xv);
        }
        x[u][r] = xv;
      }
    }
#pragma unroll
    for (int r = 0; r < RR; r++) {
      if (r >= R) continue;
      float mx = rb_fa_neg_inf();
#pragma unroll
      for (int u = 0; u < U; u++) mx = fmaxf(mx, x[u][r]);
      const float mn = fmaxf(m[r], mx);
      const float mu = mn == rb_fa_neg_inf() ? 0.0f : mn;
      const float alpha = exp2f(m[r] - mu);  // 0 while the row has seen no key
      m[r] = mn;
      float ps = 0.0f;
#pragma unroll
      for (int e = 0; e < V; e++) o[r][e] *= alpha;
#pragma unroll
      for (int u = 0; u < U; u++) {
        const float p = rb_mma_ld<H, S>(rb_mma_st<H, S>(exp2f(x[u][r] - mu)));
        ps += p;
        if (p != 0.0f && von) {
          float vf[16 / sizeof(S)];
          rb_fa_unpack<H, S>(vr[u], vf);
#pragma unroll
          for (int e = 0; e < V; e++) o[r][e] = fmaf(p, vf[e], o[r][e]);
        }
      }
      l[r] = l[r] * alpha + ps;
    }
  }
  // Merge the NG groups: each writes its state, then the block combines per (row, column).
#pragma unroll
  for (int r = 0; r < RR; r++) {
    if (r >= R) continue;
    if (sub == 0) {
      sm_ml[(grp * RR + r) * 2] = m[r];
      sm_ml[(grp * RR + r) * 2 + 1] = l[r];
    }
#pragma unroll
    for (int e = 0; e < V; e++) sm_o[(grp * RR + r) * D + c0 + e] = o[r][e];
  }
  __syncthreads();
  const rb_u64 grow0 = unit * (rb_u64)R;
  for (int t = threadIdx.x; t < R * dv; t += blockDim.x) {
    const int r = t / dv, c = t % dv;
    float M = rb_fa_neg_inf();
    for (int g2 = 0; g2 < NG; g2++) M = fmaxf(M, sm_ml[(g2 * RR + r) * 2]);
    float L = 0.0f, acc = 0.0f;
    if (M != rb_fa_neg_inf()) {
      for (int g2 = 0; g2 < NG; g2++) {
        const float f = exp2f(sm_ml[(g2 * RR + r) * 2] - M);
        L += f * sm_ml[(g2 * RR + r) * 2 + 1];
        acc += f * sm_o[(g2 * RR + r) * D + c];
      }
    }
    const rb_u64 gr = grow0 + r;
    if (nsplit == 1) {
      out[gr * dv + c] = rb_mma_st<H, S>(L == 0.0f ? 0.0f : acc / L);
      if (lse && c == 0) lse[gr] = L == 0.0f ? rb_fa_neg_inf() : M * RB_FA_LN2 + logf(L);
    } else {
      const rb_u64 pr = gr * nsplit + split;
      part_o[pr * dv + c] = acc;
      if (c == 0) {
        part_ml[pr * 2] = M;
        part_ml[pr * 2 + 1] = L;
      }
    }
  }
  // With counters (`cnt`, one per unit, zeroed; inside a device graph): the unit's last
  // block to finish merges the splits (rb_fa_combine's arithmetic: equal bits) and sets its
  // counter back to zero, instead of a separate rb_fa_combine launch.
  if (nsplit > 1 && cnt) {
    __shared__ int last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(cnt + unit, 1u) == (unsigned)nsplit - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    for (int t = threadIdx.x; t < R * dv; t += blockDim.x)
      rb_fa_combine_at<H, S>(part_o, part_ml, out, lse, grow0 + t / dv, t % dv, dv, nsplit);
    if (threadIdx.x == 0) atomicExch(cnt + unit, 0u);
  }
}

// The backward (FlashAttention-2): block (blockIdx.x = unit * key_tiles + key_tile) owns BK = 16 NW
// keys of one K/V head (warp w: keys 16 w .. 16 w + 15) and loops over every query row of
// its unit (the G query heads sharing the head, so dK and dV sum over the group in registers
// and are written once, rounded once). Per query tile of BK rows: S^T = K Q^T, P^T from the
// saved logsumexp `lse` (natural; -inf for a row with no key), dV += P^T dO,
// dP^T = V dO^T, dS = P (dP - D) with D = rowsum(dO * O) (`dvec`), dK += dS^T Q, and
// dQ += dS K added to the f32 `dq` (atomics; zeroed by the caller). dK and dV carry the
// softmax scale; dq gets it with the adds.
template <int H, typename S, int D, int NW>
RB_DEVICE void rb_fa_bwd(const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
                         const S* __restrict__ dout, const float* __restrict__ lse,
                         const float* __restrict__ dvec, float* __restrict__ dq, S* __restrict__ dk,
                         S* __restrict__ dvo, int key_tiles, int G, int kgroup, int vgroup,
                         long long sq, long long sk, int d, int dv, float scale, int causal,
                         const void* mask, int mkind, rb_u64 minner, rb_u64 mso, rb_u64 msi,
                         rb_u64 msq, rb_u64 msk) {
  const int BK = 16 * NW;
  const int PAD = 16 / (int)sizeof(S);
  const int LD = D + PAD, LDP = BK + PAD;
  const int NT = BK / 16, DT = D / 16, A = RB_MMA_ACC;
  __shared__ __attribute__((aligned(16))) S sk_[BK * LD];
  __shared__ __attribute__((aligned(16))) S sv_[BK * LD];
  __shared__ __attribute__((aligned(16))) S sq_[BK * LD];
  __shared__ __attribute__((aligned(16))) S sdo_[BK * LD];
  __shared__ __attribute__((aligned(16))) S spt_[BK * LDP];   // P^T [key][query]
  __shared__ __attribute__((aligned(16))) S sdst_[BK * LDP];  // dS^T [key][query]
  __shared__ __attribute__((aligned(16))) S sds_[BK * LDP];   // dS [query][key]
  __shared__ float slse_[BK], sdv_[BK];
  if (blockDim.x != NW * RB_MMA_W) return;
  const rb_u64 unit = blockIdx.x / key_tiles;
  const long long j0 = (long long)(blockIdx.x % key_tiles) * BK;
  const long long R = (long long)G * sq;
  const rb_u64 b0 = unit * G;
  const rb_u64 grow0 = unit * (rb_u64)R;
  const S* ku = k + (b0 / kgroup) * sk * d;
  const S* vu = v + (b0 / vgroup) * sk * dv;
  const int w = threadIdx.x / RB_MMA_W;
  const float sl2 = scale * RB_FA_LOG2E;

  rb_fa_load<S, D, LD>(sk_, BK, ku + j0 * d, d, sk - j0, d);
  rb_fa_load<S, D, LD>(sv_, BK, vu + j0 * dv, dv, sk - j0, dv);
  float dka[DT][A], dva[DT][A];
#pragma unroll
  for (int t = 0; t < DT; t++)
#pragma unroll
    for (int i = 0; i < A; i++) dka[t][i] = dva[t][i] = 0.0f;

  const long long nqt = (R + BK - 1) / BK;
  for (long long qt = 0; qt < nqt; qt++) {
    const long long r0 = qt * BK;
    // Skip a query tile none of whose rows sees a key of this tile.
    long long rl = (r0 + BK < R ? r0 + BK : R) - 1;
    long long imax = (r0 / sq != rl / sq) ? sq - 1 : rl % sq;
    if (rb_fa_keys(imax, sq, sk, causal) <= j0) continue;
    __syncthreads();  // the previous tile is consumed
    rb_fa_load<S, D, LD>(sq_, BK, q + (grow0 + r0) * d, d, R - r0, d);
    rb_fa_load<S, D, LD>(sdo_, BK, dout + (grow0 + r0) * dv, dv, R - r0, dv);
    for (int r = threadIdx.x; r < BK; r += blockDim.x) {
      bool ok = r0 + r < R;
      float l = ok ? lse[grow0 + r0 + r] : rb_fa_neg_inf();
      slse_[r] = l * RB_FA_LOG2E;
      sdv_[r] = ok ? dvec[grow0 + r0 + r] : 0.0f;
    }
    __syncthreads();
    // S^T and dP^T: this warp's 16 keys (rows) x the tile's queries (columns).
    float st[NT][A], dpt[NT][A];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
#pragma unroll
      for (int i = 0; i < A; i++) st[nt][i] = dpt[nt][i] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < DT; kk++) {
        rb_mma16<H, false, S>(st[nt], sk_ + w * 16 * LD + kk * 16, LD, sq_ + nt * 16 * LD + kk * 16,
                              LD);
        rb_mma16<H, false, S>(dpt[nt], sv_ + w * 16 * LD + kk * 16, LD,
                              sdo_ + nt * 16 * LD + kk * 16, LD);
      }
    }
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
#pragma unroll
      for (int i = 0; i < A; i++) {
        int kr = w * 16 + rb_mma_row<H>(i), qc = nt * 16 + rb_mma_col<H>(i);
        long long j = j0 + kr, r = r0 + qc;
        float p = 0.0f;
        if (r < R && j < sk) {
          long long iq = r % sq;
          if (j < rb_fa_keys(iq, sq, sk, causal)) {
            float x = st[nt][i] * sl2;
            if (mkind != 0) {
              rb_u64 b = b0 + r / sq;
              rb_u64 off = (b / minner) * mso + (b % minner) * msi + iq * msq + j * msk;
              x = fmaf(rb_fa_mask(mask, mkind, off), RB_FA_LOG2E, x);
            }
            p = x == rb_fa_neg_inf() ? 0.0f : exp2f(x - slse_[qc]);
          }
        }
        float ds = p * (dpt[nt][i] - sdv_[qc]);
        spt_[kr * LDP + qc] = rb_mma_st<H, S>(p);
        S dsh = rb_mma_st<H, S>(ds);
        sdst_[kr * LDP + qc] = dsh;
        sds_[qc * LDP + kr] = dsh;
      }
    }
    __syncthreads();
    // dV += P^T dO, dK += dS^T Q (this warp's keys as rows; inner: the tile's queries).
#pragma unroll
    for (int t = 0; t < DT; t++)
#pragma unroll
      for (int kk = 0; kk < NT; kk++) {
        rb_mma16<H, true, S>(dva[t], spt_ + w * 16 * LDP + kk * 16, LDP, sdo_ + kk * 16 * LD + t * 16,
                             LD);
        rb_mma16<H, true, S>(dka[t], sdst_ + w * 16 * LDP + kk * 16, LDP, sq_ + kk * 16 * LD + t * 16,
                             LD);
      }
    // dQ (this warp's 16 query rows of the tile) += scale dS K, over this block's keys.
#pragma unroll
    for (int t = 0; t < DT; t++) {
      float acc[A];
#pragma unroll
      for (int i = 0; i < A; i++) acc[i] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < NT; kk++)
        rb_mma16<H, true, S>(acc, sds_ + w * 16 * LDP + kk * 16, LDP, sk_ + kk * 16 * LD + t * 16, LD);
#pragma unroll
      for (int i = 0; i < A; i++) {
        long long r = r0 + w * 16 + rb_mma_row<H>(i);
        int c = t * 16 + rb_mma_col<H>(i);
        if (r < R && c < d && acc[i] != 0.0f) atomicAdd(dq + (grow0 + r) * d + c, acc[i] * scale);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < A; i++) {
    long long j = j0 + w * 16 + rb_mma_row<H>(i);
    if (j >= sk) continue;
#pragma unroll
    for (int t = 0; t < DT; t++) {
      int c = t * 16 + rb_mma_col<H>(i);
      if (c < d) dk[((b0 / kgroup) * sk + j) * d + c] = rb_mma_st<H, S>(dka[t][i] * scale);
      if (c < dv) dvo[((b0 / vgroup) * sk + j) * dv + c] = rb_mma_st<H, S>(dva[t][i]);
    }
  }
}

// D = rowsum(dO * O) of each of `rows` rows (one warp per row), f32.
template <int H, typename S>
RB_DEVICE void rb_fa_bwd_dot(const S* dout, const S* o, float* dvec, rb_u64 rows, int dv) {
  rb_u64 warps = rb_gstride() / RB_WARP_SIZE;
  int lane = threadIdx.x % RB_WARP_SIZE;
  for (rb_u64 r = rb_gid() / RB_WARP_SIZE; r < rows; r += warps) {
    float acc = 0.0f;
    for (int c = lane; c < dv; c += RB_WARP_SIZE)
      acc += rb_mma_ld<H, S>(dout[r * dv + c]) * rb_mma_ld<H, S>(o[r * dv + c]);
    acc = rb_warp_sum(acc);
    if (lane == 0) dvec[r] = acc;
  }
}

// Merges the nsplit partials of each of `rows` rows: out = sum_s 2^(m_s - M) o_s /
// sum_s 2^(m_s - M) l_s (0 for a row with no visible key); lse as rb_fa_fwd writes it.
template <int H, typename S>
RB_DEVICE void rb_fa_combine(const float* part_o, const float* part_ml, S* out, float* lse,
                             rb_u64 rows, int dv, int nsplit) {
  for (rb_u64 e = rb_gid(); e < rows * dv; e += rb_gstride())
    rb_fa_combine_at<H, S>(part_o, part_ml, out, lse, e / dv, (int)(e % dv), dv, nsplit);
}

#define RB_FA_ARGS(S)                                                                           \
  const S *q, const S *k, const S *v, S *out, float *lse, float *part_o, float *part_ml,      \
      int row_tiles, int G, int kgroup, int vgroup, long long sq, long long sk, int d, int dv,  \
      float scale, int causal, const void *mask, int mkind, rb_u64 minner, rb_u64 mso,          \
      rb_u64 msi, rb_u64 msq, rb_u64 msk, int nsplit, int tps
#define RB_FA_PASS                                                                              \
  q, k, v, out, lse, part_o, part_ml, row_tiles, G, kgroup, vgroup, sq, sk, d, dv, scale, causal, \
      mask, mkind, minner, mso, msi, msq, msk, nsplit, tps
// rb_fa_fwd_<dtype>_d<D>[_dec]: head dims up to D (64 or 128); `_dec` one warp per block (16
// query rows: decoding, with splits over the keys).
#define RB_FA_FWD(NAME, H, S, D, NW, BC) \
  RB_KERNEL void NAME(RB_FA_ARGS(S)) { rb_fa_fwd<H, S, D, NW, BC>(RB_FA_PASS); }

// rb_fa_dec_<dtype>_d<D>: decoding, four warps per block (rb_fa_dec above).
#define RB_FA_DEC_ARGS(S)                                                                      \
  const S *q, const S *k, const S *v, S *out, float *lse, float *part_o, float *part_ml, int G, \
      int kgroup, int vgroup, long long sq, long long sk, int d, int dv, float scale, int causal, \
      const void *mask, int mkind, rb_u64 minner, rb_u64 mso, rb_u64 msi, rb_u64 msq,          \
      rb_u64 msk, int nsplit, long long kps, unsigned *cnt, const void *fresh, int fresh64
#define RB_FA_DEC(NAME, H, S, D, RR)                                                             \
  RB_KERNEL void NAME(RB_FA_DEC_ARGS(S)) {                                                       \
    if (!fresh) rb_pdl_enter();                                                                  \
    rb_fa_dec<H, S, D, 4, RR>(q, k, v, out, lse, part_o, part_ml, G, kgroup, vgroup, sq, sk, d,  \
                              dv, scale, causal, mask, mkind, minner, mso, msi, msq, msk, nsplit, \
                              kps, cnt, fresh, fresh64);                                         \
  }
// Up to RB_FA_DEC_R rows, `_r4` up to four, `_r1` one (each row's registers bound the blocks
// in flight).
RB_FA_DEC(rb_fa_dec_f16_d64, 0, rb_u16, 64, RB_FA_DEC_R)
RB_FA_DEC(rb_fa_dec_f16_d128, 0, rb_u16, 128, RB_FA_DEC_R)
RB_FA_DEC(rb_fa_dec_bf16_d64, 1, rb_u16, 64, RB_FA_DEC_R)
RB_FA_DEC(rb_fa_dec_bf16_d128, 1, rb_u16, 128, RB_FA_DEC_R)
RB_FA_DEC(rb_fa_dec_f32_d64, 2, float, 64, RB_FA_DEC_R)
RB_FA_DEC(rb_fa_dec_f32_d128, 2, float, 128, RB_FA_DEC_R)
RB_FA_DEC(rb_fa_dec_f16_d64_r4, 0, rb_u16, 64, 4)
RB_FA_DEC(rb_fa_dec_f16_d128_r4, 0, rb_u16, 128, 4)
RB_FA_DEC(rb_fa_dec_bf16_d64_r4, 1, rb_u16, 64, 4)
RB_FA_DEC(rb_fa_dec_bf16_d128_r4, 1, rb_u16, 128, 4)
RB_FA_DEC(rb_fa_dec_f32_d64_r4, 2, float, 64, 4)
RB_FA_DEC(rb_fa_dec_f32_d128_r4, 2, float, 128, 4)
RB_FA_DEC(rb_fa_dec_f16_d64_r1, 0, rb_u16, 64, 1)
RB_FA_DEC(rb_fa_dec_f16_d128_r1, 0, rb_u16, 128, 1)
RB_FA_DEC(rb_fa_dec_bf16_d64_r1, 1, rb_u16, 64, 1)
RB_FA_DEC(rb_fa_dec_bf16_d128_r1, 1, rb_u16, 128, 1)
RB_FA_DEC(rb_fa_dec_f32_d64_r1, 2, float, 64, 1)
RB_FA_DEC(rb_fa_dec_f32_d128_r1, 2, float, 128, 1)

RB_FA_FWD(rb_fa_fwd_f16_d64, 0, rb_u16, 64, 4, 64)
RB_FA_FWD(rb_fa_fwd_f16_d128, 0, rb_u16, 128, 4, 32)
RB_FA_FWD(rb_fa_fwd_f16_d64_dec, 0, rb_u16, 64, 1, 64)
RB_FA_FWD(rb_fa_fwd_f16_d128_dec, 0, rb_u16, 128, 1, 64)
RB_FA_FWD(rb_fa_fwd_bf16_d64, 1, rb_u16, 64, 4, 64)
RB_FA_FWD(rb_fa_fwd_bf16_d128, 1, rb_u16, 128, 4, 32)
RB_FA_FWD(rb_fa_fwd_bf16_d64_dec, 1, rb_u16, 64, 1, 64)
RB_FA_FWD(rb_fa_fwd_bf16_d128_dec, 1, rb_u16, 128, 1, 64)
RB_FA_FWD(rb_fa_fwd_f32_d64, 2, float, 64, 2, 32)
RB_FA_FWD(rb_fa_fwd_f32_d128, 2, float, 128, 2, 16)
RB_FA_FWD(rb_fa_fwd_f32_d64_dec, 2, float, 64, 1, 32)
RB_FA_FWD(rb_fa_fwd_f32_d128_dec, 2, float, 128, 1, 16)

#define RB_FA_COMBINE(NAME, H, S)                                                          \
  RB_KERNEL void NAME(const float* part_o, const float* part_ml, S* out, float* lse,        \
                      rb_u64 rows, int dv, int nsplit) {                                  \
    rb_pdl_enter();                                                                        \
    rb_fa_combine<H, S>(part_o, part_ml, out, lse, rows, dv, nsplit);                      \
  }
RB_FA_COMBINE(rb_fa_combine_f16, 0, rb_u16)
RB_FA_COMBINE(rb_fa_combine_bf16, 1, rb_u16)
RB_FA_COMBINE(rb_fa_combine_f32, 2, float)

#define RB_FA_BWD(NAME, H, S, D, NW)                                                               \
  RB_KERNEL void NAME(const S* q, const S* k, const S* v, const S* dout, const float* lse,       \
                      const float* dvec, float* dq, S* dk, S* dvo, int key_tiles, int G,          \
                      int kgroup, int vgroup, long long sq, long long sk, int d, int dv,          \
                      float scale, int causal, const void* mask, int mkind, rb_u64 minner,       \
                      rb_u64 mso, rb_u64 msi, rb_u64 msq, rb_u64 msk) {                          \
    rb_fa_bwd<H, S, D, NW>(q, k, v, dout, lse, dvec, dq, dk, dvo, key_tiles, G, kgroup, vgroup, \
                           sq, sk, d, dv, scale, causal, mask, mkind, minner, mso, msi, msq,     \
                           msk);                                                                 \
  }
// rb_fa_bwd_<dtype>_d<D>: 16 NW keys per block (NW 2 for f16/bf16, 1 for f32).
RB_FA_BWD(rb_fa_bwd_f16_d64, 0, rb_u16, 64, 2)
RB_FA_BWD(rb_fa_bwd_f16_d128, 0, rb_u16, 128, 2)
RB_FA_BWD(rb_fa_bwd_bf16_d64, 1, rb_u16, 64, 2)
RB_FA_BWD(rb_fa_bwd_bf16_d128, 1, rb_u16, 128, 2)
RB_FA_BWD(rb_fa_bwd_f32_d64, 2, float, 64, 1)
RB_FA_BWD(rb_fa_bwd_f32_d128, 2, float, 128, 1)

#define RB_FA_BWD_DOT(NAME, H, S)                                                          \
  RB_KERNEL void NAME(const S* dout, const S* o, float* dvec, rb_u64 rows, int dv) {        \
    rb_fa_bwd_dot<H, S>(dout, o, dvec, rows, dv);                                          \
  }
RB_FA_BWD_DOT(rb_fa_bwd_dot_f16, 0, rb_u16)
RB_FA_BWD_DOT(rb_fa_bwd_dot_bf16, 1, rb_u16)
RB_FA_BWD_DOT(rb_fa_bwd_dot_f32, 2, float)
