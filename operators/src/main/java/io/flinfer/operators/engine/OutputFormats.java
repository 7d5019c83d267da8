package io.flinfer.operators.engine;

import io.flinfer.runtime.grammar.JsonConstraint;
import io.flinfer.runtime.grammar.JsonVocabulary;
import io.flinfer.runtime.grammar.OutputState;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.tokenizer.Tokenizer;

/**
 * What the engine keeps for requests whose choice of token is restricted (a response format, or
 * min_tokens): the vocabulary's table for JSON, built at the first such request (a large vocabulary
 * takes a moment), and one mask that each such request fills in turn right before its token is
 * chosen.
 */
final class OutputFormats {
  private final Tokenizer tokenizer;
  private final int vocab;
  private final long[] mask;
  private JsonVocabulary json;

  /** For a model of {@code vocab} tokens whose text {@code tokenizer} gives. */
  OutputFormats(Tokenizer tokenizer, int vocab) {
    this.tokenizer = tokenizer;
    this.vocab = vocab;
    this.mask = new long[JsonVocabulary.words(Math.max(vocab, tokenizer.vocabSize()))];
  }

  /** A new constraint for a request sampled with {@code p}, or null for free text. */
  JsonConstraint constraint(SamplingParams p) {
    OutputState shape = p.outputShape();
    if (shape == null) {
      return null;
    }
    if (json == null) {
      json = JsonVocabulary.of(tokenizer);
    }
    return new JsonConstraint(json, shape);
  }

  /**
   * The tokens {@code r} may choose as its token number {@code index}, in the shared mask; null
   * when it may choose any. Below its min_tokens, {@code endTokens} and its stop tokens are out.
   */
  long[] allowed(Req r, int index, int[] endTokens) {
    boolean early = index < r.params().minTokens();
    if (r.constraint == null && !early) {
      return null;
    }
    if (r.constraint != null) {
      r.constraint.allowed(mask);
    } else {
      java.util.Arrays.fill(mask, 0L);
      for (int t = 0; t < vocab; t++) {
        mask[t >>> 6] |= 1L << t;
      }
    }
    if (early) {
      for (int t : endTokens) {
        mask[t >>> 6] &= ~(1L << t);
      }
      for (int t : r.stopTokenIds()) {
        mask[t >>> 6] &= ~(1L << t);
      }
    }
    return mask;
  }

  /** Whether {@code mask} allows no token at all. */
  static boolean isEmpty(long[] mask) {
    for (long w : mask) {
      if (w != 0) {
        return false;
      }
    }
    return true;
  }
}
