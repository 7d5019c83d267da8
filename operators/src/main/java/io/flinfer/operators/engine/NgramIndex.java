package io.flinfer.operators.engine;

import java.util.HashMap;
import java.util.Map;

/**
 * The outputs of recently finished requests, indexed by their n-grams, as drafts for requests whose
 * own text has no match: answers that follow one template (a JSON object's keys, a report's
 * headings) repeat across requests more than within one. SGLang's n-gram cache, for linear drafts.
 *
 * <p>Bounded: a ring of the last {@code capacity} tokens, and a table of four-way buckets from an
 * n-gram's hash to the position after its latest occurrence, each hit checked against the ring.
 * Each namespace drafts from its own requests' outputs only, so how fast a request decodes says
 * nothing about another tenant's text.
 */
final class NgramIndex {
  /** Between two outputs in the ring: no n-gram or draft crosses it. */
  private static final int SEPARATOR = -1;

  private static final int WAYS = 4;

  private final int minWindow;
  private final int maxWindow;
  private final int[] ring;
  private final int[] owner;
  private final int ringMask;
  private long written;
  private final long[] keys;
  private final long[] ends;
  private final int bucketMask;
  private final Map<String, Integer> namespaces = new HashMap<>();

  /**
   * @param capacity tokens kept, a power of two
   * @param buckets table buckets of four entries, a power of two
   */
  NgramIndex(int minWindow, int maxWindow, int capacity, int buckets) {
    if (Integer.bitCount(capacity) != 1 || Integer.bitCount(buckets) != 1) {
      throw new IllegalArgumentException("capacity and buckets must be powers of two");
    }
    this.minWindow = minWindow;
    this.maxWindow = maxWindow;
    this.ring = new int[capacity];
    this.owner = new int[capacity];
    this.ringMask = capacity - 1;
    this.keys = new long[buckets * WAYS];
    this.ends = new long[buckets * WAYS];
    this.bucketMask = buckets - 1;
  }

  /** 64K tokens and 64K entries: 2.5 MB. */
  static NgramIndex of(SpeculativeConfig c) {
    return new NgramIndex(c.minMatchWindow(), c.maxMatchWindow(), 1 << 16, 1 << 14);
  }

  /** Adds a finished request's output, {@code tokens[from .. to)}, to its namespace's. */
  void add(String namespace, int[] tokens, int from, int to) {
    if (to - from < 2) {
      return; // no n-gram with a token after it
    }
    int ns = namespaces.computeIfAbsent(namespace, k -> namespaces.size());
    put(SEPARATOR, ns);
    long start = written;
    for (int i = from; i < to; i++) {
      put(tokens[i], ns);
    }
    // Each n-gram that a token of the output follows, ending at p.
    for (long p = start; p < written - 1; p++) {
      for (int n = minWindow; n <= maxWindow && p - n + 1 >= start; n++) {
        insert(hash(ns, n, p + 1), p + 1);
      }
    }
  }

  /**
   * Writes up to {@code max} tokens that followed the latest occurrence, in the namespace's
   * outputs, of the last {@code n} tokens of {@code tokens[0 .. len)} to {@code out[outOff..]};
   * returns how many (0: none).
   */
  int draft(String namespace, int n, int[] tokens, int len, int max, int[] out, int outOff) {
    Integer ns = namespaces.get(namespace);
    if (ns == null || max <= 0 || n > len || n < minWindow || n > maxWindow) {
      return 0;
    }
    long end = find(hashOf(ns, n, tokens, len - n));
    if (end < 0 || end - n < Math.max(0, written - ring.length) || end >= written) {
      return 0; // not there, or overwritten since
    }
    if (owner[(int) ((end - 1) & ringMask)] != ns || !sameTokens(end - n, tokens, len - n, n)) {
      return 0; // another n-gram with the same bucket and hash bits
    }
    int count = 0;
    for (long p = end; p < written && count < max; p++) {
      int t = ring[(int) (p & ringMask)];
      if (t == SEPARATOR) {
        break;
      }
      out[outOff + count++] = t;
    }
    return count;
  }

  private void put(int token, int ns) {
    int at = (int) (written & ringMask);
    ring[at] = token;
    owner[at] = ns;
    written++;
  }

  private boolean sameTokens(long from, int[] tokens, int at, int n) {
    for (int i = 0; i < n; i++) {
      if (ring[(int) ((from + i) & ringMask)] != tokens[at + i]) {
        return false;
      }
    }
    return true;
  }

  /** The hash of the n ring tokens before {@code end}. */
  private long hash(int ns, int n, long end) {
    long h = seed(ns, n);
    for (long p = end - n; p < end; p++) {
      h = mix(h, ring[(int) (p & ringMask)]);
    }
    return h;
  }

  private static long hashOf(int ns, int n, int[] tokens, int from) {
    long h = seed(ns, n);
    for (int i = from; i < from + n; i++) {
      h = mix(h, tokens[i]);
    }
    return h;
  }

  private static long seed(int ns, int n) {
    return (ns * 0x9E3779B97F4A7C15L) ^ (n * 0xC2B2AE3D27D4EB4FL);
  }

  private static long mix(long h, int token) {
    h = (h ^ token) * 0xFF51AFD7ED558CCDL;
    return h ^ (h >>> 29);
  }

  private int bucket(long h) {
    return (int) ((h ^ (h >>> 32)) & bucketMask) * WAYS;
  }

  /** The position after the latest occurrence of the n-gram hashed to {@code h}, or -1. */
  private long find(long h) {
    int b = bucket(h);
    for (int i = b; i < b + WAYS; i++) {
      if (keys[i] == h && ends[i] > 0) {
        return ends[i];
      }
    }
    return -1;
  }

  /** Records {@code end} for {@code h}: in its entry if it has one, else over the oldest. */
  private void insert(long h, long end) {
    int b = bucket(h);
    int oldest = b;
    for (int i = b; i < b + WAYS; i++) {
      if (keys[i] == h || ends[i] == 0) {
        keys[i] = h;
        ends[i] = end;
        return;
      }
      if (ends[i] < ends[oldest]) {
        oldest = i;
      }
    }
    keys[oldest] = h;
    ends[oldest] = end;
  }
}
