package io.flinfer.operators.engine;

/**
 * Matches a request's stop strings in the text of its output: each token's text is appended to a
 * window that keeps only the tail a stop string could still end in. A restored request rebuilds the
 * window by feeding its generated tokens again, so a stop string that straddles a checkpoint is
 * still found.
 */
final class StopStrings {
  private StopStrings() {}

  /**
   * Appends {@code token}'s text, the request's output being {@code produced} tokens long with it;
   * returns the stop string the text now contains, or null. Below the request's min_tokens a stop
   * string does not stop it: the text up to its end is dropped, so that only a later one can.
   */
  static String feed(Req r, int token, int produced) {
    r.text.append(r.decoder.next(token));
    int longest = 0;
    for (String s : r.stopStrings()) {
      int at = r.text.indexOf(s);
      if (at >= 0) {
        if (produced >= r.params().minTokens()) {
          return s;
        }
        r.text.delete(0, at + s.length());
      }
      longest = Math.max(longest, s.length());
    }
    if (r.text.length() > 4 * longest) {
      r.text.delete(0, r.text.length() - (longest - 1));
    }
    return null;
  }
}
