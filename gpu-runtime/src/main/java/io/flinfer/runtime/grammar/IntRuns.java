package io.flinfer.runtime.grammar;

import java.util.Arrays;

/**
 * Runs of ints, each kept once and named by an int in the order first seen: a grammar state's set
 * of stacks, a JSON object's state. Kept in one array with an open-addressed table over them, so
 * naming a run allocates nothing once the arrays have grown. Not thread-safe: one request's states
 * share it.
 */
final class IntRuns {
  private final int most;
  // Run k is runs[start[k] .. start[k + 1]).
  private int[] runs = new int[1024];
  private int[] start = new int[257];
  private int count;
  private int[] slots = new int[512]; // run + 1 by hash, open addressing; 0 is free

  /** Names at most {@code most} runs. */
  IntRuns(int most) {
    this.most = most;
  }

  /** The number of the run {@code run[0 .. length)}, named once; -1 past the most named. */
  int of(int[] run, int length) {
    int mask = slots.length - 1;
    int slot = hash(run, 0, length) & mask;
    for (; slots[slot] != 0; slot = (slot + 1) & mask) {
      int s = slots[slot] - 1;
      if (Arrays.equals(runs, start[s], start[s + 1], run, 0, length)) {
        return s;
      }
    }
    if (count == most) {
      return -1;
    }
    if (count + 2 > start.length) {
      start = Arrays.copyOf(start, 2 * start.length);
    }
    int from = start[count];
    if (from + length > runs.length) {
      runs = Arrays.copyOf(runs, Math.max(2 * runs.length, from + length));
    }
    System.arraycopy(run, 0, runs, from, length);
    start[count + 1] = from + length;
    slots[slot] = ++count;
    if (2 * count > slots.length) {
      int[] old = slots;
      slots = new int[2 * old.length];
      int m = slots.length - 1;
      for (int id : old) {
        if (id != 0) {
          int sl = hash(runs, start[id - 1], start[id]) & m;
          while (slots[sl] != 0) {
            sl = (sl + 1) & m;
          }
          slots[sl] = id;
        }
      }
    }
    return count - 1;
  }

  private static int hash(int[] a, int from, int to) {
    int h = 1;
    for (int k = from; k < to; k++) {
      h = 31 * h + a[k];
    }
    return (h * 0x9E3779B9) >>> 8;
  }
}
