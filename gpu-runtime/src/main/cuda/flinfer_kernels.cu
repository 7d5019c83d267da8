// Kernels of the CUDA backend's forward pass over a batch (see CudaModelRunner).
//
// Weights and the activations that feed a matrix product are 16-bit (bf16 or fp16, one type per
// model: T below); the residual stream, matrix-product outputs, attention state and logits are
// fp32. Matrices are stored row-major [rows][Kp] with Kp the column count padded to a multiple
// of 64 with zeros, so every 16-byte load is aligned and every tile is whole.
//
// Sizes that change from step to step (tokens, requests, attention work) are read from the
// step's integer buffer on the device, never passed as kernel arguments: a captured CUDA graph
// replays any step of its batch-size bucket.
//
// Determinism: a token's values never depend on what else is in its batch or how its prompt
// was chunked.
// - Matrix products: one tensor-core accumulator per output, fed the k16 steps in order; the
//   K split (split-K) depends on the matrix's shape alone, its partial sums added in split
//   order. Tile shapes, chosen by the batch, change which warp computes an output, never how.
// - Attention: a token's context is cut into fixed splits of SPLIT positions and each split
//   into chunks of CH; each query row runs one online softmax per split and the splits merge
//   in order with one formula, whether one block loops over them (extends) or blocks compute
//   them in parallel and a second kernel merges (flash-decoding). Accumulations use explicit
//   round-to-nearest intrinsics so the compiler cannot contract them differently in the two.
// - Norms, rope and the greedy summary: one block per row, fixed reduction trees.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

typedef __nv_bfloat16 bf16;
typedef __half f16;

// ---- the step buffer: a header of counts and offsets (in ints) of the arrays after it ----
#define H_N 0          // tokens in the step
#define H_B 1          // requests in the step
#define H_ITEMS 2      // attention work items of the few-rows kernel
#define H_COMBINE 3    // decode tokens whose splits are merged by attention_combine
#define H_FIXUPS 4     // request-table entries the host changed below a request's prefix
#define H_ITEMS_B 5    // attention work items of the many-rows kernel
#define H_SAMPLES 6    // requests sampled on the device (sample_rows)
#define H_IDS 8        // offset of ids[n]
#define H_POS 9        // positions[n]
#define H_LOCS 10      // out_cache_loc[n]
#define H_ROWS 11      // request-table row of each token [n]
#define H_LAST 12      // index of each request's last token [b]
#define H_ITEMS_OFF 13 // attention items [items][ITEM_INTS]
#define H_COMBINE_OFF 14 // combine items [combine][3]: token, splits, partial base
#define H_FIXUPS_OFF 15  // fixups [fixups][3]: row, position, slot
#define H_ITEMS_B_OFF 16 // many-rows attention items
#define H_SAMPLES_OFF 17 // sampled requests [samples][SAMPLE_INTS]
#define HEADER_INTS 24

#define ITEM_INTS 8
// item: first token, tokens, kv head, first split, end split, request row, partial base (-1:
// final output), unused

// sampled request: request, top_k (0: off), then as float bits temperature, top_p, min_p, u
#define SAMPLE_INTS 6

#define SPLIT 64
#define CH 32

// ---- conversions ----
__device__ __forceinline__ float to_f32(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f32(f16 v) { return __half2float(v); }
template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ bf16 from_f32<bf16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ f16 from_f32<f16>(float v) { return __float2half_rn(v); }

// ---- 8-bit KV: FP8 codes, times a scale of 1 (memcache's Fp8, bit for bit) ----

// E4M3 (float8_e4m3fn: bias 7, no infinities, 0x7F and 0xFF NaN) and E5M2 (the upper byte of a
// half) codes.
struct e4m3 {
  uint8_t code;
};
struct e5m2 {
  uint8_t code;
};

__device__ __forceinline__ float to_f32(e4m3 v) {
  unsigned int b = v.code, e = (b >> 3) & 15u, m = b & 7u;
  if (e == 15u && m == 7u) return __uint_as_float(0x7FC00000u);
  float mag = e == 0u ? __fmul_rn((float)m, 0.001953125f) : __uint_as_float(((e + 120u) << 23) | (m << 20));
  return (b & 0x80u) ? -mag : mag;
}
__device__ __forceinline__ float to_f32(e5m2 v) { return __half2float(__ushort_as_half((unsigned short)(v.code << 8))); }

// x as a code: the nearest value (ties to even) from the float's own bits, a carry moving into the
// exponent, saturated at MAX_CODE; below the smallest normal, |x| / 2^(1 - BIAS - MB) rounded to
// an integer (ties to even). NaN is 0x7F.
template <int MB, int BIAS, int MAX_CODE>
__device__ __forceinline__ uint8_t fp8_encode(float x) {
  unsigned int bits = __float_as_uint(x);
  unsigned int sign = (bits >> 24) & 0x80u;
  unsigned int magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return 0x7F;
  int code;
  if ((int)(magnitude >> 23) >= 127 + 1 - BIAS) {
    const int drop = 23 - MB;
    unsigned int rounded = magnitude + (1u << (drop - 1)) - 1u + ((magnitude >> drop) & 1u);
    code = min((int)(rounded >> drop) - ((127 - BIAS) << MB), MAX_CODE);
  } else {
    code = (int)rintf(__fmul_rn(__uint_as_float(magnitude), (float)(1 << (BIAS - 1 + MB))));
  }
  return (uint8_t)(sign | (unsigned int)code);
}
template <> __device__ __forceinline__ e4m3 from_f32<e4m3>(float v) { return {fp8_encode<3, 7, 0x7E>(v)}; }
template <> __device__ __forceinline__ e5m2 from_f32<e5m2>(float v) { return {fp8_encode<2, 15, 0x7B>(v)}; }

// Eight KV values as one load: 16 bytes of a 16-bit type, 8 of an FP8 one.
template <typename KV> struct Kv8 {
  typedef uint4 raw;
};
template <> struct Kv8<e4m3> {
  typedef uint2 raw;
};
template <> struct Kv8<e5m2> {
  typedef uint2 raw;
};

// Eight values of type T in one load to floats.
template <typename T, typename R>
__device__ __forceinline__ void unpack8(R raw, float* out) {
  static_assert(sizeof(R) == 8 * sizeof(T), "eight values a load");
  const T* h = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int i = 0; i < 8; i++) out[i] = to_f32(h[i]);
}

// ---- fixed-shape reductions ----
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Sum over a block of `threads` (a multiple of 32, at most 1024): warps, then the first warp.
__device__ float block_sum(float v, float* shared) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float r = lane < warps ? shared[lane] : 0.f;
  r = warp_sum(r);
  return r;  // every thread of warp 0 holds the sum; others too, as each warp recomputes it
}

// ---- request table ----

// Writes each token's out_cache_loc into its request's row, then the host's fixups. Grid-stride.
extern "C" __global__ void update_req_to_token(const int* __restrict__ step, int* __restrict__ req_to_token, int max_ctx) {
  int n = step[H_N], fixups = step[H_FIXUPS];
  const int* pos = step + step[H_POS];
  const int* locs = step + step[H_LOCS];
  const int* rows = step + step[H_ROWS];
  const int* fix = step + step[H_FIXUPS_OFF];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n + fixups; i += gridDim.x * blockDim.x) {
    if (i < n) {
      req_to_token[(size_t)rows[i] * max_ctx + pos[i]] = locs[i];
    } else {
      const int* f = fix + 3 * (i - n);
      req_to_token[(size_t)f[0] * max_ctx + f[1]] = f[2];
    }
  }
}

// ---- embedding and norms ----

// x[t] = embedding[ids[t]] as fp32 times scale (1, or Gemma 3's sqrt(dim): a product with 1 is
// exact). Grid: token capacity; blocks past n leave.
template <typename T>
__device__ void embed_body(const int* step, float* x, const T* emb, int dim, int ld, float scale) {
  int t = blockIdx.x;
  if (t >= step[H_N]) return;
  const T* row = emb + (size_t)step[step[H_IDS] + t] * ld;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) x[(size_t)t * dim + i] = __fmul_rn(to_f32(row[i]), scale);
}

