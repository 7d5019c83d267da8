package io.flinfer.runtime.forward;

import java.util.Arrays;

/**
 * One forward step over several requests (SGLang's {@code ForwardBatch}): for each request its
 * {@code req_pool_idx}, how many positions it already has in the KV pool, and its new tokens (many
 * when extending, one when decoding) with their positions and {@code out_cache_loc}, the KV slots
 * their K and V are written to. Owns reusable arrays so a step allocates nothing once warm.
 *
 * <p>Before the step, the caller has written each request's {@code out_cache_loc} into its row of
 * the request-to-token table, so attention finds every position there.
 */
public final class ForwardBatch {
  private int batchSize;
  private int numTokens;
  private int[] reqPoolIndices = new int[8];
  private int[] prefixLens = new int[8];
  private int[] extendLens = new int[8];
  private int[] tokenOffsets = new int[8];
  private boolean[] greedyOnly = new boolean[8];
  private boolean[] backendDraw = new boolean[8];
  private float[] temperature = new float[8];
  private int[] topK = new int[8];
  private float[] topP = new float[8];
  private float[] minP = new float[8];
  private float[] draw = new float[8];
  private int[] scored = new int[8];
  private int[] firstScored = new int[8];
  private PositionLogits positionSink;
  private int[] inputIds = new int[64];
  private int[] positions = new int[64];
  private int[] outCacheLoc = new int[64];
  private int[] tokenRequest = new int[64];

  /** Empties the batch, keeping its arrays. */
  public ForwardBatch reset() {
    batchSize = 0;
    numTokens = 0;
    return this;
  }

  /**
   * Adds a request: {@code len} new tokens {@code ids[from..]} at positions {@code prefixLen..},
   * whose K/V go to slots {@code locs[locFrom..]}.
   */
  public ForwardBatch add(
      int reqPoolIdx, int prefixLen, int[] ids, int from, int len, int[] locs, int locFrom) {
    if (len <= 0) {
      throw new IllegalArgumentException("a request in a batch needs at least one new token");
    }
    if (batchSize == reqPoolIndices.length) {
      int n = batchSize * 2;
      reqPoolIndices = Arrays.copyOf(reqPoolIndices, n);
      prefixLens = Arrays.copyOf(prefixLens, n);
      extendLens = Arrays.copyOf(extendLens, n);
      tokenOffsets = Arrays.copyOf(tokenOffsets, n);
      greedyOnly = Arrays.copyOf(greedyOnly, n);
      backendDraw = Arrays.copyOf(backendDraw, n);
      temperature = Arrays.copyOf(temperature, n);
      topK = Arrays.copyOf(topK, n);
      topP = Arrays.copyOf(topP, n);
      minP = Arrays.copyOf(minP, n);
      draw = Arrays.copyOf(draw, n);
      scored = Arrays.copyOf(scored, n);
      firstScored = Arrays.copyOf(firstScored, n);
    }
    if (numTokens + len > inputIds.length) {
      int n = Math.max(inputIds.length * 2, numTokens + len);
      inputIds = Arrays.copyOf(inputIds, n);
      positions = Arrays.copyOf(positions, n);
      outCacheLoc = Arrays.copyOf(outCacheLoc, n);
      tokenRequest = Arrays.copyOf(tokenRequest, n);
    }
    int r = batchSize++;
    reqPoolIndices[r] = reqPoolIdx;
    prefixLens[r] = prefixLen;
    extendLens[r] = len;
    tokenOffsets[r] = numTokens;
    greedyOnly[r] = false;
    backendDraw[r] = false;
    scored[r] = 0;
    firstScored[r] = 0;
    System.arraycopy(ids, from, inputIds, numTokens, len);
    System.arraycopy(locs, locFrom, outCacheLoc, numTokens, len);
    for (int i = 0; i < len; i++) {
      positions[numTokens + i] = prefixLen + i;
      tokenRequest[numTokens + i] = r;
    }
    numTokens += len;
    return this;
  }

  /**
   * Asks only for the last added request's greedy choice (see {@link Logits}): its sampling needs
   * no more than the top token, so a device backend may skip copying its row of logits.
   */
  public ForwardBatch greedyOnly() {
    greedyOnly[batchSize - 1] = true;
    return this;
  }

