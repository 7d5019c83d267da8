package io.flinfer.runtime.cuda;

import static jcuda.driver.JCudaDriver.cuGraphDestroy;
import static jcuda.driver.JCudaDriver.cuGraphExecDestroy;
import static jcuda.driver.JCudaDriver.cuGraphInstantiate;
import static jcuda.driver.JCudaDriver.cuGraphLaunch;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuStreamBeginCapture;
import static jcuda.driver.JCudaDriver.cuStreamEndCapture;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.DeviceMemory;
import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.Logits;
import io.flinfer.runtime.forward.ModelRunner;
import io.flinfer.runtime.kernel.RopeTable;
import io.flinfer.runtime.model.GatedActivation;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.RopeConfig;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUstreamCaptureMode;

/**
 * The CUDA backend: the forward pass of {@link io.flinfer.runtime.forward.CpuModelRunner} on one
 * device, through JCuda's driver API and the kernels packaged in the jar. It owns the weights (in
 * 16-bit, see {@link DeviceWeights}), the KV cache and a mirror of the request-to-token table in
 * device memory, and the activation buffers.
 *
 * <p>A step uploads its integers once ({@link StepPlan}) from pinned memory; the kernels read every
 * size from there, so a pure decode step replays a CUDA graph captured for its batch-size bucket.
 * The request table is updated on the device from {@code out_cache_loc}, plus the few entries the
 * host changed below a prefix. The logits stay on the device except where a request needs its full
 * row: greedy requests get their token, its logit and log Z from a summary kernel, and requests the
 * batch lets the backend draw for get their token drawn on the device ({@code sample_rows}).
 */
public final class CudaModelRunner implements ModelRunner {
  /** Batch sizes that get a captured decode graph (a batch uses the smallest that holds it). */
  static final int[] BUCKETS = {
    1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 80, 96, 128, 160, 192, 224, 256, 320, 384, 448, 512
  };

  /**
   * Floats a request's summary holds: its top token, the top logit, log Z, the drawn token and its
   * log-probability.
   */
  private static final int SUMMARY_FLOATS = 5;

  /** Bytes for flash-decoding's per-split states. */
  private static final long PARTIAL_BYTES = 256L << 20;

  private static final int INITIAL_TOKENS = 512;

  /** Threads of an RMS norm's block (one row): its reduction tree, the same for every batch. */
  private static final int NORM_THREADS = 1024;

  /** Warps of a q/k/v post block, each taking one head (the kernels' QKV_WARPS). */
  static final int QKV_WARPS = 4;

  private final ModelConfig c;
  private final ReqToTokenPool reqToToken;
  private final CudaContext cu;
  private final DeviceDtype dtype;
  private final DeviceWeights w;
  private final GemmShape qkvShape;
  private final GemmShape oShape;
  private final GemmShape upShape;
  private final GemmShape downShape;
  private final GemmShape lmShape;
  private final int dimP;
  private final int qDimP;
  private final int hiddenP;
  private final int partialCapacity;
  private final StepPlan plan;
  private final CUdeviceptr reqTable;
  private final CUdeviceptr cos;
  private final CUdeviceptr sin;
  // The windowed layers' rope tables (Gemma 3's local layers), or the model's.
  private final CUdeviceptr windowCos;
  private final CUdeviceptr windowSin;
  private final int maxCtx;
  private final int requestCapacity;
  private final Map<Integer, CUgraphExec> graphs = new HashMap<>();
  private final boolean useGraphs;
  private final KernelTimes times;

  /**
   * The matrix-product kernel for steps of one to eight tokens ({@code flinfer.cuda.gemv}): by
   * default 256-column k tiles, which decoded Llama-3.2-1B's shape 8% faster at batch 1 on an H100
   * than 64-column ones (Llama-3.1-8B's alike).
   */
  private final String fewTokenVariant = fewTokenVariant();

  /**
   * The matrix-product kernel for steps of more than 64 tokens ({@code flinfer.cuda.gemm}): by
   * default eight warps over 64-column k tiles, which prefilled Llama-3.1-8B's shape 20% faster on
   * an H100 than four warps over 32-column ones (Llama-3.2-1B's 17%), and faster than 256-token
   * tiles.
   */
  private final String largeVariant = largeVariant();

  /**
   * Whether a split product's last split adds the partial sums itself (the same order, so the same
   * bits) instead of a separate reduction kernel ({@code flinfer.cuda.fusedReduce}). Off by
   * default: on an H100 it was no faster at batch 1 and 10% slower at batch 16.
   */
  private final boolean fusedReduce = Boolean.getBoolean("flinfer.cuda.fusedReduce");

  /**
   * Whether the device draws the tokens of requests that allow it ({@code flinfer.cuda.draw}, on
   * unless "false"); off, their full rows are copied back and drawn by the host.
   */
  private final boolean drawOnDevice = !"false".equals(System.getProperty("flinfer.cuda.draw"));

