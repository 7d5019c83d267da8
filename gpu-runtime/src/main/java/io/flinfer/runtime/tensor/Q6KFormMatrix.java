package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.KQuantWeights;
import io.flinfer.runtime.kernel.KScales;
import java.nio.ByteBuffer;

/**
 * A matrix of super-blocks whose values are a small signed integer times a signed 6-bit scale per
 * sub-block times d, which take the Q6_K heap form (a signed byte per value and per 16-value scale,
 * and d), so that the Q6_K kernels multiply them:
 *
 * <ul>
 *   <li>Q3_K, 256 values in 110 bytes: 32 bytes of high bits, 64 bytes of 2-bit pairs, 12 bytes of
 *       sixteen 6-bit scales (16 values each), the fp16 d. Value = (d * (scale - 32)) * q, q = pair
 *       - 4 + 4 * high bit, in -4..3. The heap form is 2.5 times the file's size.
 *   <li>IQ4_XS, 256 values in 136 bytes: the fp16 d, the top two bits of eight 6-bit scales (32
 *       values each) in a 16-bit word, their low nibbles in 4 bytes, then 128 bytes of 4-bit
 *       indices into {@link KQuantWeights#IQ4_VALUES}. Value = (d * (scale - 32)) * table[index].
 *       The heap form is twice the file's size.
 * </ul>
 */
final class Q6KFormMatrix extends KQuantMatrix {
  private final GgmlType type;

  Q6KFormMatrix(GgmlType type, ByteBuffer data, int rows, int cols) {
    this(type, source(type), data, rows, cols);
  }

  private Q6KFormMatrix(
      GgmlType type, KQuantWeights.Source source, ByteBuffer data, int rows, int cols) {
    super(
        KQuantWeights.Format.Q6_K,
        source,
        data,
        rows,
        cols,
        source == KQuantWeights.Source.Q3_K ? KQuantWeights::q3k : KQuantWeights::iq4xs,
        (d, c, row, dst, off) ->
            decodeThroughHeapForm(KQuantWeights.Format.Q6_K, source, d, c, row, dst, off));
    this.type = type;
  }

  private static KQuantWeights.Source source(GgmlType type) {
    return switch (type) {
      case Q3_K -> KQuantWeights.Source.Q3_K;
      case IQ4_XS -> KQuantWeights.Source.IQ4_XS;
      default -> throw new IllegalArgumentException(type + " does not take the Q6_K heap form");
    };
  }

  @Override
  public GgmlType type() {
    return type;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    if (type == GgmlType.Q3_K) {
      q3kReference(row, dst, off);
    } else {
      iq4xsReference(row, dst, off);
    }
  }

  private void q3kReference(int row, float[] dst, int off) {
    int blocks = cols / KQuants.SUPER;
    int bb = (int) GgmlType.Q3_K.bytes(KQuants.SUPER);
    int base = row * blocks * bb;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * bb;
      float d = HalfFloats.fromHalf(data.getShort(p + 108));
      for (int i = 0; i < KQuants.SUPER; i++) {
        int pair = (data.get(p + 32 + 32 * (i / 128) + i % 32) >>> (2 * ((i / 32) % 4))) & 3;
        int high = (data.get(p + i % 32) >>> (i / 32)) & 1;
        int scale = KScales.q3kScale(data, p + 96, i / 16) - 32;
        dst[off + b * KQuants.SUPER + i] = d * scale * (pair - 4 + 4 * high);
      }
    }
  }

  private void iq4xsReference(int row, float[] dst, int off) {
    int blocks = cols / KQuants.SUPER;
    int bb = (int) GgmlType.IQ4_XS.bytes(KQuants.SUPER);
    int base = row * blocks * bb;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * bb;
      float d = HalfFloats.fromHalf(data.getShort(p));
      int high = data.getShort(p + 2) & 0xffff;
      for (int i = 0; i < KQuants.SUPER; i++) {
        int j = i / 32;
        int low = (data.get(p + 4 + j / 2) >>> (4 * (j % 2))) & 0x0f;
        int scale = (low | ((high >>> (2 * j)) & 3) << 4) - 32;
        int packed = data.get(p + 8 + 16 * j + i % 16);
        int index = (i % 32 < 16 ? packed : packed >>> 4) & 0x0f;
        dst[off + b * KQuants.SUPER + i] = d * scale * KQuantWeights.IQ4_VALUES[index];
      }
    }
  }
}