// A norm block's thread takes the values i = threadIdx.x + k * blockDim.x of its row, NORM_U at
// a time: every load of a pass is issued before any of its values is used, so a row of up to
// NORM_U * blockDim.x values costs one memory latency a pass, not one per value. The order of
// every sum is that of a plain strided loop.
#define NORM_U 4
// Split-K partial sums a product has at most (GemmShape.MAX_SPLITS).
#define MAX_SPLITS 4

// v[u] = src[i0 + u * blockDim.x] for those below dim.
__device__ __forceinline__ void norm_load(float* v, const float* __restrict__ src, int i0, int dim) {
#pragma unroll
  for (int u = 0; u < NORM_U; u++) {
    int i = i0 + u * blockDim.x;
    if (i < dim) v[u] = src[i];
  }
}

// Given a thread's strided share of sum(x^2) over a row, and its first pass's values of x,
// writes out = T(w * (x * rsqrt(mean + eps))). Later passes read x back: only the values the
// thread itself wrote.
template <typename T>
__device__ __forceinline__ void rmsnorm_finish(float ss, const float* first, float* shared, T* __restrict__ out,
                                               const float* xr, const float* __restrict__ w, int dim, float eps) {
  float wv[NORM_U], xv[NORM_U];
  norm_load(wv, w, threadIdx.x, dim);  // needs no sum: loaded while the block sums
  ss = block_sum(ss, shared);
  float scale = rsqrtf(__fadd_rn(__fdiv_rn(ss, (float)dim), eps));
  for (int i0 = threadIdx.x; i0 < dim; i0 += NORM_U * blockDim.x) {
    if (i0 == threadIdx.x) {
#pragma unroll
      for (int u = 0; u < NORM_U; u++) xv[u] = first[u];
    } else {
      norm_load(wv, w, i0, dim);
      norm_load(xv, xr, i0, dim);
    }
#pragma unroll
    for (int u = 0; u < NORM_U; u++) {
      int i = i0 + u * blockDim.x;
      if (i < dim) out[i] = from_f32<T>(__fmul_rn(wv[u], __fmul_rn(xv[u], scale)));
    }
  }
}

// out[r] = T(w * (x[src] * rsqrt(mean(x[src]^2) + eps))): rows are the step's tokens, or with
// `last` its requests' last tokens. Block: 1024 threads, one row.
template <typename T>
__device__ void rmsnorm_body(const int* step, T* out, int ld_out, const float* x, const float* w, int dim, float eps, int last) {
  __shared__ float shared[32];
  int r = blockIdx.x;
  int rows = last ? step[H_B] : step[H_N];
  if (r >= rows) return;
  int src = last ? step[step[H_LAST] + r] : r;
  const float* xr = x + (size_t)src * dim;
  float ss = 0.f, first[NORM_U] = {}, v[NORM_U];
  for (int i0 = threadIdx.x; i0 < dim; i0 += NORM_U * blockDim.x) {
    norm_load(v, xr, i0, dim);
#pragma unroll
    for (int u = 0; u < NORM_U; u++) {
      if (i0 + u * blockDim.x < dim) ss = __fmaf_rn(v[u], v[u], ss);
      if (i0 == threadIdx.x) first[u] = v[u];
    }
  }
  rmsnorm_finish<T>(ss, first, shared, out + (size_t)r * ld_out, xr, w, dim, eps);
}

// x[t] += the splits' partial sums of a product (added in split order, as gemm_reduce does),
// then xn[t] = rmsnorm(x[t]) exactly as rmsnorm_body computes it from x: one product's finish
// and the next norm in one launch. Block: 1024 threads, one token; a thread keeps its strided
// share of the row, so the sum of squares runs in rmsnorm_body's order.
template <typename T>
__device__ void reduce_rmsnorm_body(const int* step, const float* __restrict__ ws, int splits, float* __restrict__ x,
                                    T* __restrict__ out, int ld_out, const float* __restrict__ w, int dim, float eps) {
  __shared__ float shared[32];
  int t = blockIdx.x;
  int n = step[H_N];
  if (t >= n) return;
  size_t total = (size_t)n * dim;
  float* xr = x + (size_t)t * dim;
  const float* wr = ws + (size_t)t * dim;
  float ss = 0.f, first[NORM_U] = {};
  for (int i0 = threadIdx.x; i0 < dim; i0 += NORM_U * blockDim.x) {
    float v[NORM_U], res[NORM_U], part[MAX_SPLITS - 1][NORM_U];
    norm_load(v, wr, i0, dim);
    norm_load(res, xr, i0, dim);
#pragma unroll
    for (int s = 1; s < MAX_SPLITS; s++) {
      if (s < splits) norm_load(part[s - 1], wr + s * total, i0, dim);
    }
#pragma unroll
    for (int u = 0; u < NORM_U; u++) {
      int i = i0 + u * blockDim.x;
      if (i >= dim) continue;
      float a = v[u];
#pragma unroll
      for (int s = 1; s < MAX_SPLITS; s++) {
        if (s < splits) a = __fadd_rn(a, part[s - 1][u]);
      }
      a = __fadd_rn(res[u], a);
      xr[i] = a;
      ss = __fmaf_rn(a, a, ss);
      if (i0 == threadIdx.x) first[u] = a;
    }
  }
  rmsnorm_finish<T>(ss, first, shared, out + (size_t)t * ld_out, xr, w, dim, eps);
}

// x[t] += w * (o[t] * rsqrt(mean(o[t]^2) + eps)): a product's output RMS-normalised before it
// joins the residual (Gemma 3's post-attention and post-feed-forward norms), the sum of squares
// in rmsnorm_body's order. Block: 1024 threads, one token.
__device__ void post_norm_add_body(const int* step, float* __restrict__ x, const float* __restrict__ o,
                                   const float* __restrict__ w, int dim, float eps) {
  __shared__ float shared[32];
  int t = blockIdx.x;
  if (t >= step[H_N]) return;
  const float* orow = o + (size_t)t * dim;
  float* xr = x + (size_t)t * dim;
  float ss = 0.f, v[NORM_U];
  for (int i0 = threadIdx.x; i0 < dim; i0 += NORM_U * blockDim.x) {
    norm_load(v, orow, i0, dim);
#pragma unroll
    for (int u = 0; u < NORM_U; u++) {
      if (i0 + u * blockDim.x < dim) ss = __fmaf_rn(v[u], v[u], ss);
    }
  }
  ss = block_sum(ss, shared);
  float scale = rsqrtf(__fadd_rn(__fdiv_rn(ss, (float)dim), eps));
  for (int i = threadIdx.x; i < dim; i += blockDim.x) {
    xr[i] = __fadd_rn(xr[i], __fmul_rn(w[i], __fmul_rn(orow[i], scale)));
  }
}

// ---- q, k, v after their projection: norms, rope, the KV cache ----

// A token's row of the q/k/v product: the product's output (bias added), or with several K
// splits their partial sums, added in split order and then the bias, as gemm_reduce does.
struct QkvRow {
  const float* row;  // the token's row of the output, or of split 0's partial sums
  size_t split_stride;
  int splits;
  const float* bias;  // with splits only: the product added it otherwise
  __device__ __forceinline__ float operator[](int i) const {
    float v = row[i];
#pragma unroll
    for (int s = 1; s < MAX_SPLITS; s++) {
      if (s < splits) v = __fadd_rn(v, row[s * split_stride + i]);
    }
    if (bias) v = __fadd_rn(v, bias[i]);
    return v;
  }
};

