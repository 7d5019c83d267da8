package io.flinfer.runtime.forward;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvStoreType;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.kernel.ActivationRounding;
import io.flinfer.runtime.kernel.Attention;
import io.flinfer.runtime.kernel.GeluTable;
import io.flinfer.runtime.kernel.Ops;
import io.flinfer.runtime.kernel.QueryTileAttention;
import io.flinfer.runtime.kernel.RopeTable;
import io.flinfer.runtime.kernel.SoftCap;
import io.flinfer.runtime.kernel.TokenAttention;
import io.flinfer.runtime.kernel.WorkerPool;
import io.flinfer.runtime.model.GatedActivation;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.LlamaWeights;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.tensor.WeightMatrix;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The CPU backend: the Llama forward pass over a {@link ForwardBatch}, every linear layer one
 * matrix product over all the batch's tokens, attention through the request-to-token table. Owns
 * its activation buffers (grown, never shrunk) and its worker threads.
 */
public final class CpuModelRunner implements ModelRunner {
  /** Below this many multiply-adds a product runs on the calling thread alone. */
  private static final long PARALLEL_MACS = 1L << 17;

  private final ModelConfig c;
  private final LlamaWeights w;
  private KvPool kv;
  private final ReqToTokenPool reqToToken;
  private final RopeTable rope;

  /** The windowed layers' rope table (Gemma 3's local layers), or {@link #rope}. */
  private final RopeTable windowRope;

  private final WorkerPool pool;
  private final MatMulTask matmul;
  private final int threads;
  private AttentionTask attention;
  private final GatedActivationTask gatedActivation = new GatedActivationTask();
  private final RoundingTask rounding = new RoundingTask();

  /**
   * The rounding of a product's input costs about as much as this many multiply-adds a value, for
   * deciding whether it is worth the worker threads.
   */
  private static final long ROUNDING_COST = 8;

  /** A product's matrices (up to three), and their inputs as they take them. */
  private final WeightMatrix[] productMatrices = new WeightMatrix[3];

  private final float[][] roundedInputs = new float[3][];

  /** Per rounding kind: the buffer a product's input is rounded into. */
  private final float[][] roundedBuffers = new float[ActivationRounding.values().length][];

  private int capacity;
  private float[] x;
  private float[] xb;
  private float[] q;
  private float[] k;
  private float[] v;
  private float[] att;
  private float[] hb;
  private float[] hb2;
  private float[] last = new float[0];

  /**
   * The most floats of scored rows one classifier product writes (16 MiB, allocated on the first
   * scored step: 32 positions at a time over a 128K vocabulary, enough to keep the tiles full).
   */
  private static final int SCORED_FLOATS = 1 << 22;

  private float[] scoredIn = new float[0];
  private float[] scoredRows = new float[0];

  public CpuModelRunner(LlamaModel model, ReqToTokenPool reqToToken, int threads) {
    this.c = model.config();
    this.w = model.weights();
    this.reqToToken = reqToToken;
    this.threads = threads;
    int positions = Math.max(c.contextLength(), reqToToken.maxContextLen());
    this.rope = RopeTable.of(c.headDim(), positions, c.rope());
    this.windowRope =
        c.slidingWindow() == null
            ? rope
            : RopeTable.of(c.headDim(), positions, c.slidingWindow().rope());
    this.pool = new WorkerPool(threads);
    int maxCols = Math.max(Math.max(c.dim(), c.qDim()), c.hiddenDim());
    this.matmul = new MatMulTask(threads, maxCols);
    ensureCapacity(16);
  }

  /** The runner over an existing pool (kernel tests that fill the pool themselves). */
  public CpuModelRunner(LlamaModel model, KvPool kv, ReqToTokenPool reqToToken, int threads) {
    this(model, reqToToken, threads);
    useKv(kv);
  }

  @Override
  public long weightBytesPerStep() {
    return w.matrixBytes();
  }

  @Override
  public DeviceMemory memory() {
    return HeapMemory.now();
  }

  @Override
  public List<KvStoreType> kvStoreTypes() {
    return List.of(
        KvStoreType.FP32,
        KvStoreType.FP16,
        KvStoreType.BF16,
        KvStoreType.FP8_E4M3,
        KvStoreType.FP8_E5M2);
  }

  @Override
  public void allocateKv(int size, int pageSize, KvStoreType type) {
    useKv(new KvPool(size, c.layers(), c.kvHeads(), c.headDim(), pageSize, type));
  }

