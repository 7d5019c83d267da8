package io.flinfer.operators.engine;

/**
 * A request's draft in one decode step and what verifying it sampled: the draft tokens lie in the
 * request's token array past its length, the step computes the logits at each, and the request's
 * own sampling picks a token at each draft position in turn, until it picks one that is not the
 * draft's. Reused from step to step: one per request that speculates.
 */
final class DraftVerification {
  private final int[] tokens = new int[SpeculativeConfig.MAX_DRAFT_TOKENS];
  private final float[] logprobs = new float[SpeculativeConfig.MAX_DRAFT_TOKENS];
  private final int[][] topIds = new int[SpeculativeConfig.MAX_DRAFT_TOKENS][];
  private final float[][] topLogprobs = new float[SpeculativeConfig.MAX_DRAFT_TOKENS][];
  private int drafted;
  private int sampled;
  private boolean rejected;

  /** A new step that verifies {@code drafted} draft tokens. */
  void start(int drafted) {
    this.drafted = drafted;
    this.sampled = 0;
    this.rejected = false;
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

  /** Tokens sampled at draft positions: each draft token accepted, and the first one refused. */
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
