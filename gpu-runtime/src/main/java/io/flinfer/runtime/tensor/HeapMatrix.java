package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.Gemm;
import io.flinfer.runtime.kernel.HeapWeights;
import io.flinfer.runtime.kernel.PairedGemm;
import java.nio.ByteBuffer;

/**
 * A matrix whose compact form (quantized blocks, 16-bit floats) is copied onto the heap once at
 * load ({@link HeapWeights}): a token alone is multiplied converting in registers, a batch from
 * rows decoded once for all its tokens, both in the order of the weights' one-token kernel, so with
 * the same bits.
 */
abstract class HeapMatrix extends WeightMatrix {
  /** Reads a matrix's bytes into its heap form. */
  @FunctionalInterface
  interface Reader {
    HeapWeights read(ByteBuffer data, int rows, int cols);
  }

  private final HeapWeights weights;

  HeapMatrix(ByteBuffer data, int rows, int cols, Reader reader) {
    super(data, rows, cols);
    weights = reader.read(this.data, rows, cols);
  }

  @Override
  public void matmul(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    if (tokens == 1) {
      weights.multiplyToken(x, out, oFrom, oTo, scratch);
      return;
    }
    if (!weights.pairedOrder()) {
      super.matmul(x, tokens, out, outStride, oFrom, oTo, scratch);
      return;
    }
    int rowsAt = Gemm.SCRATCH;
    int o = oFrom;
    for (; o + 2 <= oTo; o += 2) {
      weights.decodeRow(o, scratch, rowsAt);
      weights.decodeRow(o + 1, scratch, rowsAt + cols);
      PairedGemm.rows2(scratch, rowsAt, cols, x, tokens, out, outStride, o, scratch);
    }
    if (o < oTo) {
      weights.decodeRow(o, scratch, rowsAt);
      PairedGemm.rows1(scratch, rowsAt, cols, x, tokens, out, outStride, o, scratch);
    }
  }

  @Override
  public void decodeRow(int row, float[] dst, int off) {
    weights.decodeRow(row, dst, off);
  }
}
