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
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Conversations with tools, tool calls and tool results render byte for byte as {@code
 * @huggingface/jinja} and Python's Jinja render them ({@code chat/tools/render.mjs} made the
 * expected texts; Jinja2 3.1.6 agrees), or fail with the template's own refusal.
 */
class ChatTemplateToolsTest {
  private static final Path TEMPLATES = SharedFiles.root().resolve("golden/chat");
  private static final Path EXPECTED = Path.of("src/test/resources/chat/tools");
  private static final ObjectMapper JSON = new ObjectMapper();

  static Stream<Arguments> renderings() throws Exception {
    JsonNode conversations = JSON.readTree(EXPECTED.resolve("conversations.json").toFile());
    List<Arguments> out = new ArrayList<>();
    for (String name : List.of("qwen3", "llama3_1-official")) {
      for (JsonNode c : conversations) {
        out.add(Arguments.of(name, c.get("id").asInt(), c));
      }
    }
    return out.stream();
  }

  private static ChatTemplate template(String name) throws Exception {
    String source = Files.readString(TEMPLATES.resolve(name + ".jinja"));
    return name.equals("qwen3")
        ? new ChatTemplate(source, "", "<|im_end|>")
        : new ChatTemplate(source, "<|begin_of_text|>", "<|eot_id|>");
  }

  static List<ChatMessage> messages(JsonNode conversation) {
    List<ChatMessage> out = new ArrayList<>();
    for (JsonNode m : conversation.get("messages")) {
      List<ToolCall> calls = new ArrayList<>();
      for (JsonNode c : m.path("tool_calls")) {
        JsonNode f = c.get("function");
        calls.add(
            new ToolCall(
                c.get("id").asText(), f.get("name").asText(), f.get("arguments").toString()));
      }
      out.add(
          new ChatMessage(
              m.get("role").asText(),
              m.get("content").asText(),
              calls,
              m.has("tool_call_id") ? m.get("tool_call_id").asText() : null,
              m.has("reasoning_content") ? m.get("reasoning_content").asText() : null));
    }
    return out;
  }

  @ParameterizedTest(name = "{0} conversation {1}")
  @MethodSource("renderings")
  void rendersLikeHuggingFace(String name, int id, JsonNode c) throws Exception {
    ChatTemplate t = template(name);
    String tools = c.get("tools").toString();
    boolean generationPrompt = c.get("add_generation_prompt").asBoolean();
    Path text = EXPECTED.resolve(name + ".conv" + id + ".txt");
    if (Files.exists(text)) {
      assertThat(t.render(messages(c), tools, generationPrompt)).isEqualTo(Files.readString(text));
    } else {
      String refusal = Files.readString(EXPECTED.resolve(name + ".conv" + id + ".error")).strip();
      assertThatThrownBy(() -> t.render(messages(c), tools, generationPrompt))
          .isInstanceOf(ChatTemplateException.class)
          .hasMessage("chat template: " + refusal);
    }
  }

  @Test
  void templatesSayWhetherTheyTakeTools() throws Exception {
    assertThat(template("qwen3").takesTools()).isTrue();
    assertThat(template("llama3_1-official").takesTools()).isTrue();
    assertThat(
            new ChatTemplate(Files.readString(TEMPLATES.resolve("gemma3.jinja")), "", "")
                .takesTools())
        .isFalse();
  }

  @Test
  void toolsThatAreNotAnArrayAreRefused() throws Exception {
    assertThatThrownBy(
            () -> template("qwen3").render(List.of(new ChatMessage("user", "Hi")), "{}", true))
        .isInstanceOf(ChatTemplateException.class)
        .hasMessage("chat template: tools must be a JSON array");
  }

  @Test
  void tojsonWritesAsPythonsJsonDumps() {
    StringBuilder flat = new StringBuilder();
    PythonJson.write(Map.of("k", List.of(1, 2.5, true, "a\"\n\u0001é")), -1, 0, flat);
    assertThat(flat).hasToString("{\"k\": [1, 2.5, true, \"a\\\"\\n\\u0001é\"]}");
    StringBuilder indented = new StringBuilder();
    PythonJson.write(Map.of("k", List.of(), "m", Map.of("x", 1)), 2, 0, new StringBuilder());
    PythonJson.write(List.of(Map.of(), List.of(1)), 2, 0, indented);
    assertThat(indented).hasToString("[\n  {},\n  [\n    1\n  ]\n]");
  }
}
