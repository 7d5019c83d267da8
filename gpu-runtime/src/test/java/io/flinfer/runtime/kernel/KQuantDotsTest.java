package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** K-quant products with 8-bit activations, as ggml computes them. */
class KQuantDotsTest {
  private static KQuantWeights heap(GgmlType type, byte[] bytes, int rows, int cols) {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    switch (type) {
      case Q4_K:
        return KQuantWeights.q4k(b, rows, cols);
      case Q5_K:
        return KQuantWeights.q5k(b, rows, cols);
      case Q3_K:
        return KQuantWeights.q3k(b, rows, cols);
      case IQ4_XS:
        return KQuantWeights.iq4xs(b, rows, cols);
      default:
        return KQuantWeights.q6k(b, rows, cols);
    }
  }

  /**
   * The vector kernels give the bits of the value-by-value reference for every row and token; and
   * the result is the float product of the dequantized weights with the activations, but for the
   * activations' rounding: within half a step of each super-block's activation scale times the sum
   * of its weights' magnitudes (plus float rounding).
   */
  @ParameterizedTest(name = "{0}: {1} rows x {2} cols")
  @CsvSource({"Q4_K, 9, 256", "Q4_K, 16, 768", "Q5_K, 9, 512", "Q6_K, 9, 256", "Q6_K, 16, 768"})
  void vectorKernelsGiveTheReferenceBitsWithinTheActivationRounding(
      GgmlType type, int rows, int cols) {
    Random rnd = new Random(rows * 31 + cols);
    byte[] bytes = GemmTest.encoded(type, rnd, rows, cols);
    KQuantWeights w = heap(type, bytes, rows, cols);
    int tokens = 4;
    float[] x = GemmTest.randoms(rnd, tokens * cols);
    x[5] = 0; // a zero among the values, and below a whole zero block
    java.util.Arrays.fill(x, 2 * cols, 2 * cols + 256, 0f);
    Q8KActivations a = new Q8KActivations();
    a.quantize(x, tokens, cols);
    float[] row = new float[cols];
    for (int o = 0; o < rows; o++) {
      w.decodeRow(o, row, 0);
      for (int t = 0; t < tokens; t++) {
        float fast = w.dot(o, a, t);
        assertThat(Float.floatToRawIntBits(fast))
            .as("%s row %d token %d against the reference", type, o, t)
            .isEqualTo(Float.floatToRawIntBits(w.dotReference(o, a, t)));
        double exact = 0;
        double bound = 0;
        for (int b = 0; b < cols / 256; b++) {
          double magnitude = 0;
          for (int i = b * 256; i < b * 256 + 256; i++) {
            exact += (double) row[i] * x[t * cols + i];
            magnitude += Math.abs(row[i]);
          }
          bound += Math.abs(a.scales()[t * cols / 256 + b]) / 2 * magnitude;
        }
        assertThat(Math.abs(fast - exact))
            .as("%s row %d token %d against the float product", type, o, t)
            .isLessThanOrEqualTo(bound * 1.001 + 1e-4 * (1 + Math.abs(exact)));
      }
    }
  }

  /**
   * Each run of 256 values is quantized by ggml's rule: the value of largest magnitude becomes -127
   * (its scale carries the sign), the others the nearest integer to value / scale with ties to even
   * (checked on exact halves below), each 32's sum kept; a block of zeros has scale 0.
   */
  @Test
  void activationsAreQuantizedAsGgmlQuantizesThem() {
    float[] x = new float[512];
    for (int i = 0; i < 256; i++) {
      x[i] = (i % 7 - 3) * 0.25f;
    }
    x[10] = 1.27f; // the largest
    Q8KActivations a = new Q8KActivations();
    a.quantize(x, 1, 512);
    float scale = a.scales()[0];
    assertThat(scale).isEqualTo(1 / (-127f / 1.27f));
    assertThat(a.values()[10]).isEqualTo((short) -127);
    float iscale = -127f / 1.27f;
    for (int i = 0; i < 256; i++) {
      assertThat((int) a.values()[i]).as("value %d", i).isEqualTo((int) Math.rint(iscale * x[i]));
    }
    for (int j = 0; j < 8; j++) {
      int sum = 0;
      for (int i = 32 * j; i < 32 * j + 32; i++) {
        sum += a.values()[i];
      }
      assertThat(a.sums()[j]).isEqualTo(sum);
    }
    assertThat(a.scales()[1]).isZero();
    for (int i = 256; i < 512; i++) {
      assertThat(a.values()[i]).isZero();
    }
    assertThat(Q8KActivations.nearestInt(2.5f)).isEqualTo(2);
    assertThat(Q8KActivations.nearestInt(-3.5f)).isEqualTo(-4);
    assertThat(Q8KActivations.nearestInt(126.49f)).isEqualTo(126);
    assertThat(Q8KActivations.nearestInt(Float.NaN)).isZero();
  }

