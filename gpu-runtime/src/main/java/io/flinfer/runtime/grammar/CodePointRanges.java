package io.flinfer.runtime.grammar;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/** Sets of code points as sorted, disjoint {@code [lo, hi]} pairs in one int array. */
final class CodePointRanges {
  private CodePointRanges() {}

  /** The union of {@code ranges}, each {@code {lo, hi}}. */
  static int[] union(List<int[]> ranges) {
    int[][] sorted = ranges.toArray(int[][]::new);
    Arrays.sort(sorted, Comparator.comparingInt(r -> r[0]));
    int[] out = new int[2 * sorted.length];
    int n = 0;
    for (int[] r : sorted) {
      if (n > 0 && r[0] <= out[n - 1] + 1) {
        out[n - 1] = Math.max(out[n - 1], r[1]);
      } else {
        out[n++] = r[0];
        out[n++] = r[1];
      }
    }
    return Arrays.copyOf(out, n);
  }

  /** The code points outside {@code set}, surrogates left out (no character is one). */
  static int[] complement(int[] set) {
    int[] out = new int[set.length + 2];
    int n = 0;
    int next = 0;
    for (int k = 0; k < set.length; k += 2) {
      if (set[k] > next) {
        out[n++] = next;
        out[n++] = set[k] - 1;
      }
      next = set[k + 1] + 1;
    }
    if (next <= Character.MAX_CODE_POINT) {
      out[n++] = next;
      out[n++] = Character.MAX_CODE_POINT;
    }
    return Arrays.copyOf(out, n);
  }

  /** Whether {@code set} holds a code point from {@code lo} to {@code hi}. */
  static boolean intersects(int[] set, int lo, int hi) {
    // The first pair whose end is at least lo.
    int a = 0;
    int b = set.length / 2;
    while (a < b) {
      int m = (a + b) >>> 1;
      if (set[2 * m + 1] < lo) {
        a = m + 1;
      } else {
        b = m;
      }
    }
    return a < set.length / 2 && set[2 * a] <= hi;
  }
}
