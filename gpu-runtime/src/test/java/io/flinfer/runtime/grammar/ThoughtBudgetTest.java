package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class ThoughtBudgetTest {
  private static final String[] PIECES = {
    "<think>", "</think>", "<", "</th", "ink>", "\n", " ", "x", "\n\n", "<thi", "nk>"
  };
  private static final int[] CLOSE = {5, 1, 8}; // "\n</think>\n\n"
  private static final JsonVocabulary VOCABULARY = vocabulary();

  private static JsonVocabulary vocabulary() {
    byte[][] bytes = new byte[PIECES.length][];
    for (int t = 0; t < PIECES.length; t++) {
      bytes[t] = PIECES[t].getBytes(StandardCharsets.UTF_8);
    }
    return JsonVocabulary.of(bytes);
  }

  private static ThoughtBudget budget(int tokens, boolean opened) {
    return new ThoughtBudget(
        VOCABULARY, opened ? Thinking.OPENED : Thinking.MAY_OPEN, tokens, CLOSE);
  }

  /** The model's choices, each replaced by the forced token where there is one. */
  private static List<Integer> run(ThoughtBudget b, List<Integer> choices) {
    List<Integer> out = new ArrayList<>();
    for (int c : choices) {
      int f = b.forced();
      int t = f >= 0 ? f : c;
      b.advance(t);
      out.add(t);
    }
    return out;
  }

  @Test
  void aThoughtIsClosedWhenItsBudgetIsSpent() {
    // <think> x x x | forced \n </think> \n\n | then free again
    assertThat(run(budget(3, false), List.of(0, 7, 7, 7, 7, 7, 7, 7, 7)))
        .containsExactly(0, 7, 7, 7, 5, 1, 8, 7, 7);
    // A thought the prompt opened counts from the first token; 0 closes it at once.
    assertThat(run(budget(0, true), List.of(7, 7, 7, 7))).containsExactly(5, 1, 8, 7);
    // A thought closed within its budget, or an output that does not open one, is left alone.
    assertThat(run(budget(3, false), List.of(0, 7, 1, 7, 7, 7))).containsExactly(0, 7, 1, 7, 7, 7);
    assertThat(run(budget(0, false), List.of(7, 0, 7, 7))).containsExactly(7, 0, 7, 7);
    // The opening may be split across tokens, and follow whitespace.
    assertThat(run(budget(1, false), List.of(5, 6, 0, 7, 7, 7))).containsExactly(5, 6, 0, 7, 5, 1);
    assertThat(run(budget(1, false), List.of(9, 10, 7, 7, 7))).containsExactly(9, 10, 7, 5, 1);
    assertThatThrownBy(() -> new ThoughtBudget(VOCABULARY, Thinking.NONE, 3, CLOSE))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> budget(-1, true)).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * Whatever the model chooses, the output is what a plain rule over its text gives: once the open
   * thought has {@code budget} tokens, the closing tokens follow; and a budget rebuilt from the
   * tokens so far (a restored request) forces what the live one does.
   */
  @Property(tries = 3000)
  void followsThePlainRuleAndIsRebuiltFromTheTokens(
      @ForAll("choices") List<Integer> choices,
      @ForAll @IntRange(min = 0, max = 6) int tokens,
      @ForAll boolean opened) {
    ThoughtBudget live = budget(tokens, opened);
    List<Integer> out = new ArrayList<>();
    for (int c : choices) {
      ThoughtBudget rebuilt = budget(tokens, opened);
      for (int t : out) {
        rebuilt.advance(t);
      }
      int f = live.forced();
      assertThat(rebuilt.forced()).isEqualTo(f);
      int t = f >= 0 ? f : c;
      live.advance(t);
      out.add(t);
    }
    assertThat(out).isEqualTo(reference(choices, tokens, opened));
  }

  /**
   * A fork taken anywhere goes on as its origin would and leaves it where it was; its state copied
   * back, the origin goes on from there.
   */
  @Property(tries = 1000)
  void aForkGoesOnAsItsOriginWouldAndLeavesItAlone(
      @ForAll("choices") List<Integer> choices,
      @ForAll @IntRange(min = 0, max = 6) int tokens,
      @ForAll boolean opened,
      @ForAll @IntRange(min = 0, max = 14) int at) {
    int split = Math.min(at, choices.size());
    List<Integer> whole = run(budget(tokens, opened), choices);
    ThoughtBudget live = budget(tokens, opened);
    List<Integer> head = run(live, choices.subList(0, split));
    int forcedBefore = live.forced();
    int thoughtBefore = live.thoughtTokens();
    ThoughtBudget fork = live.fork();
    List<Integer> tail = run(fork, choices.subList(split, choices.size()));
    List<Integer> joined = new ArrayList<>(head);
    joined.addAll(tail);
    assertThat(joined).isEqualTo(whole);
    assertThat(live.forced()).isEqualTo(forcedBefore);
    assertThat(live.thoughtTokens()).isEqualTo(thoughtBefore);
    live.copyFrom(fork);
    assertThat(live.forced()).isEqualTo(fork.forced());
    assertThat(live.thoughtTokens()).isEqualTo(fork.thoughtTokens());
  }

  @Provide
  Arbitrary<List<Integer>> choices() {
    return Arbitraries.integers().between(0, PIECES.length - 1).list().ofMaxSize(14);
  }

  private static List<Integer> reference(List<Integer> choices, int budget, boolean opened) {
    List<Integer> out = new ArrayList<>();
    int closing = -1; // the next closing token; -2 once all were given
    for (int c : choices) {
      if (closing == -1) {
        String text = text(out);
        String rest = text.stripLeading();
        int blanks = text.length() - rest.length();
        boolean open = rest.startsWith("<think>");
        int start = opened ? 0 : open ? tokensCovering(out, blanks + 7) : -1;
        String thought = opened ? text : open ? rest.substring(7) : null;
        if (start >= 0 && !thought.contains("</think>") && out.size() - start >= budget) {
          closing = 0;
        }
      }
      if (closing >= 0) {
        out.add(CLOSE[closing]);
        closing = closing + 1 == CLOSE.length ? -2 : closing + 1;
      } else {
        out.add(c);
      }
    }
    return out;
  }

  private static String text(List<Integer> tokens) {
    StringBuilder sb = new StringBuilder();
    tokens.forEach(t -> sb.append(PIECES[t]));
    return sb.toString();
  }

  /** How many of the first tokens it takes for the text to reach {@code length} characters. */
  private static int tokensCovering(List<Integer> tokens, int length) {
    int n = 0;
    for (int i = 0; i < tokens.size(); i++) {
      n += PIECES[tokens.get(i)].length();
      if (n >= length) {
        return i + 1;
      }
    }
    return tokens.size();
  }
}