  /**
   * Whether kernels that follow one another are fused ({@code flinfer.cuda.fuse}, on unless
   * "false"): a split product's finish with the RMS norm after it, the q/k/v product's finish with
   * rope and the KV write, SwiGLU with the gate/up product. Each fused kernel computes what the
   * separate ones do in the same order, so a token's bits do not depend on it.
   */
  private final Fusions fusions;

  private CUdeviceptr kCache;
  private CUdeviceptr vCache;
  private KvStoreType kvType;
  private long layerKvElements;

  // Activation buffers, for tokenCapacity tokens and requestCapacity requests.
  private int tokenCapacity;
  private CUdeviceptr x, xn, qkv, qf, att, h, hn, splitWs, splitCounters, last, logits, summary;

  /** A product's output before its post norm joins it to the residual (Gemma 3), or null. */
  private CUdeviceptr ob;

  /** Each request's tempered probabilities while the device draws its token, or null. */
  private CUdeviceptr probs;

  private CUdeviceptr partM, partL, partAcc;
  private int stepCapacity;
  private CUdeviceptr stepDev;
  private Pointer stepHost;
  private IntBuffer stepInts;
  private Pointer summaryHost;
  private IntBuffer summaryInts;
  private FloatBuffer summaryFloats;
  private Pointer logitsHost;
  private FloatBuffer logitsFloats;
  private Launches launches;

  /**
   * Why this backend cannot serve a model of {@code c}'s description, if it cannot: a head width
   * without an attention kernel.
   */
  public static Optional<String> unsupported(ModelConfig c) {
    if (!AttentionKernels.supportsHeadDim(c.headDim())) {
      return Optional.of(
          "the cuda backend has no attention kernel for heads of " + c.headDim() + " values");
    }
    if (c.multipliers() != null) {
      return Optional.of(
          "the cuda backend does not take attention, residual and logit multipliers (Granite,"
              + " the 27B Gemma 2 and 3): serve it on the cpu backend");
    }
    if (c.softCaps() != null) {
      return Optional.of(
          "the cuda backend does not soft-cap attention scores or logits (Gemma 2): serve it on the"
              + " cpu backend");
    }
    return Optional.empty();
  }

  public CudaModelRunner(LlamaModel model, ReqToTokenPool reqToToken, int threads) {
    this(model, reqToToken, threads, 0);
  }

  /** On device {@code deviceIndex} (the one Flink's external resource framework assigned). */
  public CudaModelRunner(
      LlamaModel model, ReqToTokenPool reqToToken, int threads, int deviceIndex) {
    CudaProbe.unavailableReason()
        .ifPresent(
            reason -> {
              throw new IllegalStateException("CUDA backend unavailable: " + reason);
            });
    this.c = model.config();
    this.reqToToken = reqToToken;
    this.maxCtx = reqToToken.maxContextLen();
    this.requestCapacity = reqToToken.size();
    int hd = c.headDim();
    unsupported(c)
        .ifPresent(
            why -> {
              throw new IllegalArgumentException(why);
            });
    this.cu = new CudaContext(deviceIndex);
    try {
      qkvShape = GemmShape.of(c.qDim() + 2 * c.kvDim(), c.dim());
      oShape = GemmShape.of(c.dim(), c.qDim());
      upShape = GemmShape.of(2 * c.hiddenDim(), c.dim());
      downShape = GemmShape.of(c.dim(), c.hiddenDim());
      lmShape = GemmShape.of(c.vocabSize(), c.dim());
      fusions =
          Fusions.choose(
              !"false".equals(System.getProperty("flinfer.cuda.fuse")),
              fusedReduce,
              c,
              qkvShape,
              oShape,
              upShape,
              downShape);
      this.dtype = DeviceDtype.forModel(model.weights());
      this.w = new DeviceWeights(cu, dtype, c, model.weights(), fusions.swigluInProduct());
      dimP = GemmShape.padded(c.dim());
      qDimP = GemmShape.padded(c.qDim());
      hiddenP = GemmShape.padded(c.hiddenDim());
      long partialBytes = (long) c.heads() * (hd + 2) * Sizeof.FLOAT;
      partialCapacity = (int) Math.max(1, PARTIAL_BYTES / partialBytes);
      plan = new StepPlan(c.heads(), c.kvHeads(), AttentionKernels.manyRows(hd), partialCapacity);
      reqTable = cu.alloc((long) requestCapacity * maxCtx * Sizeof.INT);
      RopeTable rope = RopeTable.of(hd, Math.max(c.contextLength(), maxCtx), c.rope());
      cos = upload(rope.cos());
      sin = upload(rope.sin());
      if (c.slidingWindow() != null) {
        RopeTable local =
            RopeTable.of(hd, Math.max(c.contextLength(), maxCtx), c.slidingWindow().rope());
        windowCos = upload(local.cos());
        windowSin = upload(local.sin());
      } else {
        windowCos = cos;
        windowSin = sin;
      }
      times = KernelTimes.enabled() ? new KernelTimes(cu.stream()) : null;
      useGraphs = times == null && !"false".equals(System.getProperty("flinfer.cuda.graphs"));
      for (String v : GemmShape.VARIANTS) {
        cu.allowSharedMemory(
            cu.function("gemm_" + v + "_" + dtype.suffix()), GemmShape.sharedBytes(v));
      }
      for (KvStoreType kv : kvStoreTypes()) {
        for (int rows : new int[] {StepPlan.FEW_ROWS, AttentionKernels.manyRows(hd)}) {
          cu.allowSharedMemory(
              cu.function(AttentionKernels.name(dtype.attentionType(kv), hd, rows)),
              AttentionKernels.sharedBytes(hd, rows));
        }
      }
      allocateWorkspace(INITIAL_TOKENS);
    } catch (RuntimeException | Error e) {
      cu.close();
      throw e;
    }
  }

