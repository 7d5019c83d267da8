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
   * {@code exp(x)} in every lane, the same bits as {@link #exp(float)}: for kernels that fuse the
   * exponential into their own loop (small enough for the compiler to inline, so no vector is
   * boxed).
   */
  public static FloatVector exp(FloatVector x) {
    x = x.max(MIN).min(MAX);
    FloatVector n = x.mul(LOG2E).add(ROUND_MAGIC).sub(ROUND_MAGIC);
    FloatVector r = n.fma(c(-LN2_HI), x);
    r = n.fma(c(-LN2_LO), r);
    FloatVector p = c(C7).fma(r, c(C6));
    p = p.fma(r, c(C5));
    p = p.fma(r, c(C4));
    p = p.fma(r, c(C3));
    p = p.fma(r, c(C2));
    p = p.fma(r, c(1f));
    p = p.fma(r, c(1f));
    IntVector bits = n.add(EXPONENT_MAGIC).reinterpretAsInts().lanewise(VectorOperators.LSHL, 23);
    return p.mul(bits.reinterpretAsFloats());
  }

  /**
   * {@code out[i] = exp((in[i] - shift) * scale)} for i in [from, to), and their sum, in one fixed
   * order: blocks of 512 values summed in float lanes, blocks added in double. {@code out} may be
   * {@code in}, or null to only sum.
   */
  public static double expSum(
      float[] in, int from, int to, float shift, float scale, float[] out, int outFrom) {
    return apply(in, from, to, shift, scale, out, outFrom, null, true);
  }

  /**
   * {@code out[i] = exp(in[i] - shift)} for i in [from, to), each as {@link #expSum} computes it
   * with scale 1; {@code out} may be {@code in}.
   */
  public static void exp(float[] in, int from, int to, float shift, float[] out) {
    apply(in, from, to, shift, 1f, out, from, null, false);
  }

  /** SwiGLU: {@code a[i] = silu(a[i]) * b[i]} for i in [from, to). */
  public static void swiGlu(float[] a, float[] b, int from, int to) {
    apply(a, from, to, 0f, -1f, a, from, b, false);
  }

  /**
   * The one vector loop: {@code e = exp((in[i] - shift) * scale)}, then either stored and summed,
   * or (with {@code gate}) {@code out[i] = in[i] * (1 / (1 + e)) * gate[i]}.
   */
  private static double apply(
      float[] in,
      int from,
      int to,
      float shift,
      float scale,
      float[] out,
      int outFrom,
      float[] gate,
      boolean sum) {
    double total = 0;
    int lanes = S.length();
    int i = from;
    while (i + lanes <= to) {
      FloatVector acc = FloatVector.zero(S);
      int end = Math.min(to - (to - i) % lanes, i + 512);
      for (; i < end; i += lanes) {
        FloatVector v = FloatVector.fromArray(S, in, i);
        // Written out, not a call to exp(FloatVector): this loop is large, and a vector passed to
        // a method the compiler does not inline is boxed.
        FloatVector x = v.sub(shift).mul(scale).max(MIN).min(MAX);
        FloatVector n = x.mul(LOG2E).add(ROUND_MAGIC).sub(ROUND_MAGIC);
        FloatVector r = n.fma(c(-LN2_HI), x);
        r = n.fma(c(-LN2_LO), r);
        FloatVector p = c(C7).fma(r, c(C6));
        p = p.fma(r, c(C5));
        p = p.fma(r, c(C4));
        p = p.fma(r, c(C3));
        p = p.fma(r, c(C2));
        p = p.fma(r, c(1f));
        p = p.fma(r, c(1f));
        IntVector bits =
            n.add(EXPONENT_MAGIC).reinterpretAsInts().lanewise(VectorOperators.LSHL, 23);
        FloatVector e = p.mul(bits.reinterpretAsFloats());
        if (gate != null) {
          v.mul(c(1f).div(e.add(1f)))
              .mul(FloatVector.fromArray(S, gate, i))
              .intoArray(out, outFrom + i - from);
        } else {
          if (out != null) {
            e.intoArray(out, outFrom + i - from);
          }
          acc = acc.add(e);
        }
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
      if (gate != null) {
        out[outFrom + i - from] = in[i] * (1f / (1f + e)) * gate[i];
      } else {
        if (out != null) {
          out[outFrom + i - from] = e;
        }
        total += e;
      }
    }
    return total;
  }

  private static FloatVector c(float v) {
    return FloatVector.broadcast(S, v);
  }
}
