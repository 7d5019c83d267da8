package io.flinfer.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
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
                    new ToolCall(null, "get_weather", "{\"city\": \"Oslo\"}"),
                    new ToolCall(null, "add", "{\"a\": 1}"))));
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
                null, List.of(new ToolCall(null, "add", "{\"a\": 2, \"b\": 40}"))));
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
        .containsExactly(
            new ToolCall(null, "q", "{\"s\": \"a;b\"}"), new ToolCall(null, "r", "{}"));
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

  @Test
  void callsCutShortAreGivenAsFarAsTheyGot() {
    String hermes = "Sure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, 2";
    ToolCallFormat.Answer cut = ToolCallFormat.HERMES.parse(hermes, true);
    assertThat(cut)
        .isEqualTo(
            new ToolCallFormat.Answer("Sure.", List.of(new ToolCall(null, "f", "{\"a\": [1, 2"))));
    // Not cut short, the same text is no call.
    assertThat(ToolCallFormat.HERMES.parse(hermes).calls()).isEmpty();
    // A call is one once its arguments have begun; arguments written as a string wait for the end.
    String llama = "{\"name\": \"g\", \"parameters\": \"{\\\"x\\\": 1";
    assertThat(ToolCallFormat.LLAMA3_JSON.callsSoFar(llama))
        .containsExactly(new ToolCall(null, "g", ""));
    assertThat(ToolCallFormat.LLAMA3_JSON.parse(llama + "}\"}").calls())
        .containsExactly(new ToolCall(null, "g", "{\"x\": 1}"));
    assertThat(ToolCallFormat.LLAMA3_JSON.callsSoFar("{\"name\": \"g\", \"parameters\"")).isEmpty();
    assertThat(ToolCallFormat.LLAMA3_JSON.parse("{\"name\": \"g\"", true).calls()).isEmpty();
  }

  /**
   * For any calls in either family's form, laid out with any blanks: the whole answer gives them
   * with their arguments as written, and every start of it gives a start of them that grows with
   * it, as a stream and an answer cut short there give them.
   */
  @Property(tries = 1000)
  void everyStartOfAnAnswerGivesAStartOfItsCalls(
      @ForAll long seed, @ForAll @IntRange(min = 1, max = 3) int count, @ForAll boolean hermes) {
    Random rnd = new Random(seed);
    ToolCallFormat f = hermes ? ToolCallFormat.HERMES : ToolCallFormat.LLAMA3_JSON;
    List<ToolCall> calls = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    if (hermes) {
      text.append(List.of("", "Let me see.\n\n", "{\"name\": \"x\"} ").get(rnd.nextInt(3)));
    } else {
      text.append(List.of("", " ", "<|python_tag|>").get(rnd.nextInt(3)));
    }
    for (int c = 0; c < count; c++) {
      String name = List.of("get_weather", "now", "f-2").get(rnd.nextInt(3));
      String arguments = CallScannerTest.object(rnd, 0);
      calls.add(new ToolCall(null, name, arguments));
      String object =
          "{"
              + CallScannerTest.blanks(rnd)
              + CallScannerTest.member(rnd, "name", '"' + name + '"')
              + ","
              + CallScannerTest.blanks(rnd)
              + CallScannerTest.member(rnd, f.argumentsKey(), arguments)
              + CallScannerTest.blanks(rnd)
              + "}";
      if (hermes) {
        text.append("<tool_call>\n").append(object).append("\n</tool_call>\n");
      } else {
        text.append(c == 0 ? "" : CallScannerTest.blanks(rnd) + ";" + CallScannerTest.blanks(rnd))
            .append(object);
      }
    }
    assertThat(f.parse(text.toString()).calls()).isEqualTo(calls);
    List<ToolCall> before = List.of();
    for (int end = 0; end <= text.length(); end++) {
      String start = text.substring(0, end);
      List<ToolCall> now = f.callsSoFar(start);
      assertThat(now.size()).isBetween(before.size(), calls.size());
      for (int k = 0; k < now.size(); k++) {
        assertThat(now.get(k).name()).isEqualTo(calls.get(k).name());
        assertThat(calls.get(k).arguments()).startsWith(now.get(k).arguments());
        if (k < before.size()) {
          assertThat(now.get(k).arguments()).startsWith(before.get(k).arguments());
        }
      }
      List<ToolCall> cut = f.parse(start, true).calls();
      assertThat(cut.size()).isGreaterThanOrEqualTo(now.size());
      for (int k = 0; k < cut.size(); k++) {
        assertThat(cut.get(k).name()).isEqualTo(calls.get(k).name());
        assertThat(calls.get(k).arguments()).startsWith(cut.get(k).arguments());
      }
      before = now;
    }
  }
}
