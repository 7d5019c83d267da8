package io.flinfer.runtime.grammar;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Inside a string held to a pattern, the plain runs without escapes that may follow depend on the
 * pattern's state alone ({@link OutputState#plainPattern}), so each (pattern, state)'s runs are
 * found once per request and kept ({@link MaskCache}, up to its limit); only the other tokens are
 * walked with the request's whole state. Shared by a constraint and its forks; not thread-safe.
 */
final class PatternRuns {
  private final Map<StringPattern, Integer> ids = new IdentityHashMap<>();
  private final MaskCache kept = new MaskCache();
  private OutputState[] stack;
  private OutputState probe;

  /**
   * Sets in {@code mask} (cleared first) the plain runs without escapes of {@code vocabulary} whose
   * characters {@code pattern} takes from its state {@code from}; returns how many.
   */
  int plainRuns(JsonVocabulary vocabulary, StringPattern pattern, int from, long[] mask) {
    int id = ids.computeIfAbsent(pattern, p -> ids.size());
    // A pattern has at most MAX_STATES states; keys past int's range are not kept.
    long wide = (long) id * (StringPattern.MAX_STATES + 1) + from;
    int key = wide <= Integer.MAX_VALUE ? (int) wide : -1;
    int n = key >= 0 ? kept.get(key, mask) : -1;
    if (n < 0) {
      if (stack == null) {
        stack = new OutputState[TokenTrie.DEPTH + 1];
        for (int d = 0; d < stack.length; d++) {
          stack[d] = new RegexPrefix(pattern);
        }
        probe = new RegexPrefix(pattern);
      }
      n = vocabulary.patternRuns(pattern, from, mask, stack, probe);
      if (key >= 0) {
        kept.put(key, mask, n);
      }
    }
    return n;
  }
}
