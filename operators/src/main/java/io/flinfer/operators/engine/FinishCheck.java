package io.flinfer.operators.engine;

/**
 * Whether a request is done after it sampled a token: the end of the JSON object its format asks
 * for (or of its regular expression's match, where nothing may follow), one of the model's end
 * tokens (unless ignored), one of its stop tokens, one of its stop strings in the text decoded so
 * far, or its token limit. Below its min_tokens, end and stop tokens are never chosen and stop
 * strings do not count.
 */
final class FinishCheck {
  private FinishCheck() {}

  /** The reason {@code r} finishes with {@code token} (already appended), or null. */
  static FinishReason after(Req r, int token, int[] endTokens) {
    if (r.constraint != null && r.constraint.isComplete()) {
      return FinishReason.stop(r.params().responseFormat().completeDetail());
    }
    if (!r.ignoreEos()) {
      for (int e : endTokens) {
        if (token == e) {
          return FinishReason.stop("eos");
        }
      }
    }
    if (r.isStopToken(token)) {
      return FinishReason.stop("token " + token);
    }
    if (r.text != null) {
      String stop = StopStrings.feed(r, token, r.outputLen());
      if (stop != null) {
        return FinishReason.stop(stop);
      }
    }
    if (r.outputLen() >= r.effectiveMaxNewTokens) {
      return FinishReason.length(r.outputLen() >= r.maxNewTokens() ? "max_new_tokens" : "context");
    }
    return null;
  }
}
