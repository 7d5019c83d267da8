package io.flinfer.runtime.kernel;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvRows;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Causal attention of a tile of up to {@link #LANES} queries that read one KV head of one request:
 * the query heads of a GQA group for consecutive tokens of an extend. The vector lanes hold the
 * queries, so a position's key and value are read once for the whole tile and no score needs a
 * horizontal sum.
 *
 * <p>Each query's arithmetic is exactly that of {@link Attention#attendHead}: its score at a
 * position is eight chains over the head (element i in chain i mod 8) summed left to right and then
 * scaled; the softmax subtracts the maximum, sums in position order and multiplies by the inverse
 * sum; the values are summed in position order. So a token gets the same bits whichever kernel
 * served it, and the batch, the chunking and the prefix cache still change nothing.
 */
public final class QueryTileAttention {
  /**
   * Lanes hold queries. Eight, not the widest vectors a CPU has: with 512-bit lanes this kernel ran
   * several times slower on JDK 17 (measured on an AVX-512 machine).
   */
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;

  /** Queries in one tile. */
  public static final int LANES = S.length();

  /** Eight elements of a key or value row: the head is read in chunks of eight. */
  private static final VectorSpecies<Float> ROW = FloatVector.SPECIES_256;

  private static final FloatVector ZERO = FloatVector.zero(S);
  private static final FloatVector MINUS_INFINITY =
      FloatVector.broadcast(S, Float.NEGATIVE_INFINITY);

  private final KvPool kv;
  private final float scale;
  private final float softCap;
  private final int headDim;
  private final int rowWidth;
  private final float[] queries;
  private final float[] scores;
  private final float[] outputs;
  private final float[] row = new float[8];
  private final float[] lastPosition = new float[LANES];
  private final float[] inverseSums = new float[LANES];
  private final float[] maxima = new float[LANES];
  private final TileSuffix suffix;

  /** Scratch for one thread: contexts up to {@code maxContext} positions. */
  public QueryTileAttention(KvPool kv, int maxContext) {
    this(kv, maxContext, 1f / (float) Math.sqrt(kv.headDim()), 0f);
  }

  /**
   * As {@link #QueryTileAttention(KvPool, int)}, each score the dot product times {@code scale} (by
   * default 1/sqrt of the head; Granite sets its own), then capped by {@link SoftCap} at {@code
   * softCap} (0: not).
   */
  public QueryTileAttention(KvPool kv, int maxContext, float scale, float softCap) {
    this.scale = scale;
    this.softCap = softCap;
    if (!supports(kv)) {
      throw new IllegalArgumentException("query tiles need heads a multiple of 8 wide");
    }
    this.kv = kv;
    this.headDim = kv.headDim();
    this.rowWidth = kv.rowWidth();
    this.queries = new float[headDim * LANES];
    this.scores = new float[maxContext * LANES];
    this.outputs = new float[headDim * LANES];
    this.suffix = new TileSuffix(headDim, rowWidth, scale, scores, outputs);
  }

  /** Whether tiles can serve this pool: heads a multiple of 8 wide (in any store type). */
  public static boolean supports(KvPool kv) {
    return kv.headDim() % ROW.length() == 0;
  }

  /**
   * Attends {@code tokens} consecutive tokens of one request, each with the {@code group} query
   * heads that read {@code kvHead}; {@code tokens * group <= LANES}. Lane k is token {@code
   * firstToken + k / group}, query head {@code kvHead * group + k % group}, at position {@code
   * firstPosition + k / group}.
   *
   * @param q queries, {@code dim} floats per token
   * @param out outputs, laid out as {@code q}
   * @param reqToToken the request-to-token table; the request's slots start at {@code rowBase}
   */
  public void attend(
      int layer,
      float[] q,
      float[] out,
      int dim,
      int firstToken,
      int tokens,
      int firstPosition,
      int kvHead,
      int group,
      int[] reqToToken,
      int rowBase) {
    int used = tokens * group;
    if (used > LANES || used < 1) {
      throw new IllegalArgumentException("a tile holds 1 to " + LANES + " queries, not " + used);
    }
    for (int k = 0; k < LANES; k++) {
      int qOff = (firstToken + k / group) * dim + (kvHead * group + k % group) * headDim;
      for (int i = 0; i < headDim; i++) {
        queries[i * LANES + k] = k < used ? q[qOff + i] : 0f;
      }
      // Unused lanes see every position, so they stay finite; their results are not written.
      lastPosition[k] = k < used ? firstPosition + k / group : Float.MAX_VALUE;
    }
    int context = firstPosition + tokens;
    int shared = firstPosition + 1;
    int kvOff = kvHead * headDim;

    scores(kv.keys(layer), reqToToken, rowBase, kvOff, context, shared);
    softmax(context, shared);
    KvRows values = kv.values(layer);
    for (int d = 0; d < headDim; d += ROW.length()) {
      values(values, reqToToken, rowBase, kvOff + d, context, shared, d);
    }
    for (int k = 0; k < used; k++) {
      int oOff = (firstToken + k / group) * dim + (kvHead * group + k % group) * headDim;
      for (int i = 0; i < headDim; i++) {
        out[oOff + i] = outputs[i * LANES + k];
      }
    }
  }

  /**
   * Attends up to {@link #LANES} queries that read one KV head, of one token each of several
   * requests whose contexts begin with the same {@code shared} slots (a prefix the radix cache
   * shares): over those positions each key and value is read once for all the queries, the rest of
   * each context is attended lane by lane. Each query gets the bits {@link Attention#attendHead}
   * gives it.
   *
   * @param laneOffset where lane k's query starts in {@code q}, and its output in {@code out}
   * @param laneRow where lane k's request's slots start in {@code reqToToken}
   * @param laneLast lane k's position: it attends positions 0 to {@code laneLast[k]}
   * @param shared positions {@code [0, shared)} have the same slot in every lane's row; every
   *     lane's position is at least {@code shared}
   */
  public void attendShared(
      int layer,
      float[] q,
      float[] out,
      int used,
      int[] laneOffset,
      int[] laneRow,
      int[] laneLast,
      int kvHead,
      int shared,
      int[] reqToToken) {
    if (used > LANES || used < 1 || shared < 1) {
      throw new IllegalArgumentException(
          "a tile holds 1 to " + LANES + " queries sharing at least one position");
    }
    int context = shared;
    for (int k = 0; k < used; k++) {
      if (laneLast[k] < shared) {
        throw new IllegalArgumentException("lane " + k + " is inside the shared prefix");
      }
      context = Math.max(context, laneLast[k] + 1);
    }
    for (int k = 0; k < LANES; k++) {
      for (int i = 0; i < headDim; i++) {
        queries[i * LANES + k] = k < used ? q[laneOffset[k] + i] : 0f;
      }
      // Unused lanes see the shared positions only, so they stay finite; they are not written.
      lastPosition[k] = k < used ? laneLast[k] : shared - 1;
    }
    int kvOff = kvHead * headDim;
    scores(kv.keys(layer), reqToToken, laneRow[0], kvOff, shared, shared);
    suffix.scores(
        kv.keys(layer), q, used, laneOffset, laneRow, laneLast, kvOff, shared, context, reqToToken);
    softmax(context, shared);
    KvRows values = kv.values(layer);
    for (int d = 0; d < headDim; d += ROW.length()) {
      values(values, reqToToken, laneRow[0], kvOff + d, shared, shared, d);
    }
    suffix.values(values, used, laneRow, laneLast, kvOff, shared, inverseSums, reqToToken);
    for (int k = 0; k < used; k++) {
      for (int i = 0; i < headDim; i++) {
        out[laneOffset[k] + i] = outputs[i * LANES + k];
      }
    }
  }

  /**
   * Each lane's softmax weights over positions {@code [0, context)}, unnormalized, in place (zero
   * past the lane's position); the inverse of each lane's sum, added in position order, goes to
   * {@link #inverseSums}. Lanes travel between these methods in arrays: a vector passed to or
   * returned from a call the compiler leaves out of line is boxed.
   */
  private void softmax(int context, int shared) {
    if (softCap > 0) {
      // Masked scores (minus infinity) stay masked.
      SoftCap.apply(scores, 0, context * LANES, softCap);
    }
    LaneMax.of(scores, 0, context, LANES, maxima, 0);
    FastExp.expLanes(scores, 0, LANES, context, maxima, 0, lastPosition, shared, inverseSums, 0);
    FloatVector.broadcast(S, 1f)
        .div(FloatVector.fromArray(S, inverseSums, 0))
        .intoArray(inverseSums, 0);
  }

  /**
   * Stores every lane's scaled score per position (minus infinity past a lane's own position).
   * Chain c sums elements c, c + 8, ... of the head; the chains are then added left to right, as
   * {@link GemmKernels#sum8} adds the lanes of the one-query kernel.
   */
  private void scores(
      KvRows keys, int[] reqToToken, int rowBase, int kvOff, int context, int shared) {
    if (headDim == 8) {
      scores8(keys, reqToToken, rowBase, kvOff, context, shared);
      return;
    }
    FloatVector last = FloatVector.fromArray(S, lastPosition, 0);
    float scale = this.scale;
    for (int j = 0; j < context; j++) {
      int e = reqToToken[rowBase + j] * rowWidth + kvOff;
      FloatVector c0 = FloatVector.zero(S);
      FloatVector c1 = FloatVector.zero(S);
      FloatVector c2 = FloatVector.zero(S);
      FloatVector c3 = FloatVector.zero(S);
      FloatVector c4 = FloatVector.zero(S);
      FloatVector c5 = FloatVector.zero(S);
      FloatVector c6 = FloatVector.zero(S);
      FloatVector c7 = FloatVector.zero(S);
      for (int i = 0; i < headDim; i += 8) {
        load(keys, e + i);
        int qi = i * LANES;
        c0 = FloatVector.fromArray(S, queries, qi).fma(FloatVector.broadcast(S, row[0]), c0);
        c1 =
            FloatVector.fromArray(S, queries, qi + LANES).fma(FloatVector.broadcast(S, row[1]), c1);
        c2 =
            FloatVector.fromArray(S, queries, qi + 2 * LANES)
                .fma(FloatVector.broadcast(S, row[2]), c2);
        c3 =
            FloatVector.fromArray(S, queries, qi + 3 * LANES)
                .fma(FloatVector.broadcast(S, row[3]), c3);
        c4 =
            FloatVector.fromArray(S, queries, qi + 4 * LANES)
                .fma(FloatVector.broadcast(S, row[4]), c4);
        c5 =
            FloatVector.fromArray(S, queries, qi + 5 * LANES)
                .fma(FloatVector.broadcast(S, row[5]), c5);
        c6 =
            FloatVector.fromArray(S, queries, qi + 6 * LANES)
                .fma(FloatVector.broadcast(S, row[6]), c6);
        c7 =
            FloatVector.fromArray(S, queries, qi + 7 * LANES)
                .fma(FloatVector.broadcast(S, row[7]), c7);
      }
      FloatVector s = c0.add(c1).add(c2).add(c3).add(c4).add(c5).add(c6).add(c7).mul(scale);
      if (j >= shared) {
        s = s.blend(MINUS_INFINITY, last.compare(VectorOperators.LT, (float) j));
      }
      s.intoArray(scores, j * LANES);
    }
  }

  /**
   * {@link #scores} for heads of eight: one element per chain, so each chain is one product, and
   * the queries stay in registers for the whole context (read from the array, the compiler reloads
   * them at every position, since the row and score stores might alias them).
   */
  private void scores8(
      KvRows keys, int[] reqToToken, int rowBase, int kvOff, int context, int shared) {
    FloatVector last = FloatVector.fromArray(S, lastPosition, 0);
    FloatVector q0 = FloatVector.fromArray(S, queries, 0);
    FloatVector q1 = FloatVector.fromArray(S, queries, LANES);
    FloatVector q2 = FloatVector.fromArray(S, queries, 2 * LANES);
    FloatVector q3 = FloatVector.fromArray(S, queries, 3 * LANES);
    FloatVector q4 = FloatVector.fromArray(S, queries, 4 * LANES);
    FloatVector q5 = FloatVector.fromArray(S, queries, 5 * LANES);
    FloatVector q6 = FloatVector.fromArray(S, queries, 6 * LANES);
    FloatVector q7 = FloatVector.fromArray(S, queries, 7 * LANES);
    for (int j = 0; j < context; j++) {
      load(keys, reqToToken[rowBase + j] * rowWidth + kvOff);
      FloatVector s =
          q0.fma(FloatVector.broadcast(S, row[0]), ZERO)
              .add(q1.fma(FloatVector.broadcast(S, row[1]), ZERO))
              .add(q2.fma(FloatVector.broadcast(S, row[2]), ZERO))
              .add(q3.fma(FloatVector.broadcast(S, row[3]), ZERO))
              .add(q4.fma(FloatVector.broadcast(S, row[4]), ZERO))
              .add(q5.fma(FloatVector.broadcast(S, row[5]), ZERO))
              .add(q6.fma(FloatVector.broadcast(S, row[6]), ZERO))
              .add(q7.fma(FloatVector.broadcast(S, row[7]), ZERO))
              .mul(scale);
      if (j >= shared) {
        s = s.blend(MINUS_INFINITY, last.compare(VectorOperators.LT, (float) j));
      }
      s.intoArray(scores, j * LANES);
    }
  }

  /**
   * Copies eight values of a pool buffer, from value {@code element} on, to {@link #row} as floats:
   * one vector load (and, for a 16-bit pool, conversion), where reading them one by one from the
   * buffer costs several times more; through the array, so no vector crosses a call.
   */
  private void load(KvRows buffer, int element) {
    KvVectors.toFloats(buffer, element, row, 8);
  }

  /**
   * {@code outputs[d..d+8)} of every lane: the weights times eight value elements, summed in
   * position order; past a lane's own position its sums are left as they are.
   */
  private void values(
      KvRows values, int[] reqToToken, int rowBase, int off, int context, int shared, int d) {
    FloatVector last = FloatVector.fromArray(S, lastPosition, 0);
    FloatVector inv = FloatVector.fromArray(S, inverseSums, 0);
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = FloatVector.zero(S);
    FloatVector a2 = FloatVector.zero(S);
    FloatVector a3 = FloatVector.zero(S);
    FloatVector a4 = FloatVector.zero(S);
    FloatVector a5 = FloatVector.zero(S);
    FloatVector a6 = FloatVector.zero(S);
    FloatVector a7 = FloatVector.zero(S);
    for (int j = 0; j < shared; j++) {
      int e = reqToToken[rowBase + j] * rowWidth + off;
      FloatVector p = FloatVector.fromArray(S, scores, j * LANES).mul(inv);
      load(values, e);
      a0 = p.fma(FloatVector.broadcast(S, row[0]), a0);
      a1 = p.fma(FloatVector.broadcast(S, row[1]), a1);
      a2 = p.fma(FloatVector.broadcast(S, row[2]), a2);
      a3 = p.fma(FloatVector.broadcast(S, row[3]), a3);
      a4 = p.fma(FloatVector.broadcast(S, row[4]), a4);
      a5 = p.fma(FloatVector.broadcast(S, row[5]), a5);
      a6 = p.fma(FloatVector.broadcast(S, row[6]), a6);
      a7 = p.fma(FloatVector.broadcast(S, row[7]), a7);
    }
    for (int j = shared; j < context; j++) {
      int e = reqToToken[rowBase + j] * rowWidth + off;
      FloatVector p = FloatVector.fromArray(S, scores, j * LANES).mul(inv);
      load(values, e);
      VectorMask<Float> live = last.compare(VectorOperators.GE, (float) j);
      a0 = a0.blend(p.fma(FloatVector.broadcast(S, row[0]), a0), live);
      a1 = a1.blend(p.fma(FloatVector.broadcast(S, row[1]), a1), live);
      a2 = a2.blend(p.fma(FloatVector.broadcast(S, row[2]), a2), live);
      a3 = a3.blend(p.fma(FloatVector.broadcast(S, row[3]), a3), live);
      a4 = a4.blend(p.fma(FloatVector.broadcast(S, row[4]), a4), live);
      a5 = a5.blend(p.fma(FloatVector.broadcast(S, row[5]), a5), live);
      a6 = a6.blend(p.fma(FloatVector.broadcast(S, row[6]), a6), live);
      a7 = a7.blend(p.fma(FloatVector.broadcast(S, row[7]), a7), live);
    }
    int o = d * LANES;
    a0.intoArray(outputs, o);
    a1.intoArray(outputs, o + LANES);
    a2.intoArray(outputs, o + 2 * LANES);
    a3.intoArray(outputs, o + 3 * LANES);
    a4.intoArray(outputs, o + 4 * LANES);
    a5.intoArray(outputs, o + 5 * LANES);
    a6.intoArray(outputs, o + 6 * LANES);
    a7.intoArray(outputs, o + 7 * LANES);
  }
}
