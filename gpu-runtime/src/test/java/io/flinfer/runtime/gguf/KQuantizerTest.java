package io.flinfer.runtime.gguf;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The project's own K-quant encoder writes blocks that decode back within their quantization error.
 */
class KQuantizerTest {
  @TempDir Path dir;

  @ParameterizedTest(name = "{0}: relative RMS error below {1}")
  // Measured: Q6_K 0.024, Q4_K 0.090 (llama.cpp's quantizer, which searches for better scales:
  // 0.018 and 0.073 on the zoo's rows, ZooQuantTest).
  @CsvSource({"Q6_K, 0.03", "Q4_K, 0.1"})
  void rowsDecodeBackWithinTheFormatsError(GgmlType type, double bound) {
    int rows = 8;
    int cols = 512;
    Random rnd = new Random(5);
    float[] v = new float[rows * cols];
    for (int i = 0; i < v.length; i++) {
      v[i] = (float) (rnd.nextGaussian() * 0.02 + (i % 97 == 0 ? 0.1 : 0));
    }
    ByteBuffer bytes = ByteBuffer.wrap(GgufWriter.encode(type, v)).order(ByteOrder.LITTLE_ENDIAN);
    assertThat((long) bytes.capacity()).isEqualTo(type.bytes(v.length));
    WeightMatrix m = WeightMatrix.of(type, bytes, rows, cols);
    double err = 0;
    double norm = 0;
    float[] row = new float[cols];
    for (int r = 0; r < rows; r++) {
      m.decodeRowReference(r, row, 0);
      for (int i = 0; i < cols; i++) {
        double d = row[i] - v[r * cols + i];
        err += d * d;
        norm += (double) v[r * cols + i] * v[r * cols + i];
      }
    }
    assertThat(Math.sqrt(err / norm)).isLessThan(bound);
  }

  @Test
  void q4KMPutsQ6KWhereLlamaCppsMixDoes() throws Exception {
    // Rows must fill 256-value super-blocks: a small Llama shape with 256-wide matrices.
    ModelConfig shape = new ModelConfig(256, 512, 2, 4, 4, 512, 64, 10000f, 1e-5f);
    Path file = RandomGgufModel.write(shape, WeightTypes.q4KM(), true, 3, dir.resolve("m.gguf"));
    GgufFile gguf = GgufFile.open(file);
    assertThat(typeOf(gguf, "token_embd.weight")).isEqualTo(GgmlType.Q6_K);
    assertThat(typeOf(gguf, "blk.0.attn_v.weight")).isEqualTo(GgmlType.Q6_K);
    assertThat(typeOf(gguf, "blk.1.attn_v.weight")).isEqualTo(GgmlType.Q4_K);
    assertThat(typeOf(gguf, "blk.0.ffn_down.weight")).isEqualTo(GgmlType.Q6_K);
    assertThat(typeOf(gguf, "blk.0.attn_q.weight")).isEqualTo(GgmlType.Q4_K);
  }

  private static GgmlType typeOf(GgufFile gguf, String tensor) {
    int id = gguf.tensors().get(tensor).typeId();
    for (GgmlType t : GgmlType.values()) {
      if (t.id() == id) {
        return t;
      }
    }
    throw new AssertionError("unknown type id " + id);
  }
}
