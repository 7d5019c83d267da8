package io.flinfer.operators.engine;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.SimpleTokenToKvPoolAllocator;
import io.flinfer.memcache.TokenToKvPoolAllocator;
import io.flinfer.memcache.prefix.PrefixCache;
import io.flinfer.memcache.prefix.RadixCache;
import java.util.ArrayList;
import java.util.List;

/**
 * Decides which waiting requests join the next prefill batch (SGLang's {@code PrefillAdder}). Owns
 * the budgets of one scheduling round: KV tokens, prefill tokens, and the chunk size.
 *
 * <p>The KV budget is read live: free plus evictable tokens, less what this round has promised
 * (each running request's expected decode tokens, each admitted request's extend and output). A
 * candidate's prefix is locked before the check, so the tokens the lock takes out of the evictable
 * count are not counted twice: whatever is admitted can be allocated by evicting unlocked cache
 * alone, and admission never needs to retract a running request.
 */
final class PrefillAdder {
  /**
   * The most output tokens a request is expected to need, however large its limit (SGLang's {@code
   * CLIP_MAX_NEW_TOKENS}): beyond this the scheduler would be needlessly conservative. It caps the
   * estimate only, never the request.
   */
  static final int CLIP_MAX_NEW_TOKENS = 4096;

  /**
   * A request that would compute this many tokens that another request of the same round is
   * computing waits a round and finds them cached instead.
   */
  private static final int IN_BATCH_CHECK = 32;

  private final PrefixCache cache;
  private final TokenToKvPoolAllocator allocator;
  private final int pageSize;
  private final double newTokenRatio;
  private final RadixCache inBatch;
  private long promised;
  private int remInput;
  private int remChunk;
  final List<Req> added = new ArrayList<>();
  Req newChunked;

  PrefillAdder(
      PrefixCache cache,
      TokenToKvPoolAllocator allocator,
      int maxPrefillTokens,
      int chunkSize,
      double newTokenRatio,
      boolean dedupeInBatch) {
    this.cache = cache;
    this.allocator = allocator;
    this.pageSize = allocator.pageSize();
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

  /** KV tokens the round can still promise, read now. */
  long remTotal() {
    return (long) allocator.availableSize() + cache.evictableSize() - promised;
  }

  /** Output tokens a request may still produce, capped for the estimate. */
  private static long outputLeft(Req r) {
    return Math.min(Math.max(0, r.effectiveMaxNewTokens - r.outputLen()), CLIP_MAX_NEW_TOKENS);
  }

  /** A running request: the share of its remaining output it is expected to still need. */
  long runningReserve(Req r) {
    return (long) Math.ceil(outputLeft(r) * newTokenRatio);
  }

  void reserveRunning(Req r) {
    promised += runningReserve(r);
  }

  private void remember(Req r) {
    inBatch.insert(r.namespace(), r.tokens, (r.len - 1) / pageSize * pageSize, r.tokens);
  }

  /** KV slots an extend of {@code r} from {@code from} to {@code to} tokens takes. */
  private int slots(int from, int to) {
    return allocator.slotsNeededForExtend(from, to);
  }

  /**
   * Continues the chunked request first: it holds its lock and slot already. Its next chunk is cut
   * to the chunk size and to the KV budget; returns false (it waits this round) when the budget
   * allows none of it.
   */
  boolean addChunked(Req r) {
    if (inBatch != null) {
      remember(r);
    }
    int remaining = r.len - r.computedLen;
    long budget = Math.min(remChunk, remTotal());
    int extend = (int) Math.min(remaining, budget);
    if (extend < remaining) {
      extend = extend / pageSize * pageSize;
    }
    if (extend <= 0) {
      return false;
    }
    boolean last = extend == remaining;
    if (last && slots(r.computedLen, r.len) + outputLeft(r) > remTotal()) {
      // The last chunk would leave no room for its output: one page fewer now.
      extend = (remaining - 1) / pageSize * pageSize;
      if (extend <= 0) {
        return false;
      }
      last = false;
    }
    r.extendInputLen = extend;
    r.chunking = !last;
    remChunk -= extend;
    remInput -= extend;
    promised += slots(r.computedLen, r.computedLen + extend) + (last ? outputLeft(r) : 0);
    added.add(r);
    if (r.chunking) {
      newChunked = r;
    }
    return true;
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
    long whole = slots(r.prefixLen, r.len) + outputLeft(r);
    if (whole > remTotal() && extend <= remChunk) {
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
    }
    // Locking takes the prefix out of the evictable tokens the budget counts: check again under
    // the lock, which stays if the request is admitted.
    cache.incLockRef(r.cache.lastNode());
    if (extend <= remChunk) {
      if (whole > remTotal()) {
        cache.decLockRef(r.cache.lastNode());
        return Result.FULL;
      }
      r.extendInputLen = extend;
      r.chunking = false;
      promised += whole;
    } else {
      long budget = Math.min(remChunk, remTotal());
      int chunk = (int) (budget / pageSize * pageSize);
      if (chunk <= 0) {
        cache.decLockRef(r.cache.lastNode());
        return Result.FULL;
      }
      r.extendInputLen = chunk;
      r.chunking = true;
      newChunked = r;
      promised += slots(r.prefixLen, r.prefixLen + chunk);
    }
    if (inBatch != null) {
      remember(r);
    }
    remChunk -= r.extendInputLen;
    remInput -= r.extendInputLen;
    added.add(r);
    return Result.ADDED;
  }
}
