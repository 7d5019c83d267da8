package io.flinfer.operators.engine;

import io.flinfer.runtime.sampling.Sampler;

/**
 * A request's prompt log-probabilities as its prefill computes them, position after position. Kept
 * across its chunks and retractions: the prefix it matches in the cache stops at the first position
 * still to score ({@link #next}), as positions served from the cache have no logits.
 */
final class PromptScores {
  private final int start;
  private final int top;
  private final float[] logprobs;
  private final int[] ranks;
  private final int[] topIds;
  private final float[] topLogprobs;
  private int next;

  /** Scores from position {@code start} (0: from the second prompt token on). */
  PromptScores(int promptLen, int top, int start) {
    this.start = start;
    this.top = top;
    this.next = start;
    int n = Math.max(0, promptLen - 1 - start);
    this.logprobs = new float[n];
    this.ranks = new int[n];
    this.topIds = new int[n * top];
    this.topLogprobs = new float[n * top];
  }

  /** The first position whose logits are still needed (position p's give prompt token p + 1). */
  int next() {
    return next;
  }

  boolean done() {
    return next == start + logprobs.length;
  }

  /**
   * Scores prompt token {@code target} from the logits at {@code position}. A position already
   * scored (computed again after a page-aligned match) is skipped: it has the same bits.
   */
  void score(Sampler sampler, int position, int target, float[] row, int off) {
    if (position < next || position >= start + logprobs.length) {
      return;
    }
    if (position > next) {
      throw new IllegalStateException("position " + position + " scored before " + next);
    }
    int at = position - start;
    logprobs[at] = sampler.score(row, off, target, top);
    ranks[at] = sampler.lastRank();
    // As many as asked: finite logits over a vocabulary larger than 20 have them.
    for (int i = 0; i < sampler.lastTopCount(); i++) {
      topIds[at * top + i] = sampler.lastTopId(i);
      topLogprobs[at * top + i] = sampler.lastTopLogprob(i);
    }
    next++;
  }

  PromptLogprobs result() {
    if (!done()) {
      throw new IllegalStateException(
          "prompt scored up to " + next + " of " + (start + logprobs.length));
    }
    return new PromptLogprobs(start, logprobs, ranks, top, topIds, topLogprobs);
  }
}
