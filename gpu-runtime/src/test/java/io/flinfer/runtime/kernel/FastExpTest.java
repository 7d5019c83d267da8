package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

class FastExpTest {
  @Test
  void vectorAndScalarGiveTheSameBitsAndStayWithin2UlpOfMathExp() {
    Random rnd = new Random(1);
    float[] x = new float[8];
    float[] v = new float[8];
    for (int round = 0; round < 20_000; round++) {
      for (int i = 0; i < 8; i++) {
        x[i] = round < 10 ? -i * round * 1.3f : -rnd.nextFloat() * 90f;
      }
      FastExp.exp(FloatVector.fromArray(FloatVector.SPECIES_256, x, 0)).intoArray(v, 0);
      for (int i = 0; i < 8; i++) {
        float s = FastExp.exp(x[i]);
        assertThat(Float.floatToRawIntBits(v[i]))
            .as("exp(%s)", x[i])
            .isEqualTo(Float.floatToRawIntBits(s));
        double exact = Math.exp(x[i]);
        if (exact > 1e-37) {
          assertThat(Math.abs(s - exact))
              .as("exp(%s)", x[i])
              .isLessThanOrEqualTo(2 * Math.ulp((float) exact));
        }
      }
    }
    assertThat(FastExp.exp(0f)).isEqualTo(1f);
    assertThat(FastExp.exp(-1000f)).isLessThan(1e-37f);
  }
}
