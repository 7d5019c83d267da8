package io.flinfer.runtime.kernel;

/** The element-wise pieces of a Llama block, per token, each in one fixed order. */
public final class Ops {
  private Ops() {}

  /** {@code out = w * x / rms(x)} over {@code n} values (llama2.c order of operations). */
  public static void rmsNorm(
      float[] out, int outOff, float[] x, int xOff, float[] w, int n, float eps) {
    float ss = 0f;
    for (int i = 0; i < n; i++) {
      ss += x[xOff + i] * x[xOff + i];
    }
    ss /= n;
    ss += eps;
    ss = 1f / (float) Math.sqrt(ss);
    for (int i = 0; i < n; i++) {
      out[outOff + i] = w[i] * (ss * x[xOff + i]);
    }
  }

  /** Rotates adjacent pairs (2i, 2i+1) of each head by the angles of {@code position}. */
  public static void rope(
      float[] v, int off, int width, int headDim, RopeTable rope, int position) {
    float[] cos = rope.cos();
    float[] sin = rope.sin();
    int half = headDim / 2;
    int base = position * half;
    for (int h = 0; h < width; h += headDim) {
      for (int i = 0; i < half; i++) {
        int p = off + h + 2 * i;
        float c = cos[base + i];
        float s = sin[base + i];
        float v0 = v[p];
        float v1 = v[p + 1];
        v[p] = v0 * c - v1 * s;
        v[p + 1] = v0 * s + v1 * c;
      }
    }
  }

  /** {@code a = silu(a) * b} over {@code n} values. */
  public static void swiGlu(float[] a, float[] b, int off, int n) {
    FastExp.swiGlu(a, b, off, off + n);
  }

  public static void add(float[] x, float[] y, int off, int n) {
    for (int i = off; i < off + n; i++) {
      x[i] += y[i];
    }
  }
}
