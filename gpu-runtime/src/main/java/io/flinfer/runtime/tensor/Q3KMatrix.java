package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.KQuantWeights;
import io.flinfer.runtime.kernel.KScales;
import java.nio.ByteBuffer;

/**
 * A Q3_K weight matrix: super-blocks of 256 values (110 bytes): 32 bytes of high bits, 64 bytes of
 * 2-bit pairs, 12 bytes of sixteen 6-bit scales (16 values each), then the fp16 scale d. Value = (d
 * * (scale - 32)) * q, q = pair - 4 + 4 * high bit, in -4..3. On the heap it takes the Q6_K form (a
 * signed byte per value and per scale, 2.5 times the file's size), so the Q6_K kernels multiply it.
 */
final class Q3KMatrix extends KQuantMatrix {
  private static final ThreadLocal<KQuantWeights> ROW =
      ThreadLocal.withInitial(() -> KQuantWeights.scratchQ3k(KQuants.SUPER));

  Q3KMatrix(ByteBuffer data, int rows, int cols) {
    super(
        KQuantWeights.Format.Q6_K,
        true,
        data,
        rows,
        cols,
        KQuantWeights::q3k,
        Q3KMatrix::decodeMapped);
  }

  @Override
  public GgmlType type() {
    return GgmlType.Q3_K;
  }

  /** Row {@code row} of the mapped super-blocks: through the heap form of that row alone. */
  static void decodeMapped(ByteBuffer data, int cols, int row, float[] dst, int off) {
    KQuantWeights w = ROW.get();
    if (w.cols() != cols) {
      w = KQuantWeights.scratchQ3k(cols);
      ROW.set(w);
    }
    w.fill(data, row, 1).decodeRow(0, dst, off);
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int blocks = cols / KQuants.SUPER;
    int base = row * blocks * KQuantWeights.Q3K_BLOCK_BYTES;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * KQuantWeights.Q3K_BLOCK_BYTES;
      float d = HalfFloats.fromHalf(data.getShort(p + 108));
      for (int i = 0; i < KQuants.SUPER; i++) {
        int pair = (data.get(p + 32 + 32 * (i / 128) + i % 32) >>> (2 * ((i / 32) % 4))) & 3;
        int high = (data.get(p + i % 32) >>> (i / 32)) & 1;
        int scale = KScales.q3kScale(data, p + 96, i / 16) - 32;
        dst[off + b * KQuants.SUPER + i] = d * scale * (pair - 4 + 4 * high);
      }
    }
  }
}
