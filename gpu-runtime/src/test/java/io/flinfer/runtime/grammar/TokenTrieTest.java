package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A vocabulary's trie gives exactly the tokens that trying each token gives, on random vocabularies
 * whose tokens share prefixes, repeat, hold escapes and run past the trie's depth, for regular
 * expressions, JSON, and schemas in random places, inside patterned strings with and without a
 * bounded length among them.
 */
class TokenTrieTest {
  private static final String[] REGEXES = {
    "[ab]+c?", "(ab|a\"b)*\\.?", "a{0,30}b", "[^a]*", "(é|ab)+ ?1", "\"?[a-z ]{3,40}\"",
  };

  private static final String SCHEMA =
      "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\", \"pattern\":"
          + " \"^(ab)+$\"}, \"b\": {\"type\": \"array\", \"items\": {\"type\": \"integer\"}},"
          + " \"c\": {\"type\": \"string\", \"pattern\": \"^.*$\"},"
          + " \"d\": {\"type\": \"string\", \"pattern\": \"^[ab]+11$\", \"maxLength\": 5}}}";

  /** Tokens of a few letters that JSON, the patterns and UTF-8 treat differently. */
  @Provide
  Arbitrary<List<String>> vocabularies() {
    Arbitrary<String> token =
        Arbitraries.strings()
            .withChars(
                'a', 'b', 'c', '"', ' ', '1', '{', '}', ':', ',', '[', ']', 'é', '.', '\\', 'n')
            .ofMinLength(0)
            .ofMaxLength(2 * TokenTrie.DEPTH + 3);
    return token.list().ofMinSize(1).ofMaxSize(300);
  }

  @Provide
  Arbitrary<String> texts() {
    return Arbitraries.strings()
        .withChars('a', 'b', '"', ' ', '1', '{', ':', '[', '\\', 'n')
        .ofMaxLength(8);
  }

  @Property(tries = 300)
  void aMaskIsTryingEveryToken(
      @ForAll("vocabularies") List<String> tokens,
      @ForAll("texts") String text,
      @ForAll("shapes") int shape) {
    byte[][] bytes = new byte[tokens.size()][];
    for (int t = 0; t < bytes.length; t++) {
      bytes[t] = tokens.get(t).getBytes(StandardCharsets.UTF_8);
    }
    JsonVocabulary v = JsonVocabulary.of(bytes);
    OutputState start = start(shape);
    // Where the text is refused, the shape's start is checked instead.
    OutputState copy = start.fresh();
    copy.copyFrom(start);
    OutputState state = MaskWalks.after(copy, text);
    if (state == null) {
      state = start;
    }
    long[] mask = new long[JsonVocabulary.words(v.size())];
    OutputConstraint c = new OutputConstraint(v, state);
    c.state().copyFrom(state);
    int n = c.allowed(mask);
    long[] expected = OutputConstraintTest.bruteForce(v, state);
    assertThat(mask).as("after %s", text).isEqualTo(expected);
    assertThat(n).isEqualTo(bitCount(expected));
  }

  @Provide
  Arbitrary<Integer> shapes() {
    return Arbitraries.integers().between(0, REGEXES.length + 3);
  }

  private static OutputState start(int shape) {
    if (shape < REGEXES.length) {
      return RegexGrammar.compile(REGEXES[shape]).start();
    }
    if (shape == REGEXES.length) {
      return new JsonPrefix();
    }
    SchemaPrefix start = JsonSchemaGrammar.compile(SCHEMA).start();
    // Inside a string that any characters but line ends match, where escapes write others, or
    // one held to a pattern and a length.
    if (shape == REGEXES.length + 1) {
      return start;
    }
    String before = "{\"a\": \"ab\", \"b\": [], \"c\": \"";
    return MaskWalks.after(start, shape == REGEXES.length + 2 ? before : before + "\", \"d\": \"");
  }

  @Property(tries = 100)
  void aNodeStandsForEachDistinctPrefixUpToTheDepth(@ForAll("vocabularies") List<String> tokens) {
    byte[][] bytes = new byte[tokens.size()][];
    Set<String> prefixes = new HashSet<>();
    int[] ids = new int[tokens.size()];
    int n = 0;
    for (int t = 0; t < bytes.length; t++) {
      bytes[t] = tokens.get(t).getBytes(StandardCharsets.ISO_8859_1);
      if (bytes[t].length == 0) {
        continue;
      }
      ids[n++] = t;
      String s = tokens.get(t);
      for (int k = 1; k <= Math.min(s.length(), TokenTrie.DEPTH); k++) {
        prefixes.add(s.substring(0, k));
      }
    }
    TokenTrie trie = TokenTrie.of(bytes, TokenTrie.sorted(bytes, java.util.Arrays.copyOf(ids, n)));
    assertThat(trie.nodes()).isEqualTo(prefixes.size() + 1);
  }

  private static int bitCount(long[] mask) {
    int n = 0;
    for (long w : mask) {
      n += Long.bitCount(w);
    }
    return n;
  }
}
