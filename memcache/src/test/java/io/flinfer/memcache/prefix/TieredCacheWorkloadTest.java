package io.flinfer.memcache.prefix;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvStoreType;
import io.flinfer.memcache.PagedTokenToKvPoolAllocator;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.SimpleTokenToKvPoolAllocator;
import io.flinfer.memcache.TokenToKvPoolAllocator;
import io.flinfer.memcache.tier.FileKvStorage;
import io.flinfer.memcache.tier.HiCacheConfig;
import io.flinfer.memcache.tier.PageHasher;
import io.flinfer.memcache.tier.WritePolicy;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * Random multi-turn workloads against the radix cache over device, host and storage tiers, with
 * every invariant checked after every step: each device page is free, the tree's or a request's;
 * each host slot is free or one node's; both tiers are closed under parents; no node is left
 * loading; and every slot of every tier holds exactly the KV its prefix was computed with (the KV
 * written for a token is a function of its namespace and all tokens up to it, so a copy that went
 * wrong, or a slot reused while still owned, shows). After the run, a store reopened on the same
 * directory finds exactly the pages the first held, with the same bytes.
 */
class TieredCacheWorkloadTest {
  private static final String[] NAMESPACES = {"", "tenant-a"};
  private static final int WIDTH = 4;
  private static final String SALT = "test-model";

  private static final AtomicLong HOST_HITS = new AtomicLong();
  private static final AtomicLong STORAGE_HITS = new AtomicLong();
  private static final AtomicLong HOST_EVICTIONS = new AtomicLong();

  @AfterContainer
  static void workloadsExercisedEveryTier() {
    assertThat(HOST_HITS.get()).isPositive();
    assertThat(STORAGE_HITS.get()).isPositive();
    assertThat(HOST_EVICTIONS.get()).isPositive();
  }

  @Property(tries = 20)
  void everyTierKeepsEveryInvariant(
      @ForAll("pageSizes") int pageSize,
      @ForAll WritePolicy policy,
      @ForAll boolean withStorage,
      @ForAll @LongRange(min = 1) long seed)
      throws IOException {
    Path dir = Files.createTempDirectory("kv-storage");
    try {
      new Workload(pageSize, policy, withStorage ? dir : null, seed).run(1500);
    } finally {
      deleteTree(dir);
    }
  }

  @Provide
  Arbitrary<Integer> pageSizes() {
    return Arbitraries.of(1, 4);
  }

  /** The KV every slot holding token {@code pos} of a prefix with chain hash {@code h} has. */
  static float[] expectedKv(long h) {
    float[] kv = new float[WIDTH];
    for (int j = 0; j < WIDTH; j++) {
      kv[j] = (float) ((h >>> (8 * j)) & 0xffff);
    }
    return kv;
  }

  /** The chain hash of {@code tokens[0..i]} in {@code namespace}. */
  static long[] prefixHashes(String namespace, int[] tokens, int len) {
    long[] h = new long[len];
    long x = namespace.hashCode() * 0x9E3779B97F4A7C15L;
    for (int i = 0; i < len; i++) {
      x = (x ^ tokens[i]) * 0x100000001B3L;
      x ^= x >>> 31;
      h[i] = x;
    }
    return h;
  }

  private static final class Live {
    final CacheRequest cache;
    final int[] tokens;
    final long[] hashes;
    final int promptLen;
    int computed;

    Live(CacheRequest cache, int[] tokens, int promptLen) {
      this.cache = cache;
      this.tokens = tokens;
      this.hashes = prefixHashes(cache.namespace(), tokens, tokens.length);
      this.promptLen = promptLen;
    }
  }

  private record Finished(String namespace, int[] tokens) {}

  private static final class Workload {
    private final Random rnd;
    private final int pageSize;
    private final ReqToTokenPool reqToToken;
    private final TokenToKvPoolAllocator allocator;
    private final KvPool kv;
    private final HiRadixCache cache;
    private final Path storageDir;
    private final HiCacheConfig config;
    private final List<Live> live = new ArrayList<>();
    private final List<Finished> finished = new ArrayList<>();
    private final int maxContext = 160;
    private String lastOp = "";
    private int checks;

    Workload(int pageSize, WritePolicy policy, Path storageDir, long seed) {
      this.rnd = new Random(seed);
      this.pageSize = pageSize;
      this.storageDir = storageDir;
      this.reqToToken = new ReqToTokenPool(6, maxContext);
      int size = 384;
      this.allocator =
          pageSize == 1
              ? new SimpleTokenToKvPoolAllocator(size)
              : new PagedTokenToKvPoolAllocator(size, pageSize);
      this.kv = new KvPool(size, 1, 1, WIDTH, pageSize, KvStoreType.FP32);
      this.config =
          HiCacheConfig.builder()
              .hostTokens(1024)
              .writePolicy(policy)
              .writeThroughThreshold(1 + rnd.nextInt(2))
              .storageDir(storageDir)
              .storageBytes(1 << 20)
              .storagePageTokens(8)
              .build();
      this.cache = new HiRadixCache(reqToToken, allocator, kv, config, SALT);
    }

