package io.flinfer.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.chat.ReasoningParser.Split;
import io.flinfer.runtime.grammar.Thinking;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class ReasoningParserTest {
  private static final ReasoningParser MODEL_OPENS = ReasoningParser.of(false);
  private static final ReasoningParser PROMPT_OPENS = ReasoningParser.of(true);

  @Test
  void splitsQwen3sThinkingFromItsAnswer() {
    assertThat(MODEL_OPENS.split("<think>\nSeventeen threes.\n</think>\n\n51."))
        .isEqualTo(new Split("Seventeen threes.", "51."));
    // Newlines inside either part stay.
    assertThat(MODEL_OPENS.split("<think>\na\n\nb\n</think>\n\nc\n\nd\n"))
        .isEqualTo(new Split("a\n\nb", "c\n\nd\n"));
  }

  @Test
  void anOutputWithoutThinkingIsAllAnswer() {
    assertThat(MODEL_OPENS.split("51.")).isEqualTo(new Split(null, "51."));
    assertThat(MODEL_OPENS.split("  51 <think> no")).isEqualTo(new Split(null, "  51 <think> no"));
    assertThat(MODEL_OPENS.split("")).isEqualTo(new Split(null, ""));
    assertThat(MODEL_OPENS.split("<thi")).isEqualTo(new Split(null, "<thi"));
  }

  @Test
  void anOutputCutShortWhileThinkingIsAllThinking() {
    assertThat(MODEL_OPENS.split("<think>\nSeventeen\n")).isEqualTo(new Split("Seventeen", ""));
    assertThat(PROMPT_OPENS.split("Seventeen</th")).isEqualTo(new Split("Seventeen</th", ""));
  }

  @Test
  void afterAPromptThatOpenedTheThoughtEverythingBeforeItsEndIsThinking() {
    assertThat(PROMPT_OPENS.split("\nHmm.\n</think>\n\n51.")).isEqualTo(new Split("Hmm.", "51."));
    assertThat(PROMPT_OPENS.split("</think>51.")).isEqualTo(new Split("", "51."));
  }

  @Test
  void qwen3sTemplateLeavesTheThoughtToTheModelUnlessSwitchedOff() throws Exception {
    ChatTemplate qwen3 = ChatTemplateThinkingTest.qwen3();
    ReasoningParser thinks = ReasoningParser.forTemplate(qwen3, null).orElseThrow();
    assertThat(thinks.startsInside()).isFalse();
    assertThat(thinks.thinking()).isEqualTo(Thinking.MAY_OPEN);
    ReasoningParser answers =
        ReasoningParser.forTemplate(qwen3, "{\"enable_thinking\": false}").orElseThrow();
    assertThat(answers.startsInside()).isFalse();
    // The prompt closed an empty thought: a constrained answer holds from its first token.
    assertThat(answers.thinking()).isEqualTo(Thinking.NONE);
    // A template whose generation prompt opens the thought (as DeepSeek-R1's does).
    ChatTemplate opens =
        new ChatTemplate(
            "{% for m in messages %}{{ m.content }}{% endfor %}"
                + "{% if add_generation_prompt %}<answer><think>\n{% endif %}"
                + "{# </think> #}",
            "", "");
    assertThat(ReasoningParser.forTemplate(opens, null).orElseThrow().thinking())
        .isEqualTo(Thinking.OPENED);
    assertThat(ReasoningParser.forTemplate(new ChatTemplate("{{ messages }}", "", ""), null))
        .isEmpty();
  }

  @Test
  void whatAStreamSendsIsNeverTakenBack() {
    ReasoningStream s = MODEL_OPENS.stream();
    assertThat(s.next("<th")).isEqualTo(new Split(null, ""));
    assertThat(s.next("ink>\nOne")).isEqualTo(new Split("One", ""));
    assertThat(s.next(" two\n</thi")).isEqualTo(new Split(" two", ""));
    assertThat(s.next("nk>\n\n")).isEqualTo(new Split("", ""));
    assertThat(s.next("Three")).isEqualTo(new Split("", "Three"));
    assertThat(s.finish()).isEqualTo(new Split("", ""));
  }

  /** The parts a stream sends add up to the whole output's split, however the output arrives. */
  @Property(tries = 2000)
  void streamsSplitAsWholeOutputsDo(
      @ForAll("outputs") List<String> pieces, @ForAll boolean startsInside) {
    ReasoningParser p = ReasoningParser.of(startsInside);
    String whole = String.join("", pieces);
    ReasoningStream s = p.stream();
    Split sent = new Split(null, "");
    for (String piece : pieces) {
      sent = sent.then(s.next(piece));
    }
    sent = sent.then(s.finish());
    assertThat(sent).isEqualTo(p.split(whole)).isEqualTo(reference(whole, startsInside));
    // The thought's length covers the thinking: 0 where there is none (or nothing was written),
    // more wherever something was.
    int thought = p.thoughtLength(whole);
    assertThat(thought == 0).isEqualTo(sent.reasoning() == null || whole.isEmpty());
    assertThat(whole.substring(thought)).endsWith(sent.content());
  }

  /**
   * What a stream has sent depends on the text so far alone, not on its pieces: a stream fed the
   * text so far at once (as one rebuilt after a restore is) has sent the same, and goes on alike.
   */
  @Property(tries = 2000)
  void whatAStreamSentDependsOnTheTextAlone(
      @ForAll("outputs") List<String> pieces, @ForAll boolean startsInside) {
    ReasoningParser p = ReasoningParser.of(startsInside);
    ReasoningStream s = p.stream();
    Split sent = new Split(null, "");
    StringBuilder soFar = new StringBuilder();
    for (int k = 0; k < pieces.size(); k++) {
      sent = sent.then(s.next(pieces.get(k)));
      soFar.append(pieces.get(k));
      ReasoningStream rebuilt = p.stream();
      assertThat(rebuilt.next(soFar.toString())).isEqualTo(sent);
      // Both go on alike from here.
      Split rebuiltRest = new Split(null, "");
      ReasoningStream again = p.stream();
      again.next(soFar.toString());
      for (String piece : pieces.subList(k + 1, pieces.size())) {
        rebuiltRest = rebuiltRest.then(again.next(piece));
      }
      assertThat(sent.then(rebuiltRest.then(again.finish())))
          .isEqualTo(p.split(String.join("", pieces)));
    }
  }

  @Provide
  Arbitrary<List<String>> outputs() {
    return Arbitraries.of("<think>", "</think>", "\n", "\n\n", "a", " ", "<", "</th", "ink>", "<th")
        .list()
        .ofMaxSize(12);
  }

  /** The rule, written plainly for whole outputs. */
  private static Split reference(String text, boolean startsInside) {
    String body = text;
    if (!startsInside) {
      String rest = text.stripLeading();
      if (!rest.startsWith("<think>")) {
        return new Split(null, text);
      }
      body = rest.substring("<think>".length());
    }
    int close = body.indexOf("</think>");
    if (close < 0) {
      return new Split(stripNewlines(body), "");
    }
    String answer = body.substring(close + "</think>".length()).replaceFirst("^\n+", "");
    return new Split(stripNewlines(body.substring(0, close)), answer);
  }

  private static String stripNewlines(String s) {
    return s.replaceFirst("^\n+", "").replaceFirst("\n+$", "");
  }
}
