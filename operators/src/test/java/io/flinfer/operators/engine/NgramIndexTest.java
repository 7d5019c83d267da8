package io.flinfer.operators.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class NgramIndexTest {

  /** The draft from the longest window whose suffix occurred in the namespace's answers. */
  private static int[] draft(NgramIndex index, String ns, int max, int... tokens) {
    int[] out = new int[max];
    for (int w = 8; w >= 1; w--) { // the index answers only within its windows
      int n = index.draft(ns, w, tokens, tokens.length, max, out, 0);
      if (n > 0) {
        return Arrays.copyOf(out, n);
      }
    }
    return new int[0];
  }

  @Test
  void draftsWhatFollowedTheLatestOccurrenceInTheNamespacesOutputs() {
    NgramIndex index = new NgramIndex(1, 3, 64, 16);
    index.add("a", new int[] {9, 1, 2, 3, 4, 5}, 1, 6);
    assertThat(draft(index, "a", 8, 7, 2, 3)).containsExactly(4, 5);
    assertThat(draft(index, "a", 1, 7, 2, 3)).containsExactly(4);
    assertThat(draft(index, "b", 8, 7, 2, 3)).as("another namespace's outputs").isEmpty();
    // A later output with the same n-gram: its continuation; a draft stops where an output ends.
    index.add("a", new int[] {2, 3, 6}, 0, 3);
    assertThat(draft(index, "a", 8, 2, 3)).containsExactly(6);
    // The longest suffix that occurred wins: "1 2 3" only in the first output.
    assertThat(draft(index, "a", 8, 1, 2, 3)).containsExactly(4, 5);
    assertThat(draft(index, "a", 8, 8, 8)).isEmpty();
    // The last token of an output has nothing after it.
    assertThat(draft(index, "a", 8, 6)).isEmpty();
  }

  @Test
  void overwrittenTokensAreNotDraftedFrom() {
    NgramIndex index = new NgramIndex(1, 2, 16, 16);
    index.add("a", new int[] {1, 2, 3, 4, 5, 6, 7}, 0, 7);
    assertThat(draft(index, "a", 8, 1, 2)).containsExactly(3, 4, 5, 6, 7);
    index.add("a", new int[] {10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 0, 10);
    assertThat(draft(index, "a", 8, 1, 2)).as("the first output is overwritten").isEmpty();
    assertThat(draft(index, "a", 8, 5)).as("in part").containsExactly(6, 7);
    assertThat(draft(index, "a", 3, 12)).containsExactly(13, 14, 15);
  }

  /**
   * Against a plain search of the live tokens (a table large enough that no n-gram is lost): the
   * longest suffix in the window that occurred in the namespace's outputs with a token after it,
   * its latest occurrence, and what followed it up to the end of that output.
   */
  @Property(tries = 300)
  void draftsWhatAPlainSearchOfTheLiveOutputsFinds(
      @ForAll @Size(min = 1, max = 12)
          List<@Size(max = 12) List<@IntRange(min = 0, max = 3) Integer>> outputs,
      @ForAll @Size(min = 1, max = 6) List<@IntRange(min = 0, max = 3) Integer> text,
      @ForAll @IntRange(min = 1, max = 3) int minWindow,
      @ForAll @IntRange(min = 0, max = 2) int extraWindow,
      @ForAll @IntRange(min = 1, max = 6) int max) {
    int maxWindow = minWindow + extraWindow;
    int capacity = 32;
    NgramIndex index = new NgramIndex(minWindow, maxWindow, capacity, 1 << 12);
    // The ring as written: a separator before each output (of two tokens or more), and owners.
    List<Integer> ring = new ArrayList<>();
    List<String> owners = new ArrayList<>();
    for (int i = 0; i < outputs.size(); i++) {
      int[] out = outputs.get(i).stream().mapToInt(Integer::intValue).toArray();
      String ns = i % 3 == 0 ? "b" : "a";
      index.add(ns, out, 0, out.length);
      if (out.length >= 2) {
        ring.add(-1);
        owners.add(ns);
        for (int t : out) {
          ring.add(t);
          owners.add(ns);
        }
      }
    }
    int[] tokens = text.stream().mapToInt(Integer::intValue).toArray();
    int len = tokens.length;
    int live = Math.max(0, ring.size() - capacity);
    int[] expected = new int[0];
    search:
    for (int n = Math.min(maxWindow, len); n >= minWindow; n--) {
      for (int end = ring.size() - 1; end - n >= live; end--) {
        boolean match = owners.get(end - 1).equals("a") && ring.get(end) != -1;
        for (int i = 0; i < n && match; i++) {
          match = ring.get(end - n + i) == tokens[len - n + i];
        }
        if (match) {
          List<Integer> follow = new ArrayList<>();
          for (int p = end; p < ring.size() && ring.get(p) != -1 && follow.size() < max; p++) {
            follow.add(ring.get(p));
          }
          expected = follow.stream().mapToInt(Integer::intValue).toArray();
          break search;
        }
      }
    }
    assertThat(draft(index, "a", max, tokens)).isEqualTo(expected);
  }
}
