package io.flinfer.operators.engine;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.SimpleTokenToKvPoolAllocator;
import io.flinfer.memcache.prefix.PrefixCache;
import io.flinfer.memcache.prefix.RadixCache;
import java.util.ArrayList;
import java.util.List;

/**
 * Decides which waiting requests join the next prefill batch (SGLang's {@code PrefillAdder}). Owns
 * the budgets of one scheduling round: KV tokens (free plus evictable, minus what running requests
 * are expected to decode), prefill tokens, and the chunk size. A request is locked in the cache
 * when added, so allocating for later requests cannot evict its prefix.
 */
final class PrefillAdder {
  /**
   * A request that would compute this many tokens that another request of the same round is
   * computing waits a round and finds them cached instead.
   */
  private static final int IN_BATCH_CHECK = 32;

  private final PrefixCache cache;
  private final int pageSize;
  private final double newTokenRatio;
  private final RadixCache inBatch;
  private long remTotal;
  private int remInput;
  private int remChunk;
  final List<Req> added = new ArrayList<>();
  Req newChunked;

  PrefillAdder(
      PrefixCache cache,
      int pageSize,
      long remTotal,
      int maxPrefillTokens,
      int chunkSize,
      double newTokenRatio,
      boolean dedupeInBatch) {
    this.cache = cache;
    this.pageSize = pageSize;
    this.remTotal = remTotal;
    this.remInput = maxPrefillTokens;
    this.remChunk = chunkSize > 0 ? chunkSize : Integer.MAX_VALUE;
    this.newTokenRatio = newTokenRatio;
    // A scratch tree of this round's uncached prompts: requests that would recompute a prefix
    // another request of the same batch is computing wait a round and find it cached.
    this.inBatch =
        dedupeInBatch
            ? new RadixCache(new ReqToTokenPool(1, 1), new SimpleTokenToKvPoolAllocator(1))
            : null;
  }

  /** Decode tokens a running or admitted request is still expected to need. */
  long reserve(Req r) {
    return (long) Math.ceil((r.effectiveMaxNewTokens - r.outputLen()) * newTokenRatio);
  }

  void reserveRunning(Req r) {
    remTotal -= reserve(r);
  }

  private void remember(Req r) {
    inBatch.insert(r.namespace(), r.tokens, (r.len - 1) / pageSize * pageSize, r.tokens);
  }

  /** Continues the chunked request first: it holds its lock and slot already. */
  void addChunked(Req r) {
    if (inBatch != null) {
      remember(r);
    }
    int remaining = r.len - r.computedLen;
    int extend = Math.min(remaining, remChunk);
    if (extend < remaining) {
      extend = extend / pageSize * pageSize;
    }
    r.extendInputLen = Math.max(extend, Math.min(remaining, pageSize));
    r.chunking = r.computedLen + r.extendInputLen < r.len;
    remChunk -= r.extendInputLen;
    remInput -= r.extendInputLen;
    remTotal -= r.extendInputLen + (r.chunking ? 0 : reserve(r));
    added.add(r);
    if (r.chunking) {
      newChunked = r;
    }
  }

  /** Why {@link #add} did not take a request. */
  enum Result {
    ADDED,
    /** Skipped for now; later requests may still fit. */
    DEFERRED,
    /** Out of budget: stop adding. */
    FULL
  }

  Result add(Req r) {
    if (newChunked != null || remChunk <= 0 || remInput <= 0) {
      return Result.FULL;
    }
    int extend = r.len - r.prefixLen;
    if (extend + reserve(r) > remTotal) {
      return Result.FULL;
    }
    if (extend > remInput && !added.isEmpty()) {
      return Result.FULL;
    }
    if (inBatch != null) {
      // Tokens beyond its own cached prefix that another request of this round computes.
      int shared = inBatch.matchPrefix(r.namespace(), r.tokens, r.len - 1).length();
      if (shared - r.prefixLen >= IN_BATCH_CHECK) {
        return Result.DEFERRED;
      }
      remember(r);
    }
    cache.incLockRef(r.cache.lastNode());
    if (extend <= remChunk) {
      r.extendInputLen = extend;
      r.chunking = false;
      remTotal -= extend + reserve(r);
    } else {
      int chunk = remChunk / pageSize * pageSize;
      if (chunk <= 0) {
        cache.decLockRef(r.cache.lastNode());
        return Result.FULL;
      }
      r.extendInputLen = chunk;
      r.chunking = true;
      newChunked = r;
      remTotal -= chunk;
    }
    remChunk -= r.extendInputLen;
    remInput -= r.extendInputLen;
    added.add(r);
    return Result.ADDED;
  }
}
