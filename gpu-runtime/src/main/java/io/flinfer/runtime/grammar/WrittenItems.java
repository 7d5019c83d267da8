package io.flinfer.runtime.grammar;

/**
 * The string and integer items a unique array has written, each as a 64-bit hash of its value: a
 * list grown at its head and never changed, so that a state is copied by copying a reference (masks
 * copy a state for every token they try). Two equal values always hash alike, so a repeated item is
 * always refused; two different values that collide would refuse one of them, which keeps the
 * output valid and leaves other values to write.
 */
final class WrittenItems {
  /** The hash of a value before its first code unit. */
  static final long EMPTY = 0x9E3779B97F4A7C15L;

  private final long hash;
  private final WrittenItems next;

  private WrittenItems(long hash, WrittenItems next) {
    this.hash = hash;
    this.next = next;
  }

  /** {@code list} with {@code hash} added. */
  static WrittenItems with(WrittenItems list, long hash) {
    return new WrittenItems(hash, list);
  }

  static boolean contains(WrittenItems list, long hash) {
    for (WrittenItems i = list; i != null; i = i.next) {
      if (i.hash == hash) {
        return true;
      }
    }
    return false;
  }

  /** The hash of a value extended by one UTF-16 code unit (or digit, or sign). */
  static long mix(long hash, int unit) {
    long h = (hash ^ unit) * 0xBF58476D1CE4E5B9L;
    return h ^ (h >>> 31);
  }

  /** The hash extended by one code point, as its UTF-16 code units (a string's escapes alike). */
  static long mixCodePoint(long hash, int codePoint) {
    if (codePoint < 0x10000) {
      return mix(hash, codePoint);
    }
    return mix(mix(hash, Character.highSurrogate(codePoint)), Character.lowSurrogate(codePoint));
  }
}
