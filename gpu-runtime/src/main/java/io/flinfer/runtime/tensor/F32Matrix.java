package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.Gemm;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * A float32 weight matrix, multiplied straight from its (mapped) buffer, or, for a batch on a CPU
 * with four-row tiles, from rows copied out of it.
 */
final class F32Matrix extends WeightMatrix {
  private static final VectorSpecies<Float> LANES = FloatVector.SPECIES_256;

  F32Matrix(ByteBuffer data, int rows, int cols) {
    super(data, rows, cols);
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
    // Vector loads straight from the buffer: a batch copies every row of every product once per
    // step, where a slice and a float view per row would be garbage on the hot path.
    int base = row * cols * 4;
    int colsV = cols - cols % LANES.length();
    int i = 0;
    for (; i < colsV; i += LANES.length()) {
      FloatVector.fromByteBuffer(LANES, data, base + i * 4, ByteOrder.LITTLE_ENDIAN)
          .intoArray(dst, off + i);
    }
    for (; i < cols; i++) {
      dst[off + i] = data.getFloat(base + i * 4);
    }
  }

  @Override
  public void matmul(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    if (tokens > 1 && Gemm.FOUR_ROW_TILES) {
      // Rows copied out four at a time into four-row tiles: 1.3-2.5x the buffer tiles' speed on
      // one core of an AVX-512 EPYC (32 and 128 tokens, 768 to 8192 columns), the same bits.
      super.matmul(x, tokens, out, outStride, oFrom, oTo, scratch);
    } else {
      Gemm.bufferRows(data, cols, x, tokens, out, outStride, oFrom, oTo, scratch);
    }
  }
}
