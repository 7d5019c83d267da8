package io.flinfer.operators.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class NgramDrafterTest {
  private static final int NO_TOKEN = -1;

  /** The draft after {@code tokens} from its windows, in its own text and then {@code answers}. */
  private static int[] draft(
      int[] tokens, NgramIndex answers, int minWindow, int maxWindow, int max) {
    int[] room = Arrays.copyOf(tokens, tokens.length + max);
    int n = NgramDrafter.draft(room, tokens.length, "t", answers, minWindow, maxWindow, max);
    return Arrays.copyOfRange(room, tokens.length, tokens.length + n);
  }

  private static int[] draft(int[] tokens, int minWindow, int maxWindow, int max) {
    return draft(tokens, new NgramIndex(1, 8, 16, 4), minWindow, maxWindow, max);
  }

  @Test
  void draftsWhatFollowedTheLatestOccurrenceOfTheLongestSuffixThatAWholeDraftFollows() {
    //            0  1  2  3  4  5  6  7  8  9
    int[] tokens = {5, 6, 7, 1, 5, 6, 8, 2, 5, 6};
    // "5 6" last occurred at 4: then 8 2 5 6.
    assertThat(draft(tokens, 1, 4, 3)).containsExactly(8, 2, 5);
    // "7 1 5 6" is longer but never occurred; a window of 1 finds "6" at 5.
    assertThat(draft(tokens, 1, 1, 2)).containsExactly(8, 2);
    // The draft stops at the last token.
    assertThat(draft(new int[] {3, 4, 3}, 1, 2, 8)).containsExactly(4, 3);
    // Where no occurrence is followed by a whole draft, the earliest: the longest draft.
    int[] cycle = {9, 1, 2, 1, 2, 1, 2};
    assertThat(draft(cycle, 1, 2, 8)).containsExactly(1, 2, 1, 2);
    // Two tokens follow the latest "1 2" (at 3): enough for a draft of two.
    assertThat(draft(cycle, 1, 2, 2)).containsExactly(1, 2);
    assertThat(draft(new int[] {1, 2, 3}, 1, 3, 8)).isEmpty();
    assertThat(draft(tokens, 3, 4, 8)).isEmpty();
  }

  @Test
  void theLongestSuffixWinsWhereverItOccurredAndTheOwnTextAtEqualLength() {
    NgramIndex answers = new NgramIndex(1, 4, 64, 16);
    answers.add("t", new int[] {9, 7, 5, 8, 8}, 0, 5);
    answers.add("other", new int[] {6, 7, 5, 3, 3}, 0, 5);
    // "7 5" occurred in an answer only; "5" occurred in the text itself.
    assertThat(draft(new int[] {5, 6, 7, 5}, answers, 1, 4, 3)).containsExactly(8, 8);
    // "5" alone: the text's own occurrence first.
    assertThat(draft(new int[] {5, 6, 7, 5}, answers, 1, 1, 3)).containsExactly(6, 7, 5);
    // Only the request's namespace's answers: "6 7 5" is another tenant's.
    assertThat(draft(new int[] {1, 6, 7, 5}, answers, 3, 4, 3)).isEmpty();
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
    int[] room = Arrays.copyOf(tokens, len + max + 1);
    Arrays.fill(room, len, room.length, NO_TOKEN);
    int n =
        NgramDrafter.draft(room, len, "t", new NgramIndex(1, 8, 16, 4), minWindow, maxWindow, max);
    assertThat(Arrays.copyOf(room, len)).as("the text is left alone").isEqualTo(tokens);
    assertThat(room[len + n]).as("nothing past the draft").isEqualTo(NO_TOKEN);
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
    assertThat(Arrays.copyOfRange(room, len, len + n))
        .isEqualTo(Arrays.copyOfRange(tokens, at + longest, at + longest + n));
  }
}
