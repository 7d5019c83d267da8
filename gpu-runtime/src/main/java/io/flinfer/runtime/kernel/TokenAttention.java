package io.flinfer.runtime.kernel;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvRows;
import io.flinfer.memcache.KvStoreType;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorSpecies;

/**
 * Causal attention of several query heads of one token (a decode step, or a short extend) over its
 * request's context, all heads in one pass over the positions. The heads' scores are kept side by
 * side, one lane per head, so the softmax's sums and the value sums of different heads are
 * independent chains that run together instead of one head's chain waiting on itself: on 8-wide
 * heads those chains, not the arithmetic, bounded the one-query kernel.
 *
 * <p>Each head's arithmetic is exactly that of {@link Attention#attendHead}: a score is eight
 * chains over the head summed left to right, then scaled; the softmax subtracts the maximum, sums
 * in position order and multiplies by the inverse sum; each output element sums the weighted values
 * in position order. So a token gets the same bits whichever kernel served it.
 */
public final class TokenAttention {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final int LANES = S.length();
  private static final VectorMask<Float> PAIR_1 = pair(1);
  private static final VectorMask<Float> PAIR_2 = pair(2);
  private static final VectorMask<Float> PAIR_3 = pair(3);

  private final KvPool kv;
  private final float softCap;
  private final int headDim;
  private final int rowWidth;
  private final float scale;
  private final int maxHeads;
  private final float[] scores;
  private final float[] products;
  private final float[] sums;
  private final float[] maxima;
  private final float[] staged;
  private final int[] pairWeight = new int[LANES];
  private final int[] pairOffset = new int[LANES];

  /**
   * Scratch for one thread: up to {@code maxHeads} query heads of a token, contexts up to {@code
   * maxContext} positions.
   */
  public TokenAttention(KvPool kv, int maxHeads, int maxContext) {
    this(kv, maxHeads, maxContext, 1f / (float) Math.sqrt(kv.headDim()), 0f);
  }

  /**
   * As {@link #TokenAttention(KvPool, int, int)}, each score the dot product times {@code scale}
   * (by default 1/sqrt of the head; Granite sets its own), then capped by {@link SoftCap} at {@code
   * softCap} (0: not).
   */
  public TokenAttention(KvPool kv, int maxHeads, int maxContext, float scale, float softCap) {
    this.softCap = softCap;
    if (!QueryTileAttention.supports(kv)) {
      throw new IllegalArgumentException("token attention needs heads a multiple of 8 wide");
    }
    this.kv = kv;
    this.headDim = kv.headDim();
    this.rowWidth = kv.rowWidth();
    this.scale = scale;
    this.maxHeads = maxHeads;
    int stride = padded(maxHeads);
    this.scores = new float[maxContext * stride];
    this.products = new float[stride * LANES];
    this.sums = new float[stride];
    this.maxima = new float[stride];
    this.staged = new float[rowWidth];
  }

  /** Whether this kernel can serve a pool: as {@link QueryTileAttention#supports}. */
  public static boolean supports(KvPool kv) {
    return QueryTileAttention.supports(kv);
  }

  /**
   * Attends the query heads that read KV heads {@code [firstKvHead, firstKvHead + kvHeads)}: heads
   * {@code firstKvHead * group} onwards, {@code group} per KV head.
   *
   * @param q the token's queries, head h at {@code q[qOff + h * headDim ..]}
   * @param out the outputs, laid out as {@code q} from {@code outOff}
   * @param reqToToken the request-to-token table; the context's slots are {@code reqToToken[rowBase
   *     .. rowBase + contextLen)}
   */
  public void attend(
      int layer,
      float[] q,
      int qOff,
      float[] out,
      int outOff,
      int firstKvHead,
      int kvHeads,
      int group,
      int[] reqToToken,
      int rowBase,
      int contextLen) {
    int heads = kvHeads * group;
    if (heads > maxHeads || heads < 1) {
      throw new IllegalArgumentException("1 to " + maxHeads + " heads, not " + heads);
    }
    int firstHead = firstKvHead * group;
    int stride = padded(heads);
    int kvOff = firstKvHead * headDim;
    KvRows keys = kv.keys(layer);
    int queries = qOff + firstHead * headDim;
    if (headDim == LANES && group == 2 && heads == LANES) {
      scoresPairs(keys, q, queries, reqToToken, rowBase, kvOff, contextLen);
    } else {
      scores(keys, q, queries, heads, group, stride, reqToToken, rowBase, kvOff, contextLen);
    }
    if (softCap > 0) {
      capScores(stride, contextLen);
    }
    softmax(stride, contextLen);
    int pairs = heads * (headDim / LANES);
    KvRows values = kv.values(layer);
    for (int first = 0; first < pairs; first += LANES) {
      values(
          values,
          out,
          outOff + firstHead * headDim,
          first,
          pairs,
          group,
          stride,
          reqToToken,
          rowBase,
          kvOff,
          contextLen);
    }
  }

