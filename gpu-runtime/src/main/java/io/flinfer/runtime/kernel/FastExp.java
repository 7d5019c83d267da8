package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@code exp(x)} for x in [-87.3, 88] (clamped outside), within 2 ulp, built only from IEEE add,
 * multiply and fused multiply-add, so the scalar and vector forms give the same bits in every JIT
 * tier. Range reduction {@code x = n ln2 + r}, |r| <= ln2/2, then a degree-7 Taylor polynomial.
 */
public final class FastExp {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final float LOG2E = 1.44269504f;
  private static final float LN2_HI = 0.693359375f;
  private static final float LN2_LO = -2.12194440e-4f;
  private static final float MIN = -87.3f;
  private static final float MAX = 88f;

  /** Adding and subtracting 1.5 x 2^23 rounds to an integer (half to even). */
  private static final float ROUND_MAGIC = 12582912f;

  private static final float EXPONENT_MAGIC = 8388608f + 127f;
  private static final float C2 = 1f / 2;
  private static final float C3 = 1f / 6;
  private static final float C4 = 1f / 24;
  private static final float C5 = 1f / 120;
  private static final float C6 = 1f / 720;
  private static final float C7 = 1f / 5040;

  private FastExp() {}

  public static float exp(float x) {
    x = Math.min(Math.max(x, MIN), MAX);
    float n = (float) Math.rint(x * LOG2E);
    float r = Math.fma(n, -LN2_HI, x);
    r = Math.fma(n, -LN2_LO, r);
    float p = Math.fma(C7, r, C6);
    p = Math.fma(p, r, C5);
    p = Math.fma(p, r, C4);
    p = Math.fma(p, r, C3);
    p = Math.fma(p, r, C2);
    p = Math.fma(p, r, 1f);
    p = Math.fma(p, r, 1f);
    return p * Float.intBitsToFloat(Float.floatToRawIntBits(n + EXPONENT_MAGIC) << 23);
  }

  /**
   * Softmax numerators of values held in lanes, rows of eight: {@code a[at] = exp(a[at] -
   * max[maxOff + k])} in place, at {@code at = from + j * stride + k} for positions j in [0, rows)
   * and lanes k in [0, 8), each lane's numerators summed in position order into {@code sums[sumsOff
   * + k]}. With {@code last}, lane k's numerators at positions j >= {@code maskFrom} past {@code
   * last[k]} are zero. Each numerator has the bits of {@link #exp(float)}; the exponential is
   * written out as in {@link #swiGlu}, and the lanes come and go through arrays, so no vector
   * crosses a call.
   */
  static void expLanes(
      float[] a,
      int from,
      int stride,
      int rows,
      float[] max,
      int maxOff,
      float[] last,
      int maskFrom,
      float[] sums,
      int sumsOff) {
    FloatVector lnHi = FloatVector.broadcast(S, -LN2_HI);
    FloatVector lnLo = FloatVector.broadcast(S, -LN2_LO);
    FloatVector c7 = FloatVector.broadcast(S, C7);
    FloatVector c6 = FloatVector.broadcast(S, C6);
    FloatVector c5 = FloatVector.broadcast(S, C5);
    FloatVector c4 = FloatVector.broadcast(S, C4);
    FloatVector c3 = FloatVector.broadcast(S, C3);
    FloatVector c2 = FloatVector.broadcast(S, C2);
    FloatVector one = FloatVector.broadcast(S, 1f);
    FloatVector zero = FloatVector.zero(S);
    FloatVector m = FloatVector.fromArray(S, max, maxOff);
    FloatVector lastPosition =
        last == null
            ? FloatVector.broadcast(S, Float.MAX_VALUE)
            : FloatVector.fromArray(S, last, 0);
    int unmasked = last == null ? rows : Math.min(rows, maskFrom);
    FloatVector sum = zero;
    for (int j = 0; j < rows; j++) {
      int at = from + j * stride;
      FloatVector x = FloatVector.fromArray(S, a, at).sub(m).max(MIN).min(MAX);
      FloatVector n = x.mul(LOG2E).add(ROUND_MAGIC).sub(ROUND_MAGIC);
      FloatVector r = n.fma(lnHi, x);
      r = n.fma(lnLo, r);
      FloatVector p = c7.fma(r, c6);
      p = p.fma(r, c5);
      p = p.fma(r, c4);
      p = p.fma(r, c3);
      p = p.fma(r, c2);
      p = p.fma(r, one);
      p = p.fma(r, one);
      IntVector bits = n.add(EXPONENT_MAGIC).reinterpretAsInts().lanewise(VectorOperators.LSHL, 23);
      FloatVector e = p.mul(bits.reinterpretAsFloats());
      if (j >= unmasked) {
        e = e.blend(zero, lastPosition.compare(VectorOperators.LT, (float) j));
      }
      e.intoArray(a, at);
      sum = sum.add(e);
    }
    sum.intoArray(sums, sumsOff);
  }

  /**
   * {@code out[i] = exp((in[i] - shift) * scale)} for i in [from, to), and their sum, in one fixed
   * order: blocks of 512 values summed in float lanes, blocks added in double. {@code out} may be
   * {@code in}, or null to only sum.
   */
  public static double expSum(
      float[] in, int from, int to, float shift, float scale, float[] out, int outFrom) {
    return apply(in, from, to, shift, scale, out, outFrom, true);
  }

