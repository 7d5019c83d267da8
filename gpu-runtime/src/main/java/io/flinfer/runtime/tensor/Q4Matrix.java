package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.BlockWeights;
import io.flinfer.runtime.kernel.HalfVectors;
import java.nio.ByteBuffer;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;

/**
 * A Q4_0 weight matrix: blocks of 32 4-bit values sharing one fp16 scale; byte j holds value j in
 * its low nibble and value j + 16 in its high nibble, each offset by 8.
 */
final class Q4Matrix extends CompactMatrix {
  Q4Matrix(ByteBuffer data, int rows, int cols) {
    super(data, rows, cols, BlockWeights::q4, Q4Matrix::decodeMapped);
  }

  @Override
  public GgmlType type() {
    return GgmlType.Q4_0;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int blocks = cols / 32;
    int base = row * blocks * 18;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * 18;
      float d = HalfFloats.fromHalf(data.getShort(p));
      int o = off + b * 32;
      for (int j = 0; j < 16; j++) {
        int q = data.get(p + 2 + j) & 0xff;
        dst[o + j] = ((q & 0x0f) - 8) * d;
        dst[o + j + 16] = ((q >>> 4) - 8) * d;
      }
    }
  }

  /** Row {@code row} of the mapped blocks, converted in vector registers. */
  static void decodeMapped(ByteBuffer data, int cols, int row, float[] dst, int off) {
    int blocks = cols / 32;
    int base = row * blocks * 18;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * 18;
      float d = HalfFloats.fromHalf(data.getShort(p));
      int o = off + b * 32;
      ByteVector q = HalfVectors.bytes16(data, p + 2);
      ByteVector lo = q.and((byte) 0x0f).sub((byte) 8);
      ByteVector hi = q.lanewise(VectorOperators.LSHR, 4).sub((byte) 8);
      HalfVectors.scaled(lo, 0, d, dst, o);
      HalfVectors.scaled(lo, 1, d, dst, o + 8);
      HalfVectors.scaled(hi, 0, d, dst, o + 16);
      HalfVectors.scaled(hi, 1, d, dst, o + 24);
    }
  }
}