  /**
   * {@code scores[j * stride + k]}: head k's scaled score at position j; lanes past the last head
   * hold zero, so every vector pass below stays finite. Each lane's maximum goes to {@link
   * #maxima}.
   */
  private void scores(
      KvRows keys,
      float[] q,
      int qOff,
      int heads,
      int group,
      int stride,
      int[] reqToToken,
      int rowBase,
      int kvOff,
      int contextLen) {
    boolean direct = keys.type() == KvStoreType.FP32;
    float[] src = direct ? keys.floats() : staged;
    int width = heads / group * headDim;
    Arrays.fill(maxima, 0, stride, Float.NEGATIVE_INFINITY);
    for (int j = 0; j < contextLen; j++) {
      int e = reqToToken[rowBase + j] * rowWidth + kvOff;
      int at = e;
      if (!direct) {
        KvVectors.toFloats(keys, e, staged, width);
        at = 0;
      }
      // KV head by KV head: no division in the loop (an integer division costs tens of cycles).
      for (int g = 0, k = 0; k < heads; g++) {
        int ke = at + g * headDim;
        for (int m = 0; m < group; m++, k++) {
          int qk = qOff + k * headDim;
          FloatVector acc = FloatVector.zero(S);
          for (int i = 0; i < headDim; i += LANES) {
            acc =
                FloatVector.fromArray(S, q, qk + i).fma(FloatVector.fromArray(S, src, ke + i), acc);
          }
          acc.intoArray(products, k * LANES);
        }
      }
      int sb = j * stride;
      for (int k = 0; k < heads; k++) {
        scores[sb + k] = GemmKernels.sum8(products, k * LANES) * scale;
      }
      for (int k = heads; k < stride; k++) {
        scores[sb + k] = 0f;
      }
      for (int b = 0; b < stride; b += LANES) {
        FloatVector.fromArray(S, maxima, b)
            .max(FloatVector.fromArray(S, scores, sb + b))
            .intoArray(maxima, b);
      }
    }
  }

