package io.flinfer.operators.engine;

/**
 * Whether a request is done after it sampled a token: end of sequence (unless ignored), one of its
 * stop tokens, one of its stop strings in the text decoded so far, or its token limit.
 */
final class FinishCheck {
  private FinishCheck() {}

  /** The reason {@code r} finishes with {@code token} (already appended), or null. */
  static FinishReason after(Req r, int token, int eosId) {
    if (!r.ignoreEos() && token == eosId) {
      return FinishReason.stop("eos");
    }
    if (r.isStopToken(token)) {
      return FinishReason.stop("token " + token);
    }
    if (r.text != null) {
      r.text.append(r.decoder.next(token));
      int longest = 0;
      for (String s : r.stopStrings()) {
        if (r.text.indexOf(s) >= 0) {
          return FinishReason.stop(s);
        }
        longest = Math.max(longest, s.length());
      }
      // Keep only a tail that a stop string could still end in.
      if (r.text.length() > 4 * longest) {
        r.text.delete(0, r.text.length() - (longest - 1));
      }
    }
    if (r.outputLen() >= r.effectiveMaxNewTokens) {
      return FinishReason.length(r.outputLen() >= r.maxNewTokens() ? "max_new_tokens" : "context");
    }
    return null;
  }
}
