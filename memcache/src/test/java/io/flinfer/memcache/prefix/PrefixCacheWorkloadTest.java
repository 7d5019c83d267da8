package io.flinfer.memcache.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.PagedTokenToKvPoolAllocator;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.SimpleTokenToKvPoolAllocator;
import io.flinfer.memcache.TokenToKvPoolAllocator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * Random serving workloads against the pools and caches, with every invariant checked after every
 * step: each KV slot (page) is in exactly one of {free, held by a live request outside the tree,
 * held by the tree}; the tree's sizes add up and its locks are consistent; nothing is freed twice
 * (the allocators throw); and once everything finished and was evicted, the allocator is full
 * again.
 */
class PrefixCacheWorkloadTest {
  private static final String[] NAMESPACES = {"", "tenant-a", "tenant-b"};

  private static final AtomicLong HIT_TOKENS = new AtomicLong();
  private static final AtomicLong PRESSURE_EVICTIONS = new AtomicLong();
  private static final AtomicLong UNFINISHED_CACHES = new AtomicLong();

  /** Over all tries, the workloads must have shared prefixes, run short of memory and chunked. */
  @AfterContainer
  static void workloadsExercisedTheCache() {
    assertThat(HIT_TOKENS.get()).isPositive();
    assertThat(PRESSURE_EVICTIONS.get()).isPositive();
    assertThat(UNFINISHED_CACHES.get()).isPositive();
  }

  enum Kind {
    RADIX,
    RADIX_DISABLED,
    CHUNK
  }

  @Property(tries = 30)
  void radixCacheKeepsEveryInvariant(
      @ForAll("pageSizes") int pageSize,
      @ForAll @LongRange(min = 1) long seed,
      @ForAll @IntRange(min = 1500, max = 3000) int steps) {
    new Workload(Kind.RADIX, pageSize, seed).run(steps);
  }

