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
   * characters {@code pattern} takes from its state {@code from} in a string with {@code room}
   * characters left ({@link Integer#MAX_VALUE}: any number); returns how many.
   */
  int plainRuns(JsonVocabulary vocabulary, StringPattern pattern, int from, int room, long[] mask) {
    KeptRuns kept = vocabulary.keptRuns();
    int words = JsonVocabulary.words(vocabulary.size());
    int n = kept.copy(pattern, from, false, mask, words);
    if (n < 0) {
      n = find(vocabulary, pattern, from, mask);
      kept.keep(pattern, from, false, mask, words, n);
    }
    if (room == Integer.MAX_VALUE) {
      return n;
    }
    int[][] rooms = kept.rooms(pattern, from);
    if (rooms == null) {
      rooms = vocabulary.runRooms(pattern, from, mask);
      kept.keepRooms(pattern, from, rooms);
    }
    // Largest rooms first: the runs that do not fit are a prefix.
    for (int i = 0; i < rooms[0].length && rooms[1][i] > room; i++) {
      int t = rooms[0][i];
      mask[t >>> 6] &= ~(1L << t);
      n--;
    }
    return n;
  }

  private int find(JsonVocabulary vocabulary, StringPattern pattern, int from, long[] mask) {
    if (stack == null) {
      stack = new OutputState[TokenTrie.DEPTH + 1];
      for (int d = 0; d < stack.length; d++) {
        stack[d] = new RegexPrefix(pattern);
      }
      probe = new RegexPrefix(pattern);
    }
    return vocabulary.patternRuns(pattern, from, mask, stack, probe);
  }
}
