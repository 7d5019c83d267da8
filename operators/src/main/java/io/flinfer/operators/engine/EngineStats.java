package io.flinfer.operators.engine;

import io.flinfer.memcache.tier.TierStats;

/**
 * A snapshot of the engine: queues, KV memory (in tokens), cache effectiveness and work done.
 *
 * @param cacheHitTokens prompt tokens taken from the prefix cache at admission, over all time
 * @param prefillTokens tokens computed by extend steps (the cache's savings are not in it)
 * @param decodeTokens tokens computed by decode steps, draft tokens included
 * @param schedulerNanos time in the engine outside forward passes
 * @param lastBatchSize requests in the last forward step
 * @param evictedTokens cached tokens evicted to make room, over all time
 * @param pressure how hard the pool is pressed now
 * @param tiers the host and storage tiers ({@link TierStats#NONE} without them)
 * @param draftTokens draft tokens decode steps verified, over all time (in {@code decodeTokens})
 * @param acceptedDraftTokens tokens verified steps gave beyond one per request, over all time
 */
public record EngineStats(
    int runningRequests,
    int waitingRequests,
    int kvTotalTokens,
    int kvUsedTokens,
    int kvEvictableTokens,
    int kvProtectedTokens,
    int kvFreeTokens,
    long cacheHitTokens,
    long retractions,
    long prefillTokens,
    long decodeTokens,
    long steps,
    long forwardNanos,
    long schedulerNanos,
    double newTokenRatio,
    int lastBatchSize,
    long evictedTokens,
    MemoryPressure pressure,
    TierStats tiers,
    long draftTokens,
    long acceptedDraftTokens) {

  /** Accepted draft tokens over those verified; 0 before any. */
  public double draftAcceptanceRate() {
    return draftTokens == 0 ? 0 : (double) acceptedDraftTokens / draftTokens;
  }
}