  private CUdeviceptr upload(float[] v) {
    CUdeviceptr p = cu.alloc((long) v.length * Sizeof.FLOAT);
    cuMemcpyHtoD(p, Pointer.to(v), (long) v.length * Sizeof.FLOAT);
    return p;
  }

  @Override
  public ModelConfig config() {
    return c;
  }

  @Override
  public String backendName() {
    return "cuda";
  }

  /** Bytes of weights on the device. */
  public long weightBytes() {
    return w.bytes;
  }

  @Override
  public long weightBytesPerStep() {
    long b = 0;
    for (GemmShape g : new GemmShape[] {qkvShape, oShape, upShape, downShape}) {
      b += (long) g.rows() * g.paddedCols() * Sizeof.SHORT;
    }
    return b * c.layers() + (long) lmShape.rows() * lmShape.paddedCols() * Sizeof.SHORT;
  }

  @Override
  public DeviceMemory memory() {
    cu.makeCurrent();
    return cu.memory();
  }

  /** As SGLang on a large device: what is left holds activations, graphs and the JIT's needs. */
  @Override
  public double defaultMemFractionStatic() {
    return 0.85;
  }

  @Override
  public List<KvStoreType> kvStoreTypes() {
    return List.of(dtype.kvType(), KvStoreType.FP8_E4M3, KvStoreType.FP8_E5M2);
  }

  @Override
  public void allocateKv(int size, int pageSize, KvStoreType type) {
    if (kCache != null) {
      throw new IllegalStateException("the KV cache is already allocated");
    }
    if (!kvStoreTypes().contains(type)) {
      throw new IllegalArgumentException(
          "the cuda backend keeps this model's KV cache in "
              + kvStoreTypes()
              + " (its weights' 16-bit type or FP8), not "
              + type);
    }
    cu.makeCurrent();
    kvType = type;
    layerKvElements = ((long) size + pageSize) * c.kvDim();
    long bytes = layerKvElements * c.layers() * type.bytes();
    kCache = cu.alloc(bytes);
    vCache = cu.alloc(bytes);
    rebuildLaunches();
  }

  // ---- buffers ----