// Per token: qkv holds [q | k | v] (see QkvRow). Optionally RMS-normalises each q and k head
// (Qwen3), rotates q and k by the token's position (adjacent pairs, or with neox the halves),
// writes q (fp32) for attention and k, v (KV type) at the token's KV slot.
// Grid: tokens x groups of QKV_WARPS heads, in the order q heads, k heads, v heads; a warp per
// head, so that one token's heads are spread over many multiprocessors.
#define QKV_WARPS 4
template <typename KV>
__device__ void qkv_post_body(const int* step, const float* qkv, int splits, const float* bias, float* q_out,
                              KV* kcache, KV* vcache, const float* q_norm, const float* k_norm, const float* cos_t,
                              const float* sin_t, int heads, int kv_heads, int hd, int neox, float eps) {
  int t = blockIdx.x;
  int n = step[H_N];
  int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  int h = blockIdx.y * QKV_WARPS + warp;
  if (t >= n || h >= heads + 2 * kv_heads) return;
  int pos = step[step[H_POS] + t];
  size_t loc = (size_t)step[step[H_LOCS] + t];
  int q_dim = heads * hd, kv_dim = kv_heads * hd;
  int width = q_dim + 2 * kv_dim;
  QkvRow src = {qkv + (size_t)t * width, (size_t)n * width, splits, splits > 1 ? bias : nullptr};
  if (h >= heads + kv_heads) {
    int off = (h - heads - kv_heads) * hd;
    for (int i = lane; i < hd; i += 32) vcache[loc * kv_dim + off + i] = from_f32<KV>(src[q_dim + kv_dim + off + i]);
    return;
  }
  int half = hd / 2;
  const float* c = cos_t + (size_t)pos * half;
  const float* s = sin_t + (size_t)pos * half;
  bool is_q = h < heads;
  int in = is_q ? h * hd : q_dim + (h - heads) * hd;
  const float* nw = is_q ? q_norm : k_norm;
  float scale = 1.f;
  if (nw) {
    float ss = 0.f;
    for (int i = lane; i < hd; i += 32) {
      float v = src[in + i];
      ss = __fmaf_rn(v, v, ss);
    }
    ss = warp_sum(ss);
    scale = rsqrtf(__fadd_rn(__fdiv_rn(ss, (float)hd), eps));
  }
#pragma unroll 2
  for (int p = lane; p < half; p += 32) {
    int a = neox ? p : 2 * p;
    int b = neox ? p + half : 2 * p + 1;
    float v0 = src[in + a], v1 = src[in + b];
    if (nw) {
      v0 = __fmul_rn(nw[a], __fmul_rn(v0, scale));
      v1 = __fmul_rn(nw[b], __fmul_rn(v1, scale));
    }
    float r0 = __fsub_rn(__fmul_rn(v0, c[p]), __fmul_rn(v1, s[p]));
    float r1 = __fadd_rn(__fmul_rn(v0, s[p]), __fmul_rn(v1, c[p]));
    if (is_q) {
      float* o = q_out + (size_t)t * q_dim + h * hd;
      o[a] = r0;
      o[b] = r1;
    } else {
      KV* o = kcache + loc * kv_dim + (h - heads) * hd;
      o[a] = from_f32<KV>(r0);
      o[b] = from_f32<KV>(r1);
    }
  }
}

// ---- feed-forward ----

// T(silu(gate) * up).
template <typename T>
__device__ __forceinline__ T swiglu_value(float gate, float up) {
  float silu = __fdiv_rn(gate, __fadd_rn(1.f, __expf(-gate)));
  return from_f32<T>(__fmul_rn(silu, up));
}

// T(gelu(gate) * up), GELU in its tanh form (Gemma 3's GeGLU).
template <typename T>
__device__ __forceinline__ T geglu_value(float gate, float up) {
  float inner = __fmul_rn(0.7978845608f, __fmul_rn(gate, __fmaf_rn(0.044715f, __fmul_rn(gate, gate), 1.f)));
  float gelu = __fmul_rn(__fmul_rn(0.5f, gate), __fadd_rn(1.f, tanhf(inner)));
  return from_f32<T>(__fmul_rn(gelu, up));
}

// hn[t][i] = the gated activation (SwiGLU, or with GELU GeGLU) of gate = h[t][i] and up =
// h[t][hidden + i]. Grid: tokens x slices of the hidden width, so that one token's row is spread
// over many multiprocessors.
template <typename T, bool GELU>
__device__ void glu_body(const int* step, T* hn, int ld, const float* h, int hidden) {
  int t = blockIdx.x;
  if (t >= step[H_N]) return;
  const float* g = h + (size_t)t * 2 * hidden;
  for (int i = blockIdx.y * blockDim.x + threadIdx.x; i < hidden; i += gridDim.y * blockDim.x)
    hn[(size_t)t * ld + i] = GELU ? geglu_value<T>(g[i], g[hidden + i]) : swiglu_value<T>(g[i], g[hidden + i]);
}

// ---- matrix products on tensor cores ----

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int bytes) {
  uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t* r, const void* smem) {
  uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
__device__ __forceinline__ void ldmatrix_x2(uint32_t* r, const void* smem) {
  uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(s));
}

template <typename T> __device__ __forceinline__ void mma16816(float* d, const uint32_t* a, const uint32_t* b);
template <>
__device__ __forceinline__ void mma16816<bf16>(float* d, const uint32_t* a, const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ __forceinline__ void mma16816<f16>(float* d, const uint32_t* a, const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// One output of a product: the bias, then either stored or added to what is there (a residual).
__device__ __forceinline__ void gemm_store(float* out, size_t idx, float v, const float* bias, int m, int accumulate) {
  if (bias) v = __fadd_rn(v, bias[m]);
  if (accumulate) v = __fadd_rn(out[idx], v);
  out[idx] = v;
}

// out[t][m] (+)= sum_k W[m][k] * X[t][k] for the k of split blockIdx.z. W: [M][Kp], X: [n][Kp],
// both 16-bit; out [n][ldo] fp32. With several splits each writes its partial sums to
// ws[split][n][M] and gemm_reduce finishes. Block tile BM x BN over BK-wide k tiles in a
// STAGES-deep cp.async pipeline; warps WM x WN, each a (BM/WM) x (BN/WN) tile of m16n8k16 MMAs.
template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES>
__device__ void gemm_body(const int* __restrict__ step, int n_index, const T* __restrict__ W, const T* __restrict__ X,
                          float* __restrict__ out, float* __restrict__ ws, const float* __restrict__ bias,
                          int* __restrict__ counters, int M, int Kp, int ldo, int k_per_split, int splits,
                          int accumulate, T* __restrict__ glu, int glu_ld) {
  constexpr int THREADS = 32 * WM * WN;
  constexpr int LDS = BK + 8;  // 16-byte pad per row: ldmatrix rows fall in distinct banks
  constexpr int MT = BM / WM / 16;
  constexpr int NT = BN / WN / 8;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* As = reinterpret_cast<T*>(smem_raw);
  T* Bs = As + STAGES * BM * LDS;

  int n = step[n_index];
  int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  if (n0 >= n || m0 >= M) return;
  int k_begin = blockIdx.z * k_per_split;
  int k_end = min(Kp, k_begin + k_per_split);
  // Splits are whole multiples of 64 columns; a wider tile's last one may hold fewer: its
  // columns past the split are zero-filled and their k16 steps skipped, so every variant feeds
  // an output the same k16 steps in the same order.
  int ktiles = (k_end - k_begin + BK - 1) / BK;
  int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  int wm = warp % WM, wn = warp / WM;

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int e = 0; e < 4; e++) acc[i][j][e] = 0.f;

  auto load_tile = [&](int stage, int kt) {
    int k0 = k_begin + kt * BK;
    constexpr int CPR = BK / 8;  // 16-byte chunks per row
#pragma unroll
    for (int c = threadIdx.x; c < BM * CPR; c += THREADS) {
      int r = c / CPR, kc = (c % CPR) * 8;
      int gr = m0 + r;
      bool ok = gr < M && k0 + kc < k_end;
      const T* src = W + (size_t)(gr < M ? gr : M - 1) * Kp + (ok ? k0 + kc : k_begin);
      cp_async16(As + (stage * BM + r) * LDS + kc, src, ok ? 16 : 0);
    }
#pragma unroll
    for (int c = threadIdx.x; c < BN * CPR; c += THREADS) {
      int r = c / CPR, kc = (c % CPR) * 8;
      int gn = n0 + r;
      bool ok = gn < n && k0 + kc < k_end;
      const T* src = X + (size_t)(gn < n ? gn : n - 1) * Kp + (ok ? k0 + kc : k_begin);
      cp_async16(Bs + (stage * BN + r) * LDS + kc, src, ok ? 16 : 0);
    }
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; kt++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    int pf = kt + STAGES - 1;
    if (pf < ktiles) load_tile(pf % STAGES, pf);
    cp_async_commit();
    const T* as = As + (kt % STAGES) * BM * LDS;
    const T* bs = Bs + (kt % STAGES) * BN * LDS;
    int kvalid = min(BK, k_end - (k_begin + kt * BK));
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      if (kk >= kvalid) break;
      uint32_t a[MT][4];
      uint32_t b[NT][2];
#pragma unroll
      for (int i = 0; i < MT; i++) {
        int row = wm * (BM / WM) + i * 16 + (lane & 15);
        ldmatrix_x4(a[i], as + row * LDS + kk + (lane >> 4) * 8);
      }
      if (NT == 1) {
        int nrow = wn * (BN / WN) + (lane & 7);
        ldmatrix_x2(b[0], bs + nrow * LDS + kk + ((lane >> 3) & 1) * 8);
      } else {
#pragma unroll
        for (int j = 0; j + 1 < NT; j += 2) {
          int nrow = wn * (BN / WN) + j * 8 + (lane >> 4) * 8 + (lane & 7);
          uint32_t r[4];
          ldmatrix_x4(r, bs + nrow * LDS + kk + ((lane >> 3) & 1) * 8);
          b[j][0] = r[0];
          b[j][1] = r[1];
          b[j + 1][0] = r[2];
          b[j + 1][1] = r[3];
        }
      }
#pragma unroll
      for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++) mma16816<T>(acc[i][j], a[i], b[j]);
    }
  }
  cp_async_wait<0>();

  if (glu != nullptr) {
    // Gate and up rows interleaved by eights (DeviceWeights): in each 16-row MMA tile rows 0-7
    // are gate rows and 8-15 the matching up rows, so a thread holds both halves of its outputs
    // (accumulators 0, 1 and 2, 3) and writes SwiGLU's 16-bit result. One split only.
#pragma unroll
    for (int i = 0; i < MT; i++) {
#pragma unroll
      for (int j = 0; j < NT; j++) {
        int row = m0 + wm * (BM / WM) + i * 16 + (lane >> 2);
        int col = n0 + wn * (BN / WN) + j * 8 + (lane & 3) * 2;
        if (row >= M) continue;
        int hidx = (row >> 4) * 8 + (lane >> 2);
#pragma unroll
        for (int e = 0; e < 2; e++)
          if (col + e < n) glu[(size_t)(col + e) * glu_ld + hidx] = swiglu_value<T>(acc[i][j][e], acc[i][j][e + 2]);
      }
    }
    return;
  }

