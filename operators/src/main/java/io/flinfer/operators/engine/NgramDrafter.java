package io.flinfer.operators.engine;

/**
 * Draft tokens by n-gram lookup in a request's own tokens: the tokens that followed an earlier
 * occurrence of its last {@code n} tokens, for the longest {@code n} in the window that occurred.
 * Text that quotes its prompt (summaries, edits, code, extraction) or repeats itself continues as
 * it did before often enough for a draft to pay.
 */
final class NgramDrafter {
  private NgramDrafter() {}

  /**
   * Writes up to {@code max} draft tokens to {@code out[outOff..]} and returns how many (0: none
   * found).
   *
   * @param tokens the request's tokens so far, {@code tokens[0 .. len)}
   */
  static int draft(
      int[] tokens, int len, int minWindow, int maxWindow, int max, int[] out, int outOff) {
    if (max <= 0) {
      return 0;
    }
    for (int n = Math.min(maxWindow, len - 1); n >= minWindow; n--) {
      int suffix = len - n;
      // The latest occurrence that a whole draft follows: the most recent context predicts best.
      // Failing that, the earliest, which the longest draft follows (in a text repeating a short
      // cycle, the latest occurrence is one cycle back and only that cycle follows it). An
      // occurrence ends before the last token, so at least one token follows it.
      int found = -1;
      for (int at = suffix - 1; at >= 0; at--) {
        if (matches(tokens, at, suffix, n)) {
          found = at;
          if (len - (at + n) >= max) {
            break;
          }
        }
      }
      if (found >= 0) {
        int from = found + n;
        int count = Math.min(max, len - from);
        System.arraycopy(tokens, from, out, outOff, count);
        return count;
      }
    }
    return 0;
  }

  private static boolean matches(int[] tokens, int at, int suffix, int n) {
    // The last token first: most candidates fail there.
    for (int i = n - 1; i >= 0; i--) {
      if (tokens[at + i] != tokens[suffix + i]) {
        return false;
      }
    }
    return true;
  }
}
