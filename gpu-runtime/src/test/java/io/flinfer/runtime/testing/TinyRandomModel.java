package io.flinfer.runtime.testing;

import io.flinfer.runtime.llama2c.Llama2cCheckpointLoader;
import io.flinfer.runtime.llama2c.RandomCheckpointWriter;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.tokenizer.SyntheticVocabulary;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A tiny random-weight model over a 300-token byte vocabulary: its choices are spread wide, so
 * outputs reach whatever ending a test waits for (a closing brace, a biased end token) quickly.
 */
public final class TinyRandomModel {
  private TinyRandomModel() {}

  /** The model with weights from {@code seed}, written under {@code dir}. */
  public static LlamaModel write(Path dir, long seed) throws IOException {
    ModelConfig shape = new ModelConfig(64, 128, 2, 4, 4, 300, 4096, 10000f, 1e-5f);
    return Llama2cCheckpointLoader.load(
        RandomCheckpointWriter.write(shape, seed, dir.resolve("random-" + seed + ".bin")),
        SyntheticVocabulary::of);
  }
}
