package io.flinfer.operators.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class NgramDrafterTest {

  @Test
  void draftsWhatFollowedTheLatestOccurrenceOfTheLongestSuffixThatAWholeDraftFollows() {
    //            0  1  2  3  4  5  6  7  8  9
    int[] tokens = {5, 6, 7, 1, 5, 6, 8, 2, 5, 6};
    int[] out = new int[8];
    // "5 6" last occurred at 4: then 8 2 5 6.
    assertThat(NgramDrafter.draft(tokens, tokens.length, 1, 4, 3, out, 0)).isEqualTo(3);
    assertThat(Arrays.copyOf(out, 3)).containsExactly(8, 2, 5);
    // "7 1 5 6" is longer but never occurred; a window of 1 finds "6" at 5.
    assertThat(NgramDrafter.draft(tokens, tokens.length, 1, 1, 2, out, 0)).isEqualTo(2);
    assertThat(Arrays.copyOf(out, 2)).containsExactly(8, 2);
    // The draft stops at the last token.
    assertThat(NgramDrafter.draft(new int[] {3, 4, 3}, 3, 1, 2, 8, out, 0)).isEqualTo(2);
    assertThat(Arrays.copyOf(out, 2)).containsExactly(4, 3);
    // Where no occurrence is followed by a whole draft, the earliest: the longest draft.
    int[] cycle = {9, 1, 2, 1, 2, 1, 2};
    assertThat(NgramDrafter.draft(cycle, cycle.length, 1, 2, 8, out, 0)).isEqualTo(4);
    assertThat(Arrays.copyOf(out, 4)).containsExactly(1, 2, 1, 2);
    // Two tokens follow the latest "1 2" (at 3): enough for a draft of two.
    assertThat(NgramDrafter.draft(cycle, cycle.length, 1, 2, 2, out, 0)).isEqualTo(2);
    assertThat(NgramDrafter.draft(new int[] {1, 2, 3}, 3, 1, 3, 8, out, 0)).isZero();
    assertThat(NgramDrafter.draft(tokens, tokens.length, 3, 4, 8, out, 0)).isZero();
  }

  @Property(tries = 500)
  void aDraftContinuesTheChosenOccurrenceOfTheLongestMatchingSuffix(
      @ForAll @Size(min = 1, max = 60) int[] raw,
      @ForAll @IntRange(min = 1, max = 4) int minWindow,
      @ForAll @IntRange(min = 0, max = 4) int extraWindow,
      @ForAll @IntRange(min = 1, max = 10) int max) {
    int[] tokens = Arrays.stream(raw).map(t -> Math.floorMod(t, 4)).toArray(); // repeats often
    int len = tokens.length;
    int maxWindow = minWindow + extraWindow;
    int[] out = new int[max + 2];
    Arrays.fill(out, -1);
    int n = NgramDrafter.draft(tokens, len, minWindow, maxWindow, max, out, 1);
    assertThat(out[0]).as("nothing before the offset").isEqualTo(-1);
    assertThat(out[n + 1]).as("nothing past the draft").isEqualTo(-1);
    assertThat(n).isBetween(0, max);
    // The longest window that occurred; its latest occurrence a whole draft follows, else its
    // earliest.
    int longest = 0;
    int at = -1;
    for (int w = Math.min(maxWindow, len - 1); w >= minWindow && longest == 0; w--) {
      int latestWhole = -1;
      int earliest = -1;
      for (int j = len - w - 1; j >= 0; j--) {
        if (Arrays.equals(tokens, j, j + w, tokens, len - w, len)) {
          earliest = j;
          if (latestWhole < 0 && len - (j + w) >= max) {
            latestWhole = j;
          }
        }
      }
      if (earliest >= 0) {
        longest = w;
        at = latestWhole >= 0 ? latestWhole : earliest;
      }
    }
    if (longest == 0) {
      assertThat(n).isZero();
      return;
    }
    assertThat(n).isEqualTo(Math.min(max, len - (at + longest)));
    assertThat(Arrays.copyOfRange(out, 1, 1 + n))
        .isEqualTo(Arrays.copyOfRange(tokens, at + longest, at + longest + n));
  }
}