  private void allocateWorkspace(int tokens) {
    for (CUdeviceptr p :
        new CUdeviceptr[] {
          x, xn, qkv, qf, att, h, hn, splitWs, splitCounters, last, logits, summary, ob, probs
        }) {
      cu.free(p);
    }
    cu.free(partM);
    cu.free(partL);
    cu.free(partAcc);
    long f = Sizeof.FLOAT;
    long s = Sizeof.SHORT;
    int b = requestCapacity;
    x = cu.alloc(tokens * (long) c.dim() * f);
    ob = c.postNorms() ? cu.alloc(tokens * (long) c.dim() * f) : null;
    xn = cu.alloc(tokens * (long) dimP * s);
    // A product whose finish or SwiGLU a later kernel does never writes its fp32 output: the q/k/v
    // and gate/up buffers (the largest of a step: 0.9 GB for 8B's gate/up at 8K tokens) exist only
    // where the separate kernels run.
    qkv = fusions.qkvFinishInPost() ? null : cu.alloc(tokens * (long) qkvShape.rows() * f);
    qf = cu.alloc(tokens * (long) c.qDim() * f);
    att = cu.alloc(tokens * (long) qDimP * s);
    h = fusions.swigluInProduct() ? null : cu.alloc(tokens * (long) upShape.rows() * f);
    hn = cu.alloc(tokens * (long) hiddenP * s);
    long ws = 0;
    for (GemmShape g : new GemmShape[] {qkvShape, oShape, upShape, downShape}) {
      ws = Math.max(ws, g.workspaceFloats(tokens));
    }
    ws = Math.max(ws, lmShape.workspaceFloats(b));
    splitWs = cu.alloc(ws * f);
    if (fusedReduce) {
      long tiles = 0;
      for (GemmShape g : new GemmShape[] {qkvShape, oShape, upShape, downShape, lmShape}) {
        tiles = Math.max(tiles, g.splitTiles(g == lmShape ? b : tokens));
      }
      splitCounters = cu.alloc(tiles * Sizeof.INT);
    }
    last = cu.alloc(b * (long) dimP * s);
    logits = cu.alloc(b * (long) c.vocabSize() * f);
    probs = drawOnDevice ? cu.alloc(b * (long) c.vocabSize() * f) : null;
    summary = cu.alloc(SUMMARY_FLOATS * (long) b * f);
    partM = cu.alloc((long) partialCapacity * c.heads() * f);
    partL = cu.alloc((long) partialCapacity * c.heads() * f);
    partAcc = cu.alloc((long) partialCapacity * c.heads() * c.headDim() * f);
    if (summaryHost == null) {
      summaryHost = cu.allocHost(SUMMARY_FLOATS * (long) b * f);
      java.nio.ByteBuffer bb = summaryHost.getByteBuffer(0, SUMMARY_FLOATS * (long) b * f);
      summaryInts = bb.order(ByteOrder.nativeOrder()).asIntBuffer();
      summaryFloats = bb.order(ByteOrder.nativeOrder()).asFloatBuffer();
    }
    tokenCapacity = tokens;
    ensureStepCapacity(StepPlan.HEADER_INTS + 8 * tokens + 64 * b);
    rebuildLaunches();
  }

  private void ensureStepCapacity(int ints) {
    if (ints <= stepCapacity) {
      return;
    }
    cu.free(stepDev);
    cu.freeHost(stepHost);
    stepCapacity = Math.max(ints, 2 * stepCapacity);
    stepDev = cu.alloc((long) stepCapacity * Sizeof.INT);
    stepHost = cu.allocHost((long) stepCapacity * Sizeof.INT);
    stepInts =
        stepHost
            .getByteBuffer(0, (long) stepCapacity * Sizeof.INT)
            .order(ByteOrder.nativeOrder())
            .asIntBuffer();
    rebuildLaunches();
  }

  private void rebuildLaunches() {
    for (CUgraphExec g : graphs.values()) {
      cuGraphExecDestroy(g);
    }
    graphs.clear();
    launches = kCache == null || stepDev == null ? null : new Launches();
  }

  // ---- the step ----

  @Override
  public void forward(ForwardBatch batch, Logits out) {
    if (kCache == null) {
      throw new IllegalStateException("allocateKv must be called before forward");
    }
    int b = batch.batchSize();
    for (int r = 0; r < b; r++) {
      if (batch.scoredPositions(r) > 0) {
        throw new IllegalArgumentException("the cuda backend does not score positions");
      }
    }
    cu.makeCurrent();
    int n = batch.numTokens();
    for (int t = 0; t < n; t++) {
      if (batch.position(t) >= maxCtx) {
        throw new IllegalArgumentException(
            "position " + batch.position(t) + " is beyond the context length");
      }
    }
    boolean decode = batch.isDecode() && useGraphs;
    int bucket = decode ? bucket(b) : n;
    if (Math.max(n, bucket) > tokenCapacity) {
      allocateWorkspace(Math.max(Math.max(n, bucket), 2 * tokenCapacity));
    }
    int[] packed = plan.pack(batch, reqToToken);
    ensureStepCapacity(plan.length());
    stepInts.position(0);
    stepInts.put(packed, 0, plan.length());
    cuMemcpyHtoDAsync(stepDev, stepHost, (long) plan.length() * Sizeof.INT, cu.stream());
    if (decode) {
      CUgraphExec g = graphs.get(bucket);
      if (g == null) {
        g = capture(bucket);
        graphs.put(bucket, g);
      }
      cuGraphLaunch(g, cu.stream());
    } else {
      launches.enqueue(n, b, false);
    }
    if (drawOnDevice && plan.draws() > 0) {
      launches.draw(plan.draws());
    }
    copyBack(batch, out);
    if (times != null) {
      times.collect();
    }
    for (int r = 0; r < b; r++) {
      reqToToken.markSynced(batch.reqPoolIdx(r));
    }
  }

  /** The one-to-eight-token kernel and split-K finish this runner launches (for tests). */
  String productKernels() {
    return fewTokenVariant
        + ", "
        + largeVariant
        + (fusedReduce ? ", fused finish" : ", separate finish");
  }

  /** The kernel fusions this runner launches (for tests). */
  Fusions fusions() {
    return fusions;
  }

  static String fewTokenVariant() {
    return variant("flinfer.cuda.gemv", "s8k256", GemmShape.FEW_TOKEN_VARIANTS);
  }

