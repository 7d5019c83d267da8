package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.runtime.gguf.GgufWriter;
import io.flinfer.runtime.tensor.GgmlType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/**
 * Float32 rows in blocks of eight give every output of a token the bits of the one-accumulator
 * kernel over the buffer, for any shape (scalar tails, partial last blocks), any range of rows
 * (blocks cut at either end), and any values, infinities and NaNs among them; rows outside the
 * range are not written.
 */
class RowBlockWeightsTest {
  @Property(tries = 300)
  void aTokenGetsTheBufferKernelsBits(
      @ForAll @IntRange(min = 1, max = 40) int rows,
      @ForAll @IntRange(min = 1, max = 90) int cols,
      @ForAll @IntRange(min = 0, max = 40) int a,
      @ForAll @IntRange(min = 0, max = 40) int b,
      @ForAll boolean specials,
      @ForAll @LongRange long seed) {
    int oFrom = Math.min(a, b) % (rows + 1);
    int oTo = Math.max(oFrom, Math.max(a, b) % (rows + 1));
    Random rnd = new Random(seed);
    float[] values = GemmTest.randoms(rnd, rows * cols);
    float[] x = GemmTest.randoms(rnd, cols);
    if (specials) {
      float[] odd = {Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, -0f, 1e38f};
      for (int k = 0; k < 3; k++) {
        values[rnd.nextInt(values.length)] = odd[rnd.nextInt(odd.length)];
      }
    }
    ByteBuffer w =
        ByteBuffer.wrap(GgufWriter.encode(GgmlType.F32, values)).order(ByteOrder.LITTLE_ENDIAN);
    float[] expected = new float[rows];
    Gemm.bufferRows(w, cols, x, 1, expected, rows, oFrom, oTo, new float[Gemm.SCRATCH]);
    float[] out = new float[rows];
    java.util.Arrays.fill(out, 7f);
    RowBlockWeights.of(w, rows, cols).multiplyTokens(x, 1, out, rows, oFrom, oTo, new float[24]);
    for (int o = 0; o < rows; o++) {
      float want = o >= oFrom && o < oTo ? expected[o] : 7f;
      // Every NaN counts as one: Java leaves a NaN result's sign and payload open, and on JDK 25
      // the two kernels' NaNs (from infinities of opposite signs) came out with different signs.
      assertThat(Float.floatToIntBits(out[o]))
          .as("row %d of [%d, %d): %s against %s", o, oFrom, oTo, out[o], want)
          .isEqualTo(Float.floatToIntBits(want));
    }
  }

  /**
   * A batch, in three-token tiles or token by token, gives every token the bits it gets alone, and
   * writes only its rows of the range.
   */
  @Property(tries = 200)
  void aBatchGivesEveryTokenItsBitsAlone(
      @ForAll @IntRange(min = 1, max = 30) int rows,
      @ForAll @IntRange(min = 1, max = 70) int cols,
      @ForAll @IntRange(min = 1, max = 8) int tokens,
      @ForAll @IntRange(min = 0, max = 30) int a,
      @ForAll @IntRange(min = 0, max = 30) int b,
      @ForAll boolean threeTokenTiles,
      @ForAll @LongRange long seed) {
    int oFrom = Math.min(a, b) % (rows + 1);
    int oTo = Math.max(oFrom, Math.max(a, b) % (rows + 1));
    Random rnd = new Random(seed);
    RowBlockWeights m =
        RowBlockWeights.of(
            ByteBuffer.wrap(GgufWriter.encode(GgmlType.F32, GemmTest.randoms(rnd, rows * cols))),
            rows,
            cols);
    float[] x = GemmTest.randoms(rnd, tokens * cols);
    int stride = rows + 3;
    float[] batch = new float[tokens * stride];
    java.util.Arrays.fill(batch, 7f);
    m.multiplyTokens(x, tokens, batch, stride, oFrom, oTo, new float[24], threeTokenTiles);
    for (int t = 0; t < tokens; t++) {
      float[] alone = new float[rows];
      m.multiplyTokens(
          java.util.Arrays.copyOfRange(x, t * cols, (t + 1) * cols),
          1,
          alone,
          rows,
          oFrom,
          oTo,
          new float[24]);
      for (int o = 0; o < stride; o++) {
        float want = o >= oFrom && o < oTo ? alone[o] : 7f;
        assertThat(Float.floatToRawIntBits(batch[t * stride + o]))
            .as("token %d row %d of [%d, %d)", t, o, oFrom, oTo)
            .isEqualTo(Float.floatToRawIntBits(want));
      }
    }
  }

  @Test
  void refusesRowsOutsideTheMatrix() {
    RowBlockWeights m =
        RowBlockWeights.of(ByteBuffer.wrap(GgufWriter.encode(GgmlType.F32, new float[24])), 3, 8);
    assertThatThrownBy(
            () -> m.multiplyTokens(new float[8], 1, new float[8], 8, 0, 4, new float[24]))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }
}