  /**
   * With 8-bit activations a token gets the same bits alone, in batches of any size (the batch goes
   * through rows decoded to floats in tiles of 4 x 4 where the CPU has the registers, and 2 x 3),
   * in any slice of rows, and from the mapped file.
   */
  @ParameterizedTest(name = "{0}: {1} rows x {2} cols, {3} tokens")
  @CsvSource({
    "Q4_K, 9, 256, 7",
    "Q4_K, 16, 768, 9",
    "Q5_K, 9, 512, 5",
    "Q6_K, 9, 256, 7",
    "Q6_K, 16, 768, 4",
    "Q4_K, 10, 512, 8",
    "Q4_K, 21, 256, 10",
    "Q5_K, 12, 256, 2",
    "Q6_K, 16, 512, 6",
    "Q6_K, 8, 768, 11",
    "Q3_K, 9, 256, 7",
    "Q3_K, 16, 512, 4",
    "IQ4_XS, 9, 256, 7",
    "IQ4_XS, 16, 512, 4"
  })
  void aTokenGetsTheSameBitsAloneInABatchAndFromTheMappedFile(
      GgmlType type, int rows, int cols, int tokens) {
    Random rnd = new Random(rows * 131 + cols);
    byte[] bytes = GemmTest.encoded(type, rnd, rows, cols);
    float[] x = GemmTest.randoms(rnd, tokens * cols);
    WeightMatrix heap;
    WeightMatrix mapped;
    System.setProperty("flinfer.kquant.activations", "q8");
    try {
      heap = WeightMatrix.of(type, ByteBuffer.wrap(bytes), rows, cols);
      System.setProperty("flinfer.weights.heap", "false");
      mapped = WeightMatrix.of(type, ByteBuffer.wrap(bytes), rows, cols);
    } finally {
      System.clearProperty("flinfer.kquant.activations");
      System.clearProperty("flinfer.weights.heap");
    }
    KQuantWeights w = heap(type, bytes, rows, cols);
    Q8KActivations a = new Q8KActivations();
    a.quantize(x, tokens, cols);
    float[] scratch = new float[WeightMatrix.scratchSize(cols)];
    for (WeightMatrix m : new WeightMatrix[] {heap, mapped}) {
      float[] batch = new float[tokens * rows];
      int split = rows / 2 | 1;
      m.matmul(x, tokens, batch, rows, 0, split, scratch);
      m.matmul(x, tokens, batch, rows, split, rows, scratch);
      for (int t = 0; t < tokens; t++) {
        float[] one = new float[rows];
        m.matmul(
            java.util.Arrays.copyOfRange(x, t * cols, (t + 1) * cols),
            1,
            one,
            rows,
            0,
            rows,
            scratch);
        for (int o = 0; o < rows; o++) {
          int expected = Float.floatToRawIntBits(w.dot(o, a, t));
          assertThat(Float.floatToRawIntBits(one[o]))
              .as("%s token %d row %d alone", type, t, o)
              .isEqualTo(expected);
          assertThat(Float.floatToRawIntBits(batch[t * rows + o]))
              .as("%s token %d row %d in a batch of %d", type, t, o, tokens)
              .isEqualTo(expected);
        }
      }
    }
  }

