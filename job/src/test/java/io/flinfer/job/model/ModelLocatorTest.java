package io.flinfer.job.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelLocatorTest {
  @TempDir Path tmp;

  private Path modelDir(String name) throws Exception {
    Path d = Files.createDirectories(tmp.resolve(name));
    Files.write(d.resolve("model.bin"), new byte[] {1});
    Files.write(d.resolve("tok512.bin"), new byte[] {1});
    return d;
  }

  @Test
  void explicitPathWinsOverEnvironmentAndSharedFolder() throws Exception {
    Path explicit = modelDir("explicit");
    Path env = modelDir("env");
    Path work = Files.createDirectories(tmp.resolve("repo"));
    Files.createDirectories(tmp.resolve("shared/models/stories260K"));
    ModelLocator l =
        new ModelLocator(Map.of(ModelLocator.ENV, env.toString()), work, tmp.resolve("home"));
    assertThat(l.locate(explicit, null).model()).isEqualTo(explicit.resolve("model.bin"));
    assertThat(l.locate(null, null).model()).isEqualTo(env.resolve("model.bin"));
    assertThat(l.locate(null, null).tokenizer()).isEqualTo(env.resolve("tok512.bin"));
  }

  @Test
  void sharedFolderBesideTheRepositoryThenTheCache() throws Exception {
    Path work = Files.createDirectories(tmp.resolve("w/repo"));
    Path home = Files.createDirectories(tmp.resolve("home"));
    ModelLocator l = new ModelLocator(Map.of(), work, home);
    Path cache = Files.createDirectories(home.resolve(".cache/flinfer/stories260K"));
    Files.write(cache.resolve("stories260K.gguf"), "GGUF".getBytes());
    assertThat(l.locate(null, null).model()).isEqualTo(cache.resolve("stories260K.gguf"));
    Path shared = modelDir("w/shared/models/stories260K");
    assertThat(l.locate(null, null).model()).isEqualTo(shared.resolve("model.bin"));
  }

  @Test
  void noModelAnywhereSaysWhatToPutWhere() {
    // Deep enough that ../shared and ../../shared stay inside the temporary folder.
    ModelLocator l = new ModelLocator(Map.of(), tmp.resolve("a/b/nowhere"), tmp.resolve("home"));
    assertThatThrownBy(() -> l.locate(null, null))
        .hasMessageContaining("~/.cache/flinfer/stories260K/stories260K.bin")
        .hasMessageContaining("tok512.bin")
        .hasMessageContaining("https://huggingface.co/karpathy/tinyllamas");
    assertThatThrownBy(() -> l.locate(tmp.resolve("missing.bin"), null))
        .hasMessageContaining("--model");
  }
}
