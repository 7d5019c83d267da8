package io.flinfer.runtime.kernel;

/**
 * Gemma 2's soft capping of logits, {@code cap * tanh(x / cap)}: it bends scores and logits
 * smoothly into (-cap, cap). Computed as llama.cpp computes it (the value times the float {@code 1
 * / cap}, its hyperbolic tangent, times {@code cap}), one value at a time with {@link
 * StrictMath#tanh}, so every kernel that caps a score gets the same bits.
 */
public final class SoftCap {
  private SoftCap() {}

  /** {@code cap * tanh(x / cap)}; minus infinity (a masked score) stays minus infinity. */
  public static float apply(float x, float cap) {
    if (x == Float.NEGATIVE_INFINITY) {
      return x;
    }
    return cap * (float) StrictMath.tanh(x * (1f / cap));
  }

  /** {@link #apply} to {@code a[from..to)} in place. */
  public static void apply(float[] a, int from, int to, float cap) {
    for (int i = from; i < to; i++) {
      a[i] = apply(a[i], cap);
    }
  }
}
