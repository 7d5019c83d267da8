package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvRows;
import io.flinfer.memcache.KvStoreType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Vector conversion of 16-bit KV values against the scalar one, over every 16-bit pattern. */
class KvVectorsTest {
  @ParameterizedTest
  @EnumSource(
      value = KvStoreType.class,
      names = {"FP16", "BF16"})
  void everySixteenBitValueConvertsAsTheScalarConversionDoes(KvStoreType type) {
    KvRows rows = new KvPool(65535, 1, 1, 1, 1, type).keys(0);
    short[] h = rows.halves();
    for (int i = 0; i < 65536; i++) {
      h[i] = (short) i;
    }
    float[] lanes = new float[8];
    for (int i = 0; i < 65536; i += 8) {
      KvVectors.load(rows, i).intoArray(lanes, 0);
      for (int k = 0; k < 8; k++) {
        short v = (short) (i + k);
        float expected = type == KvStoreType.FP16 ? HalfFloats.fromHalf(v) : HalfFloats.fromBf16(v);
        assertThat(Float.floatToRawIntBits(lanes[k]))
            .as("0x%04x", i + k)
            .isEqualTo(Float.floatToRawIntBits(expected));
      }
    }
  }

  /**
   * The conversion without the infinity/NaN test gives the scalar bits for every other half, and
   * the scan that allows it finds every half it would get wrong.
   */
  @org.junit.jupiter.api.Test
  void everyFiniteHalfConvertsWithoutTheSpecialCaseAndTheScanFindsTheOthers() {
    short[] h = new short[65536];
    for (int i = 0; i < h.length; i++) {
      h[i] = (short) i;
    }
    float[] lanes = new float[8];
    for (int i = 0; i < 65536; i += 8) {
      HalfVectors.fp16Finite(h, i).intoArray(lanes, 0);
      for (int k = 0; k < 8; k++) {
        short v = (short) (i + k);
        boolean special = (v & 0x7C00) == 0x7C00;
        assertThat(HalfVectors.hasNoSpecials(new short[] {1, v, 2}))
            .as("0x%04x", i + k)
            .isEqualTo(!special);
        if (!special) {
          assertThat(Float.floatToRawIntBits(lanes[k]))
              .as("0x%04x", i + k)
              .isEqualTo(Float.floatToRawIntBits(HalfFloats.fromHalf(v)));
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = KvStoreType.class,
      names = {"FP8_E4M3", "FP8_E5M2"})
  void everyFp8CodeConvertsAsTheScalarConversionDoesTimesTheScale(KvStoreType type) {
    float scale = 0.37f;
    KvPool pool = new KvPool(255, 1, 1, 1, 1, type, scale, scale);
    KvRows rows = pool.keys(0);
    byte[] b = rows.bytes();
    for (int i = 0; i < 256; i++) {
      b[i] = (byte) i;
    }
    float[] lanes = new float[8];
    float[] expected = new float[1];
    for (int i = 0; i < 256; i += 8) {
      KvVectors.load(rows, i).intoArray(lanes, 0);
      for (int k = 0; k < 8; k++) {
        pool.readKeys(0, i + k, 0, 1, expected, 0);
        if (Float.isNaN(expected[0])) {
          assertThat(lanes[k]).as("0x%02x", i + k).isNaN();
        } else {
          assertThat(Float.floatToRawIntBits(lanes[k]))
              .as("0x%02x", i + k)
              .isEqualTo(Float.floatToRawIntBits(expected[0]));
        }
      }
    }
  }
}