    void run(int steps) {
      for (int s = 0; s < steps; s++) {
        int op = rnd.nextInt(100);
        lastOp = "step " + s + " op " + op;
        if (op < 22) {
          arrive();
        } else if (op < 55) {
          extend();
        } else if (op < 80) {
          decode();
        } else if (op < 92) {
          finish();
        } else if (op < 96) {
          cache.evict(1 + rnd.nextInt(64));
        } else {
          HOST_EVICTIONS.addAndGet(cache.evictHost(1 + rnd.nextInt(128)));
        }
        try {
          checkInvariants();
        } catch (RuntimeException | AssertionError e) {
          throw new AssertionError(lastOp, e);
        }
      }
      while (!live.isEmpty()) {
        finishLive(live.get(0));
        checkInvariants();
      }
      HOST_HITS.addAndGet(cache.tierStats().hostHitTokens());
      STORAGE_HITS.addAndGet(cache.tierStats().storageHitTokens());
      cache.evict(Integer.MAX_VALUE);
      cache.evictHost(Integer.MAX_VALUE);
      checkInvariants();
      assertThat(cache.totalSize()).isZero();
      assertThat(cache.hostOnlySize()).isZero();
      assertThat(allocator.availableSize()).isEqualTo(allocator.size());
      assertThat(cache.tierStats().hostUsedTokens()).isZero();
      if (storageDir != null) {
        cache.storage().flush();
        restartFindsWhatWasWritten();
      }
      cache.close();
    }

