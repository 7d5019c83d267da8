package io.flinfer.memcache.prefix;

/**
 * Decides which tokens' K/V are kept after a request has used them, and finds them again for later
 * requests (SGLang's {@code BasePrefixCache}). Implementations: {@link RadixCache} and, with the
 * radix cache off, {@link ChunkCache}.
 *
 * <p>The lifecycle of a request: {@link #matchPrefix} when it waits; {@link #incLockRef} on its
 * last node when it is admitted; {@link #cacheUnfinishedReq} after each prefill chunk; {@link
 * #cacheFinishedReq} when it ends, which releases its request slot and its lock.
 */
public interface PrefixCache {

  /** The tiers below the device pool; {@link io.flinfer.memcache.tier.TierStats#NONE} without. */
  default io.flinfer.memcache.tier.TierStats tierStats() {
    return io.flinfer.memcache.tier.TierStats.NONE;
  }

  /** The longest cached prefix of {@code key[0..len)} in {@code namespace}. */
  PrefixMatch matchPrefix(String namespace, int[] key, int len);

  /**
   * Hands a finished request's KV to the cache: {@code tokenIds[0..committedLen)} are the tokens
   * whose K/V its row holds. Frees what the cache does not keep, the request slot, and the
   * request's lock.
   */
  void cacheFinishedReq(CacheRequest req, int[] tokenIds, int committedLen);

  /**
   * Caches the K/V of {@code fillIds[0..fillLen)} of a running request (after a prefill chunk), so
   * its finished chunks become its prefix and can be shared.
   */
  void cacheUnfinishedReq(CacheRequest req, int[] fillIds, int fillLen);

  /**
   * Frees at least {@code numTokens} cached tokens if that many are evictable; returns how many.
   */
  int evict(int numTokens);

  /** Tokens of the last leaf the last {@link #evict} freed: it stops as soon as it has enough. */
  default int lastEvictedLength() {
    return 0;
  }

  void incLockRef(TreeNode node);

  void decLockRef(TreeNode node);

  /** Cached tokens no running request holds: free for the taking. */
  int evictableSize();

  /** Cached tokens some running request holds. */
  int protectedSize();

  default int totalSize() {
    return evictableSize() + protectedSize();
  }
}
