package io.flinfer.operators.flink;

import java.io.Serializable;

/** What each inference subtask runs: the model, the engine's limits and the backend. */
public record InferenceSettings(
    ModelSource model,
    int maxRunningRequests,
    int maxTotalTokens,
    int chunkedPrefillSize,
    int threads,
    String backend)
    implements Serializable {}
