package io.flinfer.runtime.kernel;

/**
 * A batch's activations quantized for the K-quant products as ggml quantizes them ({@code q8_K}):
 * each run of 256 values of a token becomes integers in [-127, 127] with one float scale, the value
 * of largest magnitude mapping to -127 or 127, and the sums of each 32 of them are kept for the
 * sub-block mins. A token's quantization depends on that token alone, so a row gets the same
 * integers whatever else is in the batch. One instance per thread is reused ({@link
 * #ofThisThread}), so a step allocates nothing once the arrays have grown to the largest batch.
 */
public final class Q8KActivations {
  /** Values per scale: one K-quant super-block. */
  public static final int SUPER = 256;

  private static final ThreadLocal<Q8KActivations> PER_THREAD =
      ThreadLocal.withInitial(Q8KActivations::new);

  private float[] source = new float[0];
  private int tokens;
  private short[] values = new short[0];
  private float[] floats = new float[0];
  private float[] scales = new float[0];
  private int[] sums = new int[0];
  private int cols;

  /** This thread's instance. */
  public static Q8KActivations ofThisThread() {
    return PER_THREAD.get();
  }

  /**
   * Quantizes {@code tokens} rows of {@code cols} values, row {@code t} at {@code x[t * cols..]};
   * {@code cols} a multiple of {@link #SUPER}.
   */
  public void quantize(float[] x, int tokens, int cols) {
    if (cols % SUPER != 0) {
      throw new IllegalArgumentException("columns must fill whole super-blocks: " + cols);
    }
    int n = Math.multiplyExact(tokens, cols);
    // The parts of one product (and the products sharing an input) bring the same activations
    // again: a comparison, far cheaper than quantizing, finds them.
    if (cols == this.cols
        && tokens == this.tokens
        && java.util.Arrays.equals(x, 0, n, source, 0, n)) {
      return;
    }
    if (values.length < n) {
      source = new float[n];
      values = new short[n];
      floats = new float[n / SUPER * KQuantDots.SPAN];
      scales = new float[n / SUPER];
      sums = new int[n / 32];
    }
    System.arraycopy(x, 0, source, 0, n);
    this.cols = cols;
    this.tokens = tokens;
    for (int b = 0; b < n / SUPER; b++) {
      scales[b] = quantizeBlock(x, b * SUPER, values, sums);
    }
    if (tokens > 1) {
      for (int b = 0; b < n / SUPER; b++) {
        int f = b * KQuantDots.SPAN;
        for (int i = 0; i < SUPER; i++) {
          floats[f + i] = values[b * SUPER + i];
        }
        for (int j = 0; j < 8; j++) {
          floats[f + SUPER + j] = sums[b * 8 + j];
        }
      }
    }
  }

  /**
   * ggml's rule for one super-block at {@code x[off..]}: the scale is {@code max / -127} for the
   * signed value {@code max} of largest magnitude, each value {@code rint(x * -127 / max)} (ties to
   * even) capped at 127; an all-zero block has scale 0. Returns the scale.
   */
  static float quantizeBlock(float[] x, int off, short[] q, int[] sums) {
    float max = 0;
    float amax = 0;
    for (int i = off; i < off + SUPER; i++) {
      float ax = Math.abs(x[i]);
      if (ax > amax) {
        amax = ax;
        max = x[i];
      }
    }
    if (amax == 0) {
      java.util.Arrays.fill(q, off, off + SUPER, (short) 0);
      java.util.Arrays.fill(sums, off / 32, off / 32 + SUPER / 32, 0);
      return 0;
    }
    float iscale = -127f / max;
    for (int s = off; s < off + SUPER; s += 32) {
      int sum = 0;
      for (int i = s; i < s + 32; i++) {
        int v = Math.max(-127, Math.min(127, nearestInt(iscale * x[i])));
        q[i] = (short) v;
        sum += v;
      }
      sums[s / 32] = sum;
    }
    return 1 / iscale;
  }

  /**
   * {@code f} rounded to the nearest integer, ties to even, for |f| below 2^22: ggml's trick of
   * adding 1.5 * 2^23, which leaves the integer in the low mantissa bits (Math.rint is not an
   * intrinsic here, and is several times slower). A NaN gives 0.
   */
  static int nearestInt(float f) {
    return (Float.floatToRawIntBits(f + 12582912f) & 0x007fffff) - 0x00400000;
  }

  /** The quantized values, token {@code t}'s at {@code t * cols}. */
  short[] values() {
    return values;
  }

  /**
   * For a batch of more than one token: each super-block's 256 values then its 8 sums of 32, as
   * floats (exact), {@link KQuantDots#SPAN} floats a super-block, token after token.
   */
  float[] floats() {
    return floats;
  }

  /**
   * The scales, one per super-block: token {@code t}'s block {@code b} at {@code t * cols / 256 +
   * b}.
   */
  float[] scales() {
    return scales;
  }

  /**
   * The sums of each 32 values: token {@code t}'s sub-block {@code j} at {@code t * cols / 32 + j}.
   */
  int[] sums() {
    return sums;
  }

  /** Columns per token of the last {@link #quantize}. */
  int cols() {
    return cols;
  }
}
