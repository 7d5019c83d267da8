package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.Gemm;
import io.flinfer.runtime.kernel.RowBlockWeights;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * A float32 weight matrix, multiplied straight from its (mapped) buffer, or, for a batch on a CPU
 * with four-row tiles, from rows copied out of it. A small matrix also has a heap copy in blocks of
 * eight rows for one token's product, and a batch's where the CPU has the registers (the same
 * bits).
 */
final class F32Matrix extends WeightMatrix {
  /**
   * Matrices up to this size get the eight-row heap copy: they are read from cache, where a token's
   * product is bound by the work per row, which the copy cuts (a 64 x 64 matrix: 6 to 15-18 billion
   * multiply-adds a second on one core of an AVX-512 EPYC). Larger ones stream from memory, which
   * the mapped kernels already keep up with, and would be held twice.
   */
  private static final long ROW_BLOCK_MAX_BYTES = 1 << 20;

  /** The same bytes as floats (little-endian, as {@link #data}); absolute reads only. */
  private final FloatBuffer floats;

  /** The eight-row heap copy, or null. */
  private final RowBlockWeights rowBlocks;

  F32Matrix(ByteBuffer data, int rows, int cols) {
    super(data, rows, cols);
    this.floats = this.data.asFloatBuffer();
    long copy = RowBlockWeights.heapBytes(rows, cols);
    this.rowBlocks =
        copy <= ROW_BLOCK_MAX_BYTES && HeapBudget.admits(copy)
            ? RowBlockWeights.of(this.data, rows, cols)
            : null;
  }

  @Override
  public GgmlType type() {
    return GgmlType.F32;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int base = row * cols * 4;
    for (int i = 0; i < cols; i++) {
      dst[off + i] = data.getFloat(base + i * 4);
    }
  }

  @Override
  public void decodeRow(int row, float[] dst, int off) {
    // One bulk copy (a memory copy where the file is mapped): a batch copies every row of every
    // product once per step, and this measured twice a vector loop's speed from L2 and 1.5x from
    // memory (11 and 4.1 against 5.5 and 2.8 billion floats/s, one core of an AVX-512 EPYC).
    floats.get(row * cols, dst, off, cols);
  }

  @Override
  public void matmulRounded(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    if (rowBlocks != null && (tokens == 1 || RowBlockWeights.takesBatches())) {
      rowBlocks.multiplyTokens(x, tokens, out, outStride, oFrom, oTo, scratch);
    } else if (Gemm.takesBufferTiles(tokens)) {
      // A few tokens: tiles straight from the buffer, so that loading the weights overlaps the
      // multiply-adds instead of preceding them (the copy below).
      Gemm.bufferTiles(data, cols, x, tokens, out, outStride, oFrom, oTo, scratch);
    } else if (tokens > 1 && Gemm.FOUR_ROW_TILES) {
      // Rows copied out four at a time into four-row tiles: 1.3-2.5x the buffer tiles' speed on
      // one core of an AVX-512 EPYC (32 and 128 tokens, 768 to 8192 columns), the same bits.
      super.matmulRounded(x, tokens, out, outStride, oFrom, oTo, scratch);
    } else {
      Gemm.bufferRows(data, cols, x, tokens, out, outStride, oFrom, oTo, scratch);
    }
  }
}
