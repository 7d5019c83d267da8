package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.HalfGemm;
import io.flinfer.runtime.kernel.HalfWeights;
import java.nio.ByteBuffer;

/**
 * A matrix of 16-bit floats (F16, BF16) copied onto the heap once at load ({@link HalfWeights}): a
 * token alone is multiplied converting in registers, a batch from rows decoded once for all its
 * tokens, with the same bits.
 */
abstract class HalfMatrix extends WeightMatrix {
  private final HalfWeights halves;

  HalfMatrix(ByteBuffer data, int rows, int cols, boolean bf16) {
    super(data, rows, cols);
    halves =
        bf16 ? HalfWeights.bf16(this.data, rows, cols) : HalfWeights.fp16(this.data, rows, cols);
  }

  @Override
  public void matmul(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    if (tokens == 1) {
      HalfGemm.rows(halves, x, 0, out, outStride, oFrom, oTo, scratch);
    } else {
      super.matmul(x, tokens, out, outStride, oFrom, oTo, scratch);
    }
  }

  @Override
  public void decodeRow(int row, float[] dst, int off) {
    halves.decodeRow(row, dst, off);
  }
}
