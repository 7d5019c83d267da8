package io.flinfer.runtime.sampling;

import io.flinfer.runtime.grammar.JsonVocabulary;
import io.flinfer.runtime.grammar.OutputConstraint;
import io.flinfer.runtime.grammar.OutputState;
import io.flinfer.runtime.grammar.Thinking;
import io.flinfer.runtime.grammar.ThoughtBudget;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.util.Arrays;

/**
 * The allowed-token masks of one model's requests whose choice of token is restricted (a response
 * format, or tokens still below min_tokens): the vocabulary's table for JSON, built at the first
 * request with a format (a large vocabulary takes a moment), and one mask that each such request
 * fills in turn right before its token is chosen. Not thread-safe: one per engine or generator.
 */
public final class TokenMasks {
  /** A closed thought's end as the templates write it. */
  private static final String CLOSE_THOUGHT = "\n</think>\n\n";

  private final Tokenizer tokenizer;
  private final int vocab;
  private final long[] mask;
  private JsonVocabulary json;
  private int[] closeThought;

  /** For a model of {@code vocab} tokens whose text {@code tokenizer} gives. */
  public TokenMasks(Tokenizer tokenizer, int vocab) {
    this.tokenizer = tokenizer;
    this.vocab = vocab;
    // Covers the model's rows and the tokenizer's entries, whichever are more.
    this.mask = new long[JsonVocabulary.words(Math.max(vocab, tokenizer.vocabSize()))];
  }

  /** A new constraint for a request sampled with {@code p}, or null for free text. */
  public OutputConstraint constraint(SamplingParams p) {
    OutputState shape = p.outputShape();
    if (shape == null) {
      return null;
    }
    return new OutputConstraint(vocabulary(), shape);
  }

  /**
   * A new cap on the thought of a request sampled with {@code p}, or null where it has none (no
   * budget, or an output that does not think).
   */
  public ThoughtBudget budget(SamplingParams p) {
    if (p.thinkingBudget() == SamplingParams.NO_THINKING_BUDGET || p.thinking() == Thinking.NONE) {
      return null;
    }
    if (closeThought == null) {
      closeThought = tokenizer.encode(CLOSE_THOUGHT, false, true);
    }
    return new ThoughtBudget(vocabulary(), p.thinking(), p.thinkingBudget(), closeThought);
  }

  private JsonVocabulary vocabulary() {
    if (json == null) {
      json = JsonVocabulary.of(tokenizer);
    }
    return json;
  }

  /**
   * The tokens a request may choose as its token number {@code index}, in the shared mask (valid
   * until the next call); null when it may choose any. A spent {@code budget} (null: none) leaves
   * only the token that closes the thought; else {@code constraint} (null: none) restricts them to
   * its format (and where the format may end there, {@code endTokens} and {@code stopTokens}, the
   * tokens that would end the request, too); below {@code p}'s min_tokens those are out. The mask
   * may allow nothing ({@link #isEmpty}).
   */
  public long[] allowed(
      SamplingParams p,
      OutputConstraint constraint,
      ThoughtBudget budget,
      long index,
      int[] endTokens,
      int[] stopTokens) {
    int forced = budget == null ? -1 : budget.forced();
    if (forced >= 0) {
      Arrays.fill(mask, 0L);
      mask[forced >>> 6] = 1L << forced;
      return mask;
    }
    boolean early = index < p.minTokens();
    if (constraint == null && !early) {
      return null;
    }
    if (constraint != null) {
      constraint.allowed(mask);
      if (!early && constraint.mayEnd()) {
        set(endTokens);
        set(stopTokens);
      }
    } else {
      Arrays.fill(mask, -1L);
      if (vocab % 64 != 0) {
        mask[vocab >>> 6] = (1L << vocab) - 1; // no rows past the model's
      }
      Arrays.fill(mask, JsonVocabulary.words(vocab), mask.length, 0L);
    }
    if (early) {
      for (int t : endTokens) {
        mask[t >>> 6] &= ~(1L << t);
      }
      for (int t : stopTokens) {
        mask[t >>> 6] &= ~(1L << t);
      }
    }
    return mask;
  }

  private void set(int[] tokens) {
    for (int t : tokens) {
      mask[t >>> 6] |= 1L << t;
    }
  }

  /** Whether {@code mask} allows no token at all. */
  public static boolean isEmpty(long[] mask) {
    for (long w : mask) {
      if (w != 0) {
        return false;
      }
    }
    return true;
  }
}
