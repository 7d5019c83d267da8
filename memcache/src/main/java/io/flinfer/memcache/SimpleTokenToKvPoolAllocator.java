package io.flinfer.memcache;

import java.util.Arrays;

/**
 * The page-size-1 allocator. Owns the free set of single KV slots, as a bitmap.
 *
 * <p>Any slot can hold any token, but attention reads a request's keys and values position after
 * position, so where they lie matters: spread over the pool they miss the caches that neighbouring
 * slots hit, and a long-lived pool whose slots come back in eviction order spreads them quickly. So
 * a request's next token takes the slot right after its previous one when that is free, and a
 * request that cannot continue its run starts a new one at a wholly free aligned group of {@value
 * #GROUP} slots, which no other run is growing into. When no group is wholly free (a full pool
 * evicts only what a step lacks, so free slots are few), a run starts at the longest stretch of
 * free slots: at its first slot, or halfway in when another run of the same step ends just before
 * it and will grow into it. Runs started in the same stretch then split it, each with room to grow,
 * instead of taking its slots in turn.
 */
public final class SimpleTokenToKvPoolAllocator extends GroupedFreeAllocator {
  /** Slots per run-start group: a power of two dividing 64. */
  public static final int GROUP = 16;

  private static final long GROUP_BITS = (1L << GROUP) - 1;

  private final int size;

  /** Bit {@code s % 64} of word {@code s / 64} is set when slot {@code s} is free. */
  private final long[] free;

  private int freeCount;

  /** Groups whose every slot is free (slot 0's group never is: slot 0 is the padding slot). */
  private int freeGroups;

  /** The word where the search for a wholly free group resumes. */
  private int cursor;

  /** The last slots of the runs the current allocation continues: where they will grow. */
  private int[] growing = new int[0];

  private int growingCount;

  /** A pool of {@code size} usable slots, numbered 1..size (slot 0 is the padding slot). */
  public SimpleTokenToKvPoolAllocator(int size) {
    if (size <= 0) {
      throw new IllegalArgumentException("size must be positive: " + size);
    }
    this.size = size;
    this.free = new long[(size >> 6) + 1];
    clear();
  }

