package io.flinfer.operators.engine;

/**
 * Draft tokens by n-gram lookup: the tokens that followed an earlier occurrence of a request's last
 * {@code n} tokens, for the longest {@code n} in the window that occurred, in its own tokens first
 * and else in its namespace's finished answers ({@link NgramIndex}). Text that quotes its prompt
 * (summaries, edits, code, extraction), repeats itself, or follows the template of earlier answers
 * continues as it did before often enough for a draft to pay.
 */
final class NgramDrafter {
  private NgramDrafter() {}

  /**
   * Writes up to {@code max} draft tokens after {@code tokens[0 .. len)}, at {@code tokens[len..]}
   * (which has room for them), and returns how many (0: none found).
   */
  static int draft(
      int[] tokens,
      int len,
      String namespace,
      NgramIndex answers,
      int minWindow,
      int maxWindow,
      int max) {
    for (int n = maxWindow; n >= minWindow; n--) {
      int count = draft(tokens, len, n, max, tokens, len);
      if (count == 0) {
        count = answers.draft(namespace, n, tokens, len, max, tokens, len);
      }
      if (count > 0) {
        return count;
      }
    }
    return 0;
  }

  /**
   * Writes up to {@code max} tokens that followed an earlier occurrence, in {@code tokens[0 ..
   * len)} itself, of its last {@code n} tokens to {@code out[outOff..]}, and returns how many (0:
   * none occurred). Out may be {@code tokens} from {@code len} on.
   */
  static int draft(int[] tokens, int len, int n, int max, int[] out, int outOff) {
    if (max <= 0 || n > len - 1) {
      return 0;
    }
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
    if (found < 0) {
      return 0;
    }
    int from = found + n;
    int count = Math.min(max, len - from);
    System.arraycopy(tokens, from, out, outOff, count);
    return count;
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