  @Property(tries = 10)
  void cachesWithoutATreeKeepEveryInvariant(
      @ForAll("pageSizes") int pageSize,
      @ForAll @LongRange(min = 1) long seed,
      @ForAll boolean chunk) {
    new Workload(chunk ? Kind.CHUNK : Kind.RADIX_DISABLED, pageSize, seed).run(1500);
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<Integer> pageSizes() {
    return net.jqwik.api.Arbitraries.of(1, 4, 16);
  }

  /** One running request as a scheduler would hold it. */
  private static final class Live {
    final CacheRequest cache;
    final int[] tokens;
    final int promptLen;
    int computed;

    Live(CacheRequest cache, int[] tokens, int promptLen) {
      this.cache = cache;
      this.tokens = tokens;
      this.promptLen = promptLen;
    }
  }

  private static final class Workload {
    private final Random rnd;
    private final int pageSize;
    private final ReqToTokenPool reqToToken;
    private final TokenToKvPoolAllocator allocator;
    private final PrefixCache cache;
    private final RadixCache radix;
    private final List<Live> live = new ArrayList<>();
    private final int[][] systemPrompts;
    private final int maxContext = 192;
    private final Kind kind;
    private int hitTokens;
    private int pressureEvictions;
    private int unfinishedCaches;

    Workload(Kind kind, int pageSize, long seed) {
      this.kind = kind;
      this.rnd = new Random(seed);
      this.pageSize = pageSize;
      this.reqToToken = new ReqToTokenPool(8, maxContext);
      this.allocator =
          pageSize == 1
              ? new SimpleTokenToKvPoolAllocator(768)
              : new PagedTokenToKvPoolAllocator(768, pageSize);
      this.radix =
          kind == Kind.CHUNK
              ? null
              : new RadixCache(reqToToken, allocator, kind == Kind.RADIX_DISABLED);
      this.cache = kind == Kind.CHUNK ? new ChunkCache(reqToToken, allocator) : radix;
      this.systemPrompts = new int[4][];
      for (int i = 0; i < systemPrompts.length; i++) {
        systemPrompts[i] = rnd.ints(20 + rnd.nextInt(60), 0, 50).toArray();
      }
    }

    void run(int steps) {
      for (int s = 0; s < steps; s++) {
        int op = rnd.nextInt(100);
        if (op < 25) {
          arrive();
        } else if (op < 55) {
          extend();
        } else if (op < 85) {
          decode();
        } else if (op < 93) {
          finish(false);
        } else if (op < 96) {
          finish(true);
        } else {
          cache.evict(1 + rnd.nextInt(64));
        }
        checkInvariants();
      }
      while (!live.isEmpty()) {
        finish(false);
        checkInvariants();
      }
      cache.evict(Integer.MAX_VALUE);
      if (kind == Kind.RADIX) {
        HIT_TOKENS.addAndGet(hitTokens);
        PRESSURE_EVICTIONS.addAndGet(pressureEvictions);
        UNFINISHED_CACHES.addAndGet(unfinishedCaches);
      }
      assertThat(cache.totalSize()).isZero();
      assertThat(allocator.availableSize()).isEqualTo(allocator.size());
      assertThat(reqToToken.availableSize()).isEqualTo(reqToToken.size());
    }

    private void arrive() {
      if (reqToToken.availableSize() == 0) {
        return;
      }
      int[] sys = systemPrompts[rnd.nextInt(systemPrompts.length)];
      int sysLen = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(sys.length + 1);
      int promptLen = Math.min(maxContext - 40, sysLen + 1 + rnd.nextInt(40));
      int total = promptLen + 1 + rnd.nextInt(30);
      int[] tokens = new int[total];
      System.arraycopy(sys, 0, tokens, 0, Math.min(sysLen, promptLen));
      for (int i = Math.min(sysLen, promptLen); i < total; i++) {
        tokens[i] = rnd.nextInt(50);
      }
      CacheRequest req = new CacheRequest(NAMESPACES[rnd.nextInt(NAMESPACES.length)]);
      // Leave at least one prompt token to compute, as a scheduler does.
      req.setPrefix(cache.matchPrefix(req.namespace(), tokens, promptLen - 1));
      hitTokens += req.prefixIndices().length;
      cache.incLockRef(req.lastNode());
      req.setReqPoolIdx(reqToToken.allocOne());
      reqToToken.write(req.reqPoolIdx(), 0, req.prefixIndices());
      Live l = new Live(req, tokens, promptLen);
      l.computed = req.prefixIndices().length;
      live.add(l);
    }

    private Live pick(boolean prefilling) {
      List<Live> c = new ArrayList<>();
      for (Live l : live) {
        if ((l.computed < l.promptLen) == prefilling && l.computed < l.tokens.length) {
          c.add(l);
        }
      }
      return c.isEmpty() ? null : c.get(rnd.nextInt(c.size()));
    }

    private int lastLoc(Live l) {
      return l.computed == 0 ? -1 : reqToToken.get(l.cache.reqPoolIdx(), l.computed - 1);
    }

    private int[] allocWithEviction(int[] prefix, int[] seq, int[] last, boolean decode) {
      int[] out =
          decode ? allocator.allocDecode(seq, last) : allocator.allocExtend(prefix, seq, last);
      if (out == null) {
        pressureEvictions++;
        cache.evict(allocator.slotsNeededForExtend(prefix[0], seq[0]) + pageSize);
        out = decode ? allocator.allocDecode(seq, last) : allocator.allocExtend(prefix, seq, last);
      }
      return out;
    }

    private void extend() {
      Live l = pick(true);
      if (l == null) {
        return;
      }
      int chunk = Math.min(l.promptLen - l.computed, 1 + rnd.nextInt(24));
      int[] slots =
          allocWithEviction(
              new int[] {l.computed},
              new int[] {l.computed + chunk},
              new int[] {lastLoc(l)},
              false);
      if (slots == null) {
        finishLive(l, true);
        return;
      }
      reqToToken.write(l.cache.reqPoolIdx(), l.computed, slots);
      l.computed += chunk;
      if (l.computed < l.promptLen || rnd.nextBoolean()) {
        cache.cacheUnfinishedReq(l.cache, l.tokens, l.computed);
        unfinishedCaches++;
      }
    }

    private void decode() {
      Live l = pick(false);
      if (l == null) {
        return;
      }
      int[] slot =
          allocWithEviction(
              new int[] {l.computed}, new int[] {l.computed + 1}, new int[] {lastLoc(l)}, true);
      if (slot == null) {
        finishLive(l, true);
        return;
      }
      reqToToken.write(l.cache.reqPoolIdx(), l.computed, slot);
      l.computed++;
    }

    private void finish(boolean abort) {
      if (!live.isEmpty()) {
        finishLive(live.get(rnd.nextInt(live.size())), abort);
      }
    }

    private void finishLive(Live l, boolean abort) {
      // An aborted request hands back what it computed, like a finished one.
      cache.cacheFinishedReq(l.cache, l.tokens, l.computed);
      live.remove(l);
      assertThat(l.cache.reqPoolIdx()).as(abort ? "aborted" : "finished").isEqualTo(-1);
    }

    /** Every page (slot) has exactly one owner, and the tree is consistent. */
    private void checkInvariants() {
      int pages = allocator.size() / pageSize;
      int[] owner = new int[pages + 1]; // 0 none, 1 free, 2 tree, 3 request
      int[] treeSlots = radix != null ? radix.verifyInvariants() : new int[0];
      Set<Integer> treePages = new HashSet<>();
      for (int slot : treeSlots) {
        treePages.add(slot / pageSize);
      }
      if (radix != null) {
        assertThat(treeSlots.length).isEqualTo(radix.totalSize());
        assertThat(Arrays.stream(treeSlots).distinct().count()).isEqualTo(treeSlots.length);
      }
      for (int page = 1; page <= pages; page++) {
        if (allocator.isFree(page * pageSize)) {
          owner[page] = 1;
        }
      }
      for (int page : treePages) {
        assertThat(owner[page]).as("tree page %d is also free", page).isZero();
        owner[page] = 2;
      }
      for (Live l : live) {
        Set<Integer> own = new HashSet<>();
        for (int pos = 0; pos < l.computed; pos++) {
          int page = reqToToken.get(l.cache.reqPoolIdx(), pos) / pageSize;
          if (pos < l.cache.cacheProtectedLen()) {
            assertThat(owner[page])
                .as("protected prefix page %d must be the tree's", page)
                .isEqualTo(2);
          } else {
            own.add(page);
          }
        }
        for (int page : own) {
          assertThat(owner[page]).as("request page %d has another owner", page).isZero();
          owner[page] = 3;
        }
      }
      for (int page = 1; page <= pages; page++) {
        assertThat(owner[page]).as("page %d has no owner (leaked)", page).isNotZero();
      }
    }
  }
}
