package io.flinfer.job.bench;

import io.flinfer.memcache.PagedTokenToKvPoolAllocator;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.SimpleTokenToKvPoolAllocator;
import io.flinfer.memcache.TokenToKvPoolAllocator;
import io.flinfer.memcache.prefix.RadixCache;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The radix cache on a serving workload: 10,000 requests whose prompts start with one of 20 system
 * prompts of 1,000 to 2,000 tokens, each with its own 50 to 200 token tail. Counters give matched
 * tokens, newly inserted tokens and evictions per second.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
public class RadixCacheBenchmark {
  public static final int REQUESTS = 10_000;
  static final int FRESH = 20_000;

  @Param({"1", "16"})
  public int pageSize;

  private int[][] requests;
  private int[][] fresh;
  private int[] freshSystemLen;
  private int unique = 1_000_000;
  private RadixCache cache;
  private TokenToKvPoolAllocator allocator;
  private int next;
  private int nextFresh;

  /** Per-second counts that JMH reports beside the call rate. */
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  @State(Scope.Thread)
  public static class Tokens {
    public long matchedTokens;
    public long insertedTokens;
    public long evictedTokens;
    public long evictions;

    @Setup(Level.Iteration)
    public void clear() {
      matchedTokens = 0;
      insertedTokens = 0;
      evictedTokens = 0;
      evictions = 0;
    }
  }

  @Setup(Level.Trial)
  public void makeWorkload() {
    Random rnd = new Random(42);
    int[][] system = new int[20][];
    for (int i = 0; i < system.length; i++) {
      system[i] = rnd.ints(1000 + rnd.nextInt(1001), 0, 32000).toArray();
    }
    requests = new int[REQUESTS][];
    for (int r = 0; r < REQUESTS; r++) {
      requests[r] = withTail(system[rnd.nextInt(system.length)], 50 + rnd.nextInt(151), rnd);
    }
    fresh = new int[FRESH][];
    freshSystemLen = new int[FRESH];
    for (int r = 0; r < FRESH; r++) {
      int[] sys = system[rnd.nextInt(system.length)];
      fresh[r] = withTail(sys, 50 + rnd.nextInt(151), rnd);
      freshSystemLen[r] = sys.length / pageSize * pageSize;
    }
  }

  private int[] withTail(int[] system, int tail, Random rnd) {
    int len = (system.length + tail) / pageSize * pageSize;
    int[] p = java.util.Arrays.copyOf(system, len);
    for (int i = system.length; i < len; i++) {
      p[i] = rnd.nextInt(32000);
    }
    return p;
  }

  /** A tree holding every request, with slots from a real allocator. */
  @Setup(Level.Iteration)
  public void fillTree() {
    int capacity = 20 * 2000 + REQUESTS * 208 + 4096;
    allocator =
        pageSize == 1
            ? new SimpleTokenToKvPoolAllocator(capacity)
            : new PagedTokenToKvPoolAllocator(capacity, pageSize);
    cache = new RadixCache(new ReqToTokenPool(1, 1), allocator);
    for (int[] r : requests) {
      insertWithSlots(r);
    }
    next = 0;
    nextFresh = 0;
  }

  private int insertWithSlots(int[] key) {
    int[] slots = allocator.alloc(key.length);
    int present = cache.insert("", key, key.length, slots);
    allocator.free(slots, 0, present);
    return key.length - present;
  }

  @Benchmark
  public int matchPrefix(Tokens t) {
    int[] r = requests[next];
    next = (next + 1) % REQUESTS;
    int n = cache.matchPrefix("", r, r.length).length();
    t.matchedTokens += n;
    return n;
  }

  /** The next prepared request, its tail made new so that every insert adds tokens. */
  private int[] nextFresh() {
    int[] r = fresh[nextFresh];
    r[freshSystemLen[nextFresh]] = unique++;
    nextFresh = (nextFresh + 1) % FRESH;
    return r;
  }

  @Benchmark
  public int insert(Tokens t) {
    int[] r = nextFresh();
    // Slot values are not freed in this benchmark, so the token ids serve as values.
    int added = cache.insert("", r, r.length, r);
    t.insertedTokens += r.length - added;
    return added;
  }

  /** One request's worth of pressure: a new request comes in, the LRU tail goes out. */
  @Benchmark
  public int insertThenEvict(Tokens t) {
    int[] r = nextFresh();
    int added = insertWithSlots(r);
    int evicted = cache.evict(Math.max(1, added));
    t.evictedTokens += evicted;
    t.evictions++;
    return evicted;
  }
}
