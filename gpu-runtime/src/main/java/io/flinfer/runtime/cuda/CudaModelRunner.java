package io.flinfer.runtime.cuda;

import static jcuda.driver.JCudaDriver.cuCtxCreate;
import static jcuda.driver.JCudaDriver.cuCtxDestroy;
import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD32;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.ModelRunner;
import io.flinfer.runtime.kernel.RopeTable;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.LlamaWeights;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.tensor.WeightMatrix;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * The CUDA backend: the same batched forward pass as the CPU backend, on one device through JCuda's
 * driver API and the PTX kernels packaged in the jar. Owns a context, the weights (as fp32), the KV
 * pool and the request-to-token table in device memory, and the activation buffers. The request
 * table is mirrored for each batch's requests before the step.
 */
public final class CudaModelRunner implements ModelRunner {
  static final String PTX = "/cuda/flinfer_kernels.ptx";
  private static final int THREADS = 256;

  private final ModelConfig c;
  private final ReqToTokenPool reqToToken;
  private final CUcontext context = new CUcontext();
  private final List<CUdeviceptr> allocations = new ArrayList<>();
  private final CUfunction embedding;
  private final CUfunction rmsnorm;
  private final CUfunction matmul;
  private final CUfunction rope;
  private final CUfunction kvStore;
  private final CUfunction attention;
  private final CUfunction swiglu;
  private final CUfunction add;
  private final DeviceWeights w;
  private final CUdeviceptr[] kPool;
  private final CUdeviceptr[] vPool;
  private final CUdeviceptr reqTable;
  private final CUdeviceptr cos;
  private final CUdeviceptr sin;
  private final StepInputs inputs = new StepInputs();
  private int capacity;
  private int inputCapacity;
  private CUdeviceptr stepInts;
  private CUdeviceptr x, xb, q, k, v, att, hb, hb2, last, logitsDev;
  private int logitsCapacity;

  /** The fp32 weights on the device. */
  private record DeviceWeights(
      CUdeviceptr embedding,
      CUdeviceptr[] rmsAtt,
      CUdeviceptr[] wq,
      CUdeviceptr[] wk,
      CUdeviceptr[] wv,
      CUdeviceptr[] wo,
      CUdeviceptr[] rmsFfn,
      CUdeviceptr[] w1,
      CUdeviceptr[] w2,
      CUdeviceptr[] w3,
      CUdeviceptr rmsFinal,
      CUdeviceptr classifier) {}

  public CudaModelRunner(LlamaModel model, KvPool kv, ReqToTokenPool reqToToken, int threads) {
    this(model, kv, reqToToken, threads, 0);
  }

  /** On device {@code deviceIndex} (the one Flink's external resource framework assigned). */
  public CudaModelRunner(
      LlamaModel model, KvPool kv, ReqToTokenPool reqToToken, int threads, int deviceIndex) {
    CudaProbe.unavailableReason()
        .ifPresent(
            reason -> {
              throw new IllegalStateException("CUDA backend unavailable: " + reason);
            });
    this.c = model.config();
    this.reqToToken = reqToToken;
    JCudaDriver.setExceptionsEnabled(true);
    cuInit(0);
    CUdevice device = new CUdevice();
    cuDeviceGet(device, deviceIndex);
    cuCtxCreate(context, 0, device);
    CUmodule module = new CUmodule();
    cuModuleLoadData(module, ptx());
    embedding = function(module, "embedding");
    rmsnorm = function(module, "rmsnorm");
    matmul = function(module, "matmul");
    rope = function(module, "rope");
    kvStore = function(module, "kv_store");
    attention = function(module, "attention");
    swiglu = function(module, "swiglu");
    add = function(module, "add");
    w = upload(model.weights());
    long rows =
        (long) kv.size() + 1 + 64; // usable slots, the padding slot(s) and a margin for paged pools
    kPool = new CUdeviceptr[c.layers()];
    vPool = new CUdeviceptr[c.layers()];
    for (int l = 0; l < c.layers(); l++) {
      kPool[l] = alloc(rows * c.kvDim() * Sizeof.FLOAT);
      vPool[l] = alloc(rows * c.kvDim() * Sizeof.FLOAT);
    }
    reqTable = alloc((long) reqToToken.size() * reqToToken.maxContextLen() * Sizeof.INT);
    cuMemsetD32(reqTable, 0, (long) reqToToken.size() * reqToToken.maxContextLen());
    RopeTable table =
        RopeTable.of(
            c.headDim(), Math.max(c.contextLength(), reqToToken.maxContextLen()), c.ropeTheta());
    cos = upload(table.cos());
    sin = upload(table.sin());
    ensureCapacity(16);
  }

