package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.HalfFloats;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The halves converted without their final product ({@link HalfVectors#fp16Moved}) against
 * activations carrying it ({@link HalfVectors#scaledForMoved}): every multiply-add rounds to the
 * bits the full conversion gives, for every finite half.
 */
class HalfVectorsTest {
  /** Every finite half, against activations from subnormal to just under the bound. */
  @Test
  void movedHalvesTimesScaledActivationsRoundAsTheHalvesTimesTheActivations() {
    short[] h = new short[65536];
    for (int i = 0; i < h.length; i++) {
      h[i] = (short) i;
    }
    Random rnd = new Random(41);
    float[] x = new float[64];
    for (int i = 0; i < x.length; i++) {
      x[i] = (float) rnd.nextGaussian() * (float) Math.pow(2, rnd.nextInt(40) - 24);
    }
    x[0] = Float.MIN_VALUE;
    x[1] = -Float.MIN_NORMAL;
    x[2] = Math.nextDown(0x1.0p16f);
    x[3] = -Math.nextDown(0x1.0p16f);
    x[4] = 0f;
    x[5] = -0f;
    float[] scaled = HalfVectors.scaledForMoved(x, 0, x.length).clone();
    float[] lanes = new float[8];
    for (int i = 0; i < 65536; i += 8) {
      HalfVectors.fp16Moved(h, i).intoArray(lanes, 0);
      for (int k = 0; k < 8; k++) {
        short v = (short) (i + k);
        if ((v & 0x7C00) == 0x7C00) {
          continue; // infinities and NaNs never take this path (HalfVectors.hasNoSpecials)
        }
        float w = HalfFloats.fromHalf(v);
        for (int j = 0; j < x.length; j++) {
          float acc = j % 3 == 0 ? 0f : (float) rnd.nextGaussian();
          assertThat(Float.floatToRawIntBits(Math.fma(lanes[k], scaled[j], acc)))
              .as("half 0x%04x times %s plus %s", i + k, x[j], acc)
              .isEqualTo(Float.floatToRawIntBits(Math.fma(w, x[j], acc)));
        }
      }
    }
  }

  @Test
  void activationsThatWouldOverflowOrAreNotFiniteAreRefused() {
    for (float bad :
        new float[] {
          0x1.0p16f, -0x1.0p16f, 1e30f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN
        }) {
      for (int at : new int[] {0, 5, 12, 16}) {
        float[] x = new float[17];
        java.util.Arrays.fill(x, 0.25f);
        x[at] = bad;
        assertThat(HalfVectors.scaledForMoved(x, 0, x.length)).as("%s at %d", bad, at).isNull();
      }
    }
    float[] x = {1f, -2f, 3f, 0x1.0p-20f, -65535f, 7f, 8f, 9f, 10f, 0.5f};
    float[] scaled = HalfVectors.scaledForMoved(x, 1, 9);
    assertThat(scaled).isNotNull();
    for (int i = 0; i < 9; i++) {
      assertThat(scaled[i]).isEqualTo(x[1 + i] * 0x1.0p112f);
    }
  }
}