  private void useKv(KvPool pool) {
    if (kv != null) {
      throw new IllegalStateException("the KV pool is already allocated");
    }
    if (pool.rowWidth() != c.kvDim() || pool.layers() != c.layers()) {
      throw new IllegalArgumentException("KV pool shape does not match the model");
    }
    this.kv = pool;
    this.attention = new AttentionTask(threads, reqToToken.maxContextLen());
  }

  @Override
  public io.flinfer.memcache.KvSlotBytes kvSlotBytes() {
    return kv;
  }

  /** The KV pool, once allocated. */
  public KvPool kvPool() {
    return kv;
  }

  @Override
  public ModelConfig config() {
    return c;
  }

  @Override
  public String backendName() {
    return "cpu";
  }

  private void ensureCapacity(int tokens) {
    if (tokens <= capacity) {
      return;
    }
    capacity = Math.max(tokens, capacity * 2);
    x = new float[capacity * c.dim()];
    xb = new float[capacity * c.dim()];
    q = new float[capacity * c.qDim()];
    k = new float[capacity * c.kvDim()];
    v = new float[capacity * c.kvDim()];
    att = new float[capacity * c.qDim()];
    hb = new float[capacity * c.hiddenDim()];
    hb2 = new float[capacity * c.hiddenDim()];
  }

  @Override
  public void forward(ForwardBatch batch, Logits out) {
    if (kv == null) {
      throw new IllegalStateException("allocateKv must be called before forward");
    }
    int n = batch.numTokens();
    int dim = c.dim();
    int qDim = c.qDim();
    int kvDim = c.kvDim();
    int hd = c.headDim();
    int hidden = c.hiddenDim();
    ensureCapacity(n);
    for (int t = 0; t < n; t++) {
      int pos = batch.position(t);
      if (pos >= rope.maxPositions() || pos >= reqToToken.maxContextLen()) {
        throw new IllegalArgumentException("position " + pos + " is beyond the context length");
      }
      w.tokenEmbedding().decodeRow(batch.inputId(t), x, t * dim);
      if (c.embeddingScale() != 1f) {
        Ops.scale(x, t * dim, dim, c.embeddingScale());
      }
    }
    // The attention units and their cost depend on the batch only: planned once for all layers.
    long attentionWork = attentionWork(batch);
    attention.plan(batch, parallel(attentionWork));
    for (int l = 0; l < c.layers(); l++) {
      RopeTable layerRope = c.windowed(l) ? windowRope : rope;
      for (int t = 0; t < n; t++) {
        Ops.rmsNorm(xb, t * dim, x, t * dim, w.rmsAtt()[l], dim, c.normEps());
      }
      matmul(xb, n, w.wq()[l], q, w.wk()[l], k, w.wv()[l], v);
      for (int t = 0; t < n; t++) {
        int pos = batch.position(t);
        if (c.qkvBias()) {
          Ops.addBias(q, t * qDim, w.bq()[l]);
          Ops.addBias(k, t * kvDim, w.bk()[l]);
          Ops.addBias(v, t * kvDim, w.bv()[l]);
        }
        if (c.qkNorm()) {
          Ops.headRmsNorm(q, t * qDim, qDim, hd, w.qNorm()[l], c.normEps());
          Ops.headRmsNorm(k, t * kvDim, kvDim, hd, w.kNorm()[l], c.normEps());
        }
        Ops.rope(q, t * qDim, qDim, hd, layerRope, pos);
        Ops.rope(k, t * kvDim, kvDim, hd, layerRope, pos);
      }
      kv.setKv(l, batch.outCacheLocArray(), 0, n, k, v);
      attention.startLayer(l);
      run(attention, attentionWork);
      matmul(att, n, w.wo()[l], xb, null, null, null, null);
      addToResidual(xb, n, c.postNorms() ? w.postAttNorm()[l] : null);
      for (int t = 0; t < n; t++) {
        Ops.rmsNorm(xb, t * dim, x, t * dim, w.rmsFfn()[l], dim, c.normEps());
      }
      matmul(xb, n, w.w1()[l], hb, w.w3()[l], hb2, null, null);
      gatedActivation.set(n * hidden);
      run(gatedActivation, (long) n * hidden * 8);
      matmul(hb, n, w.w2()[l], xb, null, null, null, null);
      addToResidual(xb, n, c.postNorms() ? w.postFfnNorm()[l] : null);
    }
    if (classifyTogether(batch, out)) {
      return;
    }
    scorePositions(batch);
    int b = batch.batchSize();
    if (last.length < b * dim) {
      last = new float[Math.max(b, 8) * dim];
    }
    for (int r = 0; r < b; r++) {
      int t = batch.tokenOffset(r) + batch.extendLen(r) - 1;
      Ops.rmsNorm(last, r * dim, x, t * dim, w.rmsFinal(), dim, c.normEps());
    }
    out.reset(b);
    classify(last, b, out.rows());
    for (int r = 0; r < b; r++) {
      out.markFull(r);
    }
  }