#pragma unroll
  for (int i = 0; i < MT; i++) {
#pragma unroll
    for (int j = 0; j < NT; j++) {
      int row = m0 + wm * (BM / WM) + i * 16 + (lane >> 2);
      int col = n0 + wn * (BN / WN) + j * 8 + (lane & 3) * 2;
#pragma unroll
      for (int e = 0; e < 4; e++) {
        int m = row + (e >> 1) * 8;
        int t = col + (e & 1);
        if (m < M && t < n) {
          if (splits == 1) {
            gemm_store(out, (size_t)t * ldo + m, acc[i][j][e], bias, m, accumulate);
          } else {
            ws[((size_t)blockIdx.z * n + t) * M + m] = acc[i][j][e];
          }
        }
      }
    }
  }
  if (splits == 1 || counters == nullptr) return;
  // With counters, the tile's last split to finish adds the splits' partial sums in split
  // order, as gemm_reduce does, and leaves the tile's counter at zero for the next product.
  __shared__ int is_last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    int* c = counters + blockIdx.y * gridDim.x + blockIdx.x;
    is_last = atomicAdd(c, 1) == splits - 1;
    if (is_last) *c = 0;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  for (int e = threadIdx.x; e < BM * BN; e += THREADS) {
    int m = m0 + e % BM, t = n0 + e / BM;
    if (m >= M || t >= n) continue;
    size_t i = (size_t)t * M + m, total = (size_t)n * M;
    float v = __ldcg(ws + i);
    for (int sp = 1; sp < splits; sp++) v = __fadd_rn(v, __ldcg(ws + sp * total + i));
    gemm_store(out, (size_t)t * ldo + m, v, bias, m, accumulate);
  }
}

// Adds the splits' partial sums in split order, then the bias and the residual as gemm_store.
extern "C" __global__ void gemm_reduce(const int* __restrict__ step, int n_index, const float* __restrict__ ws,
                                       float* __restrict__ out, const float* __restrict__ bias,
                                       int M, int ldo, int splits, int accumulate) {
  int n = step[n_index];
  size_t total = (size_t)n * M;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
    float v = ws[i];
    for (int s = 1; s < splits; s++) v = __fadd_rn(v, ws[(size_t)s * total + i]);
    int t = (int)(i / M), m = (int)(i % M);
    gemm_store(out, (size_t)t * ldo + m, v, bias, m, accumulate);
  }
}

// ---- attention ----

// Whether a row at position pos sees position j: causally, and with a window (0: none) only the
// window's positions up to pos.
__device__ __forceinline__ bool sees(int j, int pos, int window) {
  return j <= pos && (window == 0 || j > pos - window);
}

// Whether it sees any of a chunk's positions [c0, c0 + cn).
__device__ __forceinline__ bool sees_any(int c0, int cn, int pos, int window) {
  return c0 <= pos && (window == 0 || c0 + cn - 1 > pos - window);
}

