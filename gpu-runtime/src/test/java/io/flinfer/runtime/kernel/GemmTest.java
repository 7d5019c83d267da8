package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.gguf.GgufWriter;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The tiled kernels agree with the scalar reference and are invariant to batch and row split. */
class GemmTest {

  @ParameterizedTest(name = "{0} rows x {1} cols, {2} tokens")
  @CsvSource({
    "1, 8, 1",
    "7, 13, 3",
    "64, 64, 1",
    "33, 172, 5",
    "131, 200, 2",
    "96, 256, 9",
    "10, 768, 32"
  })
  void tiledKernelsMatchTheReferenceAndEachOther(int rows, int cols, int tokens) {
    Random rnd = new Random(rows * 31 + cols);
    float[] w = randoms(rnd, rows * cols);
    float[] x = randoms(rnd, tokens * cols);
    WeightMatrix m =
        WeightMatrix.of(
            GgmlType.F32, ByteBuffer.wrap(GgufWriter.encode(GgmlType.F32, w)), rows, cols);

    float[] expected = new float[tokens * rows];
    Gemm.reference(w, rows, cols, x, tokens, expected, rows);
    float[] all = new float[tokens * rows];
    m.matmul(x, tokens, all, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
    for (int i = 0; i < expected.length; i++) {
      assertThat(all[i])
          .isCloseTo(
              expected[i],
              org.assertj.core.data.Offset.offset(1e-4f * (1 + Math.abs(expected[i]))));
    }

    // Each token alone, and rows split at an odd boundary: the same bits.
    for (int t = 0; t < tokens; t++) {
      float[] one = new float[rows];
      float[] xt = new float[cols];
      System.arraycopy(x, t * cols, xt, 0, cols);
      int split = rows / 2 | 1;
      m.matmul(
          xt, 1, one, rows, 0, Math.min(split, rows), new float[WeightMatrix.scratchSize(cols)]);
      m.matmul(
          xt, 1, one, rows, Math.min(split, rows), rows, new float[WeightMatrix.scratchSize(cols)]);
      for (int o = 0; o < rows; o++) {
        assertThat(Float.floatToRawIntBits(one[o]))
            .isEqualTo(Float.floatToRawIntBits(all[t * rows + o]));
      }
    }
  }

  /**
   * {@code x} rounded as products with {@code type} round it ({@link ActivationRounding}), as a
   * copy: what the reference products take.
   */
  static float[] rounded(GgmlType type, float[] x) {
    return Arrays.copyOf(type.ggmlActivations().apply(x, x.length), x.length);
  }

  /**
   * For types whose activations round as ggml's {@code q8_1} (Q4_1, Q5_1): each output's block
   * offsets (fp16 at byte 2 of each block) times its token's corrections, added to {@code
   * expected}, so that the offsets meet ggml's {@code s}.
   */
  static void addOffsetCorrections(
      GgmlType type, byte[] bytes, int rows, int cols, float[] x, int tokens, float[] expected) {
    if (type.ggmlActivations() != ActivationRounding.Q8_1) {
      return;
    }
    int n = tokens * cols;
    float[] r = type.ggmlActivations().apply(x, n);
    int blocks = cols / 32;
    int bb = (int) type.bytes(32);
    ByteBuffer b = ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    for (int t = 0; t < tokens; t++) {
      for (int o = 0; o < rows; o++) {
        double c = 0;
        for (int k = 0; k < blocks; k++) {
          float m = io.flinfer.memcache.HalfFloats.fromHalf(b.getShort((o * blocks + k) * bb + 2));
          c += m * (double) r[ActivationRounding.corrections(n) + t * blocks + k];
        }
        expected[t * rows + o] += (float) c;
      }
    }
  }

  @ParameterizedTest
  @CsvSource({"F16", "BF16", "Q8_0", "Q4_0"})
  void decodedTypesUseTheSameArithmeticAsTheirDecodedRows(GgmlType type) {
    int rows = 6;
    int cols = 64;
    int tokens = 5;
    Random rnd = new Random(11);
    float[] w = randoms(rnd, rows * cols);
    float[] x = randoms(rnd, tokens * cols);
    WeightMatrix m = WeightMatrix.of(type, ByteBuffer.wrap(GgufWriter.encode(type, w)), rows, cols);
    float[] decoded = new float[rows * cols];
    for (int r = 0; r < rows; r++) {
      m.decodeRow(r, decoded, r * cols);
    }
    float[] expected = new float[tokens * rows];
    Gemm.reference(decoded, rows, cols, rounded(type, x), tokens, expected, rows);
    float[] actual = new float[tokens * rows];
    m.matmul(x, tokens, actual, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
    for (int i = 0; i < expected.length; i++) {
      assertThat(actual[i])
          .isCloseTo(
              expected[i],
              org.assertj.core.data.Offset.offset(1e-4f * (1 + Math.abs(expected[i]))));
    }
  }

  /**
   * Q8_0 and Q4_0 products of one token run straight from the blocks (rows side by side from parts
   * of the range, a short last part repeating its last row), those of a batch from decoded rows: a
   * token gets the same bits either way, and both are the reference product of the dequantized
   * weights.
   */
  @ParameterizedTest(name = "{0}: {1} rows x {2} cols, {3} tokens")
  @CsvSource({
    "Q8_0, 1, 32, 2",
    "Q8_0, 9, 96, 5",
    "Q8_0, 64, 768, 9",
    "Q8_0, 13, 160, 6",
    "Q4_0, 1, 32, 2",
    "Q4_0, 7, 64, 5",
    "Q4_0, 9, 96, 5",
    "Q4_0, 64, 768, 9",
    "F32, 11, 100, 2",
    "F32, 64, 768, 4",
    "F32, 13, 96, 5",
    "Q8_0, 11, 96, 2",
    "Q8_0, 64, 768, 4",
    "Q8_0, 13, 160, 7",
    "Q8_0, 9, 64, 15",
    "Q8_0, 64, 768, 16",
    "Q4_0, 11, 96, 2",
    "Q4_0, 64, 768, 3",
    "Q4_0, 13, 160, 4",
    "Q4_0, 9, 64, 5",
    "F16, 7, 13, 3",
    "F16, 64, 768, 9",
    "F16, 9, 96, 5",
    "F16, 9, 2048, 3",
    "F16, 6, 2056, 2",
    "BF16, 9, 100, 5",
    "BF16, 64, 768, 9",
    "BF16, 7, 2048, 2",
    "F16, 13, 96, 15",
    "F16, 64, 768, 16",
    "F16, 5, 24, 7",
    "BF16, 11, 100, 12",
    "Q4_K, 9, 256, 5",
    "Q4_K, 16, 768, 9",
    "Q4_K, 11, 256, 2",
    "Q4_K, 16, 512, 3",
    "Q4_K, 9, 256, 4",
    "Q6_K, 11, 256, 2",
    "Q6_K, 16, 512, 7",
    "Q6_K, 9, 256, 15",
    "Q6_K, 16, 256, 16",
    "Q5_K, 9, 512, 5",
    "Q6_K, 9, 256, 5",
    "Q6_K, 16, 768, 9",
    "Q3_K, 9, 256, 5",
    "Q3_K, 16, 768, 9",
    "Q3_K, 11, 512, 2",
    "Q3_K, 16, 256, 16",
    "IQ4_XS, 9, 256, 5",
    "IQ4_XS, 16, 512, 2",
    "IQ4_XS, 16, 256, 16",
    "IQ4_NL, 9, 96, 5",
    "IQ4_NL, 64, 768, 9",
    "IQ4_NL, 13, 160, 2",
    "IQ4_NL, 9, 64, 16",
    "Q2_K, 9, 256, 5",
    "Q2_K, 16, 768, 9",
    "Q2_K, 11, 512, 2",
    "Q2_K, 16, 256, 16",
    "Q5_0, 9, 96, 5",
    "Q5_0, 64, 896, 9",
    "Q5_0, 13, 160, 2",
    "Q5_0, 9, 64, 16",
    "Q4_1, 9, 96, 5",
    "Q4_1, 64, 896, 3",
    "Q5_1, 13, 160, 2",
    "Q5_1, 9, 64, 16"
  })
  void aTokenAloneGetsTheBitsItGetsInABatch(GgmlType type, int rows, int cols, int tokens) {
    Random rnd = new Random(rows * 131 + cols);
    byte[] bytes = encoded(type, rnd, rows, cols);
    float[] x = randoms(rnd, tokens * cols);
    WeightMatrix m = WeightMatrix.of(type, ByteBuffer.wrap(bytes), rows, cols);
    float[] dequantized = new float[rows * cols];
    for (int r = 0; r < rows; r++) {
      m.decodeRowReference(r, dequantized, r * cols);
    }
    float[] expected = new float[tokens * rows];
    Gemm.reference(dequantized, rows, cols, rounded(type, x), tokens, expected, rows);
    addOffsetCorrections(type, bytes, rows, cols, x, tokens, expected);
    float[] batch = new float[tokens * rows];
    m.matmul(x, tokens, batch, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
    for (int t = 0; t < tokens; t++) {
      float[] one = new float[rows];
      float[] xt = new float[cols];
      System.arraycopy(x, t * cols, xt, 0, cols);
      int split = rows / 2 | 1;
      m.matmul(
          xt, 1, one, rows, 0, Math.min(split, rows), new float[WeightMatrix.scratchSize(cols)]);
      m.matmul(
          xt, 1, one, rows, Math.min(split, rows), rows, new float[WeightMatrix.scratchSize(cols)]);
      for (int o = 0; o < rows; o++) {
        float e = expected[t * rows + o];
        assertThat(one[o])
            .as("token %d row %d alone", t, o)
            .isCloseTo(e, org.assertj.core.data.Offset.offset(1e-4f * (1 + Math.abs(e))));
        assertThat(Float.floatToRawIntBits(one[o]))
            .as("token %d row %d alone against in a batch", t, o)
            .isEqualTo(Float.floatToRawIntBits(batch[t * rows + o]));
      }
    }
  }

  /**
   * F16 weights holding infinities and a NaN take the exact conversion: each row gets the
   * reference's value, alone as in a batch (the other rows' kernels skip the test for them).
   */
  @ParameterizedTest(name = "{0} columns")
  @CsvSource({"64", "2048"})
  void halfWeightsWithInfinitiesAndNaNsGiveTheReferenceValues(int cols) {
    int rows = 9;
    Random rnd = new Random(23);
    float[] w = randoms(rnd, rows * cols);
    w[2 * cols + 5] = Float.POSITIVE_INFINITY;
    w[6 * cols + 40] = Float.NaN;
    float[] x = new float[2 * cols];
    java.util.Arrays.fill(x, 0.5f);
    WeightMatrix m =
        WeightMatrix.of(
            GgmlType.F16, ByteBuffer.wrap(GgufWriter.encode(GgmlType.F16, w)), rows, cols);
    float[] dequantized = new float[rows * cols];
    for (int r = 0; r < rows; r++) {
      m.decodeRowReference(r, dequantized, r * cols);
    }
    float[] expected = new float[2 * rows];
    Gemm.reference(dequantized, rows, cols, x, 2, expected, rows);
    float[] one = new float[rows];
    float[] two = new float[2 * rows];
    m.matmul(x, 1, one, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
    m.matmul(x, 2, two, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
    assertThat(one[2]).isEqualTo(Float.POSITIVE_INFINITY);
    assertThat(one[6]).isNaN();
    for (int o = 0; o < rows; o++) {
      assertThat(Float.compare(one[o], two[o])).as("row %d alone against in a batch", o).isZero();
      if (o != 2 && o != 6) {
        assertThat(one[o])
            .isCloseTo(
                expected[o],
                org.assertj.core.data.Offset.offset(1e-4f * (1 + Math.abs(expected[o]))));
      }
    }
  }

  /**
   * F16 products of one token and of small batches take the halves without their final product and
   * activations scaled by 2^112; a token with an activation of 2^16 or more, whose scaled values
   * would overflow, takes the full conversion. Either way a token gets the bits of the decoded rows
   * (a batch of 16), with subnormal halves among the weights.
   */
  @ParameterizedTest(name = "{0} cols, {1} tokens")
  @CsvSource({"64, 5", "768, 3", "2048, 1"})
  void halfProductsGiveTheDecodedRowsBitsWithLargeActivationsAndSubnormalWeights(
      int cols, int tokens) {
    int rows = 9;
    Random rnd = new Random(cols + tokens);
    float[] w = randoms(rnd, rows * cols);
    for (int i = 0; i < w.length; i += 7) {
      w[i] *= 1e-6f; // subnormal as halves (below 2^-14)
    }
    float[] x = randoms(rnd, 16 * cols);
    x[3] = 70000f; // token 0 needs the full conversion
    x[cols + 1] = -0x1.0p16f; // token 1 too
    x[2 * cols + 2] = Math.nextDown(0x1.0p16f); // token 2 does not
    WeightMatrix m =
        WeightMatrix.of(
            GgmlType.F16, ByteBuffer.wrap(GgufWriter.encode(GgmlType.F16, w)), rows, cols);
    float[] decoded = new float[16 * rows];
    m.matmul(x, 16, decoded, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
    float[] small = new float[tokens * rows];
    m.matmul(x, tokens, small, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
    for (int t = 0; t < 16; t++) {
      float[] one = alone(m, x, t);
      for (int o = 0; o < rows; o++) {
        int expected = Float.floatToRawIntBits(decoded[t * rows + o]);
        assertThat(Float.floatToRawIntBits(one[o]))
            .as("token %d row %d alone", t, o)
            .isEqualTo(expected);
        if (t < tokens) {
          assertThat(Float.floatToRawIntBits(small[t * rows + o]))
              .as("token %d row %d in a batch of %d", t, o, tokens)
              .isEqualTo(expected);
        }
      }
    }
  }

  /**
   * Q4_0 blocks whose scale is infinite or NaN: a token alone gets the bits it gets in a batch of
   * every size, the kernels rounding {@code (n - 8) * scale} as the row decoder does (an offset
   * added in the multiply-add that scales, {@code n * scale - 8 * scale}, would turn an infinite
   * weight into a NaN).
   */
  @Test
  void q4BlocksWithAnInfiniteOrNaNScaleGiveTheBatchBitsAlone() {
    int rows = 9;
    int cols = 64;
    Random rnd = new Random(29);
    byte[] bytes = encoded(GgmlType.Q4_0, rnd, rows, cols);
    ByteBuffer b = ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    int blockBytes = 18;
    b.putShort(2 * 2 * blockBytes, (short) 0x7c00); // row 2, block 0: +infinity
    for (int j = 0; j < 16; j++) {
      bytes[2 * 2 * blockBytes + 2 + j] = (byte) 0xff; // its values all 15 - 8: +infinity
    }
    b.putShort((6 * 2 + 1) * blockBytes, (short) 0x7e00); // row 6, block 1: NaN
    WeightMatrix m = WeightMatrix.of(GgmlType.Q4_0, ByteBuffer.wrap(bytes), rows, cols);
    for (int tokens : new int[] {2, 3, 4, 9}) {
      float[] x = randoms(rnd, tokens * cols);
      for (int i = 0; i < x.length; i++) {
        x[i] = Math.abs(x[i]) + 0.01f; // positive, so row 2 sums to +infinity
      }
      float[] batch = new float[tokens * rows];
      m.matmul(x, tokens, batch, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
      for (int t = 0; t < tokens; t++) {
        float[] one = alone(m, x, t);
        assertThat(one[2]).as("the row with an infinite scale").isEqualTo(Float.POSITIVE_INFINITY);
        assertThat(one[6]).as("the row with a NaN scale").isNaN();
        for (int o = 0; o < rows; o++) {
          assertThat(Float.compare(one[o], batch[t * rows + o]))
              .as("%d tokens: token %d row %d alone against in the batch", tokens, t, o)
              .isZero();
        }
      }
    }
  }

  /**
   * A compact matrix left in the mapped file (no heap room for a copy) gives the bits of its heap
   * copy, for one token and for a batch.
   */
  @ParameterizedTest(name = "{0}, {1} columns")
  @CsvSource({
    "F16, 100",
    "BF16, 100",
    "Q8_0, 96",
    "Q4_0, 96",
    "Q4_K, 256",
    "Q5_K, 512",
    "Q6_K, 512"
  })
  void mappedAndHeapCopiesGiveTheSameBits(GgmlType type, int cols) {
    int rows = 7;
    Random rnd = new Random(17);
    byte[] bytes = encoded(type, rnd, rows, cols);
    float[] x = randoms(rnd, 5 * cols);
    WeightMatrix heap = WeightMatrix.of(type, ByteBuffer.wrap(bytes), rows, cols);
    WeightMatrix mapped;
    System.setProperty("flinfer.weights.heap", "false");
    try {
      mapped = WeightMatrix.of(type, ByteBuffer.wrap(bytes), rows, cols);
    } finally {
      System.clearProperty("flinfer.weights.heap");
    }
    for (int tokens : new int[] {1, 5}) {
      float[] a = new float[tokens * rows];
      float[] b = new float[tokens * rows];
      heap.matmul(x, tokens, a, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
      mapped.matmul(x, tokens, b, rows, 0, rows, new float[WeightMatrix.scratchSize(cols)]);
      for (int i = 0; i < a.length; i++) {
        assertThat(Float.floatToRawIntBits(b[i]))
            .as("%s, %d tokens, output %d", type, tokens, i)
            .isEqualTo(Float.floatToRawIntBits(a[i]));
      }
    }
  }

  /**
   * Four-row tiles give every output the bits of the two-row tiles, for every token count's mix of
   * 4-, 2- and 1-token tiles. Run directly, so that a CPU which does not choose them (AVX2) tests
   * them too.
   */
  @ParameterizedTest(name = "{0} cols, {1} tokens")
  @CsvSource({"8, 1", "13, 2", "64, 3", "100, 4", "768, 5", "900, 7", "2056, 9", "96, 32"})
  void fourRowTilesGiveTheTwoRowTilesBits(int cols, int tokens) {
    Random rnd = new Random(cols * 17 + tokens);
    float[] w = randoms(rnd, 4 * cols);
    float[] x = randoms(rnd, tokens * cols);
    float[] four = new float[tokens * 4];
    float[] two = new float[tokens * 4];
    Gemm.rows4(w, 0, cols, x, tokens, four, 4, 0, new float[Gemm.SCRATCH]);
    Gemm.rows2(w, 0, cols, x, tokens, two, 4, 0, new float[Gemm.SCRATCH]);
    Gemm.rows2(w, 2 * cols, cols, x, tokens, two, 4, 2, new float[Gemm.SCRATCH]);
    for (int i = 0; i < four.length; i++) {
      assertThat(Float.floatToRawIntBits(four[i]))
          .as("token %d row %d", i / 4, i % 4)
          .isEqualTo(Float.floatToRawIntBits(two[i]));
    }
  }

  /**
   * Tiles of a few tokens by four rows converted in registers (16-bit floats, Q8_0, Q4_0, Q4_K,
   * Q6_K) give every output the bits the token gets alone, for every mix of 4-, 2- and 1-token
   * tiles and for ranges whose last quarter repeats a row. Run directly, so that a CPU which does
   * not choose them (AVX2) tests them too.
   */
  @ParameterizedTest(name = "{0}: rows [{1}, {2}) of {3} x {4}, {5} tokens")
  @CsvSource({
    "F16, 0, 8, 8, 64, 4",
    "F16, 3, 12, 14, 100, 7",
    "F16, 0, 5, 5, 13, 3",
    "BF16, 1, 10, 10, 768, 9",
    "BF16, 0, 7, 7, 2056, 15",
    "F16, 0, 1, 1, 32, 2",
    "Q8_0, 0, 8, 8, 64, 4",
    "Q8_0, 3, 12, 14, 96, 7",
    "Q8_0, 0, 5, 5, 32, 3",
    "Q8_0, 1, 10, 10, 768, 15",
    "Q4_0, 0, 8, 8, 64, 4",
    "Q4_0, 3, 12, 14, 96, 7",
    "Q4_0, 0, 5, 5, 32, 3",
    "Q4_0, 1, 10, 10, 768, 9",
    "Q4_0, 0, 1, 1, 32, 2",
    "Q4_K, 0, 8, 8, 256, 2",
    "Q4_K, 3, 12, 14, 512, 3",
    "Q4_K, 0, 1, 1, 256, 2",
    "Q6_K, 0, 8, 8, 256, 4",
    "Q6_K, 3, 12, 14, 512, 7",
    "Q6_K, 1, 10, 10, 768, 9"
  })
  void quadTilesGiveTheBitsATokenGetsAlone(
      GgmlType type, int oFrom, int oTo, int rows, int cols, int tokens) {
    Random rnd = new Random(rows * 31 + cols + tokens);
    ByteBuffer bytes = ByteBuffer.wrap(encoded(type, rnd, rows, cols));
    float[] x = randoms(rnd, tokens * cols);
    float[] tiles = new float[tokens * rows];
    CompactWeights w;
    float[] tmp = new float[Gemm.SCRATCH];
    switch (type) {
      case F16, BF16 -> {
        HalfWeights h =
            type == GgmlType.F16
                ? HalfWeights.fp16(bytes, rows, cols)
                : HalfWeights.bf16(bytes, rows, cols);
        HalfQuadGemm.rows(h, x, tokens, tiles, rows, oFrom, oTo, tmp);
        w = h;
      }
      case Q4_K, Q6_K -> {
        KQuantWeights k =
            type == GgmlType.Q4_K
                ? KQuantWeights.q4k(bytes, rows, cols)
                : KQuantWeights.q6k(bytes, rows, cols);
        KQuantQuadGemm.rows(k, x, tokens, tiles, rows, oFrom, oTo, tmp);
        w = k;
      }
      default -> {
        BlockWeights b =
            type == GgmlType.Q8_0
                ? BlockWeights.q8(bytes, rows, cols)
                : BlockWeights.q4(bytes, rows, cols);
        BlockQuadGemm.rows(b, x, tokens, tiles, rows, oFrom, oTo, tmp);
        w = b;
      }
    }
    for (int t = 0; t < tokens; t++) {
      float[] one = new float[rows];
      float[] xt = Arrays.copyOfRange(x, t * cols, (t + 1) * cols);
      w.multiplyToken(xt, one, oFrom, oTo, new float[Gemm.SCRATCH]);
      for (int o = 0; o < rows; o++) {
        assertThat(Float.floatToRawIntBits(tiles[t * rows + o]))
            .as("token %d row %d", t, o)
            .isEqualTo(Float.floatToRawIntBits(o >= oFrom && o < oTo ? one[o] : 0f));
      }
    }
  }

  /**
   * Tiles of a few tokens by four float32 rows read straight from the buffer give every output the
   * bits the token gets alone, with and without a scalar tail, for ranges whose last quarter
   * repeats a row. Run directly, so that a CPU which does not choose them (AVX2) tests them too.
   */
  @ParameterizedTest(name = "rows [{0}, {1}) of {2} x {3}, {4} tokens")
  @CsvSource({"0, 8, 8, 64, 4", "3, 12, 14, 100, 7", "0, 5, 5, 13, 3", "0, 1, 1, 32, 2"})
  void bufferQuadTilesGiveTheBitsATokenGetsAlone(
      int oFrom, int oTo, int rows, int cols, int tokens) {
    Random rnd = new Random(rows * 41 + cols + tokens);
    ByteBuffer w =
        ByteBuffer.wrap(GgufWriter.encode(GgmlType.F32, randoms(rnd, rows * cols)))
            .order(java.nio.ByteOrder.LITTLE_ENDIAN);
    float[] x = randoms(rnd, tokens * cols);
    float[] tiles = new float[tokens * rows];
    Gemm.bufferTiles(w, cols, x, tokens, tiles, rows, oFrom, oTo, new float[Gemm.SCRATCH]);
    for (int t = 0; t < tokens; t++) {
      float[] one = new float[rows];
      float[] xt = Arrays.copyOfRange(x, t * cols, (t + 1) * cols);
      Gemm.bufferRows(w, cols, xt, 1, one, rows, oFrom, oTo, new float[Gemm.SCRATCH]);
      for (int o = 0; o < rows; o++) {
        assertThat(Float.floatToRawIntBits(tiles[t * rows + o]))
            .as("token %d row %d", t, o)
            .isEqualTo(Float.floatToRawIntBits(o >= oFrom && o < oTo ? one[o] : 0f));
      }
    }
  }

  /**
   * A {@code rows x cols} matrix of {@code type}: Gaussian weights through the project's encoder,
   * or, for Q5_K, which it does not write, random values and sub-block scales under sane fp16
   * super-block scales.
   */
  static byte[] encoded(GgmlType type, Random rnd, int rows, int cols) {
    // Formats without a quantizer here: random values and scales under a sane fp16 d.
    int dAt =
        switch (type) {
          case Q3_K -> 108;
          case Q2_K -> 80;
          case IQ4_XS, IQ4_NL, Q5_0, Q4_1, Q5_1, Q5_K -> 0;
          default -> -1;
        };
    if (dAt < 0) {
      return GgufWriter.encode(type, randoms(rnd, rows * cols));
    }
    byte[] bytes = new byte[(int) type.bytes((long) rows * cols)];
    rnd.nextBytes(bytes);
    ByteBuffer b = ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    if (type != GgmlType.Q5_K) {
      int blockBytes = (int) type.bytes(type.blockSize());
      for (int p = 0; p < bytes.length; p += blockBytes) {
        b.putShort(p + dAt, io.flinfer.memcache.HalfFloats.toHalf(0.01f * (1 + rnd.nextFloat())));
        if (type == GgmlType.Q2_K) {
          b.putShort(p + 82, io.flinfer.memcache.HalfFloats.toHalf(0.01f * rnd.nextFloat()));
        }
        if (type == GgmlType.Q4_1 || type == GgmlType.Q5_1) {
          b.putShort(p + 2, io.flinfer.memcache.HalfFloats.toHalf(-0.1f * rnd.nextFloat()));
        }
      }
      return bytes;
    }
    for (int p = 0; p < bytes.length; p += 176) {
      b.putShort(p, io.flinfer.memcache.HalfFloats.toHalf(0.01f * (1 + rnd.nextFloat())));
      b.putShort(p + 2, io.flinfer.memcache.HalfFloats.toHalf(0.01f * rnd.nextFloat()));
    }
    return bytes;
  }

  /** Token {@code t} of {@code x} alone through {@code m}: its outputs for every row. */
  static float[] alone(WeightMatrix m, float[] x, int t) {
    int cols = m.cols();
    float[] one = new float[m.rows()];
    m.matmul(
        Arrays.copyOfRange(x, t * cols, (t + 1) * cols),
        1,
        one,
        m.rows(),
        0,
        m.rows(),
        new float[WeightMatrix.scratchSize(cols)]);
    return one;
  }

  static float[] randoms(Random rnd, int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (float) rnd.nextGaussian();
    }
    return v;
  }
}