  /**
   * Products near the largest the heap forms hold (Q6_K scales of -127 to -121 times values of -31
   * or -29 times activations of 98 to 127 in magnitude) stay exact in the batch tiles' floats: each
   * lane's 32 products of a super-block sum to about 13 million, under 2^24, and the lanes' sum
   * (about 110 million, past 2^24) is taken as an exact integer, so a batch gives each output the
   * bits of the single-token integer kernel (summing the lanes in floats fails this).
   */
  @Test
  void productsNearTheLargestStayExactInBatches() {
    int rows = 8;
    int cols = 512;
    int tokens = 6;
    byte[] bytes = new byte[rows * cols / 256 * 210];
    Random rnd = new Random(5);
    for (int k = 0; k < rows * cols / 256; k++) {
      int p = k * 210;
      // ql nibbles 1 or 3, qh 0: values -31 or -29; scales -127 to -121, all odd.
      for (int i = p; i < p + 128; i++) {
        bytes[i] = (byte) ((rnd.nextBoolean() ? 1 : 3) | (rnd.nextBoolean() ? 0x10 : 0x30));
      }
      for (int i = p + 192; i < p + 208; i++) {
        bytes[i] = (byte) (-127 + 2 * rnd.nextInt(4));
      }
      bytes[p + 208] = 0x00; // d = 1.0 in fp16 (0x3C00), little-endian
      bytes[p + 209] = 0x3C;
    }
    // Activations quantized to 98..127 in magnitude, the first of each token's blocks the largest.
    float[] x = new float[tokens * cols];
    for (int i = 0; i < x.length; i++) {
      x[i] = i % 256 == 0 ? 1f : 0.77f + 0.23f * rnd.nextFloat();
    }
    WeightMatrix m;
    System.setProperty("flinfer.kquant.activations", "q8");
    try {
      m = WeightMatrix.of(GgmlType.Q6_K, ByteBuffer.wrap(bytes), rows, cols);
    } finally {
      System.clearProperty("flinfer.kquant.activations");
    }
    KQuantWeights w = heap(GgmlType.Q6_K, bytes, rows, cols);
    Q8KActivations a = new Q8KActivations();
    a.quantize(x, tokens, cols);
    float[] batch = new float[tokens * rows];
    m.matmul(x, tokens, batch, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
    for (int t = 0; t < tokens; t++) {
      for (int o = 0; o < rows; o++) {
        assertThat(Float.floatToRawIntBits(batch[t * rows + o]))
            .as("token %d row %d", t, o)
            .isEqualTo(Float.floatToRawIntBits(w.dot(o, a, t)));
      }
    }
  }

  /** Q2_K has no 8-bit activation kernels: under the setting it multiplies as without it. */
  @Test
  void q2kKeepsFloatActivationsUnderTheEightBitSetting() {
    int rows = 9;
    int cols = 512;
    int tokens = 3;
    Random rnd = new Random(37);
    byte[] bytes = GemmTest.encoded(GgmlType.Q2_K, rnd, rows, cols);
    float[] x = GemmTest.randoms(rnd, tokens * cols);
    WeightMatrix f32 = WeightMatrix.of(GgmlType.Q2_K, ByteBuffer.wrap(bytes), rows, cols);
    WeightMatrix q8;
    System.setProperty("flinfer.kquant.activations", "q8");
    try {
      q8 = WeightMatrix.of(GgmlType.Q2_K, ByteBuffer.wrap(bytes), rows, cols);
    } finally {
      System.clearProperty("flinfer.kquant.activations");
    }
    for (int n : new int[] {1, tokens}) {
      float[] a = new float[n * rows];
      float[] b = new float[n * rows];
      f32.matmul(x, n, a, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
      q8.matmul(x, n, b, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
      assertThat(b).as("%d tokens", n).containsExactly(a);
    }
  }

  /**
   * The same activations again (the next slice of rows of one product) reuse the quantization; new
   * values in the same array, or another shape, are quantized anew.
   */
  @Test
  void newValuesInTheSameArrayAreQuantizedAnew() {
    float[] x = GemmTest.randoms(new Random(3), 512);
    Q8KActivations a = new Q8KActivations();
    a.quantize(x, 2, 256);
    float before = a.scales()[1];
    a.quantize(x, 2, 256);
    assertThat(a.scales()[1]).isEqualTo(before);
    x[300] = 1000f;
    a.quantize(x, 2, 256);
    assertThat(a.values()[300]).isEqualTo((short) -127);
    assertThat(a.scales()[1]).isEqualTo(1 / (-127f / 1000f));
    a.quantize(x, 1, 512);
    assertThat(a.cols()).isEqualTo(512);
    assertThat(a.scales()[1]).isEqualTo(1 / (-127f / 1000f));
    assertThat(a.values()[300]).isEqualTo((short) -127);
  }
}
