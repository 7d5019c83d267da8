package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.Gemm;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** A float32 weight matrix, multiplied straight from its (mapped) buffer. */
final class F32Matrix extends WeightMatrix {
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
    data.slice(row * cols * 4, cols * 4)
        .order(ByteOrder.LITTLE_ENDIAN)
        .asFloatBuffer()
        .get(dst, off, cols);
  }

  @Override
  public void matmul(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    Gemm.bufferRows(data, cols, x, tokens, out, outStride, oFrom, oTo, scratch);
  }
}
