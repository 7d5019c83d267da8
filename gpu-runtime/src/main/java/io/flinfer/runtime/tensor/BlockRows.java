package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.BlockWeights;
import java.nio.ByteBuffer;

/**
 * Rows of mapped 32-value blocks that open with an fp16 scale d (and, with offsets, an fp16 m),
 * decoded through the bytes their heap form holds: {@code d * q} or {@code d * q + m}, the heap
 * copy's bits.
 */
final class BlockRows {
  private static final ThreadLocal<byte[]> VALUES = ThreadLocal.withInitial(() -> new byte[32]);

  private BlockRows() {}

  static void decode(
      ByteBuffer data,
      int cols,
      int row,
      float[] dst,
      int off,
      int blockBytes,
      boolean offsets,
      BlockWeights.BlockValues values) {
    byte[] q = VALUES.get();
    int blocks = cols / 32;
    int base = row * blocks * blockBytes;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * blockBytes;
      float d = HalfFloats.fromHalf(data.getShort(p));
      float m = offsets ? HalfFloats.fromHalf(data.getShort(p + 2)) : 0;
      values.values(data, p, q, 0);
      for (int j = 0; j < 32; j++) {
        float v = d * q[j];
        dst[off + b * 32 + j] = offsets ? v + m : v;
      }
    }
  }
}
