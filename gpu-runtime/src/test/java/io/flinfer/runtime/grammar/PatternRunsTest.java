package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Inside strings held to patterns, masks made from the plain runs each pattern state keeps (and the
 * other tokens walked with the whole state) are exactly the tokens that fit, over the Llama 3
 * vocabulary: patterns of one- and two-byte characters, states that recur, two patterns in one
 * request, bounded and unbounded lengths, inside a thinking model's output too.
 */
class PatternRunsTest {
  private static final String SCHEMA =
      "{\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": {"
          + "\"slug\": {\"type\": \"string\", \"pattern\": \"^[a-z0-9-]+$\"},"
          + " \"code\": {\"type\": \"string\", \"pattern\": \"^(A[0-9]|é)+x?$\"},"
          + " \"short\": {\"type\": \"string\", \"pattern\": \"^[a-z ]+$\", \"maxLength\": 12},"
          + " \"line\": {\"type\": \"string\", \"pattern\": \"^.*$\"},"
          + " \"tag\": {\"type\": \"string\", \"pattern\": \"^[a-z]+[0-9]{2}$\","
          + " \"maxLength\": 7}},"
          + " \"required\": [\"slug\", \"code\", \"short\", \"line\", \"tag\"]}}";

  @Test
  void masksInsidePatternsAreTheTokensThatFit() throws Exception {
    JsonVocabulary v = MaskWalks.llama3();
    JsonSchemaGrammar g = JsonSchemaGrammar.compile(SCHEMA);
    Random random = new Random(11);
    int inside = 0;
    for (int walk = 0; walk < 4; walk++) {
      // Short tokens first, so that walks stay inside strings and come back to their states.
      MaskWalks.Walk w = MaskWalks.walk(v, g.start(), random, 160, 1_000, true);
      inside += w.text().length();
    }
    assertThat(inside).isGreaterThan(100);
  }

  @Test
  void aThinkingModelsPatternsToo() throws Exception {
    JsonVocabulary v = MaskWalks.llama3();
    JsonSchemaGrammar g = JsonSchemaGrammar.compile(SCHEMA);
    ThinkingPrefix start =
        MaskWalks.after(new ThinkingPrefix(g.start(), Thinking.OPENED), "so</think>\n");
    assertThat(start).isNotNull();
    MaskWalks.walk(v, start, new Random(5), 80, 1_000, true);
  }

  /**
   * Every run of the letters a, b, 1 up to five long after every text of them up to four long
   * inside strings whose patterns need characters to end and whose lengths are bounded: the mask is
   * trying every token, so a run is taken exactly where a match still fits after each of its
   * characters.
   */
  @Test
  void boundedStringsTakeTheRunsThatStillFit() {
    List<String> texts = MaskWalks.strings(new String[] {"a", "b", "1"}, 5);
    byte[][] bytes = new byte[texts.size()][];
    for (int t = 0; t < bytes.length; t++) {
      bytes[t] = texts.get(t).getBytes(StandardCharsets.UTF_8);
    }
    JsonVocabulary v = JsonVocabulary.of(bytes);
    String[] patterns = {"^[ab]+11$", "^a[ab]*1$", "^(ab|1)+$"};
    long[] mask = new long[JsonVocabulary.words(v.size())];
    int checked = 0;
    for (String pattern : patterns) {
      for (int maxLength = 3; maxLength <= 6; maxLength++) {
        JsonSchemaGrammar g =
            JsonSchemaGrammar.compile(
                "{\"type\": \"array\", \"items\": {\"type\": \"string\", \"pattern\": \""
                    + pattern
                    + "\", \"maxLength\": "
                    + maxLength
                    + "}}");
        for (String text : MaskWalks.strings(new String[] {"a", "b", "1"}, 4)) {
          SchemaPrefix state = MaskWalks.after(g.start(), "[\"" + text);
          if (state == null) {
            continue;
          }
          OutputConstraint c = new OutputConstraint(v, state);
          c.state().copyFrom(state);
          c.allowed(mask);
          assertThat(mask)
              .as("%s up to %d after %s", pattern, maxLength, text)
              .isEqualTo(OutputConstraintTest.bruteForce(v, state));
          checked++;
        }
      }
    }
    assertThat(checked).isGreaterThan(100);
  }
}
