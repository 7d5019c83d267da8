package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class ThinkingPrefixTest {
  private static boolean accepts(Thinking thinking, String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    return new ThinkingPrefix(new JsonPrefix(), thinking).accept(b, 0, b.length);
  }

  private static boolean complete(Thinking thinking, String text) {
    ThinkingPrefix p = new ThinkingPrefix(new JsonPrefix(), thinking);
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    return p.accept(b, 0, b.length) && p.isComplete();
  }

  @Test
  void aThoughtMayComeBeforeTheShape() {
    assertThat(
            complete(Thinking.MAY_OPEN, "<think>\nA {json} \"thought\".\n</think>\n\n{\"a\": 1}"))
        .isTrue();
    assertThat(complete(Thinking.MAY_OPEN, "{\"a\": 1}")).isTrue();
    assertThat(complete(Thinking.OPENED, "Hm.</think>\n\n{}")).isTrue();
    // Inside a thought nothing is complete, however much JSON it holds.
    assertThat(complete(Thinking.OPENED, "{}")).isFalse();
    assertThat(accepts(Thinking.MAY_OPEN, "<thi")).isTrue();
    assertThat(accepts(Thinking.MAY_OPEN, "<thx")).isFalse();
    assertThat(accepts(Thinking.MAY_OPEN, "Hello")).isFalse();
    assertThat(accepts(Thinking.OPENED, "</think>Hello")).isFalse();
    assertThat(accepts(Thinking.OPENED, "</think>\n\n\n\n {")).isTrue();
    assertThat(accepts(Thinking.OPENED, "</think>\n\n\n\n  {")).isFalse();
    assertThatThrownBy(() -> new ThinkingPrefix(new JsonPrefix(), Thinking.NONE))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** Byte for byte, the state accepts exactly the starts of outputs that the plain rule allows. */
  @Property(tries = 3000)
  void acceptsWhatThePlainRuleAllows(
      @ForAll("outputs") List<String> pieces, @ForAll boolean opened) {
    String text = String.join("", pieces);
    Thinking thinking = opened ? Thinking.OPENED : Thinking.MAY_OPEN;
    assertThat(accepts(thinking, text)).as(text).isEqualTo(reference(text, opened));
  }

  @Provide
  Arbitrary<List<String>> outputs() {
    return Arbitraries.of(
            "<think>", "</think>", "<", "</th", "ink>", "\n", " ", "{", "}", "\"a\"", ":", "1", "x")
        .list()
        .ofMaxSize(10);
  }

  private static boolean reference(String text, boolean opened) {
    String body = text;
    if (!opened) {
      if ("<think>".startsWith(text)) {
        return true;
      }
      if (!text.startsWith("<think>")) {
        return !text.startsWith("<") && json(text);
      }
      body = text.substring("<think>".length());
    }
    int close = body.indexOf("</think>");
    if (close < 0) {
      return true;
    }
    String after = body.substring(close + "</think>".length());
    int blanks = 0;
    while (blanks < after.length()
        && blanks < ThinkingPrefix.MAX_BLANKS
        && (after.charAt(blanks) == '\n' || after.charAt(blanks) == ' ')) {
      blanks++;
    }
    return json(after.substring(blanks));
  }

  private static boolean json(String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    return new JsonPrefix().accept(b, 0, b.length);
  }

  /**
   * A walk over Qwen3's vocabulary: {@code <think>}, tokens drawn from the mask inside the thought,
   * {@code </think>}, then an object: every mask is exactly the tokens that fit (every one tried),
   * and the object Jackson reads.
   */
  @Test
  void masksAreExactOnQwen3sVocabulary() throws Exception {
    Tokenizer tok =
        GgufTokenizers.read(GgufFile.open(SharedFiles.root().resolve("tokenizers/qwen3.gguf")));
    JsonVocabulary v = JsonVocabulary.of(tok);
    int open = tok.encode("<think>", false, true)[0];
    int close = tok.encode("</think>", false, true)[0];
    int blank = tok.encode("\n\n", false, true)[0];
    long[] mask = new long[JsonVocabulary.words(v.size())];
    Random random = new Random(7);
    OutputConstraint c =
        new OutputConstraint(v, new ThinkingPrefix(new JsonPrefix(), Thinking.MAY_OPEN));
    ByteArrayOutputStream answer = new ByteArrayOutputStream();
    int step = 0;
    for (; step < 200 && !c.isComplete(); step++) {
      c.allowed(mask);
      if (step % 4 == 0 || step < 3) {
        assertThat(mask)
            .as("step %d", step)
            .isEqualTo(OutputConstraintTest.bruteForce(v, c.state()));
      }
      int t;
      if (step == 0) {
        t = open;
      } else if (step == 12) {
        t = close;
      } else if (step == 13) {
        t = blank;
      } else {
        List<Integer> allowed = new java.util.ArrayList<>();
        for (int i = 0; i < v.size(); i++) {
          if ((mask[i >>> 6] & 1L << i) != 0 && (step < 12 || v.bytes(i).length == 1)) {
            allowed.add(i);
          }
        }
        allowed.remove(Integer.valueOf(close)); // the thought ends at step 12
        t = allowed.get(random.nextInt(allowed.size()));
      }
      assertThat((mask[t >>> 6] & 1L << t) != 0).as("step %d token %d", step, t).isTrue();
      assertThat(c.advance(t)).isTrue();
      if (step > 13) {
        answer.write(v.bytes(t));
      }
    }
    assertThat(c.isComplete()).as("the object closed within 200 tokens").isTrue();
    assertThat(new ObjectMapper().readTree(answer.toString(StandardCharsets.UTF_8)).isObject())
        .isTrue();
  }
}
