package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.KQuantWeights;
import java.nio.ByteBuffer;

/**
 * A Q2_K weight matrix: super-blocks of 256 values (84 bytes): 16 bytes of 4-bit scales (low
 * nibbles) and mins (high nibbles) of 16 values each, 64 bytes of 2-bit values, the fp16 d and
 * dmin. Value = (d * scale) * q - dmin * min, q in 0..3. On the heap each scale, min and value is a
 * byte (288 bytes a super-block, 3.4 times the file's size). Its products keep float activations,
 * also under {@code -Dflinfer.kquant.activations=q8}.
 */
final class Q2KMatrix extends KQuantMatrix {
  Q2KMatrix(ByteBuffer data, int rows, int cols) {
    super(
        KQuantWeights.Format.Q2_K,
        data,
        rows,
        cols,
        KQuantWeights::q2k,
        (d, c, row, dst, off) ->
            decodeThroughHeapForm(
                KQuantWeights.Format.Q2_K, KQuantWeights.Source.OWN, d, c, row, dst, off));
  }

  @Override
  public GgmlType type() {
    return GgmlType.Q2_K;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int blocks = cols / KQuants.SUPER;
    int base = row * blocks * 84;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * 84;
      float d = HalfFloats.fromHalf(data.getShort(p + 80));
      float dmin = HalfFloats.fromHalf(data.getShort(p + 82));
      for (int i = 0; i < KQuants.SUPER; i++) {
        int sm = data.get(p + i / 16) & 0xff;
        int q = (data.get(p + 16 + 32 * (i / 128) + i % 32) >>> (2 * ((i / 32) % 4))) & 3;
        dst[off + b * KQuants.SUPER + i] = d * (sm & 0x0f) * q - dmin * (sm >>> 4);
      }
    }
  }
}
