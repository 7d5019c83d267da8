package io.flinfer.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The families' real chat templates render every reference conversation byte for byte as
 * {@code @huggingface/jinja} (and Python's Jinja, set up as transformers does) renders it.
 */
class ChatTemplateTest {
  private static final Path DIR = SharedFiles.root().resolve("golden/chat");

  static Stream<Arguments> renderings() throws Exception {
    ObjectMapper json = new ObjectMapper();
    JsonNode templates = json.readTree(DIR.resolve("templates.json").toFile());
    JsonNode conversations = json.readTree(DIR.resolve("conversations.json").toFile());
    List<Arguments> out = new ArrayList<>();
    for (JsonNode t : templates) {
      for (JsonNode c : conversations) {
        out.add(Arguments.of(t.get("name").asText(), c.get("id").asInt(), t, c));
      }
    }
    return out.stream();
  }

  private static List<ChatMessage> messages(JsonNode conversation) {
    List<ChatMessage> out = new ArrayList<>();
    for (JsonNode m : conversation.get("messages")) {
      out.add(new ChatMessage(m.get("role").asText(), m.get("content").asText()));
    }
    return out;
  }

  private static ChatTemplate template(JsonNode t) throws Exception {
    JsonNode special = t.get("special");
    return new ChatTemplate(
        Files.readString(DIR.resolve(t.get("template_file").asText())),
        special.has("bos_token") ? special.get("bos_token").asText() : "",
        special.has("eos_token") ? special.get("eos_token").asText() : "");
  }

  @ParameterizedTest(name = "{0} conversation {1}")
  @MethodSource("renderings")
  void rendersLikeHuggingFace(String name, int id, JsonNode t, JsonNode c) throws Exception {
    String expected = Files.readString(DIR.resolve(name + ".conv" + id + ".txt"));
    assertThat(template(t).render(messages(c), c.get("add_generation_prompt").asBoolean()))
        .isEqualTo(expected);
  }

  @Test
  void aTemplatesOwnRefusalIsAnErrorWithItsMessage() throws Exception {
    ChatTemplate gemma =
        new ChatTemplate(Files.readString(DIR.resolve("gemma3.jinja")), "<bos>", "<eos>");
    List<ChatMessage> twoUsers =
        List.of(new ChatMessage("user", "Hi"), new ChatMessage("user", "Hi again"));
    assertThatThrownBy(() -> gemma.render(twoUsers, true))
        .isInstanceOf(ChatTemplateException.class)
        .hasMessageContaining("Conversation roles must alternate");
  }

  @Test
  void pythonStringMethodsBehaveAsInPython() {
    ChatTemplate t =
        new ChatTemplate(
            "{{ messages[0].content.strip('\\n') }}|{{ messages[0].content.split('b')[-1] }}|"
                + "{{ messages[0].content.startswith('\\na') }}|{{ messages[0].content.rstrip() }}.",
            "",
            "");
    assertThat(t.render(List.of(new ChatMessage("user", "\nab c\n ")), false))
        .isEqualTo("ab c\n | c\n |true|\nab c.");
  }

  /**
   * Templates ask whether the renderer's functions are there before they call them (Llama 3.2 falls
   * back to a fixed date where {@code strftime_now} is undefined), as Hugging Face hands them over
   * as variables.
   */
  @Test
  void theRenderersFunctionsAreDefined() {
    ChatTemplate t =
        new ChatTemplate(
            "{%- if strftime_now is defined %}{{ strftime_now('%Y') }}{% else %}fixed{% endif %}"
                + "|{{ raise_exception is defined }}",
            "", "");
    String year = String.valueOf(java.time.Year.now().getValue());
    assertThat(t.render(List.of(new ChatMessage("user", "Hi")), false))
        .isIn(year + "|true", (Integer.parseInt(year) + 1) + "|true");
    assertThatThrownBy(
            () ->
                t.render(
                    List.of(new ChatMessage("user", "Hi")), null, "{\"strftime_now\": 1}", false))
        .isInstanceOf(ChatTemplateException.class)
        .hasMessageContaining("may not set strftime_now");
  }

  /**
   * A mapping or list printed whole reads as Python prints it (Functionary's templates print a
   * call's arguments so), not as Java's {@code toString}.
   */
  @Test
  void mappingsAndListsPrintAsInPython() {
    ChatTemplate t = new ChatTemplate("{{ {'a': 2, 'b': 'x'} }}|{{ ['a', 1] }}", "", "");
    assertThat(t.render(List.of(new ChatMessage("user", "Hi")), false))
        .isEqualTo("{'a': 2, 'b': 'x'}|['a', 1]");
  }

  @Test
  void strftimeFormatsTheWayTemplatesUseIt() {
    ZonedDateTime t = ZonedDateTime.of(2024, 7, 26, 9, 5, 0, 0, ZoneId.of("UTC"));
    assertThat(ChatTemplate.Strftime.format("%d %b %Y", t)).isEqualTo("26 Jul 2024");
  }
}
