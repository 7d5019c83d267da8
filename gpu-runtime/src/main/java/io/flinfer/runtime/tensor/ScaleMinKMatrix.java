package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.HalfVectors;
import io.flinfer.runtime.kernel.KQuantWeights;
import java.nio.ByteBuffer;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q4_K and Q5_K weight matrices: super-blocks of 256 values with an fp16 scale d and min dmin, 8
 * sub-blocks of 32 with 6-bit scales and mins ({@link KQuants#scaleMin}), and 4-bit values (Q4_K:
 * 144 bytes a block) plus, in Q5_K, a fifth bit per value in 32 bytes before them (176 bytes).
 * Value = d * scale * q - dmin * min, the products of the scales rounded first and the value's
 * multiply-add once (one instruction in the kernels). Each 32-byte run of nibbles holds two
 * sub-blocks, the low nibbles then the high ones; sub-block pair g's fifth bits are bits 2g and
 * 2g+1 of the bit bytes.
 */
final class ScaleMinKMatrix extends KQuantMatrix {
  private final GgmlType type;
  private final int blockBytes;
  private final boolean fifthBit;

  ScaleMinKMatrix(GgmlType type, ByteBuffer data, int rows, int cols) {
    super(
        type == GgmlType.Q5_K ? KQuantWeights.Format.Q5_K : KQuantWeights.Format.Q4_K,
        data,
        rows,
        cols,
        type == GgmlType.Q5_K ? KQuantWeights::q5k : KQuantWeights::q4k,
        (b, c, row, dst, off) -> decodeMapped(type == GgmlType.Q5_K, b, c, row, dst, off));
    if (type != GgmlType.Q4_K && type != GgmlType.Q5_K) {
      throw new IllegalArgumentException("not a scale-and-min K-quant: " + type);
    }
    this.type = type;
    this.fifthBit = type == GgmlType.Q5_K;
    this.blockBytes = fifthBit ? 176 : 144;
  }

  @Override
  public GgmlType type() {
    return type;
  }

  /** Row {@code row} of the mapped super-blocks, converted in vector registers. */
  static void decodeMapped(
      boolean fifthBit, ByteBuffer data, int cols, int row, float[] dst, int off) {
    int blockBytes = fifthBit ? 176 : 144;
    int blocks = cols / KQuants.SUPER;
    int base = row * blocks * blockBytes;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * blockBytes;
      float d = HalfFloats.fromHalf(data.getShort(p));
      float dmin = HalfFloats.fromHalf(data.getShort(p + 2));
      int qs = fifthBit ? p + 48 : p + 16;
      ByteVector high = fifthBit ? HalfVectors.bytes32(data, p + 16) : null;
      int o = off + b * KQuants.SUPER;
      for (int g = 0; g < 4; g++) {
        int lo = KQuants.scaleMin(data, p + 4, 2 * g);
        int hi = KQuants.scaleMin(data, p + 4, 2 * g + 1);
        ByteVector q = HalfVectors.bytes32(data, qs + 32 * g);
        ByteVector first = q.and((byte) 0x0f);
        ByteVector second = q.lanewise(VectorOperators.LSHR, 4);
        if (fifthBit) {
          first = first.or(fifth(high, 2 * g));
          second = second.or(fifth(high, 2 * g + 1));
        }
        float d1 = d * (lo & 0xff);
        float m1 = dmin * (lo >>> 8);
        float d2 = d * (hi & 0xff);
        float m2 = dmin * (hi >>> 8);
        for (int part = 0; part < 4; part++) {
          HalfVectors.scaled(first, part, d1, m1, dst, o + 64 * g + 8 * part);
          HalfVectors.scaled(second, part, d2, m2, dst, o + 64 * g + 32 + 8 * part);
        }
      }
    }
  }

  /** Bit {@code shift} of each byte of {@code high}, moved to bit 4: Q5_K's fifth bits. */
  private static ByteVector fifth(ByteVector high, int shift) {
    return high.lanewise(VectorOperators.LSHR, shift)
        .and((byte) 1)
        .lanewise(VectorOperators.LSHL, 4);
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int blocks = cols / KQuants.SUPER;
    int base = row * blocks * blockBytes;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * blockBytes;
      float d = HalfFloats.fromHalf(data.getShort(p));
      float dmin = HalfFloats.fromHalf(data.getShort(p + 2));
      int qh = p + 16;
      int qs = fifthBit ? p + 48 : p + 16;
      int o = off + b * KQuants.SUPER;
      for (int g = 0; g < 4; g++) {
        int lo = KQuants.scaleMin(data, p + 4, 2 * g);
        int hi = KQuants.scaleMin(data, p + 4, 2 * g + 1);
        float d1 = d * (lo & 0xff);
        float m1 = dmin * (lo >>> 8);
        float d2 = d * (hi & 0xff);
        float m2 = dmin * (hi >>> 8);
        for (int l = 0; l < 32; l++) {
          int q = data.get(qs + 32 * g + l) & 0xff;
          int h = fifthBit ? data.get(qh + l) & 0xff : 0;
          dst[o + 64 * g + l] = Math.fma(d1, (q & 0x0f) | (((h >>> (2 * g)) & 1) << 4), -m1);
          dst[o + 64 * g + 32 + l] =
              Math.fma(d2, (q >>> 4) | (((h >>> (2 * g + 1)) & 1) << 4), -m2);
        }
      }
    }
  }
}