  private static byte[] ptx() {
    try (InputStream in = CudaModelRunner.class.getResourceAsStream(PTX)) {
      if (in == null) {
        throw new IllegalStateException("PTX resource " + PTX + " is missing from the jar");
      }
      byte[] b = in.readAllBytes();
      byte[] z = new byte[b.length + 1]; // null-terminated for cuModuleLoadData
      System.arraycopy(b, 0, z, 0, b.length);
      return z;
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + PTX, e);
    }
  }

  private static CUfunction function(CUmodule module, String name) {
    CUfunction f = new CUfunction();
    cuModuleGetFunction(f, module, name);
    return f;
  }

  private CUdeviceptr alloc(long bytes) {
    CUdeviceptr p = new CUdeviceptr();
    cuMemAlloc(p, Math.max(bytes, 4));
    allocations.add(p);
    return p;
  }

  private CUdeviceptr upload(float[] host) {
    CUdeviceptr p = alloc((long) host.length * Sizeof.FLOAT);
    cuMemcpyHtoD(p, Pointer.to(host), (long) host.length * Sizeof.FLOAT);
    return p;
  }

  private CUdeviceptr upload(WeightMatrix m) {
    float[] host = new float[m.rows() * m.cols()];
    for (int r = 0; r < m.rows(); r++) {
      m.decodeRow(r, host, r * m.cols());
    }
    return upload(host);
  }

  private CUdeviceptr[] upload(WeightMatrix[] ms) {
    CUdeviceptr[] out = new CUdeviceptr[ms.length];
    for (int i = 0; i < ms.length; i++) {
      out[i] = upload(ms[i]);
    }
    return out;
  }

  private CUdeviceptr[] upload(float[][] vs) {
    CUdeviceptr[] out = new CUdeviceptr[vs.length];
    for (int i = 0; i < vs.length; i++) {
      out[i] = upload(vs[i]);
    }
    return out;
  }

  private DeviceWeights upload(LlamaWeights lw) {
    CUdeviceptr emb = upload(lw.tokenEmbedding());
    CUdeviceptr cls = lw.classifier() == lw.tokenEmbedding() ? emb : upload(lw.classifier());
    return new DeviceWeights(
        emb,
        upload(lw.rmsAtt()),
        upload(lw.wq()),
        upload(lw.wk()),
        upload(lw.wv()),
        upload(lw.wo()),
        upload(lw.rmsFfn()),
        upload(lw.w1()),
        upload(lw.w2()),
        upload(lw.w3()),
        upload(lw.rmsFinal()),
        cls);
  }

  private void ensureCapacity(int tokens) {
    if (tokens <= capacity) {
      return;
    }
    int n = Math.max(tokens, capacity * 2);
    for (CUdeviceptr p : new CUdeviceptr[] {x, xb, q, k, v, att, hb, hb2, last}) {
      if (p != null) {
        cuMemFree(p);
        allocations.remove(p);
      }
    }
    long f = Sizeof.FLOAT;
    x = alloc(n * c.dim() * f);
    xb = alloc(n * c.dim() * f);
    q = alloc(n * c.dim() * f);
    k = alloc(n * c.kvDim() * f);
    v = alloc(n * c.kvDim() * f);
    att = alloc(n * c.dim() * f);
    hb = alloc((long) n * c.hiddenDim() * f);
    hb2 = alloc((long) n * c.hiddenDim() * f);
    last = alloc(n * c.dim() * f);
    capacity = n;
  }

  @Override
  public ModelConfig config() {
    return c;
  }

  @Override
  public String backendName() {
    return "cuda";
  }

  @Override
  public void forward(ForwardBatch batch, float[] logits) {
    cuCtxSetCurrent(context);
    int n = batch.numTokens();
    int b = batch.batchSize();
    ensureCapacity(n);
    uploadStep(batch);
    int dim = c.dim();
    int kvDim = c.kvDim();
    int hidden = c.hiddenDim();
    CUdeviceptr ids = at(stepInts, inputs.idsOffset());
    CUdeviceptr positions = at(stepInts, inputs.positionsOffset());
    CUdeviceptr locs = at(stepInts, inputs.locsOffset());
    CUdeviceptr rows = at(stepInts, inputs.rowsOffset());
    CUdeviceptr lastIdx = at(stepInts, inputs.lastTokenOffset());
    int maxCtx = 0;
    for (int t = 0; t < n; t++) {
      maxCtx = Math.max(maxCtx, batch.position(t) + 1);
    }
    launch(
        embedding,
        n,
        1,
        THREADS,
        1,
        0,
        Pointer.to(x),
        Pointer.to(w.embedding()),
        Pointer.to(ids),
        ints(dim));
    for (int l = 0; l < c.layers(); l++) {
      launch(
          rmsnorm,
          n,
          1,
          THREADS,
          1,
          0,
          Pointer.to(xb),
          Pointer.to(x),
          Pointer.to(w.rmsAtt()[l]),
          Pointer.to(new CUdeviceptr()),
          ints(dim),
          floats(c.normEps()));
      gemm(q, w.wq()[l], xb, dim, dim, n);
      gemm(k, w.wk()[l], xb, kvDim, dim, n);
      gemm(v, w.wv()[l], xb, kvDim, dim, n);
      launch(
          rope,
          n,
          1,
          128,
          1,
          0,
          Pointer.to(q),
          Pointer.to(positions),
          Pointer.to(cos),
          Pointer.to(sin),
          ints(dim),
          ints(c.headDim()));
      launch(
          rope,
          n,
          1,
          128,
          1,
          0,
          Pointer.to(k),
          Pointer.to(positions),
          Pointer.to(cos),
          Pointer.to(sin),
          ints(kvDim),
          ints(c.headDim()));
      launch(
          kvStore,
          n,
          1,
          THREADS,
          1,
          0,
          Pointer.to(kPool[l]),
          Pointer.to(vPool[l]),
          Pointer.to(k),
          Pointer.to(v),
          Pointer.to(locs),
          ints(kvDim));
      launch(
          attention,
          c.heads(),
          n,
          THREADS,
          1,
          maxCtx * Sizeof.FLOAT,
          Pointer.to(att),
          Pointer.to(q),
          Pointer.to(kPool[l]),
          Pointer.to(vPool[l]),
          Pointer.to(reqTable),
          Pointer.to(rows),
          Pointer.to(positions),
          ints(reqToToken.maxContextLen()),
          ints(c.heads()),
          ints(c.kvHeads()),
          ints(c.headDim()));
      gemm(xb, w.wo()[l], att, dim, dim, n);
      elementwise(add, x, xb, (long) n * dim);
      launch(
          rmsnorm,
          n,
          1,
          THREADS,
          1,
          0,
          Pointer.to(xb),
          Pointer.to(x),
          Pointer.to(w.rmsFfn()[l]),
          Pointer.to(new CUdeviceptr()),
          ints(dim),
          floats(c.normEps()));
      gemm(hb, w.w1()[l], xb, hidden, dim, n);
      gemm(hb2, w.w3()[l], xb, hidden, dim, n);
      elementwise(swiglu, hb, hb2, (long) n * hidden);
      gemm(xb, w.w2()[l], hb, dim, hidden, n);
      elementwise(add, x, xb, (long) n * dim);
    }
    launch(
        rmsnorm,
        b,
        1,
        THREADS,
        1,
        0,
        Pointer.to(last),
        Pointer.to(x),
        Pointer.to(w.rmsFinal()),
        Pointer.to(lastIdx),
        ints(dim),
        floats(c.normEps()));
    long logitsBytes = (long) b * c.vocabSize() * Sizeof.FLOAT;
    if (logitsCapacity < b) {
      if (logitsDev != null) {
        cuMemFree(logitsDev);
        allocations.remove(logitsDev);
      }
      logitsDev = alloc(logitsBytes);
      logitsCapacity = b;
    }
    gemm(logitsDev, w.classifier(), last, c.vocabSize(), dim, b);
    cuCtxSynchronize();
    cuMemcpyDtoH(Pointer.to(logits), logitsDev, logitsBytes);
  }

  /** Step integers in one copy; request-table rows of the batch's requests up to their length. */
  private void uploadStep(ForwardBatch batch) {
    int[] packed = inputs.pack(batch);
    if (inputCapacity < inputs.length()) {
      if (stepInts != null) {
        cuMemFree(stepInts);
        allocations.remove(stepInts);
      }
      inputCapacity = Math.max(inputs.length(), inputCapacity * 2);
      stepInts = alloc((long) inputCapacity * Sizeof.INT);
    }
    cuMemcpyHtoD(stepInts, Pointer.to(packed), (long) inputs.length() * Sizeof.INT);
    int maxCtx = reqToToken.maxContextLen();
    int[] table = reqToToken.table();
    for (int r = 0; r < batch.batchSize(); r++) {
      int slot = batch.reqPoolIdx(r);
      int len = batch.prefixLen(r) + batch.extendLen(r);
      long off = (long) slot * maxCtx;
      cuMemcpyHtoD(
          at(reqTable, off),
          Pointer.to(table).withByteOffset(off * Sizeof.INT),
          (long) len * Sizeof.INT);
    }
  }

  private static CUdeviceptr at(CUdeviceptr base, long ints) {
    return base.withByteOffset(ints * Sizeof.INT);
  }

  private void gemm(
      CUdeviceptr out, CUdeviceptr weights, CUdeviceptr in, int rows, int cols, int tokens) {
    launch(
        matmul,
        (rows + 31) / 32,
        (tokens + 7) / 8,
        32,
        8,
        0,
        Pointer.to(out),
        Pointer.to(weights),
        Pointer.to(in),
        ints(rows),
        ints(cols),
        ints(tokens));
  }

  private void elementwise(CUfunction f, CUdeviceptr a, CUdeviceptr b, long n) {
    int blocks = (int) Math.min(4096, (n + THREADS - 1) / THREADS);
    launch(f, blocks, 1, THREADS, 1, 0, Pointer.to(a), Pointer.to(b), Pointer.to(new long[] {n}));
  }

  private static Pointer ints(int v) {
    return Pointer.to(new int[] {v});
  }

  private static Pointer floats(float v) {
    return Pointer.to(new float[] {v});
  }

  private static void launch(
      CUfunction f, int gx, int gy, int bx, int by, int shared, Pointer... args) {
    cuLaunchKernel(f, gx, gy, 1, bx, by, 1, shared, null, Pointer.to(args), null);
  }

  @Override
  public void close() {
    cuCtxSetCurrent(context);
    for (CUdeviceptr p : allocations) {
      cuMemFree(p);
    }
    allocations.clear();
    cuCtxDestroy(context);
  }
}
