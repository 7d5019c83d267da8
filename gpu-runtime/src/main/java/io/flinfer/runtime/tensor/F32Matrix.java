package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.Gemm;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * A float32 weight matrix, multiplied straight from its (mapped) buffer, or, for a batch on a CPU
 * with four-row tiles, from rows copied out of it.
 */
final class F32Matrix extends WeightMatrix {
  /** The same bytes as floats (little-endian, as {@link #data}); absolute reads only. */
  private final FloatBuffer floats;

  F32Matrix(ByteBuffer data, int rows, int cols) {
    super(data, rows, cols);
    this.floats = this.data.asFloatBuffer();
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
  public void matmul(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    if (Gemm.takesBufferTiles(tokens)) {
      // A few tokens: tiles straight from the buffer, so that loading the weights overlaps the
      // multiply-adds instead of preceding them (the copy below).
      Gemm.bufferTiles(data, cols, x, tokens, out, outStride, oFrom, oTo, scratch);
    } else if (tokens > 1 && Gemm.FOUR_ROW_TILES) {
      // Rows copied out four at a time into four-row tiles: 1.3-2.5x the buffer tiles' speed on
      // one core of an AVX-512 EPYC (32 and 128 tokens, 768 to 8192 columns), the same bits.
      super.matmul(x, tokens, out, outStride, oFrom, oTo, scratch);
    } else {
      Gemm.bufferRows(data, cols, x, tokens, out, outStride, oFrom, oTo, scratch);
    }
  }
}
