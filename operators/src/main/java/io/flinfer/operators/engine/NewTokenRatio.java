package io.flinfer.operators.engine;

import java.util.List;

/**
 * SGLang's {@code new_token_ratio}: the share of its remaining output tokens a running request is
 * expected to still need, which admission reserves for each running request. It starts at the
 * configured value and decays step by step towards the minimum while decoding goes well; a
 * retraction raises it to what the running requests have actually used so far.
 */
final class NewTokenRatio {
  /** Decode steps of headroom assumed for each running request after a retraction. */
  private static final int RETRACT_DECODE_STEPS = 20;

  private final double min;
  private final double decay;
  private double value;

  NewTokenRatio(EngineConfig config) {
    this.min = config.minNewTokenRatio();
    this.decay =
        (config.initNewTokenRatio() - config.minNewTokenRatio()) / config.newTokenRatioDecaySteps();
    this.value = config.initNewTokenRatio();
  }

  double value() {
    return value;
  }

  /** After a decode step was scheduled without retraction. */
  void decay() {
    value = Math.max(min, value - decay);
  }

  /** After requests were retracted: outputs so far plus some steps, over their output budgets. */
  void afterRetraction(List<Req> running) {
    long decoded = 0;
    long max = 0;
    for (Req r : running) {
      decoded += r.outputLen();
      max += r.effectiveMaxNewTokens;
    }
    value =
        Math.min(
            1.0, (decoded + (double) RETRACT_DECODE_STEPS * running.size()) / Math.max(1, max));
  }
}