  @Override
  public boolean scoresPositions() {
    return true;
  }

  /**
   * The last rows and the scored positions' rows in one classifier product, where they fit one
   * slice: the classifier, often the largest matrix, is then read once in the step (a decode step
   * verifying drafts scores a few positions per request). The bits are those of separate products.
   * Whether it did so.
   */
  private boolean classifyTogether(ForwardBatch batch, Logits out) {
    int b = batch.batchSize();
    int scored = 0;
    for (int r = 0; r < b; r++) {
      scored += batch.scoredPositions(r);
    }
    int dim = c.dim();
    int vocab = c.vocabSize();
    int slice = Math.max(1, Math.min(64, SCORED_FLOATS / vocab));
    if (scored == 0 || b + scored > slice) {
      return false;
    }
    if (scoredRows.length < slice * vocab) {
      scoredIn = new float[slice * dim];
      scoredRows = new float[slice * vocab];
    }
    // Rows 0 .. b - 1: each request's last token; then the scored positions, request by request.
    int row = b;
    for (int r = 0; r < b; r++) {
      int last = batch.tokenOffset(r) + batch.extendLen(r) - 1;
      Ops.rmsNorm(scoredIn, r * dim, x, last * dim, w.rmsFinal(), dim, c.normEps());
      int first = batch.firstScored(r);
      for (int j = 0; j < batch.scoredPositions(r); j++, row++) {
        int t = batch.tokenOffset(r) + first + j;
        Ops.rmsNorm(scoredIn, row * dim, x, t * dim, w.rmsFinal(), dim, c.normEps());
      }
    }
    classify(scoredIn, b + scored, scoredRows);
    row = b;
    for (int r = 0; r < b; r++) {
      int first = batch.firstScored(r);
      for (int j = 0; j < batch.scoredPositions(r); j++, row++) {
        batch.positionSink().accept(r, first + j, scoredRows, row * vocab);
      }
    }
    out.reset(b);
    System.arraycopy(scoredRows, 0, out.rows(), 0, b * vocab);
    for (int r = 0; r < b; r++) {
      out.markFull(r);
    }
    return true;
  }

  /**
   * The logits at the scored positions ({@link ForwardBatch#scorePositions}), a slice of positions
   * at a time so the rows stay bounded. Each row is the product the last token's row is: a
   * position's logits have the same bits as when it is a request's last.
   */
  private void scorePositions(ForwardBatch batch) {
    int dim = c.dim();
    int vocab = c.vocabSize();
    int slice = Math.max(1, Math.min(64, SCORED_FLOATS / vocab));
    for (int r = 0; r < batch.batchSize(); r++) {
      int scored = batch.scoredPositions(r);
      if (scored == 0) {
        continue;
      }
      if (scoredRows.length < slice * vocab) {
        scoredIn = new float[slice * dim];
        scoredRows = new float[slice * vocab];
      }
      int firstScored = batch.firstScored(r);
      for (int from = firstScored; from < firstScored + scored; from += slice) {
        int m = Math.min(slice, firstScored + scored - from);
        for (int j = 0; j < m; j++) {
          int t = batch.tokenOffset(r) + from + j;
          Ops.rmsNorm(scoredIn, j * dim, x, t * dim, w.rmsFinal(), dim, c.normEps());
        }
        classify(scoredIn, m, scoredRows);
        for (int j = 0; j < m; j++) {
          batch.positionSink().accept(r, from + j, scoredRows, j * vocab);
        }
      }
    }
  }

  /**
   * The logits of {@code rows} normalised rows: the classifier's product, divided by Granite's
   * logit scale (times its inverse, as llama.cpp) or soft-capped (Gemma 2).
   */
  private void classify(float[] in, int rows, float[] logits) {
    matmul(in, rows, w.classifier(), logits, null, null, null, null);
    if (c.logitDivisor() != 1f) {
      Ops.scale(logits, 0, rows * w.classifier().rows(), 1f / c.logitDivisor());
    }
    if (c.logitSoftCap() > 0) {
      SoftCap.apply(logits, 0, rows * w.classifier().rows(), c.logitSoftCap());
    }
  }

