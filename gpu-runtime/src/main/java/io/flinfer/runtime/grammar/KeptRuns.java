package io.flinfer.runtime.grammar;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The tokens a pattern state lets follow, kept per vocabulary for every request and thread: the
 * plain runs of a string held to it ({@link PatternRuns}), or every token of a regular expression's
 * output ({@link OutputState#textPattern}). Patterns are made once per text and shared ({@link
 * StringPattern}), so requests with the same schema or regex find each state's tokens once between
 * them. The most recently used {@link #KEPT} are kept; thread-safe.
 */
final class KeptRuns {
  static final int KEPT = 256;

  // text: every token of a regex's output; else the plain runs of a JSON string.
  private record Key(StringPattern pattern, int state, boolean text) {}

  private static final class Runs {
    final long[] mask;
    final int count;
    // A JSON string's runs by the room they need, made at the first bounded string that asks.
    int[][] rooms;

    Runs(long[] mask, int count) {
      this.mask = mask;
      this.count = count;
    }
  }

  private final Map<Key, Runs> kept =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Key, Runs> eldest) {
          return size() > KEPT;
        }
      };

  /**
   * Copies the tokens kept for {@code pattern}'s {@code state} (in a regex's output where {@code
   * text}, else in a JSON string) into {@code mask[0..words)}: how many, or -1 where none are kept.
   */
  synchronized int copy(StringPattern pattern, int state, boolean text, long[] mask, int words) {
    Runs r = kept.get(new Key(pattern, state, text));
    if (r == null) {
      return -1;
    }
    System.arraycopy(r.mask, 0, mask, 0, words);
    return r.count;
  }

  /**
   * The room each of a JSON string's runs at {@code pattern}'s {@code state} needs ({@link
   * JsonVocabulary#runRooms}), or null where none is kept.
   */
  synchronized int[][] rooms(StringPattern pattern, int state) {
    Runs r = kept.get(new Key(pattern, state, false));
    return r == null ? null : r.rooms;
  }

  /** Keeps {@code rooms} with the runs of {@code pattern}'s {@code state}, if they are kept. */
  synchronized void keepRooms(StringPattern pattern, int state, int[][] rooms) {
    Runs r = kept.get(new Key(pattern, state, false));
    if (r != null) {
      r.rooms = rooms;
    }
  }

  /** Keeps a copy of {@code mask[0..words)}, {@code count} tokens, for {@code pattern}'s state. */
  synchronized void keep(
      StringPattern pattern, int state, boolean text, long[] mask, int words, int count) {
    kept.put(new Key(pattern, state, text), new Runs(java.util.Arrays.copyOf(mask, words), count));
  }
}
