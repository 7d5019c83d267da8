package io.flinfer.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Qwen3's thinking switch ({@code chat_template_kwargs}) and earlier turns' {@code
 * reasoning_content} render byte for byte as {@code @huggingface/jinja} renders them ({@code
 * chat/thinking/render.mjs} made the expected texts; Python's Jinja2 3.1.6 agrees).
 */
class ChatTemplateThinkingTest {
  private static final Path EXPECTED = Path.of("src/test/resources/chat/thinking");
  private static final ObjectMapper JSON = new ObjectMapper();

  static Stream<JsonNode> conversations() throws Exception {
    List<JsonNode> out = new ArrayList<>();
    JSON.readTree(EXPECTED.resolve("conversations.json").toFile()).forEach(out::add);
    return out.stream();
  }

  static ChatTemplate qwen3() throws Exception {
    String source = Files.readString(SharedFiles.root().resolve("golden/chat/qwen3.jinja"));
    return new ChatTemplate(source, "", "<|im_end|>");
  }

  @ParameterizedTest(name = "conversation {index}")
  @MethodSource("conversations")
  void rendersLikeHuggingFace(JsonNode c) throws Exception {
    JsonNode kwargs = c.get("chat_template_kwargs");
    String rendered =
        qwen3()
            .render(
                ChatTemplateToolsTest.messages(c),
                c.has("tools") ? c.get("tools").toString() : null,
                kwargs.isNull() ? null : kwargs.toString(),
                c.get("add_generation_prompt").asBoolean());
    assertThat(rendered)
        .isEqualTo(Files.readString(EXPECTED.resolve("qwen3.conv" + c.get("id").asInt() + ".txt")));
  }

  @Test
  void switchesAreAJsonObjectThatLeavesTheRenderersOwnVariables() throws Exception {
    ChatTemplate t = qwen3();
    List<ChatMessage> m = List.of(new ChatMessage("user", "Hi"));
    assertThatThrownBy(() -> t.render(m, null, "[true]", true))
        .isInstanceOf(ChatTemplateException.class)
        .hasMessageEndingWith("chat_template_kwargs must be a JSON object");
    assertThatThrownBy(() -> t.render(m, null, "{\"messages\": []}", true))
        .isInstanceOf(ChatTemplateException.class)
        .hasMessageEndingWith("chat_template_kwargs may not set messages, which the renderer sets");
    assertThatThrownBy(() -> t.render(m, null, "{\"add_generation_prompt\": false}", true))
        .isInstanceOf(ChatTemplateException.class)
        .hasMessageContaining("add_generation_prompt");
    // A switch the template does not read changes nothing.
    assertThat(t.render(m, null, "{\"unread\": 1}", true)).isEqualTo(t.render(m, true));
  }
}
