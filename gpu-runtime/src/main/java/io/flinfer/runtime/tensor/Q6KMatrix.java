package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.HalfVectors;
import io.flinfer.runtime.kernel.KQuantWeights;
import java.nio.ByteBuffer;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;

/**
 * A Q6_K weight matrix: super-blocks of 256 values (210 bytes): 128 bytes of low nibbles, 64 bytes
 * of high 2-bit pairs, 16 signed 8-bit sub-block scales (16 values each), then the fp16 scale d.
 * Value = d * scale * (q - 32), q in 0..63.
 */
final class Q6KMatrix extends KQuantMatrix {
  static final int BLOCK_BYTES = 210;

  Q6KMatrix(ByteBuffer data, int rows, int cols) {
    super(KQuantWeights.Format.Q6_K, data, rows, cols, KQuantWeights::q6k, Q6KMatrix::decodeMapped);
  }

  @Override
  public GgmlType type() {
    return GgmlType.Q6_K;
  }

  /** Row {@code row} of the mapped super-blocks, converted in vector registers. */
  static void decodeMapped(ByteBuffer data, int cols, int row, float[] dst, int off) {
    int blocks = cols / KQuants.SUPER;
    int base = row * blocks * BLOCK_BYTES;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * BLOCK_BYTES;
      float d = HalfFloats.fromHalf(data.getShort(p + 208));
      int o = off + b * KQuants.SUPER;
      for (int half = 0; half < 2; half++) {
        int sc = p + 192 + 8 * half;
        int y = o + 128 * half;
        ByteVector a = HalfVectors.bytes32(data, p + 64 * half);
        ByteVector c = HalfVectors.bytes32(data, p + 64 * half + 32);
        ByteVector h = HalfVectors.bytes32(data, p + 128 + 32 * half);
        ByteVector q1 = KQuantWeights.joinedQ6k(a.and((byte) 0x0f), h, 0);
        ByteVector q2 = KQuantWeights.joinedQ6k(c.and((byte) 0x0f), h, 2);
        ByteVector q3 = KQuantWeights.joinedQ6k(a.lanewise(VectorOperators.LSHR, 4), h, 4);
        ByteVector q4 = KQuantWeights.joinedQ6k(c.lanewise(VectorOperators.LSHR, 4), h, 6);
        // Quarter k of the half holds values 32k..32k+31; its two 16-value sub-blocks' scales
        // are sc[2k] and sc[2k+1].
        quarter(q1, d * data.get(sc), d * data.get(sc + 1), dst, y);
        quarter(q2, d * data.get(sc + 2), d * data.get(sc + 3), dst, y + 32);
        quarter(q3, d * data.get(sc + 4), d * data.get(sc + 5), dst, y + 64);
        quarter(q4, d * data.get(sc + 6), d * data.get(sc + 7), dst, y + 96);
      }
    }
  }

  /** 32 values {@code q - 32}, the first 16 times {@code s0} and the rest times {@code s1}. */
  private static void quarter(ByteVector v, float s0, float s1, float[] dst, int o) {
    HalfVectors.scaled(v, 0, s0, dst, o);
    HalfVectors.scaled(v, 1, s0, dst, o + 8);
    HalfVectors.scaled(v, 2, s1, dst, o + 16);
    HalfVectors.scaled(v, 3, s1, dst, o + 24);
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int blocks = cols / KQuants.SUPER;
    int base = row * blocks * BLOCK_BYTES;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * BLOCK_BYTES;
      float d = HalfFloats.fromHalf(data.getShort(p + 208));
      int o = off + b * KQuants.SUPER;
      // Two halves of 128 values: 64 bytes of low nibbles, 32 of high bits, 8 scales each.
      for (int half = 0; half < 2; half++) {
        int ql = p + 64 * half;
        int qh = p + 128 + 32 * half;
        int sc = p + 192 + 8 * half;
        int y = o + 128 * half;
        for (int l = 0; l < 32; l++) {
          int is = l / 16;
          int a = data.get(ql + l) & 0xff;
          int c = data.get(ql + l + 32) & 0xff;
          int h = data.get(qh + l) & 0xff;
          int q1 = ((a & 0x0f) | ((h & 3) << 4)) - 32;
          int q2 = ((c & 0x0f) | (((h >>> 2) & 3) << 4)) - 32;
          int q3 = ((a >>> 4) | (((h >>> 4) & 3) << 4)) - 32;
          int q4 = ((c >>> 4) | (((h >>> 6) & 3) << 4)) - 32;
          dst[y + l] = d * data.get(sc + is) * q1;
          dst[y + l + 32] = d * data.get(sc + is + 2) * q2;
          dst[y + l + 64] = d * data.get(sc + is + 4) * q3;
          dst[y + l + 96] = d * data.get(sc + is + 6) * q4;
        }
      }
    }
  }
}
