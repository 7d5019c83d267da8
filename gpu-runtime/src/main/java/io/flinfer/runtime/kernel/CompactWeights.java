package io.flinfer.runtime.kernel;

/**
 * A weight matrix copied onto the heap in its compact form (quantized blocks, 16-bit floats): rows
 * decode to floats for a batch, and one token is multiplied converting in registers, with the bits
 * the decoded rows give.
 */
public interface CompactWeights {
  /** Row {@code row} as floats into {@code dst[off..off + cols)}. */
  void decodeRow(int row, float[] dst, int off);

  /**
   * {@code out[o] = sum_i W[o][i] * x[i]} for rows o in [oFrom, oTo) of one token, each reduced as
   * {@link Gemm} reduces a decoded row (one 8-lane accumulator, lanes summed in order, then the
   * scalar tail); {@code tmp} holds 32 floats.
   */
  void multiplyToken(float[] x, float[] out, int oFrom, int oTo, float[] tmp);

  /**
   * As {@link #multiplyToken} for {@code tokens} tokens ({@code out[t * outStride + o]}), where
   * this form has a kernel for that batch on this CPU, with the same bits; false, computing
   * nothing, where the batch should go through decoded rows. {@code tmp} holds {@link Gemm#SCRATCH}
   * floats.
   */
  default boolean multiplyTokens(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] tmp) {
    return false;
  }
}