  /** x += out, each token's row of out first RMS-normalised with {@code postNorm} if given. */
  private void addToResidual(float[] out, int n, float[] postNorm) {
    int dim = c.dim();
    if (postNorm != null) {
      for (int t = 0; t < n; t++) {
        Ops.rmsNorm(out, t * dim, out, t * dim, postNorm, dim, c.normEps());
      }
    }
    if (c.residualScale() != 1f) {
      Ops.scale(out, 0, n * dim, c.residualScale());
    }
    Ops.add(x, out, 0, n * dim);
  }

  /** Multiply-adds of attention: every token against its whole context, keys and values. */
  private long attentionWork(ForwardBatch batch) {
    long positions = 0;
    for (int t = 0; t < batch.numTokens(); t++) {
      positions += batch.position(t) + 1;
    }
    return positions * c.heads() * c.headDim() * 2;
  }

  /** The gated activation (SwiGLU or GeGLU) over the hidden activations, split between threads. */
  private final class GatedActivationTask implements WorkerPool.Task {
    private int total;

    void set(int total) {
      this.total = total;
    }

    @Override
    public void run(int part, int parts) {
      int from = (int) ((long) total * part / parts) & ~7;
      int to = part == parts - 1 ? total : (int) ((long) total * (part + 1) / parts) & ~7;
      if (c.activation() == GatedActivation.GELU_TANH) {
        GeluTable.geGlu(hb, hb2, from, to - from);
      } else {
        Ops.swiGlu(hb, hb2, from, to - from);
      }
    }
  }

  /** Up to three products sharing one input, dispatched as one parallel task. */
  private void matmul(
      float[] in,
      int tokens,
      WeightMatrix m0,
      float[] o0,
      WeightMatrix m1,
      float[] o1,
      WeightMatrix m2,
      float[] o2) {
    WeightMatrix[] ms = productMatrices;
    ms[0] = m0;
    ms[1] = m1;
    ms[2] = m2;
    for (int i = 0; i < 3; i++) {
      roundedInputs[i] = ms[i] == null ? null : sameRounding(ms, i);
      if (ms[i] != null && roundedInputs[i] == null) {
        roundedInputs[i] = rounded(in, tokens, ms[i]);
      }
    }
    matmul.set(roundedInputs, tokens, m0, o0, m1, o1, m2, o2);
    long macs =
        (long) tokens
            * m0.cols()
            * (m0.rows() + (m1 == null ? 0 : m1.rows()) + (m2 == null ? 0 : m2.rows()));
    run(matmul, macs);
  }

  /**
   * The input already rounded for an earlier matrix of this product whose rounding matrix {@code i}
   * shares (q, k and v; gate and up), or null.
   */
  private float[] sameRounding(WeightMatrix[] ms, int i) {
    for (int j = 0; j < i; j++) {
      if (ms[j].activationRounding() == ms[i].activationRounding()) {
        return roundedInputs[j];
      }
    }
    return null;
  }

  /**
   * {@code in} rounded as {@code m}'s products round their activations, split between the threads
   * (the input itself where they take it as it comes), in this runner's buffer for that rounding.
   */
  private float[] rounded(float[] in, int tokens, WeightMatrix m) {
    ActivationRounding r = m.activationRounding();
    if (r == ActivationRounding.NONE) {
      return in;
    }
    int n = tokens * m.cols();
    int kind = r.ordinal();
    if (roundedBuffers[kind] == null || roundedBuffers[kind].length < r.bufferSize(n)) {
      roundedBuffers[kind] = new float[r.bufferSize(n)];
    }
    rounding.set(r, in, n, roundedBuffers[kind]);
    run(rounding, (long) n * ROUNDING_COST);
    return roundedBuffers[kind];
  }

  private boolean parallel(long work) {
    return work >= PARALLEL_MACS && pool.threads() > 1;
  }

  private void run(WorkerPool.Task task, long work) {
    if (!parallel(work)) {
      task.run(0, 1);
    } else {
      pool.run(task);
    }
  }

  @Override
  public void close() {
    pool.close();
  }

  /** Rounds a product's input, whole blocks split between the threads. */
  private static final class RoundingTask implements WorkerPool.Task {
    private ActivationRounding r;
    private float[] in;
    private float[] out;
    private int n;

    void set(ActivationRounding r, float[] in, int n, float[] out) {
      this.r = r;
      this.in = in;
      this.n = n;
      this.out = out;
    }

