package io.flinfer.runtime.gguf;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Benchmark models are written so that llama.cpp loads them too, for side-by-side runs. */
class RandomGgufModelTest {
  @TempDir Path dir;

  @Test
  void hyperParametersAndSpecialTokenIdsAreUint32AsLlamaCppReadsThem() throws Exception {
    ModelConfig shape = SharedFiles.stories260kGguf().config();
    Path file = RandomGgufModel.write(shape, GgmlType.F32, true, 7, dir.resolve("m.gguf"));
    GgufFile gguf = GgufFile.open(file);
    String a = shape.architecture();
    for (String key :
        new String[] {
          a + ".context_length",
          a + ".embedding_length",
          a + ".feed_forward_length",
          a + ".block_count",
          a + ".attention.head_count",
          a + ".attention.head_count_kv",
          "tokenizer.ggml.bos_token_id",
          "tokenizer.ggml.eos_token_id"
        }) {
      // GGUF's uint32 is read as a Long, int32 as an Integer.
      assertThat(gguf.get(key)).as(key).isInstanceOf(Long.class);
    }
    assertThat(ModelLoader.load(file, null).config()).isEqualTo(shape);
  }
}
