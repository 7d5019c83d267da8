package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.HalfFloats;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class GeluTableTest {
  /**
   * The vector GeGLU gives the scalar one's bits: random values at every scale, the ±10 limits,
   * half-precision ties (to the even and to the odd neighbour) and subnormals, infinities and NaN,
   * over lengths with scalar tails.
   */
  @Property(tries = 300)
  void vectorGeGluIsTheScalarOne(@ForAll long seed, @ForAll @IntRange(min = 1, max = 50) int n) {
    Random rnd = new Random(seed);
    float[] edges = {
      10f,
      -10f,
      9.999999f,
      -9.999999f,
      0f,
      -0f,
      0x1p-25f,
      0x1.8p-24f,
      0x1p-14f,
      0x1.ffep-15f,
      1.00048828125f,
      -3.0009765625f,
      1.00146484375f,
      -2.0029296875f,
      Float.POSITIVE_INFINITY,
      Float.NEGATIVE_INFINITY,
      Float.NaN
    };
    float[] gate = new float[n];
    float[] up = new float[n];
    for (int i = 0; i < n; i++) {
      gate[i] =
          switch (rnd.nextInt(3)) {
            case 0 -> (float) (rnd.nextGaussian() * Math.pow(2, rnd.nextInt(30) - 20));
            case 1 -> edges[rnd.nextInt(edges.length)];
            default -> Float.intBitsToFloat(rnd.nextInt());
          };
      up[i] = (float) rnd.nextGaussian();
    }
    float[] expected = gate.clone();
    GeluTable.geGluReference(expected, up, 0, n);
    float[] actual = gate.clone();
    GeluTable.geGlu(actual, up, 0, n);
    for (int i = 0; i < n; i++) {
      assertThat(Float.floatToIntBits(actual[i]))
          .as("gelu(%s) * %s", gate[i], up[i])
          .isEqualTo(Float.floatToIntBits(expected[i]));
    }
  }

  /** ggml's values: the tanh form, input and output rounded through half precision. */
  @Test
  void geluIsGgmlsHalfPrecisionTable() {
    assertThat(GeluTable.apply(1f)).isEqualTo(HalfFloats.fromHalf(HalfFloats.toHalf(0.8411920f)));
    assertThat(GeluTable.apply(-10f)).isZero();
    assertThat(GeluTable.apply(12.5f)).isEqualTo(12.5f);
    assertThat(GeluTable.apply(0f)).isZero();
    assertThat(GeluTable.apply(-1f)).isEqualTo(HalfFloats.fromHalf(HalfFloats.toHalf(-0.1588080f)));
  }
}