// Paged causal attention of tiles of query rows over their request's context, read through its
// request-table row. A tile is `tokens` consecutive tokens of one request times the `group`
// query heads of one KV head: every K and V chunk is read once for all of them. Each row runs an
// online softmax per split of SPLIT positions, chunk by chunk; an item either loops over all the
// splits of its tokens, merging them in order, and writes the output, or (flash-decoding: one
// decode token, one split) writes the split's state for attention_combine.
// Block: 128 threads. Rows at most ROWS; D values per head.
template <typename KV, typename T, int D, int ROWS>
__device__ void attention_body(const int* __restrict__ step, const float* __restrict__ q, const KV* __restrict__ kcache,
                               const KV* __restrict__ vcache, const int* __restrict__ req_to_token, int max_ctx,
                               T* __restrict__ out, int ld_out, float* __restrict__ part_m, float* __restrict__ part_l,
                               float* __restrict__ part_acc, int heads, int kv_heads, float scale, int list,
                               int window) {
  constexpr int THREADS = 128;
  // Rows padded by 16 bytes: K rows' 16-byte loads by 8 lanes (one phase) fall in distinct banks,
  // and K and score rows stay 16-byte aligned.
  constexpr int DK = D + 4;
  constexpr int PS = CH + 4;
  constexpr int PER = (ROWS * D + THREADS - 1) / THREADS;  // accumulators per thread
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* Qs = reinterpret_cast<float*>(smem_raw);  // [ROWS][D]
  float* Ks = Qs + ROWS * D;                       // [CH][DK]
  float* Vs = Ks + CH * DK;                        // [CH][D]
  float* P = Vs + CH * D;                          // [ROWS][PS]: scores, then weights
  float* Ms = P + ROWS * PS;                       // per row: running max of the split
  float* Ls = Ms + ROWS;                           // sum of weights of the split
  float* Al = Ls + ROWS;                           // this chunk's rescale factor
  float* Mr = Al + ROWS;                           // merged state over splits
  float* Lr = Mr + ROWS;
  int* Pos = reinterpret_cast<int*>(Lr + ROWS);    // position of each row's token

  constexpr int SI = ROWS / 4;                      // score rows a thread takes (warp w: w, w + 4, ...)
  constexpr bool FIXED_D = THREADS % D == 0;       // a thread's accumulators share one value column
  constexpr int LOADS = (CH * D / 8 + THREADS - 1) / THREADS;  // 16-byte K (and V) loads a chunk
  static_assert(CH == 32 && THREADS == 128, "scores: a lane per position, four warps");
  const int* pos_all = step + step[H_POS];
  int items = step[list ? H_ITEMS_B : H_ITEMS];
  const int* item_list = step + step[list ? H_ITEMS_B_OFF : H_ITEMS_OFF];
  int group = heads / kv_heads;
  int kv_dim = kv_heads * D;
  int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;

  for (int it = blockIdx.x; it < items; it += gridDim.x) {
    const int* item = item_list + it * ITEM_INTS;
    int t0 = item[0], ntok = item[1], kvh = item[2], s0 = item[3], s1 = item[4], row = item[5], pbase = item[6];
    int rows = ntok * group;
    const int* table = req_to_token + (size_t)row * max_ctx;
    // A chunk's keys and values: fetched into registers (table, then cache) while the chunk
    // before is computed, then stashed in shared memory as floats.
    typedef typename Kv8<KV>::raw Raw;
    Raw kraw[LOADS], vraw[LOADS];
    auto fetch = [&](int c0, int cn) {
#pragma unroll
      for (int u = 0; u < LOADS; u++) {
        int p = tid + u * THREADS;
        int j = p / (D / 8);
        if (p < CH * D / 8 && j < cn) {
          size_t at = (size_t)table[c0 + j] * kv_dim + kvh * D + (p % (D / 8)) * 8;
          kraw[u] = *reinterpret_cast<const Raw*>(kcache + at);
          vraw[u] = *reinterpret_cast<const Raw*>(vcache + at);
        }
      }
    };
    auto stash = [&](int c0, int cn) {
#pragma unroll
      for (int u = 0; u < LOADS; u++) {
        int p = tid + u * THREADS;
        int j = p / (D / 8), d8 = (p % (D / 8)) * 8;
        if (p < CH * D / 8 && j < cn) {
          float kf[8], vf[8];
          unpack8<KV>(kraw[u], kf);
          unpack8<KV>(vraw[u], vf);
#pragma unroll
          for (int e = 0; e < 8; e++) {
            Ks[j * DK + d8 + e] = kf[e];
            Vs[j * D + d8 + e] = vf[e];
          }
        }
      }
    };
    __syncthreads();  // the previous item is done with shared memory
    for (int i = tid; i < rows * D; i += THREADS) {
      int r = i / D, d = i % D;
      Qs[i] = q[(size_t)(t0 + r / group) * heads * D + (kvh * group + r % group) * D + d];
    }
    for (int r = tid; r < rows; r += THREADS) Pos[r] = pos_all[t0 + r / group];
    int last_pos = pos_all[t0 + ntok - 1];
    int item_end = min(s1 * SPLIT, last_pos + 1);  // chunks run from s0 * SPLIT to here
    if (s0 * SPLIT < item_end) fetch(s0 * SPLIT, min(CH, item_end - s0 * SPLIT));
    float racc[PER];
#pragma unroll
    for (int k = 0; k < PER; k++) racc[k] = 0.f;

    for (int s = s0; s < s1; s++) {
      int lo = s * SPLIT;
      int hi = min(lo + SPLIT, last_pos + 1);
      float acc[PER];
#pragma unroll
      for (int k = 0; k < PER; k++) acc[k] = 0.f;
      __syncthreads();
      for (int r = tid; r < rows; r += THREADS) {
        Ms[r] = -INFINITY;
        Ls[r] = 0.f;
      }
      for (int c0 = lo; c0 < hi; c0 += CH) {
        int cn = min(CH, hi - c0);
        __syncthreads();  // the previous chunk's readers are done
        stash(c0, cn);
        if (c0 + CH < item_end) fetch(c0 + CH, min(CH, item_end - c0 - CH));  // lands during this chunk
        __syncthreads();
        // Scores: lane j takes position c0 + j, warp w rows w, w + 4, ...: SI independent dot
        // products share each key value, each summed over d in order.
        {
          float dot[SI];
#pragma unroll
          for (int k = 0; k < SI; k++) dot[k] = 0.f;
          const float* kr = Ks + lane * DK;
          constexpr int DU = SI >= 8 ? 1 : 4;  // many rows are ILP enough; more would spill
#pragma unroll DU
          for (int d = 0; d < D; d += 4) {
            float4 kd = *reinterpret_cast<const float4*>(kr + d);
#pragma unroll
            for (int k = 0; k < SI; k++) {
              float4 qd = *reinterpret_cast<const float4*>(Qs + (warp + 4 * k) * D + d);
              dot[k] = __fmaf_rn(qd.x, kd.x, dot[k]);
              dot[k] = __fmaf_rn(qd.y, kd.y, dot[k]);
              dot[k] = __fmaf_rn(qd.z, kd.z, dot[k]);
              dot[k] = __fmaf_rn(qd.w, kd.w, dot[k]);
            }
          }
#pragma unroll
          for (int k = 0; k < SI; k++) {
            int r = warp + 4 * k;
            if (r < rows)
              P[r * PS + lane] =
                  lane < cn && sees(c0 + lane, Pos[r], window) ? __fmul_rn(dot[k], scale) : -INFINITY;
          }
        }
        __syncthreads();
        // Online softmax per row, for rows that see any of this chunk.
        for (int r = warp; r < rows; r += THREADS / 32) {
          if (!sees_any(c0, cn, Pos[r], window)) continue;
          float sc = P[r * PS + lane];
          float m_old = Ms[r];
          float m_new = fmaxf(m_old, warp_max(sc));
          float p = __expf(__fsub_rn(sc, m_new));
          float sum = warp_sum(p);
          P[r * PS + lane] = p;
          if (lane == 0) {
            float a = __expf(__fsub_rn(m_old, m_new));
            Al[r] = a;
            Ls[r] = __fadd_rn(__fmul_rn(Ls[r], a), sum);
            Ms[r] = m_new;
          }
        }
        __syncthreads();
        // Values: each accumulator rescaled, then its row's weights of positions 0..lim in order;
        // positions outer, so the PER accumulators are independent chains.
        int lim[PER];
#pragma unroll
        for (int k = 0; k < PER; k++) {
          int e = tid + k * THREADS;
          lim[k] = -1;
          if (e < rows * D) {
            int r = e / D;
            if (sees_any(c0, cn, Pos[r], window)) {
              lim[k] = min(cn - 1, Pos[r] - c0);
              acc[k] = __fmul_rn(acc[k], Al[r]);
            }
          }
        }
        // Four positions at a time: one 16-byte load of a row's weights (past cn they are never
        // used: lim < cn).
        for (int j0 = 0; j0 < cn; j0 += 4) {
          float vf[4];
          if (FIXED_D) {
#pragma unroll
            for (int jj = 0; jj < 4; jj++) vf[jj] = Vs[(j0 + jj) * D + tid % D];
          }
#pragma unroll
          for (int k = 0; k < PER; k++) {
            if (j0 > lim[k]) continue;  // also every accumulator past the tile's rows
            int e = tid + k * THREADS;
            float4 p4 = *reinterpret_cast<const float4*>(P + (e / D) * PS + j0);
            float pw[4] = {p4.x, p4.y, p4.z, p4.w};
#pragma unroll
            for (int jj = 0; jj < 4; jj++) {
              float v = FIXED_D ? vf[jj] : Vs[(j0 + jj) * D + e % D];
              if (j0 + jj <= lim[k]) acc[k] = __fmaf_rn(pw[jj], v, acc[k]);
            }
          }
        }
      }
      __syncthreads();
      if (pbase >= 0) {
        // One decode token, one split: hand the split's state to attention_combine.
#pragma unroll
        for (int k = 0; k < PER; k++) {
          int e = tid + k * THREADS;
          if (e < rows * D) {
            int r = e / D, d = e % D;
            size_t h = (size_t)(pbase + s) * heads + kvh * group + r;
            part_acc[h * D + d] = acc[k];
          }
        }
        for (int r = tid; r < rows; r += THREADS) {
          size_t h = (size_t)(pbase + s) * heads + kvh * group + r;
          part_m[h] = Ms[r];
          part_l[h] = Ls[r];
        }
        continue;
      }
      // Merge split s into the rows' running state (rows whose tokens reach it).
#pragma unroll
      for (int k = 0; k < PER; k++) {
        int e = tid + k * THREADS;
        if (e < rows * D) {
          int r = e / D;
          if (Pos[r] >= lo) {
            if (s == s0) {
              racc[k] = acc[k];
            } else if (Ms[r] != -INFINITY) {
              float mn = fmaxf(Mr[r], Ms[r]);
              float a = __expf(__fsub_rn(Mr[r], mn)), b = __expf(__fsub_rn(Ms[r], mn));
              racc[k] = __fadd_rn(__fmul_rn(racc[k], a), __fmul_rn(acc[k], b));
            }
          }
        }
      }
      __syncthreads();
      for (int r = tid; r < rows; r += THREADS) {
        if (Pos[r] >= lo) {
          if (s == s0) {
            Mr[r] = Ms[r];
            Lr[r] = Ls[r];
          } else if (Ms[r] != -INFINITY) {
            float mn = fmaxf(Mr[r], Ms[r]);
            float a = __expf(__fsub_rn(Mr[r], mn)), b = __expf(__fsub_rn(Ms[r], mn));
            Lr[r] = __fadd_rn(__fmul_rn(Lr[r], a), __fmul_rn(Ls[r], b));
            Mr[r] = mn;
          }
        }
      }
    }
    if (pbase >= 0) continue;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < PER; k++) {
      int e = tid + k * THREADS;
      if (e < rows * D) {
        int r = e / D, d = e % D;
        out[(size_t)(t0 + r / group) * ld_out + (kvh * group + r % group) * D + d] = from_f32<T>(__fdiv_rn(racc[k], Lr[r]));
      }
    }
  }
}

