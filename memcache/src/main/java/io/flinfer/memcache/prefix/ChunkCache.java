package io.flinfer.memcache.prefix;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.TokenToKvPoolAllocator;

/**
 * The prefix cache with the radix cache off: nothing is shared between requests, but the KV of a
 * chunked prefill's finished chunks stays the request's prefix for its next chunk, and all of it is
 * freed when the request finishes.
 */
public final class ChunkCache implements PrefixCache {
  private static final int[] EMPTY = new int[0];

  private final ReqToTokenPool reqToTokenPool;
  private final TokenToKvPoolAllocator allocator;

  public ChunkCache(ReqToTokenPool reqToTokenPool, TokenToKvPoolAllocator allocator) {
    this.reqToTokenPool = reqToTokenPool;
    this.allocator = allocator;
  }

  @Override
  public PrefixMatch matchPrefix(String namespace, int[] key, int len) {
    return new PrefixMatch(EMPTY, null);
  }

  @Override
  public void cacheFinishedReq(CacheRequest req, int[] tokenIds, int committedLen) {
    int[] kv = new int[committedLen];
    reqToTokenPool.read(req.reqPoolIdx, 0, committedLen, kv, 0);
    allocator.free(kv);
    reqToTokenPool.free(req.reqPoolIdx);
    req.reqPoolIdx = -1;
    req.resetPrefix();
  }

  @Override
  public void cacheUnfinishedReq(CacheRequest req, int[] fillIds, int fillLen) {
    int[] kv = new int[fillLen];
    reqToTokenPool.read(req.reqPoolIdx, 0, fillLen, kv, 0);
    req.prefixIndices = kv;
  }

  @Override
  public int evict(int numTokens) {
    return 0;
  }

  @Override
  public void incLockRef(TreeNode node) {}

  @Override
  public void decLockRef(TreeNode node) {}

  @Override
  public int evictableSize() {
    return 0;
  }

  @Override
  public int protectedSize() {
    return 0;
  }
}
