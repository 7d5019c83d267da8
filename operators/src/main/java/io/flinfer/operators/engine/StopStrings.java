package io.flinfer.operators.engine;

/**
 * Matches a request's stop strings in the text of its output: each token's text is appended to a
 * window that keeps only the tail a stop string could still end in. A restored request rebuilds the
 * window by feeding its generated tokens again, so a stop string that straddles a checkpoint is
 * still found.
 */
final class StopStrings {
  private StopStrings() {}

  /** Appends {@code token}'s text; returns the stop string the text now contains, or null. */
  static String feed(Req r, int token) {
    r.text.append(r.decoder.next(token));
    int longest = 0;
    for (String s : r.stopStrings()) {
      if (r.text.indexOf(s) >= 0) {
        return s;
      }
      longest = Math.max(longest, s.length());
    }
    if (r.text.length() > 4 * longest) {
      r.text.delete(0, r.text.length() - (longest - 1));
    }
    return null;
  }
}
