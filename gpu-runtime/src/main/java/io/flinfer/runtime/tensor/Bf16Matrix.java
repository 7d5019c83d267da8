package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.HalfWeights;
import java.nio.ByteBuffer;

/** A bfloat16 weight matrix. */
final class Bf16Matrix extends HeapMatrix {
  Bf16Matrix(ByteBuffer data, int rows, int cols) {
    super(data, rows, cols, HalfWeights::bf16);
  }

  @Override
  public GgmlType type() {
    return GgmlType.BF16;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int base = row * cols * 2;
    for (int i = 0; i < cols; i++) {
      dst[off + i] = HalfFloats.fromBf16(data.getShort(base + i * 2));
    }
  }
}
