package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The vector loop the kernels use ({@link FastExp#expSum}, {@link FastExp#swiGlu}) gives the same
 * bits as the scalar {@link FastExp#exp(float)} for every element, whether it falls in a vector
 * block or the scalar tail, and the scalar form stays within 2 ulp of {@link Math#exp}.
 */
class FastExpTest {
  @Test
  void expSumMatchesTheScalarFormBitForBitAndStaysWithin2Ulp() {
    Random rnd = new Random(1);
    for (int n : new int[] {1, 7, 8, 13, 520, 1031}) {
      float[] x = new float[n];
      for (int i = 0; i < n; i++) {
        x[i] = -rnd.nextFloat() * 90f;
      }
      float[] out = new float[n];
      double sum = FastExp.expSum(x, 0, n, 0f, 1f, out, 0);
      double expected = 0;
      for (int i = 0; i < n; i++) {
        float s = FastExp.exp(x[i]);
        assertThat(Float.floatToRawIntBits(out[i]))
            .as("exp(%s) of %d", x[i], n)
            .isEqualTo(Float.floatToRawIntBits(s));
        double exact = Math.exp(x[i]);
        if (exact > 1e-37) {
          assertThat(Math.abs(s - exact))
              .as("exp(%s)", x[i])
              .isLessThanOrEqualTo(2 * Math.ulp((float) exact));
        }
        expected += s;
      }
      assertThat(sum)
          .isCloseTo(expected, org.assertj.core.data.Offset.offset(1e-6 * expected + 1e-30));
    }
    assertThat(FastExp.exp(0f)).isEqualTo(1f);
    assertThat(FastExp.exp(-1000f)).isLessThan(1e-37f);
  }

  @Test
  void shiftAndScaleAreAppliedBeforeTheExp() {
    float[] x = {3f, 1f, -2f, 0.5f, 4f, 2f, -1f, 0f, 1.5f};
    float[] out = new float[x.length];
    FastExp.expSum(x, 0, x.length, 4f, 0.5f, out, 0);
    for (int i = 0; i < x.length; i++) {
      assertThat(out[i]).isEqualTo(FastExp.exp((x[i] - 4f) * 0.5f));
    }
  }

  @Test
  void swiGluGatesEachValueLikeTheScalarFormula() {
    Random rnd = new Random(2);
    int n = 37;
    float[] a = new float[n];
    float[] b = new float[n];
    for (int i = 0; i < n; i++) {
      a[i] = (float) rnd.nextGaussian() * 5f;
      b[i] = (float) rnd.nextGaussian();
    }
    float[] expected = new float[n];
    for (int i = 0; i < n; i++) {
      expected[i] = a[i] * (1f / (1f + FastExp.exp(-a[i]))) * b[i];
      double exact = a[i] / (1 + Math.exp(-a[i])) * b[i];
      assertThat((double) expected[i])
          .isCloseTo(exact, org.assertj.core.data.Offset.offset(1e-5 * (1 + Math.abs(exact))));
    }
    FastExp.swiGlu(a, b, 0, n);
    for (int i = 0; i < n; i++) {
      assertThat(Float.floatToRawIntBits(a[i]))
          .as("element %d", i)
          .isEqualTo(Float.floatToRawIntBits(expected[i]));
    }
  }

  @Test
  void laneNumeratorsAreTheScalarFormsBitsMaskedPastEachLanesPositionAndSummedInOrder() {
    Random rnd = new Random(3);
    int rows = 11;
    int stride = 16;
    int from = 8;
    float[] a = new float[from + rows * stride];
    for (int i = 0; i < a.length; i++) {
      a[i] = (float) rnd.nextGaussian() * 4f;
    }
    float[] before = a.clone();
    float[] max = new float[16];
    for (int k = 0; k < 8; k++) {
      max[8 + k] = 3f + k;
    }
    float[] last = {0, 2, 4, 6, 8, 10, 12, Float.MAX_VALUE};
    int maskFrom = 3;
    float[] sums = new float[16];
    FastExp.expLanes(a, from, stride, rows, max, 8, last, maskFrom, sums, 8);
    for (int k = 0; k < 8; k++) {
      float sum = 0f;
      for (int j = 0; j < rows; j++) {
        int at = from + j * stride + k;
        float e = j >= maskFrom && last[k] < j ? 0f : FastExp.exp(before[at] - max[8 + k]);
        assertThat(Float.floatToRawIntBits(a[at]))
            .as("lane %d position %d", k, j)
            .isEqualTo(Float.floatToRawIntBits(e));
        sum += e;
      }
      assertThat(Float.floatToRawIntBits(sums[8 + k]))
          .as("lane %d sum", k)
          .isEqualTo(Float.floatToRawIntBits(sum));
    }
    for (int i = 0; i < from; i++) {
      assertThat(a[i]).as("before the rows").isEqualTo(before[i]);
    }
  }
}