// Merges each listed decode token's splits in order, as attention_body's loop does, and writes
// its output. Grid-stride over (token, head); a block's threads split the head's values.
template <typename T>
__device__ void attention_combine_body(const int* __restrict__ step, const float* __restrict__ part_m,
                                       const float* __restrict__ part_l, const float* __restrict__ part_acc,
                                       T* __restrict__ out, int ld_out, int heads, int hd) {
  int count = step[H_COMBINE];
  const int* list = step + step[H_COMBINE_OFF];
  for (int w = blockIdx.x; w < count * heads; w += gridDim.x) {
    const int* c = list + 3 * (w / heads);
    int h = w % heads, t = c[0], splits = c[1], base = c[2];
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
      size_t i0 = (size_t)base * heads + h;
      float m = part_m[i0], l = part_l[i0], acc = part_acc[i0 * hd + d];
      // Four splits' states are loaded before any is merged: one memory latency per four.
      for (int s0 = 1; s0 < splits; s0 += 4) {
        float ms[4], ls[4], as[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
          if (s0 + u < splits) {
            size_t i = (size_t)(base + s0 + u) * heads + h;
            ms[u] = part_m[i];
            ls[u] = part_l[i];
            as[u] = part_acc[i * hd + d];
          }
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
          // A split before a windowed layer's window holds nothing (its max -inf): skipped.
          if (s0 + u < splits && ms[u] != -INFINITY) {
            float mn = fmaxf(m, ms[u]);
            float a = __expf(__fsub_rn(m, mn)), b = __expf(__fsub_rn(ms[u], mn));
            acc = __fadd_rn(__fmul_rn(acc, a), __fmul_rn(as[u], b));
            l = __fadd_rn(__fmul_rn(l, a), __fmul_rn(ls[u], b));
            m = mn;
          }
        }
      }
      out[(size_t)t * ld_out + h * hd + d] = from_f32<T>(__fdiv_rn(acc, l));
    }
  }
}

// ---- logits ----

// Per request: the top token (lowest id on ties), its logit and log Z = max + log sum exp(l -
// max). One pass: each thread keeps a running (max, its id, sum of exp(l - max)) over its strided
// share of the row, then a fixed tree merges the threads' triples. Block: 1024 threads, one
// request, so a vocabulary of 128K is one pass of 125 loads a thread.
struct Top {
  float m, s;
  int i;
};
__device__ __forceinline__ Top top_merge(Top a, Top b) {
  if (b.m > a.m || (b.m == a.m && b.i < a.i)) {
    Top t = a;
    a = b;
    b = t;
  }
  // a holds the maximum; b's sum is rescaled to it (nothing to add when b saw only -inf).
  if (b.m != -INFINITY) a.s = __fadd_rn(a.s, __fmul_rn(b.s, __expf(__fsub_rn(b.m, a.m))));
  return a;
}
extern "C" __global__ void __launch_bounds__(1024) greedy_summary(const int* __restrict__ step, const float* __restrict__ logits, int vocab,
                                          int* __restrict__ top, float* __restrict__ top_logit, float* __restrict__ log_z) {
  __shared__ float sm[1024];
  __shared__ float ss[1024];
  __shared__ int si[1024];
  int r = blockIdx.x;
  if (r >= step[H_B]) return;
  const float* l = logits + (size_t)r * vocab;
  Top t = {-INFINITY, 0.f, 0x7fffffff};
#pragma unroll 4
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
    float v = l[i];
    if (v > t.m) {
      t.s = t.m == -INFINITY ? 1.f : __fadd_rn(__fmul_rn(t.s, __expf(__fsub_rn(t.m, v))), 1.f);
      t.m = v;
      t.i = i;
    } else if (v != -INFINITY) {
      t.s = __fadd_rn(t.s, __expf(__fsub_rn(v, t.m)));
    }
  }
  sm[threadIdx.x] = t.m;
  ss[threadIdx.x] = t.s;
  si[threadIdx.x] = t.i;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) {
      Top a = {sm[threadIdx.x], ss[threadIdx.x], si[threadIdx.x]};
      Top b = {sm[threadIdx.x + k], ss[threadIdx.x + k], si[threadIdx.x + k]};
      a = top_merge(a, b);
      sm[threadIdx.x] = a.m;
      ss[threadIdx.x] = a.s;
      si[threadIdx.x] = a.i;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    top[r] = si[0];
    top_logit[r] = sm[0];
    log_z[r] = __fadd_rn(sm[0], __logf(ss[0]));
  }
}

// ---- sampling on the device ----

// exp(x) as the host's FastExp computes it, bit for bit: the same IEEE operations in the same
// order (range reduction x = n ln2 + r, a degree-7 polynomial by fused multiply-adds), so a
// probability the device draws with is the one a host-side reference computes.
__device__ __forceinline__ float host_exp(float x) {
  x = fminf(fmaxf(x, -87.3f), 88.f);
  float n = rintf(__fmul_rn(x, 1.44269504f));
  float r = __fmaf_rn(n, -0.693359375f, x);
  r = __fmaf_rn(n, 2.12194440e-4f, r);
  float p = __fmaf_rn(1.f / 5040, r, 1.f / 720);
  p = __fmaf_rn(p, r, 1.f / 120);
  p = __fmaf_rn(p, r, 1.f / 24);
  p = __fmaf_rn(p, r, 1.f / 6);
  p = __fmaf_rn(p, r, 1.f / 2);
  p = __fmaf_rn(p, r, 1.f);
  p = __fmaf_rn(p, r, 1.f);
  return __fmul_rn(p, __int_as_float(__float_as_int(__fadd_rn(n, 8388608.f + 127.f)) << 23));
}

// A probability's weight as a fixed-point integer (units of 2^-40): sums of weights are exact, so
// they do not depend on the order of the adds (shared-memory atomics) and the walk below reaches
// exactly the total it was drawn against.
__device__ __forceinline__ unsigned long long weight_of(float p) { return __float2ull_rz(__fmul_rn(p, 1099511627776.f)); }

