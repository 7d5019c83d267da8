package io.flinfer.operators.flink;

import io.flinfer.operators.engine.EngineConfig;
import java.io.Serializable;

/**
 * What each inference subtask runs: the model, its engine's settings, the backend, and how often a
 * request's held tokens are sent on ({@link PendingOutputs}; 0: every token at once).
 */
public record InferenceSettings(
    ModelSource model, EngineConfig engine, String backend, long streamIntervalMillis)
    implements Serializable {

  /** An engine with these limits and the other settings at their defaults. */
  public InferenceSettings(
      ModelSource model,
      int maxRunningRequests,
      int maxTotalTokens,
      int chunkedPrefillSize,
      int threads,
      String backend,
      long streamIntervalMillis) {
    this(
        model,
        EngineConfig.builder()
            .maxRunningRequests(maxRunningRequests)
            .maxTotalTokens(maxTotalTokens)
            .chunkedPrefillSize(chunkedPrefillSize)
            .threads(threads)
            .build(),
        backend,
        streamIntervalMillis);
  }
}
