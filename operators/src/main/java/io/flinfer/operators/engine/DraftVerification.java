package io.flinfer.operators.engine;

import io.flinfer.runtime.grammar.OutputConstraint;
import io.flinfer.runtime.grammar.ThoughtBudget;

/**
 * A request's draft in one decode step and what verifying it sampled: the draft tokens lie in the
 * request's token array past its length, the step computes the logits at each, and the request's
 * own sampling picks a token at each draft position in turn, until it picks one that is not the
 * draft's. Reused from step to step: one per request that speculates.
 *
 * <p>It also paces the request's drafts, since a refused draft token costs a token's compute: the
 * longest draft doubles while whole drafts are accepted and falls to one past what was accepted
 * otherwise, and a draft refused at its first token pauses drafting for 1, 2, 4 .. {@link
 * #MAX_PAUSE} decode steps in a row of such refusals. Text that does not repeat then costs a
 * verified token now and then, not one per step.
 */
final class DraftVerification {
  /** The most decode steps a request goes without drafting after refused drafts. */
  static final int MAX_PAUSE = 16;

  private int limit;
  private int pause;
  private int backoff;
  private final int[] tokens = new int[SpeculativeConfig.MAX_DRAFT_TOKENS];
  private final float[] logprobs = new float[SpeculativeConfig.MAX_DRAFT_TOKENS];
  private final int[][] topIds = new int[SpeculativeConfig.MAX_DRAFT_TOKENS][];
  private final float[][] topLogprobs = new float[SpeculativeConfig.MAX_DRAFT_TOKENS][];
  private int drafted;
  private int sampled;
  private boolean rejected;
  private boolean stopped;

  /** The request's format and thought budget after the accepted draft tokens; null: none. */
  OutputConstraint constraint;

  ThoughtBudget budget;

  /** Pacing from drafts of up to {@code limit} tokens. */
  DraftVerification(int limit) {
    this.limit = limit;
  }

  /**
   * The longest draft this step may verify, at most {@code max}; 0 while drafting is paused (the
   * step counts towards the pause).
   */
  int allowance(int max) {
    if (pause > 0) {
      pause--;
      return 0;
    }
    return Math.min(max, limit);
  }

  /** Paces the next drafts after this step's verification. */
  void adapt() {
    int accepted = rejected && !stopped ? sampled - 1 : sampled;
    if (accepted == drafted) {
      limit = Math.min(SpeculativeConfig.MAX_DRAFT_TOKENS, 2 * limit);
      backoff = 0;
    } else if (accepted == 0) {
      backoff = Math.min(MAX_PAUSE, Math.max(1, 2 * backoff));
      pause = backoff;
      limit = 1;
    } else {
      limit = accepted + 1;
      backoff = 0;
    }
  }

  /** A new step that verifies {@code drafted} draft tokens. */
  void start(int drafted) {
    this.drafted = drafted;
    this.sampled = 0;
    this.rejected = false;
    this.stopped = false;
  }

  /**
   * Ends the verification at the next draft position without a token there: no token continues the
   * request's format.
   */
  void stop() {
    rejected = true;
    stopped = true;
  }

  /** Whether the verification stopped where no token continues the format. */
  boolean stopped() {
    return stopped;
  }

  /** Whether the logits at draft position {@code i} are still to be sampled. */
  boolean wants(int i) {
    return !rejected && i == sampled && i < drafted;
  }

  /** The token sampled at the next draft position, where the draft had {@code draftToken}. */
  void record(int token, int draftToken, float logprob, int[] ids, float[] idLogprobs) {
    tokens[sampled] = token;
    logprobs[sampled] = logprob;
    topIds[sampled] = ids;
    topLogprobs[sampled] = idLogprobs;
    sampled++;
    rejected = token != draftToken;
  }

  /**
   * Tokens sampled at draft positions: each draft token accepted, and the first one refused (none
   * where the verification {@link #stopped}).
   */
  int sampled() {
    return sampled;
  }

  /** Whether every draft token was accepted: the step's last row then gives one more token. */
  boolean allAccepted() {
    return sampled == drafted && !rejected;
  }

  int token(int j) {
    return tokens[j];
  }

  float logprob(int j) {
    return logprobs[j];
  }

  int[] topIds(int j) {
    return topIds[j];
  }

  float[] topLogprobs(int j) {
    return topLogprobs[j];
  }
}
