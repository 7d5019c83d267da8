package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@code exp(x)} for x <= 0 (softmax after subtracting the maximum), within 2 ulp, built only from
 * IEEE add, multiply and fused multiply-add, so the scalar and vector forms give the same bits in
 * every JIT tier. Range reduction {@code x = n ln2 + r}, |r| <= ln2/2, then a degree-7 Taylor
 * polynomial.
 */
public final class FastExp {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final float LOG2E = 1.44269504f;
  private static final float LN2_HI = 0.693359375f;
  private static final float LN2_LO = -2.12194440e-4f;
  private static final float MIN = -87.3f;
  private static final float EXPONENT_MAGIC = 8388608f + 127f;
  private static final float C2 = 1f / 2;
  private static final float C3 = 1f / 6;
  private static final float C4 = 1f / 24;
  private static final float C5 = 1f / 120;
  private static final float C6 = 1f / 720;
  private static final float C7 = 1f / 5040;

  private FastExp() {}

  public static float exp(float x) {
    x = Math.max(x, MIN);
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
   * {@code out[i] = exp((in[i] - shift) * scale)} for i in [from, to), and their sum, in one fixed
   * order: blocks of 512 values summed in float lanes, blocks added in double. Vectors stay inside
   * this method: passed between methods the JIT may not inline, they would be boxed. {@code out}
   * may be {@code in}, or null to only sum.
   */
  public static double expSum(
      float[] in, int from, int to, float shift, float scale, float[] out, int outFrom) {
    double total = 0;
    int lanes = S.length();
    int i = from;
    while (i + lanes <= to) {
      FloatVector acc = FloatVector.zero(S);
      int end = Math.min(to - (to - i) % lanes, i + 512);
      for (; i < end; i += lanes) {
        FloatVector e = exp(FloatVector.fromArray(S, in, i).sub(shift).mul(scale));
        if (out != null) {
          e.intoArray(out, outFrom + i - from);
        }
        acc = acc.add(e);
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

  /** exp of each lane; the same bits as {@link #exp(float)} lane by lane. */
  public static FloatVector exp(FloatVector x) {
    x = x.max(MIN);
    FloatVector n = round(x.mul(LOG2E));
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
        ((IntVector) n.convert(VectorOperators.F2I, 0)).add(127).lanewise(VectorOperators.LSHL, 23);
    return p.mul(bits.reinterpretAsFloats());
  }

  private static FloatVector c(float v) {
    return FloatVector.broadcast(S, v);
  }

  /** Round half to even, as {@link Math#rint}, for |v| < 2^22. */
  private static FloatVector round(FloatVector v) {
    // Adding and subtracting 1.5 * 2^23 rounds to an integer in the current (nearest) mode.
    float magic = 12582912f;
    return v.add(magic).sub(magic);
  }
}
