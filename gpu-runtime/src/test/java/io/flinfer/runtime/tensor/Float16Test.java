package io.flinfer.runtime.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class Float16Test {
  @Test
  void everyHalfRoundTripsThroughFloat() {
    for (int h = 0; h < 1 << 16; h++) {
      float f = Float16.toFloat((short) h);
      if (Float.isNaN(f)) {
        assertThat(Float.isNaN(Float16.toFloat(Float16.fromFloat(f)))).isTrue();
      } else {
        assertThat(Float16.fromFloat(f) & 0xffff).as("half %04x", h).isEqualTo(h);
      }
    }
  }

  @Test
  void knownValuesAndRoundingToNearestEven() {
    assertThat(Float16.toFloat((short) 0x3c00)).isEqualTo(1f);
    assertThat(Float16.toFloat((short) 0xc000)).isEqualTo(-2f);
    assertThat(Float16.toFloat((short) 0x0001)).isEqualTo(5.9604645e-8f);
    assertThat(Float16.toFloat((short) 0x7bff)).isEqualTo(65504f);
    assertThat(Float16.fromFloat(1f + 1f / 2048)).isEqualTo((short) 0x3c00); // tie to even
    assertThat(Float16.fromFloat(1f + 3f / 2048)).isEqualTo((short) 0x3c02);
    assertThat(Float16.fromFloat(1e6f)).isEqualTo((short) 0x7c00);
    assertThat(Float16.bf16ToFloat(Float16.bf16FromFloat(3.140625f))).isEqualTo(3.140625f);
  }
}
