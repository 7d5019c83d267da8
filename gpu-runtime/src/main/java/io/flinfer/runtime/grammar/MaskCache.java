package io.flinfer.runtime.grammar;

/**
 * The masks of one request's states whose mask a key decides ({@link OutputState#maskKey}: a
 * regular expression's automaton state, a grammar's set of stacks, between characters; a JSON
 * object's whole state), each made once and kept, up to {@link #KEPT}: shared by a constraint and
 * its forks. Not thread-safe.
 */
final class MaskCache {
  static final int KEPT = 64;

  // Open addressing over keys + 1 (0 is free), twice as many slots as masks kept.
  private final int[] keys = new int[2 * KEPT];
  private final long[][] masks = new long[2 * KEPT][];
  private final int[] counts = new int[2 * KEPT];
  private int kept;

  /** Copies the mask kept for {@code key} into {@code mask}: how many it allows, or -1: none. */
  int get(int key, long[] mask) {
    int slot = slot(key);
    if (keys[slot] == 0) {
      return -1;
    }
    System.arraycopy(masks[slot], 0, mask, 0, mask.length);
    return counts[slot];
  }

  /** Keeps a copy of {@code mask} (allowing {@code count}) for {@code key}, while there is room. */
  void put(int key, long[] mask, int count) {
    if (kept == KEPT) {
      return;
    }
    int slot = slot(key);
    if (keys[slot] == 0) {
      keys[slot] = key + 1;
      masks[slot] = mask.clone();
      counts[slot] = count;
      kept++;
    }
  }

  private int slot(int key) {
    int mask = keys.length - 1;
    int h = (key * 0x9E3779B9) >>> 16 & mask;
    while (keys[h] != 0 && keys[h] != key + 1) {
      h = (h + 1) & mask;
    }
    return h;
  }
}
