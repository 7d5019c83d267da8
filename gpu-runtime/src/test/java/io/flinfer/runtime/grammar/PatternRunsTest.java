package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;

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
          + " \"line\": {\"type\": \"string\", \"pattern\": \"^.*$\"}},"
          + " \"required\": [\"slug\", \"code\", \"short\", \"line\"]}}";

  @Test
  void masksInsidePatternsAreTheTokensThatFit() throws Exception {
    JsonVocabulary v = MaskWalks.llama3();
    JsonSchemaGrammar g = JsonSchemaGrammar.compile(SCHEMA);
    Random random = new Random(11);
    int inside = 0;
    for (int walk = 0; walk < 4; walk++) {
      // Short tokens first, so that walks stay inside strings and come back to their states.
      MaskWalks.Walk w = MaskWalks.walk(v, g.start(), random, 120, 1_000, true);
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
}
