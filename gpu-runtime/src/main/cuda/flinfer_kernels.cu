// Kernels of the CUDA backend's Llama forward pass over a batch.
//
// Determinism: every output is reduced in one fixed order that depends only on the sizes of
// the model and the token's own context, never on the batch: a GEMM output is one thread's
// sequential sum, a norm or softmax is one block's fixed-shape tree, an attention output is a
// sequential sum over positions. A request's logits are therefore the same bits whatever else
// shares its batch.

#define THREADS 256

// Fixed-shape block sum of one value per thread (THREADS threads): the same tree every call.
__device__ float block_sum(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  float r = shared[0];
  __syncthreads();
  return r;
}

__device__ float block_max(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + stride]);
    __syncthreads();
  }
  float r = shared[0];
  __syncthreads();
  return r;
}

// x[t][0..dim) = table[ids[t]][0..dim). Grid: tokens.
extern "C" __global__ void embedding(float* x, const float* table, const int* ids, int dim) {
  int t = blockIdx.x;
  const float* row = table + (long)ids[t] * dim;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) x[(long)t * dim + i] = row[i];
}

// out[t] = w * x[t] / rms(x[t]). Grid: rows; block THREADS. Row r of x is rows_index[r] when
// given (gathering each request's last token), else r.
extern "C" __global__ void rmsnorm(float* out, const float* x, const float* w, const int* rows_index, int dim, float eps) {
  __shared__ float shared[THREADS];
  int r = blockIdx.x;
  int src = rows_index ? rows_index[r] : r;
  const float* xr = x + (long)src * dim;
  float ss = 0.f;
  for (int i = threadIdx.x; i < dim; i += THREADS) ss += xr[i] * xr[i];
  ss = block_sum(ss, shared);
  float scale = rsqrtf(ss / dim + eps);
  for (int i = threadIdx.x; i < dim; i += THREADS) out[(long)r * dim + i] = w[i] * (scale * xr[i]);
}

// out[t][o] = sum_i w[o][i] * x[t][i]. Tiles of 32 outputs x 8 tokens; each thread owns one
// (token, output) and sums over i in order. Grid: (ceil(rows/32), ceil(tokens/8)); block (32, 8).
extern "C" __global__ void matmul(float* out, const float* w, const float* x, int rows, int cols, int tokens) {
  __shared__ float ws[32][33];
  __shared__ float xs[8][33];
  int o = blockIdx.x * 32 + threadIdx.x;
  int t = blockIdx.y * 8 + threadIdx.y;
  float acc = 0.f;
  for (int k0 = 0; k0 < cols; k0 += 32) {
    // 256 threads load a 32 x 32 weight tile (4 each) and an 8 x 32 activation tile (1 each).
    int lin = threadIdx.y * 32 + threadIdx.x;
    for (int e = lin; e < 32 * 32; e += 256) {
      int ro = e / 32, k = e % 32;
      int go = blockIdx.x * 32 + ro;
      ws[ro][k] = (go < rows && k0 + k < cols) ? w[(long)go * cols + k0 + k] : 0.f;
    }
    {
      int rt = lin / 32, k = lin % 32;
      int gt = blockIdx.y * 8 + rt;
      xs[rt][k] = (gt < tokens && k0 + k < cols) ? x[(long)gt * cols + k0 + k] : 0.f;
    }
    __syncthreads();
    int kmax = min(32, cols - k0);
    for (int k = 0; k < kmax; k++) acc = fmaf(ws[threadIdx.x][k], xs[threadIdx.y][k], acc);
    __syncthreads();
  }
  if (o < rows && t < tokens) out[(long)t * rows + o] = acc;
}

// Rotates adjacent pairs of each head by the angles of the token's position. Grid: tokens.
extern "C" __global__ void rope(float* v, const int* positions, const float* cos_table, const float* sin_table, int width, int head_dim) {
  int t = blockIdx.x;
  int half = head_dim / 2;
  int base = positions[t] * half;
  for (int p = threadIdx.x; p < width / 2; p += blockDim.x) {
    int h = (2 * p) / head_dim;
    int i = p % half;
    long at = (long)t * width + h * head_dim + 2 * i;
    float c = cos_table[base + i], s = sin_table[base + i];
    float v0 = v[at], v1 = v[at + 1];
    v[at] = v0 * c - v1 * s;
    v[at + 1] = v0 * s + v1 * c;
  }
}

// Stores each token's K and V at its KV slot. Grid: tokens.
extern "C" __global__ void kv_store(float* k_pool, float* v_pool, const float* k, const float* v, const int* locs, int kv_dim) {
  int t = blockIdx.x;
  long dst = (long)locs[t] * kv_dim;
  for (int i = threadIdx.x; i < kv_dim; i += blockDim.x) {
    k_pool[dst + i] = k[(long)t * kv_dim + i];
    v_pool[dst + i] = v[(long)t * kv_dim + i];
  }
}

// Causal attention of one query head of one token over its request's context, read through
// its req_to_token row. Grid: (heads, tokens); block THREADS; dynamic shared: context floats.
extern "C" __global__ void attention(float* out, const float* q, const float* k_pool, const float* v_pool,
                                     const int* req_to_token, const int* token_row, const int* positions,
                                     int max_ctx, int heads, int kv_heads, int head_dim) {
  extern __shared__ float scores[];
  __shared__ float shared[THREADS];
  int h = blockIdx.x, t = blockIdx.y;
  int kv_dim = kv_heads * head_dim;
  int kvh = h / (heads / kv_heads);
  int ctx = positions[t] + 1;
  const int* row = req_to_token + (long)token_row[t] * max_ctx;
  const float* qh = q + (long)t * heads * head_dim + h * head_dim;
  float scale = rsqrtf((float)head_dim);
  float local_max = -INFINITY;
  for (int j = threadIdx.x; j < ctx; j += THREADS) {
    const float* kr = k_pool + (long)row[j] * kv_dim + kvh * head_dim;
    float s = 0.f;
    for (int i = 0; i < head_dim; i++) s = fmaf(qh[i], kr[i], s);
    s *= scale;
    scores[j] = s;
    local_max = fmaxf(local_max, s);
  }
  float m = block_max(local_max, shared);
  float local_sum = 0.f;
  for (int j = threadIdx.x; j < ctx; j += THREADS) {
    float e = __expf(scores[j] - m);
    scores[j] = e;
    local_sum += e;
  }
  float inv = 1.f / block_sum(local_sum, shared);
  for (int i = threadIdx.x; i < head_dim; i += THREADS) {
    float acc = 0.f;
    for (int j = 0; j < ctx; j++) acc = fmaf(v_pool[(long)row[j] * kv_dim + kvh * head_dim + i], scores[j] * inv, acc);
    out[(long)t * heads * head_dim + h * head_dim + i] = acc;
  }
}

// a = silu(a) * b. Grid-stride.
extern "C" __global__ void swiglu(float* a, const float* b, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    float v = a[i];
    a[i] = v * (1.f / (1.f + __expf(-v))) * b[i];
  }
}

// x += y. Grid-stride.
extern "C" __global__ void add(float* x, const float* y, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) x[i] += y[i];
}
