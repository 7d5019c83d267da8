package io.flinfer.memcache;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HalfFloatsTest {
  @Test
  void everyHalfRoundTripsThroughFloat() {
    for (int h = 0; h < 1 << 16; h++) {
      float f = HalfFloats.fromHalf((short) h);
      if (Float.isNaN(f)) {
        assertThat(Float.isNaN(HalfFloats.fromHalf(HalfFloats.toHalf(f)))).isTrue();
      } else {
        assertThat(HalfFloats.toHalf(f) & 0xffff).as("half %04x", h).isEqualTo(h);
      }
    }
  }

  @Test
  void knownValuesAndRoundingToNearestEven() {
    assertThat(HalfFloats.fromHalf((short) 0x3c00)).isEqualTo(1f);
    assertThat(HalfFloats.fromHalf((short) 0xc000)).isEqualTo(-2f);
    assertThat(HalfFloats.fromHalf((short) 0x0001)).isEqualTo(5.9604645e-8f);
    assertThat(HalfFloats.fromHalf((short) 0x7bff)).isEqualTo(65504f);
    assertThat(HalfFloats.toHalf(1f + 1f / 2048)).isEqualTo((short) 0x3c00); // tie to even
    assertThat(HalfFloats.toHalf(1f + 3f / 2048)).isEqualTo((short) 0x3c02);
    assertThat(HalfFloats.toHalf(1e6f)).isEqualTo((short) 0x7c00);
    assertThat(HalfFloats.fromBf16(HalfFloats.toBf16(3.140625f))).isEqualTo(3.140625f);
  }
}
