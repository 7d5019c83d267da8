package io.flinfer.runtime.grammar;

import java.util.Arrays;

/**
 * The stacks of one request's grammar states, each made once and named by an int: a stack is a
 * position in the grammar (the element it reads next) over the stack it returns to. A state is then
 * a small set of ints, copied without allocating, however deep its stacks. Stack 0 is the empty one
 * that has read the whole root. Not thread-safe: one request's states share it.
 */
final class GbnfStacks {
  /** The stack below the root's: returning to it ends the output. */
  static final int BOTTOM = -1;

  /** Stack 0: nothing left to read. */
  static final int DONE = 0;

  /** The deepest a stack may grow (nesting), and the most stacks a request may make. */
  static final int MAX_DEPTH = 1_024;

  static final int MAX_STACKS = 1 << 20;

  private int[] position = new int[1024];
  private int[] below = new int[1024];
  private int[] depth = new int[1024];
  private int size = 1;

  // (position, below) -> stack + 1, open addressing; 0 is free.
  private long[] keys = new long[2048];
  private int[] values = new int[2048];

  GbnfStacks() {
    position[DONE] = -1;
    below[DONE] = BOTTOM;
  }

  int position(int stack) {
    return position[stack];
  }

  int below(int stack) {
    return below[stack];
  }

  /** The stack reading {@code pos} over {@code under}; -1 past the limits. */
  int of(int pos, int under) {
    long key = (long) pos << 32 | (under & 0xffffffffL);
    int mask = keys.length - 1;
    int h = Long.hashCode(key * 0x9E3779B97F4A7C15L) & mask;
    while (values[h] != 0) {
      if (keys[h] == key) {
        return values[h] - 1;
      }
      h = (h + 1) & mask;
    }
    int d = under == BOTTOM ? 1 : depth[under] + 1;
    if (d > MAX_DEPTH || size == MAX_STACKS) {
      return -1;
    }
    if (size == position.length) {
      position = Arrays.copyOf(position, 2 * size);
      below = Arrays.copyOf(below, 2 * size);
      depth = Arrays.copyOf(depth, 2 * size);
    }
    int id = size++;
    position[id] = pos;
    below[id] = under;
    depth[id] = d;
    keys[h] = key;
    values[h] = id + 1;
    if (2 * size > keys.length) {
      rehash();
    }
    return id;
  }

  /** The most sets of stacks a request names. */
  static final int MAX_SETS = 1 << 16;

  // Sets of stacks, sorted, each made once.
  private final IntRuns sets = new IntRuns(MAX_SETS);

  /**
   * The number of the set {@code tops[0 .. count)} (sorted, distinct), made once: states with the
   * same set take the same tokens next. -1 past {@link #MAX_SETS}.
   */
  int setOf(int[] tops, int count) {
    return sets.of(tops, count);
  }

  private void rehash() {
    long[] oldKeys = keys;
    int[] oldValues = values;
    keys = new long[2 * oldKeys.length];
    values = new int[2 * oldValues.length];
    int mask = keys.length - 1;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldValues[i] != 0) {
        int h = Long.hashCode(oldKeys[i] * 0x9E3779B97F4A7C15L) & mask;
        while (values[h] != 0) {
          h = (h + 1) & mask;
        }
        keys[h] = oldKeys[i];
        values[h] = oldValues[i];
      }
    }
  }
}
