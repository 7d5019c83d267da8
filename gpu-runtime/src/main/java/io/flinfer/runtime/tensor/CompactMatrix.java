package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.CompactWeights;
import io.flinfer.runtime.kernel.Gemm;
import io.flinfer.runtime.kernel.PairedGemm;
import java.nio.ByteBuffer;

/**
 * A matrix in a compact form (quantized blocks, 16-bit floats), copied onto the heap once at load
 * where the heap has room ({@link HeapBudget}), else read from the mapped file ({@link
 * MappedRows}): a token alone is multiplied converting in registers, a batch from rows decoded once
 * for all its tokens, both in the order of the weights' one-token kernel, so with the same bits
 * wherever the weights live.
 */
abstract class CompactMatrix extends WeightMatrix {
  /** Reads a matrix's bytes into its heap form. */
  @FunctionalInterface
  interface Reader {
    CompactWeights read(ByteBuffer data, int rows, int cols);
  }

  /** Decodes a row straight from the mapped bytes, with the heap form's bits. */
  @FunctionalInterface
  interface MappedDecoder {
    void decode(ByteBuffer data, int cols, int row, float[] dst, int off);
  }

  private final CompactWeights weights;

  /** {@code paired}: whether the heap form reduces in two accumulators, as the mapped one must. */
  CompactMatrix(
      ByteBuffer data, int rows, int cols, Reader heap, MappedDecoder mapped, boolean paired) {
    super(data, rows, cols);
    ByteBuffer bytes = this.data;
    weights =
        HeapBudget.admits(bytes.remaining())
            ? heap.read(bytes, rows, cols)
            : new MappedRows(
                (r, dst, off) -> mapped.decode(bytes, cols, r, dst, off), cols, paired);
    if (weights.pairedOrder() != paired) {
      throw new IllegalStateException("heap and mapped forms must reduce alike");
    }
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
