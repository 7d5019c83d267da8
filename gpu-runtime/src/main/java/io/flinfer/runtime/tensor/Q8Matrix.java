package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.BlockWeights;
import java.nio.ByteBuffer;

/** A Q8_0 weight matrix: blocks of 32 int8 values sharing one fp16 scale. */
final class Q8Matrix extends HeapMatrix {
  Q8Matrix(ByteBuffer data, int rows, int cols) {
    super(data, rows, cols, BlockWeights::q8);
  }

  @Override
  public GgmlType type() {
    return GgmlType.Q8_0;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int blocks = cols / 32;
    int base = row * blocks * 34;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * 34;
      float d = HalfFloats.fromHalf(data.getShort(p));
      for (int j = 0; j < 32; j++) {
        dst[off + b * 32 + j] = d * data.get(p + 2 + j);
      }
    }
  }
}
