package io.flinfer.operators.flink;

import java.io.Serializable;

/**
 * What each inference subtask runs: the model, the engine's limits, the backend, and how often a
 * request's held tokens are sent on ({@link PendingOutputs}; 0: every token at once).
 */
public record InferenceSettings(
    ModelSource model,
    int maxRunningRequests,
    int maxTotalTokens,
    int chunkedPrefillSize,
    int threads,
    String backend,
    long streamIntervalMillis)
    implements Serializable {}
