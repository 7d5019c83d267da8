package io.flinfer.runtime.kernel;

import io.flinfer.memcache.HalfFloats;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * GELU with the tanh approximation, {@code 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))}, as
 * ggml's CPU backend computes it: the input rounded to half precision indexes a table of values
 * rounded to half precision, inputs at or below -10 give 0 and at or above 10 give x. Gemma's
 * logits against llama.cpp's depend on it (a float GELU differs from it by up to 2^-11 relative).
 * Owns the 65,536-entry table.
 */
public final class GeluTable {
  private static final float[] TABLE = new float[1 << 16];

  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final int L = S.length();

  /** Each thread's gather indices: no allocation per call. */
  private static final ThreadLocal<int[]> INDEX = ThreadLocal.withInitial(() -> new int[L]);

  /** The bits of 0.5f. */
  private static final int HALF_BITS = 0x3f000000;

  static {
    for (int h = 0; h < TABLE.length; h++) {
      float x = HalfFloats.fromHalf((short) h);
      TABLE[h] = HalfFloats.fromHalf(HalfFloats.toHalf(gelu(x)));
    }
  }

  private GeluTable() {}

  /** GELU of {@code x} in float arithmetic, as ggml's {@code ggml_gelu_f32}. */
  static float gelu(float x) {
    float inner = 0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x);
    return 0.5f * x * (1.0f + (float) Math.tanh(inner));
  }

  /** GELU of {@code x} as ggml's CPU backend computes it. */
  public static float apply(float x) {
    if (x <= -10f) {
      return 0f;
    }
    if (x >= 10f) {
      return x;
    }
    return TABLE[HalfFloats.toHalf(x) & 0xffff];
  }

  /**
   * {@code gate[i] = gelu(gate[i]) * up[i]} for i in [off, off + n): GeGLU in place, {@link
   * #apply}'s values. In vectors: each input's half-precision bits (to nearest, ties to even: a
   * normal half keeps 10 of the float's mantissa bits and takes the exponent less 112; below 2^-14
   * a half counts multiples of 2^-24, which adding 0.5 lays in the float's low bits) index the
   * table by a gather.
   */
  public static void geGlu(float[] gate, float[] up, int off, int n) {
    int[] index = INDEX.get();
    int i = off;
    for (; i + L <= off + n; i += L) {
      FloatVector x = FloatVector.fromArray(S, gate, i);
      IntVector b = x.reinterpretAsInts();
      IntVector a = b.and(0x7fffffff);
      IntVector normal =
          a.add(a.lanewise(VectorOperators.LSHR, 13).and(1))
              .add(0xfff)
              .lanewise(VectorOperators.LSHR, 13)
              .sub((127 - 15) << 10)
              .min(0x7c00);
      IntVector small = a.reinterpretAsFloats().add(0.5f).reinterpretAsInts().sub(HALF_BITS);
      IntVector half =
          normal
              .blend(small, a.compare(VectorOperators.LT, 0x38800000))
              .blend(0x7e00, a.compare(VectorOperators.GT, 0x7f800000))
              .or(b.lanewise(VectorOperators.LSHR, 16).and(0x8000));
      half.intoArray(index, 0);
      FloatVector g =
          FloatVector.fromArray(S, TABLE, 0, index, 0)
              .blend(0f, x.compare(VectorOperators.LE, -10f))
              .blend(x, x.compare(VectorOperators.GE, 10f));
      g.mul(FloatVector.fromArray(S, up, i)).intoArray(gate, i);
    }
    for (; i < off + n; i++) {
      gate[i] = apply(gate[i]) * up[i];
    }
  }

  /**
   * {@code gate[i] = apply(gate[i]) * up[i]} value by value: the reference {@link #geGlu} is held
   * to.
   */
  static void geGluReference(float[] gate, float[] up, int off, int n) {
    for (int i = off; i < off + n; i++) {
      gate[i] = apply(gate[i]) * up[i];
    }
  }
}
