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

  /**
   * Rotates each head's pairs by the angles of {@code position}: adjacent pairs (2i, 2i+1), or with
   * NEOX-style rope the halves (i, i + headDim/2).
   */
  public static void rope(
      float[] v, int off, int width, int headDim, RopeTable rope, int position) {
    float[] cos = rope.cos();
    float[] sin = rope.sin();
    int half = headDim / 2;
    int base = position * half;
    int stride = rope.pairStride();
    int step = stride == 1 ? 2 : 1;
    for (int h = 0; h < width; h += headDim) {
      for (int i = 0; i < half; i++) {
        int p = off + h + i * step;
        float c = cos[base + i];
        float s = sin[base + i];
        float v0 = v[p];
        float v1 = v[p + stride];
        v[p] = v0 * c - v1 * s;
        v[p + stride] = v0 * s + v1 * c;
      }
    }
  }

  /**
   * RMS-normalises each of the {@code width / headDim} heads at {@code v[off..]} in place with the
   * per-head weights {@code w} (Qwen3's q/k norm).
   */
  public static void headRmsNorm(float[] v, int off, int width, int headDim, float[] w, float eps) {
    for (int h = off; h < off + width; h += headDim) {
      rmsNorm(v, h, v, h, w, headDim, eps);
    }
  }

  /** {@code v[off + i] += b[i]} for every i of {@code b}. */
  public static void addBias(float[] v, int off, float[] b) {
    for (int i = 0; i < b.length; i++) {
      v[off + i] += b[i];
    }
  }

  /** {@code a = silu(a) * b} over {@code n} values. */
  public static void swiGlu(float[] a, float[] b, int off, int n) {
    FastExp.swiGlu(a, b, off, off + n);
  }

  /** {@code v[off .. off + n) *= factor}. */
  public static void scale(float[] v, int off, int n, float factor) {
    for (int i = off; i < off + n; i++) {
      v[i] *= factor;
    }
  }

  public static void add(float[] x, float[] y, int off, int n) {
    for (int i = off; i < off + n; i++) {
      x[i] += y[i];
    }
  }
}
