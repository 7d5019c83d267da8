package io.flinfer.runtime.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The merge loop both BPE flavours share: adjacent symbols of a string are merged, the pair of
 * lowest rank first and the leftmost on ties, until no adjacent pair has a rank. A priority queue
 * with stale-entry checks keeps it O(n log n), so a long word costs no more per character than a
 * short one.
 */
final class PairMerger {
  /** The rank of merging {@code left} and {@code right} (lower merges first), or NaN for none. */
  interface Rank {
    double of(String left, String right);
  }

  private record Pair(int left, int right, double rank, int size) {}

  private PairMerger() {}

  /**
   * The symbols {@code s} ends as, in order, starting from code points ({@code codePoints}) or from
   * single chars.
   */
  static List<String> merge(String s, boolean codePoints, Rank rank) {
    int n = s.length();
    int[] start = new int[n];
    int[] len = new int[n];
    int count = 0;
    for (int i = 0; i < n; ) {
      int l = codePoints ? Character.charCount(s.codePointAt(i)) : 1;
      start[count] = i;
      len[count] = l;
      count++;
      i += l;
    }
    int[] prev = new int[count];
    int[] next = new int[count];
    for (int i = 0; i < count; i++) {
      prev[i] = i - 1;
      next[i] = i + 1 < count ? i + 1 : -1;
    }
    PriorityQueue<Pair> queue =
        new PriorityQueue<>(
            (a, b) ->
                a.rank != b.rank
                    ? Double.compare(a.rank, b.rank)
                    : Integer.compare(a.left, b.left));
    for (int i = 0; i + 1 < count; i++) {
      offer(s, start, len, i, i + 1, rank, queue);
    }
    while (!queue.isEmpty()) {
      Pair p = queue.poll();
      if (len[p.left] == 0 || len[p.right] == 0 || len[p.left] + len[p.right] != p.size) {
        continue; // stale: one side has merged since
      }
      len[p.left] += len[p.right];
      len[p.right] = 0;
      next[p.left] = next[p.right];
      if (next[p.right] >= 0) {
        prev[next[p.right]] = p.left;
      }
      if (prev[p.left] >= 0) {
        offer(s, start, len, prev[p.left], p.left, rank, queue);
      }
      if (next[p.left] >= 0) {
        offer(s, start, len, p.left, next[p.left], rank, queue);
      }
    }
    List<String> out = new ArrayList<>();
    for (int i = 0; i >= 0 && count > 0; i = next[i]) {
      out.add(s.substring(start[i], start[i] + len[i]));
    }
    return out;
  }

  private static void offer(
      String s, int[] start, int[] len, int left, int right, Rank rank, PriorityQueue<Pair> q) {
    double r =
        rank.of(
            s.substring(start[left], start[left] + len[left]),
            s.substring(start[right], start[right] + len[right]));
    if (!Double.isNaN(r)) {
      q.add(new Pair(left, right, r, len[left] + len[right]));
    }
  }
}
