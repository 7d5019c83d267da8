package io.flinfer.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.nio.file.Files;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

class ToolCallFormatTest {
  private static ToolCallFormat of(String template) throws Exception {
    return ToolCallFormat.of(
        new ChatTemplate(
            Files.readString(SharedFiles.root().resolve("golden/chat/" + template + ".jinja")),
            "",
            ""));
  }

  @Test
  void theTemplateTellsTheFormat() throws Exception {
    assertThat(of("qwen3")).isEqualTo(ToolCallFormat.HERMES);
    assertThat(of("llama3_1-official")).isEqualTo(ToolCallFormat.LLAMA3_JSON);
    assertThat(of("gemma3")).isEqualTo(ToolCallFormat.UNKNOWN);
  }

  /** Qwen's call tags are tokens of their own that decode to their text, so answers show them. */
  @Test
  void qwensCallTagsAreTokensThatDecodeToTheirText() throws Exception {
    Tokenizer qwen =
        GgufTokenizers.read(GgufFile.open(SharedFiles.root().resolve("tokenizers/qwen3.gguf")));
    String call = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
    int[] ids = qwen.encode(call, false, true);
    assertThat(qwen.encode("<tool_call>", false, true)).hasSize(1);
    assertThat(qwen.decode(ids)).isEqualTo(call);
    assertThat(ToolCallFormat.HERMES.parse(qwen.decode(ids)).calls()).hasSize(1);
  }

  @Test
  void hermesBlocksAreCallsAndTheTextAroundThemContent() {
    ToolCallFormat f = ToolCallFormat.HERMES;
    assertThat(
            f.parse(
                "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":"
                    + " \"Oslo\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"add\", \"arguments\":"
                    + " {\"a\": 1}}\n</tool_call>"))
        .isEqualTo(
            new ToolCallFormat.Answer(
                "Let me look.",
                List.of(
                    new ToolCall(null, "get_weather", "{\"city\":\"Oslo\"}"),
                    new ToolCall(null, "add", "{\"a\":1}"))));
    // An unclosed last block (the answer ended at its stop token) is still a call.
    assertThat(f.parse("<tool_call>\n{\"name\": \"x\", \"arguments\": {}}").calls())
        .containsExactly(new ToolCall(null, "x", "{}"));
    // Not a call: the whole text is content.
    String broken = "<tool_call>\n{\"name\": \"x\", \"argu";
    assertThat(f.parse(broken)).isEqualTo(new ToolCallFormat.Answer(broken, List.of()));
    assertThat(f.parse("Just text.")).isEqualTo(new ToolCallFormat.Answer("Just text.", List.of()));
  }

  @Test
  void llamaJsonAnswersAreCallsOnlyWhenWhole() {
    ToolCallFormat f = ToolCallFormat.LLAMA3_JSON;
    assertThat(f.parse(" {\"name\": \"add\", \"parameters\": {\"a\": 2, \"b\": 40}}"))
        .isEqualTo(
            new ToolCallFormat.Answer(
                null, List.of(new ToolCall(null, "add", "{\"a\":2,\"b\":40}"))));
    assertThat(
            f.parse(
                    "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\","
                        + " \"parameters\": {\"x\": \"y\"}}")
                .calls())
        .extracting(ToolCall::name)
        .containsExactly("a", "b");
    // A ';' inside arguments stays; two objects without one between them are two calls too.
    assertThat(
            f.parse(
                    "{\"name\": \"q\", \"parameters\": {\"s\": \"a;b\"}}"
                        + "{\"name\": \"r\", \"parameters\": {}}")
                .calls())
        .containsExactly(new ToolCall(null, "q", "{\"s\":\"a;b\"}"), new ToolCall(null, "r", "{}"));
    for (String content :
        new String[] {
          "{\"name\": \"a\"}", "The answer is {\"name\": \"a\", \"parameters\": {}}", "{"
        }) {
      assertThat(f.parse(content)).isEqualTo(new ToolCallFormat.Answer(content, List.of()));
    }
  }

  @Test
  void streamingHoldsBackOnlyWhatMayBeACall() {
    ToolCallFormat h = ToolCallFormat.HERMES;
    assertThat(h.holdFrom("Hello")).isEqualTo(5);
    assertThat(h.holdFrom("Hello <tool")).isEqualTo(6);
    assertThat(h.holdFrom("Hello <tool_call>{\"na")).isEqualTo(6);
    assertThat(h.holdFrom("a < b")).isEqualTo(5);
    ToolCallFormat l = ToolCallFormat.LLAMA3_JSON;
    assertThat(l.holdFrom("  ")).isZero();
    assertThat(l.holdFrom(" {\"name")).isZero();
    assertThat(l.holdFrom("<|pyth")).isZero();
    assertThat(l.holdFrom("Sure")).isEqualTo(4);
  }

  /** What streaming lets out as content is always content of the whole answer, for any text. */
  @Property(tries = 300)
  void contentLetOutEarlyIsContentOfTheWhole(
      @ForAll @StringLength(max = 40) String before, @ForAll boolean call, @ForAll boolean hermes) {
    ToolCallFormat f = hermes ? ToolCallFormat.HERMES : ToolCallFormat.LLAMA3_JSON;
    String whole =
        before
            + (call
                ? hermes
                    ? "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>"
                    : "{\"name\": \"f\", \"parameters\": {}}"
                : "");
    int released = 0;
    for (int end = 0; end <= whole.length(); end++) {
      int hold = f.holdFrom(whole.substring(0, end));
      assertThat(hold).isGreaterThanOrEqualTo(released);
      released = hold;
    }
    ToolCallFormat.Answer a = f.parse(whole);
    String let = whole.substring(0, released);
    if (a.calls().isEmpty()) {
      assertThat(a.content()).startsWith(let);
    } else {
      assertThat(let.strip()).isEqualTo(a.content() == null ? "" : a.content().strip());
    }
  }
}
