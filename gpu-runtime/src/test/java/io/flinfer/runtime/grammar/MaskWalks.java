package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.testing.SharedFiles;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * What the tests of free-text shapes (regular expressions, grammars) share: every string of a few
 * letters, a shape's state after a text, and random walks over a real vocabulary that check every
 * mask against trying every token.
 */
final class MaskWalks {
  private MaskWalks() {}

  /** Every string of {@code letters} up to {@code longest} characters. */
  static List<String> strings(String[] letters, int longest) {
    List<String> all = new ArrayList<>(List.of(""));
    List<String> last = List.of("");
    for (int n = 1; n <= longest; n++) {
      List<String> next = new ArrayList<>();
      for (String s : last) {
        for (String letter : letters) {
          next.add(s + letter);
        }
      }
      all.addAll(next);
      last = next;
    }
    return all;
  }

  /** {@code start} after the UTF-8 bytes of {@code text}, or null where it does not take them. */
  static <S extends OutputState> S after(S start, String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    return start.accept(b, 0, b.length) ? start : null;
  }

  /** The Llama 3 vocabulary's table; the test is skipped without it. */
  static JsonVocabulary llama3() throws Exception {
    Path gguf = SharedFiles.root().resolve("tokenizers/llama3_1.gguf");
    assumeTrue(Files.exists(gguf), "missing " + gguf);
    return JsonVocabulary.of(GgufTokenizers.read(GgufFile.open(gguf)));
  }

  /** Where a walk ended: its text, and whether the output could end there. */
  record Walk(String text, boolean mayEnd) {}

  /**
   * Up to {@code steps} tokens from {@code start}, each drawn from the mask (one byte long, where
   * {@code shortFirst} and one such fits, three times in four), every mask asserted equal to trying
   * every token; the walk stops where the output is complete, or may end and a one in {@code
   * stopOdds} draw says so.
   */
  static Walk walk(
      JsonVocabulary v,
      OutputState start,
      Random random,
      int steps,
      int stopOdds,
      boolean shortFirst) {
    long[] mask = new long[JsonVocabulary.words(v.size())];
    OutputConstraint c = new OutputConstraint(v, start);
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    for (int step = 0; step < steps && !c.isComplete(); step++) {
      int n = c.allowed(mask);
      assertThat(mask)
          .as("step %d after %s", step, text.toString(StandardCharsets.UTF_8))
          .isEqualTo(OutputConstraintTest.bruteForce(v, c.state()));
      if (c.mayEnd() && random.nextInt(stopOdds) == 0) {
        break;
      }
      List<Integer> allowed = new ArrayList<>();
      for (int t = 0; t < v.size(); t++) {
        if ((mask[t >>> 6] & 1L << t) != 0) {
          allowed.add(t);
        }
      }
      assertThat(allowed).hasSize(n).isNotEmpty();
      List<Integer> pool = allowed;
      if (shortFirst && random.nextInt(4) != 0) {
        List<Integer> shortOnes = allowed.stream().filter(t -> v.bytes(t).length == 1).toList();
        pool = shortOnes.isEmpty() ? allowed : shortOnes;
      }
      int t = pool.get(random.nextInt(pool.size()));
      assertThat(c.advance(t)).isTrue();
      text.write(v.bytes(t), 0, v.bytes(t).length);
    }
    return new Walk(text.toString(StandardCharsets.UTF_8), c.mayEnd());
  }
}
