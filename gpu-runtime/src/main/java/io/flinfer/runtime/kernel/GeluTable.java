package io.flinfer.runtime.kernel;

import io.flinfer.memcache.HalfFloats;

/**
 * GELU with the tanh approximation, {@code 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))}, as
 * ggml's CPU backend computes it: the input rounded to half precision indexes a table of values
 * rounded to half precision, inputs at or below -10 give 0 and at or above 10 give x. Gemma's
 * logits against llama.cpp's depend on it (a float GELU differs from it by up to 2^-11 relative).
 * Owns the 65,536-entry table.
 */
public final class GeluTable {
  private static final float[] TABLE = new float[1 << 16];

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

  /** {@code gate[i] = gelu(gate[i]) * up[i]} for i in [off, off + n): GeGLU in place. */
  public static void geGlu(float[] gate, float[] up, int off, int n) {
    for (int i = off; i < off + n; i++) {
      gate[i] = apply(gate[i]) * up[i];
    }
  }
}
