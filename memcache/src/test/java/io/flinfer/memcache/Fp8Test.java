package io.flinfer.memcache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.Function;
import java.util.function.IntFunction;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.FloatRange;
import org.junit.jupiter.api.Test;

/** FP8 encoding is round-to-nearest-even with saturation, checked against every code. */
class Fp8Test {
  private static final IntFunction<Float> E4M3 = b -> Fp8.fromE4m3((byte) b);
  private static final IntFunction<Float> E5M2 = b -> Fp8.fromE5m2((byte) b);

  @Test
  void everyFiniteCodeDecodesAndEncodesBackToItself() {
    for (int b = 0; b < 256; b++) {
      float e4 = Fp8.fromE4m3((byte) b);
      if (!Float.isNaN(e4) && !(e4 == 0 && b == 0x80)) {
        assertThat(Fp8.toE4m3(e4) & 0xFF).as("e4m3 0x%02x", b).isEqualTo(b);
      }
      float e5 = Fp8.fromE5m2((byte) b);
      if (!Float.isNaN(e5) && !Float.isInfinite(e5) && !(e5 == 0 && b == 0x80)) {
        assertThat(Fp8.toE5m2(e5) & 0xFF).as("e5m2 0x%02x", b).isEqualTo(b);
      }
    }
    assertThat(Fp8.fromE4m3((byte) 0x7E)).isEqualTo(448f);
    assertThat(Fp8.fromE4m3((byte) 0x01)).isEqualTo(0x1.0p-9f);
    assertThat(Fp8.fromE5m2((byte) 0x7B)).isEqualTo(57344f);
    assertThat(Fp8.fromE4m3((byte) 0x7F)).isNaN();
  }

  @Test
  void outOfRangeValuesSaturate() {
    assertThat(Fp8.fromE4m3(Fp8.toE4m3(1e6f))).isEqualTo(448f);
    assertThat(Fp8.fromE4m3(Fp8.toE4m3(-1e6f))).isEqualTo(-448f);
    assertThat(Fp8.fromE5m2(Fp8.toE5m2(Float.POSITIVE_INFINITY))).isEqualTo(57344f);
    assertThat(Fp8.fromE4m3(Fp8.toE4m3(Float.NaN))).isNaN();
  }

  @Property(tries = 3000)
  void encodingPicksTheNearestCodeTiesToEven(@ForAll @FloatRange(min = -500, max = 500) float x) {
    check(x, Fp8::toE4m3, E4M3, 0x7E);
    check(x * 64, Fp8::toE5m2, E5M2, 0x7B);
    check(x * 1e-4f, Fp8::toE4m3, E4M3, 0x7E);
  }

  private static void check(
      float x, Function<Float, Byte> encode, IntFunction<Float> decode, int maxCode) {
    int got = encode.apply(x) & 0x7F;
    float a = Math.min(Math.abs(x), decode.apply(maxCode));
    double best = Double.MAX_VALUE;
    int bestCode = -1;
    for (int c = 0; c <= maxCode; c++) {
      double d = Math.abs((double) decode.apply(c) - a);
      if (d < best || d == best && (c & 1) == 0) {
        best = d;
        bestCode = c;
      }
    }
    assertThat(got).as("%s (%a)", x, x).isEqualTo(bestCode);
    if (x != 0 && got != 0) {
      assertThat(encode.apply(x) < 0).isEqualTo(x < 0);
    }
  }
}