  @Override
  public int pageSize() {
    return 1;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public int availableSize() {
    return freeCount;
  }

  /** Aligned groups of {@value #GROUP} slots that are wholly free: where new runs start. */
  public int freeGroups() {
    return freeGroups;
  }

  @Override
  public int[] alloc(int n) {
    if (n > freeCount) {
      return null;
    }
    int[] out = new int[n];
    takeRun(0, n, out, 0);
    return out;
  }

  @Override
  public int[] allocExtend(int[] prefixLens, int[] seqLens, int[] lastLocs) {
    int total = 0;
    for (int i = 0; i < prefixLens.length; i++) {
      total += seqLens[i] - prefixLens[i];
    }
    if (total > freeCount) {
      return null;
    }
    int[] out = new int[total];
    int k = 0;
    noteGrowing(lastLocs);
    for (int i = 0; i < prefixLens.length; i++) {
      int count = seqLens[i] - prefixLens[i];
      takeRun(prefixLens[i] > 0 ? lastLocs[i] : 0, count, out, k);
      k += count;
    }
    return out;
  }

  @Override
  public int[] allocDecode(int[] seqLens, int[] lastLocs) {
    if (seqLens.length > freeCount) {
      return null;
    }
    int[] out = new int[seqLens.length];
    noteGrowing(lastLocs);
    for (int i = 0; i < out.length; i++) {
      takeRun(seqLens[i] > 1 ? lastLocs[i] : 0, 1, out, i);
    }
    return out;
  }

  /** Remembers, sorted, the slots that runs of this allocation end at. */
  private void noteGrowing(int[] lastLocs) {
    if (growing.length < lastLocs.length) {
      growing = new int[lastLocs.length];
    }
    growingCount = 0;
    for (int loc : lastLocs) {
      if (loc > 0) {
        growing[growingCount++] = loc;
      }
    }
    Arrays.sort(growing, 0, growingCount);
  }

  /** Whether a run of this allocation ends at {@code slot} (and may grow past it). */
  private boolean isGrowing(int slot) {
    return Arrays.binarySearch(growing, 0, growingCount, slot) >= 0;
  }

  /** A run that ended at {@code from} (0: a new run) now ends at {@code to}. */
  private void moveGrowing(int from, int to) {
    int at = from > 0 ? Arrays.binarySearch(growing, 0, growingCount, from) : -1;
    if (at >= 0) {
      System.arraycopy(growing, at + 1, growing, at, growingCount - at - 1);
      growingCount--;
    }
    int in = Arrays.binarySearch(growing, 0, growingCount, to);
    if (in >= 0) {
      return;
    }
    in = -in - 1;
    if (growingCount == growing.length) {
      growing = Arrays.copyOf(growing, Math.max(8, growingCount * 2));
    }
    System.arraycopy(growing, in, growing, in + 1, growingCount - in);
    growing[in] = to;
    growingCount++;
  }

  /**
   * Takes {@code count} slots into {@code out} from {@code off}: from the slot after {@code prev}
   * (0: none) on while they are free, and from the start of a new run wherever they are not. Free
   * slots that follow each other are taken a word at a time.
   */
  private void takeRun(int prev, int count, int[] out, int off) {
    while (count > 0) {
      int slot = prev > 0 && prev < size && isFree(prev + 1) ? prev + 1 : runStart();
      int w = slot >> 6;
      int bit = slot & 63;
      long before = free[w];
      int k = Math.min(count, Long.numberOfTrailingZeros(~(before >>> bit)));
      long mask = (k == 64 ? -1L : (1L << k) - 1) << bit;
      free[w] = before & ~mask;
      freeGroups -= wholeGroups(before) - wholeGroups(free[w]);
      freeCount -= k;
      for (int t = 0; t < k; t++) {
        out[off++] = slot + t;
      }
      count -= k;
      moveGrowing(prev, slot + k - 1);
      prev = slot + k - 1;
    }
  }

  /**
   * The first slot of a wholly free group, searched from where the last one was found; without one,
   * the middle of the longest stretch of free slots. The caller has checked that a slot is free.
   */
  private int runStart() {
    int words = free.length;
    if (freeGroups > 0) {
      for (int k = 0; k < words; k++) {
        int w = cursor + k < words ? cursor + k : cursor + k - words;
        long f = free[w];
        for (int shift = 0; f != 0 && shift < 64; shift += GROUP) {
          if (((f >>> shift) & GROUP_BITS) == GROUP_BITS) {
            cursor = w;
            return (w << 6) + shift;
          }
        }
      }
      throw new IllegalStateException(freeGroups + " free groups counted, none found");
    }
    int bestStart = -1;
    int bestLen = 0;
    int start = -1;
    for (int s = 1; s <= size; ) {
      long word = free[s >> 6] >>> (s & 63);
      if (word == 0) {
        // The rest of this word is taken: close any stretch.
        if (start >= 0 && s - start > bestLen) {
          bestStart = start;
          bestLen = s - start;
        }
        start = -1;
        s = ((s >> 6) + 1) << 6;
        continue;
      }
      if ((word & 1) == 0) {
        if (start >= 0 && s - start > bestLen) {
          bestStart = start;
          bestLen = s - start;
        }
        start = -1;
        s += Long.numberOfTrailingZeros(word);
        continue;
      }
      if (start < 0) {
        start = s;
      }
      s += Math.min(64 - (s & 63), Long.numberOfTrailingZeros(~word));
    }
    if (start >= 0 && size + 1 - start > bestLen) {
      bestStart = start;
      bestLen = size + 1 - start;
    }
    if (bestStart < 0) {
      throw new IllegalStateException("no free slot, though " + freeCount + " were counted");
    }
    // A run that ends just before the stretch will grow into it: start halfway in, leaving it
    // room. Otherwise the stretch is all this run's to grow into.
    return isGrowing(bestStart - 1) ? bestStart + bestLen / 2 : bestStart;
  }

  private boolean groupIsFree(int slot) {
    return ((free[slot >> 6] >>> (slot & (64 - GROUP))) & GROUP_BITS) == GROUP_BITS;
  }

  @Override
  protected void release(int[] slots, int from, int len) {
    int end = from + len;
    int i = from;
    while (i < end) {
      // Runs of consecutive slots (the usual case: requests' tokens lie side by side) are
      // released a word at a time.
      int first = slots[i];
      int j = i + 1;
      while (j < end && slots[j] == slots[j - 1] + 1 && (slots[j] & 63) != 0) {
        j++;
      }
      int last = slots[j - 1];
      if (first <= 0 || last > size) {
        throw new IllegalArgumentException(
            "not a KV slot of this pool: " + (first <= 0 ? first : last));
      }
      int w = first >> 6;
      long mask = (-1L >>> (63 - (last & 63))) & (-1L << first);
      long before = free[w];
      if ((before & mask) != 0) {
        throw new IllegalStateException(
            "KV slot freed twice: " + ((w << 6) + Long.numberOfTrailingZeros(before & mask)));
      }
      free[w] = before | mask;
      freeCount += j - i;
      freeGroups += wholeGroups(free[w]) - wholeGroups(before);
      i = j;
    }
  }

  /** The wholly free groups of a word's bits. */
  private static int wholeGroups(long bits) {
    int n = 0;
    for (int shift = 0; shift < 64; shift += GROUP) {
      if (((bits >>> shift) & GROUP_BITS) == GROUP_BITS) {
        n++;
      }
    }
    return n;
  }

  @Override
  public boolean isFree(int slot) {
    return slot > 0 && slot <= size && (free[slot >> 6] & (1L << slot)) != 0;
  }

  @Override
  public void clear() {
    Arrays.fill(free, 0);
    freeCount = 0;
    freeGroups = 0;
    for (int s = 1; s <= size; s++) {
      free[s >> 6] |= 1L << s;
      freeCount++;
      if (groupIsFree(s)) {
        freeGroups++;
      }
    }
    cursor = 0;
    endGroupWithoutRelease();
  }
}
