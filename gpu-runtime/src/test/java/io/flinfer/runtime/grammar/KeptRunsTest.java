package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Kept runs come back as kept, per pattern object and state, and only the most recently used. */
class KeptRunsTest {
  @Test
  void theMostRecentlyUsedAreKept() {
    KeptRuns kept = new KeptRuns();
    StringPattern p = pattern("^[a-c]+$");
    StringPattern q = pattern("^[a-c]+x$");
    long[] mask = {5L, 7L, 9L};
    kept.keep(p, 0, false, mask, 2, 3);
    long[] out = new long[3];
    assertThat(kept.copy(p, 0, false, out, 2)).isEqualTo(3);
    assertThat(out).containsExactly(5L, 7L, 0L);
    assertThat(kept.copy(p, 1, false, out, 2)).isEqualTo(-1);
    assertThat(kept.copy(q, 0, false, out, 2)).isEqualTo(-1);
    // A regex output's tokens are kept apart from a JSON string's runs.
    assertThat(kept.copy(p, 0, true, out, 2)).isEqualTo(-1);
    // A copy of the mask is kept: changing it after changes nothing kept.
    mask[0] = 1L;
    kept.copy(p, 0, false, out, 2);
    assertThat(out[0]).isEqualTo(5L);
    for (int s = 1; s < KeptRuns.KEPT; s++) {
      kept.keep(q, s, false, mask, 2, s);
    }
    kept.copy(p, 0, false, out, 2); // used last: the eldest is now (q, 1)
    kept.keep(q, KeptRuns.KEPT, false, mask, 2, 0);
    assertThat(kept.copy(p, 0, false, out, 2)).isEqualTo(3);
    assertThat(kept.copy(q, 1, false, out, 2)).isEqualTo(-1);
    assertThat(kept.copy(q, 2, false, out, 2)).isEqualTo(2);
  }

  private static StringPattern pattern(String regex) {
    return StringPattern.of(List.of(StringPattern.Part.of(regex, null, 0, Integer.MAX_VALUE)));
  }
}
