package io.flinfer.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.chat.ChatMessage;
import io.flinfer.runtime.chat.ChatTemplate;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class ModelLoaderTest {
  /** The template read from the metadata alone renders as the loaded model's does. */
  @Test
  void theChatTemplateIsReadWithoutTheWeights() {
    for (String name : List.of("qwen3-tiny.gguf", "llama3-tiny.gguf")) {
      Path gguf = SharedFiles.root().resolve("models/zoo").resolve(name);
      ChatTemplate alone = ModelLoader.chatTemplate(gguf).orElseThrow();
      ChatTemplate loaded = ModelLoader.load(gguf, null).chatTemplate().orElseThrow();
      List<ChatMessage> hi = List.of(new ChatMessage("user", "Hi"));
      assertThat(alone.source()).isEqualTo(loaded.source());
      assertThat(alone.render(hi, true)).isEqualTo(loaded.render(hi, true));
    }
    Path dir = SharedFiles.stories260kDir();
    assertThat(ModelLoader.chatTemplate(dir.resolve("stories260K.bin"))).isEmpty();
  }
}
