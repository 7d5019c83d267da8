package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Q4_1 and Q5_1 products follow ggml's {@code q8_1} arithmetic: per block {@code d_w * d_a * sum
 * q_w q_a + m_w * s}, with {@code s = fp16(d * sum q_a)} (d before its fp16 rounding). The
 * corrections carried with the rounded activations ({@link ActivationRounding#Q8_1}) bring the
 * float products within float rounding of it, where the offsets' product with the rounded values
 * alone misses by the fp16 rounding of s.
 */
class OffsetBlockProductsTest {
  @ParameterizedTest(name = "{0}: {1} rows x {2} cols, {3} tokens")
  @CsvSource({"Q4_1, 9, 256, 1", "Q4_1, 16, 512, 6", "Q5_1, 13, 160, 1", "Q5_1, 8, 896, 20"})
  void productsFollowGgmlsQ8_1Arithmetic(GgmlType type, int rows, int cols, int tokens) {
    Random rnd = new Random(rows * 31 + cols + tokens);
    byte[] bytes = GemmTest.encoded(type, rnd, rows, cols);
    float[] x = GemmTest.randoms(rnd, tokens * cols);
    WeightMatrix m = WeightMatrix.of(type, ByteBuffer.wrap(bytes), rows, cols);
    float[] out = new float[tokens * rows];
    m.matmul(x, tokens, out, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);

    ByteBlockFormat format = ByteBlockFormat.valueOf(type.name());
    ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    int blocks = cols / 32;
    double worst = 0;
    double worstUncorrected = 0;
    for (int t = 0; t < tokens; t++) {
      for (int o = 0; o < rows; o++) {
        double ggml = 0;
        double uncorrected = 0;
        double magnitude = 0;
        for (int k = 0; k < blocks; k++) {
          int p = (o * blocks + k) * format.blockBytes;
          float dw = HalfFloats.fromHalf(b.getShort(p));
          float mw = HalfFloats.fromHalf(b.getShort(p + 2));
          int xOff = t * cols + k * 32;
          float amax = 0;
          for (int i = 0; i < 32; i++) {
            amax = Math.max(amax, Math.abs(x[xOff + i]));
          }
          float d = amax / 127f;
          float da = HalfFloats.fromHalf(HalfFloats.toHalf(d));
          float id = amax != 0 ? 127f / amax : 0;
          long dot = 0;
          int sum = 0;
          for (int i = 0; i < 32; i++) {
            int qa = (int) Math.rint(x[xOff + i] * id);
            dot += (long) format.value(b, p, i) * qa;
            sum += qa;
            magnitude += Math.abs((dw * format.value(b, p, i) + mw) * (double) x[xOff + i]);
          }
          float s = HalfFloats.fromHalf(HalfFloats.toHalf(d * sum));
          ggml += (double) dw * da * dot + (double) mw * s;
          uncorrected += (double) dw * da * dot + (double) mw * da * sum;
        }
        worst = Math.max(worst, Math.abs(out[t * rows + o] - ggml) / magnitude);
        worstUncorrected = Math.max(worstUncorrected, Math.abs(uncorrected - ggml) / magnitude);
      }
    }
    System.out.printf(
        "%s %dx%d, %d tokens: against ggml's arithmetic %.2e (without the corrections %.2e)%n",
        type, rows, cols, tokens, worst, worstUncorrected);
    assertThat(worst).isLessThan(1e-6);
    // The test can tell: without the corrections the products would miss by far more.
    assertThat(worstUncorrected).isGreaterThan(10 * worst);
  }
}