__device__ __forceinline__ unsigned long long warp_sum_u64(unsigned long long v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The largest value tau (as bits; probabilities are >= 0, so their bits order like them) such
// that the values >= tau among those >= lo weigh at least `target` (each 1, or with by_mass its
// weight); 0 when even all of them weigh less. Four passes of 8-bit digits from the top, each a
// histogram in shared memory. Block: SAMPLE_THREADS threads.
#define SAMPLE_THREADS 1024
__device__ unsigned int select_threshold(const float* __restrict__ p, int vocab, unsigned int lo,
                                         unsigned long long target, bool by_mass, unsigned long long* hist,
                                         unsigned long long* pick) {
  unsigned int prefix = 0, mask = 0;
  unsigned long long above = 0;  // the weight of the values above the prefix's range
  int lane = threadIdx.x & 31;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int i = threadIdx.x; i < 256; i += SAMPLE_THREADS) hist[i] = 0;
    __syncthreads();
    // A warp's lanes with the same digit add once: their weights summed over the warp first,
    // so a digit most values share costs one atomic a warp, not one a value.
    for (int i0 = 0; i0 < vocab; i0 += SAMPLE_THREADS) {
      int i = i0 + threadIdx.x;
      unsigned int b = i < vocab ? __float_as_uint(p[i]) : 0u;
      bool in = i < vocab && b >= lo && (b & mask) == prefix;
      if (!__any_sync(0xffffffffu, in)) continue;
      unsigned int digit = (b >> shift) & 255;
      unsigned int group = __match_any_sync(0xffffffffu, in ? digit : 256u);
      unsigned long long sum;
      if (by_mass) {
        unsigned long long w = in ? weight_of(__uint_as_float(b)) : 0ull;
        sum = 0;
#pragma unroll 8
        for (int j = 0; j < 32; j++) {
          unsigned long long v = __shfl_sync(0xffffffffu, w, j);
          if ((group >> j) & 1u) sum += v;
        }
      } else {
        sum = (unsigned long long)__popc(group);
      }
      if (in && __ffs(group) - 1 == lane) atomicAdd(&hist[digit], sum);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned long long acc = above;
      int d = 255;
      for (; d > 0; d--) {
        if (acc + hist[d] >= target) break;
        acc += hist[d];
      }
      pick[0] = (unsigned long long)d;
      pick[1] = acc;
    }
    __syncthreads();
    prefix |= (unsigned int)pick[0] << shift;
    mask |= 255u << shift;
    above = pick[1];
    __syncthreads();  // pick is read by every thread before thread 0 writes it again
  }
  return prefix;
}

// The weight of the values >= lo, over the block (every thread gets it).
__device__ unsigned long long kept_weight(const float* __restrict__ p, int vocab, unsigned int lo,
                                          unsigned long long* wsum) {
  unsigned long long s = 0;
  for (int i = threadIdx.x; i < vocab; i += SAMPLE_THREADS) {
    float v = p[i];
    if (__float_as_uint(v) >= lo) s += weight_of(v);
  }
  s = warp_sum_u64(s);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) wsum[threadIdx.x >> 5] = s;
  __syncthreads();
  unsigned long long total = 0;
  for (int w = 0; w < SAMPLE_THREADS / 32; w++) total += wsum[w];
  return total;
}

// Per listed request (one block each): temperature, then min-p, top-k and top-p over the tempered
// probabilities p_i = exp((l_i - max) * (1 / T)) (the largest 1; host_exp), as the host's Sampler truncates, with
// thresholds: the kept tokens are those with p_i >= tau, tau the largest of min-p, the k-th
// largest p and the smallest p whose tokens and those above it hold top_p of the kept mass (ties
// at a threshold are all kept). The draw u walks the kept tokens in index order (the host walks a
// truncated set from the most likely down: the same distribution). Writes the token and its
// log-probability before temperature, l - log Z, as the host reports. Every sum is an exact
// integer, so a request's token depends on its row and u alone.
__device__ void sample_rows_body(
    const int* __restrict__ step, const float* __restrict__ logits, int vocab, const float* __restrict__ top_logit,
    const float* __restrict__ log_z, const int* __restrict__ top, float* __restrict__ probs,
    int* __restrict__ token_out, float* __restrict__ logprob_out) {
  __shared__ unsigned long long hist[256];
  __shared__ unsigned long long wsum[SAMPLE_THREADS / 32];
  __shared__ unsigned long long pick[2];
  if (blockIdx.x >= step[H_SAMPLES]) return;
  const int* e = step + step[H_SAMPLES_OFF] + blockIdx.x * SAMPLE_INTS;
  int r = e[0], top_k = e[1];
  float temperature = __int_as_float(e[2]), top_p = __int_as_float(e[3]), min_p = __int_as_float(e[4]);
  float u = __int_as_float(e[5]);
  const float* l = logits + (size_t)r * vocab;
  float* p = probs + (size_t)r * vocab;
  float m = top_logit[r];
  float inv_t = __fdiv_rn(1.f, temperature);
  for (int i = threadIdx.x; i < vocab; i += SAMPLE_THREADS) p[i] = host_exp(__fmul_rn(__fsub_rn(l[i], m), inv_t));
  __syncthreads();
  // Kept: bits >= lo (1 keeps every p > 0).
  unsigned int lo = max(1u, __float_as_uint(min_p));
  if (top_k > 0 && top_k < vocab) lo = max(lo, select_threshold(p, vocab, lo, (unsigned long long)top_k, false, hist, pick));
  if (top_p < 1.f) {
    unsigned long long kept = kept_weight(p, vocab, lo, wsum);
    unsigned long long target = (unsigned long long)ceil((double)top_p * (double)kept);
    lo = max(lo, select_threshold(p, vocab, lo, target, true, hist, pick));
  }
  // The walk: warp w owns a run of `seg` consecutive tokens, read 32 at a time.
  int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  int seg = ((vocab + SAMPLE_THREADS - 1) / SAMPLE_THREADS) * 32;
  int s0 = warp * seg, s1 = min(vocab, s0 + seg);
  unsigned long long mine = 0;
  for (int i = s0 + lane; i < s1; i += 32) {
    float v = p[i];
    if (__float_as_uint(v) >= lo) mine += weight_of(v);
  }
  mine = warp_sum_u64(mine);
  __syncthreads();
  if (lane == 0) wsum[warp] = mine;
  __syncthreads();
  unsigned long long total = 0;
  for (int w = 0; w < SAMPLE_THREADS / 32; w++) total += wsum[w];
  unsigned long long target = (unsigned long long)((double)u * (double)total);
  if (target >= total) target = total - 1;
  unsigned long long before = 0;
  int owner = 0;
  while (owner < SAMPLE_THREADS / 32 - 1 && before + wsum[owner] <= target) before += wsum[owner++];
  if (warp != owner) return;
  unsigned long long run = before;
  int token = -1;
  for (int i0 = s0; i0 < s1 && token < 0; i0 += 32) {
    int i = i0 + lane;
    float v = i < s1 ? p[i] : 0.f;
    unsigned long long w = i < s1 && __float_as_uint(v) >= lo ? weight_of(v) : 0ull;
    // Inclusive scan over the lanes: the first lane whose running weight passes the target.
    unsigned long long inc = w;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      unsigned long long t = __shfl_up_sync(0xffffffffu, inc, o);
      if (lane >= o) inc += t;
    }
    unsigned int hit = __ballot_sync(0xffffffffu, w > 0 && run + inc > target);
    if (hit) token = i0 + __ffs(hit) - 1;
    run += __shfl_sync(0xffffffffu, inc, 31);
  }
  if (lane == 0) {
    if (token < 0) token = top[r];  // unreachable: the owner's weights pass the target
    token_out[r] = token;
    logprob_out[r] = __fsub_rn(l[token], log_z[r]);
  }
}

#define SAMPLE_ARGS                                                                                        \
  const int *step, const float *logits, int vocab, const float *top_logit, const float *log_z, const int *top, \
      float *probs, int *token_out, float *logprob_out
#define SAMPLE_PASS step, logits, vocab, top_logit, log_z, top, probs, token_out, logprob_out
extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS) sample_rows(SAMPLE_ARGS) { sample_rows_body(SAMPLE_PASS); }

// ---- entry points: the templates for each 16-bit type ----

#define FOR_TYPES(X) X(bf16, bf16) X(f16, f16)

#define ENTRY_EMBED(T, N) \
  extern "C" __global__ void embed_##N(const int* step, float* x, const T* emb, int dim, int ld, float scale) { \
    embed_body<T>(step, x, emb, dim, ld, scale);                                                                \
  }
FOR_TYPES(ENTRY_EMBED)

#define ENTRY_RMSNORM(T, N)                                                                                      \
  extern "C" __global__ void __launch_bounds__(1024) rmsnorm_##N(const int* step, T* out, int ld_out, const float* x, \
                                                               const float* w, int dim, float eps, int last) {     \
    rmsnorm_body<T>(step, out, ld_out, x, w, dim, eps, last);                                                    \
  }
FOR_TYPES(ENTRY_RMSNORM)

