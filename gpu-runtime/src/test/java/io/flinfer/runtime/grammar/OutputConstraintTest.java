package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OutputConstraintTest {

  /** Byte runs for a small vocabulary: JSON's pieces, and tokens that never fit. */
  private static final String[] PIECES = {
    "", "{", "}", "{\"", "\":", "\"", "a", "b c", ",", " ", "\n  ", "[", "]", "1", "0", "-", ".5",
    "e+", "true", "null", "fal", "se", "\\", "n", "u00e9", "}\n", "\"}", "x\"y", "\t"
  };

  private static JsonVocabulary small() {
    byte[][] bytes = new byte[PIECES.length][];
    for (int i = 0; i < PIECES.length; i++) {
      bytes[i] = PIECES[i].getBytes(StandardCharsets.UTF_8);
    }
    return JsonVocabulary.of(bytes);
  }

  /**
   * A JSON object's masks are kept per state, and only a whole equal state shares one: two places
   * in one output that differ only in whether a container below is an array or an object get their
   * own masks, and a place visited again gets the same.
   */
  @Test
  void onlyEqualStatesShareAMask() {
    // One-character tokens, and runs that close containers of one kind or the other.
    String[] pieces = {"{", "}", "[", "]", "\"", "a", ":", ",", "1", "1]", "1}", "]}", "}}", "]]"};
    byte[][] bytes = new byte[pieces.length][];
    for (int t = 0; t < pieces.length; t++) {
      bytes[t] = pieces[t].getBytes(StandardCharsets.UTF_8);
    }
    JsonVocabulary v = JsonVocabulary.of(bytes);
    OutputConstraint c = new OutputConstraint(v);
    long[] mask = new long[JsonVocabulary.words(v.size())];
    // After the 1 of [1 and the 1 of {"b": 1 the states differ in the container alone.
    String text = "{\"a\":[1],\"a\":{\"a\":1},\"a\":[1";
    int checked = 0;
    for (int i = 0; i < text.length(); i++) {
      int token = java.util.Arrays.asList(pieces).indexOf(String.valueOf(text.charAt(i)));
      assertThat(c.advance(token)).as(text.substring(0, i + 1)).isTrue();
      c.allowed(mask);
      assertThat(mask).as(text.substring(0, i + 1)).isEqualTo(bruteForce(v, c.state()));
      checked++;
    }
    assertThat(checked).isEqualTo(text.length());
  }

  /** The tokens that may follow, found by trying every one. */
  static long[] bruteForce(JsonVocabulary v, OutputState state) {
    long[] mask = new long[JsonVocabulary.words(v.size())];
    OutputState probe = state.fresh();
    for (int t = 0; t < v.size(); t++) {
      byte[] b = v.bytes(t);
      probe.copyFrom(state);
      if (b.length > 0 && probe.accept(b, 0, b.length)) {
        mask[t >>> 6] |= 1L << t;
      }
    }
    return mask;
  }

  private static List<Integer> setBits(long[] mask, int size) {
    List<Integer> out = new ArrayList<>();
    for (int t = 0; t < size; t++) {
      if ((mask[t >>> 6] & 1L << t) != 0) {
        out.add(t);
      }
    }
    return out;
  }

  @Test
  void smallVocabularyStepByStep() {
    OutputConstraint c = new OutputConstraint(small());
    long[] mask = new long[1];
    assertThat(c.allowed(mask)).isEqualTo(setBits(mask, PIECES.length).size());
    // At the start: one whitespace byte, or an opening brace (alone, with a key's quote).
    assertThat(setBits(mask, PIECES.length)).containsExactlyInAnyOrder(1, 3, 9, 28);
    for (int t : new int[] {3, 6, 4, 9, 11, 13, 8, 20, 21, 12, 8}) {
      assertThat(c.advance(t)).as(PIECES[t]).isTrue();
    }
    // {"a": [1,false], ... a key must follow, not a closing brace: a quote, alone or with the
    // key's first characters.
    assertThat(c.advance(2)).isFalse();
    c.allowed(mask);
    assertThat(setBits(mask, PIECES.length)).containsExactlyInAnyOrder(4, 5, 9, 10, 26, 28);
    for (int t : new int[] {5, 7, 22, 23, 4, 19, 2}) {
      assertThat(c.advance(t)).as(PIECES[t]).isTrue();
    }
    assertThat(c.isComplete()).isTrue();
    assertThat(c.allowed(mask)).isZero();
    assertThat(mask[0]).isZero();
  }

  /** A fork tries tokens ahead without moving its origin, and hands its state back. */
  @Test
  void aForkMovesAloneAndHandsItsStateBack() {
    OutputConstraint c = new OutputConstraint(small());
    for (int t : new int[] {3, 6, 4}) {
      assertThat(c.advance(t)).isTrue();
    }
    long[] before = new long[1];
    c.allowed(before);
    OutputConstraint fork = c.fork();
    long[] mask = new long[1];
    fork.allowed(mask);
    assertThat(mask).as("the fork starts in its origin's state").isEqualTo(before);
    for (int t : new int[] {9, 11, 13, 8, 20, 21, 12, 8}) {
      assertThat(fork.advance(t)).as(PIECES[t]).isTrue();
    }
    c.allowed(mask);
    assertThat(mask).as("the origin did not move").isEqualTo(before);
    c.copyFrom(fork);
    assertThat(c.advance(2)).as("now where the fork was: no closing brace").isFalse();
    for (int t : new int[] {5, 7, 22, 23, 4, 19, 2}) {
      assertThat(c.advance(t)).as(PIECES[t]).isTrue();
    }
    assertThat(c.isComplete()).isTrue();
    assertThat(fork.isComplete()).isFalse();
  }

  @Test
  void tokensWithoutTextNeverFollow() {
    OutputConstraint c = new OutputConstraint(small());
    assertThat(c.advance(0)).isFalse();
    long[] mask = new long[1];
    c.allowed(mask);
    assertThat(mask[0] & 1L).isZero();
  }

  /**
   * A random walk over a real vocabulary, each token drawn from the mask: the mask is always
   * exactly the tokens that fit (every one tried), and the text is always a start of one JSON
   * object, which Jackson reads as one when the constraint says it is complete.
   */
  @ParameterizedTest
  @ValueSource(strings = {"llama3_1", "ggml-vocab-llama-spm", "qwen3"})
  void masksAreExactOnRealVocabularies(String vocab) throws Exception {
    Path gguf = SharedFiles.root().resolve("tokenizers").resolve(vocab + ".gguf");
    assumeTrue(Files.exists(gguf), "missing " + gguf);
    Tokenizer tok = GgufTokenizers.read(GgufFile.open(gguf));
    JsonVocabulary v = JsonVocabulary.of(tok);
    long[] mask = new long[JsonVocabulary.words(v.size())];
    Random random = new Random(vocab.hashCode());
    int completed = 0;
    for (int walk = 0; walk < 4; walk++) {
      OutputConstraint c = new OutputConstraint(v);
      ByteArrayOutputStream text = new ByteArrayOutputStream();
      for (int step = 0; step < 300 && !c.isComplete(); step++) {
        int n = c.allowed(mask);
        if (step % 3 == 0) {
          assertThat(mask).as("%s step %d", vocab, step).isEqualTo(bruteForce(v, c.state()));
        }
        List<Integer> allowed = setBits(mask, v.size());
        assertThat(allowed).hasSize(n).isNotEmpty();
        // Mostly short tokens: they close strings and containers.
        List<Integer> pool = allowed;
        if (random.nextInt(8) != 0) {
          List<Integer> shortOnes = allowed.stream().filter(t -> v.bytes(t).length == 1).toList();
          pool = shortOnes.isEmpty() ? allowed : shortOnes;
        }
        int t = pool.get(random.nextInt(pool.size()));
        assertThat(c.advance(t)).isTrue();
        text.write(v.bytes(t));
      }
      if (c.isComplete()) {
        completed++;
        JsonNode node = new ObjectMapper().readTree(text.toString(StandardCharsets.UTF_8));
        assertThat(node.isObject()).isTrue();
      }
    }
    assertThat(completed).as("walks that closed their object").isPositive();
  }
}
