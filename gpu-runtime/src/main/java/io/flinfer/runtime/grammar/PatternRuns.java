package io.flinfer.runtime.grammar;

/**
 * Inside a string held to a pattern, the plain runs without escapes that may follow depend on the
 * pattern's state alone ({@link OutputState#plainPattern}): each (pattern, state)'s runs are found
 * once and kept for every request ({@link KeptRuns}); only the other tokens are walked with the
 * request's whole state. This holds one request's regex states for finding them; shared by a
 * constraint and its forks, not thread-safe.
 */
final class PatternRuns {
  private OutputState[] stack;
  private OutputState probe;

  /**
   * Sets in {@code mask} (cleared first) the plain runs without escapes of {@code vocabulary} whose
   * characters {@code pattern} takes from its state {@code from}; returns how many.
   */
  int plainRuns(JsonVocabulary vocabulary, StringPattern pattern, int from, long[] mask) {
    int words = JsonVocabulary.words(vocabulary.size());
    int n = vocabulary.keptRuns().copy(pattern, from, false, mask, words);
    if (n >= 0) {
      return n;
    }
    if (stack == null) {
      stack = new OutputState[TokenTrie.DEPTH + 1];
      for (int d = 0; d < stack.length; d++) {
        stack[d] = new RegexPrefix(pattern);
      }
      probe = new RegexPrefix(pattern);
    }
    n = vocabulary.patternRuns(pattern, from, mask, stack, probe);
    vocabulary.keptRuns().keep(pattern, from, false, mask, words, n);
    return n;
  }
}