#define ENTRY_REDUCE_RMSNORM(T, N)                                                                                 \
  extern "C" __global__ void __launch_bounds__(1024) reduce_rmsnorm_##N(const int* step, const float* ws, int splits, \
                                                                      float* x, T* out, int ld_out, const float* w, \
                                                                      int dim, float eps) {                          \
    reduce_rmsnorm_body<T>(step, ws, splits, x, out, ld_out, w, dim, eps);                                         \
  }
FOR_TYPES(ENTRY_REDUCE_RMSNORM)

#define ENTRY_QKV(T, N)                                                                                              \
  extern "C" __global__ void __launch_bounds__(32 * QKV_WARPS) qkv_post_##N(                                                   \
      const int* step, const float* qkv, int splits, const float* bias, float* q_out, T* kcache, T* vcache,         \
      const float* q_norm, const float* k_norm, const float* cos_t, const float* sin_t, int heads, int kv_heads,    \
      int hd, int neox, float eps) {                                                                                \
    qkv_post_body<T>(step, qkv, splits, bias, q_out, kcache, vcache, q_norm, k_norm, cos_t, sin_t, heads, kv_heads, \
                     hd, neox, eps);                                                                                \
  }
FOR_TYPES(ENTRY_QKV)
ENTRY_QKV(e4m3, e4m3)
ENTRY_QKV(e5m2, e5m2)

#define ENTRY_SWIGLU(T, N) \
  extern "C" __global__ void swiglu_##N(const int* step, T* hn, int ld, const float* h, int hidden) { glu_body<T, false>(step, hn, ld, h, hidden); }
FOR_TYPES(ENTRY_SWIGLU)

#define ENTRY_GEGLU(T, N) \
  extern "C" __global__ void geglu_##N(const int* step, T* hn, int ld, const float* h, int hidden) { glu_body<T, true>(step, hn, ld, h, hidden); }
FOR_TYPES(ENTRY_GEGLU)

extern "C" __global__ void __launch_bounds__(1024) post_norm_add(const int* step, float* x, const float* o, const float* w,
                                                                 int dim, float eps) {
  post_norm_add_body(step, x, o, w, dim, eps);
}

#define ENTRY_COMBINE(T, N)                                                                                        \
  extern "C" __global__ void attention_combine_##N(const int* step, const float* pm, const float* pl, const float* pa, \
                                                   T* out, int ld_out, int heads, int hd) {                          \
    attention_combine_body<T>(step, pm, pl, pa, out, ld_out, heads, hd);                                           \
  }
FOR_TYPES(ENTRY_COMBINE)

// Matrix products: "s" tiles (64 rows x BN tokens, 4 warps along the rows) for few tokens, "l"
// tiles (128 x 128 with 2 x 2 or 2 x 4 warps, or 128 x 256 with 2 x 4) for many. All walk k in the same k16 steps. s8k128 and s8k256
// read a one-to-eight-token step's weights in longer runs per row (256 or 512 bytes a tile).
#define GEMM_ARGS                                                                                                 \
  const int *step, int n_index, const void *W, const void *X, float *out, float *ws, const float *bias, \
      int *counters, int M, int Kp, int ldo, int k_per_split, int splits, int accumulate, void *glu, int glu_ld
#define GEMM_PASS(T)                                                                                       \
  step, n_index, (const T*)W, (const T*)X, out, ws, bias, counters, M, Kp, ldo, k_per_split, splits, accumulate, \
      (T*)glu, glu_ld
#define ENTRY_GEMM(T, N)                                                                                      \
  extern "C" __global__ void __launch_bounds__(128) gemm_s8_##N(GEMM_ARGS) { gemm_body<T, 64, 8, 64, 4, 1, 4>(GEMM_PASS(T)); }    \
  extern "C" __global__ void __launch_bounds__(128) gemm_s8k128_##N(GEMM_ARGS) { gemm_body<T, 64, 8, 128, 4, 1, 3>(GEMM_PASS(T)); } \
  extern "C" __global__ void __launch_bounds__(128) gemm_s8k256_##N(GEMM_ARGS) { gemm_body<T, 64, 8, 256, 4, 1, 3>(GEMM_PASS(T)); } \
  extern "C" __global__ void __launch_bounds__(128) gemm_s16_##N(GEMM_ARGS) { gemm_body<T, 64, 16, 64, 4, 1, 4>(GEMM_PASS(T)); }  \
  extern "C" __global__ void __launch_bounds__(128) gemm_s32_##N(GEMM_ARGS) { gemm_body<T, 64, 32, 64, 4, 1, 4>(GEMM_PASS(T)); }  \
  extern "C" __global__ void __launch_bounds__(128) gemm_s64_##N(GEMM_ARGS) { gemm_body<T, 64, 64, 64, 4, 1, 4>(GEMM_PASS(T)); }  \
  extern "C" __global__ void __launch_bounds__(128) gemm_l_##N(GEMM_ARGS) { gemm_body<T, 128, 128, 32, 2, 2, 3>(GEMM_PASS(T)); } \
  extern "C" __global__ void __launch_bounds__(256) gemm_l8w_##N(GEMM_ARGS) { gemm_body<T, 128, 128, 32, 2, 4, 4>(GEMM_PASS(T)); } \
  extern "C" __global__ void __launch_bounds__(256) gemm_l8k64_##N(GEMM_ARGS) { gemm_body<T, 128, 128, 64, 2, 4, 3>(GEMM_PASS(T)); } \
  extern "C" __global__ void __launch_bounds__(256) gemm_l8n256_##N(GEMM_ARGS) { gemm_body<T, 128, 256, 32, 2, 4, 4>(GEMM_PASS(T)); } \
  extern "C" __global__ void __launch_bounds__(256) gemm_l8n256k64_##N(GEMM_ARGS) { gemm_body<T, 128, 256, 64, 2, 4, 3>(GEMM_PASS(T)); }
FOR_TYPES(ENTRY_GEMM)

// Attention: KV type x activation type x head width x rows per tile (8 for decode, 64, 32 or 16
// for extend tiles: fewer rows for wider heads keep a thread's accumulators in registers).
#define ATT_ARGS                                                                                                  \
  const int *step, const float *q, const void *kcache, const void *vcache, const int *req_to_token, int max_ctx, \
      void *out, int ld_out, float *pm, float *pl, float *pa, int heads, int kv_heads, float scale, int list, int window
#define ATT_ENTRY(N, KV, T, D, R)                                                                                \
  extern "C" __global__ void __launch_bounds__(128) attention_##N##_d##D##_r##R(ATT_ARGS) {                      \
    attention_body<KV, T, D, R>(step, q, (const KV*)kcache, (const KV*)vcache, req_to_token, max_ctx, (T*)out,     \
                                ld_out, pm, pl, pa, heads, kv_heads, scale, list, window);                         \
  }
#define ATT_TYPE(N, KV, T)                                                                                      \
  ATT_ENTRY(N, KV, T, 8, 8) ATT_ENTRY(N, KV, T, 8, 64) ATT_ENTRY(N, KV, T, 16, 8) ATT_ENTRY(N, KV, T, 16, 64)     \
  ATT_ENTRY(N, KV, T, 32, 8) ATT_ENTRY(N, KV, T, 32, 64) ATT_ENTRY(N, KV, T, 64, 8) ATT_ENTRY(N, KV, T, 64, 64)   \
  ATT_ENTRY(N, KV, T, 96, 8) ATT_ENTRY(N, KV, T, 96, 32) ATT_ENTRY(N, KV, T, 128, 8) ATT_ENTRY(N, KV, T, 128, 32) \
  ATT_ENTRY(N, KV, T, 256, 8) ATT_ENTRY(N, KV, T, 256, 16)
// Named by the activation type alone where the KV cache has it, else KV type then activation type.
ATT_TYPE(bf16, bf16, bf16)
ATT_TYPE(f16, f16, f16)
ATT_TYPE(e4m3_bf16, e4m3, bf16)
ATT_TYPE(e4m3_f16, e4m3, f16)
ATT_TYPE(e5m2_bf16, e5m2, bf16)
ATT_TYPE(e5m2_f16, e5m2, f16)
