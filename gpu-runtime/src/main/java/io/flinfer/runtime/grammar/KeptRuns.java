package io.flinfer.runtime.grammar;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The plain runs a pattern state takes ({@link PatternRuns}), kept per vocabulary for every request
 * and thread: patterns are made once per text and shared ({@link StringPattern}), so requests with
 * the same schema find each state's runs once between them. The most recently used {@link #KEPT}
 * are kept; thread-safe.
 */
final class KeptRuns {
  static final int KEPT = 256;

  private record Key(StringPattern pattern, int state) {}

  private record Runs(long[] mask, int count) {}

  private final Map<Key, Runs> kept =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Key, Runs> eldest) {
          return size() > KEPT;
        }
      };

  /**
   * Copies the runs kept for {@code pattern}'s {@code state} into {@code mask[0..words)}: how many,
   * or -1 where none are kept.
   */
  synchronized int copy(StringPattern pattern, int state, long[] mask, int words) {
    Runs r = kept.get(new Key(pattern, state));
    if (r == null) {
      return -1;
    }
    System.arraycopy(r.mask, 0, mask, 0, words);
    return r.count;
  }

  /** Keeps a copy of {@code mask[0..words)}, {@code count} runs, for {@code pattern}'s state. */
  synchronized void keep(StringPattern pattern, int state, long[] mask, int words, int count) {
    kept.put(new Key(pattern, state), new Runs(java.util.Arrays.copyOf(mask, words), count));
  }
}
