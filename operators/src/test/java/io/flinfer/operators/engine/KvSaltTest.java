package io.flinfer.operators.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.runtime.gguf.GgufModelLoader;
import io.flinfer.runtime.kernel.ActivationRounding;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Stored KV pages are named for everything that changes their values. */
class KvSaltTest {
  private static LlamaModel load(Path file, String activations) {
    System.setProperty(ActivationRounding.PROPERTY, activations);
    try {
      return GgufModelLoader.load(file);
    } finally {
      System.clearProperty(ActivationRounding.PROPERTY);
    }
  }

  @Test
  void theActivationsRoundingIsPartOfTheSalt() {
    Path file = SharedFiles.root().resolve("models/zoo/llama-q-Q8_0.gguf");
    assumeTrue(Files.isRegularFile(file), "no " + file);
    String rounded = KvSalt.of(load(file, "ggml"), KvStoreType.FP32, 1);
    assertThat(KvSalt.of(load(file, "ggml"), KvStoreType.FP32, 1)).isEqualTo(rounded);
    assertThat(KvSalt.of(load(file, "f32"), KvStoreType.FP32, 1)).isNotEqualTo(rounded);
    assertThat(rounded).endsWith("|act=Q8_0");
    assertThat(KvSalt.of(load(file, "ggml"), KvStoreType.FP16, 1)).isNotEqualTo(rounded);
  }
}
