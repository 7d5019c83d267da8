package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.CompactWeights;
import java.nio.ByteBuffer;

/**
 * A matrix in a compact form (quantized blocks, 16-bit floats), copied onto the heap once at load
 * where the heap has room ({@link HeapBudget}), else left in the mapped file: a token alone, and a
 * small batch where the heap form has a kernel for it, is multiplied by the heap copy's kernel,
 * converting in registers; other batches, and every product of a mapped matrix, go through rows
 * decoded once ({@link WeightMatrix#matmul}). All reduce in one order, so a token gets the same
 * bits wherever its weights live.
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

  /** The heap copy, or null where the heap had no room. */
  private final CompactWeights heap;

  private final MappedDecoder mapped;

  CompactMatrix(ByteBuffer data, int rows, int cols, Reader heap, MappedDecoder mapped) {
    this(data, rows, cols, -1, heap, mapped);
  }

  /** {@code heapBytes}: what the heap form takes, where that is not the file's size (-1). */
  CompactMatrix(
      ByteBuffer data, int rows, int cols, long heapBytes, Reader heap, MappedDecoder mapped) {
    super(data, rows, cols);
    long size = heapBytes < 0 ? this.data.remaining() : heapBytes;
    this.heap = HeapBudget.admits(size) ? heap.read(this.data, rows, cols) : null;
    this.mapped = mapped;
  }

  @Override
  public void matmul(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    if (tokens == 1 && heap != null) {
      heap.multiplyToken(x, out, oFrom, oTo, scratch);
    } else if (heap == null
        || !heap.multiplyTokens(x, tokens, out, outStride, oFrom, oTo, scratch)) {
      super.matmul(x, tokens, out, outStride, oFrom, oTo, scratch);
    }
  }

  /** The heap copy, or null where the heap had no room. */
  protected final CompactWeights heap() {
    return heap;
  }

  @Override
  public void decodeRow(int row, float[] dst, int off) {
    if (heap != null) {
      heap.decodeRow(row, dst, off);
    } else {
      mapped.decode(data, cols, row, dst, off);
    }
  }
}
