package io.flinfer.memcache.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.SimpleTokenToKvPoolAllocator;
import io.flinfer.memcache.TokenToKvPoolAllocator;
import java.util.Arrays;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RadixCacheTest {
  private static final int A = 10, B = 11, C = 12, D = 13, E = 14, F = 15, G = 16, H = 17;

  private ReqToTokenPool reqToToken;
  private TokenToKvPoolAllocator allocator;
  private RadixCache cache;

  @BeforeEach
  void setUp() {
    reqToToken = new ReqToTokenPool(4, 32);
    allocator = new SimpleTokenToKvPoolAllocator(64);
    cache = new RadixCache(reqToToken, allocator);
  }

  private int[] alloc(int n) {
    return allocator.alloc(n);
  }

  @Test
  void insertOverACachedPrefixAddsOnlyTheNewTailAfterASplit() {
    int[] ab = alloc(2);
    assertThat(cache.insert("", new int[] {A, B}, 2, ab)).isZero();
    int[] abcde = alloc(5);
    assertThat(cache.insert("", new int[] {A, B, C, D, E}, 5, abcde)).isEqualTo(2);
    // The tree keeps its own slots for A, B and the new ones for C, D, E.
    PrefixMatch m = cache.matchPrefix("", new int[] {A, B, C, D, E, F}, 6);
    assertThat(m.indices()).containsExactly(ab[0], ab[1], abcde[2], abcde[3], abcde[4]);
    assertThat(cache.evictableSize()).isEqualTo(5);
    // Matching [A, B, C] splits the [C, D, E] node.
    PrefixMatch abc = cache.matchPrefix("", new int[] {A, B, C}, 3);
    assertThat(abc.indices()).containsExactly(ab[0], ab[1], abcde[2]);
    assertThat(abc.lastNode().length()).isEqualTo(1);
    assertThat(cache.verifyInvariants())
        .containsExactlyInAnyOrder(ab[0], ab[1], abcde[2], abcde[3], abcde[4]);
  }

  @Test
  void finishedRequestFreesSlotsForTokensCachedMeanwhile() {
    // [A, B, C] is cached; a request matches it and computes [D..H] with its own slots.
    int[] abc = alloc(3);
    cache.insert("", new int[] {A, B, C}, 3, abc);
    CacheRequest req = new CacheRequest("");
    int[] tokens = {A, B, C, D, E, F, G, H};
    req.setPrefix(cache.matchPrefix("", tokens, tokens.length));
    cache.incLockRef(req.lastNode());
    req.setReqPoolIdx(reqToToken.allocOne());
    int[] own = alloc(5);
    reqToToken.write(req.reqPoolIdx(), 0, req.prefixIndices());
    reqToToken.write(req.reqPoolIdx(), 3, own);
    assertThat(cache.protectedSize()).isEqualTo(3);

    // Meanwhile another request cached [A, B, C, D, E].
    int[] other = alloc(5);
    int dup = cache.insert("", new int[] {A, B, C, D, E}, 5, other);
    allocator.free(other, 0, dup);
    int freeBefore = allocator.availableSize();

    cache.cacheFinishedReq(req, tokens, tokens.length);
    // Our slots for D and E were duplicates: freed. F, G, H now belong to the tree.
    assertThat(allocator.availableSize()).isEqualTo(freeBefore + 2);
    assertThat(cache.matchPrefix("", tokens, 8).indices())
        .containsExactly(abc[0], abc[1], abc[2], other[3], other[4], own[2], own[3], own[4]);
    assertThat(cache.protectedSize()).isZero();
    assertThat(cache.evictableSize()).isEqualTo(8);
    assertThat(reqToToken.availableSize()).isEqualTo(4);
    cache.verifyInvariants();
  }

  @Test
  void locksProtectFromEvictionAndEvictionIsLeastRecentlyUsedFirst() {
    cache.insert("", new int[] {A, B}, 2, alloc(2));
    cache.insert("", new int[] {C, D}, 2, alloc(2));
    cache.insert("", new int[] {E, F}, 2, alloc(2));
    PrefixMatch cd = cache.matchPrefix("", new int[] {C, D}, 2); // C, D most recent
    cache.matchPrefix("", new int[] {A, B}, 2); // now A, B most recent
    PrefixMatch ef = cache.matchPrefix("", new int[] {E, F}, 2);
    cache.incLockRef(ef.lastNode()); // E, F locked
    assertThat(cache.protectedSize()).isEqualTo(2);
    assertThat(cache.evictableSize()).isEqualTo(4);

    assertThat(cache.evict(1)).isEqualTo(2); // whole leaf [C, D], the least recently used
    assertThat(cache.matchPrefix("", new int[] {C, D}, 2).length()).isZero();
    assertThat(cache.matchPrefix("", new int[] {A, B}, 2).length()).isEqualTo(2);
    assertThat(cache.evict(100)).isEqualTo(2); // only [A, B]: [E, F] is locked
    cache.decLockRef(ef.lastNode());
    assertThat(cache.evict(100)).isEqualTo(2);
    assertThat(allocator.availableSize()).isEqualTo(64);
    assertThat(cache.totalSize()).isZero();
    cache.verifyInvariants();
  }

  @Test
  void parentsBecomeEvictableWhenTheirChildrenAreGone() {
    int[] s = alloc(4);
    cache.insert("", new int[] {A, B, C, D}, 4, s);
    cache.insert("", new int[] {A, B, E, F}, 4, new int[] {s[0], s[1], alloc(1)[0], alloc(1)[0]});
    assertThat(cache.evict(6)).isEqualTo(6);
    assertThat(cache.totalSize()).isZero();
    assertThat(allocator.availableSize()).isEqualTo(64);
  }

  @Test
  void namespacesNeverShareAPrefix() {
    int[] s = alloc(3);
    cache.insert("tenant-a", new int[] {A, B, C}, 3, s);
    assertThat(cache.matchPrefix("tenant-b", new int[] {A, B, C}, 3).length()).isZero();
    assertThat(cache.matchPrefix("", new int[] {A, B, C}, 3).length()).isZero();
    assertThat(cache.matchPrefix("tenant-a", new int[] {A, B, C}, 3).indices()).containsExactly(s);
    int[] t = alloc(3);
    assertThat(cache.insert("tenant-b", new int[] {A, B, C}, 3, t)).isZero();
    assertThat(cache.matchPrefix("tenant-b", new int[] {A, B}, 2).indices())
        .containsExactly(t[0], t[1]);
    assertThat(cache.namespaces()).contains("tenant-a", "tenant-b");
  }

  @Test
  void unfinishedRequestKeepsItsChunksAsAPrefixAndPointsItsRowAtTheTree() {
    int[] shared = alloc(2);
    cache.insert("", new int[] {A, B}, 2, shared);
    CacheRequest req = new CacheRequest("");
    int[] tokens = {A, B, C, D, E, F};
    req.setReqPoolIdx(reqToToken.allocOne());
    // First chunk computed [A, B, C, D] with its own slots (it had matched nothing).
    int[] chunk = alloc(4);
    reqToToken.write(req.reqPoolIdx(), 0, chunk);
    cache.cacheUnfinishedReq(req, tokens, 4);
    // A and B were cached already: the request's row now points at the tree's slots.
    assertThat(req.prefixIndices()).containsExactly(shared[0], shared[1], chunk[2], chunk[3]);
    assertThat(reqToToken.get(req.reqPoolIdx(), 0)).isEqualTo(shared[0]);
    assertThat(req.cacheProtectedLen()).isEqualTo(4);
    assertThat(cache.protectedSize()).isEqualTo(4);
    // Second chunk and the end.
    int[] rest = alloc(2);
    reqToToken.write(req.reqPoolIdx(), 4, rest);
    cache.cacheFinishedReq(req, tokens, 6);
    assertThat(cache.protectedSize()).isZero();
    assertThat(cache.evictableSize()).isEqualTo(6);
    assertThat(allocator.availableSize() + cache.totalSize()).isEqualTo(64);
    cache.verifyInvariants();
  }

  @Test
  void disabledCacheFreesEverythingAtOnce() {
    RadixCache off = new RadixCache(reqToToken, allocator, true);
    CacheRequest req = new CacheRequest("");
    req.setReqPoolIdx(reqToToken.allocOne());
    reqToToken.write(req.reqPoolIdx(), 0, alloc(5));
    assertThat(off.matchPrefix("", new int[] {A, B}, 2).length()).isZero();
    off.cacheFinishedReq(req, new int[] {A, B, C, D, E}, 5);
    assertThat(allocator.availableSize()).isEqualTo(64);
    assertThat(off.totalSize()).isZero();
    assertThat(reqToToken.availableSize()).isEqualTo(4);
  }

  @Test
  void chunkCacheKeepsChunksForTheRequestAloneAndFreesThemAtTheEnd() {
    ChunkCache chunks = new ChunkCache(reqToToken, allocator);
    CacheRequest req = new CacheRequest("");
    req.setReqPoolIdx(reqToToken.allocOne());
    int[] first = alloc(3);
    reqToToken.write(req.reqPoolIdx(), 0, first);
    chunks.cacheUnfinishedReq(req, new int[] {A, B, C}, 3);
    assertThat(req.prefixIndices()).containsExactly(first);
    assertThat(chunks.matchPrefix("", new int[] {A, B, C}, 3).length()).isZero();
    reqToToken.write(req.reqPoolIdx(), 3, alloc(2));
    chunks.cacheFinishedReq(req, new int[] {A, B, C, D, E}, 5);
    assertThat(allocator.availableSize()).isEqualTo(64);
  }

  @Test
  void pagedKeysMatchInWholePages() {
    ReqToTokenPool rt = new ReqToTokenPool(2, 32);
    io.flinfer.memcache.PagedTokenToKvPoolAllocator paged =
        new io.flinfer.memcache.PagedTokenToKvPoolAllocator(64, 4);
    RadixCache pc = new RadixCache(rt, paged);
    int[] key = {1, 2, 3, 4, 5, 6, 7, 8};
    int[] slots = paged.alloc(8);
    pc.insert("", key, 8, slots);
    // 7 tokens match one whole page only; a different second page matches the first.
    assertThat(pc.matchPrefix("", key, 7).indices()).containsExactly(Arrays.copyOf(slots, 4));
    assertThat(pc.matchPrefix("", new int[] {1, 2, 3, 4, 5, 6, 0, 8}, 8).indices())
        .containsExactly(Arrays.copyOf(slots, 4));
    assertThat(pc.matchPrefix("", new int[] {1, 2, 3, 9}, 4).length()).isZero();
    pc.verifyInvariants();
    assertThat(pc.evict(100)).isEqualTo(8);
    assertThat(paged.availableSize()).isEqualTo(64);
  }

  /**
   * A namespace whose tree was evicted empty is forgotten: with a tenant per end user, the map of
   * roots must not grow forever. Before the fix roots were never pruned.
   */
  @Test
  void aNamespaceWhoseTreeIsEmptyIsForgotten() {
    for (int user = 0; user < 5; user++) {
      cache.insert("user-" + user, new int[] {A, B, C}, 3, alloc(3));
    }
    assertThat(cache.namespaces()).hasSize(5);
    cache.evict(Integer.MAX_VALUE);
    assertThat(cache.namespaces()).isEmpty();
    assertThat(allocator.availableSize()).isEqualTo(64);
    // A namespace used again gets a fresh tree.
    cache.insert("user-1", new int[] {A, B}, 2, alloc(2));
    assertThat(cache.matchPrefix("user-1", new int[] {A, B, C}, 3).length()).isEqualTo(2);
    cache.verifyInvariants();
  }

  /**
   * Only a request's own lookups count as hits of a node: before the fix, the match that {@code
   * cacheUnfinishedReq} makes internally after inserting counted as another hit.
   */
  @Test
  void cachingAnUnfinishedRequestIsNoHit() {
    CacheRequest req = new CacheRequest("");
    PrefixMatch none = cache.matchPrefix("", new int[] {A, B, C, D}, 3);
    req.setPrefix(none);
    req.setReqPoolIdx(reqToToken.allocOne());
    int[] slots = alloc(4);
    reqToToken.write(req.reqPoolIdx(), 0, slots);
    cache.incLockRef(req.lastNode());
    cache.cacheUnfinishedReq(req, new int[] {A, B, C, D}, 4);
    assertThat(req.lastNode().hitCount()).isZero();
    assertThat(cache.matchPrefix("", new int[] {A, B, C, D, E}, 4).lastNode().hitCount())
        .isEqualTo(1);
  }
}
