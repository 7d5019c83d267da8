package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.memcache.KvStoreType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Vector conversion of 16-bit KV values against the scalar one, over every 16-bit pattern. */
class KvVectorsTest {
  @ParameterizedTest
  @EnumSource(
      value = KvStoreType.class,
      names = {"FP16", "BF16"})
  void everySixteenBitValueConvertsAsTheScalarConversionDoes(KvStoreType type) {
    ByteBuffer b = ByteBuffer.allocateDirect(2 * 65536).order(ByteOrder.nativeOrder());
    for (int i = 0; i < 65536; i++) {
      b.putShort(2 * i, (short) i);
    }
    float[] lanes = new float[8];
    for (int i = 0; i < 65536; i += 8) {
      KvVectors.load(b, i, type).intoArray(lanes, 0);
      for (int k = 0; k < 8; k++) {
        short h = (short) (i + k);
        float expected = type == KvStoreType.FP16 ? HalfFloats.fromHalf(h) : HalfFloats.fromBf16(h);
        assertThat(Float.floatToRawIntBits(lanes[k]))
            .as("0x%04x", i + k)
            .isEqualTo(Float.floatToRawIntBits(expected));
      }
    }
  }
}