    @Override
    public void run(int part, int parts) {
      int blocks = n / r.block();
      int from = (int) ((long) blocks * part / parts) * r.block();
      int to = (int) ((long) blocks * (part + 1) / parts) * r.block();
      r.round(in, from, to, out, n);
    }
  }

  /**
   * The rows of up to three products, handed out in chunks (about four per thread) from a shared
   * counter: a thread that loses its core for a moment (a TaskManager always runs other threads)
   * does fewer chunks instead of holding the others up. Each output is still computed by one kernel
   * call, so the split changes no bits.
   */
  private static final class MatMulTask implements WorkerPool.Task {
    private final float[][] scratch;
    private final WeightMatrix[] m = new WeightMatrix[3];
    private final float[][] out = new float[3][];
    private final int[] chunkStart = new int[4];
    private final int[] chunkRows = new int[3];
    private final int threads;
    private final AtomicInteger next = new AtomicInteger();
    private final float[][] in = new float[3][];
    private int tokens;

    MatMulTask(int threads, int maxCols) {
      this.threads = threads;
      scratch = new float[threads][WeightMatrix.scratchSize(maxCols)];
    }

    /** {@code in[i]}: matrix i's input, rounded as it rounds its activations. */
    void set(
        float[][] in,
        int tokens,
        WeightMatrix m0,
        float[] o0,
        WeightMatrix m1,
        float[] o1,
        WeightMatrix m2,
        float[] o2) {
      System.arraycopy(in, 0, this.in, 0, 3);
      this.tokens = tokens;
      m[0] = m0;
      out[0] = o0;
      m[1] = m1;
      out[1] = o1;
      m[2] = m2;
      out[2] = o2;
      int chunks = 0;
      for (int i = 0; i < 3; i++) {
        chunkStart[i] = chunks;
        if (m[i] != null) {
          // Large products: about four chunks per thread, so a delayed thread holds nobody up.
          // Small ones: one chunk per thread, as smaller chunks would share output cache lines.
          int rows = m[i].rows();
          long macs = (long) rows * m[i].cols() * tokens;
          int per = macs >= (1L << 22) * threads ? 4 * threads : threads;
          chunkRows[i] = Math.max(2, ((rows + per - 1) / per + 1) & ~1);
          chunks += (rows + chunkRows[i] - 1) / chunkRows[i];
        }
      }
      chunkStart[3] = chunks;
      next.set(0);
    }

    @Override
    public void run(int part, int parts) {
      for (int c = next.getAndIncrement(); c < chunkStart[3]; c = next.getAndIncrement()) {
        int i = c < chunkStart[1] ? 0 : c < chunkStart[2] ? 1 : 2;
        WeightMatrix w = m[i];
        int from = (c - chunkStart[i]) * chunkRows[i];
        int to = Math.min(w.rows(), from + chunkRows[i]);
        w.matmulRounded(in[i], tokens, out[i], w.rows(), from, to, scratch[part]);
      }
    }
  }

  /**
   * The units of an {@link AttentionPlan}, handed out from a shared counter: extend tiles and
   * shared-prefix tiles ({@link QueryTileAttention}), and tokens ({@link TokenAttention}, or, where
   * that kernel cannot serve the pool, {@link Attention} one head at a time). All give a token the
   * same bits.
   */
  private final class AttentionTask implements WorkerPool.Task {
    /**
     * Decodes share tiles on heads up to this wide. Measured against {@link TokenAttention}: with
     * heads of 8 a shared tile serves a query in about half the time; with heads of 64 (Llama-2
     * 110M shapes, a tile of eight requests) it was a fifth slower, its element-by-element
     * broadcasts costing more than the keys it reads once.
     */
    private static final int SHARED_TILE_MAX_HEAD_DIM = 16;

    private final AtomicInteger next = new AtomicInteger();
    private final Attention[] perThread;
    private final QueryTileAttention[] tiles;
    private final TokenAttention[] tokenKernels;
    private final AttentionPlan plan;

    /** The windowed layers' plan: tokens only, as a tile's rows would each see another window. */
    private final AttentionPlan windowPlan;

    private final int[][] laneOffset;
    private final int[][] laneRow;
    private final int[][] laneLast;
    private ForwardBatch batch;
    private int layer;