    /** A conversation's next turn (its earlier tokens and more), or a new one. */
    private void arrive() {
      if (reqToToken.availableSize() == 0) {
        return;
      }
      String ns;
      int[] head;
      if (!finished.isEmpty() && rnd.nextInt(10) < 7) {
        Finished f = finished.get(rnd.nextInt(finished.size()));
        ns = f.namespace();
        head = f.tokens().length < maxContext - 50 ? f.tokens() : new int[0];
      } else {
        ns = NAMESPACES[rnd.nextInt(NAMESPACES.length)];
        head = new int[0];
      }
      int promptLen = head.length + 1 + rnd.nextInt(24);
      int total = promptLen + 1 + rnd.nextInt(16);
      int[] tokens = Arrays.copyOf(head, total);
      for (int i = head.length; i < total; i++) {
        tokens[i] = rnd.nextInt(20);
      }
      CacheRequest req = new CacheRequest(ns);
      cache.matchPrefix(ns, tokens, promptLen - 1);
      long budget = allocator.availableSize() + cache.evictableSize();
      req.setPrefix(cache.loadBack(ns, tokens, promptLen - 1, budget));
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

    /** Allocates {@code n} new tokens' slots for {@code l}, evicting if needed, and "computes". */
    private boolean compute(Live l, int n, boolean decode) {
      int[] prefix = {l.computed};
      int[] seq = {l.computed + n};
      int[] last = {lastLoc(l)};
      int[] out =
          decode ? allocator.allocDecode(seq, last) : allocator.allocExtend(prefix, seq, last);
      if (out == null) {
        cache.evict(allocator.slotsNeededForExtend(l.computed, l.computed + n) + pageSize);
        out = decode ? allocator.allocDecode(seq, last) : allocator.allocExtend(prefix, seq, last);
      }
      if (out == null) {
        return false;
      }
      reqToToken.write(l.cache.reqPoolIdx(), l.computed, out);
      for (int i = 0; i < n; i++) {
        float[] v = expectedKv(l.hashes[l.computed + i]);
        kv.setKv(0, out[i], v, 0, v, 0);
      }
      l.computed += n;
      return true;
    }

    private void extend() {
      Live l = pick(true);
      if (l == null) {
        return;
      }
      int chunk = Math.min(l.promptLen - l.computed, 1 + rnd.nextInt(24));
      if (!compute(l, chunk, false)) {
        finishLive(l);
        return;
      }
      if (l.computed < l.promptLen || rnd.nextBoolean()) {
        cache.cacheUnfinishedReq(l.cache, l.tokens, l.computed);
      }
    }

    private void decode() {
      Live l = pick(false);
      if (l != null && !compute(l, 1, true)) {
        finishLive(l);
      }
    }

    private void finish() {
      if (!live.isEmpty()) {
        finishLive(live.get(rnd.nextInt(live.size())));
      }
    }

    private void finishLive(Live l) {
      cache.cacheFinishedReq(l.cache, l.tokens, l.computed);
      live.remove(l);
      if (l.computed > 0) {
        finished.add(new Finished(l.cache.namespace(), Arrays.copyOf(l.tokens, l.computed)));
      }
    }

    private void checkInvariants() {
      int[] hostSlots = cache.verifyTiers();
      assertThat(hostSlots.length).isEqualTo(cache.tierStats().hostUsedTokens());
      int[] treeSlots = cache.verifyInvariants();
      Set<Integer> treePages = new HashSet<>();
      for (int slot : treeSlots) {
        treePages.add(slot / pageSize);
      }
      int pages = allocator.size() / pageSize;
      int[] owner = new int[pages + 1];
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
          int slot = reqToToken.get(l.cache.reqPoolIdx(), pos);
          assertKv(kv, slot, l.hashes[pos], "request row");
          if (pos >= l.cache.cacheProtectedLen()) {
            own.add(slot / pageSize);
          } else {
            assertThat(owner[slot / pageSize]).isEqualTo(2);
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
      if (++checks % 4 == 0) {
        checkContents(); // the slowest check: every few steps
      }
    }

    /** Every node's device and host slots hold its prefix's KV. */
    private void checkContents() {
      byte[] buf = new byte[cache.hostPool().slotBytes()];
      cache.forEachNode(
          n -> {
            List<TreeNode> path = new ArrayList<>();
            TreeNode root = n;
            for (; root.parent != null; root = root.parent) {
              path.add(0, root);
            }
            int len = 0;
            for (TreeNode t : path) {
              len += t.key.length;
            }
            int[] tokens = new int[len];
            int at = 0;
            for (TreeNode t : path) {
              System.arraycopy(t.key, 0, tokens, at, t.key.length);
              at += t.key.length;
            }
            long[] h = prefixHashes(root.namespace, tokens, len);
            int start = len - n.key.length;
            for (int i = 0; i < n.key.length; i++) {
              if (n.value != null) {
                assertKv(kv, n.value[i], h[start + i], "device slot of node " + n.id);
              }
              if (n.hostValue != null) {
                cache.hostPool().read(n.hostValue, i, 1, buf, 0);
                assertThat(hostFloats(buf))
                    .as("host slot of node %d", n.id)
                    .containsExactly(concat(expectedKv(h[start + i])));
              }
            }
          });
    }

    /**
     * A fresh store on the same directory holds exactly the pages the running one held, and every
     * page of every finished conversation it holds has that prefix's KV.
     */
    private void restartFindsWhatWasWritten() {
      FileKvStorage before = cache.storage();
      int slotBytes = cache.hostPool().slotBytes();
      try (FileKvStorage after =
          new FileKvStorage(storageDir, config.storageBytes(), 8, slotBytes)) {
        assertThat(after.pages()).isEqualTo(before.pages());
        PageHasher hasher = new PageHasher(SALT + "|slot=" + slotBytes, 8);
        int checked = 0;
        for (Finished f : finished) {
          int pages = f.tokens().length / 8;
          String[] names = hasher.names(f.namespace(), f.tokens(), pages);
          long[] h = prefixHashes(f.namespace(), f.tokens(), f.tokens().length);
          for (int p = 0; p < pages; p++) {
            assertThat(after.contains(names[p])).isEqualTo(before.contains(names[p]));
            byte[] page = after.get(names[p], f.tokens(), p * 8);
            if (page != null) {
              checked++;
              for (int i = 0; i < 8; i++) {
                byte[] one = Arrays.copyOfRange(page, i * slotBytes, (i + 1) * slotBytes);
                assertThat(hostFloats(one)).containsExactly(concat(expectedKv(h[p * 8 + i])));
              }
            }
          }
        }
        if (before.pages() > 0) {
          assertThat(checked).isPositive();
        }
      }
    }
  }

  private static float[] concat(float[] kv) {
    float[] both = Arrays.copyOf(kv, 2 * WIDTH);
    System.arraycopy(kv, 0, both, WIDTH, WIDTH);
    return both;
  }

  private static float[] hostFloats(byte[] slot) {
    float[] f = new float[slot.length / 4];
    ByteBuffer.wrap(slot).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f);
    return f;
  }

  private static void assertKv(KvPool kv, int slot, long h, String what) {
    float[] k = new float[WIDTH];
    float[] v = new float[WIDTH];
    kv.readKeys(0, slot, 0, WIDTH, k, 0);
    kv.readValues(0, slot, 0, WIDTH, v, 0);
    assertThat(k).as(what + " " + slot + " keys").containsExactly(expectedKv(h));
    assertThat(v).as(what + " " + slot + " values").containsExactly(expectedKv(h));
  }

  static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
