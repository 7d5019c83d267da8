package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.BlockGemm;
import io.flinfer.runtime.kernel.BlockWeights;
import java.nio.ByteBuffer;

/**
 * A matrix of 32-value blocks sharing one scale (Q8_0, Q4_0), its blocks split onto the heap once
 * at load ({@link BlockWeights}): a token alone is multiplied straight from the blocks, a batch
 * from rows decoded once for all its tokens, with the same bits.
 */
abstract class BlockMatrix extends WeightMatrix {
  private final BlockWeights blocks;

  BlockMatrix(ByteBuffer data, int rows, int cols, boolean nibbles) {
    super(data, rows, cols);
    blocks =
        nibbles ? BlockWeights.q4(this.data, rows, cols) : BlockWeights.q8(this.data, rows, cols);
  }

  @Override
  public void matmul(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    if (tokens == 1) {
      BlockGemm.rows(blocks, x, 0, out, outStride, oFrom, oTo, scratch);
    } else {
      super.matmul(x, tokens, out, outStride, oFrom, oTo, scratch);
    }
  }

  @Override
  public void decodeRow(int row, float[] dst, int off) {
    blocks.decodeRow(row, dst, off);
  }
}