  /**
   * {@link #scores} for eight heads of eight elements in four pairs (stories260K's shape): the
   * heads' scores computed side by side, lane h holding head h, with no horizontal sums. Element i
   * of every head's product is one vector, the queries' element i times each lane's key element i
   * (four broadcasts blended); the eight are added left to right, the order {@link
   * GemmKernels#sum8} adds one head's lanes. Keys are read where they lie (an fp32 pool) or from a
   * row staged as floats, so the loop holds no branch on the store type.
   */
  private void scoresPairs(
      KvRows keys, float[] q, int qOff, int[] reqToToken, int rowBase, int kvOff, int contextLen) {
    for (int h = 0; h < LANES; h++) {
      for (int i = 0; i < LANES; i++) {
        products[i * LANES + h] = q[qOff + h * LANES + i];
      }
    }
    FloatVector q0 = FloatVector.fromArray(S, products, 0);
    FloatVector q1 = FloatVector.fromArray(S, products, LANES);
    FloatVector q2 = FloatVector.fromArray(S, products, 2 * LANES);
    FloatVector q3 = FloatVector.fromArray(S, products, 3 * LANES);
    FloatVector q4 = FloatVector.fromArray(S, products, 4 * LANES);
    FloatVector q5 = FloatVector.fromArray(S, products, 5 * LANES);
    FloatVector q6 = FloatVector.fromArray(S, products, 6 * LANES);
    FloatVector q7 = FloatVector.fromArray(S, products, 7 * LANES);
    FloatVector zero = FloatVector.zero(S);
    FloatVector max = FloatVector.broadcast(S, Float.NEGATIVE_INFINITY);
    boolean direct = keys.type() == KvStoreType.FP32;
    float[] src = direct ? keys.floats() : staged;
    for (int j = 0; j < contextLen; j++) {
      int e = reqToToken[rowBase + j] * rowWidth + kvOff;
      int at = e;
      if (!direct) {
        KvVectors.toFloats(keys, e, staged, 4 * LANES);
        at = 0;
      }
      FloatVector s =
          q0.fma(keyColumn(src, at), zero)
              .add(q1.fma(keyColumn(src, at + 1), zero))
              .add(q2.fma(keyColumn(src, at + 2), zero))
              .add(q3.fma(keyColumn(src, at + 3), zero))
              .add(q4.fma(keyColumn(src, at + 4), zero))
              .add(q5.fma(keyColumn(src, at + 5), zero))
              .add(q6.fma(keyColumn(src, at + 6), zero))
              .add(q7.fma(keyColumn(src, at + 7), zero))
              .mul(scale);
      s.intoArray(scores, j * LANES);
      max = max.max(s);
    }
    max.intoArray(maxima, 0);
  }

  /**
   * Element i of each lane's key, from {@code src[at]} (i = 0): lanes 2g and 2g + 1 read KV head g.
   */
  private static FloatVector keyColumn(float[] src, int at) {
    return FloatVector.broadcast(S, src[at])
        .blend(FloatVector.broadcast(S, src[at + LANES]), PAIR_1)
        .blend(FloatVector.broadcast(S, src[at + 2 * LANES]), PAIR_2)
        .blend(FloatVector.broadcast(S, src[at + 3 * LANES]), PAIR_3);
  }

  /**
   * Every score capped, and each lane's maximum of the capped scores taken again (the cap keeps the
   * order, but the maximum is taken afresh rather than trusted to rounding).
   */
  private void capScores(int stride, int contextLen) {
    SoftCap.apply(scores, 0, contextLen * stride, softCap);
    Arrays.fill(maxima, 0, stride, Float.NEGATIVE_INFINITY);
    for (int j = 0; j < contextLen; j++) {
      for (int b = 0; b < stride; b += LANES) {
        FloatVector.fromArray(S, maxima, b)
            .max(FloatVector.fromArray(S, scores, j * stride + b))
            .intoArray(maxima, b);
      }
    }
  }

  /**
   * Each lane's softmax over positions, in place: weights, each already times 1 / sum. The maxima
   * come from the scores' pass (the maximum of a set does not depend on the order it is taken in).
   */
  private void softmax(int stride, int contextLen) {
    for (int b = 0; b < stride; b += LANES) {
      FastExp.expLanes(scores, b, stride, contextLen, maxima, b, null, 0, sums, b);
      FloatVector.broadcast(S, 1f).div(FloatVector.fromArray(S, sums, b)).intoArray(sums, b);
    }
    for (int j = 0; j < contextLen; j++) {
      for (int b = 0; b < stride; b += LANES) {
        int at = j * stride + b;
        FloatVector.fromArray(S, scores, at)
            .mul(FloatVector.fromArray(S, sums, b))
            .intoArray(scores, at);
      }
    }
  }