  /**
   * {@code out[i] = exp(in[i] - shift)} for i in [from, to), each as {@link #expSum} computes it
   * with scale 1; {@code out} may be {@code in}.
   */
  public static void exp(float[] in, int from, int to, float shift, float[] out) {
    apply(in, from, to, shift, 1f, out, from, false);
  }

  /**
   * SwiGLU: {@code a[i] = silu(a[i]) * b[i]} for i in [from, to), {@code silu(v) = v * (1 / (1 +
   * exp((v - 0) * -1)))}, the same bits in the vector body and the scalar tail (which elements fall
   * in the tail depends on the batch). The exponential is written out with its constants in locals
   * and no call of this class's in the loop: the loop is small, so the compiler inlines it into the
   * forward pass, where the node budget runs out and a helper left as a call would return a boxed
   * vector on every turn.
   */
  public static void swiGlu(float[] a, float[] b, int from, int to) {
    FloatVector lnHi = FloatVector.broadcast(S, -LN2_HI);
    FloatVector lnLo = FloatVector.broadcast(S, -LN2_LO);
    FloatVector c7 = FloatVector.broadcast(S, C7);
    FloatVector c6 = FloatVector.broadcast(S, C6);
    FloatVector c5 = FloatVector.broadcast(S, C5);
    FloatVector c4 = FloatVector.broadcast(S, C4);
    FloatVector c3 = FloatVector.broadcast(S, C3);
    FloatVector c2 = FloatVector.broadcast(S, C2);
    FloatVector one = FloatVector.broadcast(S, 1f);
    int lanes = S.length();
    int i = from;
    for (; i + lanes <= to; i += lanes) {
      FloatVector v = FloatVector.fromArray(S, a, i);
      FloatVector x = v.sub(0f).mul(-1f).max(MIN).min(MAX);
      FloatVector n = x.mul(LOG2E).add(ROUND_MAGIC).sub(ROUND_MAGIC);
      FloatVector r = n.fma(lnHi, x);
      r = n.fma(lnLo, r);
      FloatVector p = c7.fma(r, c6);
      p = p.fma(r, c5);
      p = p.fma(r, c4);
      p = p.fma(r, c3);
      p = p.fma(r, c2);
      p = p.fma(r, one);
      p = p.fma(r, one);
      IntVector bits = n.add(EXPONENT_MAGIC).reinterpretAsInts().lanewise(VectorOperators.LSHL, 23);
      FloatVector e = p.mul(bits.reinterpretAsFloats());
      v.mul(one.div(e.add(one))).mul(FloatVector.fromArray(S, b, i)).intoArray(a, i);
    }
    for (; i < to; i++) {
      float e = exp((a[i] - 0f) * -1f);
      a[i] = a[i] * (1f / (1f + e)) * b[i];
    }
  }

  /**
   * The exponentials' vector loop: {@code e = exp((in[i] - shift) * scale)}, stored and summed.
   * Written out as in {@link #swiGlu}, constants in locals.
   */
  private static double apply(
      float[] in,
      int from,
      int to,
      float shift,
      float scale,
      float[] out,
      int outFrom,
      boolean sum) {
    FloatVector lnHi = FloatVector.broadcast(S, -LN2_HI);
    FloatVector lnLo = FloatVector.broadcast(S, -LN2_LO);
    FloatVector c7 = FloatVector.broadcast(S, C7);
    FloatVector c6 = FloatVector.broadcast(S, C6);
    FloatVector c5 = FloatVector.broadcast(S, C5);
    FloatVector c4 = FloatVector.broadcast(S, C4);
    FloatVector c3 = FloatVector.broadcast(S, C3);
    FloatVector c2 = FloatVector.broadcast(S, C2);
    FloatVector one = FloatVector.broadcast(S, 1f);
    double total = 0;
    int lanes = S.length();
    int i = from;
    while (i + lanes <= to) {
      FloatVector acc = FloatVector.zero(S);
      int end = Math.min(to - (to - i) % lanes, i + 512);
      for (; i < end; i += lanes) {
        FloatVector x = FloatVector.fromArray(S, in, i).sub(shift).mul(scale).max(MIN).min(MAX);
        FloatVector n = x.mul(LOG2E).add(ROUND_MAGIC).sub(ROUND_MAGIC);
        FloatVector r = n.fma(lnHi, x);
        r = n.fma(lnLo, r);
        FloatVector p = c7.fma(r, c6);
        p = p.fma(r, c5);
        p = p.fma(r, c4);
        p = p.fma(r, c3);
        p = p.fma(r, c2);
        p = p.fma(r, one);
        p = p.fma(r, one);
        IntVector bits =
            n.add(EXPONENT_MAGIC).reinterpretAsInts().lanewise(VectorOperators.LSHL, 23);
        FloatVector e = p.mul(bits.reinterpretAsFloats());
        if (out != null) {
          e.intoArray(out, outFrom + i - from);
        }
        acc = acc.add(e);
      }
      if (!sum) {
        continue;
      }
      total += acc.lane(0);
      total += acc.lane(1);
      total += acc.lane(2);
      total += acc.lane(3);
      total += acc.lane(4);
      total += acc.lane(5);
      total += acc.lane(6);
      total += acc.lane(7);
    }
    for (; i < to; i++) {
      float e = exp((in[i] - shift) * scale);
      if (out != null) {
        out[outFrom + i - from] = e;
      }
      total += e;
    }
    return total;
  }
}
