package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.gguf.RandomGgufModel;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.model.RopeConfig;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.LlamaCppGoldens;
import io.flinfer.runtime.testing.TinyShapes;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * EXAONE (LG's {@code exaone}): Llama's layout, its rope in NeoX's pairing (llama.cpp decides the
 * pairing by architecture), with an output matrix of its own. A random-weight file against
 * llama.cpp.
 */
class ExaoneForwardTest {
  @TempDir static Path dir;

  private static ModelConfig shape() {
    return TinyShapes.llama(4).toBuilder()
        .architecture("exaone")
        .rope(new RopeConfig(RopeConfig.Style.NEOX, 1e6f, null))
        .build();
  }

  private static LlamaModel model() throws Exception {
    Path file = RandomGgufModel.write(shape(), GgmlType.F32, false, 3, dir.resolve("exaone.gguf"));
    return ModelLoader.load(file, null);
  }

  @Test
  void loadsWithNeoXRopeAndItsOwnOutputMatrix() throws Exception {
    LlamaModel model = model();
    assertThat(model.config()).isEqualTo(shape());
    assertThat(model.weights().classifier()).isNotSameAs(model.weights().tokenEmbedding());
  }

  /**
   * llama.cpp (c392e50) on the same file, written again from its seed ({@code resources/exaone}).
   */
  @Test
  void matchesLlamaCpp() throws Exception {
    LlamaCppGoldens.assertMatches(model(), "exaone", "ex", 1e-3);
  }
}