    AttentionTask(int threads, int maxContext) {
      perThread = new Attention[threads];
      for (int i = 0; i < threads; i++) {
        perThread[i] = new Attention(kv, maxContext, c.attentionScale(), c.attentionSoftCap());
      }
      int group = c.groupSize();
      boolean tiled = QueryTileAttention.supports(kv) && QueryTileAttention.LANES % group == 0;
      tiles = new QueryTileAttention[tiled ? threads : 0];
      for (int i = 0; i < tiles.length; i++) {
        tiles[i] = new QueryTileAttention(kv, maxContext, c.attentionScale(), c.attentionSoftCap());
      }
      tokenKernels = new TokenAttention[TokenAttention.supports(kv) ? threads : 0];
      for (int i = 0; i < tokenKernels.length; i++) {
        tokenKernels[i] =
            new TokenAttention(kv, c.heads(), maxContext, c.attentionScale(), c.attentionSoftCap());
      }
      plan =
          new AttentionPlan(
              c.kvHeads(),
              group,
              tiled ? QueryTileAttention.LANES / group : 0,
              tokenKernels.length > 0,
              tiled && c.headDim() <= SHARED_TILE_MAX_HEAD_DIM,
              threads);
      windowPlan =
          c.slidingWindow() == null
              ? null
              : new AttentionPlan(c.kvHeads(), group, 0, tokenKernels.length > 0, false, threads);
      laneOffset = new int[threads][QueryTileAttention.LANES];
      laneRow = new int[threads][QueryTileAttention.LANES];
      laneLast = new int[threads][QueryTileAttention.LANES];
    }

    void plan(ForwardBatch batch, boolean parallel) {
      this.batch = batch;
      plan.plan(batch, reqToToken.table(), reqToToken.maxContextLen(), parallel);
      if (windowPlan != null) {
        windowPlan.plan(batch, reqToToken.table(), reqToToken.maxContextLen(), parallel);
      }
    }

    void startLayer(int layer) {
      this.layer = layer;
      next.set(0);
    }

    @Override
    public void run(int part, int parts) {
      int hd = c.headDim();
      int dim = c.qDim();
      int[] table = reqToToken.table();
      int maxCtx = reqToToken.maxContextLen();
      int group = c.groupSize();
      boolean windowed = c.windowed(layer);
      AttentionPlan p = windowed ? windowPlan : plan;
      for (int u = next.getAndIncrement(); u < p.units; u = next.getAndIncrement()) {
        int kvHead = p.kvHead[u];
        if (p.kind[u] == AttentionPlan.SHARED_TILE) {
          sharedTile(part, u, table, maxCtx);
          continue;
        }
        int t = p.token[u];
        int rowBase = batch.reqPoolIdx(batch.tokenRequest(t)) * maxCtx;
        // A windowed layer's token sees the context from its window's start: the table's row
        // from there on (only token units are planned for those layers).
        int start = windowed ? c.slidingWindow().start(batch.position(t)) : 0;
        rowBase += start;
        if (p.kind[u] == AttentionPlan.EXTEND_TILE) {
          tiles[part].attend(
              layer, q, att, dim, t, p.tokens[u], batch.position(t), kvHead, group, table, rowBase);
        } else if (tokenKernels.length > 0) {
          tokenKernels[part].attend(
              layer,
              q,
              t * dim,
              att,
              t * dim,
              kvHead,
              p.kvHeadCount[u],
              group,
              table,
              rowBase,
              batch.position(t) + 1 - start);
        } else {
          for (int h = kvHead * group; h < (kvHead + 1) * group; h++) {
            int off = t * dim + h * hd;
            perThread[part].attendHead(
                layer, q, off, kvHead, table, rowBase, batch.position(t) + 1 - start, att, off);
          }
        }
      }
    }

    /** Lane k: request {@code k / group} of the tile, query head {@code k % group} of the group. */
    private void sharedTile(int part, int u, int[] table, int maxCtx) {
      AttentionPlan p = plan;
      int group = c.groupSize();
      int kvHead = p.kvHead[u];
      int used = p.tokens[u] * group;
      int[] offsets = laneOffset[part];
      int[] rows = laneRow[part];
      int[] lasts = laneLast[part];
      for (int k = 0; k < used; k++) {
        int r = p.members[p.token[u] + k / group];
        int t = batch.tokenOffset(r);
        offsets[k] = t * c.qDim() + (kvHead * group + k % group) * c.headDim();
        rows[k] = batch.reqPoolIdx(r) * maxCtx;
        lasts[k] = batch.position(t);
      }
      tiles[part].attendShared(
          layer, q, att, used, offsets, rows, lasts, kvHead, p.shared[u], table);
    }
  }
}
