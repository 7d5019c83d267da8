package io.flinfer.runtime.model;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.runtime.gguf.GgufWriter;
import io.flinfer.runtime.gguf.ModelConversion;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Broken model files fail with one clear error naming the file and the problem. */
class BadModelFileTest {
  @TempDir Path dir;

  @Test
  void truncatedCheckpoint() throws Exception {
    Path src = SharedFiles.stories260kDir();
    byte[] full = Files.readAllBytes(src.resolve("stories260K.bin"));
    Path cut = dir.resolve("cut.bin");
    Files.write(cut, Arrays.copyOf(full, full.length / 2));
    assertThatThrownBy(() -> ModelLoader.load(cut, src.resolve("tok512.bin")))
        .isInstanceOf(ModelFormatException.class)
        .hasMessageStartingWith(cut.toString())
        .hasMessageContaining("truncated");
  }

  @Test
  void checkpointHeaderThatDoesNotDescribeAModel() throws Exception {
    Path bad = dir.resolve("bad.bin");
    ByteBuffer b = ByteBuffer.allocate(1024).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(64).putInt(172).putInt(5).putInt(7).putInt(4).putInt(512).putInt(512);
    Files.write(bad, b.array());
    Path tokenizer = SharedFiles.stories260kDir().resolve("tok512.bin");
    assertThatThrownBy(() -> ModelLoader.load(bad, tokenizer))
        .isInstanceOf(ModelFormatException.class)
        .hasMessageContaining(bad.toString())
        .hasMessageContaining("not a multiple of heads");
  }

  @Test
  void wrongMagic() throws Exception {
    Path bad = dir.resolve("model.gguf");
    Files.write(bad, "NOPE this is not a model at all".getBytes());
    assertThatThrownBy(() -> ModelLoader.load(bad, null))
        .isInstanceOf(ModelFormatException.class)
        .hasMessage(bad + ": not a GGUF file (wrong magic)");
  }

  @Test
  void truncatedGguf() throws Exception {
    Path good = dir.resolve("good.gguf");
    ModelConversion.writeGguf(SharedFiles.stories260k(), GgmlType.F32, good);
    byte[] full = Files.readAllBytes(good);
    Path cut = dir.resolve("cut.gguf");
    Files.write(cut, Arrays.copyOf(full, full.length - 1000));
    assertThatThrownBy(() -> ModelLoader.load(cut, null))
        .isInstanceOf(ModelFormatException.class)
        .hasMessageStartingWith(cut.toString())
        .hasMessageContaining("truncated");
    Path header = dir.resolve("header.gguf");
    Files.write(header, Arrays.copyOf(full, 200));
    assertThatThrownBy(() -> ModelLoader.load(header, null))
        .isInstanceOf(ModelFormatException.class)
        .hasMessageStartingWith(header.toString());
  }

  @Test
  void ggufShapesThatDoNotAddUp() throws Exception {
    Path bad = dir.resolve("shapes.gguf");
    tinyGguf().tensor("blk.0.attn_q.weight", GgmlType.F32, new float[32 * 16], 16, 32).write(bad);
    assertThatThrownBy(() -> ModelLoader.load(bad, null))
        .isInstanceOf(ModelFormatException.class)
        .hasMessageContaining(bad.toString())
        .hasMessageContaining("layer 0 wq is 16x32, expected 32x32");
  }

  @Test
  void unsupportedTensorType() throws Exception {
    Path bad = dir.resolve("iq2xxs.gguf");
    byte[] raw = Files.readAllBytes(writeTiny(dir.resolve("tiny.gguf")));
    // Rewrite the first tensor's type id (F32 = 0) to IQ2_XXS (16).
    String text = new String(raw, java.nio.charset.StandardCharsets.ISO_8859_1);
    int at = text.indexOf("token_embd.weight") + "token_embd.weight".length() + 4 + 16;
    raw[at] = 16;
    Files.write(bad, raw);
    assertThatThrownBy(() -> ModelLoader.load(bad, null))
        .isInstanceOf(ModelFormatException.class)
        .hasMessageContaining(bad.toString())
        .hasMessageContaining("unsupported type 16 (IQ2_XXS;");
  }

  private static Path writeTiny(Path p) throws Exception {
    tinyGguf().tensor("blk.0.attn_q.weight", GgmlType.F32, new float[32 * 32], 32, 32).write(p);
    return p;
  }

  /** A one-layer model (dim 32, 2 heads, vocab 4) missing only blk.0.attn_q.weight. */
  private static GgufWriter tinyGguf() {
    int dim = 32;
    GgufWriter g =
        new GgufWriter()
            .put("general.architecture", "llama")
            .put("llama.embedding_length", dim)
            .put("llama.feed_forward_length", 64)
            .put("llama.block_count", 1)
            .put("llama.attention.head_count", 2)
            .put("llama.context_length", 16)
            .put("tokenizer.ggml.model", "llama")
            .put("tokenizer.ggml.tokens", new String[] {"<unk>", "<s>", "</s>", "a"})
            .put("tokenizer.ggml.scores", new float[4])
            .put("tokenizer.ggml.token_type", new int[] {3, 3, 3, 1});
    g.tensor("token_embd.weight", GgmlType.F32, new float[4 * dim], 4, dim);
    g.tensor("output_norm.weight", GgmlType.F32, new float[dim], 1, dim);
    g.tensor("blk.0.attn_norm.weight", GgmlType.F32, new float[dim], 1, dim);
    g.tensor("blk.0.ffn_norm.weight", GgmlType.F32, new float[dim], 1, dim);
    g.tensor("blk.0.attn_k.weight", GgmlType.F32, new float[dim * dim], dim, dim);
    g.tensor("blk.0.attn_v.weight", GgmlType.F32, new float[dim * dim], dim, dim);
    g.tensor("blk.0.attn_output.weight", GgmlType.F32, new float[dim * dim], dim, dim);
    g.tensor("blk.0.ffn_gate.weight", GgmlType.F32, new float[64 * dim], 64, dim);
    g.tensor("blk.0.ffn_down.weight", GgmlType.F32, new float[64 * dim], dim, 64);
    g.tensor("blk.0.ffn_up.weight", GgmlType.F32, new float[64 * dim], 64, dim);
    return g;
  }
}
