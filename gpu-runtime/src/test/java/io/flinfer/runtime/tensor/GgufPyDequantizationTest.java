package io.flinfer.runtime.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Formats read through a heap form of this runtime's own (Q2_K's bytes, Q4_1 and Q5_1 as bytes with
 * a scale and an offset; Q3_K and IQ4_XS take the Q6_K one, IQ4_NL and Q5_0 the Q8_0 one) decode to
 * the values llama.cpp's own Python reader (gguf-py) gives for them, bit for bit: the scalar
 * reference, the heap form and the mapped rows.
 */
class GgufPyDequantizationTest {
  @ParameterizedTest(name = "{0}, weights on the heap: {1}")
  @CsvSource({
    "Q2_K, q2k, true",
    "Q2_K, q2k, false",
    "Q3_K, q3k, true",
    "Q3_K, q3k, false",
    "IQ4_XS, iq4xs, true",
    "IQ4_XS, iq4xs, false",
    "IQ4_NL, iq4nl, true",
    "IQ4_NL, iq4nl, false",
    "Q5_0, q5_0, true",
    "Q5_0, q5_0, false",
    "Q4_1, q4_1, true",
    "Q4_1, q4_1, false",
    "Q5_1, q5_1, true",
    "Q5_1, q5_1, false"
  })
  void rowsAreWhatGgufPyDequantizes(GgmlType type, String file, boolean heap) throws Exception {
    List<String> lines;
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(
                getClass().getResourceAsStream("/kquants/" + file + "-4x512.txt"),
                StandardCharsets.US_ASCII))) {
      lines = r.lines().filter(l -> !l.startsWith("#")).collect(Collectors.toList());
    }
    byte[] bytes = HexFormat.of().parseHex(lines.get(0));
    String[] expected = lines.get(1).split(" ");
    int rows = 4;
    int cols = 512;
    assertThat(expected).hasSize(rows * cols);
    if (!heap) {
      System.setProperty("flinfer.weights.heap", "false");
    }
    WeightMatrix m;
    try {
      m = WeightMatrix.of(type, ByteBuffer.wrap(bytes), rows, cols);
    } finally {
      System.clearProperty("flinfer.weights.heap");
    }
    float[] fast = new float[cols];
    float[] reference = new float[cols];
    int nonZero = 0;
    for (int row = 0; row < rows; row++) {
      m.decodeRow(row, fast, 0);
      m.decodeRowReference(row, reference, 0);
      for (int i = 0; i < cols; i++) {
        int want = Integer.parseUnsignedInt(expected[row * cols + i], 16);
        assertThat(Float.floatToRawIntBits(reference[i]))
            .as("reference, row %d value %d", row, i)
            .isEqualTo(want);
        assertThat(Float.floatToRawIntBits(fast[i])).as("row %d value %d", row, i).isEqualTo(want);
        nonZero += fast[i] != 0 ? 1 : 0;
      }
    }
    assertThat(nonZero).isGreaterThan(rows * cols / 2);
  }
}