  /**
   * Asks for the logits at the last added request's new tokens from {@code first} (0: its first) up
   * to its last, excluded (whose row goes to {@link Logits} as always): they go, row by row, to the
   * {@link #positionSink}. For prompt log-probabilities; only a backend that {@link
   * ModelRunner#scoresPositions scores positions} takes such a batch.
   */
  public ForwardBatch scorePositions(int first) {
    int r = batchSize - 1;
    if (positionSink == null) {
      throw new IllegalStateException("scored positions need a position sink");
    }
    if (first < 0) {
      throw new IllegalArgumentException("first scored token " + first);
    }
    firstScored[r] = Math.min(first, extendLens[r] - 1);
    scored[r] = extendLens[r] - 1 - firstScored[r];
    return this;
  }

  /** How many of request r's new tokens have their logits handed to the sink. */
  public int scoredPositions(int r) {
    return scored[r];
  }

  /** The first of them, among request r's new tokens. */
  public int firstScored(int r) {
    return firstScored[r];
  }

  /** Where the logits of scored positions go; kept across {@link #reset}. */
  public ForwardBatch positionSink(PositionLogits sink) {
    this.positionSink = sink;
    return this;
  }

  public PositionLogits positionSink() {
    return positionSink;
  }

  /** Whether request r needs only its greedy choice. */
  public boolean isGreedyOnly(int r) {
    return greedyOnly[r];
  }

  /**
   * Lets the backend draw the last added request's token itself (see {@link Logits#setDrawn}):
   * temperature, then min-p, top-k (0: off) and top-p over its row, with the uniform draw {@code u}
   * in [0, 1). A backend that does not draw gives the full row, and the caller samples.
   */
  public ForwardBatch drawOnBackend(float temperature, int topK, float topP, float minP, float u) {
    int r = batchSize - 1;
    if (!(temperature > 0f)
        || topK < 0
        || !(topP > 0f && topP <= 1f)
        || !(minP >= 0f && minP <= 1f)
        || !(u >= 0f && u < 1f)) {
      throw new IllegalArgumentException(
          "draw: temperature "
              + temperature
              + ", top_k "
              + topK
              + ", top_p "
              + topP
              + ", min_p "
              + minP
              + ", u "
              + u);
    }
    backendDraw[r] = true;
    this.temperature[r] = temperature;
    this.topK[r] = topK;
    this.topP[r] = topP;
    this.minP[r] = minP;
    this.draw[r] = u;
    return this;
  }

  /** Whether the backend may draw request r's token (then the getters below describe how). */
  public boolean isDrawnOnBackend(int r) {
    return backendDraw[r];
  }

  public float drawTemperature(int r) {
    return temperature[r];
  }

  public int drawTopK(int r) {
    return topK[r];
  }

  public float drawTopP(int r) {
    return topP[r];
  }

  public float drawMinP(int r) {
    return minP[r];
  }

  /** Request r's uniform draw in [0, 1). */
  public float drawU(int r) {
    return draw[r];
  }

  public int batchSize() {
    return batchSize;
  }

  public int numTokens() {
    return numTokens;
  }

  /** True when every request has exactly one new token. */
  public boolean isDecode() {
    return numTokens == batchSize;
  }

  public int reqPoolIdx(int r) {
    return reqPoolIndices[r];
  }

  public int prefixLen(int r) {
    return prefixLens[r];
  }

  public int extendLen(int r) {
    return extendLens[r];
  }

  /** Index of request r's first new token among the batch's tokens. */
  public int tokenOffset(int r) {
    return tokenOffsets[r];
  }

  public int inputId(int t) {
    return inputIds[t];
  }

  public int position(int t) {
    return positions[t];
  }

  public int outCacheLoc(int t) {
    return outCacheLoc[t];
  }

  /** The request (index in this batch) that token t belongs to. */
  public int tokenRequest(int t) {
    return tokenRequest[t];
  }

  /** Read-only views for kernels. */
  int[] outCacheLocArray() {
    return outCacheLoc;
  }

  int[] positionsArray() {
    return positions;
  }

  int[] tokenRequestArray() {
    return tokenRequest;
  }
}