  static String largeVariant() {
    return variant("flinfer.cuda.gemm", "l8k64", GemmShape.LARGE_VARIANTS);
  }

  private static String variant(String property, String byDefault, List<String> variants) {
    String v = System.getProperty(property, byDefault);
    if (!variants.contains(v)) {
      throw new IllegalArgumentException(property + " must be one of " + variants + ", not " + v);
    }
    return v;
  }

  static int bucket(int b) {
    for (int k : BUCKETS) {
      if (k >= b) {
        return k;
      }
    }
    return b;
  }

  private CUgraphExec capture(int bucket) {
    CUgraph graph = new CUgraph();
    cuStreamBeginCapture(cu.stream(), CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    launches.enqueue(bucket, bucket, true);
    cuStreamEndCapture(cu.stream(), graph);
    CUgraphExec exec = new CUgraphExec();
    cuGraphInstantiate(exec, graph, 0);
    cuGraphDestroy(graph);
    return exec;
  }

  /** Whether request r's full row is copied back: it is neither greedy nor drawn here. */
  private boolean needsRow(ForwardBatch batch, int r) {
    return !batch.isGreedyOnly(r) && !(drawOnDevice && batch.isDrawnOnBackend(r));
  }

  /**
   * The greedy summary of every request, the tokens drawn on the device, and the full rows of the
   * requests that need them.
   */
  private void copyBack(ForwardBatch batch, Logits out) {
    int b = batch.batchSize();
    int vocab = c.vocabSize();
    long f = Sizeof.FLOAT;
    cuMemcpyDtoHAsync(
        summaryHost, summary, SUMMARY_FLOATS * (long) requestCapacity * f, cu.stream());
    int full = 0;
    for (int r = 0; r < b; r++) {
      if (needsRow(batch, r)) {
        full++;
      }
    }
    if (full > 0) {
      if (logitsHost == null) {
        logitsHost = cu.allocHost((long) requestCapacity * vocab * f);
        logitsFloats =
            logitsHost
                .getByteBuffer(0, (long) requestCapacity * vocab * f)
                .order(ByteOrder.nativeOrder())
                .asFloatBuffer();
      }
      int r = 0;
      while (r < b) {
        if (!needsRow(batch, r)) {
          r++;
          continue;
        }
        int end = r;
        while (end < b && needsRow(batch, end)) {
          end++;
        }
        long off = (long) r * vocab * f;
        cuMemcpyDtoHAsync(
            logitsHost.withByteOffset(off),
            logits.withByteOffset(off),
            (long) (end - r) * vocab * f,
            cu.stream());
        r = end;
      }
    }
    cuStreamSynchronize(cu.stream());
    out.reset(b);
    for (int r = 0; r < b; r++) {
      out.setGreedy(
          r,
          summaryInts.get(r),
          summaryFloats.get(requestCapacity + r),
          summaryFloats.get(2 * requestCapacity + r));
      if (drawOnDevice && batch.isDrawnOnBackend(r)) {
        out.setDrawn(
            r,
            summaryInts.get(3 * requestCapacity + r),
            summaryFloats.get(4 * requestCapacity + r));
      } else if (!batch.isGreedyOnly(r)) {
        logitsFloats.position(r * vocab);
        logitsFloats.get(out.rows(), r * vocab, vocab);
        out.markFull(r);
      }
    }
  }

  @Override
  public void close() {
    cu.makeCurrent();
    if (times != null) {
      System.err.print(times.report());
      times.close();
    }
    for (CUgraphExec g : graphs.values()) {
      cuGraphExecDestroy(g);
    }
    graphs.clear();
    cu.close();
  }

  // ---- launches ----

  /** Every kernel launch of a step, with its argument block built once. */
  private final class Launches {
    private final int layers = c.layers();
    private final String t = dtype.suffix();
    private final Pointer update;
    private final Pointer embed;
    private final Pointer[] normAttn = new Pointer[layers];
    private final Gemm[] qkvGemm = new Gemm[layers];
    private final Pointer[] qkvPost = new Pointer[layers];
    private final Pointer[] attFew = new Pointer[layers];
    private final Pointer[] attMany = new Pointer[layers];
    private final Pointer combine;
    private final Gemm[] oGemm = new Gemm[layers];
    private final Pointer[] normFfn = new Pointer[layers];
    private final Pointer[] reduceNormAttn = new Pointer[layers];
    private final Pointer[] reduceNormFfn = new Pointer[layers];
    private final Pointer[] postAttn = new Pointer[layers];
    private final Pointer[] postFfn = new Pointer[layers];
    private final Gemm[] upGemm = new Gemm[layers];
    private final Pointer glu;
    private final Gemm[] downGemm = new Gemm[layers];
    private final Pointer normLast;
    private final Gemm lmGemm;
    private final Pointer greedy;
    private final Pointer drawArgs;
    private final int hd = c.headDim();
    private final int manyRows = AttentionKernels.manyRows(hd);
    private final CUfunction attFewFn =
        cu.function(AttentionKernels.name(dtype.attentionType(kvType), hd, StepPlan.FEW_ROWS));
    private final CUfunction attManyFn =
        cu.function(AttentionKernels.name(dtype.attentionType(kvType), hd, manyRows));
    private final CUfunction updateFn = cu.function("update_req_to_token");
    private final CUfunction embedFn = cu.function("embed_" + t);
    private final CUfunction normFn = cu.function("rmsnorm_" + t);
    private final CUfunction reduceNormFn = cu.function("reduce_rmsnorm_" + t);
    private final CUfunction qkvPostFn = cu.function("qkv_post_" + dtype.cacheType(kvType));
    private final CUfunction combineFn = cu.function("attention_combine_" + t);
    private final String gluRole = c.activation() == GatedActivation.SILU ? "swiglu" : "geglu";
    private final CUfunction gluFn = cu.function(gluRole + "_" + t);
    private final CUfunction postNormFn = c.postNorms() ? cu.function("post_norm_add") : null;
    private final CUfunction greedyFn = cu.function("greedy_summary");
    private final CUfunction drawFn = cu.function("sample_rows");
    private final CUfunction reduceFn = cu.function("gemm_reduce");
    private final Map<String, CUfunction> gemmFns = new HashMap<>();
    private final boolean fewRowsDecode = c.groupSize() <= StepPlan.FEW_ROWS;

    /** Blocks of a token's q/k/v post kernel: a warp per q, k and v head. */
    private final int qkvPostGroups = (c.heads() + 2 * c.kvHeads() + QKV_WARPS - 1) / QKV_WARPS;

    /**
     * Slices of a token's gated-activation row, each a block of 256 threads with four values
     * apiece.
     */
    private final int gluSlices = (c.hiddenDim() + 1023) / 1024;

    Launches() {
      for (String v : GemmShape.VARIANTS) {
        gemmFns.put(v, cu.function("gemm_" + v + "_" + t));
      }
      float eps = c.normEps();
      update = KernelArgs.of(stepDev, reqTable, maxCtx);
      embed = KernelArgs.of(stepDev, x, w.embedding, c.dim(), dimP, c.embeddingScale());
      float scale = (float) (1.0 / Math.sqrt(hd));
      int neox = c.rope().style() == RopeConfig.Style.NEOX ? 1 : 0;
      for (int l = 0; l < layers; l++) {
        CUdeviceptr kl = kCache.withByteOffset(l * layerKvElements * kvType.bytes());
        CUdeviceptr vl = vCache.withByteOffset(l * layerKvElements * kvType.bytes());
        normAttn[l] = KernelArgs.of(stepDev, xn, dimP, x, w.attnNorm[l], c.dim(), eps, 0);
        qkvGemm[l] =
            new Gemm("qkv", qkvShape, StepPlan.H_N, w.qkv[l], xn, qkv, w.qkvBias[l], false);
        boolean partials = fusions.qkvFinishInPost();
        qkvPost[l] =
            KernelArgs.of(
                stepDev,
                partials ? splitWs : qkv,
                partials ? qkvShape.splits() : 1,
                partials ? w.qkvBias[l] : null,
                qf,
                kl,
                vl,
                w.qNorm[l],
                w.kNorm[l],
                c.windowed(l) ? windowCos : cos,
                c.windowed(l) ? windowSin : sin,
                c.heads(),
                c.kvHeads(),
                hd,
                neox,
                eps);
        int window = c.windowed(l) ? c.slidingWindow().positions() : 0;
        attFew[l] = attentionArgs(kl, vl, scale, 0, window);
        attMany[l] = attentionArgs(kl, vl, scale, 1, window);
        // With post norms a product's output is normalised before it joins the residual.
        boolean post = c.postNorms();
        oGemm[l] = new Gemm("o", oShape, StepPlan.H_N, w.wo[l], att, post ? ob : x, null, !post);
        if (post) {
          postAttn[l] = KernelArgs.of(stepDev, x, ob, w.postAttNorm[l], c.dim(), eps);
          postFfn[l] = KernelArgs.of(stepDev, x, ob, w.postFfnNorm[l], c.dim(), eps);
        }
        normFfn[l] = KernelArgs.of(stepDev, xn, dimP, x, w.ffnNorm[l], c.dim(), eps, 0);
        reduceNormFfn[l] = reduceNormArgs(oShape, w.ffnNorm[l], eps);
        upGemm[l] =
            fusions.swigluInProduct()
                ? new Gemm(
                    "gate_up", upShape, StepPlan.H_N, w.gateUp[l], xn, h, null, false, hn, hiddenP)
                : new Gemm("gate_up", upShape, StepPlan.H_N, w.gateUp[l], xn, h, null, false);
        downGemm[l] =
            new Gemm("down", downShape, StepPlan.H_N, w.down[l], hn, post ? ob : x, null, !post);
        if (l + 1 < layers) {
          reduceNormAttn[l + 1] = reduceNormArgs(downShape, w.attnNorm[l + 1], eps);
        }
      }
      combine = KernelArgs.of(stepDev, partM, partL, partAcc, att, qDimP, c.heads(), hd);
      glu = KernelArgs.of(stepDev, hn, hiddenP, h, c.hiddenDim());
      normLast = KernelArgs.of(stepDev, last, dimP, x, w.finalNorm, c.dim(), eps, 1);
      lmGemm = new Gemm("lm_head", lmShape, StepPlan.H_B, w.classifier, last, logits, null, false);
      CUdeviceptr top = summary;
      CUdeviceptr topLogit = summary.withByteOffset((long) requestCapacity * Sizeof.FLOAT);
      CUdeviceptr logZ = summary.withByteOffset(2L * requestCapacity * Sizeof.FLOAT);
      greedy = KernelArgs.of(stepDev, logits, c.vocabSize(), top, topLogit, logZ);
      CUdeviceptr drawn = summary.withByteOffset(3L * requestCapacity * Sizeof.FLOAT);
      CUdeviceptr drawnLogprob = summary.withByteOffset(4L * requestCapacity * Sizeof.FLOAT);
      drawArgs =
          probs == null
              ? null
              : KernelArgs.of(
                  stepDev, logits, c.vocabSize(), topLogit, logZ, top, probs, drawn, drawnLogprob);
    }

    /**
     * The tokens of the step's {@code count} drawn requests, after the greedy summary (its top
     * logit and log Z): a block each.
     */
    void draw(int count) {
      launch("draw", drawFn, count, 1024, 0, drawArgs);
    }

    /** x += the product's partial sums, then xn = rmsnorm(x) with {@code weight}. */
    private Pointer reduceNormArgs(GemmShape shape, CUdeviceptr weight, float eps) {
      return KernelArgs.of(stepDev, splitWs, shape.splits(), x, xn, dimP, weight, c.dim(), eps);
    }

    private Pointer attentionArgs(
        CUdeviceptr kl, CUdeviceptr vl, float scale, int list, int window) {
      return KernelArgs.of(
          stepDev,
          qf,
          kl,
          vl,
          reqTable,
          maxCtx,
          att,
          qDimP,
          partM,
          partL,
          partAcc,
          c.heads(),
          c.kvHeads(),
          scale,
          list,
          window);
    }

    /**
     * Enqueues a step of {@code n} tokens and {@code b} requests (in a graph: the bucket's sizes,
     * the kernels reading the true ones from the step buffer).
     */
    void enqueue(int n, int b, boolean graph) {
      String v = fewTokens(GemmShape.variant(n));
      launch("update_req_to_token", updateFn, 32, 256, 0, update);
      launch("embed", embedFn, n, 128, 0, embed);
      int sms = cu.multiprocessors();
      int decodeGrid = StepPlan.graphDecodeGrid(n, c.kvHeads(), sms);
      int few = graph ? (fewRowsDecode ? decodeGrid : 0) : plan.itemsFewRows();
      int many = graph ? (fewRowsDecode ? 0 : decodeGrid) : plan.itemsManyRows();
      int combines = graph ? n * c.heads() : plan.combines() * c.heads();
      boolean normDone = false;
      for (int l = 0; l < layers; l++) {
        if (!normDone) {
          launch("rmsnorm", normFn, n, NORM_THREADS, 0, normAttn[l]);
        }
        if (fusions.qkvFinishInPost()) {
          qkvGemm[l].enqueueProduct(v, n);
        } else {
          qkvGemm[l].enqueue(v, n);
        }
        launch("qkv_post", qkvPostFn, n, qkvPostGroups, 1, 32 * QKV_WARPS, 0, qkvPost[l]);
        if (few > 0) {
          launch(
              "attention_few_rows",
              attFewFn,
              Math.min(few, 8 * sms),
              128,
              AttentionKernels.sharedBytes(hd, StepPlan.FEW_ROWS),
              attFew[l]);
        }
        if (many > 0) {
          launch(
              "attention_many_rows",
              attManyFn,
              Math.min(many, 8 * sms),
              128,
              AttentionKernels.sharedBytes(hd, manyRows),
              attMany[l]);
        }
        if (combines > 0) {
          launch(
              "attention_combine",
              combineFn,
              Math.min(combines, 4 * sms),
              Math.min(128, (hd + 31) / 32 * 32),
              0,
              combine);
        }
        if (fusions.normInOFinish()) {
          oGemm[l].enqueueProduct(v, n);
          launch("reduce_rmsnorm", reduceNormFn, n, NORM_THREADS, 0, reduceNormFfn[l]);
        } else {
          oGemm[l].enqueue(v, n);
          if (c.postNorms()) {
            launch("post_norm_add", postNormFn, n, NORM_THREADS, 0, postAttn[l]);
          }
          launch("rmsnorm", normFn, n, NORM_THREADS, 0, normFfn[l]);
        }
        upGemm[l].enqueue(v, n);
        if (!fusions.swigluInProduct()) {
          launch(gluRole, gluFn, n, gluSlices, 1, 256, 0, glu);
        }
        normDone = fusions.normInDownFinish() && l + 1 < layers;
        if (normDone) {
          downGemm[l].enqueueProduct(v, n);
          launch("reduce_rmsnorm", reduceNormFn, n, NORM_THREADS, 0, reduceNormAttn[l + 1]);
        } else {
          downGemm[l].enqueue(v, n);
          if (c.postNorms()) {
            launch("post_norm_add", postNormFn, n, NORM_THREADS, 0, postFfn[l]);
          }
        }
      }
      launch("rmsnorm", normFn, b, NORM_THREADS, 0, normLast);
      lmGemm.enqueue(fewTokens(GemmShape.variant(b)), b);
      launch("greedy_summary", greedyFn, b, 1024, 0, greedy);
    }

    /** The configured one-to-eight-token and large variants in place of the default ones. */
    private String fewTokens(String variant) {
      return variant.equals("s8") ? fewTokenVariant : variant.equals("l") ? largeVariant : variant;
    }

    private void launch(
        String role, CUfunction f, int blocks, int threads, int shared, Pointer args) {
      launch(role, f, Math.max(1, blocks), 1, 1, threads, shared, args);
    }

    private void launch(
        String role, CUfunction f, int gx, int gy, int gz, int threads, int shared, Pointer args) {
      if (times != null) {
        times.before(role);
      }
      cuLaunchKernel(f, gx, gy, gz, threads, 1, 1, shared, cu.stream(), args, null);
      if (times != null) {
        times.after();
      }
    }

    /** One matrix product: its argument blocks, and its split-K reduction when split. */
    private final class Gemm {
      private final String role;
      private final GemmShape shape;
      private final Pointer args;
      private final Pointer reduceArgs;

      Gemm(
          String role,
          GemmShape shape,
          int nIndex,
          CUdeviceptr weights,
          CUdeviceptr in,
          CUdeviceptr out,
          CUdeviceptr bias,
          boolean accumulate) {
        this(role, shape, nIndex, weights, in, out, bias, accumulate, null, 0);
      }

      /** With {@code glu}: the epilogue writes SwiGLU's 16-bit result there (ld {@code gluLd}). */
      Gemm(
          String role,
          GemmShape shape,
          int nIndex,
          CUdeviceptr weights,
          CUdeviceptr in,
          CUdeviceptr out,
          CUdeviceptr bias,
          boolean accumulate,
          CUdeviceptr glu,
          int gluLd) {
        this.role = role;
        this.shape = shape;
        int acc = accumulate ? 1 : 0;
        args =
            KernelArgs.of(
                stepDev,
                nIndex,
                weights,
                in,
                out,
                splitWs,
                bias,
                splitCounters,
                shape.rows(),
                shape.paddedCols(),
                shape.rows(),
                shape.colsPerSplit(),
                shape.splits(),
                acc,
                glu,
                gluLd);
        reduceArgs =
            KernelArgs.of(
                stepDev,
                nIndex,
                splitWs,
                out,
                bias,
                shape.rows(),
                shape.rows(),
                shape.splits(),
                acc);
      }

      /** The product, then its split-K finish if it has splits. */
      void enqueue(String variant, int tokens) {
        enqueueProduct(variant, tokens);
        if (shape.splits() > 1 && !fusedReduce) {
          long total = (long) tokens * shape.rows();
          int blocks = (int) Math.min(4096, (total + 255) / 256);
          launch(
              times == null ? role : "gemm_reduce " + role,
              reduceFn,
              blocks,
              1,
              1,
              256,
              0,
              reduceArgs);
        }
      }

      /** The product alone: with splits, the partial sums stay in the workspace for the next. */
      void enqueueProduct(String variant, int tokens) {
        int gx = (shape.rows() + GemmShape.tileRows(variant) - 1) / GemmShape.tileRows(variant);
        int gy = (tokens + GemmShape.tileTokens(variant) - 1) / GemmShape.tileTokens(variant);
        launch(
            times == null ? role : "gemm " + role + " " + variant,
            gemmFns.get(variant),
            gx,
            gy,
            shape.splits(),
            GemmShape.threads(variant),
            GemmShape.sharedBytes(variant),
            args);
      }
    }
  }
}