  /**
   * Eight (head, slice of eight elements) pairs from {@code first}, each its own accumulator, the
   * weighted values summed in position order. Pairs past the last are served as the last one and
   * not written. Values are read where they lie (an fp32 pool) or from the part of the row these
   * pairs read, staged as floats.
   */
  private void values(
      KvRows values,
      float[] out,
      int outOff,
      int first,
      int pairs,
      int group,
      int stride,
      int[] reqToToken,
      int rowBase,
      int kvOff,
      int contextLen) {
    int slices = headDim / LANES;
    int lo = Integer.MAX_VALUE;
    int hi = 0;
    for (int k = 0; k < LANES; k++) {
      int p = Math.min(first + k, pairs - 1);
      pairWeight[k] = p / slices;
      pairOffset[k] = valueOffset(p / slices, p % slices, group);
      lo = Math.min(lo, pairOffset[k]);
      hi = Math.max(hi, pairOffset[k] + LANES);
    }
    boolean direct = values.type() == KvStoreType.FP32;
    float[] src = direct ? values.floats() : staged;
    int o0 = pairOffset[0];
    int o1 = pairOffset[1];
    int o2 = pairOffset[2];
    int o3 = pairOffset[3];
    int o4 = pairOffset[4];
    int o5 = pairOffset[5];
    int o6 = pairOffset[6];
    int o7 = pairOffset[7];
    int w0 = pairWeight[0];
    int w1 = pairWeight[1];
    int w2 = pairWeight[2];
    int w3 = pairWeight[3];
    int w4 = pairWeight[4];
    int w5 = pairWeight[5];
    int w6 = pairWeight[6];
    int w7 = pairWeight[7];
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = FloatVector.zero(S);
    FloatVector a2 = FloatVector.zero(S);
    FloatVector a3 = FloatVector.zero(S);
    FloatVector a4 = FloatVector.zero(S);
    FloatVector a5 = FloatVector.zero(S);
    FloatVector a6 = FloatVector.zero(S);
    FloatVector a7 = FloatVector.zero(S);
    for (int j = 0; j < contextLen; j++) {
      int e = reqToToken[rowBase + j] * rowWidth + kvOff;
      // Offset o of the first KV head's row lies at src[at + o].
      int at = e;
      if (!direct) {
        KvVectors.toFloats(values, e + lo, staged, hi - lo);
        at = -lo;
      }
      int sb = j * stride;
      a0 =
          FloatVector.fromArray(S, src, at + o0).fma(FloatVector.broadcast(S, scores[sb + w0]), a0);
      a1 =
          FloatVector.fromArray(S, src, at + o1).fma(FloatVector.broadcast(S, scores[sb + w1]), a1);
      a2 =
          FloatVector.fromArray(S, src, at + o2).fma(FloatVector.broadcast(S, scores[sb + w2]), a2);
      a3 =
          FloatVector.fromArray(S, src, at + o3).fma(FloatVector.broadcast(S, scores[sb + w3]), a3);
      a4 =
          FloatVector.fromArray(S, src, at + o4).fma(FloatVector.broadcast(S, scores[sb + w4]), a4);
      a5 =
          FloatVector.fromArray(S, src, at + o5).fma(FloatVector.broadcast(S, scores[sb + w5]), a5);
      a6 =
          FloatVector.fromArray(S, src, at + o6).fma(FloatVector.broadcast(S, scores[sb + w6]), a6);
      a7 =
          FloatVector.fromArray(S, src, at + o7).fma(FloatVector.broadcast(S, scores[sb + w7]), a7);
    }
    // Pair p is head p / slices, elements (p % slices) * 8 onwards: out[outOff + p * 8 ..).
    int at = outOff + first * LANES;
    int left = pairs - first;
    a0.intoArray(out, at);
    if (left > 1) {
      a1.intoArray(out, at + LANES);
    }
    if (left > 2) {
      a2.intoArray(out, at + 2 * LANES);
    }
    if (left > 3) {
      a3.intoArray(out, at + 3 * LANES);
    }
    if (left > 4) {
      a4.intoArray(out, at + 4 * LANES);
    }
    if (left > 5) {
      a5.intoArray(out, at + 5 * LANES);
    }
    if (left > 6) {
      a6.intoArray(out, at + 6 * LANES);
    }
    if (left > 7) {
      a7.intoArray(out, at + 7 * LANES);
    }
  }

  /** Value offset, within the first KV head's row, of head k's value slice. */
  private int valueOffset(int k, int slice, int group) {
    return (k / group) * headDim + slice * LANES;
  }

  private static VectorMask<Float> pair(int g) {
    boolean[] lanes = new boolean[LANES];
    lanes[2 * g] = true;
    lanes[2 * g + 1] = true;
    return VectorMask.fromArray(S, lanes, 0);
  }

  private static int padded(int heads) {
    return (heads + LANES - 1) / LANES * LANES;
  }
}
